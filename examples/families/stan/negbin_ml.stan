// The negative binomial multilevel model of examples/families (-negbin):
// NB2 with a log link and an offset, a random intercept and a correlated
// random slope on x1 per group (lme4's (1 + x1 | g)),
//   y ~ neg_binomial_2_log(offs + alpha + X·beta + u[g,1] + u[g,2]·x1, phi),
//   u[g] ~ N(0, diag(tau)·Omega·diag(tau)),
// the same posterior as exactmh's (centred, flat priors on alpha and beta,
// tau ~ half-normal(1) each, Omega ~ LKJ(1), phi ~ gamma(0.01, 0.01):
// brms's default on the shape). Written for Stan 2.21 (Debian's
// r-cran-rstan): old array syntax.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  int<lower=0> y[N];
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;
  vector[N] x1;
  vector[N] offs;
}
parameters {
  real alpha;
  vector[K] beta;
  vector[2] u[G];
  vector<lower=0>[2] tau;
  cholesky_factor_corr[2] L;
  real<lower=0> phi;
}
model {
  vector[N] eta;
  vector[G] u1;
  vector[G] u2;
  for (j in 1:G) {
    u1[j] = u[j, 1];
    u2[j] = u[j, 2];
  }
  tau ~ normal(0, 1);
  L ~ lkj_corr_cholesky(1);
  phi ~ gamma(0.01, 0.01);
  u ~ multi_normal_cholesky(rep_vector(0, 2), diag_pre_multiply(tau, L));
  eta = offs + alpha + X * beta + u1[g] + u2[g] .* x1;
  y ~ neg_binomial_2_log(eta, phi);
}
generated quantities {
  real rho = multiply_lower_tri_self_transpose(L)[1, 2];
}

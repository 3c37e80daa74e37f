// The binomial-trials multilevel model of examples/families -corr
// binomial, as brms writes k | trials(n) ~ x1 + x2 + (1 + x1 | g) with
// family binomial (non-centred: r = (diag(sd)·L·z)ᵀ, L ~
// lkj_corr_cholesky(1); the likelihood binomial_logit), with flat priors
// on alpha and beta and sd ~ half-normal(1): the same posterior as
// exactmh's. Written for Stan 2.21 (Debian's r-cran-rstan): old array
// syntax.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  int<lower=0> k[N];
  int<lower=1> n[N];
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;   // x1, x2
  vector[N] Z;      // x1, the random slope's covariate
}
parameters {
  real alpha;
  vector[K] beta;
  vector<lower=0>[2] sd_1;
  matrix[2, G] z_1;
  cholesky_factor_corr[2] L_1;
}
transformed parameters {
  matrix[G, 2] r_1 = (diag_pre_multiply(sd_1, L_1) * z_1)';
}
model {
  vector[N] eta = alpha + X * beta + r_1[g, 1] + r_1[g, 2] .* Z;
  target += normal_lpdf(sd_1 | 0, 1);
  target += lkj_corr_cholesky_lpdf(L_1 | 1);
  target += std_normal_lpdf(to_vector(z_1));
  target += binomial_logit_lpmf(k | n, eta);
}
generated quantities {
  real cor_1 = multiply_lower_tri_self_transpose(L_1)[1, 2];
}

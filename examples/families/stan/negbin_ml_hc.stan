// The posterior of negbin_ml.stan in hierarchically centred form, for
// agree_nuts.R's reference runs: b[j] = (alpha + u[j,1], beta[1] + u[j,2]) ~
// N((alpha, beta[1]), diag(tau)·Omega·diag(tau)), a shear with Jacobian 1
// and the same priors, so the same posterior (see gaussian_corr_hc.stan).
// The likelihood through neg_binomial_2_log_glm, Stan's fastest form of it.
// Old array syntax (Stan 2.21).
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
transformed data {
  matrix[N, K - 1] Xr = X[, 2:K];
}
parameters {
  real alpha;
  vector[K] beta;
  vector[2] b[G];
  vector<lower=0>[2] tau;
  cholesky_factor_corr[2] L;
  real<lower=0> phi;
}
model {
  vector[G] b1;
  vector[G] b2;
  for (j in 1:G) {
    b1[j] = b[j, 1];
    b2[j] = b[j, 2];
  }
  tau ~ normal(0, 1);
  L ~ lkj_corr_cholesky(1);
  phi ~ gamma(0.01, 0.01);
  b ~ multi_normal_cholesky([alpha, beta[1]]', diag_pre_multiply(tau, L));
  y ~ neg_binomial_2_log_glm(Xr, offs + b1[g] + b2[g] .* x1, beta[2:K], phi);
}
generated quantities {
  real rho = multiply_lower_tri_self_transpose(L)[1, 2];
  vector[2] u[G];
  for (j in 1:G) {
    u[j, 1] = b[j, 1] - alpha;
    u[j, 2] = b[j, 2] - beta[1];
  }
}

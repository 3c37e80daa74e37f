// The posterior of binomial_corr.stan in hierarchically centred form, for
// agree_nuts.R's reference runs (see gaussian_corr_hc.stan: b[j] = (alpha +
// r[j,1], beta[1] + r[j,2]), a shear with Jacobian 1, the same priors, so
// the same posterior). Old array syntax (Stan 2.21).
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
transformed data {
  matrix[N, K - 1] Xr = X[, 2:K];
}
parameters {
  real alpha;
  vector[K] beta;
  vector<lower=0>[2] sd_1;
  vector[2] b[G];
  cholesky_factor_corr[2] L_1;
}
model {
  vector[G] b1;
  vector[G] b2;
  for (j in 1:G) {
    b1[j] = b[j, 1];
    b2[j] = b[j, 2];
  }
  target += normal_lpdf(sd_1 | 0, 1);
  target += lkj_corr_cholesky_lpdf(L_1 | 1);
  target += multi_normal_cholesky_lpdf(b | [alpha, beta[1]]', diag_pre_multiply(sd_1, L_1));
  target += binomial_logit_lpmf(k | n, b1[g] + b2[g] .* Z + Xr * beta[2:K]);
}
generated quantities {
  real cor_1 = multiply_lower_tri_self_transpose(L_1)[1, 2];
  matrix[G, 2] r_1;
  for (j in 1:G) {
    r_1[j, 1] = b[j, 1] - alpha;
    r_1[j, 2] = b[j, 2] - beta[1];
  }
}

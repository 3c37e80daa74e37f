// The posterior of gaussian_corr.stan in hierarchically centred form, for
// agree_nuts.R's reference runs: each group's own intercept and x1 slope
// b[j] = (alpha + r[j,1], beta[1] + r[j,2]) ~ N((alpha, beta[1]), diag(sd)·L·Lᵀ·diag(sd)).
// The map from (alpha, beta, r) to (alpha, beta, b) is a shear with
// Jacobian 1 and the priors are the same, so this is the same posterior;
// where every group has many data (examples/families: 100 a group) its
// coordinates are nearly independent and NUTS needs short trajectories,
// while the non-centred form brms writes needs long ones. Old array syntax
// (Stan 2.21, Debian's r-cran-rstan).
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  vector[N] y;
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;   // x1, x2
  vector[N] Z;      // x1, the random slope's covariate
}
transformed data {
  matrix[N, K - 1] Xr = X[, 2:K];  // the columns without a random slope
}
parameters {
  real alpha;
  vector[K] beta;
  vector<lower=0>[2] sd_1;
  vector[2] b[G];
  cholesky_factor_corr[2] L_1;
  real<lower=0> sigma;
}
model {
  vector[G] b1;
  vector[G] b2;
  for (j in 1:G) {
    b1[j] = b[j, 1];
    b2[j] = b[j, 2];
  }
  target += normal_lpdf(sd_1 | 0, 1);
  target += normal_lpdf(sigma | 0, 2);
  target += lkj_corr_cholesky_lpdf(L_1 | 1);
  target += multi_normal_cholesky_lpdf(b | [alpha, beta[1]]', diag_pre_multiply(sd_1, L_1));
  target += normal_id_glm_lpdf(y | Xr, b1[g] + b2[g] .* Z, beta[2:K], sigma);
}
generated quantities {
  real cor_1 = multiply_lower_tri_self_transpose(L_1)[1, 2];
  matrix[G, 2] r_1;
  for (j in 1:G) {
    r_1[j, 1] = b[j, 1] - alpha;
    r_1[j, 2] = b[j, 2] - beta[1];
  }
}

// The Gaussian multilevel model of examples/families -corr gaussian, as
// brms writes y ~ x1 + x2 + (1 + x1 | g) (non-centred: r = (diag(sd)·L·z)ᵀ,
// L ~ lkj_corr_cholesky(1)), with flat priors on alpha and beta,
// sd ~ half-normal(1) and sigma ~ half-normal(2): the same posterior as
// exactmh's. Written for Stan 2.21 (Debian's r-cran-rstan): old array
// syntax; the likelihood through normal_id_glm.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  vector[N] y;
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
  real<lower=0> sigma;
}
transformed parameters {
  matrix[G, 2] r_1 = (diag_pre_multiply(sd_1, L_1) * z_1)';
}
model {
  vector[N] mu = alpha + r_1[g, 1] + r_1[g, 2] .* Z;
  target += normal_lpdf(sd_1 | 0, 1);
  target += normal_lpdf(sigma | 0, 2);
  target += lkj_corr_cholesky_lpdf(L_1 | 1);
  target += std_normal_lpdf(to_vector(z_1));
  target += normal_id_glm_lpdf(y | X, mu, beta, sigma);
}
generated quantities {
  real cor_1 = multiply_lower_tri_self_transpose(L_1)[1, 2];
}

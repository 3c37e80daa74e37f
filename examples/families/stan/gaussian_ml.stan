// The Gaussian multilevel model of examples/families with σ estimated:
// y = alpha + X·beta + u[g] + sigma·eps, u ~ N(0, tau²), the same
// posterior as exactmh's (centred, flat priors on alpha and beta,
// tau ~ half-normal(1), sigma ~ half-normal(2)). Written for Stan 2.21
// (Debian's r-cran-rstan): old array syntax; the likelihood through
// normal_id_glm, Stan's fastest form of it.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  vector[N] y;
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;
}
parameters {
  real alpha;
  vector[K] beta;
  vector[G] u;
  real<lower=0> tau;
  real<lower=0> sigma;
}
model {
  tau ~ normal(0, 1);
  sigma ~ normal(0, 2);
  u ~ normal(0, tau);
  y ~ normal_id_glm(X, alpha + u[g], beta, sigma);
}

// The posterior of multilevel.stan (the synthetic multilevel logistic
// regression of examples/multilevel), written in affine coordinates fitted
// to a first run's draws, so that NUTS sees a near-standard normal and can
// serve as the reference at N = 10⁶, where NUTS on multilevel.stan needs
// tree depth 10 for every transition. See README.md ("reference at 10⁶").
//
// Coordinates: zg (the intercept, x1 … x9 and the two log scales, as
// m + L·zg) and, per group, (zu, zv), with the group's effects
//   u = mu + Bu·(L·zg) + s11·zu,   v = mv + Bv·(L·zg) + s21·zu + s22·zv.
// The map from (zg, zu, zv) to (alpha, beta, log τ, u, v) is affine and
// block triangular with a constant Jacobian, so the model block needs no
// Jacobian term for it: the density is the centred model's, and NUTS on
// these coordinates samples the same posterior as on multilevel.stan. Its
// data (m, L, mu, mv, Bu, Bv, s11, s21, s22) only change the geometry NUTS
// works in, never the posterior. The scales are sampled on the log scale
// (+ log τ: the Jacobian of τ = exp(log τ)), as exactmh does.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  int<lower=0, upper=1> y[N];
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;
  vector[K + 3] m;
  matrix[K + 3, K + 3] L;
  vector[G] mu;
  vector[G] mv;
  matrix[G, K + 3] Bu;
  matrix[G, K + 3] Bv;
  vector<lower=0>[G] s11;
  vector[G] s21;
  vector<lower=0>[G] s22;
}
transformed data {
  vector[N] x1 = X[, 1];
}
parameters {
  vector[K + 3] zg;
  vector[G] zu;
  vector[G] zv;
}
transformed parameters {
  real alpha;
  vector[K] beta;
  real log_tau_u;
  real log_tau_v;
  vector[G] u;
  vector[G] v;
  {
    vector[K + 3] dg = L * zg;
    alpha = m[1] + dg[1];
    beta = m[2:(K + 1)] + dg[2:(K + 1)];
    log_tau_u = m[K + 2] + dg[K + 2];
    log_tau_v = m[K + 3] + dg[K + 3];
    u = mu + Bu * dg + s11 .* zu;
    v = mv + Bv * dg + s21 .* zu + s22 .* zv;
  }
}
model {
  real tau_u = exp(log_tau_u);
  real tau_v = exp(log_tau_v);
  alpha ~ normal(0, 5);
  beta ~ normal(0, 5);
  // half-normal(1) priors on the scales, with the Jacobian of exp.
  target += normal_lpdf(tau_u | 0, 1) + log_tau_u;
  target += normal_lpdf(tau_v | 0, 1) + log_tau_v;
  u ~ normal(0, tau_u);
  v ~ normal(0, tau_v);
  y ~ bernoulli_logit_glm(X, alpha + u[g] + v[g] .* x1, beta);
}

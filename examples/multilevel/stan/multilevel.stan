// The synthetic multilevel logistic regression of examples/multilevel,
// non-centred: u = tau_u * z_u, v = tau_v * z_v. The same posterior as
// exactmh's centred parametrisation (model.NewMultilevel): the intercept and
// x1 … x9 with N(0, 5²) priors, a random intercept u_g and a random slope
// v_g on x1 per group, tau ~ half-normal(1). Written for Stan 2.21 (Debian's
// r-cran-rstan): old array syntax. The likelihood is written with
// bernoulli_logit_glm, Stan's fastest form of it.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1> K;
  int<lower=0, upper=1> y[N];
  int<lower=1, upper=G> g[N];
  matrix[N, K] X;
}
transformed data {
  vector[N] x1 = X[, 1];
}
parameters {
  real alpha;
  vector[K] beta;
  vector[G] z_u;
  vector[G] z_v;
  real<lower=0> tau_u;
  real<lower=0> tau_v;
}
transformed parameters {
  vector[G] u = tau_u * z_u;
  vector[G] v = tau_v * z_v;
}
model {
  alpha ~ normal(0, 5);
  beta ~ normal(0, 5);
  tau_u ~ normal(0, 1);
  tau_v ~ normal(0, 1);
  z_u ~ std_normal();
  z_v ~ std_normal();
  // The GLM function is the same density as
  // bernoulli_logit(alpha + X * beta + u[g] + v[g] .* x1), with a faster
  // gradient (no autodiff node per datum for X * beta).
  y ~ bernoulli_logit_glm(X, alpha + u[g] + v[g] .* x1, beta);
}
generated quantities {
  real log_tau_u = log(tau_u);
  real log_tau_v = log(tau_v);
}

// examples/defaultrows' custom row: a logistic regression with one effect
// per group, y_i ~ Bernoulli(logistic(x_i'beta + u[g_i])), N(0, sigma²) on
// every coordinate (exactmh's isotropic Gaussian prior, sd 3). The
// density is exactmh's energy softplus(z) − y·z exactly. Stan 2.21 syntax.
data {
  int<lower=1> N;
  int<lower=1> p;
  int<lower=1> G;
  matrix[N, p] X;
  int<lower=1, upper=G> g[N];
  int<lower=0, upper=1> y[N];
  real<lower=0> sigma;
}
parameters {
  vector[p] beta;
  vector[G] u;
}
model {
  beta ~ normal(0, sigma);
  u ~ normal(0, sigma);
  y ~ bernoulli_logit_glm(X, u[g], beta);
}

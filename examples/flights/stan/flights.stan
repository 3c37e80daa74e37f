// The flights logistic regression of examples/flights: y_i ~
// Bernoulli(logistic(x_i'theta)), x_i's first column the intercept, a
// N(0, 2.5²) prior on each coefficient. bernoulli_logit_glm's density is
// exactmh's energy softplus(x'theta) − y·x'theta exactly. Stan 2.21
// (Debian's r-cran-rstan) syntax.
data {
  int<lower=1> N;
  int<lower=1> d;
  matrix[N, d] X;
  int<lower=0, upper=1> y[N];
  real<lower=0> sigma;
}
parameters {
  vector[d] theta;
}
model {
  theta ~ normal(0, sigma);
  y ~ bernoulli_logit_glm(X, 0.0, theta);
}

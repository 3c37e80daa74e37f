// Logistic regression with a N(0, 2.5²) prior on each coefficient:
// examples/rare's posterior. The design's first column is the intercept's
// ones, as in the exported data; bernoulli_logit_glm's density is
// exactmh's energy log(1 + e^{x'θ}) − y·x'θ.
data {
  int<lower=0> N;
  int<lower=1> d;
  matrix[N, d] X;
  int<lower=0, upper=1> y[N]; // Stan 2.21 (Debian's rstan) syntax
}
parameters {
  vector[d] theta;
}
model {
  theta ~ normal(0, 2.5);
  y ~ bernoulli_logit_glm(X, 0, theta);
}

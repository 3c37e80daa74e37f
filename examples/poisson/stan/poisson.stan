// Poisson regression with an offset (log exposure) and a N(0, 2.5²) prior
// on each coefficient: examples/poisson's posterior. poisson_log_glm's
// density is exactmh's energy e^{x'θ + o} − y(x'θ + o) up to log y!.
data {
  int<lower=0> N;
  int<lower=1> d;
  matrix[N, d] X;
  vector[N] log_exposure;
  int<lower=0> y[N]; // Stan 2.21 (Debian's rstan) syntax
}
parameters {
  vector[d] theta;
}
model {
  theta ~ normal(0, 2.5);
  y ~ poisson_log_glm(X, log_exposure, theta);
}

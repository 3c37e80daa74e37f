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
  // target += rather than ~: the ~ form (propto) of poisson_log_glm in
  // Stan 2.21 drops the likelihood's value but keeps its gradient, so NUTS
  // sees an inconsistent Hamiltonian (step size collapsing to 1e-9).
  target += poisson_log_glm_lpmf(y | X, log_exposure, theta);
}

// examples/defaultrows' probit row: y_i ~ Bernoulli(Phi(x_i'theta)), x_i's
// first column the intercept, N(0, sigma²) on each coefficient.
// exactmh's model.ProbitFamily loss is −log Phi((2y − 1)·z), the same
// density. Stan 2.21 syntax.
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
  vector[N] z = X * theta;
  theta ~ normal(0, sigma);
  for (i in 1:N) {
    if (y[i] == 1) target += log(Phi(z[i]));
    else target += log(Phi(-z[i]));
  }
}

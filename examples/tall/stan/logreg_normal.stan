// Logistic regression with a normal prior, for examples/fashion
// (Fashion-MNIST, one class against the rest; the design's last column is
// the intercept's 1). exactmh's posterior is
//   U_i(theta) = softplus(x_i' theta) - y_i x_i' theta,  theta_j ~ N(0, sigma^2),
// the same density as below up to a constant.
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

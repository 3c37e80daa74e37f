// Logistic regression of examples/tall (logreg_d50), labels in {0, 1}, no
// intercept, flat prior on theta. exactmh.LogisticRegression's energy is
//   U_i(theta) = softplus(x_i' theta) - y_i x_i' theta,
// which is -bernoulli_logit_lpmf(y_i | x_i' theta) exactly.
data {
  int<lower=1> N;
  int<lower=1> d;
  matrix[N, d] X;
  int<lower=0, upper=1> y[N];
}
parameters {
  vector[d] theta;
}
model {
  // No prior statement: the flat (improper) prior of the study. The GLM
  // function is the same density as bernoulli_logit(X * theta), with a
  // faster gradient; the intercept is 0.
  y ~ bernoulli_logit_glm(X, 0.0, theta);
}

// Robust linear regression of examples/tall (rlr_d10, rlr_d100): Student-t
// noise with nu degrees of freedom and unit scale, flat prior on theta.
// exactmh.StudentTRegression's energy is
//   U_i(theta) = (nu + 1)/2 * log(1 + (y_i - x_i' theta)^2 / nu),
// which is -student_t_lpdf(y_i | nu, x_i' theta, 1) up to a constant.
data {
  int<lower=1> N;
  int<lower=1> d;
  real<lower=0> nu;
  matrix[N, d] X;
  vector[N] y;
}
parameters {
  vector[d] theta;
}
model {
  // No prior statement: the flat (improper) prior of the study.
  y ~ student_t(nu, X * theta, 1);
}

// The models of examples/multilevel-real for rstan's NUTS, non-centred:
// a GLM with an intercept, K fixed effects (the standardised columns X)
// and J random intercepts, u_j = tau_j * z_j with z_j ~ N(0, 1) per level,
// tau_j ~ half-normal(0, 1); flat priors on the intercept and the fixed
// effects. The same posterior as the exactmh command's defaults (--prior
// flat, --tau-prior half-normal:1). family: 0 logistic, 1 probit, 2
// Poisson (log link). Written for Stan 2.21 (Debian's r-cran-rstan): old
// array syntax.
// Poisson: y ~ poisson_log(...), not poisson_log_glm: in Stan 2.21 the ~
// form (propto) of poisson_log_glm with these data drops the likelihood's
// value but keeps its gradient (log_prob constant in the intercept and
// fixed effects while grad_log_prob reads 2008 for the intercept), so NUTS
// sees an inconsistent Hamiltonian: the step size collapses (≈ 2e-4) and
// every transition hits the largest tree — examples/poisson/stan's note.
data {
  int<lower=1> N;
  int<lower=1> K;
  int<lower=1> J;
  int<lower=0, upper=2> family;
  int<lower=0> y[N];
  matrix[N, K] X;
  int<lower=1> L[J];      // levels of each grouping factor
  int<lower=1> idx[N, J]; // a datum's level of each factor
}
transformed data {
  int off[J];
  int S = sum(L);
  int gidx[N, J];
  off[1] = 0;
  for (j in 2:J) off[j] = off[j - 1] + L[j - 1];
  for (n in 1:N) for (j in 1:J) gidx[n, j] = off[j] + idx[n, j];
}
parameters {
  real alpha;
  vector[K] beta;
  vector[S] z;
  vector<lower=0>[J] tau;
}
transformed parameters {
  vector[S] u;
  for (j in 1:J) u[(off[j] + 1):(off[j] + L[j])] = tau[j] * z[(off[j] + 1):(off[j] + L[j])];
}
model {
  vector[N] eta = rep_vector(alpha, N);
  for (j in 1:J) eta += u[gidx[, j]];
  tau ~ normal(0, 1);
  z ~ std_normal();
  if (family == 0) {
    y ~ bernoulli_logit_glm(X, eta, beta);
  } else if (family == 2) {
    y ~ poisson_log(eta + X * beta);
  } else {
    y ~ bernoulli(Phi(eta + X * beta));
  }
}

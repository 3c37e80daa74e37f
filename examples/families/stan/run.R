# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, random inits) on examples/families's
# Gaussian multilevel model, from the data `go run ./examples/families
# -export DATADIR` writes, and reports min bulk ESS, CPU seconds of
# sampling (rstan's per-chain elapsed times, warmup + sampling, summed),
# leapfrog steps, and the CPU cost of one gradient (grad_log_prob, timed).
#
# Usage: Rscript run.R DATADIR [CHAINS] [ITER_GRAD] [SAMPLE]
#   CHAINS     chains, run one after another (default 4); 0: no sampling,
#              only the gradient's cost (for N = 10⁶, where a run to the
#              end is out of reach on a shared machine)
#   ITER_GRAD  gradients timed (default 20)
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
datadir <- args[1]
chains <- if (length(args) >= 2) as.integer(args[2]) else 4L
ngrad <- if (length(args) >= 3) as.integer(args[3]) else 20L
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
# Debian's r-cran-bh ships no headers (see examples/tall/stan/run.R).
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
D <- read.csv(file.path(datadir, "gaussian_ml.csv"), colClasses = c("numeric", "numeric", "numeric", "integer"))
X <- as.matrix(D[, c("x1", "x2")])
dimnames(X) <- NULL
data <- list(N = nrow(D), G = max(D$g), K = 2L, y = D$y, g = D$g, X = X)
cat(sprintf("N = %d, G = %d\n", data$N, data$G))
sm <- stan_model(file.path(here, "gaussian_ml.stan"))
# The gradient's cost: grad_log_prob at a point on the unconstrained scale.
fit0 <- sampling(sm, data = data, chains = 1, iter = 1, refresh = 0, seed = 1)
upar <- rnorm(get_num_upars(fit0), 0, 0.1)
t0 <- proc.time()
for (k in seq_len(ngrad)) invisible(grad_log_prob(fit0, upar))
tg <- proc.time() - t0
cat(sprintf("one gradient: %.3g CPU-s (%d timed)\n", (tg[["user.self"]] + tg[["sys.self"]]) / ngrad, ngrad))
if (chains == 0) quit(save = "no")
t0 <- proc.time()
fit <- sampling(sm, data = data, chains = chains, cores = 1, seed = 1, refresh = 0)
tt <- proc.time() - t0
el <- get_elapsed_time(fit)
s <- summary(fit, pars = c("alpha", "beta", "u", "tau", "sigma"))$summary
lf <- sum(sapply(get_sampler_params(fit, inc_warmup = TRUE), function(p) sum(p[, "n_leapfrog__"])))
# Bulk ESS as exactmh computes it (rank-normalised, Vehtari et al. 2021):
# rstan 2.21's monitor.
m <- monitor(extract(fit, pars = c("alpha", "beta", "u", "tau", "sigma"), permuted = FALSE), warmup = 0, print = FALSE)
w <- which.min(m[, "Bulk_ESS"])
cat(sprintf("sampling: %.1f CPU-s (rstan's elapsed, warmup %.1f + sampling %.1f); process CPU %.1f s\n",
  sum(el), sum(el[, 1]), sum(el[, 2]), tt[["user.self"]] + tt[["sys.self"]]))
cat(sprintf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f; %d leapfrog steps (%.1f per iteration)\n",
  m[w, "Bulk_ESS"], rownames(m)[w], min(m[, "Tail_ESS"]), max(m[, "Rhat"]), lf, lf / (2000 * chains)))
cat(sprintf("min bulk ESS per CPU-second (sampling): %.3g\n", m[w, "Bulk_ESS"] / sum(el)))
for (p in c("alpha", "beta[1]", "beta[2]", "tau", "sigma")) cat(sprintf("  %-8s mean %8.4f sd %.4f\n", p, s[p, "mean"], s[p, "sd"]))

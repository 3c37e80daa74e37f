# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, random inits) on examples/families's
# negative binomial multilevel model (negbin_ml.stan), from the data
# `go run ./examples/families -negbin -export DATADIR` writes. Chains run
# one after another, each saved to DATADIR/nuts_chainK.rds as it ends (a
# run stopped early keeps the chains it finished); reports per chain its
# elapsed CPU and leapfrog steps, then over the chains that ended min bulk
# ESS, the means and sds, and the CPU cost of one gradient (timed).
#
# Usage: Rscript run_negbin.R DATADIR [CHAINS] [ITER_GRAD]
#   CHAINS     chains (default 4); 0: only the gradient's cost
#   ITER_GRAD  gradients timed (default 10)
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
datadir <- args[1]
chains <- if (length(args) >= 2) as.integer(args[2]) else 4L
ngrad <- if (length(args) >= 3) as.integer(args[3]) else 10L
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
D <- read.csv(file.path(datadir, "negbin_ml.csv"), colClasses = c("integer", "numeric", "numeric", "numeric", "integer"))
X <- as.matrix(D[, c("x1", "x2")])
dimnames(X) <- NULL
data <- list(N = nrow(D), G = max(D$g), K = 2L, y = D$y, g = D$g, X = X, x1 = D$x1, offs = D$offs)
cat(sprintf("N = %d, G = %d\n", data$N, data$G))
sm <- stan_model(file.path(here, "negbin_ml.stan"))
fit0 <- sampling(sm, data = data, chains = 1, iter = 1, refresh = 0, seed = 1)
upar <- rnorm(get_num_upars(fit0), 0, 0.1)
t0 <- proc.time()
for (k in seq_len(ngrad)) invisible(grad_log_prob(fit0, upar))
tg <- proc.time() - t0
cat(sprintf("one gradient: %.3g CPU-s (%d timed)\n", (tg[["user.self"]] + tg[["sys.self"]]) / ngrad, ngrad))
flush(stdout())
if (chains == 0) quit(save = "no")
pars <- c("alpha", "beta", "tau", "rho", "phi", "u")
fits <- list()
for (k in seq_len(chains)) {
  f <- sampling(sm, data = data, chains = 1, chain_id = k, seed = 1, refresh = 100)
  saveRDS(f, file.path(datadir, sprintf("nuts_chain%d.rds", k)))
  el <- get_elapsed_time(f)
  lf <- sum(get_sampler_params(f, inc_warmup = TRUE)[[1]][, "n_leapfrog__"])
  cat(sprintf("chain %d: %.1f CPU-s (warmup %.1f + sampling %.1f), %d leapfrog steps\n", k, sum(el), el[1], el[2], lf))
  flush(stdout())
  fits[[k]] <- f
}
fit <- sflist2stanfit(fits)
el <- get_elapsed_time(fit)
m <- monitor(extract(fit, pars = pars, permuted = FALSE), warmup = 0, print = FALSE)
w <- which.min(m[, "Bulk_ESS"])
cat(sprintf("sampling: %.1f CPU-s (rstan's elapsed, warmup %.1f + sampling %.1f)\n", sum(el), sum(el[, 1]), sum(el[, 2])))
cat(sprintf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f\n",
  m[w, "Bulk_ESS"], rownames(m)[w], min(m[, "Tail_ESS"]), max(m[, "Rhat"])))
cat(sprintf("min bulk ESS per CPU-second (sampling): %.3g\n", m[w, "Bulk_ESS"] / sum(el)))
s <- summary(fit, pars = c("alpha", "beta", "tau", "rho", "phi"))$summary
for (p in rownames(s)) cat(sprintf("  %-8s mean %8.4f sd %.4f\n", p, s[p, "mean"], s[p, "sd"]))

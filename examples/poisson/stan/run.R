# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws, diag_e,
# adapt_delta 0.8) on examples/poisson's data, from `go run
# ./examples/poisson -export DATADIR`, one chain, and prints the minimum
# bulk ESS, the wall times and the ESS per second including warmup.
#
# Usage: Rscript run.R DATADIR OUTDIR [SEED]
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript run.R DATADIR OUTDIR [SEED]")
datadir <- args[1]
outdir <- args[2]
seed <- if (length(args) >= 3) as.integer(args[3]) else 1L
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
m <- stan_model(file.path(here, "poisson.stan"))
D <- read.csv(file.path(datadir, "poisson.csv"), colClasses = "numeric")
X <- as.matrix(D[, -(1:2)])
dimnames(X) <- NULL
data <- list(N = nrow(X), d = ncol(X), X = X, log_exposure = D$offset, y = as.integer(D$y))
t0 <- Sys.time()
# From rstan's random inits in (−2, 2) the first warmup iterations at
# N = 10⁶ take trees of depth 10 (1023 gradients each, 13 iterations in
# 9 minutes on the loaded machine), so NUTS starts at the MAP, found by
# optimizing() (L-BFGS), as exactmh's pilots and chains start from its MAP
# and Laplace approximation; its time counts.
opt <- optimizing(m, data = data, seed = seed, init = "0") # from random inits in (−2, 2) L-BFGS stopped with an error, e^{x'θ} far too large
t_opt <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
fit <- sampling(m, data = data, chains = 1, seed = seed, refresh = 200,
                init = list(list(theta = as.numeric(opt$par))),
                sample_file = file.path(outdir, "poisson_stan.csv"))
wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
cat(sprintf("optimizing() %.1fs\n", t_opt))
times <- get_elapsed_time(fit)
s <- summary(fit, probs = c(0.05, 0.95))$summary
ess <- sapply(seq_len(ncol(X)), function(j) {
  ess_bulk(as.array(fit)[, 1, paste0("theta[", j, "]")])
})
sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
cat(sprintf("warmup %.1fs, sampling %.1fs, sampling() %.1fs wall; leapfrog steps %d\n",
            times[1, "warmup"], times[1, "sample"], wall, sum(sp[, "n_leapfrog__"])))
cat(sprintf("min bulk ESS %.0f; per second of sampling %.3g, including warmup and optimizing() %.3g\n",
            min(ess), min(ess) / times[1, "sample"], min(ess) / (sum(times[1, ]) + t_opt)))
print(s[, c("mean", "sd", "5%", "95%", "n_eff", "Rhat")])

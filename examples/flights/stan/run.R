# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, max_treedepth 10) on examples/flights'
# data, from `go run ./examples/flights -export DATADIR`, one chain per
# core, and prints the minimum bulk and tail ESS, the CPU times and the min
# bulk ESS per CPU-second including optimizing() and warmup. It writes
# OUTDIR/flights_nuts_moments.csv (name,mean,sd per coefficient), which
# `go run ./examples/flights -means FILE` compares with exactmh's draws.
#
# Usage: Rscript run.R DATADIR OUTDIR [CHAINS] [SEED]
#
# NUTS starts at the MAP found by optimizing() (L-BFGS), as exactmh's
# chains start from its MAP and Laplace approximation; its time counts.
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript run.R DATADIR OUTDIR [CHAINS] [SEED]")
datadir <- args[1]
outdir <- args[2]
chains <- if (length(args) >= 3) as.integer(args[3]) else 1L
seed <- if (length(args) >= 4) as.integer(args[4]) else 1L
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
m <- stan_model(file.path(here, "flights.stan"))
# The reals are hexadecimal, which R reads exactly.
D <- read.csv(file.path(datadir, "flights.csv"), colClasses = "character")
K <- read.csv(file.path(datadir, "flights_constants.csv"), colClasses = "character")
k <- setNames(as.numeric(K$value), K$key)
X <- sapply(D[, -1], as.numeric)
dimnames(X) <- NULL
stopifnot(nrow(X) == k[["n"]], ncol(X) == k[["d"]])
data <- list(N = nrow(X), d = ncol(X), X = X, y = as.integer(D$y), sigma = k[["sigma"]])
cpu0 <- proc.time()
opt <- optimizing(m, data = data, seed = seed, init = "0")
cpu_opt <- (proc.time() - cpu0)[["user.self"]]
fit <- sampling(m, data = data, chains = chains, cores = chains, seed = seed, refresh = 200,
                init = rep(list(list(theta = as.numeric(opt$par))), chains),
                sample_file = file.path(outdir, "flights_stan.csv"))
times <- get_elapsed_time(fit)
a <- as.array(fit)
pars <- paste0("theta[", seq_len(ncol(X)), "]")
bulk <- sapply(pars, function(p) ess_bulk(a[, , p]))
tail <- sapply(pars, function(p) ess_tail(a[, , p]))
cpu <- sum(times) + cpu_opt
cat(sprintf("optimizing() %.1f CPU-s; warmup %.1f s, sampling %.1f s (per chain, summed)\n",
            cpu_opt, sum(times[, "warmup"]), sum(times[, "sample"])))
cat(sprintf("min bulk ESS %.0f, min tail ESS %.0f; min bulk ESS per CPU-second including optimizing() and warmup %.3g\n",
            min(bulk), min(tail), min(bulk) / cpu))
sp <- get_sampler_params(fit, inc_warmup = TRUE)
cat(sprintf("leapfrog steps (warmup and sampling, all chains): %d\n",
            sum(sapply(sp, function(x) sum(x[, "n_leapfrog__"])))))
s <- summary(fit)$summary
write.csv(data.frame(name = pars, mean = s[pars, "mean"], sd = s[pars, "sd"]),
          file.path(outdir, "flights_nuts_moments.csv"), row.names = FALSE)
print(s[pars, c("mean", "sd", "n_eff", "Rhat")])

# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, max_treedepth 10) on examples/rare's data,
# from `go run ./examples/rare -export DATADIR`, one chain per core, and
# prints the minimum bulk and tail ESS, the CPU times and the min bulk ESS
# per CPU-second including optimizing() and warmup.
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
m <- stan_model(file.path(here, "rare.stan"))
# The reals are hexadecimal, which R reads exactly.
D <- read.csv(file.path(datadir, "rare.csv"), colClasses = "character")
X <- sapply(D[, -1], as.numeric)
dimnames(X) <- NULL
data <- list(N = nrow(X), d = ncol(X), X = X, y = as.integer(D$y))
cpu0 <- proc.time()
opt <- optimizing(m, data = data, seed = seed, init = "0")
cpu_opt <- (proc.time() - cpu0)[["user.self"]]
fit <- sampling(m, data = data, chains = chains, cores = chains, seed = seed, refresh = 200,
                init = rep(list(list(theta = as.numeric(opt$par))), chains),
                sample_file = file.path(outdir, "rare_stan.csv"))
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
s <- summary(fit, probs = c(0.05, 0.95))$summary
print(s[, c("mean", "sd", "5%", "95%", "n_eff", "Rhat")])

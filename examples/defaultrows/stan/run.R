# Runs Stan's NUTS (rstan's defaults: 1000 warmup + 1000 draws, diag_e,
# adapt_delta 0.8, max_treedepth 10, random inits; one chain on one core)
# on a row of examples/defaultrows from the data `go run
# ./examples/defaultrows -export DATADIR -rows ROW` writes, and prints its
# CPU seconds (rstan's per-chain times), gradients, and min bulk and tail
# ESS per CPU-second. Compile with R_MAKEVARS_USER=Makevars (this
# directory's: -O2, Debian's flags without -g).
#
# Usage: Rscript run.R DATADIR OUTDIR ROW [SEED] [WARMUP] [DRAWS]
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript run.R DATADIR OUTDIR ROW [SEED] [WARMUP] [DRAWS]")
datadir <- args[1]
outdir <- args[2]
row <- args[3]
seed <- if (length(args) >= 4) as.integer(args[4]) else 1L
warmup <- if (length(args) >= 5) as.integer(args[5]) else 1000L
draws <- if (length(args) >= 6) as.integer(args[6]) else 1000L
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
D <- read.csv(file.path(datadir, paste0(row, ".csv")), colClasses = "character")
K <- read.csv(file.path(datadir, paste0(row, "_constants.csv")), colClasses = "character")
k <- setNames(as.numeric(K$value), K$key)
if (row == "custom") {
  X <- sapply(D[, -(1:2)], as.numeric)
  dimnames(X) <- NULL
  data <- list(N = nrow(X), p = ncol(X), G = as.integer(k[["groups"]]), X = X,
               g = as.integer(D$g), y = as.integer(D$y), sigma = k[["sigma"]])
  pars <- c(paste0("beta[", seq_len(ncol(X)), "]"), paste0("u[", seq_len(data$G), "]"))
} else if (row == "probit") {
  X <- sapply(D[, -1], as.numeric)
  dimnames(X) <- NULL
  data <- list(N = nrow(X), d = ncol(X), X = X, y = as.integer(D$y), sigma = k[["sigma"]])
  pars <- paste0("theta[", seq_len(ncol(X)), "]")
} else {
  stop("no Stan model for ", row)
}
m <- stan_model(file.path(here, paste0(row, ".stan")))
fit <- sampling(m, data = data, chains = 1, cores = 1, seed = seed, refresh = 100,
                warmup = warmup, iter = warmup + draws,
                sample_file = file.path(outdir, paste0(row, "_stan.csv")))
times <- get_elapsed_time(fit)
a <- as.array(fit)
bulk <- sapply(pars, function(p) ess_bulk(a[, , p]))
tail <- sapply(pars, function(p) ess_tail(a[, , p]))
sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
grads <- sum(sp[, "n_leapfrog__"])
cpu <- sum(times)
cat(sprintf("%s: warmup %.1f CPU-s, sampling %.1f CPU-s; %d gradients (%d in sampling); step size %.3g; %d divergences\n",
            row, sum(times[, "warmup"]), sum(times[, "sample"]), as.integer(grads),
            as.integer(sum(sp[(warmup + 1):(warmup + draws), "n_leapfrog__"])),
            sp[warmup + 1, "stepsize__"], as.integer(sum(sp[(warmup + 1):(warmup + draws), "divergent__"]))))
cat(sprintf("%s: min bulk ESS %.0f (%s), median %.0f, min tail ESS %.0f; min bulk ESS per CPU-s including warmup %.4g\n",
            row, min(bulk), names(which.min(bulk)), median(bulk), min(tail), min(bulk) / cpu))
s <- summary(fit, pars = pars)$summary
write.csv(data.frame(name = pars, mean = s[, "mean"], sd = s[, "sd"], ess_bulk = bulk, ess_tail = tail),
          file.path(outdir, paste0(row, "_nuts_moments.csv")), row.names = FALSE)

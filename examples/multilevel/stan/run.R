# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, max_treedepth 10) on the non-centred
# multilevel.stan, from the data `go run ./examples/multilevel -export DIR`
# writes. See README.md.
#
# Usage: Rscript run.R DATADIR OUTDIR [CHAINS] [SEED] [WARMUP] [DRAWS]
#   CHAINS  chains, run in parallel with cores = CHAINS (default 1)
#   WARMUP, DRAWS  iterations per chain (default rstan's 1000 and 1000)
#
# Writes OUTDIR/multilevel_stan_C.csv (rstan's sample_file) and prints the
# wall and CPU times of compilation, warmup and sampling.
suppressPackageStartupMessages(library(rstan))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript run.R DATADIR OUTDIR [CHAINS] [SEED]")
datadir <- args[1]
outdir <- args[2]
chains <- if (length(args) >= 3) as.integer(args[3]) else 1L
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

# The reals are hexadecimal, which R reads exactly.
D <- read.csv(file.path(datadir, "multilevel.csv"), colClasses = "character")
X <- sapply(D[, grep("^x", names(D))], as.numeric)
dimnames(X) <- NULL
data <- list(N = nrow(X), G = max(as.integer(D$g)), K = ncol(X), y = as.integer(D$y), g = as.integer(D$g), X = X)

t0 <- proc.time()
model <- stan_model(file.path(here, "multilevel.stan"))
cat(sprintf("compiled in %.1f s\n", (proc.time() - t0)[["elapsed"]]))
t0 <- proc.time()
fit <- sampling(model, data = data, chains = chains, cores = chains, seed = seed,
                warmup = warmup, iter = warmup + draws,
                sample_file = file.path(outdir, "multilevel_stan.csv"))
t1 <- proc.time() - t0
cat(sprintf("sampling() wall %.1f s, CPU (R and children) %.1f s\n", t1[["elapsed"]], t1[["user.self"]] + t1[["user.child"]]))
print(get_elapsed_time(fit))
s <- summary(fit, pars = c("alpha", "beta", "tau_u", "tau_v", "log_tau_u", "log_tau_v"))$summary
print(s[, c("mean", "sd", "n_eff", "Rhat")])

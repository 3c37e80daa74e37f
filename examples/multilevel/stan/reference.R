# The NUTS reference at N = 10⁶: rstan's NUTS on multilevel_affine.stan,
# the same posterior as multilevel.stan in affine coordinates fitted to a
# first run's draws (exactmh's Stan CSV files), so that its geometry is
# near a standard normal. The fitted coordinates only change how NUTS
# moves, not what it samples; the comparison with exactmh is then
# `go run ./examples/multilevel -stan OUTDIR/multilevel_affine_1.csv,...`.
#
# Usage: Rscript reference.R DATADIR DRAWSDIR OUTDIR [CHAINS] [CORES] [SEED] [WARMUP] [DRAWS]
#   DATADIR   `go run ./examples/multilevel -export DATADIR`
#   DRAWSDIR  `go run ./examples/multilevel -out DRAWSDIR` (any kernel; all
#             *.csv files in it are read)
#   CHAINS, CORES  chains and how many run at once (default 4 and 2)
#   WARMUP, DRAWS  iterations per chain (default 500 and 1000)
#
# Writes OUTDIR/multilevel_affine_C.csv (rstan's sample_file per chain) and
# prints the CPU time of warmup and sampling per chain.
suppressPackageStartupMessages(library(rstan))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript reference.R DATADIR DRAWSDIR OUTDIR [CHAINS] [CORES] [SEED] [WARMUP] [DRAWS]")
datadir <- args[1]
drawsdir <- args[2]
outdir <- args[3]
num <- function(i, def) if (length(args) >= i) as.integer(args[i]) else def
chains <- num(4, 4L)
cores <- num(5, 2L)
seed <- num(6, 1L)
warmup <- num(7, 500L)
draws <- num(8, 1000L)
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)

file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))

D <- read.csv(file.path(datadir, "multilevel.csv"), colClasses = "character")
X <- sapply(D[, grep("^x", names(D))], as.numeric)
dimnames(X) <- NULL
N <- nrow(X)
K <- ncol(X)
G <- max(as.integer(D$g))

# The first run's draws, in exactmh's names.
files <- list.files(drawsdir, pattern = "\\.csv$", full.names = TRUE)
if (!length(files)) stop("no *.csv in ", drawsdir)
W <- do.call(rbind, lapply(files, function(f) read.csv(f, comment.char = "#", check.names = FALSE)))
gcols <- c("Intercept", paste0("x", 1:K), "log_tau_g", "log_tau_g_x1")
miss <- setdiff(c(gcols, paste0("u_g.", 1:G), paste0("u_g_x1.", 1:G)), names(W))
if (length(miss)) stop("draws lack ", paste(head(miss), collapse = ", "))
cat(sprintf("affine coordinates from %d draws in %d files\n", nrow(W), length(files)))

# Global block: mean and Cholesky factor of its covariance.
Gm <- as.matrix(W[, gcols])
m <- colMeans(Gm)
S <- cov(Gm)
L <- t(chol(S))
Gc <- sweep(Gm, 2, m)
# Per group: the regression of (u, v) on the global block and the Cholesky
# factor of what it leaves.
mu <- mv <- s11 <- s21 <- s22 <- numeric(G)
Bu <- Bv <- matrix(0, G, length(m))
for (k in 1:G) {
  U <- cbind(W[[paste0("u_g.", k)]], W[[paste0("u_g_x1.", k)]])
  mk <- colMeans(U)
  Uc <- sweep(U, 2, mk)
  B <- solve(S, crossprod(Gc, Uc) / (nrow(U) - 1))
  R <- cov(Uc - Gc %*% B)
  mu[k] <- mk[1]
  mv[k] <- mk[2]
  Bu[k, ] <- B[, 1]
  Bv[k, ] <- B[, 2]
  s11[k] <- sqrt(R[1, 1])
  s21[k] <- R[2, 1] / s11[k]
  s22[k] <- sqrt(R[2, 2] - s21[k]^2)
}
data <- list(N = N, G = G, K = K, y = as.integer(D$y), g = as.integer(D$g), X = X,
             m = m, L = L, mu = mu, mv = mv, Bu = Bu, Bv = Bv, s11 = s11, s21 = s21, s22 = s22)

t0 <- proc.time()
model <- stan_model(file.path(here, "multilevel_affine.stan"))
cat(sprintf("compiled in %.1f s\n", (proc.time() - t0)[["elapsed"]]))
t0 <- proc.time()
fit <- sampling(model, data = data, chains = chains, cores = cores, seed = seed,
                warmup = warmup, iter = warmup + draws,
                pars = c("alpha", "beta", "log_tau_u", "log_tau_v", "u", "v"),
                sample_file = file.path(outdir, "multilevel_affine.csv"))
t1 <- proc.time() - t0
cat(sprintf("sampling() wall %.1f s, CPU (R and children) %.1f s\n", t1[["elapsed"]], t1[["user.self"]] + t1[["user.child"]]))
print(get_elapsed_time(fit))
sp <- get_sampler_params(fit, inc_warmup = FALSE)
cat(sprintf("chain %d: mean tree depth %.2f, mean leapfrogs %.1f, divergences %d, step size %.3f\n",
            seq_along(sp), sapply(sp, function(x) mean(x[, "treedepth__"])),
            sapply(sp, function(x) mean(x[, "n_leapfrog__"])), sapply(sp, function(x) sum(x[, "divergent__"])),
            sapply(sp, function(x) x[1, "stepsize__"])), sep = "")
s <- summary(fit, pars = c("alpha", "beta", "log_tau_u", "log_tau_v"))$summary
print(s[, c("mean", "sd", "n_eff", "Rhat")])
su <- summary(fit, pars = c("u", "v"))$summary
cat(sprintf("u, v: min n_eff %.0f, max Rhat %.4f\n", min(su[, "n_eff"]), max(su[, "Rhat"])))

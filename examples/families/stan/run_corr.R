# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, random inits) on examples/families's rows
# with a correlated random slope (-corr gaussian or binomial), from the data
# `go run ./examples/families -corr MODEL -export DATADIR` writes, and
# reports min bulk ESS, CPU seconds of sampling (rstan's per-chain elapsed
# times, warmup + sampling, summed), leapfrog steps, the CPU cost of one
# gradient (grad_log_prob, timed), and the population parameters' means
# and sds (also written to DATADIR/MODEL_corr_nuts.csv).
#
# Usage: Rscript run_corr.R DATADIR MODEL [CHAINS] [ITER_GRAD]
#   MODEL      gaussian or binomial
#   CHAINS     chains, run one after another (default 4); 0: no sampling,
#              only the gradient's cost (for N = 10⁶)
#   ITER_GRAD  gradients timed (default 20)
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
datadir <- args[1]
model <- args[2]
chains <- if (length(args) >= 3) as.integer(args[3]) else 4L
ngrad <- if (length(args) >= 4) as.integer(args[4]) else 20L
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
# Debian's r-cran-bh ships no headers (see examples/tall/stan/run.R).
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
name <- paste0(model, "_corr")
D <- read.csv(file.path(datadir, paste0(name, ".csv")))
X <- as.matrix(D[, c("x1", "x2")])
dimnames(X) <- NULL
data <- list(N = nrow(D), G = max(D$g), K = 2L, g = D$g, X = X, Z = D$x1)
pars <- c("alpha", "beta", "sd_1", "cor_1")
if (model == "gaussian") {
  data$y <- D$y
  pars <- c(pars, "sigma")
} else {
  data$k <- D$k
  data$n <- D$n
}
cat(sprintf("%s: N = %d, G = %d\n", name, data$N, data$G))
sm <- stan_model(file.path(here, paste0(name, ".stan")))
fit0 <- sampling(sm, data = data, chains = 1, iter = 1, refresh = 0, seed = 1)
upar <- rnorm(get_num_upars(fit0), 0, 0.1)
t0 <- proc.time()
for (i in seq_len(ngrad)) invisible(grad_log_prob(fit0, upar))
tg <- proc.time() - t0
cat(sprintf("one gradient: %.3g CPU-s (%d timed)\n", (tg[["user.self"]] + tg[["sys.self"]]) / ngrad, ngrad))
if (chains == 0) quit(save = "no")
t0 <- proc.time()
fit <- sampling(sm, data = data, chains = chains, cores = 1, seed = 1, refresh = 200)
tt <- proc.time() - t0
el <- get_elapsed_time(fit)
lf <- sum(sapply(get_sampler_params(fit, inc_warmup = TRUE), function(p) sum(p[, "n_leapfrog__"])))
div <- sum(sapply(get_sampler_params(fit, inc_warmup = FALSE), function(p) sum(p[, "divergent__"])))
# Bulk ESS as exactmh computes it (rank-normalised, Vehtari et al. 2021):
# rstan 2.21's monitor, over every parameter (the effects r_1 included).
m <- monitor(extract(fit, pars = c(pars, "r_1"), permuted = FALSE), warmup = 0, print = FALSE)
w <- which.min(m[, "Bulk_ESS"])
cat(sprintf("sampling: %.1f CPU-s (rstan's elapsed, warmup %.1f + sampling %.1f); process CPU %.1f s\n",
  sum(el), sum(el[, 1]), sum(el[, 2]), tt[["user.self"]] + tt[["sys.self"]]))
cat(sprintf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f; %d leapfrog steps (%.1f per iteration); %d divergent\n",
  m[w, "Bulk_ESS"], rownames(m)[w], min(m[, "Tail_ESS"]), max(m[, "Rhat"]), lf, lf / (2000 * chains), div))
cat(sprintf("min bulk ESS per CPU-second (sampling): %.3g\n", m[w, "Bulk_ESS"] / sum(el)))
s <- summary(fit, pars = pars)$summary
for (p in rownames(s)) cat(sprintf("  %-8s mean %8.4f sd %.4f\n", p, s[p, "mean"], s[p, "sd"]))
write.csv(data.frame(name = rownames(s), mean = s[, "mean"], sd = s[, "sd"], bulk_ess = m[rownames(s), "Bulk_ESS"]),
  file.path(datadir, paste0(name, "_nuts.csv")), row.names = FALSE)

# Runs Stan's NUTS (rstan's defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, random inits) on one of examples/families's
# correlated-slope rows, one chain at a time, and saves each chain as soon as
# it ends (OUTDIR/MODEL_nuts_C.rds: the draws of the population parameters
# and the group effects on their natural scale, the CPU seconds of the
# sampling call, Stan's own elapsed times and the leapfrog counts), so that
# an interrupted run keeps its finished chains. agree.R compares them with
# exactmh's draws.
#
# Usage: Rscript agree_nuts.R DATADIR MODEL OUTDIR [CHAINS] [FIRST] [NGRAD] [WARMUP] [DRAWS] [FORM]
#   DATADIR  what `go run ./examples/families -corr gaussian|binomial -export
#            DATADIR` or `-negbin -export DATADIR` wrote
#   MODEL    gaussian, binomial (stan/MODEL_corr.stan) or negbin
#            (stan/negbin_ml.stan)
#   CHAINS   chains to run (default 4), numbered FIRST, FIRST + 1, …
#            (default FIRST = 1; the seed is 7 and chain_id the number)
#   NGRAD    if > 0, only time NGRAD gradients (grad_log_prob) and exit
#            (for N = 10⁶, where sampling is out of reach)
#   WARMUP, DRAWS  per chain (default 1000 each; fewer only to try the
#            script: the agreement wants rstan's defaults)
#   FORM     "nc" (default): the model as brms writes it (MODEL_corr.stan,
#            negbin_ml.stan), whose cost per ESS is the speed comparison's;
#            "hc": the same posterior in hierarchically centred form
#            (MODEL_corr_hc.stan, negbin_ml_hc.stan), which NUTS mixes far
#            better on these data (100 data a group), for the reference
#            draws of the agreement table
# The compiled models are cached beside the .stan files (auto_write; *.rds
# is ignored by git).
suppressPackageStartupMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
datadir <- args[1]
model <- args[2]
outdir <- args[3]
chains <- if (length(args) >= 4) as.integer(args[4]) else 4L
first <- if (length(args) >= 5) as.integer(args[5]) else 1L
ngrad <- if (length(args) >= 6) as.integer(args[6]) else 0L
warmup <- if (length(args) >= 7) as.integer(args[7]) else 1000L
ndraws <- if (length(args) >= 8) as.integer(args[8]) else 1000L
form <- if (length(args) >= 9) args[9] else "nc"
if (!form %in% c("nc", "hc")) stop("FORM must be nc or hc, not ", form)
suffix <- if (form == "hc") "_hc" else ""
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."
rstan_options(auto_write = TRUE)
# Debian's r-cran-bh ships no headers (see examples/tall/stan/run.R).
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cpu <- function() { t <- proc.time(); t[["user.self"]] + t[["sys.self"]] + t[["user.child"]] + t[["sys.child"]] }
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)
if (model == "negbin") {
  D <- read.csv(file.path(datadir, "negbin_ml.csv"), colClasses = c("integer", "numeric", "numeric", "numeric", "integer"))
  X <- as.matrix(D[, c("x1", "x2")])
  dimnames(X) <- NULL
  data <- list(N = nrow(D), G = max(D$g), K = 2L, y = D$y, g = D$g, X = X, x1 = D$x1, offs = D$offs)
  file <- paste0("negbin_ml", suffix, ".stan")
  # Stan's names → exactmh's natural-scale names.
  pop <- c(alpha = "Intercept", "beta[1]" = "x1", "beta[2]" = "x2", "tau[1]" = "sd_g",
    "tau[2]" = "sd_g_x1", rho = "cor_g", phi = "shape")
  eff <- "u"
} else {
  D <- read.csv(file.path(datadir, paste0(model, "_corr.csv")))
  X <- as.matrix(D[, c("x1", "x2")])
  dimnames(X) <- NULL
  data <- list(N = nrow(D), G = max(D$g), K = 2L, g = D$g, X = X, Z = D$x1)
  pop <- c(alpha = "Intercept", "beta[1]" = "x1", "beta[2]" = "x2", "sd_1[1]" = "sd_g",
    "sd_1[2]" = "sd_g_x1", cor_1 = "cor_g")
  if (model == "gaussian") {
    data$y <- D$y
    pop <- c(pop, sigma = "sigma")
  } else {
    data$k <- D$k
    data$n <- D$n
  }
  file <- paste0(model, "_corr", suffix, ".stan")
  eff <- "r_1"
}
cat(sprintf("%s (%s): N = %d, G = %d\n", model, file, data$N, data$G))
c0 <- cpu()
sm <- stan_model(file.path(here, file))
cat(sprintf("stan_model: %.1f CPU-s (0 when cached)\n", cpu() - c0))
if (ngrad > 0) {
  fit0 <- sampling(sm, data = data, chains = 1, iter = 1, refresh = 0, seed = 1)
  set.seed(1)
  upar <- rnorm(get_num_upars(fit0), 0, 0.1)
  invisible(grad_log_prob(fit0, upar))
  c0 <- cpu()
  for (i in seq_len(ngrad)) invisible(grad_log_prob(fit0, upar))
  cat(sprintf("one gradient (grad_log_prob): %.4g CPU-s (%d timed)\n", (cpu() - c0) / ngrad, ngrad))
  quit(save = "no")
}
G <- data$G
effnames <- c(sprintf("%s[%d,1]", eff, seq_len(G)), sprintf("%s[%d,2]", eff, seq_len(G)))
ournames <- c(sprintf("u_g[%d]", seq_len(G)), sprintf("u_g_x1[%d]", seq_len(G)))
for (c in seq(first, length.out = chains)) {
  c0 <- cpu()
  fit <- sampling(sm, data = data, chains = 1, chain_id = c, seed = 7, iter = warmup + ndraws, warmup = warmup,
    refresh = 100, pars = c(unique(sub("\\[.*", "", names(pop))), eff))
  cs <- cpu() - c0
  a <- as.matrix(fit)
  draws <- cbind(a[, names(pop), drop = FALSE], a[, effnames, drop = FALSE])
  colnames(draws) <- c(unname(pop), ournames)
  sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
  el <- get_elapsed_time(fit)
  res <- list(draws = draws, cpu = cs, elapsed = el,
    leapfrog_warmup = sum(sp[seq_len(warmup), "n_leapfrog__"]), leapfrog_sampling = sum(sp[warmup + seq_len(ndraws), "n_leapfrog__"]),
    divergent = sum(sp[warmup + seq_len(ndraws), "divergent__"]), stepsize = sp[warmup + ndraws, "stepsize__"],
    treedepth = table(sp[warmup + seq_len(ndraws), "treedepth__"]), n_warmup = warmup, n_draws = ndraws, n = data$N, model = model, form = form)
  saveRDS(res, file.path(outdir, sprintf("%s_nuts_%d.rds", model, c)))
  cat(sprintf("chain %d: %.1f CPU-s (Stan's elapsed: warmup %.1f + sampling %.1f s); leapfrog steps %d + %d; %d divergent; step size %.3g\n",
    c, cs, el[1, 1], el[1, 2], res$leapfrog_warmup, res$leapfrog_sampling, res$divergent, res$stepsize))
}

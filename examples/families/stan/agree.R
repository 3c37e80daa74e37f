# The agreement table of exactmh's draws with Stan's NUTS draws on one of
# examples/families's correlated-slope rows: for every parameter (fixed
# effects, sds, the correlation, sigma or shape; the 2 × G group effects
# summarised by their worst) the difference of the means in Stan's
# posterior sds, |Δmean|/sd (goal ≤ 0.1), the ratio of the sds (goal in
# [0.9, 1.1]) and the difference in Monte Carlo standard errors,
# z = Δmean / √(mcse_exactmh² + mcse_Stan²) (|z| > 3 is more than noise);
# then min bulk ESS per CPU-second of each.
#
# Usage: Rscript agree.R STANDIR EXACTDIR MODEL EXACT_CPU
#   STANDIR    agree_nuts.R's OUTDIR (MODEL_nuts_C.rds, every chain found)
#   EXACTDIR   exactmh's -out directory (gaussian_corr_C.csv,
#              binomial_corr_C.csv or negbin_ml_C.csv)
#   EXACT_CPU  exactmh's CPU seconds all in (user + system of the process)
suppressPackageStartupMessages(library(posterior))
args <- commandArgs(trailingOnly = TRUE)
standir <- args[1]
exactdir <- args[2]
model <- args[3]
exact_cpu <- as.numeric(args[4])

# Stan: the chains found, as an iterations × chains × parameters array.
sf <- sort(Sys.glob(file.path(standir, sprintf("%s_nuts_*.rds", model))))
if (!length(sf)) stop("no chains in ", standir)
S <- lapply(sf, readRDS)
stan <- simplify2array(lapply(S, function(s) s$draws))  # iterations × parameters × chains
stan <- aperm(stan, c(1, 3, 2))
stan_cpu <- sum(sapply(S, function(s) s$cpu))
stan_el <- sum(sapply(S, function(s) sum(s$elapsed)))
lf <- sum(sapply(S, function(s) s$leapfrog_warmup + s$leapfrog_sampling))
lfs <- sum(sapply(S, function(s) s$leapfrog_sampling))
div <- sum(sapply(S, function(s) s$divergent))

# exactmh: its Stan CSV files, sampled parameters taken to Stan's scale.
base <- if (model == "negbin") "negbin_ml" else paste0(model, "_corr")
ef <- sort(Sys.glob(file.path(exactdir, sprintf("%s_*.csv", base))))
ef <- ef[grepl(sprintf("%s_[0-9]+\\.csv$", base), ef)]
E <- lapply(ef, function(f) {
  d <- read.csv(f, comment.char = "#", check.names = FALSE)
  d <- d[, !grepl("__$", names(d))]
  out <- list()
  for (n in names(d)) {
    v <- d[[n]]
    if (startsWith(n, "log_tau_")) {
      n <- sub("^log_tau_", "sd_", n)
      v <- exp(v)
    } else if (startsWith(n, "atanh_cpc_")) {
      n <- "cor_g"
      v <- tanh(v)
    } else if (n == "log_sigma") {
      n <- "sigma"
      v <- exp(v)
    } else if (startsWith(n, "log_")) {  # the negative binomial's log shape
      n <- "shape"
      v <- exp(v)
    } else if (startsWith(n, "u_")) {
      n <- sub("\\.([0-9]+)$", "[\\1]", n)
    }
    out[[n]] <- v
  }
  as.matrix(as.data.frame(out, check.names = FALSE))
})
ours <- aperm(simplify2array(E), c(1, 3, 2))
miss <- setdiff(dimnames(stan)[[3]], dimnames(ours)[[3]])
if (length(miss)) stop("exactmh's files lack ", paste(head(miss), collapse = ", "))
ours <- ours[, , dimnames(stan)[[3]], drop = FALSE]

stat <- function(a) {
  p <- dimnames(a)[[3]]
  t(sapply(p, function(n) {
    x <- a[, , n]
    if (is.null(dim(x))) x <- matrix(x, ncol = 1)
    c(mean = mean(x), sd = sd(c(x)), mcse = mcse_mean(x), bulk = ess_bulk(x), rhat = rhat(x))
  }))
}
se <- stat(ours)
ss <- stat(stan)
dm <- (se[, "mean"] - ss[, "mean"]) / ss[, "sd"]
rs <- se[, "sd"] / ss[, "sd"]
z <- (se[, "mean"] - ss[, "mean"]) / sqrt(se[, "mcse"]^2 + ss[, "mcse"]^2)
isu <- startsWith(rownames(se), "u_")

cat(sprintf("%s, N = %d: exactmh %d chains × %d draws; Stan NUTS %d chains × %d draws (%s)\n",
  model, S[[1]]$n, dim(ours)[2], dim(ours)[1], dim(stan)[2], dim(stan)[1], paste(basename(sf), collapse = " ")))
cat(sprintf("  %-22s %10s %10s %8s %8s %8s %7s %6s   %s\n", "parameter", "mean ours", "mean Stan", "sd ours", "sd Stan",
  "|Δ|/sd", "sd rat", "z", "ok"))
ok <- function(d, r) if (abs(d) <= 0.1 && r >= 0.9 && r <= 1.1) "yes" else "NO"
for (n in rownames(se)[!isu]) {
  cat(sprintf("  %-22s %10.4f %10.4f %8.4f %8.4f %8.3f %7.3f %6.2f   %s\n", n, se[n, "mean"], ss[n, "mean"],
    se[n, "sd"], ss[n, "sd"], abs(dm[n]), rs[n], z[n], ok(dm[n], rs[n])))
}
wd <- which.max(abs(dm[isu]))
wr <- which.max(abs(log(rs[isu])))
cat(sprintf("  effects (%d): worst |Δ|/sd %.3f (%s, z %.2f); worst sd ratio %.3f (%s); |Δ|/sd > 0.1: %d, sd ratio outside [0.9, 1.1]: %d, |z| > 3: %d; noise scale of |Δ|/sd (median √(1/ESS_ours + 1/ESS_Stan)) %.3f   %s\n",
  sum(isu), abs(dm[isu][wd]), names(dm[isu])[wd], z[isu][wd], rs[isu][wr], names(rs[isu])[wr],
  sum(abs(dm[isu]) > 0.1), sum(rs[isu] < 0.9 | rs[isu] > 1.1), sum(abs(z[isu]) > 3),
  median(sqrt(1 / se[isu, "bulk"] + 1 / ss[isu, "bulk"])), ok(dm[isu][wd], rs[isu][wr])))
me <- which.min(se[, "bulk"])
ms <- which.min(ss[, "bulk"])
cat(sprintf("  min bulk ESS: ours %.0f (%s), Stan %.0f (%s); max R-hat ours %.4f, Stan %.4f\n",
  se[me, "bulk"], rownames(se)[me], ss[ms, "bulk"], rownames(ss)[ms], max(se[, "rhat"]), max(ss[, "rhat"])))
cat(sprintf("  Stan: %.1f CPU-s sampling (Stan's elapsed %.1f s), compile excluded; %d leapfrog steps (%.1f per iteration; sampling %.1f), %d divergent; %.0f gradients per effective draw\n",
  stan_cpu, stan_el, lf, lf / sum(sapply(S, function(s) s$n_warmup + s$n_draws)), lfs / sum(sapply(S, function(s) s$n_draws)), div, lf / ss[ms, "bulk"]))
cat(sprintf("  min bulk ESS per CPU-second: exactmh %.3g (%.1f CPU-s all in), Stan %.3g; ratio %.3g\n",
  se[me, "bulk"] / exact_cpu, exact_cpu, ss[ms, "bulk"] / stan_cpu, (se[me, "bulk"] / exact_cpu) / (ss[ms, "bulk"] / stan_cpu)))

# Reads one run's Stan CSV files with rstan::read_stan_csv, as an R user
# would, and reports what R makes of them: read by TestRInterop
# (rinterop_test.go).
#
#   Rscript rinterop.R OUT.csv PLOT.png FILE...
#
# Fails (exit status 1, the message on stderr) on any error or warning of
# read_stan_csv. Writes OUT.csv: one row per variable of the stanfit
# (parameters and lp__) with posterior's ess_bulk, ess_tail and rhat of
# as_draws_array(fit), and the sampler columns rstan filed apart from the
# parameters; draws a bayesplot trace plot of every parameter to PLOT.png.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript rinterop.R OUT.csv PLOT.png FILE...")
out <- args[1]
png_path <- args[2]
files <- args[-(1:2)]
suppressPackageStartupMessages({
  library(rstan)
  library(posterior)
  library(bayesplot)
})
fit <- withCallingHandlers(
  rstan::read_stan_csv(files),
  warning = function(w) stop("read_stan_csv warned: ", conditionMessage(w), call. = FALSE)
)
draws <- posterior::as_draws_array(as.array(fit))
s <- posterior::summarise_draws(draws, "ess_bulk", "ess_tail", "rhat")
sp <- names(attr(fit@sim$samples[[1]], "sampler_params"))
res <- data.frame(variable = s$variable, ess_bulk = as.numeric(s$ess_bulk), ess_tail = as.numeric(s$ess_tail),
                  rhat = as.numeric(s$rhat), stringsAsFactors = FALSE)
res <- rbind(res, data.frame(variable = paste0("sampler:", sp), ess_bulk = NA, ess_tail = NA, rhat = NA))
res <- rbind(res, data.frame(variable = paste0("model_pars:", paste(fit@model_pars, collapse = " ")),
                             ess_bulk = NA, ess_tail = NA, rhat = NA))
write.csv(res, out, row.names = FALSE, na = "NA")
pars <- setdiff(dimnames(draws)$variable, "lp__")
p <- bayesplot::mcmc_trace(draws, pars = pars[seq_len(min(length(pars), 12))])
ggplot2::ggsave(png_path, p, width = 8, height = 6, dpi = 72)

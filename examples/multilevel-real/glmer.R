# Fits each model of examples/multilevel-real with lme4::glmer (Laplace
# approximation, lme4's default settings) on the same CSV files the
# exactmh runner reads, and writes the estimates, their standard errors,
# the random-effect standard deviations and the CPU time of each fit to
# figures/bench/multilevel_real_glmer.txt, which the runner
# (go run ./examples/multilevel-real) compares its posterior means with.
#   apt-get install r-cran-lme4
#   Rscript examples/multilevel-real/glmer.R [SET ...]
# Run from the repository root; with no SET, every data set.
#
# Numeric covariates are centred and scaled (by the mean and the sample
# sd, as the exactmh command standardises features) for the fit, and the
# estimates and their covariance transformed back to the original scale,
# which is what the exactmh command reports: the same maximum, found more
# reliably. CPU is user + system time of the process (proc.time()) around
# glmer alone: reading a 1 MB CSV takes well under a second.
suppressMessages(library(lme4))

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
root <- normalizePath(file.path(here, "..", ".."))

source(file.path(here, "models.R"))

fit1 <- function(name, m) {
  ds <- design(here, m)
  d <- ds$d
  rhs <- c(ds$fixed, sprintf("(1 | %s)", m$groups))
  f <- as.formula(paste("yy ~", paste(rhs, collapse = " + ")))
  gc()
  t0 <- proc.time()
  fit <- glmer(f, data = d, family = m$family)
  t1 <- proc.time()
  cpu <- unname((t1 - t0)[["user.self"]] + (t1 - t0)[["sys.self"]])
  beta <- fixef(fit); V <- as.matrix(vcov(fit))
  A <- unscale(names(beta), ds)
  b0 <- drop(A %*% beta); V0 <- A %*% V %*% t(A)
  vc <- as.data.frame(VarCorr(fit))
  conv <- fit@optinfo$conv$lme4$messages
  out <- data.frame(set = name, kind = "fixed", name = exactmh_names(names(beta), m), estimate = b0, se = sqrt(diag(V0)))
  out <- rbind(out, data.frame(set = name, kind = "sd", name = paste0("tau_", vc$grp),
                               estimate = vc$sdcor, se = NA))
  out <- rbind(out, data.frame(set = name, kind = "cpu", name = "user+sys", estimate = cpu, se = NA))
  out <- rbind(out, data.frame(set = name, kind = "loglik", name = "logLik",
                               estimate = as.numeric(logLik(fit)), se = NA))
  list(rows = out, formula = paste(deparse(f, width.cutoff = 500), collapse = ""),
       family = paste(m$family$family, m$family$link), n = nrow(d),
       warn = if (is.null(conv)) "none" else paste(conv, collapse = "; "))
}

sets <- commandArgs(trailingOnly = TRUE)
if (length(sets) == 0) sets <- names(models)
outfile <- file.path(root, "figures", "bench", "multilevel_real_glmer.txt")
old <- if (file.exists(outfile)) readLines(outfile) else character()
hdr <- c(
  "# lme4::glmer fits of examples/multilevel-real's models (Laplace, lme4's defaults),",
  "# the reference the runner's table compares with (go run ./examples/multilevel-real).",
  sprintf("# machine: %s, %s cores (%s)", Sys.info()[["nodename"]], parallel::detectCores(),
          sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1])),
  sprintf("# R %s, lme4 %s", getRversion(), packageVersion("lme4")),
  "# command: Rscript examples/multilevel-real/glmer.R [SET ...] (from the repository root)",
  "# columns: set kind name estimate se (tab-separated); kind fixed: a coefficient on the",
  "# original scale of its covariate and its Wald se; sd: a random-effect standard deviation",
  "# (glmer gives no se); cpu: user+sys CPU-s of glmer(); loglik: the Laplace log-likelihood.",
  "# Per set, a comment line: formula, family, rows, convergence warnings, date, load (1-min)."
)
blocks <- list()
# Keep the other sets' lines of an existing file.
cur <- NULL
for (ln in old) {
  if (startsWith(ln, "## ")) cur <- strsplit(sub("^## ", "", ln), ":")[[1]][1]
  if (!is.null(cur) && !(cur %in% sets)) blocks[[cur]] <- c(blocks[[cur]], ln)
}
for (s in sets) {
  load <- readLines("/proc/loadavg")
  r <- fit1(s, models[[s]])
  lines <- c(sprintf("## %s: %s, %s, %d rows; convergence warnings: %s; %s UTC; load %s",
                     s, r$formula, r$family, r$n, r$warn,
                     format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), strsplit(load, " ")[[1]][1]),
             apply(r$rows, 1, function(x) paste(trimws(x), collapse = "\t")))
  cat(lines, sep = "\n"); cat("\n")
  blocks[[s]] <- lines
}
order <- intersect(names(models), names(blocks))
writeLines(c(hdr, unlist(blocks[order], use.names = FALSE)), outfile)

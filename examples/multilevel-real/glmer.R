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

# models: response (a binary or count expression), fixed factors (with the
# reference level first), numeric covariates, grouping factors, family.
models <- list(
  insteval = list(file = "insteval", y = quote(as.integer(y >= 4)), factors = list(service = "0"),
                  numeric = character(), groups = c("s", "d", "dept"), family = binomial("logit")),
  chem97 = list(file = "chem97", y = quote(as.integer(score >= 6)), factors = list(),
                numeric = "gcsecnt", groups = c("lea", "school"), family = binomial("logit")),
  verbagg = list(file = "verbagg", y = quote(r2), numeric = "Anger",
                 factors = list(Gender = "F", btype = "curse", situ = "other", mode = "do"),
                 groups = c("id", "item"), family = binomial("logit")),
  grouseticks = list(file = "grouseticks", y = quote(TICKS), factors = list(YEAR = "95"),
                     numeric = "HEIGHT", groups = c("INDEX", "BROOD", "LOCATION"), family = poisson("log")),
  guimmun = list(file = "guimmun", y = quote(immun), numeric = "pcInd81",
                 factors = list(kid2p = "N", mom25p = "N", ord = "01", ethn = "L", momEd = "N",
                                husEd = "N", momWork = "N", rural = "N"),
                 groups = c("mom", "comm"), family = binomial("probit")),
  contraception = list(file = "contraception", y = quote(use), numeric = c("age", "age2"),
                       factors = list(livch = "0", urban = "0"), groups = "district",
                       family = binomial("logit"))
)

# exactmh's parameter names (stancsv.SafeNames of "col=level").
safe <- function(x) {
  x <- gsub("[^A-Za-z0-9]+", "_", x)
  gsub("^_+|_+$", "", x)
}

fit1 <- function(name, m) {
  df <- read.csv(file.path(here, "data", paste0(m$file, ".csv")), colClasses = "character")
  d <- data.frame(yy = eval(m$y, lapply(df, function(v) suppressWarnings(as.numeric(v)))))
  xnames <- character()  # exactmh names of the fixed-effect columns, in glmer's order
  for (v in names(m$factors)) {
    lev <- sort(unique(df[[v]]))
    lev <- c(m$factors[[v]], setdiff(lev, m$factors[[v]]))
    d[[v]] <- factor(df[[v]], levels = lev)
  }
  ctr <- c(); scl <- c()
  for (v in m$numeric) {
    x <- as.numeric(df[[v]])
    ctr[v] <- mean(x); scl[v] <- sd(x)
    d[[v]] <- (x - ctr[v]) / scl[v]
  }
  for (g in m$groups) d[[g]] <- factor(df[[g]])
  rhs <- c(names(m$factors), m$numeric, sprintf("(1 | %s)", m$groups))
  f <- as.formula(paste("yy ~", paste(rhs, collapse = " + ")))
  gc()
  t0 <- proc.time()
  fit <- glmer(f, data = d, family = m$family)
  t1 <- proc.time()
  cpu <- unname((t1 - t0)[["user.self"]] + (t1 - t0)[["sys.self"]])
  beta <- fixef(fit); V <- as.matrix(vcov(fit))
  # Back to the original scale: beta_j/s_j for a covariate, the intercept
  # minus sum_j beta_j m_j / s_j.
  A <- diag(length(beta)); rownames(A) <- colnames(A) <- names(beta)
  for (v in m$numeric) {
    A[v, v] <- 1 / scl[v]
    A["(Intercept)", v] <- -ctr[v] / scl[v]
  }
  b0 <- drop(A %*% beta); V0 <- A %*% V %*% t(A)
  nm <- names(beta)
  for (v in names(m$factors)) {
    hit <- startsWith(nm, v) & !(nm %in% m$numeric)
    nm[hit] <- paste0(v, "=", substring(nm[hit], nchar(v) + 1))
  }
  nm[nm == "(Intercept)"] <- "Intercept"
  vc <- as.data.frame(VarCorr(fit))
  conv <- fit@optinfo$conv$lme4$messages
  out <- data.frame(set = name, kind = "fixed", name = safe(nm), estimate = b0, se = sqrt(diag(V0)))
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
  if (startsWith(ln, "## ")) cur <- strsplit(sub("^## ", "", ln), " ")[[1]][1]
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

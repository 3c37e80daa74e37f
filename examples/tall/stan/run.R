# Runs Stan's NUTS (rstan, its defaults: 1000 warmup + 1000 draws per chain,
# diag_e metric, adapt_delta 0.8, max_treedepth 10, random inits) on the
# posteriors of examples/tall, from the data that `go run ./examples/tall
# -export DATADIR` writes. See README.md.
#
# Usage: Rscript run.R DATADIR OUTDIR [POSTERIORS] [CHAINS] [SEED] [WARMUP] [DRAWS]
#   POSTERIORS  comma-separated (default rlr_d10,logreg_d50,rlr_d100)
#   CHAINS      chains, run in parallel with cores = CHAINS (default 1)
#   SEED        Stan's seed (default 1)
#   WARMUP      warmup iterations per chain (default 1000, rstan's)
#   DRAWS       post-warmup draws per chain (default 1000, rstan's)
#
# For each posterior it writes to OUTDIR:
#   NAME_stan[_C].csv       rstan's sample_file (warmup included, 6 digits)
#   NAME_stan_full_C.csv    the same post-warmup draws in full precision
#                           (17 significant digits), rstan's header,
#                           adaptation comments and timing trailer
# and prints wall times and leapfrog counts.
suppressPackageStartupMessages(library(rstan))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript run.R DATADIR OUTDIR [POSTERIORS] [CHAINS] [SEED]")
datadir <- args[1]
outdir <- args[2]
posteriors <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else c("rlr_d10", "logreg_d50", "rlr_d100")
chains <- if (length(args) >= 4) as.integer(args[4]) else 1L
seed <- if (length(args) >= 5) as.integer(args[5]) else 1L
warmup <- if (length(args) >= 6) as.integer(args[6]) else 1000L
draws <- if (length(args) >= 7) as.integer(args[7]) else 1000L
dir.create(outdir, showWarnings = FALSE, recursive = TRUE)

# The .stan files sit next to this script.
file_arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
here <- if (length(file_arg)) dirname(normalizePath(sub("^--file=", "", file_arg[1]))) else "."

rstan_options(auto_write = TRUE) # reuse compiled models (.rds next to the .stan)
# Debian's r-cran-bh ships no headers (it depends on libboost-dev), so
# rstan's boost_lib is empty and stan_model() stops with "Boost not found".
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
cat(sprintf("rstan %s, Stan %s\n", packageVersion("rstan"), stan_version()))

# read_data reads the exported CSV files. Their reals are hexadecimal
# (0x1.8p+01), which R reads exactly, so X and y are bit for bit the
# float64s exactmh samples.
read_data <- function(name) {
  D <- read.csv(file.path(datadir, paste0(name, ".csv")), colClasses = "numeric")
  K <- read.csv(file.path(datadir, paste0(name, "_constants.csv")), colClasses = "character")
  k <- setNames(as.numeric(K$value), K$key)
  X <- as.matrix(D[, -1])
  dimnames(X) <- NULL
  stopifnot(nrow(X) == k[["n"]], ncol(X) == k[["d"]])
  data <- list(N = nrow(X), d = ncol(X), X = X)
  if (startsWith(name, "rlr")) {
    data$y <- D$y
    data$nu <- k[["nu"]]
    model <- "rlr"
  } else if (startsWith(name, "fashion")) {
    # examples/fashion: normal prior, sd sigma; the intercept is X's last column.
    stopifnot(all(D$y == 0 | D$y == 1))
    data$y <- as.integer(D$y)
    data$sigma <- k[["sigma"]]
    model <- "logreg_normal"
  } else if (startsWith(name, "logreg")) {
    stopifnot(all(D$y == 0 | D$y == 1))
    data$y <- as.integer(D$y)
    model <- "logreg"
  } else {
    stop("no Stan model for ", name)
  }
  list(data = data, model = model)
}

# write_full writes chain c's post-warmup draws in full precision, in the
# layout of rstan's sample_file (its comments, save_warmup=0).
write_full <- function(fit, sample_file, c, path) {
  lines <- readLines(sample_file)
  header <- which(!startsWith(lines, "#"))[1]
  adapt <- grep("^# Adaptation terminated", lines)
  elapsed <- grep("^#  Elapsed Time", lines)
  cols <- strsplit(lines[header], ",")[[1]]
  sp <- get_sampler_params(fit, inc_warmup = FALSE)[[c]]
  draws <- as.array(fit)[, c, , drop = TRUE] # iterations x (theta..., lp__)
  m <- cbind(lp__ = draws[, "lp__"], sp[, setdiff(cols[endsWith(cols, "__")], "lp__"), drop = FALSE],
             draws[, setdiff(colnames(draws), "lp__"), drop = FALSE])
  stopifnot(ncol(m) == length(cols))
  # Cross-check against rstan's own rows (6 significant digits).
  own <- read.csv(sample_file, comment.char = "#")
  own <- as.matrix(own[(nrow(own) - nrow(m) + 1):nrow(own), ])
  stopifnot(max(abs(own - m) / pmax(abs(m), 1e-300)) < 1e-5)
  top <- sub("^# save_warmup=1$", "# save_warmup=0", lines[1:(header - 1)])
  body <- apply(m, 1, function(r) paste(sprintf("%.17g", r), collapse = ","))
  trailer <- lines[(elapsed[1] - 1):length(lines)]
  writeLines(c(top, lines[header], lines[adapt:(adapt + 3)], body, trailer), path)
}

for (name in posteriors) {
  cat(sprintf("\n== %s\n", name))
  t0 <- proc.time()[["elapsed"]]
  dm <- read_data(name)
  cat(sprintf("data: N = %d, d = %d, read in %.1f s\n", dm$data$N, dm$data$d, proc.time()[["elapsed"]] - t0))
  t0 <- proc.time()[["elapsed"]]
  model <- stan_model(file.path(here, paste0(dm$model, ".stan")))
  cat(sprintf("model %s.stan compiled (or loaded) in %.1f s\n", dm$model, proc.time()[["elapsed"]] - t0))
  sample_file <- file.path(outdir, paste0(name, "_stan.csv"))
  t0 <- proc.time()[["elapsed"]]
  fit <- sampling(model, data = dm$data, chains = chains, cores = chains, seed = seed,
                  warmup = warmup, iter = warmup + draws,
                  sample_file = sample_file, refresh = 20)
  wall <- proc.time()[["elapsed"]] - t0
  # rstan appends _C to the file name of chain C when there are several.
  files <- if (chains == 1) sample_file else paste0(sub("\\.csv$", "", sample_file), "_", seq_len(chains), ".csv")
  et <- get_elapsed_time(fit)
  sp <- get_sampler_params(fit, inc_warmup = FALSE)
  spw <- get_sampler_params(fit, inc_warmup = TRUE)
  nwarm <- fit@sim$warmup
  cat(sprintf("sampling() wall time %.1f s (%d chain(s), cores = %d)\n", wall, chains, chains))
  theta <- as.array(fit, pars = "theta")
  ess <- apply(theta, 3, function(x) rstan::ess_bulk(as.matrix(x)))
  for (c in seq_len(chains)) {
    full <- file.path(outdir, sprintf("%s_stan_full_%d.csv", name, c))
    write_full(fit, files[c], c, full)
    w <- spw[[c]][seq_len(nwarm), ]
    s <- sp[[c]]
    cat(sprintf("chain %d: warmup %.2f s, sampling %.2f s; n_leapfrog__ warmup %d, sampling %d; ",
                c, et[c, "warmup"], et[c, "sample"], sum(w[, "n_leapfrog__"]), sum(s[, "n_leapfrog__"])))
    cat(sprintf("step size %.4g, mean accept_stat %.3f, divergences %d, tree depths %s\n",
                s[1, "stepsize__"], mean(s[, "accept_stat__"]), sum(s[, "divergent__"]),
                paste(names(table(s[, "treedepth__"])), table(s[, "treedepth__"]), sep = ":", collapse = " ")))
    cat(sprintf("chain %d: full-precision draws in %s\n", c, full))
  }
  cat(sprintf("total: warmup %.2f s, sampling %.2f s (summed over chains; max over chains %.2f, %.2f); n_leapfrog__ sampling %d, warmup %d\n",
              sum(et[, "warmup"]), sum(et[, "sample"]), max(et[, "warmup"]), max(et[, "sample"]),
              sum(sapply(sp, function(s) sum(s[, "n_leapfrog__"]))),
              sum(sapply(spw, function(s) sum(s[seq_len(nwarm), "n_leapfrog__"])))))
  cat(sprintf("rstan::ess_bulk: min %.1f (%s), median %.1f over %d parameters\n",
              min(ess), names(ess)[which.min(ess)], median(ess), length(ess)))
  im <- get_adaptation_info(fit)
  cat("adaptation (chain 1):\n", gsub("(?m)^", "  ", im[[1]], perl = TRUE))
}

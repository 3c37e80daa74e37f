# Runs rstan's NUTS (rstan's defaults: diag_e metric, adapt_delta 0.8,
# max_treedepth 10; 1000 warmup + 1000 draws per chain) on one model of
# examples/multilevel-real, non-centred (multilevel_real.stan), on the same
# CSV file, coding and priors as the exactmh command (flat on the fixed
# effects, half-normal(0, 1) on each τ), and writes every parameter's
# posterior mean and sd in exactmh's names — the fixed effects on the
# original scale of their covariates, u_<factor>.<code>, tau_<factor> —
# with rstan's bulk/tail ESS and R-hat, and the CPU time of sampling, to
# figures/bench/multilevel_real_nuts.txt (other sets' blocks kept). The
# runner (go run ./examples/multilevel-real) compares the exactmh draws of
# every parameter with these.
#   apt-get install r-cran-rstan r-cran-lme4
#   Rscript examples/multilevel-real/stan/run.R SET [CHAINS] [CORES] [centred]
# Run from the repository root. With "centred", the centred program
# (multilevel_real_centred.stan: the same posterior, each effect a
# parameter), for a set whose non-centred form NUTS does not cross.
# CPU is the user + system time of R and its
# children (the chains) over sampling(), compilation excluded.
suppressPackageStartupMessages(library(rstan))
suppressMessages(library(lme4))

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
top <- normalizePath(file.path(here, ".."))
root <- normalizePath(file.path(top, "..", ".."))
source(file.path(top, "models.R"))
a <- commandArgs(trailingOnly = TRUE)
if (length(a) < 1 || !(a[1] %in% names(models))) stop("usage: Rscript run.R SET [CHAINS] [CORES]; SET one of ", paste(names(models), collapse = ", "))
set <- a[1]
chains <- if (length(a) >= 2) as.integer(a[2]) else 4L
cores <- if (length(a) >= 3) as.integer(a[3]) else 1L
centred <- length(a) >= 4 && a[4] == "centred"
m <- models[[set]]
ds <- design(top, m)
d <- ds$d
X <- model.matrix(as.formula(paste("~", paste(ds$fixed, collapse = " + "))), d)
xn <- colnames(X)
X <- X[, -1, drop = FALSE]
idx <- matrix(sapply(m$groups, function(g) as.integer(d[[g]])), nrow = nrow(d))
fam <- switch(paste(m$family$family, m$family$link), "binomial logit" = 0L, "binomial probit" = 1L, "poisson log" = 2L)
data <- list(N = nrow(X), K = ncol(X), J = length(m$groups), family = fam, y = as.integer(d$yy),
             X = unname(X), L = as.array(sapply(m$groups, function(g) nlevels(d[[g]]))), idx = idx)

rstan_options(auto_write = TRUE)
if (!nzchar(rstan_options("boost_lib")) && file.exists("/usr/include/boost/version.hpp")) {
  rstan_options(boost_lib = "/usr/include")
}
model <- stan_model(file.path(here, if (centred) "multilevel_real_centred.stan" else "multilevel_real.stan"))
load <- readLines("/proc/loadavg")
t0 <- proc.time()
fit <- sampling(model, data = data, chains = chains, cores = cores, seed = 1, warmup = 1000, iter = 2000,
                refresh = 0)
t1 <- proc.time() - t0
cpu <- t1[["user.self"]] + t1[["sys.self"]] + t1[["user.child"]] + t1[["sys.child"]]

# Draws as iterations × chains × parameters, fixed effects mapped onto the
# original scale.
arr <- as.array(fit, pars = c("alpha", "beta", "u", "tau"))
np <- dim(arr)[3]
K <- ncol(X)
A <- unscale(xn, ds)
for (c in seq_len(dim(arr)[2])) arr[, c, 1:(K + 1)] <- arr[, c, 1:(K + 1)] %*% t(A)
names_u <- unlist(lapply(m$groups, function(g) paste0("u_", g, ".", levels(d[[g]]))))
pn <- c(exactmh_names(xn, m), names_u, paste0("tau_", m$groups))
kind <- c(rep("fixed", K + 1), rep("effect", length(names_u)), rep("scale", length(m$groups)))
mon <- monitor(arr, warmup = 0, print = FALSE)
out <- data.frame(set = set, kind = kind, name = pn, mean = mon[, "mean"], sd = mon[, "sd"],
                  rhat = mon[, "Rhat"], ess_bulk = mon[, "Bulk_ESS"], ess_tail = mon[, "Tail_ESS"])
sp <- get_sampler_params(fit, inc_warmup = FALSE)
div <- sum(sapply(sp, function(x) sum(x[, "divergent__"])))
hdr <- sprintf("## %s: rstan %s NUTS, %d chains x (1000 + 1000), %s, %d divergent; CPU-s %.1f (sampling, R and children); max R-hat %.4f; min bulk ESS %.0f; min tail ESS %.0f; %s UTC; load %s",
               set, packageVersion("rstan"), chains, if (centred) "centred" else "non-centred", div, cpu, max(out$rhat), min(out$ess_bulk), min(out$ess_tail),
               format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), strsplit(load, " ")[[1]][1])
lines <- c(hdr, sprintf("%s\t%s\t%s\t%.6g\t%.6g\t%.4f\t%.0f\t%.0f", out$set, out$kind, out$name, out$mean, out$sd,
                        out$rhat, out$ess_bulk, out$ess_tail),
           sprintf("%s\tcpu\tuser+sys\t%.2f\tNA\tNA\tNA\tNA", set, cpu))
cat(hdr, "\n")
outfile <- file.path(root, "figures", "bench", "multilevel_real_nuts.txt")
old <- if (file.exists(outfile)) readLines(outfile) else character()
keep <- character(); cur <- NULL
for (ln in old) {
  if (startsWith(ln, "## ")) cur <- strsplit(sub("^## ", "", ln), ":")[[1]][1]
  if (!is.null(cur) && cur != set) keep <- c(keep, ln)
}
cpuname <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
header <- c("# rstan NUTS references for examples/multilevel-real (stan/run.R, multilevel_real.stan, non-centred, unless a block says centred),",
            sprintf("# machine: %s, %s cores (%s); command: Rscript examples/multilevel-real/stan/run.R SET [CHAINS] [CORES] [centred]",
                    Sys.info()[["nodename"]], parallel::detectCores(), cpuname),
            "# columns: set kind name mean sd rhat ess_bulk ess_tail (tab-separated); fixed effects on the original scale;",
            "# u_<factor>.<code> the group effects, tau_<factor> the scales; kind cpu: the CPU-s of sampling().")
writeLines(c(header, keep, lines), outfile)

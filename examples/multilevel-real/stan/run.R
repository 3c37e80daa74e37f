# Runs rstan's NUTS (rstan's defaults: diag_e metric, adapt_delta 0.8,
# max_treedepth 10; 1000 warmup + 1000 draws per chain; random inits) on
# one model of examples/multilevel-real, non-centred (multilevel_real.stan),
# on the same CSV file, coding and priors as the exactmh command (flat on
# the fixed effects, half-normal(0, 1) on each τ), and writes every
# parameter's posterior mean and sd in exactmh's names — the fixed effects
# on the original scale of their covariates, u_<factor>.<code>,
# tau_<factor> — with rstan's bulk/tail ESS and R-hat, and the CPU time of
# sampling, to figures/bench/multilevel_real_nuts.txt (other sets' blocks
# kept). The runner (go run ./examples/multilevel-real) compares the
# exactmh draws of every parameter with these.
#   apt-get install r-cran-rstan r-cran-lme4
#   Rscript examples/multilevel-real/stan/run.R SET [CHAINS] [CORES] [OPTION ...]
# Run from the repository root. Options (any order; the ## line of the
# block names the ones used):
#   centred          the centred program (multilevel_real_centred.stan: the
#                    same posterior, each effect a parameter);
#   centred=F1,F2    only the named factors centred, the others not
#                    (multilevel_real_partial.stan), e.g. an
#                    observation-level factor;
#   inits            every chain starts near glmer's fit of the same model
#                    (lme4::glmer on the same design, fitted here and not
#                    counted): the fixed effects at glmer's estimates plus
#                    a N(0, se²) draw per chain, each τ at glmer's sd times
#                    exp(N(0, 0.2²)) per chain (0.1 where glmer's is 0),
#                    each group effect at glmer's conditional mode — but an
#                    observation-level factor's (as many levels as rows)
#                    at 0 — and the non-centred z at effect / τ;
#   adapt_delta=A, max_treedepth=T, warmup=W, draws=D (kept draws a chain,
#                    1000 unless set); with D ≠ 1000 the block is written
#                    as "SET-long": examples/multilevel-real checks the
#                    agreement against it and keeps the ESS per CPU-second
#                    ratio against the set's own 1000-draw block;
#   save=FILE        also saves the stanfit (saveRDS) for a closer look.
# CPU is the user + system time of R and its children (the chains) over
# sampling(), compilation and the glmer fit for inits excluded.
suppressPackageStartupMessages(library(rstan))
suppressMessages(library(lme4))

args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
top <- normalizePath(file.path(here, ".."))
root <- normalizePath(file.path(top, "..", ".."))
source(file.path(top, "models.R"))
a <- commandArgs(trailingOnly = TRUE)
if (length(a) < 1 || !(a[1] %in% names(models))) stop("usage: Rscript run.R SET [CHAINS] [CORES] [OPTION ...]; SET one of ", paste(names(models), collapse = ", "))
set <- a[1]
chains <- if (length(a) >= 2) as.integer(a[2]) else 4L
cores <- if (length(a) >= 3) as.integer(a[3]) else 1L
opts <- if (length(a) >= 4) a[4:length(a)] else character()
m <- models[[set]]
centred <- "centred" %in% opts
cen <- sub("^centred=", "", grep("^centred=", opts, value = TRUE))
cen <- if (length(cen) > 0) strsplit(cen, ",")[[1]] else character()
if (!all(cen %in% m$groups)) stop("centred=: not a factor of ", set, ": ", paste(setdiff(cen, m$groups), collapse = ","))
useinits <- "inits" %in% opts
num <- function(key, def) {
  v <- sub(paste0("^", key, "="), "", grep(paste0("^", key, "="), opts, value = TRUE))
  if (length(v) > 0) as.numeric(v) else def
}
adapt_delta <- num("adapt_delta", 0.8)
max_treedepth <- as.integer(num("max_treedepth", 10))
warmup <- as.integer(num("warmup", 1000))
draws <- as.integer(num("draws", 1000))
save <- sub("^save=", "", grep("^save=", opts, value = TRUE))
known <- grepl("^(centred|inits|centred=.+|adapt_delta=.+|max_treedepth=.+|warmup=.+|draws=.+|save=.+)$", opts)
if (!all(known)) stop("unknown option: ", paste(opts[!known], collapse = " "))
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
prog <- if (centred) "multilevel_real_centred.stan" else if (length(cen) > 0) "multilevel_real_partial.stan" else "multilevel_real.stan"
if (length(cen) > 0) data$centred <- as.array(as.integer(m$groups %in% cen))
model <- stan_model(file.path(here, prog))
# Inits near glmer's fit (the option "inits"): one list per chain.
init <- "random"
if (useinits) {
  f <- as.formula(paste("yy ~", paste(c(ds$fixed, sprintf("(1 | %s)", m$groups)), collapse = " + ")))
  g <- glmer(f, data = d, family = m$family)
  b <- fixef(g); se <- sqrt(diag(as.matrix(vcov(g))))
  vc <- as.data.frame(VarCorr(g))
  tau0 <- sapply(m$groups, function(v) vc$sdcor[vc$grp == v])
  tau0[!(tau0 > 0)] <- 0.1
  re <- ranef(g)
  set.seed(1)
  init <- lapply(seq_len(chains), function(c) {
    bb <- b + rnorm(length(b)) * se
    tt <- tau0 * exp(rnorm(length(tau0), 0, 0.2))
    zz <- unlist(lapply(seq_along(m$groups), function(j) {
      v <- m$groups[j]
      if (nlevels(d[[v]]) == nrow(d)) return(rep(0, nlevels(d[[v]])))
      e <- re[[v]][levels(d[[v]]), 1]
      if (centred || v %in% cen) e else e / tt[j]
    }))
    l <- list(alpha = unname(bb[1]), beta = as.array(unname(bb[-1])), tau = as.array(unname(tt)))
    if (centred) l$u <- zz else l$z <- zz
    l
  })
}
load <- readLines("/proc/loadavg")
t0 <- proc.time()
fit <- sampling(model, data = data, chains = chains, cores = cores, seed = 1, warmup = warmup, iter = warmup + draws,
                refresh = 0, init = init, control = list(adapt_delta = adapt_delta, max_treedepth = max_treedepth))
t1 <- proc.time() - t0
cpu <- t1[["user.self"]] + t1[["sys.self"]] + t1[["user.child"]] + t1[["sys.child"]]
if (length(save) > 0) saveRDS(fit, save[1])

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
key <- if (draws != 1000L) paste0(set, "-long") else set
out <- data.frame(set = key, kind = kind, name = pn, mean = mon[, "mean"], sd = mon[, "sd"],
                  rhat = mon[, "Rhat"], ess_bulk = mon[, "Bulk_ESS"], ess_tail = mon[, "Tail_ESS"])
sp <- get_sampler_params(fit, inc_warmup = FALSE)
div <- sum(sapply(sp, function(x) sum(x[, "divergent__"])))
atmax <- sum(sapply(sp, function(x) sum(x[, "treedepth__"] >= max_treedepth)))
leap <- sum(sapply(sp, function(x) sum(x[, "n_leapfrog__"])))
form <- if (centred) "centred" else if (length(cen) > 0) paste0("centred ", paste(cen, collapse = ","), ", others non-centred") else "non-centred"
set_ <- c(if (useinits) "inits near glmer's fit (run.R's inits)" else "random inits",
          sprintf("adapt_delta %g, max_treedepth %d", adapt_delta, max_treedepth))
cat(sprintf("draws at max_treedepth: %d of %d; leapfrog steps after warmup: %d; step sizes: %s\n", atmax, chains * draws, leap,
            paste(sprintf("%.4g", sapply(sp, function(x) x[1, "stepsize__"])), collapse = " ")))
hdr <- sprintf("## %s: rstan %s NUTS, %d chains x (%d + %d), %s, %s, %d divergent, %d draws at max tree depth; CPU-s %.1f (sampling, R and children); max R-hat %.4f; min bulk ESS %.0f; min tail ESS %.0f; %s UTC; load %s",
               key, packageVersion("rstan"), chains, warmup, draws, form, paste(set_, collapse = ", "), div, atmax, cpu, max(out$rhat), min(out$ess_bulk), min(out$ess_tail),
               format(Sys.time(), "%Y-%m-%d %H:%M", tz = "UTC"), strsplit(load, " ")[[1]][1])
lines <- c(hdr, sprintf("%s\t%s\t%s\t%.6g\t%.6g\t%.4f\t%.0f\t%.0f", out$set, out$kind, out$name, out$mean, out$sd,
                        out$rhat, out$ess_bulk, out$ess_tail),
           sprintf("%s\tcpu\tuser+sys\t%.2f\tNA\tNA\tNA\tNA", key, cpu))
cat(hdr, "\n")
outfile <- file.path(root, "figures", "bench", "multilevel_real_nuts.txt")
old <- if (file.exists(outfile)) readLines(outfile) else character()
keep <- character(); cur <- NULL
for (ln in old) {
  if (startsWith(ln, "## ")) cur <- strsplit(sub("^## ", "", ln), ":")[[1]][1]
  if (!is.null(cur) && cur != key) keep <- c(keep, ln)
}
cpuname <- sub(".*: ", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1])
header <- c("# rstan NUTS references for examples/multilevel-real (stan/run.R, multilevel_real.stan, non-centred, random inits, rstan's defaults, unless a block's ## line says otherwise),",
            sprintf("# machine: %s, %s cores (%s); command: Rscript examples/multilevel-real/stan/run.R SET [CHAINS] [CORES] [OPTION ...]",
                    Sys.info()[["nodename"]], parallel::detectCores(), cpuname),
            "# columns: set kind name mean sd rhat ess_bulk ess_tail (tab-separated); fixed effects on the original scale;",
            "# u_<factor>.<code> the group effects, tau_<factor> the scales; kind cpu: the CPU-s of sampling().")
writeLines(c(header, keep, lines), outfile)

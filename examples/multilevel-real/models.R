# The models of examples/multilevel-real, shared by glmer.R and stan/run.R
# (sourced): the same data, coding and standardisation as the runner's
# exactmh command lines (main.go's sets).

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

# design reads set's CSV and codes it: the response yy, each fixed factor
# with its reference level first, each numeric covariate centred and
# scaled by its mean and sample sd (ctr, scl; as the exactmh command
# standardises features), each grouping factor with its levels in numeric
# order of their codes (level k is code k, exactmh's u_g[k]).
design <- function(here, m) {
  df <- read.csv(file.path(here, "data", paste0(m$file, ".csv")), colClasses = "character")
  d <- data.frame(yy = eval(m$y, lapply(df, function(v) suppressWarnings(as.numeric(v)))))
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
  for (g in m$groups) {
    code <- as.integer(df[[g]])
    d[[g]] <- factor(code, levels = sort(unique(code)))
  }
  list(d = d, ctr = ctr, scl = scl, fixed = c(names(m$factors), m$numeric))
}

# unscale is the matrix A with A %*% beta the coefficients on the original
# scale of the covariates: beta_j/s_j, the intercept minus
# sum_j beta_j m_j / s_j.
unscale <- function(names, ds) {
  A <- diag(length(names)); rownames(A) <- colnames(A) <- names
  for (v in names(ds$ctr)) {
    A[v, v] <- 1 / ds$scl[v]
    A["(Intercept)", v] <- -ds$ctr[v] / ds$scl[v]
  }
  A
}

# exactmh's names of the fixed-effect columns named by R's model.matrix.
exactmh_names <- function(nm, m) {
  for (v in names(m$factors)) {
    hit <- startsWith(nm, v) & !(nm %in% m$numeric)
    nm[hit] <- paste0(v, "=", substring(nm[hit], nchar(v) + 1))
  }
  nm[nm == "(Intercept)"] <- "Intercept"
  safe(nm)
}

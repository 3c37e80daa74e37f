# Writes the real multilevel data sets of examples/multilevel-real to CSV
# files beside this script, from Debian's R packages r-cran-lme4 and
# r-cran-mlmrev:
#   apt-get install r-cran-lme4 r-cran-mlmrev
#   Rscript examples/multilevel-real/data/export.R
# Each grouping factor is written as its integer code (as.integer of the
# factor), each fixed-effect factor as its level labels, responses as they
# are in the package; the binary responses are derived by the models
# (glmer.R and the exactmh runner use the same thresholds, named there).
# The files are committed, so the Go runner and CI need no R.
suppressMessages({
  library(lme4)
  library(mlmRev)
})
args <- commandArgs(trailingOnly = FALSE)
here <- dirname(normalizePath(sub("^--file=", "", args[grep("^--file=", args)])))
out <- function(df, name) {
  path <- file.path(here, paste0(name, ".csv"))
  write.csv(df, path, row.names = FALSE, quote = FALSE)
  cat(sprintf("%s: %d rows, %d columns, %d bytes\n", path, nrow(df), ncol(df), file.size(path)))
}
code <- function(f) as.integer(droplevels(f))

# lme4::InstEval: 73,421 ratings (1-5) of lecturers d by students s,
# lecturers nested in 14 departments; service 1 when the lecture is a
# service course for another department.
data(InstEval, package = "lme4")
out(data.frame(y = InstEval$y, service = as.character(InstEval$service),
               s = code(InstEval$s), d = code(InstEval$d), dept = code(InstEval$dept)),
    "insteval")

# mlmRev::Chem97: 31,022 A-level chemistry scores (0, 2, ..., 10) of pupils
# in 2,410 schools in 131 local education authorities; gcsecnt the centred
# mean GCSE score (prior attainment).
data(Chem97, package = "mlmRev")
out(data.frame(score = Chem97$score, gcsecnt = round(Chem97$gcsecnt, 6),
               gender = as.character(Chem97$gender),
               lea = code(Chem97$lea), school = code(Chem97$school)),
    "chem97")

# lme4::VerbAgg: 7,584 answers of 316 persons to 24 items on verbal
# aggression; r2 1 for "Y"; item-level covariates btype, situ, mode;
# person-level Anger and Gender.
data(VerbAgg, package = "lme4")
out(data.frame(r2 = as.integer(VerbAgg$r2 == "Y"), Anger = VerbAgg$Anger,
               Gender = as.character(VerbAgg$Gender), btype = as.character(VerbAgg$btype),
               situ = as.character(VerbAgg$situ), mode = as.character(VerbAgg$mode),
               id = code(VerbAgg$id), item = code(VerbAgg$item)),
    "verbagg")

# lme4::grouseticks: tick counts on 403 red grouse chicks (INDEX) in 118
# broods in 63 locations, three years; HEIGHT the altitude (m).
data(grouseticks, package = "lme4")
out(data.frame(TICKS = as.integer(grouseticks$TICKS), YEAR = as.character(grouseticks$YEAR),
               HEIGHT = grouseticks$HEIGHT, INDEX = code(grouseticks$INDEX),
               BROOD = code(grouseticks$BROOD), LOCATION = code(grouseticks$LOCATION)),
    "grouseticks")

# mlmRev::guImmun: complete immunisation (1) of 2,159 children of 1,595
# mothers in 161 Guatemalan communities (most mothers have one child).
data(guImmun, package = "mlmRev")
g <- guImmun
out(data.frame(immun = as.integer(g$immun == "Y"), kid2p = as.character(g$kid2p),
               mom25p = as.character(g$mom25p), ord = as.character(g$ord),
               ethn = as.character(g$ethn), momEd = as.character(g$momEd),
               husEd = as.character(g$husEd), momWork = as.character(g$momWork),
               rural = as.character(g$rural), pcInd81 = round(g$pcInd81, 6),
               mom = code(g$mom), comm = code(g$comm)),
    "guimmun")

# mlmRev::Contraception: contraceptive use (1) of 1,934 women in 60
# districts of Bangladesh; age centred (years), age2 its square, livch the
# number of living children, urban 1 for an urban area.
data(Contraception, package = "mlmRev")
k <- Contraception
out(data.frame(use = as.integer(k$use == "Y"), age = round(k$age, 4),
               age2 = round(k$age^2, 4), livch = as.character(k$livch),
               urban = as.integer(k$urban == "Y"), district = code(k$district)),
    "contraception")

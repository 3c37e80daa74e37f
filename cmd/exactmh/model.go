// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	_ "github.com/exactmh/exactmh/data/arrowipc"      // Arrow IPC and Feather files
	_ "github.com/exactmh/exactmh/data/parquetcodecs" // Parquet with Brotli and LZ4_RAW
	"github.com/exactmh/exactmh/model"
	_ "github.com/exactmh/exactmh/multilevel" // --kernel groupsmh, groupgibbs and the automatic default's multilevel path
	"github.com/exactmh/exactmh/stancsv"
)

// modelFlags are the flags that say which posterior to sample: the data,
// the design and the model. sample and check share them.
type modelFlags struct {
	data          string
	response      string
	terms         string
	formula       string
	noIntercept   bool
	dropMissing   bool
	noStandardize bool
	family        string
	sigma         float64 // > 0: fixed (--sigma); 0: estimated
	sigmaPrior    string
	trials        string // --trials: the column of binomial trials
	failures      string // the formula's cbind(k, f): trials are k + f (trials names f's column then)
	offset        string // --offset: the column of negbinomial offsets
	link          string // --link of --family binomial
	nu            float64
	prior         string
	tauPrior      string
	lkj           float64
	beta          float64
	maxRows       int
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.data, "data", "", "the data `file` (.parquet, .arrow/.feather/.ipc, .csv)")
	fs.StringVar(&m.response, "response", "", "the response: `y`, y>T, log(y) or log1p(y) (see TERMS)")
	fs.StringVar(&m.terms, "terms", "", "the features, comma-separated (see TERMS; \".\" is every other column); none: the intercept alone")
	fs.StringVar(&m.formula, "formula", "", "the model as R writes it, `'y ~ x1 + log(x2) + cat(c) + x1:x2 + (1 + x1 || g)'` (see FORMULA), instead of --response, --terms and --no-intercept")
	fs.BoolVar(&m.noIntercept, "no-intercept", false, "leave out the intercept column")
	fs.BoolVar(&m.dropMissing, "drop-missing", false, "drop rows with a missing or non-finite value in a column used (default: such a row is an error)")
	fs.BoolVar(&m.noStandardize, "no-standardize", false, "keep numeric features as they are (default: mean 0, sd 1)")
	fs.StringVar(&m.family, "family", "logistic", "the model: logistic, probit, poisson, gaussian (σ estimated, or fixed by --sigma), binomial (--trials), negbinomial (NB2, shape estimated; --offset), studentt (--nu; σ estimated, or fixed by --sigma) or ordinal (alias cumulative: cumulative logit of a response 1..K, K − 1 cutpoints Intercept[k] estimated)")
	fs.StringVar(&m.trials, "trials", "", "the `column` of each row's number of trials n for --family binomial (the response counts the successes k ≤ n)")
	fs.StringVar(&m.link, "link", "", "the link of --family binomial: logit (default) or probit")
	fs.StringVar(&m.offset, "offset", "", "the `column` of offsets o_i (the log of an exposure) added to the linear predictor of --family negbinomial")
	fs.Func("sigma", "fix the noise scale σ of --family gaussian or studentt at `S` > 0 (default: σ estimated, with --sigma-prior)", func(v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("want a finite number > 0 (leave --sigma out to estimate σ)")
		}
		m.sigma = f
		return nil
	})
	fs.StringVar(&m.sigmaPrior, "sigma-prior", "", "the prior on σ of --family gaussian when estimated: half-normal:S, half-t:NU:S or exponential:RATE (default half-t:3:S with S = max(2.5, mad(y)), brms's)")
	fs.Float64Var(&m.nu, "nu", 4, "degrees of freedom ν of --family studentt")
	fs.StringVar(&m.prior, "prior", "flat", "the prior: flat, normal:SD, box:R (the cube [−R, R]^d) or ball:R")
	fs.Float64Var(&m.lkj, "lkj", 1, "η of the LKJ prior on the correlation matrix of each correlated random-effect term, (1 + x | g): p(Ω) ∝ det(Ω)^(η−1) (1: uniform, brms's default)")
	fs.StringVar(&m.tauPrior, "tau-prior", "", "the prior on each random-effect scale τ: half-normal:S, half-t:NU:S or exponential:RATE (default half-normal:1 on the link scale; half-normal:sd(y) for --family gaussian)")
	fs.Float64Var(&m.beta, "beta", 1, "tempering β > 0 of the likelihood")
	fs.IntVar(&m.maxRows, "max-rows", 0, "read at most `n` rows of --data, from the start (0: all; a file declaring more rows than memory holds is refused either way)")
}

// model is a posterior built from modelFlags, with the design it came from.
type fitted struct {
	post   *exactmh.Posterior
	design *data.Design
	fp     fingerprint
	// tau is the prior on the random effects' scales, as written in the
	// report ("" without random effects).
	tau string
	// natural are the natural-scale rows of a multilevel model, each
	// random effect's sd beside its sampled log scale.
	natural []naturalRow
}

// naturalRow is a row computed from sampled ones: sd_g__x = exp(θ[from])
// for the sampled log_tau_g_x, brms's name for a random effect's sd; or,
// with of set, of(θ) — a correlation cor_g__Intercept__x of a correlated
// term's Ω from its sampled atanh_cpc_… coordinates.
type naturalRow struct {
	name string
	from int
	of   func(theta []float64) float64
	last int // the last coordinate of reads (with of)
}

// value returns the row at θ.
func (r *naturalRow) value(theta []float64) float64 {
	if r.of != nil {
		return r.of(theta)
	}
	return math.Exp(theta[r.from])
}

// generated are the natural-scale rows as Stan CSV columns.
func (m *fitted) generated() []stancsv.Generated {
	var out []stancsv.Generated
	for _, r := range m.natural {
		out = append(out, stancsv.Generated{Name: r.name, Of: r.value})
	}
	return out
}

// correlationRows returns the natural rows cor_g__a__b of the correlated
// factors of a multilevel prior (nil without one): each a correlation of
// Ω, computed from θ's correlation coordinates.
func correlationRows(p exactmh.Prior) []naturalRow {
	mp, ok := p.(*model.MultilevelPrior)
	if !ok {
		return nil
	}
	var out []naturalRow
	for c := range mp.NumCorrelated() {
		_, cor := mp.Correlated(c)
		names := mp.Correlations(c, nil, nil)
		for k, name := range names {
			out = append(out, naturalRow{name: name, from: cor + k, last: cor + len(names) - 1, of: func(theta []float64) float64 {
				v := make([]float64, len(names))
				mp.Correlations(c, theta, v)
				return v[k]
			}})
		}
	}
	return out
}

// parseTerm parses one term of the TERMS syntax (data.ParseTerm) and
// returns it with the column it reads.
func parseTerm(s string) (data.Term, string, error) {
	t, err := data.ParseTerm(s)
	if err != nil {
		return nil, "", err
	}
	return t, strings.Join(data.Columns(t), ","), nil
}

// parseTerms parses a comma-separated term list (data.ParseTerms) and
// returns the terms and the columns they read.
func parseTerms(s string) ([]data.Term, []string, error) {
	terms, cols, _, err := parseTermsWarn(s)
	return terms, cols, err
}

// parseTermsWarn is parseTerms with data.ParseTerms' warnings: a
// random-effect term written with one '|' and several effects, which
// lme4 reads as correlated (exactmh fits independent effects).
func parseTermsWarn(s string) ([]data.Term, []string, []string, error) {
	terms, cols, warnings, err := data.ParseTerms(s)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--terms: %w", err)
	}
	return terms, cols, warnings, nil
}

// parsePrior parses --prior for dimension d.
func parsePrior(s string, d int) (exactmh.Prior, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	kind = strings.ToLower(kind)
	num := func() (float64, error) {
		v, err := strconv.ParseFloat(arg, 64)
		if !hasArg || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("--prior %s: want %s:X with X a finite number > 0", s, kind)
		}
		return v, nil
	}
	switch kind {
	case "flat":
		if hasArg {
			return nil, fmt.Errorf("--prior %s: flat takes no argument", s)
		}
		return model.Flat{}, nil
	case "normal":
		sd, err := num()
		if err != nil {
			return nil, err
		}
		return model.NewIsoGaussian(d, sd)
	case "box":
		r, err := num()
		if err != nil {
			return nil, err
		}
		return model.NewCube(d, -r, r)
	case "ball":
		r, err := num()
		if err != nil {
			return nil, err
		}
		return model.NewBall(d, r, nil)
	}
	return nil, fmt.Errorf("--prior %s: unknown prior %q (want flat, normal:SD, box:R or ball:R)", s, kind)
}

// build reads the data and builds the posterior.
func (m *modelFlags) build() (*fitted, error) { return m.buildContext(context.Background()) }

// buildContext is build, stopped once ctx is cancelled (a signal): reading
// the data and building the design poll it (data.ReadFileContext,
// data.Spec.BuildContext).
func (m *modelFlags) buildContext(ctx context.Context) (_ *fitted, rerr error) {
	if m.data == "" {
		return nil, usageErr("--data FILE is required")
	}
	var (
		resp    data.Term
		respCol string
		terms   []data.Term
		cols    []string
		dot     bool
		err     error
		fm      *data.Formula
	)
	if m.formula != "" {
		if fm, err = m.parseFormula(); err != nil {
			return nil, err
		}
		resp, cols, dot = fm.Response, fm.Columns, fm.Dot
		respCol = cols[0]
	} else {
		if m.response == "" {
			return nil, usageErr("--response is required (e.g. --response y, or --response 'delay>15'), or --formula 'y ~ …'")
		}
		if resp, respCol, err = parseTerm(m.response); err != nil {
			return nil, usageErr("--response: %v", err)
		}
		var warnings []string
		if terms, cols, dot, warnings, err = splitDot(m.terms); err != nil {
			return nil, usageErr("%v", err)
		}
		// Said once the model is built (a refused one says only why).
		defer func() {
			if rerr == nil {
				for _, w := range warnings {
					fmt.Fprintf(os.Stderr, "exactmh: warning: --terms %s\n", w)
				}
			}
		}()
	}
	fam := strings.ToLower(m.family)
	switch fam {
	case "logistic", "probit", "poisson", "gaussian", "studentt", "binomial", "negbinomial", "ordinal":
	case "cumulative": // brms's name
		fam = "ordinal"
	default:
		return nil, usageErr("--family %s: unknown (want logistic, probit, poisson, gaussian, binomial, negbinomial, studentt or ordinal)", m.family)
	}
	if m.offset != "" && fam != "negbinomial" {
		return nil, usageErr("--offset %s: offsets are offered for --family negbinomial", m.offset)
	}
	link, err := m.binomialLink(fam)
	if err != nil {
		return nil, err
	}
	if !(m.beta > 0) || math.IsInf(m.beta, 0) {
		return nil, usageErr("--beta %v: want a finite number > 0", m.beta)
	}
	if !slices.Contains(cols, respCol) {
		cols = append(cols, respCol)
	}
	for _, c := range []string{m.trials, m.offset} {
		if c != "" && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	if m.maxRows < 0 {
		return nil, usageErr("--max-rows %d: want ≥ 0 (0: all rows)", m.maxRows)
	}
	read := cols
	if dot {
		read = nil // "." needs every column
	}
	f, err := data.ReadFileContext(ctx, m.data, &data.ReadOptions{Columns: read, Limit: m.maxRows})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, inputErr(err)
	}
	spec := data.Spec{Response: resp, Terms: terms, NoIntercept: m.noIntercept}
	if fm != nil {
		spec = fm.Spec(f)
		terms = spec.Terms
	} else if dot {
		spec.Terms = append(spec.Terms, dotTerms(f, cols)...)
		terms = spec.Terms
	}
	spec.DropMissing, spec.NoStandardize = m.dropMissing, m.noStandardize
	d, err := spec.BuildContext(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if fam == "ordinal" {
			err = ordinalResponseErr(f, respCol, err)
		}
		return nil, inputErr(err)
	}
	var categories int
	if fam == "ordinal" {
		dropIntercept(d)
		if categories, err = ordinalCategories(d); err != nil {
			return nil, err
		}
	}
	var trials []float64
	if fam == "binomial" {
		if trials, err = designTrials(f, d, m.trials, m.failures != ""); err != nil {
			return nil, err
		}
	}
	if len(d.Groups) > 0 && fam == "negbinomial" && m.offset != "" {
		if d.Offset != nil {
			return nil, usageErr("--offset %s and the formula's offset(): give the offset one way", m.offset)
		}
		if d.Offset, err = designColumn(f, d, m.offset, "--offset"); err != nil {
			return nil, err
		}
	}
	if d.Offset != nil && len(d.Groups) == 0 && fam != "negbinomial" {
		return nil, usageErr("--formula: offset() is offered on models with random effects (model.Multilevel.Offset) and --family negbinomial; this build's other flat GLMs take none")
	}
	if len(d.Groups) > 0 {
		random := slices.ContainsFunc(d.Groups, func(g data.Group) bool { return g.FixedSD == 0 })
		if m.tauPrior != "" && !random {
			return nil, usageErr("--tau-prior %s: the terms have no random effect, such as (1|group) (cat(c;sd=S) fixes its scale at S)", m.tauPrior)
		}
		return m.buildMultilevel(d, fam, resp, terms, link, trials, categories)
	}
	if m.tauPrior != "" {
		return nil, usageErr("--tau-prior %s: the terms have no random effect, such as (1|group)", m.tauPrior)
	}
	var e exactmh.Energy
	switch fam {
	case "logistic":
		for i, y := range d.Y {
			if y != 0 && y != 1 {
				return nil, inputErr(fmt.Errorf("--family logistic needs a 0/1 response; %s is %v in data row %d (use --response 'col>T')", d.YName, y, dataRow(d, i)))
			}
		}
		e, err = model.NewLogisticRegression(d.X, d.Y, d.D)
	case "probit":
		e, err = model.NewGLM(d.X, d.Y, d.D, model.ProbitFamily{})
	case "poisson":
		e, err = model.NewGLM(d.X, d.Y, d.D, model.PoissonFamily{})
	case "gaussian":
		if m.sigma > 0 {
			e, err = model.NewGLM(d.X, d.Y, d.D, model.GaussianFamily{Sigma: m.sigma})
		} else {
			e, err = model.NewGaussianRegression(d.X, d.Y, d.D)
		}
	case "studentt":
		if m.sigma > 0 {
			// σ fixed: the unit-scale energy of y/σ and x/σ, whose residual
			// is (y − xᵀβ)/σ.
			xs, ys := make([]float64, len(d.X)), make([]float64, len(d.Y))
			for i, v := range d.X {
				xs[i] = v / m.sigma
			}
			for i, v := range d.Y {
				ys[i] = v / m.sigma
			}
			e, err = model.NewStudentTRegression(xs, ys, d.D, m.nu)
		} else {
			e, err = model.NewStudentTScaleRegression(d.X, d.Y, d.D, m.nu)
		}
	case "binomial":
		e, err = model.NewBinomialRegression(d.X, d.Y, trials, d.D, link)
	case "negbinomial":
		off := d.Offset // a formula's offset()
		if m.offset != "" {
			if off, err = designColumn(f, d, m.offset, "--offset"); err != nil {
				return nil, err
			}
		}
		e, err = model.NewNegBinomialRegression(d.X, d.Y, off, d.D)
	case "ordinal":
		e, err = model.NewOrdinalRegression(d.X, d.Y, d.D, categories)
	}
	if err != nil {
		return nil, inputErr(fmt.Errorf("--family %s: %w", fam, err))
	}
	prior, err := parsePrior(m.prior, max(d.D, 1))
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if d.D == 0 {
		prior = nil // y ~ 1 of --family ordinal: the cutpoints alone
	}
	// The names every Stan CSV reader takes, in the files and the tables.
	names := stancsv.SafeNames(d.Names)
	var scale string
	if (fam == "gaussian" || fam == "studentt") && m.sigma == 0 {
		sp, err := parseSigmaPrior(m.sigmaPrior, d.Y)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		prior = &model.WithScale{Base: prior, Scale: sp}
		names = append(names, "log_sigma")
		scale = strings.Replace(sp.String(), "τ", "sigma", 1)
	} else if m.sigmaPrior != "" {
		return nil, usageErr("--sigma-prior %s: only --family gaussian or studentt without --sigma has σ to estimate", m.sigmaPrior)
	}
	if fam == "negbinomial" {
		sp := model.Gamma(0.01, 0.01) // brms's default on the shape
		prior = &model.WithScale{Base: prior, Scale: sp}
		names = append(names, "log_shape")
		scale = sp.String()
	}
	var natural []naturalRow // sigma and shape beside their logs, the cutpoints
	if fam == "ordinal" {
		cp := &model.WithCutpoints{Base: prior, K: categories, Cut: model.DefaultCutpointPrior}
		prior, scale = cp, cp.String()
		natural = cutpointRows(d, len(names), categories)
		names = append(names, model.CutpointNames(categories)...)
	}
	post := &exactmh.Posterior{Energy: e, Prior: prior, Beta: m.beta, Names: names}
	if err := post.Validate(); err != nil {
		return nil, inputErr(err)
	}
	fp := m.fingerprint(d, fam, resp, terms)
	fp.SigmaPrior = scale // σ's, the shape's or the cutpoints' prior
	if k := len(names) - 1; names[k] == "log_sigma" || names[k] == "log_shape" {
		natural = append(natural, naturalRow{name: names[k][len("log_"):], from: k})
	}
	return &fitted{post: post, design: d, fp: fp, natural: natural}, nil
}

// parseFormula parses --formula, refusing the flags it replaces and
// what this build cannot fit.
func (m *modelFlags) parseFormula() (*data.Formula, error) {
	for _, c := range []struct {
		set  bool
		name string
	}{{m.response != "", "--response"}, {m.terms != "", "--terms"}, {m.noIntercept, "--no-intercept"}} {
		if c.set {
			return nil, usageErr("--formula and %s: give the model one way (the formula says the response, the terms and the intercept: ~ 0 + x drops it)", c.name)
		}
	}
	fm, err := data.ParseFormula(m.formula)
	if err != nil {
		return nil, usageErr("--formula: %v", err)
	}
	if fm.Trials != nil || fm.Failures != nil {
		if err := m.formulaTrials(fm); err != nil {
			return nil, err
		}
	}
	for _, w := range fm.Warnings {
		fmt.Fprintf(os.Stderr, "exactmh: warning: --formula: %s\n", w)
	}
	return fm, nil
}

// formulaTrials takes a binomial response's trials from the formula
// (k | trials(n), cbind(k, n - k) or cbind(k, f)) as --trials and
// --family binomial would give them, so that the two spellings build
// the same model: --family logistic (the default) or probit becomes
// binomial with that link. The trials or failures must be a column.
func (m *modelFlags) formulaTrials(fm *data.Formula) error {
	if m.trials != "" {
		return usageErr("--trials %s and the formula's trials (%s): give the trials one way", m.trials, fm.Text)
	}
	col := func(t data.Term) (string, error) {
		c := data.Columns(t)
		if len(c) != 1 || t.String() != data.Num(c[0]).String() {
			return "", usageErr("--formula %q: the trials or failures of a binomial response are a column's name, not %s", m.formula, t)
		}
		return c[0], nil
	}
	var err error
	if fm.Trials != nil {
		m.trials, err = col(fm.Trials)
	} else {
		m.failures, err = col(fm.Failures)
		m.trials = m.failures
	}
	if err != nil {
		return err
	}
	switch strings.ToLower(m.family) {
	case "binomial":
	case "logistic":
		m.family = "binomial"
	case "probit":
		if m.link != "" && strings.ToLower(m.link) != "probit" {
			return usageErr("--family probit and --link %s: the formula's binomial response takes one link", m.link)
		}
		m.family, m.link = "binomial", "probit"
	default:
		return usageErr("--formula %q: a binomial response with trials (cbind(k, n - k), k | trials(n)) goes with --family binomial, logistic or probit, not %s", m.formula, m.family)
	}
	return nil
}

// fingerprint is the fingerprint of the model m builds on design d.
func (m *modelFlags) fingerprint(d *data.Design, fam string, resp data.Term, terms []data.Term) fingerprint {
	var termStrs []string
	for _, t := range terms {
		termStrs = append(termStrs, t.String())
	}
	fp := fingerprint{
		N: d.N, D: d.D, Dropped: d.Dropped, Names: d.Names, Response: resp.String(), Terms: termStrs,
		Intercept: d.Intercept, DropMissing: m.dropMissing, Standardize: !m.noStandardize,
		Family: fam, Prior: m.prior, TauPrior: m.tauPrior, Beta: m.beta, DataHash: dataHash(d),
	}
	switch fam {
	case "gaussian":
		fp.Sigma = m.sigma
	case "studentt":
		fp.Nu, fp.Sigma = m.nu, m.sigma
	case "negbinomial":
		fp.Offset = m.offset
	case "binomial":
		fp.Trials, fp.Link = m.trials, "logit"
		if m.failures != "" {
			fp.Trials = "cbind failures " + m.failures
		}
		if m.link != "" {
			fp.Link = strings.ToLower(m.link)
		}
	}
	return fp
}

// buildMultilevel builds the multilevel posterior (model.NewMultilevel)
// of a design with random-effect terms: the fixed effects are X's
// columns, with --prior flat or normal:SD; each Group is a factor with
// --tau-prior on its scales. Parameter names are the fixed effects'
// names made safe for Stan CSV readers, then u_FACTOR[LEVEL],
// u_FACTOR_SLOPE[LEVEL] and log_tau_FACTOR(_SLOPE).
func (m *modelFlags) buildMultilevel(d *data.Design, fam string, resp data.Term, terms []data.Term, link model.GLMFamily, trials []float64, categories int) (*fitted, error) {
	ml := &model.Multilevel{Y: d.Y, Offset: d.Offset}
	switch fam {
	case "logistic", "probit":
		for i, y := range d.Y {
			if y != 0 && y != 1 {
				return nil, inputErr(fmt.Errorf("--family %s needs a 0/1 response; %s is %v in data row %d (use --response 'col>T')", fam, d.YName, y, dataRow(d, i)))
			}
		}
		ml.Family = model.LogisticFamily{}
		if fam == "probit" {
			ml.Family = model.ProbitFamily{}
		}
	case "poisson", "negbinomial", "ordinal": // NewNegBinomialMultilevel's and NewOrdinalMultilevel's rows
		ml.Family = model.PoissonFamily{}
	case "binomial":
		// The fraction of successes, weighted by the trials: n·f(k/n, η)
		// is the binomial energy (model.BinomialFamily).
		ml.Family, ml.Weights, ml.Y = model.BinomialFamily{Link: link}, trials, make([]float64, d.N)
		for i, k := range d.Y {
			ml.Y[i] = k / trials[i]
		}
	case "gaussian":
		// σ estimated: the rows of σ = 1, then their sufficient
		// statistics (below).
		ml.Family = model.GaussianFamily{Sigma: max(m.sigma, 1)}
		if m.sigma > 0 {
			ml.Family = model.GaussianFamily{Sigma: m.sigma}
		}
	case "studentt": // NewStudentTMultilevel's rows
		if m.sigma > 0 {
			return nil, usageErr("--family studentt --sigma %v: with random effects σ is estimated (--sigma-prior); a fixed σ is offered for the flat model only", m.sigma)
		}
		ml.Family = model.GaussianFamily{Sigma: 1}
	default:
		return nil, usageErr("--family %s: random effects are offered for logistic, probit, poisson, binomial, negbinomial, ordinal, gaussian and studentt", fam)
	}
	tau, err := parseTauPrior(m.tauPrior, fam, d.Y)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	kind, arg, _ := strings.Cut(strings.TrimSpace(m.prior), ":")
	switch strings.ToLower(kind) {
	case "flat":
	case "normal":
		if _, err := parsePrior(m.prior, 1); err != nil {
			return nil, usageErr("%v", err)
		}
		sd, _ := strconv.ParseFloat(arg, 64)
		ml.FixedSD = make([]float64, d.D)
		for j := range ml.FixedSD {
			ml.FixedSD[j] = sd
		}
	default:
		return nil, usageErr("--prior %s: with random effects the fixed effects' prior is flat or normal:SD", m.prior)
	}
	names := stancsv.SafeNames(d.Names)
	for j := range d.D {
		ml.Fixed = append(ml.Fixed, model.Covariate{Name: names[j], Values: d.Column(j)})
	}
	var corr bool
	for _, g := range d.Groups {
		f := model.Factor{Name: stancsv.SafeNames([]string{g.Name})[0], Index: g.Index, Levels: g.Levels, NoIntercept: !g.Intercept, Tau: tau}
		if g.Correlated {
			if !(m.lkj > 0) || math.IsInf(m.lkj, 0) {
				return nil, usageErr("--lkj %v: want η finite > 0", m.lkj)
			}
			f.Correlated, f.LKJ = true, m.lkj
			corr = true
		}
		if g.FixedSD > 0 { // cat(c;sd=S): every level a fixed effect, τ = S
			f.Tau, f.FixedTau = model.ScalePrior{}, g.FixedSD
		}
		slopeNames := stancsv.SafeNames(g.SlopeNames)
		for j, v := range g.Slopes {
			f.Slopes = append(f.Slopes, model.Covariate{Name: slopeNames[j], Values: v})
		}
		ml.Factors = append(ml.Factors, f)
	}
	var post *exactmh.Posterior
	var scale string
	switch fam {
	case "negbinomial":
		sp := model.Gamma(0.01, 0.01) // brms's default on the shape
		post, err = model.NewNegBinomialMultilevel(ml, sp)
		scale = sp.String()
	case "ordinal":
		cut := model.DefaultCutpointPrior
		post, err = model.NewOrdinalMultilevel(ml, categories, cut)
		scale = cut.String() + " on each cutpoint"
	case "studentt":
		// σ estimated, its prior after the multilevel prior; ν fixed.
		sp, err := parseSigmaPrior(m.sigmaPrior, d.Y)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		post, err = model.NewStudentTMultilevel(ml, m.nu, sp)
		if err != nil {
			return nil, inputErr(fmt.Errorf("--family studentt: %w", err))
		}
		scale = strings.Replace(sp.String(), "τ", "sigma", 1)
	default:
		post, err = model.NewMultilevel(ml)
	}
	if err != nil {
		return nil, inputErr(err)
	}
	mlPrior := post.Prior // the multilevel prior, before a scale's or the cutpoints' wrapping
	if ws, ok := mlPrior.(*model.WithScale); ok {
		mlPrior = ws.Base
	}
	if wc, ok := mlPrior.(*model.WithCutpoints); ok {
		mlPrior = wc.Base
	}
	if fam == "gaussian" && m.sigma == 0 {
		// σ estimated: the model's sufficient statistics per group
		// (model.SparseGaussianRegression) with σ's prior after the
		// multilevel prior.
		sp, err := parseSigmaPrior(m.sigmaPrior, d.Y)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		e, err := model.NewSparseGaussianRegression(post.Energy.(*model.SparseGLM[float64]))
		if err != nil {
			return nil, inputErr(err)
		}
		post = &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: post.Prior, Scale: sp},
			Names: append(post.Names, "log_sigma")}
		scale = strings.Replace(sp.String(), "τ", "sigma", 1)
	} else if m.sigmaPrior != "" && fam != "studentt" {
		return nil, usageErr("--sigma-prior %s: only --family gaussian without --sigma or studentt has σ to estimate", m.sigmaPrior)
	}
	post.Beta = m.beta
	if err := post.Validate(); err != nil {
		return nil, inputErr(err)
	}
	var natural []naturalRow
	for _, f := range ml.Factors {
		if f.FixedTau > 0 {
			continue
		}
		add := func(logTau, effect string) {
			if k := slices.Index(post.Names, logTau); k >= 0 {
				natural = append(natural, naturalRow{name: "sd_" + f.Name + "__" + effect, from: k})
			}
		}
		if !f.NoIntercept {
			add("log_tau_"+f.Name, "Intercept")
		}
		for _, sl := range f.Slopes {
			add("log_tau_"+f.Name+"_"+sl.Name, sl.Name)
		}
	}
	fp := m.fingerprint(d, fam, resp, terms)
	fp.SigmaPrior = scale
	fp.Names = post.Names
	fp.D = len(post.Names)
	fp.DataHash = groupsHash(fp.DataHash, d.Groups)
	if d.Offset != nil { // the offset's values are part of the model
		h := sha256.New()
		h.Write([]byte(fp.DataHash))
		buf := make([]byte, 0, 8*len(d.Offset))
		for _, v := range d.Offset {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		h.Write(buf)
		fp.DataHash = hex.EncodeToString(h.Sum(nil))
		fp.Terms = append(fp.Terms, "offset")
	}
	if k := len(post.Names) - 1; post.Names[k] == "log_sigma" || post.Names[k] == "log_shape" {
		natural = append(natural, naturalRow{name: post.Names[k][len("log_"):], from: k})
	}
	if fam == "ordinal" {
		natural = append(natural, cutpointRows(d, len(post.Names)-(categories-1), categories)...)
	}
	tauText := tau.String()
	if corr {
		fp.LKJ = m.lkj
		natural = append(natural, correlationRows(mlPrior)...)
		tauText += fmt.Sprintf("; each correlated term's correlations: lkj_corr_cholesky(%v)", m.lkj)
	}
	return &fitted{post: post, design: d, fp: fp, tau: tauText, natural: natural}, nil
}

// parseTauPrior parses --tau-prior: half-normal:S, half-t:NU:S or
// exponential:RATE; "" is half-normal:1, or half-normal with the sample
// standard deviation of y for the gaussian family (whose effects are in
// y's units).
func parseTauPrior(s, fam string, y []float64) (model.ScalePrior, error) {
	if strings.TrimSpace(s) == "" {
		if fam != "gaussian" {
			return model.HalfNormal(1), nil
		}
		var mean, ss float64
		for _, v := range y {
			mean += v
		}
		mean /= float64(len(y))
		for _, v := range y {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / float64(max(1, len(y)-1)))
		if !(sd > 0) || math.IsInf(sd, 0) {
			sd = 1
		}
		return model.HalfNormal(sd), nil
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	var nums []float64
	for _, p := range parts[1:] {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return model.ScalePrior{}, fmt.Errorf("--tau-prior %s: %q is not a finite number > 0", s, p)
		}
		nums = append(nums, v)
	}
	switch kind := strings.ToLower(strings.TrimSpace(parts[0])); {
	case (kind == "half-normal" || kind == "halfnormal") && len(nums) == 1:
		return model.HalfNormal(nums[0]), nil
	case (kind == "half-t" || kind == "halft" || kind == "half-student-t") && len(nums) == 2:
		return model.HalfStudentT(nums[0], nums[1]), nil
	case kind == "exponential" && len(nums) == 1:
		return model.Exponential(nums[0]), nil
	}
	return model.ScalePrior{}, fmt.Errorf("--tau-prior %s: want half-normal:S, half-t:NU:S or exponential:RATE", s)
}

// binomialLink checks --trials and --link against the family and returns
// the binomial family's link (nil for another family).
func (m *modelFlags) binomialLink(fam string) (model.GLMFamily, error) {
	if fam != "binomial" {
		if m.trials != "" {
			return nil, usageErr("--trials %s: only --family binomial has trials", m.trials)
		}
		if m.link != "" {
			return nil, usageErr("--link %s: only --family binomial takes a link (logistic and probit are families of their own)", m.link)
		}
		return nil, nil
	}
	if m.trials == "" {
		return nil, usageErr("--family binomial needs --trials COLUMN, the number of trials of each row (the response is the successes)")
	}
	switch strings.ToLower(m.link) {
	case "", "logit":
		return model.LogisticFamily{}, nil
	case "probit":
		return model.ProbitFamily{}, nil
	}
	return nil, usageErr("--link %s: want logit or probit", m.link)
}

// designColumn returns the numeric column col of f for the rows of
// design d, every value finite (flag names the flag in errors).
func designColumn(f *data.Frame, d *data.Design, col, flag string) ([]float64, error) {
	all, err := f.Float64s(col)
	if err != nil {
		return nil, inputErr(fmt.Errorf("%s: %w", flag, err))
	}
	out := make([]float64, d.N)
	for i := range out {
		r := i
		if d.Rows != nil {
			r = d.Rows[i]
		}
		if math.IsNaN(all[r]) || math.IsInf(all[r], 0) {
			return nil, inputErr(fmt.Errorf("%s %s is %v (missing or not finite) in data row %d", flag, col, all[r], r+1))
		}
		out[i] = all[r]
	}
	return out, nil
}

// designTrials returns the trials column of f for the rows of design d,
// checked: an integer ≥ 1 at least the response's successes.
func designTrials(f *data.Frame, d *data.Design, col string, failures bool) ([]float64, error) {
	all, err := f.Float64s(col)
	if err != nil {
		return nil, inputErr(fmt.Errorf("--trials: %w", err))
	}
	out := make([]float64, d.N)
	for i := range out {
		r := i
		if d.Rows != nil {
			r = d.Rows[i]
		}
		n, k := all[r], d.Y[i]
		if failures {
			if !(n >= 0) || n != math.Trunc(n) || math.IsInf(n, 0) {
				return nil, inputErr(fmt.Errorf("cbind(%s, %s): the failures %s are %v in data row %d, want an integer ≥ 0", d.YName, col, col, n, r+1))
			}
			n += k
		}
		switch {
		case math.IsNaN(n):
			return nil, inputErr(fmt.Errorf("--trials %s is missing in data row %d", col, r+1))
		case !(n >= 1) || n != math.Trunc(n) || math.IsInf(n, 0):
			return nil, inputErr(fmt.Errorf("--trials %s is %v in data row %d, want an integer ≥ 1", col, n, r+1))
		case !(k >= 0 && k <= n) || k != math.Trunc(k):
			return nil, inputErr(fmt.Errorf("--family binomial: %s (successes) is %v in data row %d, want an integer in [0, %s = %v]", d.YName, k, r+1, col, n))
		}
		out[i] = n
	}
	return out, nil
}

// parseSigmaPrior parses --sigma-prior (the syntax of --tau-prior); ""
// is brms's default, half-t:3:S with S = max(2.5, mad(y)), mad the
// median absolute deviation scaled by 1.4826.
func parseSigmaPrior(s string, y []float64) (model.ScalePrior, error) {
	if strings.TrimSpace(s) != "" {
		p, err := parseTauPrior(s, "", y)
		if err != nil {
			return p, fmt.Errorf("--sigma-prior%s", strings.TrimPrefix(err.Error(), "--tau-prior"))
		}
		return p, nil
	}
	return model.HalfStudentT(3, max(2.5, mad(y))), nil
}

// mad returns 1.4826 times the median absolute deviation of y from its
// median (R's mad).
func mad(y []float64) float64 {
	if len(y) == 0 {
		return 0
	}
	v := slices.Clone(y)
	slices.Sort(v)
	med := median(v)
	for i := range v {
		v[i] = math.Abs(v[i] - med)
	}
	slices.Sort(v)
	return 1.4826 * median(v)
}

// median returns the median of sorted v.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// dataRow returns the 1-based data row of design row i.
func dataRow(d *data.Design, i int) int {
	if d.Rows != nil {
		return d.Rows[i] + 1
	}
	return i + 1
}

// fingerprint identifies a model on its data, stored beside checkpoints
// and in choice files so that a resume or a choice is refused on other
// data or another model.
type fingerprint struct {
	N, D        int
	Dropped     int
	Names       []string
	Response    string
	Terms       []string
	Intercept   bool
	DropMissing bool
	Standardize bool
	Family      string
	Sigma       float64 `json:",omitempty"` // 0: estimated
	SigmaPrior  string  `json:",omitempty"` // σ's prior where estimated
	Trials      string  `json:",omitempty"` // binomial: the trials column
	Link        string  `json:",omitempty"` // binomial: logit or probit
	Offset      string  `json:",omitempty"` // negbinomial: the offset column
	Nu          float64 `json:",omitempty"`
	Prior       string
	TauPrior    string  `json:",omitempty"`
	LKJ         float64 `json:",omitempty"` // η, with correlated random effects
	Beta        float64
	// DataHash is a SHA-256 of every row of the design and the response
	// (their float64 bits, in order; dataHash).
	DataHash string
}

// diff says how fingerprint o (the file's) differs from f (this run's),
// or "" if it does not.
func (f *fingerprint) diff(o *fingerprint) string {
	var out []string
	add := func(what string, a, b any) {
		out = append(out, fmt.Sprintf("%s: the file has %v, this command %v", what, b, a))
	}
	if f.Family != o.Family {
		add("--family", f.Family, o.Family)
	}
	if f.Sigma != o.Sigma {
		add("--sigma", f.Sigma, o.Sigma)
	}
	if f.SigmaPrior != o.SigmaPrior {
		add("--sigma-prior", f.SigmaPrior, o.SigmaPrior)
	}
	if f.Offset != o.Offset {
		add("--offset", f.Offset, o.Offset)
	}
	if f.Trials != o.Trials || f.Link != o.Link {
		add("--trials and --link", f.Trials+" "+f.Link, o.Trials+" "+o.Link)
	}
	if f.Nu != o.Nu {
		add("--nu", f.Nu, o.Nu)
	}
	if f.Prior != o.Prior {
		add("--prior", f.Prior, o.Prior)
	}
	if f.TauPrior != o.TauPrior {
		add("--tau-prior", f.TauPrior, o.TauPrior)
	}
	if f.LKJ != o.LKJ {
		add("--lkj", f.LKJ, o.LKJ)
	}
	if f.Beta != o.Beta {
		add("--beta", f.Beta, o.Beta)
	}
	if f.Response != o.Response {
		add("response", f.Response, o.Response)
	}
	if strings.Join(f.Terms, " ") != strings.Join(o.Terms, " ") {
		add("terms", strings.Join(f.Terms, ", "), strings.Join(o.Terms, ", "))
	}
	if f.Intercept != o.Intercept || f.DropMissing != o.DropMissing || f.Standardize != o.Standardize {
		add("design options (intercept, drop-missing, standardize)",
			fmt.Sprint(f.Intercept, f.DropMissing, f.Standardize), fmt.Sprint(o.Intercept, o.DropMissing, o.Standardize))
	}
	if f.N != o.N || f.D != o.D || f.Dropped != o.Dropped {
		add("data size N×d (dropped)", fmt.Sprintf("%d×%d (%d)", f.N, f.D, f.Dropped), fmt.Sprintf("%d×%d (%d)", o.N, o.D, o.Dropped))
	}
	if strings.Join(f.Names, ",") != strings.Join(o.Names, ",") {
		add("columns", strings.Join(f.Names, ","), strings.Join(o.Names, ","))
	}
	if len(out) == 0 && o.DataHash == "" {
		out = append(out, "the file has no hash of every data row (it was written by an earlier exactmh, which hashed a sample of rows), so this data cannot be checked against it: start afresh")
	} else if len(out) == 0 && f.DataHash != o.DataHash {
		out = append(out, "the same columns but different values or row order (hash of every row of the design and response)")
	}
	return strings.Join(out, "; ")
}

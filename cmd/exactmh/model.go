// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
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
	sigma         float64
	nu            float64
	prior         string
	tauPrior      string
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
	fs.StringVar(&m.family, "family", "logistic", "the model: logistic, probit, poisson, gaussian (known --sigma) or studentt (--nu)")
	fs.Float64Var(&m.sigma, "sigma", 1, "noise sd σ of --family gaussian")
	fs.Float64Var(&m.nu, "nu", 4, "degrees of freedom ν of --family studentt")
	fs.StringVar(&m.prior, "prior", "flat", "the prior: flat, normal:SD, box:R (the cube [−R, R]^d) or ball:R")
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

// naturalRow is a row computed from a sampled one: sd_g__x = exp(θ[from])
// for the sampled log_tau_g_x, brms's name for a random effect's sd.
type naturalRow struct {
	name string
	from int
}

// generated are the natural-scale rows as Stan CSV columns.
func (m *fitted) generated() []stancsv.Generated {
	var out []stancsv.Generated
	for _, r := range m.natural {
		from := r.from
		out = append(out, stancsv.Generated{Name: r.name, Of: func(theta []float64) float64 { return math.Exp(theta[from]) }})
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
func (m *modelFlags) build() (_ *fitted, rerr error) {
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
	case "logistic", "probit", "poisson", "gaussian", "studentt":
	default:
		return nil, usageErr("--family %s: unknown (want logistic, probit, poisson, gaussian or studentt)", m.family)
	}
	if !(m.beta > 0) || math.IsInf(m.beta, 0) {
		return nil, usageErr("--beta %v: want a finite number > 0", m.beta)
	}
	if !slices.Contains(cols, respCol) {
		cols = append(cols, respCol)
	}
	if m.maxRows < 0 {
		return nil, usageErr("--max-rows %d: want ≥ 0 (0: all rows)", m.maxRows)
	}
	read := cols
	if dot {
		read = nil // "." needs every column
	}
	f, err := data.ReadFile(m.data, &data.ReadOptions{Columns: read, Limit: m.maxRows})
	if err != nil {
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
	d, err := spec.Build(f)
	if err != nil {
		return nil, inputErr(err)
	}
	if d.Offset != nil && len(d.Groups) == 0 {
		return nil, usageErr("--formula: offset() is offered on models with random effects (model.Multilevel.Offset); this build's flat GLMs take none")
	}
	if len(d.Groups) > 0 {
		random := slices.ContainsFunc(d.Groups, func(g data.Group) bool { return g.FixedSD == 0 })
		if m.tauPrior != "" && !random {
			return nil, usageErr("--tau-prior %s: the terms have no random effect, such as (1|group) (cat(c;sd=S) fixes its scale at S)", m.tauPrior)
		}
		return m.buildMultilevel(d, fam, resp, terms)
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
		e, err = model.NewGLM(d.X, d.Y, d.D, model.GaussianFamily{Sigma: m.sigma})
	case "studentt":
		e, err = model.NewStudentTRegression(d.X, d.Y, d.D, m.nu)
	}
	if err != nil {
		return nil, inputErr(fmt.Errorf("--family %s: %w", fam, err))
	}
	prior, err := parsePrior(m.prior, d.D)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	// The names every Stan CSV reader takes, in the files and the tables.
	post := &exactmh.Posterior{Energy: e, Prior: prior, Beta: m.beta, Names: stancsv.SafeNames(d.Names)}
	if err := post.Validate(); err != nil {
		return nil, inputErr(err)
	}
	return &fitted{post: post, design: d, fp: m.fingerprint(d, fam, resp, terms)}, nil
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
		return nil, usageErr("--formula %q: a binomial response with trials (cbind(k, n - k), k | trials(n)) needs a binomial-with-trials family, which this build has not: --family is logistic, probit, poisson, gaussian or studentt", m.formula)
	}
	for _, w := range fm.Warnings {
		fmt.Fprintf(os.Stderr, "exactmh: warning: --formula: %s\n", w)
	}
	return fm, nil
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
		fp.Nu = m.nu
	}
	return fp
}

// buildMultilevel builds the multilevel posterior (model.NewMultilevel)
// of a design with random-effect terms: the fixed effects are X's
// columns, with --prior flat or normal:SD; each Group is a factor with
// --tau-prior on its scales. Parameter names are the fixed effects'
// names made safe for Stan CSV readers, then u_FACTOR[LEVEL],
// u_FACTOR_SLOPE[LEVEL] and log_tau_FACTOR(_SLOPE).
func (m *modelFlags) buildMultilevel(d *data.Design, fam string, resp data.Term, terms []data.Term) (*fitted, error) {
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
	case "poisson":
		ml.Family = model.PoissonFamily{}
	case "gaussian":
		ml.Family = model.GaussianFamily{Sigma: m.sigma}
	default:
		return nil, usageErr("--family %s: random effects are offered for logistic, probit, poisson and gaussian (known --sigma)", fam)
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
	for _, g := range d.Groups {
		f := model.Factor{Name: stancsv.SafeNames([]string{g.Name})[0], Index: g.Index, Levels: g.Levels, NoIntercept: !g.Intercept, Tau: tau}
		if g.FixedSD > 0 { // cat(c;sd=S): every level a fixed effect, τ = S
			f.Tau, f.FixedTau = model.ScalePrior{}, g.FixedSD
		}
		slopeNames := stancsv.SafeNames(g.SlopeNames)
		for j, v := range g.Slopes {
			f.Slopes = append(f.Slopes, model.Covariate{Name: slopeNames[j], Values: v})
		}
		ml.Factors = append(ml.Factors, f)
	}
	post, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, inputErr(err)
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
	return &fitted{post: post, design: d, fp: fp, tau: tau.String(), natural: natural}, nil
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
	Sigma       float64 `json:",omitempty"`
	Nu          float64 `json:",omitempty"`
	Prior       string
	TauPrior    string `json:",omitempty"`
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
	if f.Nu != o.Nu {
		add("--nu", f.Nu, o.Nu)
	}
	if f.Prior != o.Prior {
		add("--prior", f.Prior, o.Prior)
	}
	if f.TauPrior != o.TauPrior {
		add("--tau-prior", f.TauPrior, o.TauPrior)
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

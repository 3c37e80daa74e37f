// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"fmt"
	"math"
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
}

// parseTerm parses one term of the TERMS syntax (see usage): name,
// name>T, num(name), log(name), log1p(name), above(name;T), hour(name),
// dow(name), month(name), cat(name[;top=K][;ref=LEVEL]).
func parseTerm(s string) (data.Term, string, error) {
	t, err := parseTerm1(s)
	if err != nil {
		return nil, "", err
	}
	return t.term, t.col, nil
}

// termCol is a term and the column it reads.
type termCol struct {
	term data.Term
	col  string
}

// parseTerm1 is parseTerm.
func parseTerm1(s string) (termCol, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return termCol{}, fmt.Errorf("empty term")
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsAny(s, ");") {
			return termCol{}, fmt.Errorf("term %q: unbalanced parentheses", s)
		}
		if col, thr, ok := strings.Cut(s, ">"); ok {
			col = strings.TrimSpace(col)
			t, err := strconv.ParseFloat(strings.TrimSpace(thr), 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || col == "" {
				return termCol{}, fmt.Errorf("term %q: want column>number", s)
			}
			return termCol{data.Above(col, t), col}, nil
		}
		return termCol{data.Num(s), s}, nil
	}
	if !strings.HasSuffix(s, ")") || strings.Count(s, "(") != 1 || strings.Count(s, ")") != 1 {
		return termCol{}, fmt.Errorf("term %q: want fn(column) with one pair of parentheses", s)
	}
	fn := strings.ToLower(strings.TrimSpace(s[:open]))
	args := strings.Split(s[open+1:len(s)-1], ";")
	col := strings.TrimSpace(args[0])
	if col == "" {
		return termCol{}, fmt.Errorf("term %q: no column", s)
	}
	opts := args[1:]
	noOpts := func() error {
		if len(opts) > 0 {
			return fmt.Errorf("term %q: %s takes no options", s, fn)
		}
		return nil
	}
	switch fn {
	case "num", "log", "log1p", "hour", "dow", "month":
		if err := noOpts(); err != nil {
			return termCol{}, err
		}
		switch fn {
		case "num":
			return termCol{data.Num(col), col}, nil
		case "log":
			return termCol{data.Log(col), col}, nil
		case "log1p":
			return termCol{data.Log1p(col), col}, nil
		case "hour":
			return termCol{data.HourOfDay(col), col}, nil
		case "dow":
			return termCol{data.DayOfWeek(col), col}, nil
		}
		return termCol{data.Month(col), col}, nil
	case "above":
		if len(opts) != 1 {
			return termCol{}, fmt.Errorf("term %q: want above(column;threshold)", s)
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(opts[0]), 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return termCol{}, fmt.Errorf("term %q: threshold %q is not a finite number", s, opts[0])
		}
		return termCol{data.Above(col, t), col}, nil
	case "cat":
		var co []data.CatOption
		seen := map[string]bool{}
		for _, o := range opts {
			k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
			key := strings.TrimSpace(k)
			if seen[key] {
				return termCol{}, fmt.Errorf("term %q: option %s given twice: give it once", s, key)
			}
			seen[key] = true
			switch key {
			case "top":
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if !ok || err != nil || n < 1 {
					return termCol{}, fmt.Errorf("term %q: want top=K with K ≥ 1", s)
				}
				co = append(co, data.TopK(n))
			case "ref":
				if !ok || v == "" {
					return termCol{}, fmt.Errorf("term %q: want ref=LEVEL", s)
				}
				co = append(co, data.Reference(v))
			case "sd":
				sd, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if !ok || err != nil || !(sd > 0) || math.IsInf(sd, 0) {
					return termCol{}, fmt.Errorf("term %q: want sd=S with S a finite number > 0", s)
				}
				co = append(co, data.NormalLevels(sd))
			default:
				return termCol{}, fmt.Errorf("term %q: unknown option %q (cat takes top=K, ref=LEVEL and sd=S)", s, o)
			}
		}
		return termCol{data.Categorical(col, co...), col}, nil
	}
	return termCol{}, fmt.Errorf("term %q: unknown function %q (want num, log, log1p, above, cat, hour, dow or month)", s, fn)
}

// parseTerms splits a comma-separated term list (commas inside
// parentheses are not allowed: options are separated by ';') and returns
// the terms and the columns they read.
func parseTerms(s string) ([]data.Term, []string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil, nil
	}
	var terms []data.Term
	var cols []string
	for _, part := range strings.Split(s, ",") {
		if isRandom(part) {
			ts, cs, err := parseRandom(part)
			if err != nil {
				return nil, nil, fmt.Errorf("--terms: %w", err)
			}
			terms = append(terms, ts...)
			for _, col := range cs {
				if !slices.Contains(cols, col) {
					cols = append(cols, col)
				}
			}
			continue
		}
		t, col, err := parseTerm(part)
		if err != nil {
			return nil, nil, fmt.Errorf("--terms: %w", err)
		}
		terms = append(terms, t)
		if !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
	}
	return terms, cols, nil
}

// isRandom reports whether a term is written as a random-effect term,
// (… | g).
func isRandom(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "(") && strings.Contains(s, "|")
}

// parseRandom parses a random-effect term in lme4's notation: (1 | g), (1
// + x + log(z) | g), (0 + x | g) without the intercept, (1 | a:b) for the
// interaction of a and b, and (1 | a/b) for b nested in a, which is (1 |
// a) + (1 | a:b). The effects are independent (lme4's || is accepted as
// the same). It returns the terms and every column they read.
func parseRandom(s string) ([]data.Term, []string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, ")") {
		return nil, nil, fmt.Errorf("random-effect term %q: want (1 + x | group) with the closing parenthesis last", s)
	}
	body := s[1 : len(s)-1]
	lhs, rhs, _ := strings.Cut(body, "|")
	rhs = strings.TrimPrefix(rhs, "|") // lme4's ||: independent effects, as every term here
	if strings.Contains(rhs, "|") {
		return nil, nil, fmt.Errorf("random-effect term %q: more than one '|'", s)
	}
	rhs = strings.TrimSpace(rhs)
	if rhs == "" || strings.ContainsAny(rhs, "()+;>") {
		return nil, nil, fmt.Errorf("random-effect term %q: the grouping factor %q is not a column, a:b (their interaction) or a/b (b nested in a)", s, rhs)
	}
	intercept, seen := true, false
	var slopes []data.Term
	var cols []string
	for _, part := range splitPlus(lhs) {
		part = strings.TrimSpace(part)
		switch part {
		case "1", "0", "-1":
			if seen {
				return nil, nil, fmt.Errorf("random-effect term %q: the intercept (1 or 0) is given twice", s)
			}
			seen, intercept = true, part == "1"
			continue
		case "":
			return nil, nil, fmt.Errorf("random-effect term %q: an empty term before '|' (want 1 + x + …)", s)
		}
		t, err := parseTerm1(part)
		if err != nil {
			return nil, nil, fmt.Errorf("random-effect term %q: slope %w", s, err)
		}
		slopes = append(slopes, t.term)
		cols = append(cols, t.col)
	}
	if !intercept && len(slopes) == 0 {
		return nil, nil, fmt.Errorf("random-effect term %q: neither an intercept nor a slope", s)
	}
	mk := func(by string) data.Term {
		if intercept {
			return data.Random(by, slopes...)
		}
		return data.RandomSlopes(by, slopes...)
	}
	nest := strings.Split(rhs, "/")
	var terms []data.Term
	for k := range nest {
		for _, c := range strings.Split(nest[k], ":") {
			c = strings.TrimSpace(c)
			if c == "" {
				return nil, nil, fmt.Errorf("random-effect term %q: an empty column in the grouping factor %q", s, rhs)
			}
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
		terms = append(terms, mk(strings.Join(nest[:k+1], ":")))
	}
	return terms, cols, nil
}

// splitPlus splits the left of a random-effect term on the '+' outside
// parentheses.
func splitPlus(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case '+':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
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
func (m *modelFlags) buildContext(ctx context.Context) (*fitted, error) {
	if m.data == "" {
		return nil, usageErr("--data FILE is required")
	}
	if m.response == "" {
		return nil, usageErr("--response is required (e.g. --response y, or --response 'delay>15')")
	}
	resp, respCol, err := parseTerm(m.response)
	if err != nil {
		return nil, usageErr("--response: %v", err)
	}
	terms, cols, dot, err := splitDot(m.terms)
	if err != nil {
		return nil, usageErr("%v", err)
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
	f, err := data.ReadFileContext(ctx, m.data, &data.ReadOptions{Columns: read, Limit: m.maxRows})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, inputErr(err)
	}
	if dot {
		terms = append(terms, dotTerms(f, cols)...)
	}
	d, err := data.Spec{Response: resp, Terms: terms, NoIntercept: m.noIntercept,
		DropMissing: m.dropMissing, NoStandardize: m.noStandardize}.BuildContext(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, inputErr(err)
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

// fingerprint is the fingerprint of the model m builds on design d.
func (m *modelFlags) fingerprint(d *data.Design, fam string, resp data.Term, terms []data.Term) fingerprint {
	var termStrs []string
	for _, t := range terms {
		termStrs = append(termStrs, t.String())
	}
	fp := fingerprint{
		N: d.N, D: d.D, Dropped: d.Dropped, Names: d.Names, Response: resp.String(), Terms: termStrs,
		Intercept: !m.noIntercept, DropMissing: m.dropMissing, Standardize: !m.noStandardize,
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
	ml := &model.Multilevel{Y: d.Y}
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
	fp := m.fingerprint(d, fam, resp, terms)
	fp.Names = post.Names
	fp.D = len(post.Names)
	fp.DataHash = groupsHash(fp.DataHash, d.Groups)
	return &fitted{post: post, design: d, fp: fp, tau: tau.String()}, nil
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

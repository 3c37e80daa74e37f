// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
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
	fs.Float64Var(&m.beta, "beta", 1, "tempering β > 0 of the likelihood")
	fs.IntVar(&m.maxRows, "max-rows", 0, "read at most `n` rows of --data, from the start (0: all; a file declaring more rows than memory holds is refused either way)")
}

// model is a posterior built from modelFlags, with the design it came from.
type fitted struct {
	post   *exactmh.Posterior
	design *data.Design
	fp     fingerprint
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
		for _, o := range opts {
			k, v, ok := strings.Cut(strings.TrimSpace(o), "=")
			switch strings.TrimSpace(k) {
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
			default:
				return termCol{}, fmt.Errorf("term %q: unknown option %q (cat takes top=K and ref=LEVEL)", s, o)
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
func (m *modelFlags) build() (*fitted, error) {
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
	f, err := data.ReadFile(m.data, &data.ReadOptions{Columns: read, Limit: m.maxRows})
	if err != nil {
		return nil, inputErr(err)
	}
	if dot {
		terms = append(terms, dotTerms(f, cols)...)
	}
	d, err := data.Spec{Response: resp, Terms: terms, NoIntercept: m.noIntercept,
		DropMissing: m.dropMissing, NoStandardize: m.noStandardize}.Build(f)
	if err != nil {
		return nil, inputErr(err)
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
	respStr := resp.String()
	var termStrs []string
	for _, t := range terms {
		termStrs = append(termStrs, t.String())
	}
	fp := fingerprint{
		N: d.N, D: d.D, Dropped: d.Dropped, Names: d.Names, Response: respStr, Terms: termStrs,
		Intercept: !m.noIntercept, DropMissing: m.dropMissing, Standardize: !m.noStandardize,
		Family: fam, Prior: m.prior, Beta: m.beta, DataHash: dataHash(d),
	}
	switch fam {
	case "gaussian":
		fp.Sigma = m.sigma
	case "studentt":
		fp.Nu = m.nu
	}
	return &fitted{post: post, design: d, fp: fp}, nil
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

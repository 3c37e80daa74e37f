// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFormulaEqualsTerms samples the same models written as --formula and
// as --response/--terms and checks that the draws are identical, bit for
// bit: a flat model with an interaction and a multilevel one with
// independent random slopes, crossed factors, nesting and no intercept;
// and, with the automatic kernel, a gaussian model with σ estimated and a
// negative binomial one with its shape, each with a correlated random
// intercept and slope (issue 42; the binomial's trials in
// TestFormulaTrials).
func TestFormulaEqualsTerms(t *testing.T) {
	dir := t.TempDir()
	for k, c := range []struct {
		formula        string
		response, term string
		extra          []string
	}{
		{"delay>15 ~ log(distance) + x1*cat(origin;top=3)", "delay>15",
			"log(distance),x1,cat(origin;top=3),x1:cat(origin;top=3)", []string{"--kernel", "mh", "--warmup", "100", "--draws", "100"}},
		{"delay > 15 ~ 0 + log(distance) + (1 + log(distance) || origin) + (1 | destination)", "delay>15",
			"log(distance),(1 + log(distance)||origin),(1|destination)", []string{"--no-intercept", "--kernel", "nuts", "--warmup", "50", "--draws", "50"}},
		{"count ~ x1 + (1 | origin/destination)", "count", "x1,(1|origin/destination)",
			[]string{"--family", "poisson", "--kernel", "groupgibbs", "--warmup", "50", "--draws", "50"}},
		{"y ~ x1 + (1 + x1 | origin)", "y", "x1,(1 + x1|origin)", []string{"--family", "gaussian", "--warmup", "50", "--draws", "50"}},
		{"count ~ x1 + (1 + x1 | origin)", "count", "x1,(1 + x1|origin)", []string{"--family", "negbinomial", "--warmup", "50", "--draws", "50"}},
	} {
		var extraNoInt []string
		for _, e := range c.extra {
			if e != "--no-intercept" {
				extraNoInt = append(extraNoInt, e)
			}
		}
		a := filepath.Join(dir, "f"+string(rune('0'+k)))
		b := filepath.Join(dir, "t"+string(rune('0'+k)))
		common := []string{"sample", "--data", flights, "--chains", "2", "--seed", "5", "--sig-figs", "17", "--quiet"}
		mustRun(t, dir, append(append(slices.Clone(common), "--formula", c.formula, "--out", a), extraNoInt...)...)
		mustRun(t, dir, append(append(slices.Clone(common), "--response", c.response, "--terms", c.term, "--out", b), c.extra...)...)
		sameDraws(t, a, b, 2)
	}
}

// TestFormulaRefusals checks the formulas the command refuses, each
// error saying why and, for the formula's own faults, where.
func TestFormulaRefusals(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sample", "--data", flights, "--warmup", "20", "--draws", "20", "--quiet"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--formula", "delay>15 ~ x1 + (1 + x1 | origin)", "--lkj", "0"}, "--lkj 0"},
		{[]string{"--formula", "delay>15 ~ x1 + sqrt(distance)"}, "at column 17"},
		{[]string{"--formula", "delay>15 ~ service + (1|s"}, "without its ')'"},
		{[]string{"--formula", "cbind(count, n - count) ~ x1", "--family", "poisson"}, "goes with --family binomial, logistic or probit"},
		{[]string{"--formula", "count | trials(n) ~ x1", "--trials", "n"}, "give the trials one way"},
		{[]string{"--formula", "count | trials(log(n)) ~ x1"}, "a column's name"},
		{[]string{"--formula", "y ~ x1", "--terms", "x1"}, "--formula and --terms"},
		{[]string{"--formula", "y ~ x1", "--response", "y"}, "--formula and --response"},
		{[]string{"--formula", "count ~ x1 + offset(log(distance))", "--family", "poisson"}, "offset() is offered on models with random effects"},
	} {
		wantError(t, cli(t, dir, append(slices.Clone(base), c.extra...)...), exitBadInput, c.want)
	}
}

// TestFormulaCorrelated samples the correlated random effects (1 + x1 |
// origin) written as --formula and as --terms with GroupGibbs and checks
// that the draws are identical, bit for bit; that the CSV files and the
// summary have the correlation cor_origin__Intercept__x1 beside the sds,
// each draw's the tanh of its sampled atanh_cpc_origin__Intercept__x1
// (q = 2: the canonical partial correlation is the correlation); and that
// (1 + x1 || origin) has no correlation.
func TestFormulaCorrelated(t *testing.T) {
	dir := t.TempDir()
	common := []string{"sample", "--data", flights, "--chains", "2", "--seed", "5", "--sig-figs", "17",
		"--kernel", "groupgibbs", "--warmup", "100", "--draws", "100"}
	a, b := filepath.Join(dir, "f"), filepath.Join(dir, "t")
	r := mustRun(t, dir, append(slices.Clone(common), "--formula", "delay>15 ~ x1 + (1 + x1 | origin)", "--out", a)...)
	mustRun(t, dir, append(slices.Clone(common), "--response", "delay>15", "--terms", "x1,(1 + x1|origin)", "--out", b, "--quiet")...)
	sameDraws(t, a, b, 2)
	for _, want := range []string{"cor_origin__Intercept__x1", "sd_origin__x1", "lkj_corr_cholesky(1)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the summary has no %s:\n%s", want, r.stdout)
		}
	}
	f := readCSV(t, a+"_1.csv")
	cor, y := slices.Index(f.Columns, "cor_origin__Intercept__x1"), slices.Index(f.Columns, "atanh_cpc_origin__Intercept__x1")
	if cor < 0 || y < 0 || slices.Index(f.Columns, "sd_origin__Intercept") < 0 {
		t.Fatalf("columns %q: want cor_origin__Intercept__x1, atanh_cpc_origin__Intercept__x1 and sd_origin__Intercept", f.Columns)
	}
	for i, row := range f.Draws {
		if w := math.Tanh(row[y]); math.Abs(row[cor]-w) > 1e-12 || !(math.Abs(row[cor]) < 1) {
			t.Fatalf("draw %d: cor %v, want tanh(%v) = %v", i, row[cor], row[y], w)
		}
	}
	c := filepath.Join(dir, "i")
	mustRun(t, dir, append(slices.Clone(common), "--formula", "delay>15 ~ x1 + (1 + x1 || origin)", "--out", c, "--quiet")...)
	if g := readCSV(t, c+"_1.csv"); slices.ContainsFunc(g.Columns, func(s string) bool { return strings.Contains(s, "cor_") }) {
		t.Errorf("(1 + x1 || origin) has a correlation column: %q", g.Columns)
	}
	// --lkj on a model without a correlated term is a usage error, not
	// silently ignored.
	r = cli(t, dir, append(slices.Clone(common), "--formula", "delay>15 ~ x1 + (1 + x1 || origin)", "--lkj", "2", "--out", filepath.Join(dir, "l"), "--quiet")...)
	if r.code != 2 || !strings.Contains(r.stderr, "--lkj 2: the model has no correlated random-effect term") {
		t.Errorf("--lkj without a correlated term: exit %d, stderr %q; want exit 2 naming --lkj", r.code, r.stderr)
	}
}

// TestFormulaOffset samples a Poisson multilevel model with and without
// an offset and checks that the offset enters with coefficient 1:
// offset(log(e)) with e = e^5 in every row lowers the intercept by 5.
func TestFormulaOffset(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(flights)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] += ",e"
		} else {
			lines[i] += "," + strconv.FormatFloat(math.Exp(5), 'g', -1, 64)
		}
	}
	file := filepath.Join(dir, "exposure.csv")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"sample", "--data", file, "--family", "poisson", "--kernel", "nuts", "--chains", "1",
		"--warmup", "200", "--draws", "200", "--seed", "3", "--quiet"}
	mustRun(t, dir, append(slices.Clone(args), "--formula", "count ~ x1 + (1 | origin)", "--out", filepath.Join(dir, "a"))...)
	mustRun(t, dir, append(slices.Clone(args), "--formula", "count ~ x1 + offset(log(e)) + (1 | origin)", "--out", filepath.Join(dir, "b"))...)
	mean := func(prefix string) float64 {
		f := readCSV(t, prefix+"_1.csv")
		col := slices.Index(f.Columns, "Intercept")
		if col < 0 {
			t.Fatalf("%s: no Intercept column: %q", prefix, f.Columns)
		}
		var s float64
		for _, row := range f.Draws {
			s += row[col]
		}
		return s / float64(len(f.Draws))
	}
	a, b := mean(filepath.Join(dir, "a")), mean(filepath.Join(dir, "b"))
	if math.Abs(b-a+5) > 0.3 {
		t.Errorf("intercept %v with the offset log(e^5), %v without: want 5 lower", b, a)
	}
}

// TestFormulaTrials samples a binomial model with trials written four
// ways — --family binomial --trials n with --terms, and the formulas
// k | trials(n) ~ …, cbind(k, n - k) ~ … and cbind(k, f) ~ … with f = n −
// k a column of failures — and checks that the draws are identical, bit
// for bit, flat and with a random intercept; with --family probit the
// formula takes the probit link (the draws of --family binomial --link
// probit).
func TestFormulaTrials(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 9))
	var b strings.Builder
	b.WriteString("k,n,f,x,g\n")
	for i := range 600 {
		x := rng.NormFloat64()
		n := 1 + rng.IntN(9)
		p := 1 / (1 + math.Exp(-(-0.2 + 0.7*x + 0.4*float64(i%4-1))))
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		fmt.Fprintf(&b, "%d,%d,%d,%s,g%d\n", k, n, n-k, strconv.FormatFloat(x, 'g', -1, 64), i%4)
	}
	path := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"sample", "--data", path, "--chains", "2", "--seed", "4", "--warmup", "60", "--draws", "60", "--sig-figs", "17", "--quiet"}
	run := func(out string, args ...string) string {
		o := filepath.Join(dir, out)
		mustRun(t, dir, append(append(slices.Clone(common), "--out", o), args...)...)
		return o
	}
	for _, c := range []struct {
		terms, rhs string
		link       []string
		family     string
	}{
		{"x", "x", nil, "logistic"},
		{"x,(1|g)", "x + (1 | g)", nil, "logistic"},
		{"x,(1|g)", "x + (1 | g)", []string{"--link", "probit"}, "probit"},
	} {
		ref := run("ref", append([]string{"--family", "binomial", "--trials", "n", "--response", "k", "--terms", c.terms}, c.link...)...)
		for i, lhs := range []string{"k | trials(n)", "cbind(k, n - k)", "cbind(k, f)"} {
			got := run("f"+strconv.Itoa(i), "--family", c.family, "--formula", lhs+" ~ "+c.rhs)
			t.Logf("%s ~ %s (--family %s) against --trials", lhs, c.rhs, c.family)
			sameDraws(t, got, ref, 2)
		}
	}
}

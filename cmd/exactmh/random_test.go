// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/data"
)

// TestParseRandom parses random-effect terms in lme4's notation into
// data's terms (as their String writes them) and the columns they read.
func TestParseRandom(t *testing.T) {
	for _, c := range []struct {
		in    string
		terms []string
		cols  []string
	}{
		{"(1|origin)", []string{"(1 | origin)"}, []string{"origin"}},
		{" ( 1 + log(distance) | origin ) ", []string{"(1 + log(distance) | origin)"}, []string{"distance", "origin"}},
		{"(0 + x1 + delay>15 || origin)", []string{"(0 + x1 + delay>15 || origin)"}, []string{"x1", "delay", "origin"}},
		{"(0 + x1 + delay>15 | origin)", []string{"(0 + x1 + delay>15 | origin)"}, []string{"x1", "delay", "origin"}},
		{"(1|origin:destination)", []string{"(1 | origin:destination)"}, []string{"origin", "destination"}},
		{"(1|origin/destination)", []string{"(1 | origin)", "(1 | origin:destination)"}, []string{"origin", "destination"}},
	} {
		terms, cols, err := parseTerms(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		var got []string
		for _, x := range terms {
			got = append(got, x.String())
		}
		if !slices.Equal(got, c.terms) || !slices.Equal(cols, c.cols) {
			t.Errorf("%s: terms %q columns %q, want %q %q", c.in, got, cols, c.terms, c.cols)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"(1|origin", "closing parenthesis last"},
		{"(1|origin)x", "closing parenthesis last"},
		{"(1||origin|dest)", "more than one '|'"},
		{"(1|)", "grouping factor"},
		{"(1|log(origin))", "grouping factor"},
		{"(1 + 1|origin)", "given twice"},
		{"(0|origin)", "neither an intercept nor a slope"},
		{"(1 + |origin)", "empty term"},
		{"(1 + sqrt(x)|origin)", `unknown function "sqrt"`},
		{"(1|a::b)", "empty column"},
	} {
		_, _, err := parseTerms(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

// TestSampleRandomEffects samples a crossed random-intercept model with a
// random slope on the flights file through the CLI and checks the
// parameter names in the Stan CSV files and the summary, and the
// refusals of models and flags random effects do not take.
func TestSampleRandomEffects(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sample", "--data", flights, "--response", "delay>15", "--terms",
		"log(distance),(1 + log(distance)|origin),(1|destination)", "--kernel", "nuts", "--chains", "2",
		"--warmup", "100", "--draws", "100", "--seed", "3", "--tau-prior", "half-t:3:1", "--out", filepath.Join(dir, "ml")}
	r := mustRun(t, dir, args...)
	f := readCSV(t, filepath.Join(dir, "ml_1.csv"))
	names := f.ParamNames()
	// The files name a level in the form every Stan CSV reader takes
	// (stancsv.SafeNames), and the summary as its column, as R shows it.
	for _, want := range [][2]string{{"Intercept", "Intercept"}, {"log_distance", "log_distance"},
		{"u_origin_ATL", "u_origin_ATL"}, {"u_origin_log_distance_ATL", "u_origin_log_distance_ATL"},
		{"u_destination_BOS", "u_destination_BOS"}, {"log_tau_origin", "log_tau_origin"},
		{"log_tau_origin_log_distance", "log_tau_origin_log_distance"}, {"log_tau_destination", "log_tau_destination"}} {
		if !strings.Contains(r.stdout, want[0]+" ") {
			t.Errorf("the summary has no row %q:\n%s", want[0], r.stdout)
		}
		if !slices.Contains(names, want[1]) {
			t.Errorf("the Stan CSV has no column %q: %q", want[1], names)
		}
	}
	// 2 fixed effects, 12 origins × 2, 12 destinations, 3 scales, the
	// origins' correlation coordinate ((1 + x|g): correlated), and the
	// natural-scale columns sd_origin__Intercept, … (3) and
	// cor_origin__Intercept__log_distance.
	if len(names) != 2+24+12+3+1+3+1 {
		t.Errorf("%d parameters, want 46: %q", len(names), names)
	}
	if !strings.Contains(r.stdout, "student_t(3, 0, 1) on τ > 0") {
		t.Errorf("the summary does not state the prior on τ:\n%s", r.stdout)
	}
	base := []string{"sample", "--data", flights, "--response", "delay>15", "--warmup", "20", "--draws", "20", "--quiet"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--terms", "(1|airport)"}, `no column "airport"`},
		{[]string{"--terms", "(1|x1)"}, `column "x1" is float`},
		{[]string{"--terms", "(1 + cat(origin)|destination)"}, "not numeric"},
		{[]string{"--terms", "(1|origin),(1 + x1|origin)"}, `both group by "origin"`},
		{[]string{"--terms", "(1|origin)", "--tau-prior", "cauchy:1"}, "--tau-prior cauchy:1"},
		{[]string{"--terms", "(1|origin)", "--tau-prior", "half-normal:-1"}, "not a finite number > 0"},
		{[]string{"--terms", "x1", "--tau-prior", "half-normal:1"}, "no random effect"},
		{[]string{"--terms", "(1|origin)", "--prior", "box:3"}, "flat or normal:SD"},
		{[]string{"--terms", "(1|origin)", "--family", "studentt", "--sigma", "2"}, "a fixed σ is offered for the flat model only"},
		{[]string{"--terms", "(1|origin)", "--family", "studentt", "--nu", "0"}, "ν = 0"},
	} {
		wantError(t, cli(t, dir, append(slices.Clone(base), c.extra...)...), exitBadInput, c.want)
	}
}

// TestSampleMultilevelKernels runs the registry's multilevel kernels and
// the non-centred NUTS by name (--kernel groupgibbs, groupsmh, nuts-nc) on
// a random-intercept model of the flights file, checking that the draws
// carry the centred names (u_origin_…), and checks that a flat model, a
// kernel without a non-centred form and a -cv form are refused, saying
// why.
func TestSampleMultilevelKernels(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sample", "--data", flights, "--response", "delay>15", "--chains", "2",
		"--warmup", "50", "--draws", "50", "--seed", "3", "--quiet"}
	for _, k := range []string{"groupgibbs", "groupsmh", "nuts-nc", "GroupGibbs", "NUTS-NC"} {
		out := filepath.Join(dir, strings.ToLower(k))
		mustRun(t, dir, append(slices.Clone(base), "--terms", "log(distance),(1|origin)", "--kernel", k, "--out", out)...)
		if names := readCSV(t, out+"_1.csv").ParamNames(); !slices.Contains(names, "u_origin_ATL") || !slices.Contains(names, "log_tau_origin") {
			t.Errorf("--kernel %s: columns %q, want u_origin_ATL and log_tau_origin", k, names)
		}
	}
	for _, c := range []struct {
		terms, kernel, want string
	}{
		{"log(distance)", "groupgibbs", "needs a model with random-effect terms"},
		{"log(distance)", "groupsmh", "needs a model with random-effect terms"},
		{"log(distance)", "nuts-nc", "needs a model with random-effect terms"},
		{"(1|origin)", "mh-nc", "no non-centred form"},
		{"(1|origin)", "groupgibbs-cv", "takes no -cv or -cn form"},
	} {
		args := append(slices.Clone(base), "--terms", c.terms, "--kernel", c.kernel, "--out", filepath.Join(dir, "bad"))
		wantError(t, cli(t, dir, args...), exitBadInput, c.want)
	}
}

// FuzzParseTerms parses any --terms text and builds the design of what
// parses on the synthetic flights file: an error is fine, a panic or a
// hang is not, and a random term that builds gives every row a level.
func FuzzParseTerms(f *testing.F) {
	for _, s := range []string{"(1|origin)", "(1 + log(distance)|origin),(1|destination)", "(0 + x1||origin:destination)",
		"(1|origin/destination)", "((1|origin)", "(1|)", "(1 + (x1)|origin)", "log(distance),cat(origin;top=3)", "(1|a:b:c)"} {
		f.Add(s)
	}
	frame, err := data.ReadFile(flights, &data.ReadOptions{Limit: 200})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, _, err := parseTerms(s)
		if err != nil {
			return
		}
		d, err := data.Spec{Response: data.Above("delay", 15), Terms: terms}.Build(frame)
		if err != nil {
			return
		}
		for _, g := range d.Groups {
			if len(g.Index) != d.N {
				t.Fatalf("%q: group %s has %d levels for %d rows", s, g.Name, len(g.Index), d.N)
			}
			for i, l := range g.Index {
				if l < 0 || int(l) >= len(g.Levels) {
					t.Fatalf("%q: group %s: row %d has level %d of %d", s, g.Name, i, l, len(g.Levels))
				}
			}
		}
	})
}

// TestSampleNormalLevels samples a model with a random intercept and a
// categorical of every level with a normal prior, cat(origin;sd=1),
// through the CLI: the categorical's effects are named b_origin[LEVEL]
// (the files' and the summary's b_origin_LEVEL),
// with no scale of their own, and malformed uses are refused.
func TestSampleNormalLevels(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "sample", "--data", flights, "--response", "delay>15", "--terms",
		"log(distance),(1|destination),cat(origin;sd=1)", "--kernel", "nuts", "--chains", "2",
		"--warmup", "100", "--draws", "100", "--seed", "3", "--out", filepath.Join(dir, "nl"))
	names := readCSV(t, filepath.Join(dir, "nl_1.csv")).ParamNames()
	for _, want := range [][2]string{{"b_origin_ATL", "b_origin_ATL"}, {"u_destination_BOS", "u_destination_BOS"}, {"log_tau_destination", "log_tau_destination"}} {
		if !strings.Contains(r.stdout, want[0]+" ") {
			t.Errorf("the summary has no row %q:\n%s", want[0], r.stdout)
		}
		if !slices.Contains(names, want[1]) {
			t.Errorf("the Stan CSV has no column %q: %q", want[1], names)
		}
	}
	// 2 fixed effects, 12 origins, 12 destinations, 1 scale and its
	// natural-scale column sd_destination__Intercept (none for origin).
	if len(names) != 2+12+12+1+1 || slices.Contains(names, "log_tau_origin") || slices.Contains(names, "sd_origin__Intercept") {
		t.Errorf("%d parameters, want 28 and no log_tau_origin or sd_origin__Intercept: %q", len(names), names)
	}
	base := []string{"sample", "--data", flights, "--response", "delay>15", "--warmup", "20", "--draws", "20", "--quiet"}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--terms", "cat(origin;sd=0)"}, "want sd=S with S a finite number > 0"},
		{[]string{"--terms", "cat(origin;sd=1;top=3)"}, "TopK and Reference do not apply"},
		{[]string{"--terms", "cat(origin;sd=1)", "--tau-prior", "half-normal:1"}, "no random effect"},
		{[]string{"--terms", "cat(origin;sd=1),(1|origin)"}, `both group by "origin"`},
	} {
		wantError(t, cli(t, dir, append(slices.Clone(base), c.extra...)...), exitBadInput, c.want)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOrdinalFamily runs --family ordinal (and its alias cumulative) on
// ratings 1..4 drawn from a cumulative logit model with cutpoints
// (−1, 0.5, 2) on the original scale of a covariate of mean 3: flat, the
// Intercept[k] rows in the summary (as R shows the files' Intercept.k),
// each cutpoint's interval covering its truth; with a random intercept,
// the sd_ row beside them; and the refusals (a text response, a response
// outside 1..K).
func TestOrdinalFamily(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(12, 13))
	cut := []float64{-1, 0.5, 2}
	var b strings.Builder
	b.WriteString("y,x,g,label\n")
	for i := range 800 {
		x := 3 + 2*rng.NormFloat64()
		g := i % 6
		eta := 0.6 * x
		u := rng.Float64()
		z := eta + math.Log(u/(1-u))
		y := 1
		for _, c := range cut {
			if c+0.6*3 < z { // the cutpoints of the centred covariate, shifted
				y++
			}
		}
		b.WriteString(strconv.Itoa(y) + "," + strconv.FormatFloat(x, 'g', -1, 64) + ",g" + strconv.Itoa(g) + ",L" + strconv.Itoa(y) + "\n")
	}
	path := filepath.Join(dir, "ord.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "sample", "--data", path, "--family", "ordinal", "--formula", "y ~ x",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--out", "flat")
	lines := strings.Split(r.stdout, "\n")
	for _, row := range []string{"x ", "cut_1 ", "log_cut_diff_3 ", "Intercept[1] ", "Intercept[3] "} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), row) }) {
			t.Errorf("flat: no %q row in the summary:\n%s", row, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "cutpoints: student_t(3, 0, 2.5)") {
		t.Errorf("flat: the summary does not state the cutpoints' prior:\n%s", r.stdout)
	}
	// The cutpoints on the original scale: x enters as 0.6·x, so
	// P(y ≤ k) = F(c_k + 1.8 − 0.6·x); Intercept[k] estimates c_k + 1.8.
	for k, c := range cut {
		var draws []float64
		for ch := 1; ch <= 2; ch++ {
			col, err := readCSV(t, filepath.Join(dir, "flat_"+strconv.Itoa(ch)+".csv")).Column("Intercept." + strconv.Itoa(k+1))
			if err != nil {
				t.Fatal(err)
			}
			draws = append(draws, col...)
		}
		slices.Sort(draws)
		lo, hi := draws[len(draws)/200], draws[len(draws)-1-len(draws)/200]
		t.Logf("Intercept[%d]: 99%% interval [%.3f, %.3f], truth %.3f", k+1, lo, hi, c+1.8)
		if !(lo < c+1.8 && c+1.8 < hi) {
			t.Errorf("Intercept[%d]: 99%% interval [%.3f, %.3f] misses %.3f", k+1, lo, hi, c+1.8)
		}
	}
	r = mustRun(t, dir, "sample", "--data", path, "--family", "cumulative", "--formula", "y ~ x + (1 | g)",
		"--chains", "2", "--warmup", "200", "--draws", "300", "--seed", "3", "--out", "ml")
	lines = strings.Split(r.stdout, "\n")
	for _, row := range []string{"sd_g__Intercept ", "Intercept[1] ", "Intercept[3] "} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), row) }) {
			t.Errorf("multilevel: no %q row in the summary:\n%s", row, r.stdout)
		}
	}
	for _, c := range []struct{ formula, want string }{
		{"label ~ x", "code its levels as the integers"},
		{"x ~ cat(g)", "needs the categories 1, 2, …, K"},
	} {
		r := cli(t, dir, "sample", "--data", path, "--family", "ordinal", "--formula", c.formula, "--draws", "10", "--out", "bad")
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--formula %q: exit %d, stderr %q, want an error saying %q", c.formula, r.code, r.stderr, c.want)
		}
	}
}

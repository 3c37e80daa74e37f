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

// writeGaussianCSV writes n rows y = 1 + 2·x1 − 0.5·x2 + sd·ε, with a
// grouping column g of 5 levels, to dir/g.csv and returns its path.
func writeGaussianCSV(t *testing.T, dir string, n int, sd float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 1))
	var b strings.Builder
	b.WriteString("y,x1,x2,g\n")
	for i := range n {
		x1, x2 := rng.NormFloat64(), 2*rng.NormFloat64()
		y := 1 + 2*x1 - 0.5*x2 + sd*rng.NormFloat64()
		b.WriteString(strconv.FormatFloat(y, 'g', -1, 64) + "," + strconv.FormatFloat(x1, 'g', -1, 64) + "," +
			strconv.FormatFloat(x2, 'g', -1, 64) + ",g" + strconv.Itoa(i%5) + "\n")
	}
	path := filepath.Join(dir, "g.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGaussianSigmaEstimated runs exactmh sample --family gaussian
// without --sigma on data whose residual sd is 1.3: σ is estimated
// (log_sigma in the files, sigma in the summary), the automatic default
// takes NUTS on the sufficient statistics, and σ's 95% interval covers
// 1.3 (with σ fixed at 1, as --family gaussian once silently did, the
// coefficients' intervals are 1.3 times too narrow). --sigma 1 fixes σ
// (no log_sigma), and a multilevel gaussian model without --sigma is
// refused with an error that says why.
func TestGaussianSigmaEstimated(t *testing.T) {
	dir := t.TempDir()
	path := writeGaussianCSV(t, dir, 2000, 1.3)
	r := mustRun(t, dir, "sample", "--data", path, "--family", "gaussian", "--response", "y", "--terms", "x1,x2",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--out", "g")
	if !strings.Contains(r.stdout, "sufficient statistics") {
		t.Errorf("the choice does not say it reads sufficient statistics:\n%s", r.stdout)
	}
	if !slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "sigma ") }) {
		t.Errorf("no sigma row in the summary:\n%s", r.stdout)
	}
	var sigma []float64
	for k := 1; k <= 2; k++ {
		f := readCSV(t, filepath.Join(dir, "g_"+strconv.Itoa(k)+".csv"))
		ls, err := f.Column("log_sigma")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range ls {
			sigma = append(sigma, math.Exp(v))
		}
	}
	slices.Sort(sigma)
	lo, hi := sigma[len(sigma)*25/1000], sigma[len(sigma)*975/1000]
	t.Logf("σ: 95%% interval [%.4f, %.4f] from %d draws", lo, hi, len(sigma))
	if !(lo < 1.3 && 1.3 < hi) {
		t.Errorf("σ's 95%% interval [%.4f, %.4f] does not cover the residual sd 1.3", lo, hi)
	}

	r = mustRun(t, dir, "sample", "--data", path, "--family", "gaussian", "--sigma", "1", "--response", "y", "--terms", "x1,x2",
		"--chains", "1", "--warmup", "100", "--draws", "100", "--quiet", "--out", "f")
	if f := readCSV(t, filepath.Join(dir, "f_1.csv")); slices.Contains(f.ParamNames(), "log_sigma") {
		t.Errorf("--sigma 1: σ sampled (%v)", f.ParamNames())
	}

	r = cli(t, dir, "sample", "--data", path, "--family", "gaussian", "--response", "y", "--terms", "x1,(1|g)",
		"--chains", "1", "--warmup", "10", "--draws", "10", "--quiet", "--out", "m")
	if r.code == 0 || !strings.Contains(r.stderr, "--sigma") {
		t.Errorf("a multilevel gaussian model without --sigma: exit %d, %q; want an error naming --sigma", r.code, r.stderr)
	}
	r = cli(t, dir, "sample", "--data", path, "--family", "gaussian", "--sigma", "0", "--response", "y", "--out", "z")
	if r.code == 0 || !strings.Contains(r.stderr, "sigma") {
		t.Errorf("--sigma 0: exit %d, %q; want an error", r.code, r.stderr)
	}
}

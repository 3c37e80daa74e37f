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

// writeGaussianCSV writes n rows y = 1 + 2·x1 − 0.5·x2 + u_g + sd·ε,
// with a grouping column g of 5 levels whose effects u_g are tau times
// −2, −1, 0, 1, 2, to dir/name and returns its path.
func writeGaussianCSV(t *testing.T, dir, name string, n int, sd, tau float64) string {
	t.Helper()
	return writeGroupedCSV(t, dir, name, n, tau, func(rng *rand.Rand) float64 { return sd * rng.NormFloat64() })
}

// writeGroupedCSV is writeGaussianCSV with the noise ε_i = noise(rng).
func writeGroupedCSV(t *testing.T, dir, name string, n int, tau float64, noise func(*rand.Rand) float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, 1))
	var b strings.Builder
	b.WriteString("y,x1,x2,g\n")
	for i := range n {
		x1, x2 := rng.NormFloat64(), 2*rng.NormFloat64()
		y := 1 + 2*x1 - 0.5*x2 + tau*float64(i%5-2) + noise(rng)
		b.WriteString(strconv.FormatFloat(y, 'g', -1, 64) + "," + strconv.FormatFloat(x1, 'g', -1, 64) + "," +
			strconv.FormatFloat(x2, 'g', -1, 64) + ",g" + strconv.Itoa(i%5) + "\n")
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// studentTNoise returns sd·t₄: a N(0, 1) over √(χ²₄/4).
func studentTNoise(rng *rand.Rand, sd float64) float64 {
	var chi2 float64
	for range 4 {
		z := rng.NormFloat64()
		chi2 += z * z
	}
	return sd * rng.NormFloat64() / math.Sqrt(chi2/4)
}

// binomial draws a Binomial(n, p) count as n Bernoulli trials.
func binomial(rng *rand.Rand, n int, p float64) int {
	k := 0
	for range n {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}

// negBinomial draws an NB2 count of mean mu and shape phi (variance
// μ + μ²/φ): a Gamma(φ, φ/μ) rate by Marsaglia–Tsang (valid for φ ≥ 1), then
// a Poisson count of that rate by Knuth's product of uniforms.
func negBinomial(rng *rand.Rand, mu, phi float64) int {
	d := phi - 1.0/3
	c := 1 / math.Sqrt(9*d)
	var lam float64
	for {
		z := rng.NormFloat64()
		v := math.Pow(1+c*z, 3)
		if v > 0 && math.Log(rng.Float64()) < z*z/2+d-d*v+d*math.Log(v) {
			lam = d * v * mu / phi
			break
		}
	}
	k, p := 0, rng.Float64()
	for l := math.Exp(-lam); p > l; p *= rng.Float64() {
		k++
	}
	return k
}

// sigmaInterval returns the 2.5% and 97.5% quantiles of e^{log_sigma}
// in the files PREFIX_1.csv, PREFIX_2.csv of dir.
func sigmaInterval(t *testing.T, dir, prefix string) (lo, hi float64) {
	t.Helper()
	var sigma []float64
	for k := 1; k <= 2; k++ {
		ls, err := readCSV(t, filepath.Join(dir, prefix+"_"+strconv.Itoa(k)+".csv")).Column("log_sigma")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range ls {
			sigma = append(sigma, math.Exp(v))
		}
	}
	slices.Sort(sigma)
	return sigma[len(sigma)*25/1000], sigma[len(sigma)*975/1000]
}

// TestGaussianSigmaEstimated runs exactmh sample --family gaussian
// without --sigma on data whose residual sd is 1.3: σ is estimated
// (log_sigma in the files, sigma in the summary), the automatic default
// takes NUTS on the sufficient statistics, and σ's 95% interval covers
// 1.3 (with σ fixed at 1, as --family gaussian once silently did, the
// coefficients' intervals are 1.3 times too narrow). --sigma 1 fixes σ
// (no log_sigma); with a random intercept per group σ is estimated too
// (per-group sufficient statistics, model.SparseGaussianRegression,
// sampled by GroupGibbs's exact Gibbs sweep) and its interval covers 1.3.
func TestGaussianSigmaEstimated(t *testing.T) {
	dir := t.TempDir()
	path := writeGaussianCSV(t, dir, "g.csv", 2000, 1.3, 0)
	r := mustRun(t, dir, "sample", "--data", path, "--family", "gaussian", "--response", "y", "--terms", "x1,x2",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--out", "g")
	if !strings.Contains(r.stdout, "sufficient statistics") {
		t.Errorf("the choice does not say it reads sufficient statistics:\n%s", r.stdout)
	}
	if !slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "sigma ") }) {
		t.Errorf("no sigma row in the summary:\n%s", r.stdout)
	}
	// The scale line: a flat model's log_sigma after the coefficients is
	// no random effect, in sample's table and in summary's of the files.
	s := mustRun(t, dir, "summary", "g_1.csv", "g_2.csv")
	for _, out := range []string{r.stdout, s.stdout} {
		if strings.Contains(out, "random effects") || !strings.Contains(out, "on the original scale") {
			t.Errorf("flat model: the scale line speaks of random effects or not of the original scale:\n%s", out)
		}
	}
	lo, hi := sigmaInterval(t, dir, "g")
	t.Logf("σ: 95%% interval [%.4f, %.4f]", lo, hi)
	if !(lo < 1.3 && 1.3 < hi) {
		t.Errorf("σ's 95%% interval [%.4f, %.4f] does not cover the residual sd 1.3", lo, hi)
	}

	r = mustRun(t, dir, "sample", "--data", path, "--family", "gaussian", "--sigma", "1", "--response", "y", "--terms", "x1,x2",
		"--chains", "1", "--warmup", "100", "--draws", "100", "--quiet", "--out", "f")
	if f := readCSV(t, filepath.Join(dir, "f_1.csv")); slices.Contains(f.ParamNames(), "log_sigma") {
		t.Errorf("--sigma 1: σ sampled (%v)", f.ParamNames())
	}

	ml := writeGaussianCSV(t, dir, "m.csv", 2000, 1.3, 0.7)
	r = mustRun(t, dir, "sample", "--data", ml, "--family", "gaussian", "--response", "y", "--terms", "x1,x2,(1|g)",
		"--chains", "2", "--warmup", "500", "--draws", "1000", "--seed", "3", "--out", "m")
	if !strings.Contains(r.stdout, "sufficient statistics") || !strings.Contains(r.stdout, "GroupGibbs") {
		t.Errorf("multilevel: the choice is not GroupGibbs on the sufficient statistics:\n%s", r.stdout)
	}
	s = mustRun(t, dir, "summary", "m_1.csv", "m_2.csv")
	for _, out := range []string{r.stdout, s.stdout} {
		if !strings.Contains(out, "random effects as sampled") {
			t.Errorf("multilevel: the scale line does not say the random effects stay as sampled:\n%s", out)
		}
	}
	lo, hi = sigmaInterval(t, dir, "m")
	t.Logf("multilevel σ: 95%% interval [%.4f, %.4f]", lo, hi)
	if !(lo < 1.3 && 1.3 < hi) {
		t.Errorf("multilevel: σ's 95%% interval [%.4f, %.4f] does not cover the residual sd 1.3", lo, hi)
	}
	r = cli(t, dir, "sample", "--data", path, "--family", "gaussian", "--sigma", "0", "--response", "y", "--out", "z")
	if r.code == 0 || !strings.Contains(r.stderr, "sigma") {
		t.Errorf("--sigma 0: exit %d, %q; want an error", r.code, r.stderr)
	}
}

// TestBinomialTrials runs exactmh sample --family binomial --trials n on
// k-of-n data (N = 3000, 1–15 trials, logit P = σ(−0.3 + 0.8·x)), flat
// (the groups as fixed effects) and with a random intercept per group,
// and checks that the slope's posterior mean is within 3.5 posterior sds
// of 0.8; --family binomial without
// --trials, and successes above the trials, are errors naming the flag
// and the row.
func TestBinomialTrials(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("k,n,x,g\n")
	for i := range 3000 {
		x := rng.NormFloat64()
		n := 1 + rng.IntN(15)
		k := binomial(rng, n, 1/(1+math.Exp(-(-0.3+0.8*x+0.3*float64(i%3-1)))))
		b.WriteString(strconv.Itoa(k) + "," + strconv.Itoa(n) + "," + strconv.FormatFloat(x, 'g', -1, 64) + ",g" + strconv.Itoa(i%3) + "\n")
	}
	path := filepath.Join(dir, "b.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, terms := range []string{"x,cat(g)", "x,(1|g)"} {
		mustRun(t, dir, "sample", "--data", path, "--family", "binomial", "--trials", "n", "--response", "k", "--terms", terms,
			"--no-standardize", "--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--quiet", "--out", "b")
		var xs []float64
		for k := 1; k <= 2; k++ {
			col, err := readCSV(t, filepath.Join(dir, "b_"+strconv.Itoa(k)+".csv")).Column("x")
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, col...)
		}
		var m, v float64
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			v += (x - m) * (x - m)
		}
		sd := math.Sqrt(v / float64(len(xs)))
		t.Logf("--terms %s: slope %.4f ± %.4f (posterior mean ± sd), truth 0.8: %.2f sd off", terms, m, sd, (m-0.8)/sd)
		if !(math.Abs(m-0.8) < 3.5*sd) {
			t.Errorf("--terms %s: slope %.4f ± %.4f, more than 3.5 sd from the truth 0.8", terms, m, sd)
		}
	}
	r := cli(t, dir, "sample", "--data", path, "--family", "binomial", "--response", "k", "--terms", "x", "--out", "e")
	if r.code == 0 || !strings.Contains(r.stderr, "--trials") {
		t.Errorf("--family binomial without --trials: exit %d, %q", r.code, r.stderr)
	}
	r = cli(t, dir, "sample", "--data", path, "--family", "binomial", "--trials", "k", "--response", "n", "--terms", "x", "--out", "e")
	if r.code == 0 || !strings.Contains(r.stderr, "data row") {
		t.Errorf("successes above the trials: exit %d, %q", r.code, r.stderr)
	}
}

// TestNegBinomialShape runs exactmh sample --family negbinomial --offset
// on NB2 counts (N = 1500, shape 2.5, log-exposure offsets) and checks
// that the shape is estimated (log_shape in the files, shape in the
// summary) and its posterior mean within 3.5 posterior sds of 2.5; then
// the same with a correlated random intercept and slope, (1+x|g): the
// default's GroupGibbs negative binomial sweep, shape, sd_ and cor_ rows
// in the summary, log_shape in the files.
func TestNegBinomialShape(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 9))
	var b strings.Builder
	b.WriteString("y,x,expo,g\n")
	const phi = 2.5
	for i := range 1500 {
		x, off := rng.NormFloat64(), math.Log(0.5+1.5*rng.Float64())
		k := negBinomial(rng, math.Exp(off+0.5+0.6*x), phi)
		b.WriteString(strconv.Itoa(k) + "," + strconv.FormatFloat(x, 'g', -1, 64) + "," + strconv.FormatFloat(off, 'g', -1, 64) + ",g" + strconv.Itoa(i%4) + "\n")
	}
	path := filepath.Join(dir, "nb.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "sample", "--data", path, "--family", "negbinomial", "--offset", "expo", "--response", "y", "--terms", "x",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--out", "nb")
	if !slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "shape ") }) {
		t.Errorf("no shape row in the summary:\n%s", r.stdout)
	}
	var shape []float64
	for k := 1; k <= 2; k++ {
		col, err := readCSV(t, filepath.Join(dir, "nb_"+strconv.Itoa(k)+".csv")).Column("log_shape")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range col {
			shape = append(shape, math.Exp(v))
		}
	}
	var m, v float64
	for _, s := range shape {
		m += s
	}
	m /= float64(len(shape))
	for _, s := range shape {
		v += (s - m) * (s - m)
	}
	sd := math.Sqrt(v / float64(len(shape)))
	t.Logf("shape %.3f ± %.3f (posterior mean ± sd), truth 2.5", m, sd)
	if !(math.Abs(m-phi) < 3.5*sd) {
		t.Errorf("shape %.3f ± %.3f, more than 3.5 sd from 2.5", m, sd)
	}
	// With a correlated random intercept and slope: the default's
	// negative binomial sweep (GroupGibbs), shape and sd_ rows reported.
	r = mustRun(t, dir, "sample", "--data", path, "--family", "negbinomial", "--offset", "expo", "--response", "y", "--terms", "x,(1+x|g)",
		"--chains", "2", "--warmup", "200", "--draws", "500", "--seed", "3", "--out", "ml")
	lines := strings.Split(r.stdout, "\n")
	for _, row := range []string{"shape ", "sd_g__Intercept ", "cor_g__Intercept__x "} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), row) }) {
			t.Errorf("multilevel: no %q row in the summary:\n%s", row, r.stdout)
		}
	}
	if !strings.Contains(r.stdout+r.stderr, "GroupGibbs") {
		t.Errorf("multilevel: the default did not choose GroupGibbs:\n%s\n%s", r.stdout, r.stderr)
	}
	shape = shape[:0]
	for k := 1; k <= 2; k++ {
		col, err := readCSV(t, filepath.Join(dir, "ml_"+strconv.Itoa(k)+".csv")).Column("log_shape")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range col {
			shape = append(shape, math.Exp(v))
		}
	}
	m, v = 0, 0
	for _, s := range shape {
		m += s
	}
	m /= float64(len(shape))
	for _, s := range shape {
		v += (s - m) * (s - m)
	}
	sd = math.Sqrt(v / float64(len(shape)))
	t.Logf("multilevel: shape %.3f ± %.3f, truth 2.5", m, sd)
	if !(math.Abs(m-phi) < 3.5*sd) {
		t.Errorf("multilevel: shape %.3f ± %.3f, more than 3.5 sd from 2.5", m, sd)
	}
}

// TestStudentTSigmaEstimated runs exactmh sample --family studentt
// without --sigma on y = 1 + 2·x + 1.5·t₄ (N = 1500): σ is estimated
// (log_sigma in the files) and its posterior mean lies within 3.5
// posterior sds of 1.5. With a random intercept per group (N = 1500,
// 5 groups, σ = 1.3, model.NewStudentTMultilevel) σ is estimated too:
// log_sigma in the files, sigma in the summary, its 95% interval
// covering 1.3.
func TestStudentTSigmaEstimated(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(10, 11))
	var b strings.Builder
	b.WriteString("y,x\n")
	for range 1500 {
		x := rng.NormFloat64()
		y := 1 + 2*x + studentTNoise(rng, 1.5)
		b.WriteString(strconv.FormatFloat(y, 'g', -1, 64) + "," + strconv.FormatFloat(x, 'g', -1, 64) + "\n")
	}
	path := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "sample", "--data", path, "--family", "studentt", "--nu", "4", "--response", "y", "--terms", "x",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--quiet", "--out", "t")
	var s []float64
	for k := 1; k <= 2; k++ {
		col, err := readCSV(t, filepath.Join(dir, "t_"+strconv.Itoa(k)+".csv")).Column("log_sigma")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range col {
			s = append(s, math.Exp(v))
		}
	}
	var m, v float64
	for _, x := range s {
		m += x
	}
	m /= float64(len(s))
	for _, x := range s {
		v += (x - m) * (x - m)
	}
	sd := math.Sqrt(v / float64(len(s)))
	t.Logf("σ %.3f ± %.3f (posterior mean ± sd), truth 1.5", m, sd)
	if !(math.Abs(m-1.5) < 3.5*sd) {
		t.Errorf("σ %.3f ± %.3f, more than 3.5 sd from 1.5", m, sd)
	}

	ml := writeGroupedCSV(t, dir, "m.csv", 1500, 0.7, func(rng *rand.Rand) float64 { return studentTNoise(rng, 1.3) })
	r := mustRun(t, dir, "sample", "--data", ml, "--family", "studentt", "--response", "y", "--terms", "x1,x2,(1|g)",
		"--chains", "2", "--warmup", "300", "--draws", "1000", "--seed", "3", "--out", "m")
	if !slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "sigma ") }) {
		t.Errorf("multilevel: no sigma row in the summary:\n%s", r.stdout)
	}
	if names := readCSV(t, filepath.Join(dir, "m_1.csv")).ParamNames(); !slices.Contains(names, "log_tau_g") || !slices.Contains(names, "u_g_g0") {
		t.Errorf("multilevel: columns %q, want u_g_g0 and log_tau_g", names)
	}
	lo, hi := sigmaInterval(t, dir, "m")
	t.Logf("multilevel σ: 95%% interval [%.4f, %.4f]", lo, hi)
	if !(lo < 1.3 && 1.3 < hi) {
		t.Errorf("multilevel: σ's 95%% interval [%.4f, %.4f] does not cover 1.3", lo, hi)
	}
}

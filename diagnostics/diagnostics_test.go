// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/exactmh/exactmh/diagnostics"
)

// fixture is one golden-value case computed by R's posterior 1.4.0 and
// coda 0.19-4 (testdata/README.md, copied from
// ../shared/fixtures/diagnostics). A null expected value is R's NA.
type fixture struct {
	Name     string                     `json:"name"`
	Chains   [][]float64                `json:"chains"`
	Expected map[string]json.RawMessage `json:"expected"`
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no diagnostics fixtures in testdata (err %v)", err)
	}
	var out []fixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx fixture
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, fx)
	}
	return out
}

// number decodes a fixture value: a number, or null → NaN.
func number(t *testing.T, raw json.RawMessage) float64 {
	t.Helper()
	var v *float64
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return math.NaN()
	}
	return *v
}

func numbers(t *testing.T, raw json.RawMessage) []float64 {
	t.Helper()
	var vs []*float64
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

// same reports whether got matches want to tol relative (absolute near 0),
// with NaN matching only NaN.
func same(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestDiagnosticsMatchPosterior(t *testing.T) {
	const tol = 1e-8
	scalar := map[string]func(x [][]float64) float64{
		"ess_bulk":          diagnostics.ESSBulk,
		"ess_tail":          diagnostics.ESSTail,
		"ess_basic":         diagnostics.ESSBasic,
		"ess_mean":          diagnostics.ESSBasic,
		"ess_quantile_q5":   func(x [][]float64) float64 { return diagnostics.ESSQuantile(x, 0.05) },
		"ess_quantile_q95":  func(x [][]float64) float64 { return diagnostics.ESSQuantile(x, 0.95) },
		"rhat":              diagnostics.RHat,
		"rhat_basic":        diagnostics.RHatBasic,
		"rhat_bulk":         diagnostics.RHatBulk,
		"rhat_tail":         diagnostics.RHatTail,
		"mcse_mean":         diagnostics.MCSEMean,
		"mcse_quantile_q5":  func(x [][]float64) float64 { return diagnostics.MCSEQuantile(x, 0.05) },
		"mcse_quantile_q95": func(x [][]float64) float64 { return diagnostics.MCSEQuantile(x, 0.95) },
		"coda_effective_size_concat": func(x [][]float64) float64 {
			var all []float64
			for _, c := range x {
				all = append(all, c...)
			}
			return diagnostics.ESSCoda(all)
		},
		"coda_effective_size_mcmc_list": func(x [][]float64) float64 {
			s := 0.0
			for _, c := range x {
				s += diagnostics.ESSCoda(c)
			}
			return s
		},
	}
	checked := 0
	for _, fx := range loadFixtures(t) {
		for field, raw := range fx.Expected {
			switch field {
			case "autocorrelation_chain1":
				want := numbers(t, raw)
				got := diagnostics.Autocorrelation(fx.Chains[0])
				for k, w := range want {
					// Values near 0: absolute tolerance (FFT rounding).
					if !same(got[k], w, tol) {
						t.Errorf("%s: autocorrelation lag %d = %.17g, want %.17g", fx.Name, k, got[k], w)
					}
				}
			case "coda_effective_size_per_chain":
				want := numbers(t, raw)
				for j, w := range want {
					if got := diagnostics.ESSCoda(fx.Chains[j]); !same(got, w, tol) {
						t.Errorf("%s: coda ESS of chain %d = %.17g, want %.17g", fx.Name, j, got, w)
					}
				}
			default:
				f, ok := scalar[field]
				if !ok {
					t.Errorf("%s: fixture field %q has no check", fx.Name, field)
					continue
				}
				want := number(t, raw)
				if got := f(fx.Chains); !same(got, want, tol) {
					t.Errorf("%s: %s = %.17g, want %.17g", fx.Name, field, got, want)
				}
			}
			checked++
		}
	}
	if checked < 7*16 {
		t.Errorf("only %d fixture values checked", checked)
	}
}

func TestDiagnosticsBadInput(t *testing.T) {
	nan := math.NaN()
	cases := map[string][][]float64{
		"empty":    nil,
		"no draws": {{}},
		"ragged":   {{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3}},
		"NaN":      {{1, 2, nan, 4, 5, 6, 7, 8}},
		"Inf":      {{1, 2, math.Inf(1), 4, 5, 6, 7, 8}},
		"constant": {{3, 3, 3, 3, 3, 3, 3, 3}},
		"tiny":     {{1e-17, 2e-17, 3e-17, 1e-17, 2e-17, 3e-17, 1e-17, 2e-17}},
	}
	for name, x := range cases {
		if diagnostics.Usable(x) {
			t.Errorf("Usable(%s) = true", name)
		}
		for fname, f := range map[string]func([][]float64) float64{
			"ESSBulk": diagnostics.ESSBulk, "ESSTail": diagnostics.ESSTail, "ESSBasic": diagnostics.ESSBasic,
			"RHat": diagnostics.RHat, "RHatBasic": diagnostics.RHatBasic, "MCSEMean": diagnostics.MCSEMean,
			"MCSEQuantile": func(x [][]float64) float64 { return diagnostics.MCSEQuantile(x, 0.5) },
		} {
			if got := f(x); !math.IsNaN(got) {
				t.Errorf("%s(%s) = %g, want NaN", fname, name, got)
			}
		}
	}
	if !diagnostics.Usable([][]float64{{1, 2, 3}, {3, 2, 1}}) {
		t.Error("Usable of two regular chains = false")
	}
	if got := diagnostics.ESSQuantile([][]float64{{1, 2, 3, 4, 5, 6, 7, 8}}, 1.5); !math.IsNaN(got) {
		t.Errorf("ESSQuantile with p = 1.5 = %g, want NaN", got)
	}
	if got := diagnostics.Autocorrelation(nil); len(got) != 0 {
		t.Errorf("Autocorrelation(nil) = %v", got)
	}
}

// The FFT autocovariance equals the direct O(n²) biased sum.
func TestAutocovarianceDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{2, 3, 7, 64, 101, 997} {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() + 0.3*float64(i%5)
		}
		mean := 0.0
		for _, v := range x {
			mean += v / float64(n)
		}
		got := diagnostics.Autocovariance(x)
		for k := 0; k < n; k++ {
			want := 0.0
			for i := 0; i+k < n; i++ {
				want += (x[i] - mean) * (x[i+k] - mean)
			}
			want /= float64(n)
			if math.Abs(got[k]-want) > 1e-12 {
				t.Fatalf("n=%d lag %d: %g, direct %g", n, k, got[k], want)
			}
		}
	}
}

func TestQuantileType7(t *testing.T) {
	x := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {1, 5}, {0.5, 3}, {0.1, 1.4}, {0.95, 4.8}} {
		if got := diagnostics.Quantile(x, c.p); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("Quantile(%g) = %g, want %g", c.p, got, c.want)
		}
	}
	if x[0] != 5 {
		t.Error("Quantile modified its input")
	}
	if !math.IsNaN(diagnostics.Quantile(nil, 0.5)) || !math.IsNaN(diagnostics.Quantile(x, -0.1)) {
		t.Error("Quantile of empty input or bad p is not NaN")
	}
}

func TestAccuracyMeasures(t *testing.T) {
	if got := diagnostics.TotalVariation([]float64{1, 1, 0, 0}, []float64{0, 0, 2, 2}); got != 1 {
		t.Errorf("TV of disjoint = %g, want 1", got)
	}
	// Counts and probabilities are both accepted: normalization by the sum.
	if got := diagnostics.TotalVariation([]float64{10, 30}, []float64{0.5, 0.5}); math.Abs(got-0.25) > 1e-15 {
		t.Errorf("TV = %g, want 0.25", got)
	}
	p, q := []float64{0.2, 0.8}, []float64{0.5, 0.5}
	want := 0.5 * (0.2*math.Log(0.2/0.5) + 0.8*math.Log(0.8/0.5) + 0.5*math.Log(0.5/0.2) + 0.5*math.Log(0.5/0.8))
	if got := diagnostics.SymmetricKL(p, q, 1e-13); math.Abs(got-want) > 1e-14 {
		t.Errorf("SymmetricKL = %g, want %g", got, want)
	}
	if got := diagnostics.SymmetricKL(p, p, 1e-13); got != 0 {
		t.Errorf("SymmetricKL(p, p) = %g", got)
	}
	if got := diagnostics.SymmetricKL([]float64{1, 0}, []float64{0, 1}, 1e-13); math.IsInf(got, 0) || math.IsNaN(got) || got < 20 {
		t.Errorf("SymmetricKL of disjoint histograms = %g, want large and finite", got)
	}
	if got := diagnostics.MSE([]float64{1, 2}, []float64{0, 0}); got != 2.5 {
		t.Errorf("MSE = %g", got)
	}
	for name, v := range map[string]float64{
		"TV lengths":  diagnostics.TotalVariation([]float64{1}, []float64{1, 2}),
		"TV negative": diagnostics.TotalVariation([]float64{-1, 2}, []float64{1, 2}),
		"TV zero sum": diagnostics.TotalVariation([]float64{0, 0}, []float64{1, 2}),
		"KL eps":      diagnostics.SymmetricKL(p, q, 0),
		"MSE empty":   diagnostics.MSE(nil, nil),
	} {
		if !math.IsNaN(v) {
			t.Errorf("%s: %g, want NaN", name, v)
		}
	}
}

// TestSummarizeIsTheSeparateCalls checks Summarize against the functions it
// combines, bit for bit (or NaN where they are), on every fixture (constant,
// short, odd-length and disagreeing chains among them), on a ragged input
// and on no draws.
func TestSummarizeIsTheSeparateCalls(t *testing.T) {
	inputs := map[string][][]float64{
		"ragged": {{1, 2, 3}, {1, 2}},
		"empty":  {},
	}
	for _, fx := range loadFixtures(t) {
		inputs[fx.Name] = fx.Chains
	}
	r := rand.New(rand.NewPCG(3, 4))
	long := make([][]float64, 2)
	for j := range long {
		long[j] = make([]float64, 100001)
		v := 0.0
		for i := range long[j] {
			v = 0.95*v + r.NormFloat64()
			long[j][i] = v
		}
	}
	inputs["long ar0.95"] = long
	// Even lengths, whose halves Summarize ranks from its one sort: ties,
	// ±0 and a chain stuck at the median among them.
	even := make([][]float64, 4)
	for j := range even {
		even[j] = make([]float64, 1000)
		for i := range even[j] {
			switch j {
			case 0:
				even[j][i] = r.NormFloat64()
			case 1:
				even[j][i] = math.Round(2*r.NormFloat64()) / 2
				if even[j][i] == 0 && i%2 == 0 {
					even[j][i] = math.Copysign(0, -1)
				}
			case 2:
				even[j][i] = 0
				if i%7 == 0 {
					even[j][i] = r.NormFloat64()
				}
			case 3:
				even[j][i] = 1 + r.NormFloat64()
			}
		}
	}
	inputs["even, ties and ±0"] = even
	inputs["even continuous"] = [][]float64{long[0][:5000], long[1][:5000]}
	for name, x := range inputs {
		var all []float64
		for _, c := range x {
			all = append(all, c...)
		}
		got := diagnostics.Summarize(x)
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"Q5", got.Q5, diagnostics.Quantile(all, 0.05)},
			{"Q50", got.Q50, diagnostics.Quantile(all, 0.5)},
			{"Q95", got.Q95, diagnostics.Quantile(all, 0.95)},
			{"MCSEMean", got.MCSEMean, diagnostics.MCSEMean(x)},
			{"ESSBulk", got.ESSBulk, diagnostics.ESSBulk(x)},
			{"ESSTail", got.ESSTail, diagnostics.ESSTail(x)},
			{"RHat", got.RHat, diagnostics.RHat(x)},
		} {
			if c.got != c.want && !(math.IsNaN(c.got) && math.IsNaN(c.want)) {
				t.Errorf("%s: Summarize's %s = %.17g, the separate call %.17g", name, c.what, c.got, c.want)
			}
		}
	}
}

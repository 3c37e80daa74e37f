// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// essOld is ess as it reads without load: every chain's meanOf and
// sampleVar recomputed by each step, the direct sums at 8, then 32, then
// 128 lags, the FFT past them. The reference TestESSRHatMatchOld checks
// ess against.
func essOld(x [][]float64) float64 {
	m, n := len(x), len(x[0])
	if n < 3 || !Usable(x) {
		return math.NaN()
	}
	var acov []float64
	for lags := 8; ; lags *= 4 {
		if lags < n && lags <= 128 {
			acov = directOld(x, lags)
		} else {
			acov = make([]float64, n)
			for _, c := range x {
				for k, a := range Autocovariance(c) {
					acov[k] += a / float64(m)
				}
			}
		}
		if v, ok := geyerOld(x, acov); ok {
			return v
		}
	}
}

// geyerOld is geyerESS with the chain means computed from x.
func geyerOld(x [][]float64, acov []float64) (float64, bool) {
	means := make([]float64, len(x))
	for j, c := range x {
		means[j] = meanOf(c)
	}
	sc := &scratch{cmean: means}
	return sc.geyerESS(x, acov)
}

// directOld is directAutocovariance one lag at a time from each chain's
// own meanOf and sampleVar (directAutocovarianceByLag).
func directOld(x [][]float64, lags int) []float64 { return directAutocovarianceByLag(x, lags) }

// rhatOld is rhat from each chain's meanOf and sampleVar.
func rhatOld(x [][]float64) float64 {
	m, n := len(x), len(x[0])
	if m < 2 || n < 2 || !Usable(x) {
		return math.NaN()
	}
	means := make([]float64, m)
	w := 0.0
	for j, c := range x {
		means[j] = meanOf(c)
		w += sampleVar(c) / float64(m)
	}
	b := float64(n) * sampleVar(means)
	return math.Sqrt((b/w + float64(n) - 1) / float64(n))
}

// oldInput returns m chains of n draws: AR(1) chains at φ from −0.6 to
// 0.999 (Geyer's sequence ending within 8, 32 or 128 lags, or past them),
// or summarizerInput's kinds (ties, ±0, tiny values, constant chains, NaN,
// ±Inf), or draws whose sum overflows.
func oldInput(r *rand.Rand, m, n int) [][]float64 {
	switch k := r.IntN(12); {
	case k < 8:
		return summarizerInput(r, k, m, n)
	case k == 8:
		x := ar1(m, n, 0.5, 0, r.Uint64())
		x[0][0] = 1.5e308
		x[m-1][n-1] = 1.6e308
		return x
	default:
		phi := []float64{-0.6, 0.9, 0.97, 0.999}[k-9+r.IntN(2)]
		return ar1(m, n, phi, r.Float64(), r.Uint64())
	}
}

// TestESSRHatMatchOld checks ess, rhat and essRHat, which take every
// chain's moments from one load and step the direct sums eight lags at a
// time, against essOld and rhatOld bit for bit, on split chains of odd and
// even lengths from 1 to 5001, with one scratch reused across shapes. The
// mutants essMutant 1 (direct sums where the FFT gives the figure) and 2
// (a chain's sum in another order) must be caught.
func TestESSRHatMatchOld(t *testing.T) {
	trials := 3000
	if testing.Short() {
		trials = 600
	}
	run := func(trials int) (mismatch, compared int, first string) {
		r := rand.New(rand.NewPCG(21, 22))
		var sc scratch
		for trial := range trials {
			m := 1 + r.IntN(6)
			n := []int{1, 2, 3, 5, 8, 17, 21, 33, 40, 63, 65, 100, 257, 1000, 1001, 2 + r.IntN(3000)}[trial%16]
			if trial%97 == 0 {
				n = 5001
			}
			x := split(oldInput(r, m, n))
			wantE, wantR := essOld(x), rhatOld(x)
			gotE, gotR := sc.essRHat(x)
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"ess", sc.ess(x), wantE}, {"rhat", sc.rhat(x), wantR},
				{"essRHat's ess", gotE, wantE}, {"essRHat's rhat", gotR, wantR},
			} {
				compared++
				if math.Float64bits(c.got) != math.Float64bits(c.want) && !(math.IsNaN(c.got) && math.IsNaN(c.want)) {
					if mismatch == 0 {
						first = fmt.Sprintf("%s: trial %d, %d split chains × %d: %.17g, old %.17g", c.what, trial, len(x), len(x[0]), c.got, c.want)
					}
					mismatch++
				}
			}
		}
		return mismatch, compared, first
	}
	if bad, n, first := run(trials); bad > 0 {
		t.Fatalf("%d of %d figures differ from the old ess and rhat; first %s", bad, n, first)
	}
	for _, mut := range []int{1, 2} {
		essMutant = mut
		bad, n, _ := run(min(trials, 600))
		essMutant = 0
		if bad == 0 {
			t.Errorf("mutant %d: all %d figures equal the old ones, want some caught", mut, n)
		} else {
			t.Logf("mutant %d caught: %d of %d figures differ", mut, bad, n)
		}
	}
}

// TestLoadIsMeanVar checks load's moments and centred draws against
// meanOf, sampleVar and x − meanOf bit for bit, and its verdict against
// Usable, for one to nine chains (the four-at-a-time loop and the rest).
func TestLoadIsMeanVar(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	var sc scratch
	for trial := range 400 {
		m, n := 1+r.IntN(9), 1+r.IntN(300)
		x := oldInput(r, m, n)
		ok := sc.load(x)
		if ok != Usable(x) {
			t.Fatalf("trial %d: load says %t, Usable %t", trial, ok, Usable(x))
		}
		if !ok {
			continue
		}
		for j, c := range x {
			mu, v := meanOf(c), sampleVar(c)
			if math.Float64bits(sc.cmean[j]) != math.Float64bits(mu) || math.Float64bits(sc.cvar[j]) != math.Float64bits(v) {
				t.Fatalf("trial %d chain %d: load's mean %.17g var %.17g, meanOf %.17g sampleVar %.17g", trial, j, sc.cmean[j], sc.cvar[j], mu, v)
			}
			for i, xi := range c {
				if math.Float64bits(sc.cen[j*n+i]) != math.Float64bits(xi-mu) {
					t.Fatalf("trial %d chain %d draw %d: centred %.17g, want %.17g", trial, j, i, sc.cen[j*n+i], xi-mu)
				}
			}
		}
	}
}

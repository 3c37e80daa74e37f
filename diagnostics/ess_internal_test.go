// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1 returns m chains of n draws of x_t = φ x_{t−1} + ε_t, each chain
// shifted by shift·j.
func ar1(m, n int, phi, shift float64, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([][]float64, m)
	for j := range x {
		x[j] = make([]float64, n)
		v := r.NormFloat64()
		for t := range x[j] {
			v = phi*v + r.NormFloat64()
			x[j][t] = v + shift*float64(j)
		}
	}
	return x
}

// TestDirectLagsMatchFFT checks ess's direct autocovariance against the
// FFT path it replaces (maxDirectLags = 0 forces the FFT): the same ESS to
// rounding on chains whose Geyer sequence ends inside 8, 32 or 128 lags or
// past them, on lengths not a multiple of four, and on a constant chain
// beside varying ones.
func TestDirectLagsMatchFFT(t *testing.T) {
	constant := ar1(3, 1001, 0.5, 0, 9)
	for t := range constant[1] {
		constant[1][t] = 2
	}
	cases := map[string][][]float64{
		"antithetic":   ar1(4, 1000, -0.6, 0, 1),
		"iid":          ar1(4, 1003, 0, 0, 2),
		"ar0.5":        ar1(2, 20001, 0.5, 0, 3),
		"ar0.9":        ar1(4, 5000, 0.9, 0, 4),
		"ar0.97":       ar1(2, 5002, 0.97, 0, 5),
		"ar0.999":      ar1(2, 3001, 0.999, 0, 6),
		"disagreeing":  ar1(4, 2000, 0.8, 3, 8),
		"short":        ar1(2, 9, 0.3, 0, 10),
		"one constant": constant,
	}
	for name, x := range cases {
		sx := split(x)
		got := ess(sx)
		saved := maxDirectLags
		maxDirectLags = 0
		want := ess(sx)
		maxDirectLags = saved
		if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("%s: direct lags give ESS %.15g, FFT %.15g", name, got, want)
		}
		if name == "ar0.5" && !(got > 0.25*float64(len(x)*len(x[0])) && got < 0.4*float64(len(x)*len(x[0]))) {
			t.Errorf("%s: ESS %.1f of %d draws, want about a third", name, got, len(x)*len(x[0]))
		}
	}
	// Every lag agrees with Autocovariance's, the last terms of the longer
	// lags included.
	x := split(ar1(2, 4001, 0.97, 0, 11))
	acov := loaded(x).directAutocovariance(x, 0, 32)
	full := make([]float64, len(x[0]))
	for _, c := range x {
		for k, a := range Autocovariance(c) {
			full[k] += a / float64(len(x))
		}
	}
	for k, a := range acov {
		if math.Abs(a-full[k]) > 1e-12*full[0] {
			t.Errorf("lag %d: direct %.15g, FFT %.15g", k, a, full[k])
		}
	}
}

// loaded returns a scratch holding x's moments, as ess and rhat load them.
func loaded(x [][]float64) *scratch {
	sc := new(scratch)
	sc.load(x)
	return sc
}

// directAutocovarianceByLag is directAutocovariance one lag at a time:
// the reference TestDirectLagsGrouping checks its grouped sums against.
func directAutocovarianceByLag(x [][]float64, lags int) []float64 {
	m, n := len(x), len(x[0])
	acov := make([]float64, lags)
	centred := make([]float64, n)
	for _, c := range x {
		v := sampleVar(c)
		if v == 0 {
			continue
		}
		mean := meanOf(c)
		for t, xt := range c {
			centred[t] = xt - mean
		}
		acov[0] += v * float64(n-1) / float64(n) / float64(m)
		for k := 1; k < lags; k++ {
			s := 0.0
			for t := 0; t+k < n; t++ {
				s += centred[t] * centred[t+k]
			}
			acov[k] += s / float64(n) / float64(m)
		}
	}
	return acov
}

// TestDirectLagsGrouping checks that directAutocovariance, which sums
// eight lags in one pass, gives every lag bit for bit as summed alone, at
// lag counts and chain lengths that leave partial groups and short tails,
// summed at once or extending the sums of fewer lags.
func TestDirectLagsGrouping(t *testing.T) {
	for _, n := range []int{4, 9, 10, 17, 100, 501, 1000} {
		x := ar1(3, n, 0.8, 0.5, uint64(n))
		for _, lags := range []int{2, 7, 8, 9, 16, 31, 32, 128} {
			if lags >= n {
				continue
			}
			want := directAutocovarianceByLag(x, lags)
			// At once, and extending a first call at fewer lags as ess does.
			sc := loaded(x)
			sc.directAutocovariance(x, 0, lags/2)
			for from, got := range map[int][]float64{0: loaded(x).directAutocovariance(x, 0, lags), lags / 2: sc.directAutocovariance(x, lags/2, lags)} {
				for k := range want {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("n %d, %d lags from %d: lag %d = %.17g, summed alone %.17g", n, lags, from, k, got[k], want[k])
					}
				}
			}
		}
	}
}

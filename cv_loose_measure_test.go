// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var cvLoose = flag.Bool("cvloose", false, "run TestControlVariatesLoosenessMeasure, which measures how far the remainders' DiffBound is above each datum's own Taylor bound and above the remainders")

// TestControlVariatesLoosenessMeasure measures, on examples/tall's
// Student-t regressions (ν = 4, x_i ~ N(0, I_d), y_i = Σ_jx_ij + ε_i,
// N = 10⁵, flat prior) at d = 10 and 100, for pairs θ ~ the Laplace
// approximation and θ′ its Crank–Nicolson move with ρ = 0.9 and 0.99, at
// each order of ControlVariates:
//
//   - C·M: the DiffBound's total, what TunaMH's and TFMH's batches scale with;
//   - own: Σ_iK_i·m(|t_a|, |t_b|, |t_a − t_b|) with t = x_iᵀθ − ẑ_i, the
//     same Taylor bound in each datum's own direction (remainderDiff's
//     limit, cubicLimit at third order): what the DiffBound would be if
//     the Cauchy–Schwarz step |x_iᵀv| ≤ s_i‖v‖_H were an equality;
//   - |ΔR|: Σ_i|R_i(θ) − R_i(θ′)|, the remainders themselves.
//
// It checks that own ≤ C·M on every pair (Cauchy–Schwarz) and |ΔR| ≤ own
// (the bound holds), and logs the mean ratios (cvPairs).
// A measurement: run it with
//
//	go test -run TestControlVariatesLoosenessMeasure -cvloose -v -timeout 30m .
func TestControlVariatesLoosenessMeasure(t *testing.T) {
	if !*cvLoose {
		t.Skip("a measurement: run with -cvloose")
	}
	const n, pairs = 100000, 40
	for _, d := range []int{10, 100} {
		rng := rand.New(rand.NewPCG(1, uint64(d)))
		x, y := make([]float64, n*d), make([]float64, n)
		for i := range n {
			var s float64
			for j := range d {
				v := rng.NormFloat64()
				x[i*d+j] = v
				s += v
			}
			y[i] = s + rng.NormFloat64()
		}
		g, err := NewStudentTRegression(x, y, d, 4)
		if err != nil {
			t.Fatal(err)
		}
		p := &Posterior{Energy: g}
		la, err := FindLaplace(context.Background(), p, make([]float64, d), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []cvCubicMode{cvCubicNever, cvCubicAlways} {
			cv, err := controlVariates(p, la, mode, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			e := cv.Energy.(*cvEnergy)
			dr := make([]float64, n)
			for _, rho := range []float64{0.9, 0.99} {
				st, err := cvPairs(e, la, rng, rho, pairs, dr)
				if err != nil {
					t.Fatalf("d = %d: %v", d, err)
				}
				sumCM, rOwn, rAct := st.cm, st.cmOverOwn, st.cmOverAct
				order := 2
				if e.cuber != nil {
					order = 3
				}
				t.Logf("d = %3d, order %d, ρ = %.2f: mean C·M = %9.4g, C·M / own-direction = %7.1f, C·M / Σ|ΔR_i| = %8.1f",
					d, order, rho, sumCM, rOwn, rAct)
			}
		}
	}
}

// laDraw writes a draw θ̂ + Lz, z ~ N(0, I), of la into dst.
func laDraw(la *LaplaceApprox, rng *rand.Rand, dst, z []float64) {
	for j := range z {
		z[j] = rng.NormFloat64()
	}
	d := len(dst)
	for a := range d {
		var s float64
		for b := 0; b <= a; b++ {
			s += la.CovChol.At(a, b) * z[b]
		}
		dst[a] = la.Mean[a] + s
	}
}

// cvPairStats are cvPairs' means over its pairs.
type cvPairStats struct {
	cm, own, act         float64 // C·M, the own-direction bound, Σ|ΔR_i|
	cmOverOwn, cmOverAct float64 // the means of the per-pair ratios
}

// cvPairs draws pairs θ ~ la, θ′ its Crank–Nicolson move with ρ, and
// returns the means of the remainders' DiffBound total C·M, of the same
// Taylor bound in each datum's own direction (cubicLimit at third order,
// remainderDiff's limit at second) and of Σ_i|R_i(θ) − R_i(θ′)| over all
// the data, with dr as scratch (length N). An own-direction bound above
// C·M (Cauchy–Schwarz broken) or remainders above it (the bound broken)
// is an error.
func cvPairs(e *cvEnergy, la *LaplaceApprox, rng *rand.Rand, rho float64, pairs int, dr []float64) (cvPairStats, error) {
	b := e.sharedDiffBound()
	cs := b.Sum()
	d, n := len(la.Mean), len(dr)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	th, thn, z := make([]float64, d), make([]float64, d), make([]float64, d)
	var st cvPairStats
	for range pairs {
		laDraw(la, rng, th, z)
		laDraw(la, rng, thn, z)
		for j := range thn {
			thn[j] = la.Mean[j] + rho*(th[j]-la.Mean[j]) + math.Sqrt(1-rho*rho)*(thn[j]-la.Mean[j])
		}
		cm := cs * b.M(th, thn)
		var own, act float64
		e.EnergyDiffs(dr, th, thn, idx)
		for i := range n {
			tt := e.taylor(i)
			ta, tb := e.rowDot(i, th)-tt.zHat, e.rowDot(i, thn)-tt.zHat
			aa, ab := math.Abs(ta), math.Abs(tb)
			if e.cuber != nil {
				own += cubicLimit(e.bound3(i), ta, tb)
			} else {
				// remainderDiff's limit.
				own += e.bound3(i) * min((aa*aa*aa+ab*ab*ab)/6, max(aa, ab)*max(aa, ab)*math.Abs(ta-tb)/2)
			}
			act += math.Abs(dr[i])
		}
		if own > cm*(1+1e-9) {
			return st, fmt.Errorf("ρ = %.3g: Σ own-direction bounds %v > C·M = %v", rho, own, cm)
		}
		if act > own*(1+1e-9) {
			return st, fmt.Errorf("ρ = %.3g: Σ|ΔR_i| = %v above the own-direction bounds %v", rho, act, own)
		}
		st.cm += cm / float64(pairs)
		st.own += own / float64(pairs)
		st.act += act / float64(pairs)
		st.cmOverOwn += cm / own / float64(pairs)
		st.cmOverAct += cm / act / float64(pairs)
	}
	return st, nil
}

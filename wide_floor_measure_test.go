// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/exactmh/exactmh/internal/testgen"
)

var wideFloor = flag.Bool("widefloor", false, "run TestWideFloorMeasure, which measures the rows a minibatch transition must read on examples/defaultrows' wide logistic rows and the CPU a row costs")

// TestWideFloorMeasure measures the floor of every exact minibatch kernel
// with data-free per-datum bounds on examples/defaultrows' logreg_d200 and
// logreg_d500 (testgen.WideLogistic with the rows' seeds, N = 10⁵, flat
// prior, second-order control variates at the Laplace approximation's
// mode). For pairs θ ~ the Laplace approximation and θ′ its Crank–Nicolson
// move with ρ = 0 (the independence limit, where the default's chains
// settle), e⁻³, e⁻¹ and 0.9 it logs
//
//   - C·M: the remainders' DiffBound total. TunaMH reads C·M + χC²M² data
//     a transition (eq. 2 of the TunaMH paper), TFMH and PoissonMH about
//     C·M, and by Theorem 3 of that paper any stateless exact minibatch
//     MH that knows the data only through such bounds must read
//     ζκ(C²M² + CM) to keep a fixed fraction κ of MH's spectral gap;
//   - own: the same Taylor bound taken in each datum's own direction
//     (what C·M would be if |x_iᵀv| ≤ s_i‖v‖_H were an equality: a
//     bound no kernel can sum or sample from without reading x_i);
//   - |ΔR|: Σ_i|R_i(θ) − R_i(θ′)|, the remainders themselves;
//
// and the CPU of one datum's energy difference, read in a full pass (rows
// in memory order, the fastest a row can be read) and gathered at random
// (C·M rows at ρ = 0, as a minibatch transition reads them). C·M times the
// first is a floor on a transition's CPU for kernels of this kind up to
// Theorem 3's constant; figures/bench/wide_floor.txt turns it into
// min bulk ESS per CPU-second. Timings are logged, never asserted; the
// test asserts own ≤ C·M on every pair (Cauchy–Schwarz) and that both are
// at least |ΔR| (the bounds hold). A measurement: run it with
//
//	go test -run TestWideFloorMeasure -widefloor -v -timeout 30m .
func TestWideFloorMeasure(t *testing.T) {
	if !*wideFloor {
		t.Skip("a measurement: run with -widefloor")
	}
	const n, pairs, seed = 100000, 20, 1
	for _, d := range []int{200, 500} {
		// examples/defaultrows' wideRow: PCG(seed, len("logreg_d200")).
		x, y := testgen.WideLogistic(rand.New(rand.NewPCG(seed, uint64(len("logreg_d200")))), n, d)
		g, err := NewLogisticRegression(x, y, d)
		if err != nil {
			t.Fatal(err)
		}
		p := &Posterior{Energy: g}
		la, err := FindLaplace(context.Background(), p, make([]float64, d), nil)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := controlVariates(p, la, cvCubicNever, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := cv.Energy.(*cvEnergy)
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		dr := make([]float64, n)
		rng := rand.New(rand.NewPCG(2, uint64(d)))
		var cm0 float64
		for _, rho := range []float64{0, math.Exp(-3), math.Exp(-1), 0.9} {
			st, err := cvPairs(e, la, rng, rho, pairs, dr)
			if err != nil {
				t.Fatalf("d = %d: %v", d, err)
			}
			if rho == 0 {
				cm0 = st.cm
			}
			t.Logf("d = %d, ρ = %.4f: mean C·M = %9.4g data (%.3g of N), own-direction %8.4g, Σ|ΔR_i| %8.4g; C·M / own %6.1f",
				d, rho, st.cm, st.cm/n, st.own, st.act, st.cm/st.own)
		}

		// A datum's energy difference: in a full pass, then gathered.
		th, thn, z := make([]float64, d), make([]float64, d), make([]float64, d)
		laDraw(la, rng, th, z)
		laDraw(la, rng, thn, z)
		const reps = 20
		start := time.Now()
		for range reps {
			e.EnergyDiffs(dr, th, thn, all)
		}
		seq := time.Since(start).Seconds() / (reps * n)
		k := min(n, max(1, int(math.Round(cm0))))
		idx := make([]int, k)
		start = time.Now()
		var gathered int
		for gathered < reps*n {
			for j := range idx {
				idx[j] = rng.IntN(n)
			}
			e.EnergyDiffs(dr[:k], th, thn, idx)
			gathered += k
		}
		gat := time.Since(start).Seconds() / float64(gathered)
		// The same gathers with each call's indices in memory order.
		start = time.Now()
		gathered = 0
		for gathered < reps*n {
			for j := range idx {
				idx[j] = rng.IntN(n)
			}
			slices.Sort(idx)
			e.EnergyDiffs(dr[:k], th, thn, idx)
			gathered += k
		}
		sorted := time.Since(start).Seconds() / float64(gathered)
		t.Logf("d = %d: a datum's energy difference %.0f ns in a full pass, %.0f ns gathered at random %d a call (%.0f ns with each call's indices sorted, the sort included); C·M at ρ = 0 costs ≥ %.3g ms a transition (full-pass rate), %.3g ms (gathered)",
			d, seq*1e9, gat*1e9, k, sorted*1e9, cm0*seq*1e3, cm0*gat*1e3)
	}
}

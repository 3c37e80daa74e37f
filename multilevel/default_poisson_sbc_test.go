// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/exactmh/exactmh"
)

// TestDefaultPoissonMultilevelSBC is simulation-based calibration of the
// automatic default (Sample with a nil Kernel: Choose, then its kernel
// from its inits, warmup included) on small multilevel Poisson data sets
// with small counts — mlPoisKit{n: 60, groups: 6, off: −1.5}: rates e^{−1.5}
// times the exposure and the effects, mostly zeros and ones, where a
// leapfrog step that overshoots sends e^η past the float range — every
// parameter unknown (β, u, log τ). Each of the 100 replicates draws θ*
// from the prior and data given θ*, runs one chain of the default (200
// warmup transitions, 380 draws, every 20th kept: L = 19) and ranks θ*
// among the kept draws. Every replicate must complete (issue 44: the
// default errored with an EnergyError on 7 of 100 such data sets), and
// the ranks must be uniform at Bonferroni level 10⁻³ over the 9
// coordinates. Not -short: 100 default runs.
func TestDefaultPoissonMultilevelSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 runs of the automatic default")
	}
	const (
		reps, draws, thin, bins = 100, 19, 20, 10
	)
	kit := mlPoisKit{n: 60, groups: 6, off: -1.5}
	d := kit.dim()
	counts := make([][]int, d)
	for j := range counts {
		counts[j] = make([]int, bins)
	}
	chosen := map[string]int{}
	var divergent int
	for rep := range reps {
		rng := rand.New(rand.NewPCG(44, uint64(rep)))
		theta := make([]float64, d)
		theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64() // the prior, FixedSD 1
		tau := math.Abs(rng.NormFloat64())
		for g := range kit.groups {
			theta[2+g] = tau * rng.NormFloat64()
		}
		theta[d-1] = math.Log(tau)
		p, err := kit.build(rng, theta)
		if err != nil {
			t.Fatal(err)
		}
		res, err := exactmh.Sample(context.Background(), p, nil, &exactmh.Settings{Chains: 1, Warmup: 200, Draws: draws * thin, Seed: uint64(rep)})
		if err != nil {
			t.Fatalf("replicate %d (θ* %.3g): the default failed: %v", rep, theta, err)
		}
		chosen[res.Choice.Name]++
		divergent += res.Sampling().Divergent
		for j := range d {
			var less, ties int
			for k := thin - 1; k < draws*thin; k += thin {
				switch v := res.Draw(0, k)[j]; {
				case v < theta[j]:
					less++
				case v == theta[j]:
					ties++
				}
			}
			rank := less + rng.IntN(ties+1)
			counts[j][rank*bins/(draws+1)]++
		}
	}
	want := float64(reps) / bins
	minP := 1.0
	for j := range d {
		var chi2 float64
		for _, c := range counts[j] {
			chi2 += (float64(c) - want) * (float64(c) - want) / want
		}
		pv := distuv.ChiSquared{K: bins - 1}.Survival(chi2)
		minP = math.Min(minP, pv)
		t.Logf("θ%d ranks %v χ² = %.1f p = %.3g", j, counts[j], chi2, pv)
	}
	t.Logf("kernels chosen %v; %d divergent transitions in %d", chosen, divergent, reps*draws*thin)
	if minP < 1e-3/float64(d) {
		t.Errorf("the default's ranks are not uniform: min p = %.3g over %d coordinates", minP, d)
	}
}

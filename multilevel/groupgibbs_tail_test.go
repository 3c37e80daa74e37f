// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupGibbsTail checks the block proposals' Student-t component
// (GroupGibbs.TailMix, groupgibbs_tail.go) on 30 small groups (N = 400,
// about 7 data a group, group 0's 200; τ unknown): GroupGibbs with a
// mixture weight of 0.3 agrees with GroupGibbs's Gaussian proposals (the
// kernel TestGroupGibbsMoments and TestGroupGibbsSBC prove), 4 × 3000
// draws each — every mean within 4.5 combined Monte Carlo standard
// errors, every SD ratio in [0.85, 1.18] ([0.7, 1.4] for the log scales)
// — and the mixture with its log q ratio dropped (GroupGibbsTailNoQ, at a
// weight of 0.9 so that its law dominates the updates) is caught (some
// |z| > 6 or SD ratio outside [0.7, 1.4]). It also checks that a weight
// outside [0, 1) is an error.
func TestGroupGibbsTail(t *testing.T) {
	if testing.Short() {
		t.Skip("GroupGibbs runs of 4 chains")
	}
	kit := mlKit{n: 400, groups: 30}
	rng := rand.New(rand.NewPCG(17, 18))
	d := 2 + 2*kit.groups + 2
	theta := make([]float64, d)
	theta[0], theta[1] = 0.5, 1
	for g := range kit.groups {
		theta[2+2*g], theta[3+2*g] = 1.5*rng.NormFloat64(), 0.7*rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(1.5), math.Log(0.7)
	p, err := kit.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	center, sd, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	pb := mcmctest.Problem{Posterior: p, Mode: center, SD: sd}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		k := gibbsKernel(pb, 0)
		k.TailMix = bad
		if _, err := exactmh.Sample(t.Context(), p, k, &exactmh.Settings{Chains: 1, Draws: 1, Init: center}); err == nil {
			t.Errorf("TailMix = %v: no error", bad)
		}
	}
	ref, err := exactmh.Sample(t.Context(), p, gibbsKernel(pb, 0), &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 7, Init: center})
	if err != nil {
		t.Fatal(err)
	}
	rs := ref.Summary()
	tk := gibbsKernel(pb, 0)
	tk.TailMix = 0.3
	z, zn, lr, ln, res := gibbsMoments(t, p, tk, rs, center, 3000)
	t.Logf("TailMix 0.3 against the Gaussian proposals: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); min bulk ESS %.0f (Gaussian %.0f); %v",
		z, zn, lr, ln, minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("TailMix 0.3 disagrees with the Gaussian proposals: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	mk := gibbsKernel(pb, 0)
	mk.TailMix = 0.9
	z, zn, lr, ln, _ = gibbsMoments(t, p, multilevel.GroupGibbsTailNoQ(mk), rs, center, 2000)
	reportMutant(t, "small groups", "tail mixture without its log q ratio", math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
}

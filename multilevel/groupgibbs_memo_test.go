// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
)

// memoKernel is the small-N GroupGibbs's sweep (every block read exactly,
// the data-free moves repeated, shears, conditional scale moves) with the
// Newton proposal and joint rescaling moves: every update that reads data
// exactly through the memo.
func memoKernel(center []float64, n int) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: center, ExactBelow: n + 1, FreeRepeats: 3, TailMix: multilevel.DefaultTailMix,
		Shear: 1, ShearEvery: multilevel.DefaultShearEvery, ShearMaxRatio: multilevel.DefaultShearMaxRatio, CondScale: true,
		FixedNewton: true, NewtonEvery: 1, JointScale: 2}
}

// TestGroupGibbsMemoSameDraws checks that the per-datum memo of the
// losses and expansions (groupgibbs_memo.go) leaves GroupGibbs's draws
// the same bit for bit on the probit jointScaleProblem design (300 data,
// 2 nested terms), that its sweep allocates nothing and survives
// checkpoints, and that a memo not keyed on the linear predictor (the
// mutant GroupGibbsMemoStale) changes the draws: caught.
func TestGroupGibbsMemoSameDraws(t *testing.T) {
	m := mlNested{n: 300, k: 4, l: 30, sdD: 1, probit: true}
	rng := rand.New(rand.NewPCG(53, 54))
	theta := m.drawTheta(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	k := memoKernel(center, p.Len())
	draws := func(k exactmh.Kernel) []float64 {
		t.Helper()
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 200, Seed: 3, Init: center})
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, c := range res.Chains {
			out = append(out, c.Draws...)
		}
		return out
	}
	same := func(a, b []float64) bool {
		if len(a) != len(b) || len(a) == 0 {
			return false
		}
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				return false
			}
		}
		return true
	}
	on, off := draws(k), draws(multilevel.GroupGibbsMemoOff(k))
	if !same(on, off) {
		t.Errorf("the draws with the memo differ from those without it")
	}
	if same(draws(multilevel.GroupGibbsMemoStale(k)), off) {
		t.Errorf("mutant not caught: a memo not keyed on the linear predictor left the draws unchanged")
	}
	checkStructural(t, "GroupGibbs with the memo", k, p, center, 200)
}

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

// condScaleKernel is movesKernel with the conditional scale moves on.
func condScaleKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	k := movesKernel(pb)
	k.CondScale = true
	return k
}

// TestGroupGibbsCondScaleStructural checks the sweep with the conditional
// scale moves (as the automatic default's Newton re-pilot sets them, and
// alone) allocates nothing, reports its Info and survives checkpoints and
// any number of workers.
func TestGroupGibbsCondScaleStructural(t *testing.T) {
	pb := kitProblem(t)
	asDefault := condScaleKernel(pb)
	asDefault.FixedNewton, asDefault.NewtonEvery, asDefault.FreeRepeats = true, multilevel.DefaultNewtonEvery, multilevel.DefaultFreeRepeats
	for _, k := range []multilevel.GroupGibbs{condScaleKernel(pb), asDefault, multilevel.GroupGibbsCondScaleOnly(movesKernel(pb))} {
		checkStructural(t, "GroupGibbs with conditional scale moves", k, pb.Posterior, pb.Mode, 500)
	}
}

// TestGroupGibbsCondScaleMoments compares GroupGibbs with the conditional
// scale moves against non-centred NUTS (4 × 1500 draws) on mlNested with
// 40 lecturers of about 10 data each (τ²·h near 1, where the map differs
// most from both the centred and the non-centred update and σ(τ) varies
// most) in 4 departments: with every other update of τ, and as τ's only
// update (GroupGibbsCondScaleOnly) — every mean within 4.5 combined
// Monte Carlo standard errors, every sd ratio in [0.85, 1.18] ([0.7, 1.4]
// for the log scales) — and requires each mutant, tested where the move is
// τ's only update, to be caught (|z| > 6 or an sd ratio outside [0.7,
// 1.4], [0.5, 2] for the log scales): the move without its Jacobian
// Π_j √(P_j/P′_j), and without its proposal ratio N(−λ; 0, σ′²)/N(λ; 0, σ²).
func TestGroupGibbsCondScaleMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and GroupGibbs runs of 4 chains")
	}
	m := mlNested{n: 400, k: 4, l: 40, sdD: 1}
	rng := rand.New(rand.NewPCG(43, 44))
	theta := m.at(rng, [3]float64{0.2, 0.8, -0.6}, 0.3, 0.8)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 1500)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	for name, k := range map[string]multilevel.GroupGibbs{
		"with the other moves": condScaleKernel(pb),
		"alone":                multilevel.GroupGibbsCondScaleOnly(movesKernel(pb)),
	} {
		z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, mode, 3000)
		t.Logf("%s: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
			name, z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
		if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
			t.Errorf("%s: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", name, z, zn, lr, ln)
		}
	}
	alone := multilevel.GroupGibbsCondScaleOnly(movesKernel(pb))
	for name, k := range map[string]exactmh.Kernel{
		"conditional scale move without its Jacobian":           multilevel.GroupGibbsCondScaleNoJacobian(alone),
		"conditional scale move whose map T_−λ does not invert": multilevel.GroupGibbsCondScaleOwnB(alone),
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, k, rs, mode, 2000)
		reportMutant(t, "mlNested, 40 lecturers", name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	}
}

// TestGroupGibbsCondScaleSBC runs simulation-based calibration with τ
// unknown on mlNested (as TestGroupGibbsMovesSBC's, departments' scale
// often near zero) with the conditional scale moves as the log scales'
// only update, every coordinate.
func TestGroupGibbsCondScaleSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlNested{n: 200, k: 3, l: 6, sdD: 0.3}, func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.GroupGibbsCondScaleOnly(movesKernel(pb))
	}, 13)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// cnKernel is GroupGibbs around the problem's mode with its fixed blocks
// moved by Crank–Nicolson (FixedRho 0.9, 10 updates a sweep).
func cnKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: pb.Mode, FixedRho: 0.9, FixedRepeats: 10}
}

// TestGroupGibbsFixedCNStructural runs the kit's structural checks on
// GroupGibbs with the fixed blocks' Crank–Nicolson move, on the kit model
// and on the crossed one with the group partners by class: no allocation
// per sweep, Info's counts, checkpoint and resume, results independent of
// the workers.
func TestGroupGibbsFixedCNStructural(t *testing.T) {
	pb := kitProblem(t)
	checkStructural(t, "GroupGibbs with FixedRho", cnKernel(pb), pb.Posterior, pb.Mode, 500)
	p := mlCrossed{n: 1500, ga: 8, gb: 6}.posteriorAt(t, -0.8, 0.5, [3]float64{0.5, 0.3, 0.5})
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	k := multilevel.GroupGibbsCrossed(cnKernel(mcmctest.Problem{Mode: center}), 1)
	checkStructural(t, "GroupGibbs with FixedRho and classes", k, p, center, 500)
}

// TestGroupGibbsFixedCNMoments compares GroupGibbs with the fixed blocks'
// Crank–Nicolson move (ρ 0.9, 10 updates a sweep; and ρ 0.5, 3) against
// non-centred NUTS (every mean within 4.5 combined Monte Carlo standard
// errors, every sd ratio within e^±log 1.18) on the crossed kit model
// with the group partners by class and on newtonSeparated, whose fixed
// effects are not confounded with the groups, and requires the mutant
// (the innovation unshrunk: the fixed effects' proposal wider than the
// Gaussian its ratio assumes) to be caught there.
func TestGroupGibbsFixedCNMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and GroupGibbs runs of 4 chains")
	}
	bad := func(z, lr float64) bool { return math.Abs(z) > 4.5 || lr > math.Log(1.18) }
	{
		p := mlCrossed{n: 1500, ga: 8, gb: 6}.posteriorAt(t, -0.8, 0.5, [3]float64{0.5, 0.3, 0.5})
		rs, mode, sd := nutsReferenceNonCentred(t, p, 300, 750)
		pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
		k := multilevel.GroupGibbsCrossed(cnKernel(pb), 1)
		z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, mode, 3000)
		t.Logf("crossed: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f, %v",
			z, zn, lr, ln, res.Sampling().MeanBatch(), res.Chains[0].Params)
		if bad(z, lr) {
			t.Errorf("crossed: GroupGibbs with FixedRho disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
		}
	}
	p := newtonSeparated(t)
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 10000)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	half := cnKernel(pb)
	half.FixedRho, half.FixedRepeats = 0.5, 3
	for _, k := range []multilevel.GroupGibbs{cnKernel(pb), half} {
		z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, mode, 10000)
		t.Logf("separated, ρ %g × %d: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); block0_accept %.3f",
			k.FixedRho, k.FixedRepeats, z, zn, lr, ln, res.Chains[0].Params["block0_accept"])
		if bad(z, lr) {
			t.Errorf("separated, ρ %g: GroupGibbs with FixedRho disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", k.FixedRho, z, zn, lr, ln)
		}
	}
	z, zn, lr, ln, _ := gibbsMoments(t, p, multilevel.GroupGibbsFixedRhoBad(cnKernel(pb)), rs, mode, 10000)
	reportMutant(t, "separated", "Crank–Nicolson innovation unshrunk", bad(z, lr), z, zn, lr, ln)
}

// TestGroupGibbsFixedCNSBC runs simulation-based calibration with τ
// unknown on the crossed multilevel logistic regression (N = 300, 4 × 3
// levels, every coordinate) with the fixed blocks' Crank–Nicolson move.
func TestGroupGibbsFixedCNSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlCrossed{n: 300, ga: 4, gb: 3}, func(pb mcmctest.Problem) exactmh.Kernel { return cnKernel(pb) }, 11)
}

// TestFixedRhoFor checks the automatic default's ρ: 1 − ρ = (log 0.3/log
// acc)², within [0.5, 0.99], falling as the independence proposals
// accept more.
func TestFixedRhoFor(t *testing.T) {
	for _, c := range []struct{ acc, want float64 }{
		{0, 0.99}, {1e-9, 0.99}, {4.5 / 301, 1 - math.Pow(math.Log(0.3)/math.Log(4.5/301), 2)}, {0.1, 1 - math.Pow(math.Log(0.3)/math.Log(0.1), 2)}, {0.2, 0.5}, {0.5, 0.5},
	} {
		if got := multilevel.FixedRhoFor(c.acc); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("FixedRhoFor(%g) = %g, want %g", c.acc, got, c.want)
		}
	}
	if r := multilevel.FixedRhoFor(4.5 / 301); !(r > 0.9 && r < 0.95) {
		t.Errorf("FixedRhoFor(4.5/301) = %g, want about 0.92 (the crossed design at N = 10⁶)", r)
	}
}

// TestChooseMultilevelFixedCN checks the automatic default's
// Crank–Nicolson re-pilot: with mlRare's centre moved as in
// TestChooseMultilevelFixedStuck (the plain sweep's fixed block stuck) and
// the move's size threshold lowered to the model's N, the default pilots
// GroupGibbs with FixedRho and, its fixed block above the floor by the
// counted rule of fixedStuck, chooses it without the Newton proposal.
func TestChooseMultilevelFixedCN(t *testing.T) {
	if testing.Short() {
		t.Skip("the automatic default's pilots on mlRare")
	}
	p := mlRare(t)
	p.Energy = noLogit{p.Energy.(*model.SparseGLM[float64])} // the minibatch route's choice, not the Pólya–Gamma sweep
	defer multilevel.SetMultilevelCenterPerturb(func(center, sd []float64) {
		for j := range 3 {
			center[j] += 4.5 * sd[j]
		}
	})()
	defer multilevel.SetCNMinN(p.Len())()
	c, err := exactmh.Choose(context.Background(), p, &exactmh.Settings{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	gk, ok := c.Kernel.(multilevel.GroupGibbs)
	t.Logf("%v; FixedRho %g", c, gk.FixedRho)
	if c.Name != "GroupGibbs" || !ok || !(gk.FixedRho > 0) || gk.FixedNewton || gk.FixedRepeats != 20 {
		t.Errorf("perturbed centre, CN from N = %d: choice %v: want GroupGibbs with FixedRho, 20 repeats, no Newton proposal", p.Len(), c)
	}
}

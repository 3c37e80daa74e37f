// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupGibbsSettles checks GroupGibbs.SettleWarmup, set by the
// automatic default's small-N sweep (TestChooseSmallNested's nested
// Poisson design, N = 400): asked for 1000 warmup sweeps, its chains stop
// warmup after exactmh.MinBurnIn and say so (ChainResult.WarmupStop), make
// every requested draw, and two runs of a seed agree draw for draw; with
// Settings.NoAdapt, and without SettleWarmup, warmup runs all 1000 sweeps;
// a run cancelled one sweep before warmup's end and one after it,
// checkpointed and resumed, makes the uninterrupted run's draws bit for bit
// (mcmctest.CheckCheckpoint with its cut at transition 149, then 151).
// Not short, the draws of the settled kernel — 4 × (150 + 3000), from the
// pilot's mean — agree with non-centred NUTS's on
// TestGroupGibbsPoissonScaleExact's design (every mean within 4.5
// combined Monte Carlo standard errors, every SD ratio in [0.85, 1.18],
// [0.7, 1.4] for the log scales), and its mutants with the scale move's
// or the nested scale move's Jacobian dropped are caught (|z| > 6 or an
// SD ratio outside [0.7, 1.4]).
func TestGroupGibbsSettles(t *testing.T) {
	ctx := context.Background()
	m := mlNestedPois{mlNested{n: 400, k: 4, l: 160, sdD: 0.5}}
	rng := rand.New(rand.NewPCG(45, 46))
	theta := m.at(rng, [3]float64{0.2, 0, 0}, 0.4, 0.5)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(ctx, p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := c.Kernel.(multilevel.GroupGibbs)
	if !ok || !k.SettleWarmup || k.ExactBelow <= p.Len() {
		t.Fatalf("choice %s (%T, %+v): want the small-N GroupGibbs with SettleWarmup", c.Name, c.Kernel, c.Kernel)
	}
	run := func(k exactmh.Kernel, noAdapt bool) *exactmh.Result {
		res, err := exactmh.Sample(ctx, p, k, &exactmh.Settings{Chains: 2, Warmup: 1000, Draws: 60, Seed: 3, Init: c.Center, NoAdapt: noAdapt})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res, again := run(k, false), run(k, false)
	for i, ch := range res.Chains {
		if ch.Warmup.Steps != exactmh.MinBurnIn || ch.WarmupStop == "" || ch.Len() != 60 {
			t.Errorf("chain %d: %d warmup sweeps (want %d), stop %q, %d draws (want 60)", ch.Chain, ch.Warmup.Steps, exactmh.MinBurnIn, ch.WarmupStop, ch.Len())
		}
		if !slices.Equal(ch.Draws, again.Chains[i].Draws) {
			t.Errorf("chain %d: two runs of the same seed differ", i)
		}
	}
	t.Logf("warmup stop: %s", res.Chains[0].WarmupStop)
	plain := k
	plain.SettleWarmup = false
	for what, r := range map[string]*exactmh.Result{"NoAdapt": run(k, true), "without SettleWarmup": run(plain, false)} {
		for _, ch := range r.Chains {
			if ch.Warmup.Steps != 1000 || ch.WarmupStop != "" {
				t.Errorf("%s, chain %d: %d warmup sweeps, stop %q: want 1000 and none", what, ch.Chain, ch.Warmup.Steps, ch.WarmupStop)
			}
		}
	}
	for _, warm := range []int{298, 300} {
		set := exactmh.Settings{Chains: 2, Warmup: warm, Draws: 40, Seed: 7, Init: c.Center}
		if err := mcmctest.CheckCheckpoint(p, k, set); err != nil {
			t.Errorf("Warmup %d, cut at transition %d: %v", warm, warm/2|1, err)
		}
	}
	if testing.Short() {
		t.Skip("the moments: a NUTS reference and GroupGibbs runs of 4 chains")
	}
	mp := mlNestedPois{mlNested{n: 300, k: 3, l: 300, sdD: 0.5}}
	rng = rand.New(rand.NewPCG(43, 44))
	theta = mp.at(rng, [3]float64{0.3, 0.5, -0.3}, 0.3, 0.9)
	p, err = mp.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, _ := nutsReferenceNonCentred(t, p, 500, 3000)
	sk := multilevel.SmallGibbsKernel(mode, p.Len())
	z, zn, lr, ln, res := gibbsMoments(t, p, sk, rs, mode, 3000)
	for _, ch := range res.Chains {
		if ch.Warmup.Steps != exactmh.MinBurnIn {
			t.Errorf("moments run, chain %d: %d warmup sweeps, want %d", ch.Chain, ch.Warmup.Steps, exactmh.MinBurnIn)
		}
	}
	t.Logf("settled small-N GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); min bulk ESS %.0f (NUTS %.0f)",
		z, zn, lr, ln, minESS(res.Summary()), minESS(rs))
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("settled GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	for name, mk := range map[string]exactmh.Kernel{
		"scale move without its Jacobian":        multilevel.GroupGibbsScaleNoJacobian(sk),
		"nested scale move without its Jacobian": multilevel.GroupGibbsNestedNoJacobian(sk),
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, mk, rs, mode, 3000)
		reportMutant(t, "Poisson nested, settled warmup", name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	}
}

// TestGroupGibbsSettlesSBC runs simulation-based calibration of the
// automatic default's small-N GroupGibbs (SmallGibbsKernel: every block
// read exactly, the data-free moves ten times a sweep, its warmup ended at
// exactmh.MinBurnIn of the kit's 500) on TestGroupGibbsPoissonScaleExactSBC's
// design (mlNestedPois, N = 150, 3 departments of 2 lecturers each), every
// coordinate.
func TestGroupGibbsSettlesSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlNestedPois{mlNested{n: 150, k: 3, l: 6, sdD: 0.3}}, func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.SmallGibbsKernel(pb.Mode, pb.Posterior.Len())
	}, 17)
}

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
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupGibbsCubicSBC runs simulation-based calibration with τ unknown
// on a one-factor multilevel logistic regression (N = 300, 10 groups of
// 15 data and one of 150, random intercept and slope) with the fixed
// block's cross-cubic control variate including every group at any
// distance from the centre (its bound at its loosest) and every block's
// data thinned. Its mutants are in TestGroupGibbsMoments.
func TestGroupGibbsCubicSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlKit{n: 300, groups: 10}, func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.GroupGibbsCubicAll(gibbsKernel(pb, -1))
	}, 6)
}

// TestGroupGibbsCubicAccept checks what the cross-cubic control variate
// is for: at G/√N ≈ 2.8 (N = 20,000, 400 groups of 25 data beside one of
// 10,000) the fixed block's acceptance with it is over twice that
// without it, from the same centre and seeds (2 chains × 300 sweeps).
func TestGroupGibbsCubicAccept(t *testing.T) {
	kit := mlKit{n: 20000, groups: 400}
	rng := rand.New(rand.NewPCG(21, 22))
	p, err := kit.build(rng, kit.truth(rng, -1, 0.5, 0.5, 0.25))
	if err != nil {
		t.Fatal(err)
	}
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	acc := func(k multilevel.GroupGibbs) float64 {
		res, err := exactmh.Sample(context.Background(), p, k,
			&exactmh.Settings{Chains: 2, Warmup: 100, Draws: 300, Seed: 3, Init: center})
		if err != nil {
			t.Fatal(err)
		}
		var a float64
		for _, c := range res.Chains {
			a += c.Params["block0_accept"] / 2
		}
		return a
	}
	on := acc(multilevel.GroupGibbs{Center: center})
	off := acc(multilevel.GroupGibbsCubicOff(multilevel.GroupGibbs{Center: center}))
	t.Logf("fixed block's acceptance: %.3f with the cross-cubic control variate, %.3f without", on, off)
	if !(on > 2*off) {
		t.Errorf("fixed block's acceptance %.3f with the cross-cubic control variate, %.3f without: want over twice", on, off)
	}
}

// TestGroupGibbsCubicProbit compares GroupGibbs's means and standard
// deviations with full-batch NUTS's on a one-factor multilevel probit
// regression of small groups (N = 600, 30 groups of 10 data beside one of
// 300; τ unknown), every block's data thinned and the cross-cubic control
// variate including every group at any distance — its bound at its
// loosest, with the probit's f‴ and sup|f⁗| ≤ 0.1890 (a violated bound
// would stop the run with an error): every mean within 4.5 combined MCSEs,
// every sd ratio within [0.85, 1.18] ([0.7, 1.4] for the log scales).
func TestGroupGibbsCubicProbit(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and a GroupGibbs run of 4 chains")
	}
	kit := mlKit{n: 600, groups: 30, probit: true}
	rng := rand.New(rand.NewPCG(31, 32))
	p, err := kit.build(rng, kit.truth(rng, 0.3, 0.8, 0.8, 0.4))
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, sd := nutsReferenceLong(t, p, 1000, 4000)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, multilevel.GroupGibbsCubicAll(gibbsKernel(pb, -1)), rs, mode, 3000)
	t.Logf("probit: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); %v", z, zn, lr, ln, res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("GroupGibbs disagrees with NUTS on the probit model: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
}

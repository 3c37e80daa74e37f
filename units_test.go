// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"testing"

	"github.com/exactmh/exactmh"
)

// Every user-supplied bound is in the untempered energy's units and the
// kernel applies β, as the Target does to energies: an energy's own
// DiffBounder or EnergyRanger bound is right for TunaMH, TFMH and
// PoissonMH at any β. (TunaMH.Bound used to want β·c_i, so the energy's own
// bound was too small by β for β > 1 and the run failed or was biased.)
// The posterior means agree with full MH's within MCSE.
func TestUserBoundsAreUntempered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		n    int
		beta float64
	}{{100, 0.05}, {20, 4}} {
		beta := c.beta
		g := boxed(t, c.n, beta)
		prior := g.Posterior.Prior
		db, err := exactmh.DiffBounder(g.Energy).DiffBound(prior) // the energy's own, untempered
		if err != nil {
			t.Fatal(err)
		}
		r, err := exactmh.EnergyRanger(g.Energy).EnergyRange(prior)
		if err != nil {
			t.Fatal(err)
		}
		set := func(seed uint64) *exactmh.Settings {
			return &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: seed, Init: g.Mean}
		}
		mh, err := exactmh.Sample(ctx, g.Posterior, exactmh.MH{}, set(1))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []exactmh.Kernel{exactmh.TunaMH{Bound: db}, exactmh.PoissonMH{Range: r}} {
			res, err := exactmh.Sample(ctx, g.Posterior, k, set(2))
			if err != nil {
				t.Errorf("β = %g, %s with the energy's own bound: %v", beta, k.Name(), err)
				continue
			}
			postMeanCheck(t, k.Name(), res, mh, 4)
		}
	}
}

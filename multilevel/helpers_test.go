// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// noGrowthPoisson is Poisson regression's loss without the family's
// LossGrowth: f‴ = e^z unbounded on the line and no pair-wise bound, so
// no multilevel kernel has the bound it needs.
type noGrowthPoisson struct{}

func (noGrowthPoisson) Loss(y, z float64) float64 { return model.PoissonFamily{}.Loss(y, z) }
func (noGrowthPoisson) LossDerivs(y, z float64) (f1, f2 float64) {
	return model.PoissonFamily{}.LossDerivs(y, z)
}
func (noGrowthPoisson) LossBound(y float64, k int, lo, hi float64) float64 {
	return model.PoissonFamily{}.LossBound(y, k, lo, hi)
}

// checkStructural runs the kit's structural checks on kernel k over p from
// init, reporting failures under what: no allocation over steps steps
// (mcmctest.AllocsPerStep), its Info (CheckInfo), checkpoints
// (CheckCheckpoint) and any number of workers (CheckWorkers), on 4 chains
// × (100 + 150) draws, thin 2, seed 7.
func checkStructural(t *testing.T, what string, k exactmh.Kernel, p *exactmh.Posterior, init []float64, steps int) {
	t.Helper()
	a, err := mcmctest.AllocsPerStep(k, p, init, steps)
	if err != nil {
		t.Fatal(err)
	}
	if a != 0 {
		t.Errorf("%s allocates %.3g times per step, want 0", what, a)
	}
	set := exactmh.Settings{Chains: 4, Warmup: 100, Draws: 150, Thin: 2, Seed: 7, Init: init}
	if err := mcmctest.CheckInfo(p, k, set, false); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if err := mcmctest.CheckCheckpoint(p, k, set); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if err := mcmctest.CheckWorkers(p, k, set); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

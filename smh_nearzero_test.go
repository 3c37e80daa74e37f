// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// TestSMHNearZeroRow is issue 31 item 18: a logistic regression of 400
// rows whose one covariate is −10⁻⁷ in one row. That datum's energy is
// about log 2 at every θ, so ΔU_i is rounded to about 10⁻¹⁶ while its
// remainder bound c_i·M is about 10⁻²⁴: the Start audit and the step's
// check, whose slack was relative to ΔU_i and the Taylor part, refused a
// correct posterior (SMH-2 from 3 of 5 starts, SMH-1 too). The slack now
// follows the rounding of U_i(θ) and U_i(θ′) themselves.
func TestSMHNearZeroRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 31))
	const n = 400
	x, y := make([]float64, n), make([]float64, n)
	for i := range n {
		x[i] = rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-0.8*x[i])) {
			y[i] = 1
		}
	}
	x[0] = -1e-7
	e, err := model.NewLogisticRegression(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: e}
	m, err := exactmh.FindMAP(context.Background(), post, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []int{1, 2} {
		for seed := range uint64(5) {
			set := &exactmh.Settings{Chains: 1, Warmup: 100, Draws: 200, Seed: seed, Init: []float64{m.Theta[0] + 0.2*rng.NormFloat64()}}
			if _, err := exactmh.Sample(context.Background(), post, exactmh.SMH{Order: order, Center: m.Theta}, set); err != nil {
				t.Errorf("SMH-%d, seed %d: %v", order, seed, err)
			}
		}
	}
}

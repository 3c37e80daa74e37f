// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLossAndDerivBitwise checks that every GLMLossDeriver's LossAndDeriv
// returns bit for bit Loss and LossDerivs's f′ — on a grid of z through
// every branch (the probit's far tail below probitTail, its erfc range,
// t > 0; the Poisson beyond poissonMaxZ; ±Inf, 0 and −0) and at random
// (y, z) — so SparseGLM.EnergiesAndGradient's fused path changes no draw
// (TestGoldenDraws). A mutant that rounds f′ differently (1 − σ(−z) for
// σ(z)) is caught.
func TestLossAndDerivBitwise(t *testing.T) {
	zs := []float64{math.Inf(-1), -800, -40, -13, -12, -11.9, -5, -1, -1e-300, math.Copysign(0, -1), 0, 1e-300, 0.3, 1, 5, 12, 40, 700, 710, 800, math.Inf(1)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		zs = append(zs, 30*rng.NormFloat64())
	}
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
	}
	check := func(name string, fam GLMFamily, ys []float64, fused func(y, z float64) (float64, float64)) int {
		bad := 0
		for _, y := range ys {
			for _, z := range zs {
				f, f1 := fused(y, z)
				wf := fam.Loss(y, z)
				wf1, _ := fam.LossDerivs(y, z)
				if !same(f, wf) || !same(f1, wf1) {
					if bad < 5 {
						t.Logf("%s: y = %v, z = %v: LossAndDeriv (%v, %v), Loss and LossDerivs (%v, %v)", name, y, z, f, f1, wf, wf1)
					}
					bad++
				}
			}
		}
		return bad
	}
	for _, c := range []struct {
		name string
		fam  GLMFamily
		ys   []float64
	}{
		{"poisson", PoissonFamily{}, []float64{0, 1, 3, 57, 1e6}},
		{"logistic", LogisticFamily{}, []float64{0, 1}},
		{"probit", ProbitFamily{}, []float64{0, 1}},
	} {
		fd, ok := c.fam.(GLMLossDeriver)
		if !ok {
			t.Fatalf("%s: not a GLMLossDeriver", c.name)
		}
		if bad := check(c.name, c.fam, c.ys, fd.LossAndDeriv); bad > 0 {
			t.Errorf("%s: %d of %d (y, z) differ from Loss and LossDerivs", c.name, bad, len(c.ys)*len(zs))
		}
	}
	mutant := func(y, z float64) (float64, float64) {
		f, _ := LogisticFamily{}.LossAndDeriv(y, z)
		return f, 1 - sigmoid(-z) - y
	}
	if bad := check("logistic mutant", LogisticFamily{}, []float64{0, 1}, mutant); bad == 0 {
		t.Error("the mutant f′ = 1 − σ(−z) − y passes")
	} else {
		t.Logf("mutant f′ = 1 − σ(−z) − y: caught (%d differ)", bad)
	}
}

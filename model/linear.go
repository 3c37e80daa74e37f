// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
)

// GaussianFamily is the GLMFamily of linear regression with Gaussian noise
// of known standard deviation Sigma: y_i ~ N(x_iᵀθ, σ²),
//
//	f(y, z) = (y − z)²/(2σ²),  f′ = (z − y)/σ²,  f″ = 1/σ²,  f‴ = 0
//
// (the constant log(σ√(2π)) is dropped). Use it through NewGLM:
//
//	e, err := model.NewGLM(x, y, d, model.GaussianFamily{Sigma: 0.5})
//
// f′ is unbounded on an unbounded support, so DiffBound and EnergyRange need
// a Box or Ball prior (they fail with an error naming the datum otherwise);
// SMH-1's bound 1/σ²·m_i² holds on all of ℝᵈ, and SMH-2's remainder is
// identically 0. The FlyMC bound GLMFlyBound is exact for this loss (K = 1/σ²
// = f″): every gap is FlyMC's margin, so no datum stays bright.
type GaussianFamily struct {
	// Sigma is the noise standard deviation σ > 0.
	Sigma float64
}

// Validate checks that σ is finite and positive (every finite y is a valid
// response).
func (f GaussianFamily) Validate([]float64) error {
	if !(f.Sigma > 0) || math.IsInf(f.Sigma, 0) {
		return fmt.Errorf("GaussianFamily: σ = %v, want finite > 0", f.Sigma)
	}
	return nil
}

// Loss returns (y − z)²/(2σ²).
func (f GaussianFamily) Loss(y, z float64) float64 {
	r := (y - z) / f.Sigma
	return 0.5 * r * r
}

// LossDerivs returns f′ = (z − y)/σ² and f″ = 1/σ².
func (f GaussianFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	s2 := f.Sigma * f.Sigma
	return (z - y) / s2, 1 / s2
}

// LossBound returns sup|f′| = max(|lo − y|, |hi − y|)/σ² (+Inf on an
// unbounded interval), sup|f″| = 1/σ² and sup|f‴| = 0 over [lo, hi]; +Inf for
// k outside 1…3.
func (f GaussianFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	s2 := f.Sigma * f.Sigma
	switch k {
	case 1:
		return math.Max(math.Abs(lo-y), math.Abs(hi-y)) / s2
	case 2:
		return 1 / s2
	case 3:
		return 0
	}
	return math.Inf(1)
}

// LossRange returns the range of f(y, ·) over [lo, hi]: 0 if y lies in it,
// else the loss at the nearer end, up to the loss at the farther end.
func (f GaussianFamily) LossRange(y, lo, hi float64) (min, max float64) {
	a, b := f.Loss(y, lo), f.Loss(y, hi)
	if y >= lo && y <= hi {
		return 0, math.Max(a, b)
	}
	return math.Min(a, b), math.Max(a, b)
}

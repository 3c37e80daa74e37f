// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
)

// PoissonFamily is the GLMFamily of Poisson regression with the log link:
// counts y_i ~ Poisson(e^{x_iᵀθ}),
//
//	f(y, z) = e^z − y z,  f′ = e^z − y,  f″ = f‴ = e^z
//
// (the constant log y! is dropped). Use it through NewGLM:
//
//	e, err := model.NewGLM(x, counts, d, model.PoissonFamily{})
//
// Where e^z overflows (z > 709.78, a rate above 10³⁰⁸) the loss is +Inf,
// never NaN, and the Target stops the chain with an EnergyError naming the
// datum and θ. Every derivative is unbounded as z → ∞, so DiffBound,
// EnergyRange, the SMH Taylor bounds and the FlyMC bound GLMFlyBound all
// need a Box or Ball prior, on which z_i ∈ [lo_i, hi_i] and the bounds are
// max(|e^{lo_i} − y_i|, |e^{hi_i} − y_i|) for f′ and e^{hi_i} for f″ and f‴;
// on an unbounded support they fail with an error naming the datum. The
// control-variate rewrite (exactmh.ControlVariates) works on any support:
// f‴ grows at most like e^{|z − ẑ|} (LossGrowth), which bounds the
// remainders pair by pair.
type PoissonFamily struct{}

// poissonMaxZ is the largest z with e^z finite.
const poissonMaxZ = 709.782712893384

// Validate checks that every response is a count: an integer ≥ 0.
func (PoissonFamily) Validate(y []float64) error {
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) {
			return fmt.Errorf("PoissonFamily: y[%d] = %v, want a count (integer ≥ 0)", i, v)
		}
	}
	return nil
}

// Loss returns e^z − y z, or +Inf where e^z overflows.
func (PoissonFamily) Loss(y, z float64) float64 {
	if z > poissonMaxZ {
		return math.Inf(1)
	}
	e := math.Exp(z)
	if y == 0 {
		return e // no 0·(−Inf) for z = −Inf
	}
	return e - y*z
}

// LossDerivs returns f′ = e^z − y and f″ = e^z.
func (PoissonFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	e := math.Exp(z)
	return e - y, e
}

// LossAndDeriv returns Loss and LossDerivs's f′ from one e^z.
func (PoissonFamily) LossAndDeriv(y, z float64) (f, f1 float64) {
	e := math.Exp(z)
	f1 = e - y
	switch {
	case z > poissonMaxZ:
		return math.Inf(1), f1
	case y == 0:
		return e, f1
	}
	return e - y*z, f1
}

// LossBound returns, over [lo, hi], sup|f′| = max(|e^lo − y|, |e^hi − y|)
// (f′ is increasing) and sup f″ = sup f‴ = e^hi: +Inf when hi = +Inf (or
// e^hi overflows), and for k outside 1…3.
func (PoissonFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	eh := math.Exp(hi)
	switch k {
	case 1:
		return math.Max(math.Abs(math.Exp(lo)-y), math.Abs(eh-y))
	case 2, 3:
		return eh
	}
	return math.Inf(1)
}

// LossGrowth returns e^{z₀}: f‴(z) = e^z ≤ e^{z₀}·e^{|z − z₀|} for every
// z (GLMLossGrower), the bound that lets ControlVariates, and so TFMH and
// TunaMH on its rewrite, sample a Poisson regression under a Gaussian or
// flat prior (TestPoissonGaussianPriorCV).
func (PoissonFamily) LossGrowth(_, z0 float64) float64 { return math.Exp(z0) }

// LossDeriv3 returns f‴ = e^z, for GroupGibbs's cross-cubic control
// variate (GLMCuber).
func (PoissonFamily) LossDeriv3(_, z float64) float64 { return math.Exp(z) }

// LossBound4 returns sup f⁗ = e^hi over [lo, hi]: +Inf on an unbounded
// interval, so the cross-cubic control variate takes LossGrowth4 instead.
func (PoissonFamily) LossBound4(_, _, hi float64) float64 { return math.Exp(hi) }

// LossGrowth4 returns e^{z₀}: f⁗(z) = e^z ≤ e^{z₀}·e^{|z − z₀|} for every
// z, the growth bound of the fourth derivative that gives GroupGibbs's
// cross-cubic control variate its pair-wise bound.
func (PoissonFamily) LossGrowth4(_, z0 float64) float64 { return math.Exp(z0) }

// LossRange returns the range of the convex f(y, ·) over [lo, hi]: its
// minimum at z = log y clamped to the interval (at lo for y = 0), its
// maximum at an end.
func (f PoissonFamily) LossRange(y, lo, hi float64) (min, max float64) {
	a, b := f.Loss(y, lo), f.Loss(y, hi)
	zMin := lo
	if y > 0 {
		zMin = math.Min(math.Max(math.Log(y), lo), hi)
	}
	return f.Loss(y, zMin), math.Max(a, b)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/vec"
)

// GLMFamily is the per-datum loss of a generalised linear model, all a user
// writes to get a full GLM energy from NewGLM: f(y, z) is the negative
// log-likelihood of response y at linear predictor z (constants in z may be
// dropped). Ready-made families: GaussianFamily, PoissonFamily,
// ProbitFamily. A family must be safe for concurrent use (a value type with
// no mutable state is).
//
// A family may also implement GLMValidator (NewGLM checks the responses and
// parameters with it) and GLMLossRanger (an exact range of f for
// EnergyRange; without it the range is the looser Lipschitz one of
// GLMEnergyRange).
type GLMFamily interface {
	// Loss returns f(y, z).
	Loss(y, z float64) float64
	// LossDerivs returns ∂f/∂z and ∂²f/∂z² at (y, z).
	LossDerivs(y, z float64) (f1, f2 float64)
	// LossBound returns an upper bound on sup |∂^k f(y, z)/∂z^k| over
	// lo ≤ z ≤ hi for k ∈ {1, 2, 3}, or +Inf if there is none; lo may be
	// −Inf and hi +Inf.
	LossBound(y float64, k int, lo, hi float64) float64
}

// GLMValidator is an optional method of a GLMFamily: NewGLM calls it once
// with all responses, and fails with its error (which should name the index
// and value of a bad response, or the bad parameter).
type GLMValidator interface {
	Validate(y []float64) error
}

// GLMLossRanger is an optional method of a GLMFamily: the exact range of
// f(y, ·) over a finite interval of z, for EnergyRange (PoissonMH,
// Poisson-Barker, Poisson-MALA).
type GLMLossRanger interface {
	// LossRange returns min and max of f(y, z) over lo ≤ z ≤ hi (finite).
	LossRange(y, lo, hi float64) (min, max float64)
}

// GLMLossDeriver is an optional method of a GLMFamily: f and f′ at one
// (y, z) from one evaluation of the transcendental functions they share
// (e^z for the Poisson, e^{−|z|} for the logistic, Erfc for the probit in
// its left tail), bit for bit the values of Loss and LossDerivs, so that
// SparseGLM.EnergiesAndGradient, which full-batch NUTS calls once per
// gradient, pays one exponential a datum rather than two
// (TestLossAndDerivBitwise).
type GLMLossDeriver interface {
	LossAndDeriv(y, z float64) (f, f1 float64)
}

// GLMEnergy is the energy of a generalised linear model with a
// user-supplied loss: U_i(θ) = f(y_i, x_iᵀθ), f from a GLMFamily. It
// implements GLM, EnergyDiffer, Gradienter (∇U_i = f′(y_i, x_iᵀθ)·x_i),
// EnergyGradienter and, through the generic GLM bounds, DiffBounder,
// EnergyRanger, TaylorBounder and FlyBounder, so every kernel of the
// package can run on it. Build one with NewGLM.
type GLMEnergy struct {
	x      []float64 // N×d row-major covariates
	y      []float64 // responses
	d      int
	family GLMFamily
	ranger GLMLossRanger // nil when the family has no exact range
}

// NewGLM returns the GLM energy U_i(θ) = f(y_i, x_iᵀθ) of the covariates x
// (row-major, N rows of d columns), responses y and the family's loss f.
// The slices are kept, not copied. It checks that x and y are finite and,
// if the family implements GLMValidator, that the family accepts y.
func NewGLM(x, y []float64, d int, family GLMFamily) (*GLMEnergy, error) {
	if family == nil {
		return nil, errors.New("exactmh: NewGLM: nil family")
	}
	if err := vec.DataRows("NewGLM", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.FiniteVec("NewGLM: y", y); err != nil {
		return nil, err
	}
	if v, ok := family.(GLMValidator); ok {
		if err := v.Validate(y); err != nil {
			return nil, fmt.Errorf("exactmh: NewGLM (%T): %w", family, err)
		}
	}
	e := &GLMEnergy{x: x, y: y, d: d, family: family}
	e.ranger, _ = family.(GLMLossRanger)
	return e, nil
}

// Len returns the number of data.
func (e *GLMEnergy) Len() int { return len(e.y) }

// Dim returns the number of covariates d.
func (e *GLMEnergy) Dim() int { return e.d }

// Row returns x_i (not a copy).
func (e *GLMEnergy) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Response returns y_i.
func (e *GLMEnergy) Response(i int) float64 { return e.y[i] }

// Family returns the family the energy was built with.
func (e *GLMEnergy) Family() GLMFamily { return e.family }

// Loss returns f(y_i, z).
func (e *GLMEnergy) Loss(i int, z float64) float64 { return e.family.Loss(e.y[i], z) }

// LossDerivs returns f′(y_i, z) and f″(y_i, z).
func (e *GLMEnergy) LossDerivs(i int, z float64) (f1, f2 float64) {
	return e.family.LossDerivs(e.y[i], z)
}

// LossBound returns the family's bound on sup |f^{(k)}(y_i, z)| over
// lo ≤ z ≤ hi.
func (e *GLMEnergy) LossBound(i, k int, lo, hi float64) float64 {
	return e.family.LossBound(e.y[i], k, lo, hi)
}

// GLMLossGrower is an optional method of a GLMFamily whose third
// derivative is unbounded but grows at most exponentially:
// |∂³f(y, z)/∂z³| ≤ LossGrowth(y, z₀)·e^{|z − z₀|} for every real z. It
// gives ControlVariates its pair-wise bound on an unbounded support
// (the GLM's optional LossGrowth method, see exactmh.GLM).
type GLMLossGrower interface {
	LossGrowth(y, z0 float64) float64
}

// LossGrowth returns the family's A(y_i, z₀) of GLMLossGrower, or ok false
// if the family has none (the GLM's optional LossGrowth method, see exactmh.GLM).
func (e *GLMEnergy) LossGrowth(i int, z0 float64) (float64, bool) {
	g, ok := e.family.(GLMLossGrower)
	if !ok {
		return 0, false
	}
	return g.LossGrowth(e.y[i], z0), true
}

// Energies sets dst[k] = f(y_i, x_iᵀθ) for i = idx[k].
func (e *GLMEnergy) Energies(dst, theta []float64, idx []int) {
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = e.family.Loss(e.y[i], vec.Dot(e.Row(i), theta))
		}
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *GLMEnergy) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.y, idx) {
		for k, i := range idx[lo:hi] {
			z, zn := vec.Dot2(e.Row(i), theta, thetaNew)
			dst[lo+k] = e.family.Loss(e.y[i], z) - e.family.Loss(e.y[i], zn)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·f′(y_i, z_i)·x_i
// to grad for i = idx[k], computing z_i = x_iᵀθ once per datum.
func (e *GLMEnergy) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		z := vec.Dot(row, theta)
		dst[k] = e.family.Loss(e.y[i], z)
		f1, _ := e.family.LossDerivs(e.y[i], z)
		g := w[k] * f1
		vec.Axpy(grad, g, row)
	}
}

// AddGradient adds Σ_k w[k]·f′(y_i, x_iᵀθ)·x_i to grad.
func (e *GLMEnergy) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		f1, _ := e.family.LossDerivs(e.y[i], vec.Dot(row, theta))
		g := w[k] * f1
		vec.Axpy(grad, g, row)
	}
}

// DiffBound returns GLMDiffBound(e, prior).
func (e *GLMEnergy) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	return exactmh.GLMDiffBound(e, prior)
}

// EnergyRange returns the family's exact range of f(y_i, ·) over the
// z-range of each datum on a Box or Ball support if the family implements
// GLMLossRanger, and GLMEnergyRange(e, prior) otherwise.
func (e *GLMEnergy) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	return e.energyRange(e, prior)
}

// energyRange is EnergyRange of g, which is e or the float32 twin holding
// e's responses and family.
func (e *GLMEnergy) energyRange(g exactmh.GLM, prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	if e.ranger == nil {
		return exactmh.GLMEnergyRange(g, prior)
	}
	if err := checkPriorDim(prior, e.d); err != nil {
		return nil, err
	}
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](g.Len()), Width: prefault.Make[float64](g.Len())}
	rows := newRowReader(g)
	for i := range r.Lo {
		a, b, err := linearRange(rows(i), prior)
		if err != nil {
			return nil, err
		}
		lo, hi := e.ranger.LossRange(e.y[i], a, b)
		if !(hi >= lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return nil, fmt.Errorf("exactmh: GLMEnergy.EnergyRange: %T.LossRange(y = %v, %v, %v) = [%v, %v] for datum %d, want finite min ≤ max",
				e.family, e.y[i], a, b, lo, hi, i)
		}
		r.Lo[i], r.Width[i] = lo, hi-lo
	}
	return r, nil
}

// TaylorBound returns the generic GLM bounds, exactmh.GLMTaylorBounder(e).TaylorBound.
func (e *GLMEnergy) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	return exactmh.GLMTaylorBounder(e).TaylorBound(order, prior)
}

// FlyBound returns GLMFlyBound(e, at, prior).
func (e *GLMEnergy) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	return exactmh.GLMFlyBound(e, at, prior)
}

// DenseRows returns the covariates and responses as stored
// (DenseGLM), so the kernels read them directly.
func (e *GLMEnergy) DenseRows() exactmh.DenseRows { return exactmh.DenseRows{X: e.x, Y: e.y} }

// String names the model by its family, as errors about its bounds do.
func (e *GLMEnergy) String() string { return fmt.Sprintf("GLMEnergy(%T)", e.family) }

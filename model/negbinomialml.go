// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
	"gonum.org/v1/gonum/mathext"
)

// nbK3 is sup over μ > 0 of φμ|φ − μ|/(φ + μ)³ = t|1 − t|/(1 + t)³
// (t = μ/φ), reached at t = 2 − √3: 1/(6√3). A NB2 datum's loss at fixed
// φ has |f‴| ≤ (y + φ)·nbK3.
var nbK3 = 1 / (6 * math.Sqrt(3))

// negBinShape is the GLMFamily of the NB2 loss in the linear predictor z
// at a fixed shape φ, log link: f(y, z) = −y·z + (y + φ)·log(φ + e^z),
// the terms free of z dropped. Its third-derivative bound is
// (y + ref)·nbK3·max(1, φ/ref) ≥ (y + φ)·nbK3, which a multilevel chain
// whose φ moves scales by max(1, φ/ref) alone (multilevel.ShapeGLM).
// A pointer: SetShape changes the family its SparseGLM holds.
type negBinShape struct{ phi, logPhi, ref float64 }

func (f *negBinShape) set(phi, ref float64) {
	f.phi, f.logPhi, f.ref = phi, math.Log(phi), ref
}

// Loss returns f(y, z).
func (f *negBinShape) Loss(y, z float64) float64 {
	return -y*z + (y+f.phi)*logSum(f.logPhi, z)
}

// LossDerivs returns f′ = (y + φ)μ/(φ + μ) − y and
// f″ = (y + φ)φμ/(φ + μ)², μ = e^z.
func (f *negBinShape) LossDerivs(y, z float64) (f1, f2 float64) {
	// r = μ/φ: μ/(φ+μ) = r/(1+r), φ/(φ+μ) = 1/(1+r); one exponential.
	r := math.Exp(z - f.logPhi)
	pm, pp := r/(1+r), 1/(1+r)
	if math.IsInf(r, 1) {
		pm, pp = 1, 0
	}
	return (y+f.phi)*pm - y, (y + f.phi) * pm * pp
}

// LossBound bounds sup |f^{(k)}| over [lo, hi]: f′ increases from −y to
// φ, f″ ≤ (y + φ)/4 (φμ/(φ + μ)² ≤ 1/4), |f‴| ≤ (y + φ)·nbK3 (see the
// type's comment for the scaled form).
func (f *negBinShape) LossBound(y float64, k int, lo, hi float64) float64 {
	switch k {
	case 1:
		a, _ := f.LossDerivs(y, lo)
		b, _ := f.LossDerivs(y, hi)
		if math.IsInf(lo, -1) {
			a = -y
		}
		if math.IsInf(hi, 1) {
			b = f.phi
		}
		return math.Max(math.Abs(a), math.Abs(b))
	case 2:
		return (y + f.phi) / 4
	case 3:
		return (y + f.ref) * nbK3 * math.Max(1, f.phi/f.ref)
	}
	return math.Inf(1)
}

// Validate checks that every y_i is a count.
func (f *negBinShape) Validate(y []float64) error {
	for i, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || math.IsInf(v, 0) {
			return fmt.Errorf("y[%d] = %v, want a count (an integer ≥ 0)", i, v)
		}
	}
	return nil
}

// SparseNegBinomialRegression is the energy of a negative binomial (NB2)
// multilevel model with its shape φ unknown — brms's negbinomial() with
// random effects, lme4's glmer.nb — over θ = (w, log φ), w the D
// coordinates of the multilevel model's sparse rows:
//
//	U_i(θ) = log Γ(φ) − log Γ(y_i + φ) − φ·log φ − y_i·η_i + (y_i + φ)·log(φ + e^{η_i}),
//
// η_i = x_iᵀw + o_i (NegBinomialRegression's datum, on sparse rows). φ
// enters every datum outside its linear predictor, so it is not a GLM in
// θ; given φ it is one (the loss in η has |f‴| ≤ (y + φ)/(6√3)), and
// multilevel.GroupGibbs samples it by its negative binomial sweep
// (multilevel.NegBinomialEnergy: ShapeView, Counts). Build it with
// NewNegBinomialMultilevel. It implements exactmh.EnergyDiffer,
// EnergyGradienter and Gradienter (for NUTS).
type SparseNegBinomialRegression struct {
	base multilevel.SparseRowGLM // the rows, y and offsets (a Poisson SparseGLM)
	y    []float64
	dim  int
	view func(phi float64) multilevel.ShapeGLM

	// noShapeLog, a mutant of the kit tests, drops the φ·log φ term.
	noShapeLog bool
}

// NewNegBinomialMultilevel returns the posterior of the negative binomial
// multilevel model m (its Family ignored: NB2 with a log link, m.Offset
// the log exposures; m.Weights must be nil) with the prior shape on φ
// (brms's default: Gamma(0.01, 0.01)), the Jacobian of log φ included:
// θ is NewMultilevel's followed by log φ, named "log_shape".
func NewNegBinomialMultilevel(m *Multilevel, shape ScalePrior) (*exactmh.Posterior, error) {
	if m == nil {
		return nil, fmt.Errorf("model: NewNegBinomialMultilevel: nil model")
	}
	if m.Weights != nil {
		return nil, fmt.Errorf("model: NewNegBinomialMultilevel: Weights set, want nil (a negative binomial datum has no trials)")
	}
	if err := shape.check(); err != nil {
		return nil, fmt.Errorf("model: NewNegBinomialMultilevel: the shape's prior: %w", err)
	}
	mc := *m
	mc.Family = PoissonFamily{}
	p, err := NewMultilevel(&mc)
	if err != nil {
		return nil, fmt.Errorf("model: NewNegBinomialMultilevel: %w", err)
	}
	var e *SparseNegBinomialRegression
	switch sg := p.Energy.(type) {
	case *SparseGLM[float64]:
		e = newSparseNegBin(sg)
	case *SparseGLM[float32]:
		e = newSparseNegBin(sg)
	default:
		return nil, fmt.Errorf("model: NewNegBinomialMultilevel: energy %T, want a SparseGLM", p.Energy)
	}
	return &exactmh.Posterior{Energy: e, Prior: &WithScale{Base: p.Prior, Scale: shape},
		Names: append(p.Names, "log_shape")}, nil
}

func newSparseNegBin[T float32 | float64](sg *SparseGLM[T]) *SparseNegBinomialRegression {
	return &SparseNegBinomialRegression{base: sg, y: sg.y, dim: sg.Dim(),
		view: func(phi float64) multilevel.ShapeGLM {
			f := &negBinShape{}
			f.set(phi, phi)
			v := &SparseGLM[T]{rows: sg.rows, y: sg.y, offset: sg.offset, family: f, open: sg.open}
			return &shapeView[T]{SparseGLM: v, f: f}
		}}
}

// shapeView is a SparseGLM of the NB2 loss at a shape SetShape changes.
type shapeView[T float32 | float64] struct {
	*SparseGLM[T]
	f *negBinShape
}

// SetShape sets φ and the reference shape of the third-derivative bound.
func (v *shapeView[T]) SetShape(phi, ref float64) { v.f.set(phi, ref) }

// ShapeView returns the energy of w at shape φ (multilevel.ShapeGLM): a
// new SparseGLM over the same rows, responses and offsets, its loss
// f_i(z) = −y_i z + (y_i + φ)·log(φ + e^z) (the terms free of z
// dropped).
func (e *SparseNegBinomialRegression) ShapeView(phi float64) multilevel.ShapeGLM { return e.view(phi) }

// Counts returns y (read only).
func (e *SparseNegBinomialRegression) Counts() []float64 { return e.y }

// Len returns N.
func (e *SparseNegBinomialRegression) Len() int { return len(e.y) }

// Dim returns D + 1.
func (e *SparseNegBinomialRegression) Dim() int { return e.dim + 1 }

// shapeTerms returns log Γ(φ) − log Γ(y + φ) − φ·log φ.
func (e *SparseNegBinomialRegression) shapeTerms(y, phi, logPhi float64) float64 {
	lg, _ := math.Lgamma(phi)
	lgy, _ := math.Lgamma(y + phi)
	u := lg - lgy
	if !e.noShapeLog {
		u -= phi * logPhi
	}
	return u
}

func (e *SparseNegBinomialRegression) datum(i int, z, phi, lp float64) float64 {
	y := e.y[i]
	return e.shapeTerms(y, phi, lp) - y*z + (y+phi)*logSum(lp, z)
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *SparseNegBinomialRegression) Energies(dst, theta []float64, idx []int) {
	lp := theta[e.dim]
	phi := math.Exp(lp)
	w := theta[:e.dim]
	for k, i := range idx {
		z, _ := e.base.LinearPredictors(i, w, w)
		dst[k] = e.datum(i, z, phi, lp)
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′).
func (e *SparseNegBinomialRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	lp, lpn := theta[e.dim], thetaNew[e.dim]
	phi, phin := math.Exp(lp), math.Exp(lpn)
	for k, i := range idx {
		z, zn := e.base.LinearPredictors(i, theta[:e.dim], thetaNew[:e.dim])
		dst[k] = e.datum(i, z, phi, lp) - e.datum(i, zn, phin, lpn)
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// (∂U_i/∂η = (y + φ)μ/(φ + μ) − y; ∂U_i/∂log φ as NegBinomialRegression's).
func (e *SparseNegBinomialRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	d := e.dim
	lp := theta[d]
	phi := math.Exp(lp)
	dphi := mathext.Digamma(phi)
	var cols []int32
	var vals []float64
	for k, i := range idx {
		y := e.y[i]
		z, _ := e.base.LinearPredictors(i, theta[:d], theta[:d])
		ls := logSum(lp, z)
		if dst != nil {
			dst[k] = e.shapeTerms(y, phi, lp) - y*z + (y+phi)*ls
		}
		pm, pp := math.Exp(z-ls), math.Exp(lp-ls)
		g := w[k] * ((y+phi)*pm - y)
		cols, vals = e.base.SparseRow(i, cols[:0], vals[:0])
		for q, c := range cols {
			grad[c] += g * vals[q]
		}
		gphi := dphi - mathext.Digamma(y+phi) + ls + (y+phi)*pp/phi
		if !e.noShapeLog {
			gphi -= lp + 1
		}
		grad[d] += w[k] * phi * gphi
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) to grad.
func (e *SparseNegBinomialRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.EnergiesAndGradient(nil, grad, theta, idx, w)
}

// String names the model, as errors about it do.
func (e *SparseNegBinomialRegression) String() string {
	return fmt.Sprintf("SparseNegBinomialRegression(N = %d, D = %d, shape unknown)", len(e.y), e.dim)
}

// Compile-time checks.
var (
	_ exactmh.EnergyDiffer         = (*SparseNegBinomialRegression)(nil)
	_ exactmh.EnergyGradienter     = (*SparseNegBinomialRegression)(nil)
	_ exactmh.Gradienter           = (*SparseNegBinomialRegression)(nil)
	_ multilevel.NegBinomialEnergy = (*SparseNegBinomialRegression)(nil)
)

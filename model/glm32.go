// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/vec"
)

// LogisticRegression32 is LogisticRegression with float32 features: the
// same energy, interfaces and bounds, computed in float64 from features
// stored in half the memory (for a memory-mapped data.Store, half the bytes
// read per datum). On features that float32 represents exactly it agrees
// with LogisticRegression on the same data: bit for bit where d < 16 and in
// all bounds and set-up passes, to rounding (≈1e-16 relative) in the
// per-step energies and gradients where d ≥ 16 (LogisticRegression's
// inner products there use gonum's assembly kernel, which sums in another
// order). Build one with NewLogisticRegression32.
type LogisticRegression32 struct {
	rows vec.Rows32
	base LogisticRegression // labels and loss; base.x is nil
}

var (
	_ exactmh.GLM              = (*LogisticRegression32)(nil)
	_ exactmh.EnergyDiffer     = (*LogisticRegression32)(nil)
	_ exactmh.Gradienter       = (*LogisticRegression32)(nil)
	_ exactmh.EnergyGradienter = (*LogisticRegression32)(nil)
	_ exactmh.DiffBounder      = (*LogisticRegression32)(nil)
	_ exactmh.EnergyRanger     = (*LogisticRegression32)(nil)
	_ exactmh.TaylorBounder    = (*LogisticRegression32)(nil)
	_ exactmh.FlyBounder       = (*LogisticRegression32)(nil)

	_ exactmh.GLM              = (*GLMEnergy32)(nil)
	_ exactmh.EnergyDiffer     = (*GLMEnergy32)(nil)
	_ exactmh.Gradienter       = (*GLMEnergy32)(nil)
	_ exactmh.EnergyGradienter = (*GLMEnergy32)(nil)
	_ exactmh.DiffBounder      = (*GLMEnergy32)(nil)
	_ exactmh.EnergyRanger     = (*GLMEnergy32)(nil)
	_ exactmh.TaylorBounder    = (*GLMEnergy32)(nil)
	_ exactmh.FlyBounder       = (*GLMEnergy32)(nil)

	// The float64 twins implement the same interfaces.
	_ exactmh.GLM              = (*LogisticRegression)(nil)
	_ exactmh.EnergyGradienter = (*LogisticRegression)(nil)
	_ exactmh.EnergyRanger     = (*LogisticRegression)(nil)
	_ exactmh.FlyBounder       = (*LogisticRegression)(nil)
	_ exactmh.GLM              = (*GLMEnergy)(nil)
	_ exactmh.EnergyGradienter = (*GLMEnergy)(nil)
	_ exactmh.EnergyRanger     = (*GLMEnergy)(nil)
	_ exactmh.FlyBounder       = (*GLMEnergy)(nil)
)

// NewLogisticRegression32 returns the logistic-regression energy of the
// float32 features x (row-major, N rows of d columns) and labels
// y ∈ {0, 1}. The slices are kept, not copied (they may be a read-only
// memory mapping). It checks that every feature is finite, one pass over
// x.
func NewLogisticRegression32(x []float32, y []float64, d int) (*LogisticRegression32, error) {
	if err := vec.DataRows("NewLogisticRegression32", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.Streamed(y, 1, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if v := y[i]; v != 0 && v != 1 {
				return fmt.Errorf("exactmh: NewLogisticRegression32: label y[%d] = %v, want 0 or 1", i, v)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &LogisticRegression32{rows: vec.Rows32{X: x, D: d}, base: LogisticRegression{y: y, d: d}}, nil
}

// Len returns the number of data.
func (e *LogisticRegression32) Len() int { return len(e.base.y) }

// Dim returns the number of features.
func (e *LogisticRegression32) Dim() int { return e.rows.D }

// Row returns the features of datum i converted to float64, a new slice:
// it allocates d float64s per call. The package's kernels and set-up
// passes never call it (they convert rows without allocating); it is there
// for the GLM contract and for callers outside the package.
func (e *LogisticRegression32) Row(i int) []float64 { return e.rows.Row(i) }

// Label returns y_i.
func (e *LogisticRegression32) Label(i int) float64 { return e.base.y[i] }

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *LogisticRegression32) Energies(dst, theta []float64, idx []int) {
	y := e.base.y
	for lo, hi := range prefetch.Blocks(dst, e.rows.X, e.rows.D, y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = vec.DotConv(e.rows.At(i), theta)
		}
		logit.Losses(dst[lo:hi], y, idx[lo:hi])
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *LogisticRegression32) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	y := e.base.y
	var zn [logit.Group]float64
	for lo, hi := range prefetch.Blocks(dst, e.rows.X, e.rows.D, y, idx) {
		for g := lo; g < hi; g += logit.Group {
			group := idx[g:min(g+logit.Group, hi)]
			for k, i := range group {
				dst[g+k], zn[k] = vec.Dot2Conv(e.rows.At(i), theta, thetaNew)
			}
			logit.LossDiffs(dst[g:g+len(group)], zn[:len(group)], y, group)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing x_iᵀθ once per datum.
func (e *LogisticRegression32) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	y := e.base.y
	var slope [logit.Group]float64
	for g := 0; g < len(idx); g += logit.Group {
		group := idx[g:min(g+logit.Group, len(idx))]
		for k, i := range group {
			dst[g+k] = vec.DotConv(e.rows.At(i), theta)
		}
		logit.LossSlopes(dst[g:g+len(group)], slope[:len(group)], y, group, w[g:])
		for k, i := range group {
			vec.AxpyConv(grad, slope[k], e.rows.At(i))
		}
	}
}

// AddGradient adds Σ_k w[k]·(σ(x_iᵀθ) − y_i)·x_i to grad.
func (e *LogisticRegression32) AddGradient(grad, theta []float64, idx []int, w []float64) {
	y := e.base.y
	for k, i := range idx {
		row := e.rows.At(i)
		g := w[k] * (logit.Sigmoid(vec.DotConv(row, theta)) - y[i])
		vec.AxpyConv(grad, g, row)
	}
}

// Loss returns f_i(z) = softplus(z) − y_i z (GLM).
func (e *LogisticRegression32) Loss(i int, z float64) float64 { return e.base.Loss(i, z) }

// LossDerivs returns f_i′(z) = σ(z) − y_i and f_i″(z) = σ(z)(1 − σ(z)).
func (e *LogisticRegression32) LossDerivs(i int, z float64) (f1, f2 float64) {
	return e.base.LossDerivs(i, z)
}

// LossBound returns LogisticRegression's global bounds on the loss's
// derivatives.
func (e *LogisticRegression32) LossBound(i, k int, lo, hi float64) float64 {
	return e.base.LossBound(i, k, lo, hi)
}

// LossDeriv3 returns f_i‴(z), as LogisticRegression.
func (e *LogisticRegression32) LossDeriv3(i int, z float64) float64 { return e.base.LossDeriv3(i, z) }

// LossBound4 returns LogisticRegression's bound 1/8 on |f_i⁗|.
func (e *LogisticRegression32) LossBound4(i int, lo, hi float64) float64 {
	return e.base.LossBound4(i, lo, hi)
}

// DiffBound returns c_i = ‖x_i‖₂, M = ‖θ − θ'‖₂ (as LogisticRegression).
func (e *LogisticRegression32) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	rows := newRowReader(e)
	for i := range c {
		c[i] = vec.Norm2(rows(i))
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange returns the exact range of U_i on a Box or Ball support (as
// LogisticRegression).
func (e *LogisticRegression32) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	y := e.base.y
	rows := newRowReader(e)
	// The support first, as LogisticRegression's.
	if _, _, err := linearRange(rows(0), prior); err != nil {
		return nil, err
	}
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	for i := range r.Lo {
		a, b, err := linearRange(rows(i), prior)
		if err != nil {
			return nil, err
		}
		ua, ub := logit.Softplus(a)-y[i]*a, logit.Softplus(b)-y[i]*b
		r.Lo[i], r.Width[i] = math.Min(ua, ub), math.Abs(ua-ub)
	}
	return r, nil
}

// FlyBound returns the Jaakkola–Jordan bound, tight at θ = at (untuned
// ξ = 1.5 for a nil at), as LogisticRegression.FlyBound.
func (e *LogisticRegression32) FlyBound(at []float64, _ exactmh.Prior) (exactmh.FlyBound, error) {
	if at == nil {
		return e.FlyBoundXi(1.5)
	}
	if len(at) != e.rows.D {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.FlyBound: len(at) = %d, want %d", len(at), e.rows.D)
	}
	if err := vec.FiniteVec("LogisticRegression32.FlyBound: at", at); err != nil {
		return nil, err
	}
	buf := make([]float64, e.rows.D)
	return logisticJJBound(e, e.base.y, func(i int) float64 { return vec.Dot(e.rows.ReadRow(buf, i), at) }), nil
}

// FlyBoundXi returns the Jaakkola–Jordan bound tight at |s| = ξ for every
// datum.
func (e *LogisticRegression32) FlyBoundXi(xi float64) (exactmh.FlyBound, error) {
	if math.IsNaN(xi) || math.IsInf(xi, 0) {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.FlyBoundXi: ξ = %v, want finite", xi)
	}
	return logisticJJBound(e, e.base.y, func(int) float64 { return xi }), nil
}

// TaylorBound returns b_i = sup|f^{(k+1)}|·m_i^{k+1}, m_i = max_j |x_ij|
// (as LogisticRegression).
func (e *LogisticRegression32) TaylorBound(order int, _ exactmh.Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.TaylorBound: order %d, want 1 or 2", order)
	}
	return vec.TaylorBounds(e.rows.X, e.rows.D, order, e.LossBound(0, order+1, 0, 0)), nil
}

// GLMEnergy32 is GLMEnergy with float32 covariates: U_i(θ) = f(y_i, x_iᵀθ)
// for a GLMFamily f, computed in float64 from covariates stored in half the
// memory. It implements the same interfaces as GLMEnergy and agrees with it
// on float32-representable covariates as LogisticRegression32 agrees with
// LogisticRegression. Build one with NewGLM32.
type GLMEnergy32 struct {
	rows vec.Rows32
	base GLMEnergy // responses, family; base.x is nil
}

// NewGLM32 returns the GLM energy U_i(θ) = f(y_i, x_iᵀθ) of the float32
// covariates x (row-major, N rows of d columns), responses y and the
// family's loss f. The slices are kept, not copied. It checks what NewGLM
// checks: x and y finite, and y by the family's GLMValidator if it has one.
func NewGLM32(x []float32, y []float64, d int, family GLMFamily) (*GLMEnergy32, error) {
	if family == nil {
		return nil, errors.New("exactmh: NewGLM32: nil family")
	}
	if err := vec.DataRows("NewGLM32", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.FiniteVec("NewGLM32: y", y); err != nil {
		return nil, err
	}
	if v, ok := family.(GLMValidator); ok {
		if err := v.Validate(y); err != nil {
			return nil, fmt.Errorf("exactmh: NewGLM32 (%T): %w", family, err)
		}
	}
	e := &GLMEnergy32{rows: vec.Rows32{X: x, D: d}, base: GLMEnergy{y: y, d: d, family: family}}
	e.base.ranger, _ = family.(GLMLossRanger)
	return e, nil
}

// Len returns the number of data.
func (e *GLMEnergy32) Len() int { return len(e.base.y) }

// Dim returns the number of covariates d.
func (e *GLMEnergy32) Dim() int { return e.rows.D }

// Row returns x_i converted to float64, a new slice: it allocates d
// float64s per call. The package's kernels and set-up passes never call it.
func (e *GLMEnergy32) Row(i int) []float64 { return e.rows.Row(i) }

// Response returns y_i.
func (e *GLMEnergy32) Response(i int) float64 { return e.base.y[i] }

// Family returns the family the energy was built with.
func (e *GLMEnergy32) Family() GLMFamily { return e.base.family }

// Loss returns f(y_i, z).
func (e *GLMEnergy32) Loss(i int, z float64) float64 { return e.base.Loss(i, z) }

// LossDerivs returns f′(y_i, z) and f″(y_i, z).
func (e *GLMEnergy32) LossDerivs(i int, z float64) (f1, f2 float64) {
	return e.base.LossDerivs(i, z)
}

// LossBound returns the family's bound on sup |f^{(k)}(y_i, z)| over
// lo ≤ z ≤ hi.
func (e *GLMEnergy32) LossBound(i, k int, lo, hi float64) float64 {
	return e.base.LossBound(i, k, lo, hi)
}

// Energies sets dst[k] = f(y_i, x_iᵀθ) for i = idx[k].
func (e *GLMEnergy32) Energies(dst, theta []float64, idx []int) {
	f, y := e.base.family, e.base.y
	for lo, hi := range prefetch.Blocks(dst, e.rows.X, e.rows.D, y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = f.Loss(y[i], vec.DotConv(e.rows.At(i), theta))
		}
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *GLMEnergy32) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	f, y := e.base.family, e.base.y
	for lo, hi := range prefetch.Blocks(dst, e.rows.X, e.rows.D, y, idx) {
		for k, i := range idx[lo:hi] {
			z, zn := vec.Dot2Conv(e.rows.At(i), theta, thetaNew)
			dst[lo+k] = f.Loss(y[i], z) - f.Loss(y[i], zn)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·f′(y_i, z_i)·x_i
// to grad for i = idx[k], computing z_i = x_iᵀθ once per datum.
func (e *GLMEnergy32) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	f, y := e.base.family, e.base.y
	for k, i := range idx {
		row := e.rows.At(i)
		z := vec.DotConv(row, theta)
		dst[k] = f.Loss(y[i], z)
		f1, _ := f.LossDerivs(y[i], z)
		vec.AxpyConv(grad, w[k]*f1, row)
	}
}

// AddGradient adds Σ_k w[k]·f′(y_i, x_iᵀθ)·x_i to grad.
func (e *GLMEnergy32) AddGradient(grad, theta []float64, idx []int, w []float64) {
	f, y := e.base.family, e.base.y
	for k, i := range idx {
		row := e.rows.At(i)
		f1, _ := f.LossDerivs(y[i], vec.DotConv(row, theta))
		vec.AxpyConv(grad, w[k]*f1, row)
	}
}

// DiffBound returns GLMDiffBound(e, prior).
func (e *GLMEnergy32) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	return exactmh.GLMDiffBound(e, prior)
}

// EnergyRange returns what GLMEnergy.EnergyRange returns: the family's
// exact range if it implements GLMLossRanger, GLMEnergyRange otherwise.
func (e *GLMEnergy32) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	return e.base.energyRange(e, prior)
}

// TaylorBound returns the generic GLM bounds, exactmh.GLMTaylorBounder(e).TaylorBound.
func (e *GLMEnergy32) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	return exactmh.GLMTaylorBounder(e).TaylorBound(order, prior)
}

// FlyBound returns GLMFlyBound(e, at, prior).
func (e *GLMEnergy32) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	return exactmh.GLMFlyBound(e, at, prior)
}

// DenseRows returns the float32 features and labels as stored, with the
// logistic loss declared (DenseGLM): the kernels inline it.
func (e *LogisticRegression32) DenseRows() exactmh.DenseRows {
	return exactmh.DenseRows{X32: e.rows.X, Y: e.base.y, Logistic: true}
}

// DenseRows returns the float32 covariates and responses as stored
// (DenseGLM).
func (e *GLMEnergy32) DenseRows() exactmh.DenseRows {
	return exactmh.DenseRows{X32: e.rows.X, Y: e.base.y}
}

// String names the model by its family, as errors about its bounds do.
func (e *GLMEnergy32) String() string { return fmt.Sprintf("GLMEnergy32(%T)", e.base.family) }

func (e *LogisticRegression32) float32Rows() *vec.Rows32 { return &e.rows }
func (e *GLMEnergy32) float32Rows() *vec.Rows32          { return &e.rows }

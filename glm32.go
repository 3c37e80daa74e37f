// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh/internal/prefault"
)

// Float32 storage. LogisticRegression32 and GLMEnergy32 hold their
// covariates as float32 — half the memory and half the bytes read per datum
// of their float64 twins, which matters when X is a memory-mapped file
// larger than RAM (package data's Store) — and compute everything in
// float64: each element is converted as it is read, so on data that
// float32 represents exactly they compute what the twins compute. Their
// per-datum loops read rows through rowConverter; GLM.Row, which must
// return a []float64, returns a converted copy and allocates, and is used
// only by code outside the package (the package's set-up passes and kernel
// steps read rows through rowConverter and newRowCursor).

// rowConverter is implemented by the GLMs whose rows are not float64 slices
// in memory (and by cvEnergy, which wraps any GLM): the package's per-step
// loops read x_i through it instead of Row, which would allocate.
type rowConverter interface {
	// rowDot returns x_iᵀθ.
	rowDot(i int, theta []float64) float64
	// rowDot2 returns x_iᵀa and x_iᵀb, reading x_i once.
	rowDot2(i int, a, b []float64) (float64, float64)
	// rowAxpy adds α·x_i to grad.
	rowAxpy(grad []float64, alpha float64, i int)
	// readRow returns x_i as float64, converted into dst[:d] (or, for
	// float64 storage, possibly the stored row itself).
	readRow(dst []float64, i int) []float64
}

// rowCursor reads the rows of a GLM for a set-up pass without allocating
// per row: a float64 GLM's own rows, or a rowConverter's converted into a
// ring of four buffers, so that a row stays valid until four more have
// been read (rankAcc holds up to four).
type rowCursor struct {
	g    GLM
	conv rowConverter
	buf  []float64
	k    int
}

// newRowCursor returns the cursor of g.
func newRowCursor(g GLM) rowCursor {
	c := rowCursor{g: g}
	if conv, ok := g.(rowConverter); ok {
		c.conv = conv
		c.buf = make([]float64, 4*g.Dim())
	}
	return c
}

// row returns x_i, valid until four more rows have been read.
func (c *rowCursor) row(i int) []float64 {
	if c.conv == nil {
		return c.g.Row(i)
	}
	d := len(c.buf) / 4
	dst := c.buf[c.k*d : (c.k+1)*d]
	c.k = (c.k + 1) & 3
	return c.conv.readRow(dst, i)
}

// dotConv returns aᵀb for float32 a, in float64. Below shortVec it is the
// loop of dot, operation for operation, so the result equals dot's on the
// converted row; from shortVec on it keeps four accumulators (dot's gonum
// kernel is not available for float32, and one accumulator would wait on
// each addition), which rounds differently from dot.
func dotConv[T float32 | float64](a []T, b []float64) float64 {
	b = b[:len(a)]
	if len(a) < shortVec {
		var s float64
		for j, v := range a {
			s += float64(v) * b[j]
		}
		return s
	}
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += float64(a[j]) * b[j]
		s1 += float64(a[j+1]) * b[j+1]
		s2 += float64(a[j+2]) * b[j+2]
		s3 += float64(a[j+3]) * b[j+3]
	}
	for ; j < len(a); j++ {
		s0 += float64(a[j]) * b[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot2Conv returns aᵀb and aᵀc, reading a once (see dotConv).
func dot2Conv[T float32 | float64](a []T, b, c []float64) (ab, ac float64) {
	if len(a) >= shortVec {
		return dotConv(a, b), dotConv(a, c) // a is in cache the second time
	}
	b, c = b[:len(a)], c[:len(a)]
	for j, v := range a {
		f := float64(v)
		ab += f * b[j]
		ac += f * c[j]
	}
	return ab, ac
}

// axpyConv adds α·x to y, converting x to float64 (the loop of axpy).
func axpyConv[T float32 | float64](y []float64, alpha float64, x []T) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * float64(v)
	}
}

// rows32 is an N×d row-major float32 matrix, read in float64.
type rows32 struct {
	x []float32
	d int
}

func (r *rows32) at(i int) []float32 { return r.x[i*r.d : (i+1)*r.d] }

func (r *rows32) rowDot(i int, theta []float64) float64 { return dotConv(r.at(i), theta) }

func (r *rows32) rowDot2(i int, a, b []float64) (float64, float64) {
	return dot2Conv(r.at(i), a, b)
}

func (r *rows32) rowAxpy(grad []float64, alpha float64, i int) { axpyConv(grad, alpha, r.at(i)) }

func (r *rows32) readRow(dst []float64, i int) []float64 {
	dst = dst[:r.d]
	for j, v := range r.at(i) {
		dst[j] = float64(v)
	}
	return dst
}

// row returns a new float64 copy of x_i.
func (r *rows32) row(i int) []float64 { return r.readRow(make([]float64, r.d), i) }

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
	rows32
	base LogisticRegression // labels and loss; base.x is nil
}

var (
	_ GLM              = (*LogisticRegression32)(nil)
	_ EnergyDiffer     = (*LogisticRegression32)(nil)
	_ Gradienter       = (*LogisticRegression32)(nil)
	_ EnergyGradienter = (*LogisticRegression32)(nil)
	_ DiffBounder      = (*LogisticRegression32)(nil)
	_ EnergyRanger     = (*LogisticRegression32)(nil)
	_ TaylorBounder    = (*LogisticRegression32)(nil)
	_ FlyBounder       = (*LogisticRegression32)(nil)
	_ rowConverter     = (*LogisticRegression32)(nil)

	_ GLM              = (*GLMEnergy32)(nil)
	_ EnergyDiffer     = (*GLMEnergy32)(nil)
	_ Gradienter       = (*GLMEnergy32)(nil)
	_ EnergyGradienter = (*GLMEnergy32)(nil)
	_ DiffBounder      = (*GLMEnergy32)(nil)
	_ EnergyRanger     = (*GLMEnergy32)(nil)
	_ TaylorBounder    = (*GLMEnergy32)(nil)
	_ FlyBounder       = (*GLMEnergy32)(nil)
	_ rowConverter     = (*GLMEnergy32)(nil)

	// The float64 twins implement the same interfaces.
	_ GLM              = (*LogisticRegression)(nil)
	_ EnergyGradienter = (*LogisticRegression)(nil)
	_ EnergyRanger     = (*LogisticRegression)(nil)
	_ FlyBounder       = (*LogisticRegression)(nil)
	_ GLM              = (*GLMEnergy)(nil)
	_ EnergyGradienter = (*GLMEnergy)(nil)
	_ EnergyRanger     = (*GLMEnergy)(nil)
	_ FlyBounder       = (*GLMEnergy)(nil)
)

// NewLogisticRegression32 returns the logistic-regression energy of the
// float32 features x (row-major, N rows of d columns) and labels
// y ∈ {0, 1}. The slices are kept, not copied (they may be a read-only
// memory mapping). It checks that every feature is finite, one pass over
// x.
func NewLogisticRegression32(x []float32, y []float64, d int) (*LogisticRegression32, error) {
	if err := dataRows("NewLogisticRegression32", x, len(y), d); err != nil {
		return nil, err
	}
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("exactmh: NewLogisticRegression32: label y[%d] = %v, want 0 or 1", i, v)
		}
	}
	return &LogisticRegression32{rows32: rows32{x: x, d: d}, base: LogisticRegression{y: y, d: d}}, nil
}

// Len returns the number of data.
func (e *LogisticRegression32) Len() int { return len(e.base.y) }

// Dim returns the number of features.
func (e *LogisticRegression32) Dim() int { return e.d }

// Row returns the features of datum i converted to float64, a new slice:
// it allocates d float64s per call. The package's kernels and set-up
// passes never call it (they convert rows without allocating); it is there
// for the GLM contract and for callers outside the package.
func (e *LogisticRegression32) Row(i int) []float64 { return e.row(i) }

// Label returns y_i.
func (e *LogisticRegression32) Label(i int) float64 { return e.base.y[i] }

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *LogisticRegression32) Energies(dst, theta []float64, idx []int) {
	y := e.base.y
	for lo, hi := range warmBlocks(dst, e.x, e.d, y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = dotConv(e.at(i), theta)
		}
		logisticLosses(dst[lo:hi], y, idx[lo:hi])
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *LogisticRegression32) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	y := e.base.y
	var zn [logisticGroup]float64
	for lo, hi := range warmBlocks(dst, e.x, e.d, y, idx) {
		for g := lo; g < hi; g += logisticGroup {
			group := idx[g:min(g+logisticGroup, hi)]
			for k, i := range group {
				dst[g+k], zn[k] = dot2Conv(e.at(i), theta, thetaNew)
			}
			logisticLossDiffs(dst[g:g+len(group)], zn[:len(group)], y, group)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing x_iᵀθ once per datum.
func (e *LogisticRegression32) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	y := e.base.y
	var slope [logisticGroup]float64
	for g := 0; g < len(idx); g += logisticGroup {
		group := idx[g:min(g+logisticGroup, len(idx))]
		for k, i := range group {
			dst[g+k] = dotConv(e.at(i), theta)
		}
		logisticLossSlopes(dst[g:g+len(group)], slope[:len(group)], y, group, w[g:])
		for k, i := range group {
			axpyConv(grad, slope[k], e.at(i))
		}
	}
}

// AddGradient adds Σ_k w[k]·(σ(x_iᵀθ) − y_i)·x_i to grad.
func (e *LogisticRegression32) AddGradient(grad, theta []float64, idx []int, w []float64) {
	y := e.base.y
	for k, i := range idx {
		row := e.at(i)
		g := w[k] * (sigmoid(dotConv(row, theta)) - y[i])
		axpyConv(grad, g, row)
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

// DiffBound returns c_i = ‖x_i‖₂, M = ‖θ − θ'‖₂ (as LogisticRegression).
func (e *LogisticRegression32) DiffBound(Prior) (*DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	rows := newRowCursor(e)
	for i := range c {
		c[i] = norm2(rows.row(i))
	}
	return &DiffBound{C: c}, nil
}

// EnergyRange returns the exact range of U_i on a Box or Ball support (as
// LogisticRegression).
func (e *LogisticRegression32) EnergyRange(prior Prior) (*EnergyRange, error) {
	y := e.base.y
	r := &EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	rows := newRowCursor(e)
	for i := range r.Lo {
		a, b, err := linearRange(rows.row(i), prior)
		if err != nil {
			return nil, err
		}
		ua, ub := softplus(a)-y[i]*a, softplus(b)-y[i]*b
		r.Lo[i], r.Width[i] = math.Min(ua, ub), math.Abs(ua-ub)
	}
	return r, nil
}

// FlyBound returns the Jaakkola–Jordan bound, tight at θ = at (untuned
// ξ = 1.5 for a nil at), as LogisticRegression.FlyBound.
func (e *LogisticRegression32) FlyBound(at []float64, _ Prior) (FlyBound, error) {
	if at == nil {
		return e.FlyBoundXi(1.5)
	}
	if len(at) != e.d {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.FlyBound: len(at) = %d, want %d", len(at), e.d)
	}
	if err := finiteVec("LogisticRegression32.FlyBound: at", at); err != nil {
		return nil, err
	}
	buf := make([]float64, e.d)
	return logisticJJBound(e, e.base.y, func(i int) float64 { return dot(e.readRow(buf, i), at) }), nil
}

// FlyBoundXi returns the Jaakkola–Jordan bound tight at |s| = ξ for every
// datum.
func (e *LogisticRegression32) FlyBoundXi(xi float64) (FlyBound, error) {
	if math.IsNaN(xi) || math.IsInf(xi, 0) {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.FlyBoundXi: ξ = %v, want finite", xi)
	}
	return logisticJJBound(e, e.base.y, func(int) float64 { return xi }), nil
}

// TaylorBound returns b_i = sup|f^{(k+1)}|·m_i^{k+1}, m_i = max_j |x_ij|
// (as LogisticRegression).
func (e *LogisticRegression32) TaylorBound(order int, _ Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("exactmh: LogisticRegression32.TaylorBound: order %d, want 1 or 2", order)
	}
	return glmTaylorBound(e.x, e.d, order, e.LossBound(0, order+1, 0, 0)), nil
}

// GLMEnergy32 is GLMEnergy with float32 covariates: U_i(θ) = f(y_i, x_iᵀθ)
// for a GLMFamily f, computed in float64 from covariates stored in half the
// memory. It implements the same interfaces as GLMEnergy and agrees with it
// on float32-representable covariates as LogisticRegression32 agrees with
// LogisticRegression. Build one with NewGLM32.
type GLMEnergy32 struct {
	rows32
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
	if err := dataRows("NewGLM32", x, len(y), d); err != nil {
		return nil, err
	}
	if err := finiteVec("NewGLM32: y", y); err != nil {
		return nil, err
	}
	if v, ok := family.(GLMValidator); ok {
		if err := v.Validate(y); err != nil {
			return nil, fmt.Errorf("exactmh: NewGLM32 (%T): %w", family, err)
		}
	}
	e := &GLMEnergy32{rows32: rows32{x: x, d: d}, base: GLMEnergy{y: y, d: d, family: family}}
	e.base.ranger, _ = family.(GLMLossRanger)
	return e, nil
}

// Len returns the number of data.
func (e *GLMEnergy32) Len() int { return len(e.base.y) }

// Dim returns the number of covariates d.
func (e *GLMEnergy32) Dim() int { return e.d }

// Row returns x_i converted to float64, a new slice: it allocates d
// float64s per call. The package's kernels and set-up passes never call it.
func (e *GLMEnergy32) Row(i int) []float64 { return e.row(i) }

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
	for lo, hi := range warmBlocks(dst, e.x, e.d, y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = f.Loss(y[i], dotConv(e.at(i), theta))
		}
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *GLMEnergy32) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	f, y := e.base.family, e.base.y
	for lo, hi := range warmBlocks(dst, e.x, e.d, y, idx) {
		for k, i := range idx[lo:hi] {
			z, zn := dot2Conv(e.at(i), theta, thetaNew)
			dst[lo+k] = f.Loss(y[i], z) - f.Loss(y[i], zn)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·f′(y_i, z_i)·x_i
// to grad for i = idx[k], computing z_i = x_iᵀθ once per datum.
func (e *GLMEnergy32) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	f, y := e.base.family, e.base.y
	for k, i := range idx {
		row := e.at(i)
		z := dotConv(row, theta)
		dst[k] = f.Loss(y[i], z)
		f1, _ := f.LossDerivs(y[i], z)
		axpyConv(grad, w[k]*f1, row)
	}
}

// AddGradient adds Σ_k w[k]·f′(y_i, x_iᵀθ)·x_i to grad.
func (e *GLMEnergy32) AddGradient(grad, theta []float64, idx []int, w []float64) {
	f, y := e.base.family, e.base.y
	for k, i := range idx {
		row := e.at(i)
		f1, _ := f.LossDerivs(y[i], dotConv(row, theta))
		axpyConv(grad, w[k]*f1, row)
	}
}

// DiffBound returns GLMDiffBound(e, prior).
func (e *GLMEnergy32) DiffBound(prior Prior) (*DiffBound, error) { return GLMDiffBound(e, prior) }

// EnergyRange returns what GLMEnergy.EnergyRange returns: the family's
// exact range if it implements GLMLossRanger, GLMEnergyRange otherwise.
func (e *GLMEnergy32) EnergyRange(prior Prior) (*EnergyRange, error) {
	return e.base.energyRange(e, prior)
}

// TaylorBound returns GLMTaylorBound(e, order, prior).
func (e *GLMEnergy32) TaylorBound(order int, prior Prior) ([]float64, error) {
	return GLMTaylorBound(e, order, prior)
}

// FlyBound returns GLMFlyBound(e, at, prior).
func (e *GLMEnergy32) FlyBound(at []float64, prior Prior) (FlyBound, error) {
	return GLMFlyBound(e, at, prior)
}

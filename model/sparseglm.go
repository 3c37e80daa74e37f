// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"fmt"
	"math"
	mathbits "math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
	"github.com/exactmh/exactmh/sparse"
)

// LogisticFamily is the GLMFamily of logistic regression: labels
// y ∈ {0, 1} with P(y = 1) = σ(z),
//
//	f(y, z) = softplus(z) − y·z,  f′ = σ(z) − y,  f″ = σ(1 − σ),
//	f‴ = σ(1 − σ)(1 − 2σ),
//
// computed through a softplus that never overflows. |f′| < 1, f″ ≤ ¼ and
// |f‴| ≤ 1/(6√3) on the whole line (the maximum of s(1 − s)(1 − 2s) over
// s ∈ [0, 1], at s = ½ ± 1/(2√3)), so every bound the kernels need is
// finite on an unbounded support.
type LogisticFamily struct{}

// logisticF3 is sup_z |f‴| of the logistic loss, 1/(6√3).
var logisticF3 = 1 / (6 * math.Sqrt(3))

// Validate checks that every response is 0 or 1.
func (LogisticFamily) Validate(y []float64) error {
	for i, v := range y {
		if v != 0 && v != 1 {
			return fmt.Errorf("LogisticFamily: label y[%d] = %v, want 0 or 1", i, v)
		}
	}
	return nil
}

// Loss returns softplus(z) − y·z.
func (LogisticFamily) Loss(y, z float64) float64 {
	return max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - y*z
}

// LossDerivs returns σ(z) − y and σ(z)(1 − σ(z)).
func (LogisticFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	s := sigmoid(z)
	return s - y, s * (1 - s)
}

// LossAndDeriv returns Loss and LossDerivs's f′ from one e^{−|z|}, the
// exponential both take (sigmoid's e^{−z} for z ≥ 0, e^z below).
func (LogisticFamily) LossAndDeriv(y, z float64) (f, f1 float64) {
	e := math.Exp(-math.Abs(z))
	f = max(z, 0) + math.Log1p(e) - y*z
	if z >= 0 {
		return f, 1/(1+e) - y
	}
	return f, e/(1+e) - y
}

// LossBound returns sup |f^{(k)}| over lo ≤ z ≤ hi: for k = 1 the larger
// of |σ − y| at the two ends (σ is monotone), for k = 2 σ(1 − σ) at the
// point of the interval nearest 0, for k = 3 the global 1/(6√3).
func (LogisticFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	switch k {
	case 1:
		return math.Max(math.Abs(sigmoid(lo)-y), math.Abs(sigmoid(hi)-y))
	case 2:
		z := math.Min(math.Max(0, lo), hi)
		s := sigmoid(z)
		return s * (1 - s)
	case 3:
		return logisticF3
	}
	return math.Inf(1)
}

// LossDeriv3 returns f‴(y, z) = σ(1 − σ)(1 − 2σ), for GroupGibbs's
// cross-cubic control variate (GLMCuber).
func (LogisticFamily) LossDeriv3(_, z float64) float64 {
	s := sigmoid(z)
	return s * (1 - s) * (1 - 2*s)
}

// LossBound4 returns 1/8 ≥ |f⁗(y, z)| for every z: f⁗ = p(1 − 6p) with
// p = σ(1 − σ) ∈ (0, ¼], whose extremes are −⅛ at p = ¼ and 1/24 at
// p = 1/12 (TestLossCubers checks it on a grid).
func (LogisticFamily) LossBound4(_, _, _ float64) float64 { return 0.125 }

// LossRange returns the range of f(y, ·) over [lo, hi]: f is monotone in z
// for y ∈ {0, 1}.
func (f LogisticFamily) LossRange(y, lo, hi float64) (lower, upper float64) {
	a, b := f.Loss(y, lo), f.Loss(y, hi)
	return math.Min(a, b), math.Max(a, b)
}

// sigmoid returns 1/(1 + e^−z) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// SparseRows is an N×D matrix stored by rows in compressed sparse row form:
// the entries of row i are Val[RowPtr[i]:RowPtr[i+1]] in the columns
// Col[RowPtr[i]:RowPtr[i+1]], strictly ascending. The column indices are
// int32 (D ≤ exactmh.MaxDim < 2³¹), the values float64 or float32: a
// multilevel row of p fixed effects and one block per grouping factor costs
// (p + Σq_k)·(4 + sizeof(T)) bytes, against D·sizeof(T) dense.
type SparseRows[T float32 | float64] struct {
	N, D   int
	RowPtr []int
	Col    []int32
	Val    []T
}

// Validate checks the shape, the row pointers, that the columns of each
// row are strictly ascending in [0, D), and that every value is finite,
// naming the first row and entry that is not.
func (r *SparseRows[T]) Validate() error {
	switch {
	case r == nil:
		return errors.New("model: nil SparseRows")
	case r.N <= 0:
		return fmt.Errorf("model: SparseRows: N = %d, want > 0", r.N)
	case r.D <= 0 || r.D > exactmh.MaxDim:
		return fmt.Errorf("model: SparseRows: D = %d, want in [1, MaxDim = %d]", r.D, exactmh.MaxDim)
	case len(r.RowPtr) != r.N+1:
		return fmt.Errorf("model: SparseRows: len(RowPtr) = %d, want N + 1 = %d", len(r.RowPtr), r.N+1)
	case r.RowPtr[0] != 0:
		return fmt.Errorf("model: SparseRows: RowPtr[0] = %d, want 0", r.RowPtr[0])
	case r.RowPtr[r.N] != len(r.Col) || len(r.Col) != len(r.Val):
		return fmt.Errorf("model: SparseRows: RowPtr[N] = %d, len(Col) = %d, len(Val) = %d, want all equal", r.RowPtr[r.N], len(r.Col), len(r.Val))
	}
	for i := range r.N {
		lo, hi := r.RowPtr[i], r.RowPtr[i+1]
		if hi < lo || hi > len(r.Col) {
			return fmt.Errorf("model: SparseRows: row %d spans [%d, %d), want ascending within [0, %d]", i, lo, hi, len(r.Col))
		}
		prev := int32(-1)
		for k := lo; k < hi; k++ {
			c := r.Col[k]
			if c <= prev || int(c) >= r.D {
				return fmt.Errorf("model: SparseRows: row %d, entry %d: column %d after %d, want strictly ascending in [0, D = %d)", i, k-lo, c, prev, r.D)
			}
			prev = c
			if v := float64(r.Val[k]); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("model: SparseRows: row %d, column %d: value %v is not finite", i, c, v)
			}
		}
	}
	return nil
}

// SparseGLM is the energy of a generalised linear model whose rows are
// sparse,
//
//	U_i(θ) = f(y_i, x_iᵀθ + o_i),
//
// f from a GLMFamily, x_i the i-th row of a SparseRows and o_i an offset
// (the log exposure of a Poisson rate). It is the data term of a
// multilevel model (NewMultilevel), whose rows hold the fixed effects and
// one block per grouping factor, and of any GLM with a high-cardinality
// categorical covariate. Every evaluation reads only the row's stored
// entries: O(nnz(x_i)) per datum whatever the dimension.
//
// It implements exactmh.Energy, EnergyDiffer, Gradienter (∇U_i =
// f′·x_i), EnergyGradienter, the sparse Hessian Σ_i f″·x_ix_iᵀ
// (SparseHessian, in O(Σ_i nnz(x_i)²)), and the GLM bounds of
// TunaMH/TFMH (DiffBound: c_i = sup|f′|·‖x_i‖₂) and SMH (TaylorBound:
// b_i = sup|f^{(k+1)}|·max_j|x_ij|^{k+1}), the suprema over the z-range of
// the prior's support: the whole line unless the prior is a *Box
// or *Ball. It does not implement exactmh.GLM, whose Row returns a
// dense x_i. A SparseGLM is read-only after construction and safe for
// concurrent use.
type SparseGLM[T float32 | float64] struct {
	rows   SparseRows[T]
	y      []float64
	offset []float64 // nil: no offset
	weight []float64 // nil: every datum's weight 1
	family GLMFamily
	open   func() RowReader // SetRowReaders; nil: RowView returns nil

	hessOnce sync.Once
	hess     *hessPattern
	hessDone atomic.Bool // hess is set
}

// NewSparseGLM returns the GLM energy U_i(θ) = f(y_i, x_iᵀθ + o_i) of the
// sparse rows x, responses y, offsets (nil for none) and family. The
// slices are kept, not copied. It checks the rows (SparseRows.Validate),
// that y and the offsets are finite and of length N and, if the family
// implements GLMValidator, that it accepts y.
func NewSparseGLM[T float32 | float64](x SparseRows[T], y, offset []float64, family GLMFamily) (*SparseGLM[T], error) {
	return NewWeightedSparseGLM(x, y, offset, nil, family)
}

// NewWeightedSparseGLM is NewSparseGLM with a weight w_i > 0 on each
// datum's energy, U_i(θ) = w_i·f(y_i, x_iᵀθ + o_i) (nil: every weight 1):
// a binomial response's trials with BinomialFamily, whose y_i is the
// fraction of successes. Every per-datum method (Loss, LossDerivs, the
// bounds LossBound, LossBound4, LossGrowth, the Hessian) is the family's
// times w_i, so GroupGibbs and the bounds built from them see the
// weighted energy.
func NewWeightedSparseGLM[T float32 | float64](x SparseRows[T], y, offset, weight []float64, family GLMFamily) (*SparseGLM[T], error) {
	if family == nil {
		return nil, errors.New("model: NewSparseGLM: nil family")
	}
	if err := x.Validate(); err != nil {
		return nil, fmt.Errorf("model: NewSparseGLM: %w", err)
	}
	if len(y) != x.N {
		return nil, fmt.Errorf("model: NewSparseGLM: len(y) = %d, want N = %d", len(y), x.N)
	}
	if offset != nil && len(offset) != x.N {
		return nil, fmt.Errorf("model: NewSparseGLM: len(offset) = %d, want N = %d (or nil)", len(offset), x.N)
	}
	if weight != nil && len(weight) != x.N {
		return nil, fmt.Errorf("model: NewSparseGLM: len(weight) = %d, want N = %d (or nil)", len(weight), x.N)
	}
	for i, w := range weight {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("model: NewSparseGLM: weight[%d] = %v, want finite > 0", i, w)
		}
	}
	for _, v := range [2]struct {
		name string
		s    []float64
	}{{"y", y}, {"offset", offset}} {
		for i, f := range v.s {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("model: NewSparseGLM: %s[%d] = %v is not finite", v.name, i, f)
			}
		}
	}
	if v, ok := family.(GLMValidator); ok {
		if err := v.Validate(y); err != nil {
			return nil, fmt.Errorf("model: NewSparseGLM (%T): %w", family, err)
		}
	}
	return &SparseGLM[T]{rows: x, y: y, offset: offset, weight: weight, family: family}, nil
}

// wt returns datum i's weight w_i (1 without weights).
func (e *SparseGLM[T]) wt(i int) float64 {
	if e.weight == nil {
		return 1
	}
	return e.weight[i]
}

// Weight returns w_i, datum i's weight (1 without weights).
func (e *SparseGLM[T]) Weight(i int) float64 { return e.wt(i) }

// Len returns the number of data N.
func (e *SparseGLM[T]) Len() int { return e.rows.N }

// Dim returns the dimension of θ.
func (e *SparseGLM[T]) Dim() int { return e.rows.D }

// Family returns the family the energy was built with.
func (e *SparseGLM[T]) Family() GLMFamily { return e.family }

// Probit reports whether the energy is probit regression's with unit
// weights, U_i = −log Φ((2y_i − 1)·η_i), y_i ∈ {0, 1} (ProbitFamily, no
// weights): the model whose latent-variable form z_i ~ N(η_i, 1), y_i =
// 1{z_i > 0}, GroupGibbs's data-augmentation sweep samples
// (multilevel.ProbitGLM).
func (e *SparseGLM[T]) Probit() bool {
	_, ok := e.family.(ProbitFamily)
	return ok && e.weight == nil
}

// Logit reports whether the energy is logistic regression on binomial
// counts, U_i = n_i·(softplus(η_i) − y_i·η_i) (LogisticFamily, or
// BinomialFamily with the logit link and y_i the fraction of successes),
// every weight n_i a whole number from 1 to 2²⁰: the model whose
// Pólya–Gamma form ω_i ~ PG(n_i, η_i) makes the likelihood Gaussian in η
// (Polson, Scott and Windle, JASA 108, 2013), which GroupGibbs's
// augmentation sweep samples (multilevel.LogitGLM; docs/multilevel.md,
// "Logistic by Pólya–Gamma augmentation").
func (e *SparseGLM[T]) Logit() bool {
	switch f := e.family.(type) {
	case LogisticFamily:
	case BinomialFamily:
		if _, ok := f.Link.(LogisticFamily); !ok {
			return false
		}
	default:
		return false
	}
	for _, w := range e.weight {
		if !(w >= 1 && w <= 1<<20) || w != math.Trunc(w) {
			return false
		}
	}
	return true
}

// Rows returns the sparse rows (not a copy: the caller must not modify
// them).
func (e *SparseGLM[T]) Rows() *SparseRows[T] { return &e.rows }

// Response returns y_i.
func (e *SparseGLM[T]) Response(i int) float64 { return e.y[i] }

// Offset returns o_i (0 without offsets).
func (e *SparseGLM[T]) Offset(i int) float64 {
	if e.offset == nil {
		return 0
	}
	return e.offset[i]
}

// Eta returns the linear predictor x_iᵀθ + o_i.
func (e *SparseGLM[T]) Eta(i int, theta []float64) float64 {
	z := e.Offset(i)
	r := &e.rows
	lo, hi := r.RowPtr[i], r.RowPtr[i+1]
	col, val := r.Col[lo:hi], r.Val[lo:hi]
	for k, c := range col {
		z += float64(val[k]) * theta[c]
	}
	return z
}

// eta2 returns the linear predictors of datum i at θ and θ′, reading the
// row once.
func (e *SparseGLM[T]) eta2(i int, theta, thetaNew []float64) (z, zn float64) {
	z = e.Offset(i)
	zn = z
	r := &e.rows
	lo, hi := r.RowPtr[i], r.RowPtr[i+1]
	col, val := r.Col[lo:hi], r.Val[lo:hi]
	for k, c := range col {
		v := float64(val[k])
		z += v * theta[c]
		zn += v * thetaNew[c]
	}
	return z, zn
}

// addRow adds a·x_i to grad.
func (e *SparseGLM[T]) addRow(grad []float64, a float64, i int) {
	r := &e.rows
	lo, hi := r.RowPtr[i], r.RowPtr[i+1]
	col, val := r.Col[lo:hi], r.Val[lo:hi]
	for k, c := range col {
		grad[c] += a * float64(val[k])
	}
}

// SparseRow appends the columns and values of row i to cols and vals
// (multilevel.SparseRowGLM).
func (e *SparseGLM[T]) SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64) {
	r := &e.rows
	lo, hi := r.RowPtr[i], r.RowPtr[i+1]
	cols = append(cols, r.Col[lo:hi]...)
	for _, v := range r.Val[lo:hi] {
		vals = append(vals, float64(v))
	}
	return cols, vals
}

// LinearPredictors returns x_iᵀθ + o_i and x_iᵀθ′ + o_i, reading the row
// once (multilevel.SparseRowGLM).
func (e *SparseGLM[T]) LinearPredictors(i int, theta, thetaNew []float64) (z, zn float64) {
	return e.eta2(i, theta, thetaNew)
}

// Loss returns f(y_i, z), z the linear predictor with the offset: U_i(θ) =
// Loss(i, Eta(i, θ)).
func (e *SparseGLM[T]) Loss(i int, z float64) float64 { return e.wt(i) * e.family.Loss(e.y[i], z) }

// LossDerivs returns f′(y_i, z) and f″(y_i, z).
func (e *SparseGLM[T]) LossDerivs(i int, z float64) (f1, f2 float64) {
	f1, f2 = e.family.LossDerivs(e.y[i], z)
	w := e.wt(i)
	return w * f1, w * f2
}

// LossBound returns the family's bound on sup |f^{(k)}(y_i, z)| over
// lo ≤ z ≤ hi.
func (e *SparseGLM[T]) LossBound(i, k int, lo, hi float64) float64 {
	return e.wt(i) * e.family.LossBound(e.y[i], k, lo, hi)
}

// LossDeriv3 returns f‴(y_i, z) where the family is a GLMCuber, else NaN.
func (e *SparseGLM[T]) LossDeriv3(i int, z float64) float64 {
	return e.wt(i) * familyDeriv3(e.family, e.y[i], z)
}

// LossBound4 returns the family's bound on sup |f⁗(y_i, z)| over
// lo ≤ z ≤ hi where it is a GLMCuber, else +Inf.
func (e *SparseGLM[T]) LossBound4(i int, lo, hi float64) float64 {
	return e.wt(i) * familyBound4(e.family, e.y[i], lo, hi)
}

// LossGrowth returns the family's A(y_i, z₀) of GLMLossGrower, |f‴(y_i, z)|
// ≤ A·e^{|z − z₀|}, or ok false if the family has none: it gives
// multilevel.GroupGibbs its pair-wise bound for a family whose f‴ is
// unbounded (PoissonFamily).
func (e *SparseGLM[T]) LossGrowth(i int, z0 float64) (float64, bool) {
	a, ok := familyGrowth(e.family, e.y[i], z0)
	return e.wt(i) * a, ok
}

// LossGrowth4 returns the family's A₄(y_i, z₀), |f⁗(y_i, z)| ≤
// A₄·e^{|z − z₀|} for every z (PoissonFamily's LossGrowth4 method), or ok
// false if the family has none: GroupGibbs's cross-cubic control variate
// under the pair-wise bound.
func (e *SparseGLM[T]) LossGrowth4(i int, z0 float64) (float64, bool) {
	a, ok := familyGrowth4(e.family, e.y[i], z0)
	return e.wt(i) * a, ok
}

func familyGrowth4(f GLMFamily, y, z0 float64) (float64, bool) {
	g, ok := f.(interface{ LossGrowth4(y, z0 float64) float64 })
	if !ok {
		return 0, false
	}
	return g.LossGrowth4(y, z0), true
}

func familyGrowth(f GLMFamily, y, z0 float64) (float64, bool) {
	g, ok := f.(GLMLossGrower)
	if !ok {
		return 0, false
	}
	return g.LossGrowth(y, z0), true
}

// GLMCuber is an optional method set of a GLMFamily: its third derivative
// and a bound on its fourth, for the cross-cubic control variate of
// multilevel.GroupGibbs's fixed-effect block (a SparseGLM of such a family
// has LossDeriv3 and LossBound4). LogisticFamily and ProbitFamily
// implement it.
type GLMCuber interface {
	// LossDeriv3 returns ∂³f/∂z³ at (y, z).
	LossDeriv3(y, z float64) float64
	// LossBound4 returns an upper bound on sup |∂⁴f(y, z)/∂z⁴| over
	// lo ≤ z ≤ hi, or +Inf; lo may be −Inf and hi +Inf.
	LossBound4(y, lo, hi float64) float64
}

func familyDeriv3(f GLMFamily, y, z float64) float64 {
	if c, ok := f.(GLMCuber); ok {
		return c.LossDeriv3(y, z)
	}
	return math.NaN()
}

func familyBound4(f GLMFamily, y, lo, hi float64) float64 {
	if c, ok := f.(GLMCuber); ok {
		return c.LossBound4(y, lo, hi)
	}
	return math.Inf(1)
}

// RowReader reads single rows of the design behind a SparseGLM's rows
// from their file (data.SparseRowReader, with pread): the columns and
// values of row i appended to cols and vals, y_i and o_i, or an error
// naming the row.
type RowReader interface {
	ReadRow(i int, cols []int32, vals []float64) ([]int32, []float64, float64, float64, error)
}

// SetRowReaders makes RowView read rows with a reader from open (one per
// view): for rows in a mapped file (data.SparseStore.RowReader), whose
// mapping a kernel drawing rows at random places would otherwise bring
// into the process's resident set page by page. open's readers must read
// the rows, responses and offsets the energy was built with. Call it
// before sampling; it does not change any other method.
func (e *SparseGLM[T]) SetRowReaders(open func() RowReader) { e.open = open }

// RowView returns, after SetRowReaders, an energy for one goroutine whose
// per-datum methods (SparseRow, LinearPredictors, Loss, LossDerivs,
// LossBound) read row i with its own reader into its own buffers, once
// for consecutive calls on the same row; the other methods are e's. A
// read error makes those methods return NaN (SparseRow: no entries) and
// is kept for the view's Err. Without SetRowReaders it returns nil. Used
// by multilevel.GroupGibbs for the data it draws.
func (e *SparseGLM[T]) RowView() multilevel.SparseRowGLM {
	if e.open == nil {
		return nil
	}
	return &rowView[T]{SparseGLM: e, r: e.open(), cur: -1}
}

// rowView is SparseGLM.RowView's energy.
type rowView[T float32 | float64] struct {
	*SparseGLM[T]
	r      RowReader
	cur    int // the row in cols, vals, y, off; −1 none
	cols   []int32
	vals   []float64
	y, off float64
	err    error
}

// load reads row i unless it is the current one and reports whether it
// is there.
func (v *rowView[T]) load(i int) bool {
	if i == v.cur {
		return true
	}
	v.cur = -1
	var err error
	v.cols, v.vals, v.y, v.off, err = v.r.ReadRow(i, v.cols[:0], v.vals[:0])
	if err != nil {
		if v.err == nil {
			v.err = fmt.Errorf("model: SparseGLM: %w", err)
		}
		return false
	}
	v.cur = i
	return true
}

// Err returns the first read error of the view, or nil.
func (v *rowView[T]) Err() error { return v.err }

// SparseRow appends row i's entries to cols and vals.
func (v *rowView[T]) SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64) {
	if !v.load(i) {
		return cols, vals
	}
	return append(cols, v.cols...), append(vals, v.vals...)
}

// LinearPredictors returns x_iᵀθ + o_i and x_iᵀθ′ + o_i.
func (v *rowView[T]) LinearPredictors(i int, theta, thetaNew []float64) (z, zn float64) {
	if !v.load(i) {
		return math.NaN(), math.NaN()
	}
	z, zn = v.off, v.off
	for k, c := range v.cols {
		z += v.vals[k] * theta[c]
		zn += v.vals[k] * thetaNew[c]
	}
	return z, zn
}

// Loss returns f(y_i, z).
func (v *rowView[T]) Loss(i int, z float64) float64 {
	if !v.load(i) {
		return math.NaN()
	}
	return v.wt(i) * v.family.Loss(v.y, z)
}

// LossDerivs returns f′(y_i, z) and f″(y_i, z).
func (v *rowView[T]) LossDerivs(i int, z float64) (f1, f2 float64) {
	if !v.load(i) {
		return math.NaN(), math.NaN()
	}
	f1, f2 = v.family.LossDerivs(v.y, z)
	w := v.wt(i)
	return w * f1, w * f2
}

// LossBound returns the family's bound on sup |f^{(k)}(y_i, z)|.
func (v *rowView[T]) LossBound(i, k int, lo, hi float64) float64 {
	if !v.load(i) {
		return math.NaN()
	}
	return v.wt(i) * v.family.LossBound(v.y, k, lo, hi)
}

// LossDeriv3 returns f‴(y_i, z) where the family is a GLMCuber, else NaN.
func (v *rowView[T]) LossDeriv3(i int, z float64) float64 {
	if !v.load(i) {
		return math.NaN()
	}
	return v.wt(i) * familyDeriv3(v.family, v.y, z)
}

// LossGrowth returns the family's A(y_i, z₀) of GLMLossGrower, or ok false.
func (v *rowView[T]) LossGrowth(i int, z0 float64) (float64, bool) {
	if !v.load(i) {
		return math.NaN(), true
	}
	a, ok := familyGrowth(v.family, v.y, z0)
	return v.wt(i) * a, ok
}

// LossGrowth4 returns the family's A₄(y_i, z₀), or ok false.
func (v *rowView[T]) LossGrowth4(i int, z0 float64) (float64, bool) {
	if !v.load(i) {
		return math.NaN(), true
	}
	a, ok := familyGrowth4(v.family, v.y, z0)
	return v.wt(i) * a, ok
}

// LossBound4 returns the family's bound on sup |f⁗(y_i, z)|, or +Inf.
func (v *rowView[T]) LossBound4(i int, lo, hi float64) float64 {
	if !v.load(i) {
		return math.NaN()
	}
	return v.wt(i) * familyBound4(v.family, v.y, lo, hi)
}

// Energies sets dst[k] = f(y_i, x_iᵀθ + o_i) for i = idx[k].
func (e *SparseGLM[T]) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.wt(i) * e.family.Loss(e.y[i], e.Eta(i, theta))
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′) for i = idx[k], reading x_i
// once.
func (e *SparseGLM[T]) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		z, zn := e.eta2(i, theta, thetaNew)
		dst[k] = e.wt(i) * (e.family.Loss(e.y[i], z) - e.family.Loss(e.y[i], zn))
	}
}

// AddGradient adds Σ_k w[k]·f′(y_i, x_iᵀθ + o_i)·x_i to grad.
func (e *SparseGLM[T]) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		f1, _ := e.family.LossDerivs(e.y[i], e.Eta(i, theta))
		e.addRow(grad, w[k]*(e.wt(i)*f1), i)
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing the linear predictor once per datum (and f
// with f′ together where the family is a GLMLossDeriver).
func (e *SparseGLM[T]) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	if fd, ok := e.family.(GLMLossDeriver); ok {
		for k, i := range idx {
			f, f1 := fd.LossAndDeriv(e.y[i], e.Eta(i, theta))
			wt := e.wt(i)
			dst[k] = wt * f
			e.addRow(grad, w[k]*(wt*f1), i)
		}
		return
	}
	for k, i := range idx {
		z := e.Eta(i, theta)
		dst[k] = e.wt(i) * e.family.Loss(e.y[i], z)
		f1, _ := e.family.LossDerivs(e.y[i], z)
		e.addRow(grad, w[k]*(e.wt(i)*f1), i)
	}
}

// zRange returns the range of x_iᵀθ + o_i over the prior's support: finite
// on a *Box or *Ball, the whole line otherwise.
func (e *SparseGLM[T]) zRange(i int, prior exactmh.Prior) (lo, hi float64) {
	r := &e.rows
	o := e.Offset(i)
	a, b := r.RowPtr[i], r.RowPtr[i+1]
	switch p := prior.(type) {
	case *Box:
		lo, hi = o, o
		for k := a; k < b; k++ {
			v, c := float64(r.Val[k]), r.Col[k]
			lo += math.Min(v*p.Lo[c], v*p.Hi[c])
			hi += math.Max(v*p.Lo[c], v*p.Hi[c])
		}
		return lo, hi
	case *Ball:
		m := o
		var s float64
		for k := a; k < b; k++ {
			v := float64(r.Val[k])
			if p.Center != nil {
				m += v * p.Center[r.Col[k]]
			}
			s += v * v
		}
		w := p.Radius * math.Sqrt(s)
		return m - w, m + w
	}
	return math.Inf(-1), math.Inf(1)
}

// checkPrior returns an error if a Box or Ball prior is not of the
// energy's dimension.
func (e *SparseGLM[T]) checkPrior(who string, prior exactmh.Prior) error {
	d := e.rows.D
	switch p := prior.(type) {
	case *Box:
		if len(p.Lo) != d || len(p.Hi) != d {
			return fmt.Errorf("model: SparseGLM.%s: Box of dimension %d, want %d", who, len(p.Lo), d)
		}
	case *Ball:
		if p.Center != nil && len(p.Center) != d {
			return fmt.Errorf("model: SparseGLM.%s: Ball centre of dimension %d, want %d", who, len(p.Center), d)
		}
	}
	return nil
}

// lossBound returns the family's bound on sup|f^{(k)}(y_i, ·)| over the
// z-range of datum i, or an error naming the datum when it is not finite.
func (e *SparseGLM[T]) lossBound(who string, i, k int, prior exactmh.Prior) (float64, error) {
	lo, hi := e.zRange(i, prior)
	s := e.wt(i) * e.family.LossBound(e.y[i], k, lo, hi)
	if s >= 0 && !math.IsInf(s, 1) {
		return s, nil
	}
	return 0, fmt.Errorf("model: SparseGLM.%s: %T bounds |f^(%d)| of datum %d over z ∈ [%v, %v] by %v: use a family with bounded derivatives or a bounded prior support (Box or Ball)",
		who, e.family, k, i, lo, hi, s)
}

// DiffBound returns TunaMH's and TFMH's bound |U_i(θ) − U_i(θ′)| ≤
// c_i·‖θ − θ′‖₂ with c_i = sup|f′|·‖x_i‖₂ (mean-value theorem and
// Cauchy–Schwarz), the supremum over the z-range of datum i on the prior's
// support. It fails, naming the datum, where that supremum is infinite
// (the Gaussian and Poisson losses on an unbounded support).
func (e *SparseGLM[T]) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	if err := e.checkPrior("DiffBound", prior); err != nil {
		return nil, err
	}
	c := make([]float64, e.rows.N)
	for i := range c {
		s, err := e.lossBound("DiffBound", i, 1, prior)
		if err != nil {
			return nil, err
		}
		c[i] = s * e.rowNorm(i)
	}
	return &exactmh.DiffBound{C: c}, nil
}

// rowNorm returns ‖x_i‖₂.
func (e *SparseGLM[T]) rowNorm(i int) float64 {
	var s float64
	for _, v := range e.rows.Val[e.rows.RowPtr[i]:e.rows.RowPtr[i+1]] {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// TaylorBound returns SMH's remainder bounds b_i = sup|f^{(k+1)}|·
// (max_j |x_ij|)^{k+1} for order k ∈ {1, 2} (every (k+1)-th partial
// derivative of U_i is f^{(k+1)}·x_{ij1}⋯x_{ij(k+1)}), the supremum over
// the z-range of datum i on the prior's support. A zero bound is replaced
// by the smallest positive float64, since SMH draws data in proportion to
// b_i.
func (e *SparseGLM[T]) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("model: SparseGLM.TaylorBound: order %d, want 1 or 2", order)
	}
	if err := e.checkPrior("TaylorBound", prior); err != nil {
		return nil, err
	}
	b := make([]float64, e.rows.N)
	for i := range b {
		s, err := e.lossBound("TaylorBound", i, order+1, prior)
		if err != nil {
			return nil, err
		}
		var m float64
		for _, v := range e.rows.Val[e.rows.RowPtr[i]:e.rows.RowPtr[i+1]] {
			m = math.Max(m, math.Abs(float64(v)))
		}
		b[i] = s * math.Pow(m, float64(order+1))
		if b[i] == 0 {
			b[i] = math.SmallestNonzeroFloat64
		}
	}
	return b, nil
}

// hessPattern is the lower-triangle pattern of Σ_i x_ix_iᵀ and the
// maps that SparseHessian fills it through. The energy keeps O(nnz(H) +
// d), not O(nnz(X)), between Hessians, which matters for rows in a
// mapped store larger than the heap should be.
type hessPattern struct {
	colPtr []int
	rowIdx []int
	// Where SparseHessian adds a row's products: for a column j of more
	// than denseRows entries (a fixed effect's, which most rows share),
	// entry (c, j) is at colPtr[j] + inv[dense[j]·D + c]; for the others
	// (dense[j] = −1) a search down the column, whose rows ascend as the
	// row's columns do (binary beyond walkRows entries).
	dense []int32
	inv   []int32
}

// denseRows is the number of entries above which a column of the
// Hessian's pattern gets an inverse map (D int32s), and maxInverse the
// most inverse-map entries kept (the columns with the most entries first).
const denseRows, maxInverse = 32, 1 << 24

// walkRows is the longest stretch of a column SparseHessian walks to find
// an entry; it binary-searches a longer one.
const walkRows = 16

// tailChunkRows and minTailChunk set the budget of buildPattern's column
// ranges: max(tailChunkRows·N, minTailChunk, the largest column's tails)
// buffered entries a pass (variables for TestSparseHessianChunks).
var tailChunkRows, minTailChunk = 2, 1 << 16

// markShare and maxMarkBits: a column of at least max(N/markShare, 1)
// rows (a fixed effect's, which most rows share) marks its pattern in a
// bitset of D bits, the most rows first, within maxMarkBits bits in all;
// markShare 0 marks none (a variable for TestSparseHessianChunks).
var markShare = 64

const maxMarkBits = 1 << 28

// tailChunks returns the column ranges [c[k], c[k+1]) whose rows' tails
// buildPattern buffers one range at a time, from each column's count of
// buffered entries.
func tailChunks(tails []int, n int) []int {
	budget := max(tailChunkRows*n, minTailChunk)
	for _, t := range tails {
		budget = max(budget, t)
	}
	c := []int{0}
	var sum int
	for j, t := range tails {
		if sum+t > budget {
			c = append(c, j)
			sum = 0
		}
		sum += t
	}
	return append(c, len(tails))
}

// pattern builds (once) the Hessian's pattern: column j holds row c ≥ j
// when some datum has entries in both columns j and c.
func (e *SparseGLM[T]) pattern() *hessPattern {
	e.hessOnce.Do(func() {
		e.hess = e.buildPattern()
		e.hessDone.Store(true)
	})
	return e.hess
}

// buildPattern returns the Hessian's pattern (pattern). Column j is the
// union of the tails (the columns ≥ j) of the rows that have an entry in
// j. The rows are read in order only, whole passes, never one row out of
// turn: rows in a mapped store larger than memory fault a page for each
// row read out of order. The columns that most rows share (markShare,
// maxMarkBits) set their tails' bits in a bitset each in the first pass;
// the others copy their rows' tails to a buffer by column, a range of
// columns a pass (tailChunks: O(N) entries), deduplicated with a marker
// array and sorted: O(Σ_i nnz(x_i)²) time, O(nnz(H) + N + D·dense/8)
// memory.
func (e *SparseGLM[T]) buildPattern() *hessPattern {
	r := &e.rows
	d, n := r.D, r.N
	rows := make([]int, d)
	for _, c := range r.Col {
		rows[c]++
	}
	// The marked columns, most rows first.
	var long []int
	for j, k := range rows {
		if markShare > 0 && k > 0 && k >= max(n/markShare, 1) {
			long = append(long, j)
		}
	}
	slices.SortStableFunc(long, func(a, b int) int { return rows[b] - rows[a] })
	words := (d + 63) / 64
	long = long[:min(len(long), maxMarkBits/max(64*words, 1))]
	mark := make([]int, d) // a marked column's bitset, or −1
	for j := range mark {
		mark[j] = -1
	}
	for m, j := range long {
		mark[j] = m
	}
	bits := make([]uint64, len(long)*words)
	// One pass: the marked columns' bits and the others' tail counts.
	tails := make([]int, d)
	for i := range n {
		lo, hi := r.RowPtr[i], r.RowPtr[i+1]
		for k := lo; k < hi; k++ {
			j := r.Col[k]
			m := mark[j]
			if m < 0 {
				tails[j] += hi - k - 1
				continue
			}
			b := bits[m*words : (m+1)*words]
			for _, c := range r.Col[k:hi] {
				b[c>>6] |= 1 << (c & 63)
			}
		}
	}
	p := &hessPattern{colPtr: make([]int, d+1)}
	seen := make([]int32, d)
	for j := range seen {
		seen[j] = -1
	}
	chunks := tailChunks(tails, n)
	var buf []int32
	next := make([]int, d)
	for k := range len(chunks) - 1 {
		j0, j1 := chunks[k], chunks[k+1]
		// The tails of the unmarked columns of [j0, j1), one pass.
		var size int
		for j := j0; j < j1; j++ {
			next[j] = size
			size += tails[j]
		}
		if cap(buf) < size {
			buf = make([]int32, size)
		}
		buf = buf[:size]
		if size > 0 {
			lo32, hi32 := int32(j0), int32(j1)
			for i := range n {
				lo, hi := r.RowPtr[i], r.RowPtr[i+1]
				for q := lo; q < hi; q++ {
					if j := r.Col[q]; j >= lo32 && j < hi32 && mark[j] < 0 {
						next[j] += copy(buf[next[j]:], r.Col[q+1:hi])
					}
				}
			}
		}
		at := 0
		for j := j0; j < j1; j++ {
			start := len(p.rowIdx)
			if m := mark[j]; m >= 0 {
				for w, x := range bits[m*words : (m+1)*words] {
					for x != 0 {
						p.rowIdx = append(p.rowIdx, w*64+mathbits.TrailingZeros64(x))
						x &= x - 1
					}
				}
			} else if rows[j] > 0 {
				p.rowIdx = append(p.rowIdx, j)
				seen[j] = int32(j)
				for _, c := range buf[at : at+tails[j]] {
					if seen[c] != int32(j) {
						seen[c] = int32(j)
						p.rowIdx = append(p.rowIdx, int(c))
					}
				}
				slices.Sort(p.rowIdx[start:])
			}
			at += tails[j]
			p.colPtr[j+1] = len(p.rowIdx)
		}
	}
	p.index(d)
	return p
}

// index sets the inverse maps of the pattern's longest columns.
func (p *hessPattern) index(d int) {
	p.dense = make([]int32, d)
	var long []int
	for j := range d {
		p.dense[j] = -1
		if p.colPtr[j+1]-p.colPtr[j] > denseRows {
			long = append(long, j)
		}
	}
	slices.SortStableFunc(long, func(a, b int) int { return (p.colPtr[b+1] - p.colPtr[b]) - (p.colPtr[a+1] - p.colPtr[a]) })
	long = long[:min(len(long), maxInverse/max(d, 1))]
	p.inv = make([]int32, len(long)*d)
	for m, j := range long {
		p.dense[j] = int32(m)
		inv := p.inv[m*d : (m+1)*d]
		for q := p.colPtr[j]; q < p.colPtr[j+1]; q++ {
			inv[p.rowIdx[q]] = int32(q - p.colPtr[j])
		}
	}
}

// SparseHessian returns ∇²Σ_i U_i(θ) = Σ_i f″(y_i, z_i)·x_ix_iᵀ, lower
// triangle in compressed sparse columns. Its pattern, the union of the
// rows' outer products, is the same at every θ (a zero f″ is stored). One
// pass over the rows, in order: row i adds f″_i·x_ij·x_ic to entry (c, j)
// for each pair of its columns j ≤ c, found through the pattern's inverse
// maps (hessPattern), so every entry sums its terms in the order of the
// data — O(Σ_i nnz(x_i)²) time, no scratch beyond the matrix. The matrix
// is the caller's: every call returns new slices. A non-finite f″ is an
// error naming the datum.
func (e *SparseGLM[T]) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	return e.SparseHessianStop(theta, nil)
}

// ErrStopped is returned by SparseHessianStop when its stop function
// reports true.
var ErrStopped = errors.New("model: stopped")

// SparseHessianStop is SparseHessian polling stop (nil: never) once per
// 512 entries read, and returning ErrStopped as soon as it reports true: a
// pass over 10⁷ rows that a cancelled run must not wait for (the sparse
// Laplace approximation's and the multilevel centre's Newton steps call
// it through exactmh, TestInterruptSparseHessian).
func (e *SparseGLM[T]) SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error) {
	return e.sparseHessian(theta, stop, false)
}

// SparseHessianOnce is SparseHessianStop for a caller that needs the
// Hessian once: unless an earlier call built and kept it, the pattern
// (hessPattern: O(nnz(H)) indices and up to 64 MB of inverse maps) is
// built for this call and dropped after it, so the energy does not hold
// it beside the caller's matrix (GroupGibbs's set-up, whose tables must
// stay below the mapped file's size). The matrix is SparseHessian's, to
// the bit.
func (e *SparseGLM[T]) SparseHessianOnce(theta []float64, stop func() bool) (*sparse.SymCSC, error) {
	return e.sparseHessian(theta, stop, true)
}

func (e *SparseGLM[T]) sparseHessian(theta []float64, stop func() bool, once bool) (*sparse.SymCSC, error) {
	r := &e.rows
	if len(theta) != r.D {
		return nil, fmt.Errorf("model: SparseGLM.SparseHessian: len(θ) = %d, want the dimension %d", len(theta), r.D)
	}
	const every = 512
	if stop != nil && stop() {
		return nil, ErrStopped
	}
	var p *hessPattern
	var h *sparse.SymCSC
	if once && !e.hessDone.Load() {
		p = e.buildPattern()
		// The pattern's own index slices become the matrix's.
		h = &sparse.SymCSC{N: r.D, ColPtr: p.colPtr, RowIdx: p.rowIdx, Val: make([]float64, len(p.rowIdx))}
	} else {
		p = e.pattern()
		h = &sparse.SymCSC{N: r.D, ColPtr: slices.Clone(p.colPtr), RowIdx: slices.Clone(p.rowIdx), Val: make([]float64, len(p.rowIdx))}
	}
	read := 0 // entries read since stop was last polled
	for i := range r.N {
		for read += r.RowPtr[i+1] - r.RowPtr[i]; read >= every; read -= every {
			if stop != nil && stop() {
				return nil, ErrStopped
			}
		}
		z := e.Eta(i, theta)
		_, f2 := e.family.LossDerivs(e.y[i], z)
		f2 *= e.wt(i)
		if math.IsNaN(f2) || math.IsInf(f2, 0) {
			return nil, fmt.Errorf("model: SparseGLM.SparseHessian: f″ of datum %d at z = %v is %v", i, z, f2)
		}
		lo, hi := r.RowPtr[i], r.RowPtr[i+1]
		for k0 := lo; k0 < hi; k0++ {
			j := r.Col[k0]
			a := f2 * float64(r.Val[k0])
			base := p.colPtr[j]
			if m := p.dense[j]; m >= 0 {
				pos := p.inv[int(m)*r.D:]
				for k := k0; k < hi; k++ {
					h.Val[base+int(pos[r.Col[k]])] += a * float64(r.Val[k])
				}
				continue
			}
			q, end := base, p.colPtr[j+1]
			for k := k0; k < hi; k++ {
				c := int(r.Col[k])
				if end-q > walkRows {
					o, _ := slices.BinarySearch(p.rowIdx[q:end], c)
					q += o
				}
				for p.rowIdx[q] != c {
					q++
				}
				h.Val[q] += a * float64(r.Val[k])
			}
		}
	}
	return h, nil
}

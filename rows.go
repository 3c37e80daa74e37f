// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"

	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/vec"
)

// DenseGLM is the fast-path contract of a GLM whose rows and responses are
// in memory, row-major, in float64 or float32: the kernels then read x_i
// and y_i directly — TFMH's and SMH's steps, the control variates' and the
// Hessian's passes, the cache prefetch of the gathers — instead of calling
// Row (which must allocate a float64 copy of a float32 row) and, for the
// logistic loss, inline f_i instead of calling Loss through the interface.
// package model's LogisticRegression(32), GLMEnergy(32) and
// StudentTRegression implement it; a user's GLM that does gets the same
// per-datum cost (BenchmarkUserGLM).
type DenseGLM interface {
	GLM
	// DenseRows returns the data as stored. The caller does not modify
	// them.
	DenseRows() DenseRows
}

// DenseRows is a DenseGLM's data.
type DenseRows struct {
	// X holds x_1 … x_N row-major (N·d values), or is nil when X32 does.
	X []float64
	// X32 holds them in float32, converted to float64 as they are read.
	X32 []float32
	// Y holds the responses y_i, or is nil.
	Y []float64
	// Logistic declares f_i(z) = log(1 + e^z) − y_i·z with y_i = Y[i], the
	// loss that the kernels inline. They inline it only after checking it
	// against Loss on a sample of data and points (denseLogistic), so a
	// type that embeds a logistic regression and overrides Loss keeps its
	// Loss.
	Logistic bool
}

// denseRows returns e's DenseRows when e is a DenseGLM whose rows have the
// documented shape, and ok = false otherwise.
func denseRows(e Energy) (r DenseRows, ok bool) {
	dg, ok := e.(DenseGLM)
	if !ok {
		return DenseRows{}, false
	}
	r = dg.DenseRows()
	n, d := e.Len(), e.Dim()
	switch {
	case r.X != nil && r.X32 == nil && len(r.X) == n*d:
	case r.X32 != nil && r.X == nil && len(r.X32) == n*d:
	default:
		return DenseRows{}, false
	}
	if r.Y != nil && len(r.Y) != n {
		return DenseRows{}, false
	}
	return r, true
}

// denseLogistic returns e's rows when the kernels may inline the logistic
// loss for it: e declares it (DenseRows.Logistic, with responses), and its
// Loss and LossDerivs agree to rounding with the inlined expressions on up to 16 data
// spread over the set, each at z ∈ {−3, −0.5, 0, 0.5, 3}.
func denseLogistic(e Energy) (DenseRows, bool) {
	r, ok := denseRows(e)
	if !ok || !r.Logistic || r.Y == nil {
		return DenseRows{}, false
	}
	g := e.(GLM)
	n := len(r.Y)
	for k := range min(n, 16) {
		i := k * (n / min(n, 16))
		for _, z := range [...]float64{-3, -0.5, 0, 0.5, 3} {
			want := logit.Softplus(z) - r.Y[i]*z
			_, w1, w2 := logit.LossAndDerivs(r.Y[i], z)
			f1, f2 := g.LossDerivs(i, z)
			if !agree(g.Loss(i, z), want) || !agree(f1, w1) || !agree(f2, w2) {
				return DenseRows{}, false
			}
		}
	}
	return r, true
}

// agree reports whether a and b agree to rounding.
func agree(a, b float64) bool { return math.Abs(a-b) <= 1e-12*(1+math.Abs(b)) }

// rowConverterOf returns the rowConverter of g: g itself if it is one
// (cvEnergy), a float32 DenseGLM's rows, or nil for rows that Row returns
// as stored float64 slices.
func rowConverterOf(g GLM) rowConverter {
	if c, ok := g.(rowConverter); ok {
		return c
	}
	if r, ok := denseRows(g); ok && r.X32 != nil {
		return &rows32{vec.Rows32{X: r.X32, D: g.Dim()}}
	}
	return nil
}

// rows32 reads float32 rows as a rowConverter.
type rows32 struct{ vec.Rows32 }

func (r *rows32) rowDot(i int, theta []float64) float64 { return r.RowDot(i, theta) }
func (r *rows32) rowDot2(i int, a, b []float64) (float64, float64) {
	return r.RowDot2(i, a, b)
}
func (r *rows32) rowAxpy(grad []float64, alpha float64, i int) { r.RowAxpy(grad, alpha, i) }
func (r *rows32) readRow(dst []float64, i int) []float64       { return r.ReadRow(dst, i) }

// rowConverter reads the rows of a GLM whose rows are not float64 slices in
// memory (a DenseGLM with float32 rows, and cvEnergy, which wraps any GLM):
// the package's per-step
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
// been read (symm.RankAcc holds up to four).
type rowCursor struct {
	g    GLM
	conv rowConverter
	buf  []float64
	k    int
}

// newRowCursor returns the cursor of g.
func newRowCursor(g GLM) rowCursor {
	c := rowCursor{g: g}
	if conv := rowConverterOf(g); conv != nil {
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

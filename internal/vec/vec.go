// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package vec holds the dense vector kernels and data checks that the
// kernels (package exactmh) and the ready-made models (package model)
// share: inner products and axpy in float64 and from float32 rows, the
// row-major float32 matrix, the checks of data and dimensions, and the
// small vector helpers of the root package (distances, a mean and its
// standard error, L-BFGS's two-loop recursion). Both
// packages must compute the same bits from the same row (the kernels'
// inlined fast paths are tested bit for bit against the models'
// energies), so there is one copy of each loop.
package vec

import (
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/stream"
	"gonum.org/v1/gonum/floats"
)

// MaxDim is exactmh.MaxDim, the largest dimension of θ accepted.
const MaxDim = 1 << 26

// dataRows checks a row-major data matrix of n rows and d columns, in
// float64 or float32 storage.
func DataRows[T float32 | float64](name string, x []T, n, d int) error {
	if d <= 0 {
		return fmt.Errorf("exactmh: %s: dimension %d, want > 0", name, d)
	}
	if n <= 0 {
		return fmt.Errorf("exactmh: %s: no data (N = %d)", name, n)
	}
	if d > MaxDim {
		return fmt.Errorf("exactmh: %s: dimension %d, want ≤ MaxDim = %d", name, d, MaxDim)
	}
	if n > math.MaxInt/d {
		return fmt.Errorf("exactmh: %s: N·d = %d·%d overflows int (len(X) = %d)", name, n, d, len(x))
	}
	if len(x) != n*d {
		return fmt.Errorf("exactmh: %s: len(X) = %d, want N·d = %d·%d = %d", name, len(x), n, d, n*d)
	}
	return Streamed(x, d, func(lo, hi int) error {
		for k := lo * d; k < hi*d; k++ {
			if f := float64(x[k]); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("exactmh: %s: X[%d] (row %d, column %d) = %v is not finite", name, k, k/d, k%d, x[k])
			}
		}
		return nil
	})
}

// Streamed calls f on the rows [lo, hi) of x (per values a row) in
// order, a few thousand rows at a time, and returns its first error:
// one sequential pass, which reads ahead and lets go of what it has read
// where x lies in a store's file mapping (package stream), so that a
// constructor's check of a file larger than memory keeps a few windows of
// it resident rather than all of it.
func Streamed[T float32 | float64](x []T, per int, f func(lo, hi int) error) error {
	const rows = 1 << 12
	n := len(x) / per
	sp := stream.NewPass(0, n, stream.Rows(x, per))
	defer sp.End()
	for lo := 0; lo < n; lo += rows {
		sp.At(lo)
		if err := f(lo, min(n, lo+rows)); err != nil {
			return err
		}
	}
	return nil
}

// checkDim returns an error unless 0 < d ≤ MaxDim.
func CheckDim(who string, d int) error {
	if d <= 0 || d > MaxDim {
		return fmt.Errorf("exactmh: %s: dimension %d, want in [1, MaxDim = %d]", who, d, MaxDim)
	}
	return nil
}

func FiniteVec(name string, v []float64) error {
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("exactmh: %s[%d] = %v is not finite", name, k, x)
		}
	}
	return nil
}

// shortVec is the length below which dot and axpy loop in Go: there the
// call into gonum's assembly costs more than it saves (BenchmarkDatum).
const ShortVec = 16

// dot returns aᵀb (len(a) = len(b)). The data loops of every energy spend
// their time here and in axpy; for d ≥ shortVec gonum's assembly kernel
// is 2–4× faster than a scalar loop, whose one accumulator waits on the
// latency of each addition (BenchmarkDatum, d = 50 and 100).
func Dot(a, b []float64) float64 {
	if len(a) >= ShortVec {
		return floats.Dot(a, b)
	}
	b = b[:len(a)]
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}

// dot2 returns aᵀb and aᵀc, the energy differences' two inner products,
// reading a from memory once.
func Dot2(a, b, c []float64) (ab, ac float64) {
	if len(a) >= ShortVec {
		return floats.Dot(a, b), floats.Dot(a, c) // a is in cache the second time
	}
	b, c = b[:len(a)], c[:len(a)]
	for j, v := range a {
		ab += v * b[j]
		ac += v * c[j]
	}
	return ab, ac
}

// axpy adds α·x to y (len(x) = len(y)), through gonum's assembly kernel
// for d ≥ shortVec.
func Axpy(y []float64, alpha float64, x []float64) {
	if len(x) >= ShortVec {
		floats.AddScaled(y, alpha, x)
		return
	}
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * v
	}
}

func Norm2(x []float64) float64 { return math.Sqrt(Dot(x, x)) }

// dotConv returns aᵀb for float32 a, in float64. Below shortVec it is the
// loop of dot, operation for operation, so the result equals dot's on the
// converted row; from shortVec on it keeps four accumulators (dot's gonum
// kernel is not available for float32, and one accumulator would wait on
// each addition), which rounds differently from dot.
func DotConv[T float32 | float64](a []T, b []float64) float64 {
	b = b[:len(a)]
	if len(a) < ShortVec {
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
func Dot2Conv[T float32 | float64](a []T, b, c []float64) (ab, ac float64) {
	if len(a) >= ShortVec {
		return DotConv(a, b), DotConv(a, c) // a is in cache the second time
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
func AxpyConv[T float32 | float64](y []float64, alpha float64, x []T) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * float64(v)
	}
}

// rows32 is an N×d row-major float32 matrix, read in float64.
type Rows32 struct {
	X []float32
	D int
}

func (r *Rows32) At(i int) []float32 { return r.X[i*r.D : (i+1)*r.D] }

func (r *Rows32) RowDot(i int, theta []float64) float64 { return DotConv(r.At(i), theta) }

func (r *Rows32) RowDot2(i int, a, b []float64) (float64, float64) {
	return Dot2Conv(r.At(i), a, b)
}

func (r *Rows32) RowAxpy(grad []float64, alpha float64, i int) { AxpyConv(grad, alpha, r.At(i)) }

func (r *Rows32) ReadRow(dst []float64, i int) []float64 {
	dst = dst[:r.D]
	for j, v := range r.At(i) {
		dst[j] = float64(v)
	}
	return dst
}

// row returns a new float64 copy of x_i.
func (r *Rows32) Row(i int) []float64 { return r.ReadRow(make([]float64, r.D), i) }

// glmTaylorBound is s·m_i^{k+1} for every row.
func TaylorBounds[T float32 | float64](x []T, d, order int, s float64) []float64 {
	n := len(x) / d
	b := prefault.Make[float64](n)
	for i := range n {
		b[i] = RowTaylorBound(x[i*d:(i+1)*d], order, s)
	}
	return b
}

// rowTaylorBound is s·(max_j |x_j|)^{k+1}, or the smallest positive float64
// where that is 0.
func RowTaylorBound[T float32 | float64](row []T, order int, s float64) float64 {
	var m float64
	for _, v := range row {
		m = math.Max(m, math.Abs(float64(v)))
	}
	b := s * math.Pow(m, float64(order+1))
	if b == 0 {
		b = math.SmallestNonzeroFloat64 // an all-zero row never changes U_i
	}
	return b
}

// Dist returns ‖θ − θ'‖₂, the M of every bound in the papers.
func Dist(theta, thetaNew []float64) float64 {
	var s float64
	for j, v := range theta {
		d := v - thetaNew[j]
		s += d * d
	}
	return math.Sqrt(s)
}

// SqDist returns ‖a − b‖².
func SqDist(a, b []float64) float64 {
	var s float64
	for j, v := range a {
		s += (v - b[j]) * (v - b[j])
	}
	return s
}

// MeanSE returns the standard error of the mean of u.
func MeanSE(u []float64) float64 {
	mu := Mean(u)
	var ss float64
	for _, x := range u {
		ss += (x - mu) * (x - mu)
	}
	return math.Sqrt(ss / float64(len(u)-1) / float64(len(u)))
}

// Mean returns the mean of x.
func Mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// LBFGSTwoLoop returns H_k·g for the L-BFGS inverse-Hessian estimate of
// the pairs (s, y), oldest first, scaled initially by sᵀy/yᵀy of the
// newest (Nocedal & Wright, Algorithm 7.4).
func LBFGSTwoLoop(s, y [][]float64, g []float64) []float64 {
	q := slices.Clone(g)
	a := make([]float64, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		a[i] = Dot(s[i], q) / Dot(s[i], y[i])
		for j := range q {
			q[j] -= a[i] * y[i][j]
		}
	}
	k := len(s) - 1
	gamma := Dot(s[k], y[k]) / Dot(y[k], y[k])
	for j := range q {
		q[j] *= gamma
	}
	for i := range s {
		b := Dot(y[i], q) / Dot(s[i], y[i])
		for j := range q {
			q[j] += (a[i] - b) * s[i][j]
		}
	}
	return q
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package precision holds the precision H of a Gaussian N(μ, H⁻¹) with its
// Cholesky factor, dense or sparse: the one axis on which the root's
// Newton search, Laplace approximation, Crank–Nicolson proposal and
// Gaussian walk differ, so that each of them is written once over a
// Factor (as Stan writes NUTS once over its metric). The dense factor is
// gonum's; the sparse one is package sparse's H = PᵀLLᵀP under a
// fill-reducing order, O(nnz(L)) where the dense costs O(d²).
package precision

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/sparse"
	"gonum.org/v1/gonum/mat"
)

// Factor is a symmetric positive definite precision H and its Cholesky
// factor. A Factor's methods do not modify it and allocate nothing but
// what they say (Solve's scratch is its own), so it may be shared by the
// chains of a run only for Normal and Quad, which use no scratch.
type Factor interface {
	// Dim returns d, H being d×d.
	Dim() int
	// Normal sets dst to a draw ξ ~ N(0, H⁻¹) from standard normals of
	// rng: the half-solve ξ = L⁻ᵀz of H = LLᵀ (dense: ξ = Cz with CCᵀ =
	// H⁻¹), without allocating.
	Normal(rng *rand.Rand, dst []float64)
	// Quad returns (v − μ)ᵀH(v − μ), without allocating.
	Quad(v, mu []float64) float64
	// Solve sets dst = H⁻¹b.
	Solve(dst, b []float64)
	// LogDet returns log det H.
	LogDet() float64
	// InverseDiag sets dst to the diagonal of H⁻¹.
	InverseDiag(dst []float64)
	// FactorNNZ returns the factor's stored entries (d(d+1)/2 dense).
	FactorNNZ() int
	// StepMadds returns the multiply-adds of a Normal draw and two Quads,
	// a Crank–Nicolson step's work (the automatic default prices it):
	// d² dense (its whitened step, Dense.CrankNicolsonStep),
	// nnz(L) + 2·nnz(H) sparse.
	StepMadds() float64
}

// Dense is a dense Factor held as the lower Cholesky factor C of the
// covariance H⁻¹ = CCᵀ and the precision H, both d×d row-major: Normal is
// Cz and Quad a pass over H, O(d²) each.
type Dense struct {
	d    int
	C    []float64 // lower triangular, row-major
	Prec []float64 // H, row-major
}

// NewDenseCov returns the dense Factor of the covariance cov = H⁻¹, which
// must be symmetric positive definite (who names the caller in errors).
func NewDenseCov(who string, cov mat.Symmetric) (*Dense, error) {
	c, err := CholeskyRows(who, cov)
	if err != nil {
		return nil, err
	}
	d := cov.SymmetricDim()
	var ch mat.Cholesky
	ch.Factorize(cov) // succeeded in CholeskyRows
	var p mat.SymDense
	if err := ch.InverseTo(&p); err != nil {
		return nil, fmt.Errorf("exactmh: %s: inverting the covariance: %w", who, err)
	}
	prec := make([]float64, d*d)
	for j := range d {
		for k := range d {
			prec[j*d+k] = p.At(j, k)
		}
	}
	return &Dense{d: d, C: c, Prec: prec}, nil
}

// NewDense returns the dense Factor of the covariance CCᵀ from its lower
// Cholesky factor C and the precision H = (CCᵀ)⁻¹, both d×d row-major,
// which it keeps (prec may be nil: see NewDenseCovChol).
func NewDense(c, prec []float64) *Dense { return &Dense{d: SqrtLen(c), C: c, Prec: prec} }

// NewDenseCovChol returns the dense Factor of the covariance CCᵀ from its
// lower Cholesky factor C alone (row-major): Quad, which needs H, is not
// available (it panics); Normal, Solve, LogDet and InverseDiag are.
func NewDenseCovChol(c []float64) *Dense { return &Dense{d: SqrtLen(c), C: c} }

// Dim returns d.
func (f *Dense) Dim() int { return f.d }

// Normal sets dst = Cz, z ~ N(0, I) (LowerTimesNormal).
func (f *Dense) Normal(rng *rand.Rand, dst []float64) { LowerTimesNormal(rng, dst, f.C) }

// Quad returns (v − μ)ᵀH(v − μ), without scratch memory.
func (f *Dense) Quad(v, mu []float64) float64 {
	d := f.d
	var q float64
	for j := range d {
		var r float64
		row := f.Prec[j*d : (j+1)*d]
		for k, p := range row {
			r += p * (v[k] - mu[k])
		}
		q += (v[j] - mu[j]) * r
	}
	return q
}

// Solve sets dst = H⁻¹b = C(Cᵀb).
func (f *Dense) Solve(dst, b []float64) {
	d := f.d
	t := make([]float64, d)
	for j := range d {
		for k := 0; k <= j; k++ {
			t[k] += f.C[j*d+k] * b[j]
		}
	}
	for j := range d {
		var s float64
		for k := 0; k <= j; k++ {
			s += f.C[j*d+k] * t[k]
		}
		dst[j] = s
	}
}

// LogDet returns log det H = −2Σ_j log C_jj.
func (f *Dense) LogDet() float64 {
	var s float64
	for j := range f.d {
		s -= 2 * math.Log(f.C[j*f.d+j])
	}
	return s
}

// InverseDiag sets dst_j = (H⁻¹)_jj = Σ_k C_jk².
func (f *Dense) InverseDiag(dst []float64) {
	d := f.d
	for j := range d {
		var s float64
		for _, v := range f.C[j*d : j*d+j+1] {
			s += v * v
		}
		dst[j] = s
	}
}

// FactorNNZ returns d(d+1)/2.
func (f *Dense) FactorNNZ() int { return f.d * (f.d + 1) / 2 }

// StepMadds returns d²: the whitened Crank–Nicolson step's C⁻¹(θ − μ) and
// C·u′, d²/2 each (CrankNicolsonStep).
func (f *Dense) StepMadds() float64 { return float64(f.d) * float64(f.d) }

// CrankNicolsonStep sets dst to the Crank–Nicolson move from theta around
// N(μ, CCᵀ) with coefficients ρ and s = √(1 − ρ²), made in the whitened
// coordinates u = C⁻¹(θ − μ):
//
//	u′ = ρu + s·z,  θ′ = μ + Cu′,  z ~ N(0, I) drawn from rng (z_0 first),
//
// and returns the log proposal ratio log N(θ; μ, CCᵀ) − log N(θ′; μ, CCᵀ)
// = (‖u′‖² − ‖u‖²)/2. It is the move μ + ρ(θ − μ) + s·Cz, since
// Cu′ = ρ(θ − μ) + s·Cz, and its ratio the quadratic forms in H = (CCᵀ)⁻¹
// — at d² multiply-adds (C⁻¹(θ − μ) by forward substitution and Cu′, each
// row's sum a contiguous dot product) where Normal and two Quads take
// 2.5·d² in scalar loops; the ratio is the proposal's own, from the factor
// that draws it (TestDenseCrankNicolsonStep). dst must not alias theta; it
// holds u, then u′, then θ′ (no scratch memory).
func (f *Dense) CrankNicolsonStep(rng *rand.Rand, dst, theta, mu []float64, rho, s float64) float64 {
	d := f.d
	var uu, vv float64
	for j := range d {
		row := f.C[j*d : j*d+j+1]
		u := (theta[j] - mu[j] - vec.Dot(row[:j], dst[:j])) / row[j]
		dst[j] = u
		uu += u * u
	}
	for j, u := range dst[:d] {
		un := rho*u + s*rng.NormFloat64()
		dst[j] = un
		vv += un * un
	}
	for j := d - 1; j >= 0; j-- {
		dst[j] = mu[j] + vec.Dot(f.C[j*d:j*d+j+1], dst[:j+1])
	}
	return (vv - uu) / 2
}

// Sparse is a sparse Factor: H (lower triangle) and its Cholesky
// factorisation H = PᵀLLᵀP (package sparse).
type Sparse struct {
	Prec *sparse.SymCSC
	Chol *sparse.Cholesky
}

// Dim returns d.
func (f *Sparse) Dim() int { return f.Prec.N }

// Normal sets dst = PᵀL⁻ᵀz, z ~ N(0, I), in O(nnz(L)).
func (f *Sparse) Normal(rng *rand.Rand, dst []float64) { f.Chol.NormalInto(rng, dst) }

// Quad returns (v − μ)ᵀH(v − μ) over H's stored entries, O(nnz(H)).
func (f *Sparse) Quad(v, mu []float64) float64 { return f.Prec.Quad(v, mu) }

// Solve sets dst = H⁻¹b through the factor.
func (f *Sparse) Solve(dst, b []float64) { f.Chol.Solve(dst, b, make([]float64, f.Prec.N)) }

// LogDet returns log det H.
func (f *Sparse) LogDet() float64 { return f.Chol.LogDet() }

// InverseDiag sets dst to diag(H⁻¹) on the factor's pattern, without
// forming H⁻¹ (sparse.Cholesky.InverseDiag).
func (f *Sparse) InverseDiag(dst []float64) { f.Chol.InverseDiag(dst) }

// FactorNNZ returns nnz(L).
func (f *Sparse) FactorNNZ() int { return f.Chol.Symbolic().FactorNNZ() }

// StepMadds returns nnz(L) + 2·nnz(H).
func (f *Sparse) StepMadds() float64 { return float64(f.FactorNNZ() + 2*f.Prec.NNZ()) }

// CovChol returns the lower triangular L with LLᵀ = H⁻¹ for a positive
// definite H, without forming H⁻¹ (the dense Laplace approximation's
// CovChol).
func CovChol(h *mat.SymDense) (*mat.TriDense, error) {
	d := h.SymmetricDim()
	// A lower L with LLᵀ = H⁻¹: with J the reversal permutation, factor
	// JHJ = RRᵀ (R lower); then H⁻¹ = (JR⁻ᵀJ)(JR⁻ᵀJ)ᵀ and JR⁻ᵀJ is lower
	// triangular. No inverse of H is formed.
	rev := mat.NewSymDense(d, nil)
	for a := range d {
		for b := a; b < d; b++ {
			rev.SetSym(a, b, h.At(d-1-a, d-1-b))
		}
	}
	var rc mat.Cholesky
	if !rc.Factorize(rev) {
		return nil, errors.New("the reversed Hessian has no Cholesky factor")
	}
	var r, rinv mat.TriDense
	rc.LTo(&r)
	if err := rinv.InverseTri(&r); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return nil, fmt.Errorf("inverting the Cholesky factor: %v", err)
		}
	}
	l := mat.NewTriDense(d, mat.Lower, nil)
	for a := range d {
		for b := 0; b <= a; b++ {
			// (JR⁻ᵀJ)_ab = (R⁻¹)_{d−1−b, d−1−a}.
			l.SetTri(a, b, rinv.At(d-1-b, d-1-a))
		}
	}
	return l, nil
}

// Covariance returns H⁻¹ densely, column by column through f.Solve: d
// solves, d² memory.
func Covariance(f Factor) *mat.SymDense {
	d := f.Dim()
	c := mat.NewSymDense(d, nil)
	col := make([]float64, d)
	for j := range d {
		clear(col)
		col[j] = 1
		f.Solve(col, col)
		for k := j; k < d; k++ {
			c.SetSym(j, k, col[k])
		}
	}
	return c
}

// LowerTimesNormal sets dst = Lz for z ~ N(0, I) and a row-major lower
// triangular L, in place: z is drawn into dst and multiplied from the last
// row up, so that row j reads only entries k ≤ j still holding z.
func LowerTimesNormal(rng *rand.Rand, dst, l []float64) {
	d := len(dst)
	for j := range dst {
		dst[j] = rng.NormFloat64()
	}
	for j := d - 1; j >= 0; j-- {
		var s float64
		for k, v := range l[j*d : j*d+j+1] {
			s += v * dst[k]
		}
		dst[j] = s
	}
}

// CholeskyRows returns the lower Cholesky factor of a symmetric positive
// definite matrix, row-major (who names the caller in errors).
func CholeskyRows(who string, cov mat.Symmetric) ([]float64, error) {
	d := cov.SymmetricDim()
	if d == 0 {
		return nil, fmt.Errorf("exactmh: %s: empty covariance", who)
	}
	for j := range d {
		for k := range d {
			if v := cov.At(j, k); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("exactmh: %s: covariance[%d][%d] = %v, want finite", who, j, k, v)
			}
		}
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(cov); !ok {
		return nil, fmt.Errorf("exactmh: %s: the covariance is not positive definite", who)
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := make([]float64, d*d)
	for j := range d {
		for k := 0; k <= j; k++ {
			l[j*d+k] = lt.At(j, k)
		}
	}
	return l, nil
}

// SqrtLen returns n for a slice of n² elements.
func SqrtLen(x []float64) int { return int(math.Round(math.Sqrt(float64(len(x))))) }

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/sparse"
)

// SparseCrankNicolson is the Crank–Nicolson proposal of CrankNicolson
// around N(μ, H⁻¹) with a sparse precision H (a multilevel model's Laplace
// approximation, SparseLaplace):
//
//	θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·ξ,  ξ = PᵀL⁻ᵀz ~ N(0, H⁻¹),  ρ = e^{−scale},
//
// with H = PᵀLLᵀP the sparse Cholesky factorisation (package sparse). It is
// reversible with respect to N(μ, H⁻¹), so its log proposal ratio is
// ½(θ′ − μ)ᵀH(θ′ − μ) − ½(θ − μ)ᵀH(θ − μ), summed over H's stored entries.
// A fraction Walk of the steps (0.1 unless changed, as CrankNicolson) are
// the random walk θ′ = θ + (2.38/√d)·PᵀL⁻ᵀz, log ratio 0, for tails
// heavier than the Gaussian's (see CrankNicolson). A step costs one back substitution with
// Lᵀ and one pass over H: O(nnz(L) + nnz(H)) and no allocation, where the
// dense CrankNicolson costs O(d²) (BenchmarkSparseCrankNicolson). It is
// read-only and safe for concurrent use by any number of chains.
type SparseCrankNicolson struct {
	// Walk is the probability, in [0, 1], that a step is the random walk
	// rather than the Crank–Nicolson move.
	Walk float64

	mean []float64
	prec *sparse.SymCSC
	chol *sparse.Cholesky
}

// NewSparseCrankNicolson returns the sparse Crank–Nicolson proposal around
// N(mean, prec⁻¹), with a tenth of its steps random-walk steps. prec
// must be symmetric positive definite; it is factored under a minimum
// degree ordering (sparse.Factorize) and copied.
func NewSparseCrankNicolson(mean []float64, prec *sparse.SymCSC) (*SparseCrankNicolson, error) {
	if err := prec.Check(); err != nil {
		return nil, fmt.Errorf("exactmh: NewSparseCrankNicolson: precision: %w", err)
	}
	if prec.N != len(mean) {
		return nil, fmt.Errorf("exactmh: NewSparseCrankNicolson: len(mean) = %d, precision %d×%d", len(mean), prec.N, prec.N)
	}
	if err := vec.FiniteVec("NewSparseCrankNicolson: mean", mean); err != nil {
		return nil, err
	}
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewSparseCrankNicolson: %w", err)
	}
	return &SparseCrankNicolson{Walk: defaultWalk, mean: slices.Clone(mean), prec: prec.Clone(), chol: c}, nil
}

// Propose draws θ′ and returns its log proposal ratio: for a Crank–Nicolson
// move log N(θ; μ, H⁻¹) − log N(θ′; μ, H⁻¹), for a random-walk step 0.
func (c *SparseCrankNicolson) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	c.chol.NormalInto(rng, dst)
	if c.Walk > 0 && rng.Float64() < c.Walk {
		s := 2.38 / math.Sqrt(float64(len(dst)))
		for j, v := range theta {
			dst[j] = v + s*dst[j]
		}
		return 0
	}
	rho := math.Exp(-scale)
	s := math.Sqrt(-math.Expm1(-2 * scale)) // √(1 − ρ²), accurate for small scales
	for j, m := range c.mean {
		dst[j] = m + rho*(theta[j]-m) + s*dst[j]
	}
	return (c.prec.Quad(dst, c.mean) - c.prec.Quad(theta, c.mean)) / 2
}

// String describes the proposal's configuration, as the Stan CSV files'
// configuration comments record it:
// "SparseCrankNicolson(d=1010, nnzL=11066, walk=0.1)".
func (c *SparseCrankNicolson) String() string {
	return fmt.Sprintf("SparseCrankNicolson(d=%d, nnzL=%d, walk=%g)", len(c.mean), c.chol.Symbolic().FactorNNZ(), c.Walk)
}

// checkDim reports whether the proposal fits dimension d and its Walk is
// a probability.
func (c *SparseCrankNicolson) checkDim(d int) error {
	if !(c.Walk >= 0 && c.Walk <= 1) {
		return fmt.Errorf("SparseCrankNicolson.Walk = %g, want a probability in [0, 1]", c.Walk)
	}
	if len(c.mean) != d {
		return fmt.Errorf("SparseCrankNicolson has dimension %d, want %d", len(c.mean), d)
	}
	return nil
}

// SparseGaussianWalk is the random walk θ′ = θ + scale·PᵀL⁻ᵀz, z ~ N(0, I),
// whose increments have covariance scale²·H⁻¹ for a sparse precision
// H = PᵀLLᵀP: GaussianWalk shaped by a sparse Laplace approximation
// (SparseLaplace.GaussianWalk), for kernels that need a symmetric
// proposal (TunaMH's bound is on the energy difference of a move, whatever
// its distribution). Its log proposal ratio is 0. A step costs one back
// substitution with Lᵀ, O(nnz(L)), and no allocation; it is read-only and
// safe for concurrent use.
type SparseGaussianWalk struct {
	chol *sparse.Cholesky
}

// NewSparseGaussianWalk returns the random walk with increment covariance
// scale²·prec⁻¹; prec must be symmetric positive definite.
func NewSparseGaussianWalk(prec *sparse.SymCSC) (*SparseGaussianWalk, error) {
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewSparseGaussianWalk: %w", err)
	}
	return &SparseGaussianWalk{chol: c}, nil
}

// Propose draws θ′ = θ + scale·PᵀL⁻ᵀz and returns 0.
func (w *SparseGaussianWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	w.chol.NormalInto(rng, dst)
	for j, v := range theta {
		dst[j] = v + scale*dst[j]
	}
	return 0
}

// String describes the proposal: "SparseGaussianWalk(d=1010, nnzL=11066)".
func (w *SparseGaussianWalk) String() string {
	return fmt.Sprintf("SparseGaussianWalk(d=%d, nnzL=%d)", w.chol.N(), w.chol.Symbolic().FactorNNZ())
}

func (w *SparseGaussianWalk) checkDim(d int) error {
	if n := w.chol.N(); n != d {
		return fmt.Errorf("SparseGaussianWalk has dimension %d, want %d", n, d)
	}
	return nil
}

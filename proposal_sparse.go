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

// sparsePrecision is the Gaussian N(μ, H⁻¹) of a sparse CrankNicolson:
// the precision H and its Cholesky factorisation H = PᵀLLᵀP under a
// fill-reducing order (package sparse).
type sparsePrecision struct {
	prec *sparse.SymCSC
	chol *sparse.Cholesky
}

// NewCrankNicolsonSparse returns the Crank–Nicolson proposal around
// N(mean, prec⁻¹) for a sparse precision H = prec (a multilevel model's
// Laplace approximation, SparseLaplace), with a fraction defaultWalk of
// random-walk steps:
//
//	θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·ξ,  ξ = PᵀL⁻ᵀz ~ N(0, H⁻¹),  ρ = e^{−scale},
//
// with H = PᵀLLᵀP factored under a minimum degree ordering
// (sparse.Factorize); prec is copied. Its log proposal ratio is
// ½(θ′ − μ)ᵀH(θ′ − μ) − ½(θ − μ)ᵀH(θ − μ), summed over H's stored
// entries, and its random-walk steps are θ′ = θ + (2.38/√d)·PᵀL⁻ᵀz. A step
// costs one back substitution with Lᵀ and one pass over H, O(nnz(L) +
// nnz(H)), where the dense proposal costs O(d²)
// (BenchmarkSparseCrankNicolson); Nu must stay 0.
func NewCrankNicolsonSparse(mean []float64, prec *sparse.SymCSC) (*CrankNicolson, error) {
	if err := prec.Check(); err != nil {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: precision: %w", err)
	}
	if prec.N != len(mean) {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: len(mean) = %d, precision %d×%d", len(mean), prec.N, prec.N)
	}
	if err := vec.FiniteVec("NewCrankNicolsonSparse: mean", mean); err != nil {
		return nil, err
	}
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: %w", err)
	}
	return &CrankNicolson{Walk: defaultWalk, mean: slices.Clone(mean), sparse: &sparsePrecision{prec: prec.Clone(), chol: c}}, nil
}

// proposeSparse is Propose for a sparse precision.
func (c *CrankNicolson) proposeSparse(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	c.sparse.chol.NormalInto(rng, dst)
	if c.Walk > 0 && rng.Float64() < c.Walk {
		s := 2.38 / math.Sqrt(float64(len(dst)))
		for j, v := range theta {
			dst[j] = v + s*dst[j]
		}
		return 0
	}
	rho, s := c.coefficients(scale)
	for j, m := range c.mean {
		dst[j] = m + rho*(theta[j]-m) + s*dst[j]
	}
	return (c.sparse.prec.Quad(dst, c.mean) - c.sparse.prec.Quad(theta, c.mean)) / 2
}

// NewGaussianWalkSparse returns the random walk θ′ = θ + scale·PᵀL⁻ᵀz,
// z ~ N(0, I), whose increments have covariance scale²·H⁻¹ for a sparse
// precision H = prec = PᵀLLᵀP: the walk shaped by a sparse Laplace
// approximation, for kernels that need a symmetric proposal. A step costs
// one back substitution with Lᵀ, O(nnz(L)), and no allocation. prec must
// be symmetric positive definite.
func NewGaussianWalkSparse(prec *sparse.SymCSC) (*GaussianWalk, error) {
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewGaussianWalkSparse: %w", err)
	}
	return &GaussianWalk{chol: c}, nil
}

// proposeSparse is Propose for a sparse precision.
func (w *GaussianWalk) proposeSparse(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	w.chol.NormalInto(rng, dst)
	for j, v := range theta {
		dst[j] = v + scale*dst[j]
	}
	return 0
}

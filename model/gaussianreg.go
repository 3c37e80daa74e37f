// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// GaussianRegression is the energy of linear regression with the noise
// standard deviation σ unknown — lm's and brms's gaussian model,
// y_i ~ N(x_iᵀβ, σ²) — in θ = (β, log σ) of dimension d + 1, held as
// its sufficient statistics rather than its data:
//
//	U(β, s) = N·s + Q(β)·e^{−2s}/2,  s = log σ,
//	Q(β) = Σ_i (y_i − x_iᵀβ)² = RSS + (β − β̂)ᵀ XᵀX (β − β̂),
//
// β̂ the least-squares fit and RSS its residual sum of squares (the
// constant N/2·log 2π is dropped). NewGaussianRegression reads the data
// twice, for XᵀX and Xᵀy and then for RSS — computed from the residuals
// themselves, so that a fit with a small residual sd loses no digits to
// yᵀy − β̂ᵀXᵀy — and keeps O(d²) numbers: every evaluation then costs
// O(d²) whatever N, and reads no datum.
//
// The energy is exact: its one "datum" (Len is 1) is the whole
// likelihood, so full-batch kernels (NUTS, MH) sample its posterior
// exactly at the cost of a minibatch step of d² numbers. It implements
// exactmh.SufficientStatistics (Observations returns N), which makes the
// automatic default take NUTS on it. The prior on σ is the Prior's: WithScale
// puts a ScalePrior on e^{θ[d]}, with the Jacobian of the log transform
// (TestGaussianRegressionMoments, TestGaussianRegressionSBC).
type GaussianRegression struct {
	n   int       // N, the number of observations summarised
	d   int       // number of coefficients
	xtx []float64 // d×d XᵀX, row-major

	// Q(β) = q0 − 2δᵀlin + δᵀXᵀXδ with δ = β − center: center β̂, lin 0
	// and q0 the residual sum of squares, or (XᵀX singular) center 0,
	// lin = Xᵀy and q0 = yᵀy.
	center, lin []float64
	q0          float64
	singular    bool // XᵀX singular: the raw statistics

	// mutantN, if non-zero, replaces N in the N·s term (a mutant of the
	// kit tests: the likelihood's normalising constant with a wrong count).
	mutantN float64
}

// NewGaussianRegression returns the Gaussian-regression energy of the
// covariates x (row-major, N rows of d columns) and responses y with σ
// unknown. Nothing is kept of x and y. It fails if a value is not finite
// or if N ≤ d. Where XᵀX is singular (collinear columns, whose
// coefficients the data do not identify) there is no β̂, and the energy
// keeps Q(β) = yᵀy − 2βᵀXᵀy + βᵀXᵀXβ instead.
func NewGaussianRegression(x, y []float64, d int) (*GaussianRegression, error) {
	if err := vec.DataRows("NewGaussianRegression", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.FiniteVec("NewGaussianRegression: y", y); err != nil {
		return nil, err
	}
	n := len(y)
	if n <= d {
		return nil, fmt.Errorf("exactmh: NewGaussianRegression: N = %d data for d = %d coefficients and σ, want N > d", n, d)
	}
	upper := make([]float64, d*d) // XᵀX, upper triangle
	xty := make([]float64, d)
	var yty float64
	for i := range n {
		row := x[i*d : (i+1)*d]
		for a, va := range row {
			if va != 0 {
				vec.Axpy(upper[a*d+a:(a+1)*d], va, row[a:])
			}
		}
		vec.Axpy(xty, y[i], row)
		yty += y[i] * y[i]
	}
	xtx := mat.NewSymDense(d, upper)
	e := &GaussianRegression{n: n, d: d, xtx: make([]float64, d*d), center: make([]float64, d), lin: xty, q0: yty, singular: true}
	for a := range d {
		for b := range d {
			e.xtx[a*d+b] = xtx.At(a, b) // both triangles, for the row loops
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(xtx) {
		return e, nil // collinear: the raw statistics
	}
	bhat := mat.NewVecDense(d, nil)
	if err := chol.SolveVecTo(bhat, mat.NewVecDense(d, xty)); err != nil {
		return e, nil
	}
	e.center, e.lin, e.q0, e.singular = bhat.RawVector().Data, make([]float64, d), 0, false
	for i := range n {
		r := y[i] - vec.Dot(x[i*d:(i+1)*d], e.center)
		e.q0 += r * r
	}
	return e, nil
}

// Len returns 1: the energy is one term, the whole likelihood.
func (e *GaussianRegression) Len() int { return 1 }

// Dim returns d + 1: the coefficients and log σ.
func (e *GaussianRegression) Dim() int { return e.d + 1 }

// Observations returns N, the number of data the statistics summarise
// (exactmh.SufficientStatistics).
func (e *GaussianRegression) Observations() int { return e.n }

// LeastSquares returns β̂ and the residual sum of squares (β̂ not a
// copy), or ok false where XᵀX is singular.
func (e *GaussianRegression) LeastSquares() (beta []float64, rss float64, ok bool) {
	return e.center, e.q0, !e.singular
}

// count is N in the N·s term.
func (e *GaussianRegression) count() float64 {
	if e.mutantN != 0 {
		return e.mutantN
	}
	return float64(e.n)
}

// quad returns Q(β) and, if g is not nil, sets g = ½∇Q = XᵀXδ − lin.
func (e *GaussianRegression) quad(theta, g []float64) float64 {
	d := e.d
	q := e.q0
	for a := range d {
		ga := -e.lin[a]
		for b, v := range e.xtx[a*d : (a+1)*d] {
			ga += v * (theta[b] - e.center[b])
		}
		if g != nil {
			g[a] = ga
		}
		// δᵀXᵀXδ − 2δᵀlin = Σ_a δ_a(g_a − lin_a)
		q += (theta[a] - e.center[a]) * (ga - e.lin[a])
	}
	return q
}

// energy returns U(θ).
func (e *GaussianRegression) energy(theta []float64) float64 {
	s := theta[e.d]
	return e.count()*s + 0.5*e.quad(theta, nil)*math.Exp(-2*s)
}

// Energies sets every dst[k] = U(θ) (idx holds only datum 0).
func (e *GaussianRegression) Energies(dst, theta []float64, idx []int) {
	for k := range idx {
		dst[k] = e.energy(theta)
	}
}

// EnergyDiffs sets every dst[k] = U(θ) − U(θ′).
func (e *GaussianRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k := range idx {
		dst[k] = e.energy(theta) - e.energy(thetaNew)
	}
}

// EnergiesAndGradient sets dst[k] = U(θ) and adds w[k]·∇U(θ) to grad:
// ∂U/∂β = e^{−2s}·½∇Q = e^{−2s}·XᵀX(β − β̂), ∂U/∂s = N − Q(β)·e^{−2s}.
func (e *GaussianRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	d := e.d
	s := theta[d]
	c := math.Exp(-2 * s)
	for k := range idx {
		// grad[:d] accumulates w·c·½∇Q without scratch memory.
		q := e.q0
		for a := range d {
			g := -e.lin[a]
			for b, v := range e.xtx[a*d : (a+1)*d] {
				g += v * (theta[b] - e.center[b])
			}
			q += (theta[a] - e.center[a]) * (g - e.lin[a])
			grad[a] += w[k] * c * g
		}
		dst[k] = e.count()*s + 0.5*q*c
		grad[d] += w[k] * (e.count() - q*c)
	}
}

// AddGradient adds Σ_k w[k]·∇U(θ) to grad.
func (e *GaussianRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var u [1]float64
	for k := range idx {
		e.EnergiesAndGradient(u[:], grad, theta, idx[k:k+1], w[k:k+1])
	}
}

// AddHessian adds Σ_k w[k]·∇²U(θ) to the upper triangle of h ((d+1)²
// row-major): ∂²U/∂β² = e^{−2s}XᵀX, ∂²U/∂β∂s = −2e^{−2s}·½∇Q,
// ∂²U/∂s² = 2Q(β)e^{−2s}.
func (e *GaussianRegression) AddHessian(h, theta []float64, idx []int, w []float64) {
	d, D := e.d, e.d+1
	c := math.Exp(-2 * theta[d])
	for k := range idx {
		q := e.q0
		for a := range d {
			g := -e.lin[a]
			for b, v := range e.xtx[a*d : (a+1)*d] {
				g += v * (theta[b] - e.center[b])
				if b >= a {
					h[a*D+b] += w[k] * c * v
				}
			}
			q += (theta[a] - e.center[a]) * (g - e.lin[a])
			h[a*D+d] += w[k] * -2 * c * g
		}
		h[d*D+d] += w[k] * 2 * q * c
	}
}

// String names the model, as errors about it do.
func (e *GaussianRegression) String() string {
	return fmt.Sprintf("GaussianRegression(N = %d, d = %d, σ unknown; sufficient statistics)", e.n, e.d)
}

// Compile-time checks.
var (
	_ exactmh.Energy               = (*GaussianRegression)(nil)
	_ exactmh.EnergyDiffer         = (*GaussianRegression)(nil)
	_ exactmh.EnergyGradienter     = (*GaussianRegression)(nil)
	_ exactmh.Gradienter           = (*GaussianRegression)(nil)
	_ exactmh.Hessianer            = (*GaussianRegression)(nil)
	_ exactmh.SufficientStatistics = (*GaussianRegression)(nil)
)

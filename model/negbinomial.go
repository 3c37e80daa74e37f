// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mathext"
)

// NegBinomialRegression is the energy of negative binomial (NB2)
// regression with a log link, an offset and the shape φ unknown — brms's
// negbinomial(), MASS's glm.nb: y_i has mean μ_i = e^{η_i},
// η_i = x_iᵀβ + o_i, and variance μ_i + μ_i²/φ, in θ = (β, log φ) of
// dimension d + 1:
//
//	U_i(θ) = log Γ(φ) − log Γ(y_i + φ) − φ·log φ − y_i·η_i + (y_i + φ)·log(φ + μ_i)
//
// (log y_i! dropped), log(φ + μ) computed as log φ + log1p(e^{η − log φ})
// or its mirror, so that no exponential overflows. Its gradient is
// ∂U_i/∂η = φ(μ_i − y_i)/(φ + μ_i) and
// ∂U_i/∂log φ = φ[ψ(φ) − ψ(y_i + φ) − log φ − 1 + log(φ + μ_i) + (y_i + φ)/(φ + μ_i)].
//
// φ enters every datum outside the linear predictor, so this is not a
// GLM in θ: it has no bounds for the minibatch kernels, and the automatic
// default pilots the full-batch kernels on it (NUTS; MH with the
// Crank–Nicolson proposal about the Laplace approximation, whose Hessian
// is differentiated numerically). A minibatch route would need, for
// fixed φ, the GLM bounds of the loss in η (f″ = φμ(φ + y)/(φ + μ)² ≤
// φ + y grows like Poisson's only up to the shape) and a bound on the
// shape's per-datum differences, or a Gibbs split: β by a GLM kernel
// given φ, φ given β by a one-dimensional exact step. The prior on φ is
// the Prior's: WithScale puts a ScalePrior (brms's Gamma(0.01, 0.01)) on
// e^{θ[d]} with the Jacobian (TestNegBinomialMoments, TestNegBinomialSBC).
type NegBinomialRegression struct {
	x      []float64 // N×d row-major covariates
	y      []float64 // counts
	offset []float64 // nil: none
	d      int

	// noShapeLog, a mutant of the kit tests, drops the φ·log φ term.
	noShapeLog bool
}

// NewNegBinomialRegression returns the NB2 energy of the covariates x
// (row-major, N rows of d columns), counts y and offsets (nil for none).
// The slices are kept, not copied. It checks that every y_i is an
// integer ≥ 0 and every offset finite.
func NewNegBinomialRegression(x, y, offset []float64, d int) (*NegBinomialRegression, error) {
	if err := vec.DataRows("NewNegBinomialRegression", x, len(y), d); err != nil {
		return nil, err
	}
	for i, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("exactmh: NewNegBinomialRegression: y[%d] = %v, want a count (an integer ≥ 0)", i, v)
		}
	}
	if offset != nil {
		if len(offset) != len(y) {
			return nil, fmt.Errorf("exactmh: NewNegBinomialRegression: %d offsets for %d data", len(offset), len(y))
		}
		if err := vec.FiniteVec("NewNegBinomialRegression: offset", offset); err != nil {
			return nil, err
		}
	}
	return &NegBinomialRegression{x: x, y: y, offset: offset, d: d}, nil
}

// Len returns the number of data.
func (e *NegBinomialRegression) Len() int { return len(e.y) }

// Dim returns d + 1: the coefficients and log φ.
func (e *NegBinomialRegression) Dim() int { return e.d + 1 }

// Row returns x_i (not a copy).
func (e *NegBinomialRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// eta returns η_i = x_iᵀβ + o_i.
func (e *NegBinomialRegression) eta(i int, theta []float64) float64 {
	z := vec.Dot(e.Row(i), theta[:e.d])
	if e.offset != nil {
		z += e.offset[i]
	}
	return z
}

// logSum returns log(e^a + e^b) without overflow.
func logSum(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// shapeTerms returns the terms of U_i that depend on φ alone: log Γ(φ)
// − log Γ(y + φ) − φ·log φ.
func (e *NegBinomialRegression) shapeTerms(y, phi, logPhi float64) float64 {
	lg, _ := math.Lgamma(phi)
	lgy, _ := math.Lgamma(y + phi)
	u := lg - lgy
	if !e.noShapeLog {
		u -= phi * logPhi
	}
	return u
}

// energy returns U_i at η and log φ (φ = e^{log φ}, shape its φ-only
// terms).
func (e *NegBinomialRegression) energy(y, eta, phi, logPhi, shape float64) float64 {
	return shape - y*eta + (y+phi)*logSum(logPhi, eta)
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *NegBinomialRegression) Energies(dst, theta []float64, idx []int) {
	lp := theta[e.d]
	phi := math.Exp(lp)
	for k, i := range idx {
		y := e.y[i]
		dst[k] = e.energy(y, e.eta(i, theta), phi, lp, e.shapeTerms(y, phi, lp))
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *NegBinomialRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	lp, lpn := theta[e.d], thetaNew[e.d]
	phi, phin := math.Exp(lp), math.Exp(lpn)
	for k, i := range idx {
		z, zn := vec.Dot2(e.Row(i), theta[:e.d], thetaNew[:e.d])
		if e.offset != nil {
			z += e.offset[i]
			zn += e.offset[i]
		}
		y := e.y[i]
		dst[k] = e.energy(y, z, phi, lp, e.shapeTerms(y, phi, lp)) - e.energy(y, zn, phin, lpn, e.shapeTerms(y, phin, lpn))
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad.
func (e *NegBinomialRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	d := e.d
	lp := theta[d]
	phi := math.Exp(lp)
	dphi := mathext.Digamma(phi)
	for k, i := range idx {
		y := e.y[i]
		eta := e.eta(i, theta)
		ls := logSum(lp, eta) // log(φ + μ)
		dst[k] = e.energy(y, eta, phi, lp, e.shapeTerms(y, phi, lp))
		// μ/(φ + μ) and φ/(φ + μ), without forming μ.
		pm := math.Exp(eta - ls)
		pp := math.Exp(lp - ls)
		g := -y + (y+phi)*pm
		vec.Axpy(grad[:d], w[k]*g, e.Row(i))
		gphi := dphi - mathext.Digamma(y+phi) + ls + (y+phi)*pp/phi
		if !e.noShapeLog {
			gphi -= lp + 1
		}
		// (y + φ)/(φ + μ) = (y + φ)·pp/φ; ∂/∂ log φ = φ·∂/∂φ.
		grad[d] += w[k] * phi * gphi
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) to grad.
func (e *NegBinomialRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var u [1]float64
	for k := range idx {
		e.EnergiesAndGradient(u[:], grad, theta, idx[k:k+1], w[k:k+1])
	}
}

// String names the model, as errors about it do.
func (e *NegBinomialRegression) String() string {
	return fmt.Sprintf("NegBinomialRegression(N = %d, d = %d, shape unknown)", len(e.y), e.d)
}

// Compile-time checks.
var (
	_ exactmh.Energy           = (*NegBinomialRegression)(nil)
	_ exactmh.EnergyDiffer     = (*NegBinomialRegression)(nil)
	_ exactmh.EnergyGradienter = (*NegBinomialRegression)(nil)
	_ exactmh.Gradienter       = (*NegBinomialRegression)(nil)
)

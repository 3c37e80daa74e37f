// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// GaussianMean is the energy of the mean θ of Gaussian data y_i ~ N(θ, Σ) with
// a known full covariance Σ: U_i(θ) = ½(θ − y_i)ᵀΣ⁻¹(θ − y_i) (normalising
// constant dropped). It stores P·y_i and ½y_iᵀP y_i (P = Σ⁻¹) so that an energy
// costs O(d) per datum plus O(d²) per call, with no scratch memory.
type GaussianMean struct {
	y     []float64 // N×d data, kept for bounds
	py    []float64 // N×d, row i = P·y_i
	half  []float64 // ½ y_iᵀ P y_i
	prec  *mat.SymDense
	d     int
	lmax  float64 // largest eigenvalue of P
	sigma *mat.SymDense
}

// NewGaussianMean returns the energy of data y (row-major, N×d) with
// covariance sigma (d×d, symmetric positive definite). y is kept, not copied.
func NewGaussianMean(y []float64, d int, sigma *mat.SymDense) (*GaussianMean, error) {
	if err := vec.CheckDim("NewGaussianMean", d); err != nil {
		return nil, err
	}
	if len(y)%d != 0 {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: len(y) = %d is not a multiple of d = %d", len(y), d)
	}
	n := len(y) / d
	if err := vec.DataRows("NewGaussianMean", y, n, d); err != nil {
		return nil, err
	}
	if sigma == nil || sigma.SymmetricDim() != d {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: covariance must be %d×%d", d, d)
	}
	var chol mat.Cholesky
	if ok := chol.Factorize(sigma); !ok {
		return nil, errors.New("exactmh: NewGaussianMean: covariance is not positive definite")
	}
	prec := mat.NewSymDense(d, nil)
	if err := chol.InverseTo(prec); err != nil {
		return nil, fmt.Errorf("exactmh: NewGaussianMean: inverting covariance: %v", err)
	}
	var eig mat.EigenSym
	if ok := eig.Factorize(prec, false); !ok {
		return nil, errors.New("exactmh: NewGaussianMean: eigendecomposition of the precision failed")
	}
	vals := eig.Values(nil)
	e := &GaussianMean{y: y, py: make([]float64, len(y)), half: make([]float64, n), prec: prec, d: d,
		lmax: vals[len(vals)-1], sigma: mat.NewSymDense(d, nil)}
	e.sigma.CopySym(sigma)
	for i := 0; i < n; i++ {
		yi, pyi := y[i*d:(i+1)*d], e.py[i*d:(i+1)*d]
		for a := 0; a < d; a++ {
			var s float64
			for b := 0; b < d; b++ {
				s += prec.At(a, b) * yi[b]
			}
			pyi[a] = s
		}
		e.half[i] = 0.5 * vec.Dot(yi, pyi)
	}
	return e, nil
}

// Len returns the number of data.
func (e *GaussianMean) Len() int { return len(e.half) }

// Dim returns d.
func (e *GaussianMean) Dim() int { return e.d }

// Row returns datum y_i (not a copy).
func (e *GaussianMean) Row(i int) []float64 { return e.y[i*e.d : (i+1)*e.d] }

// Precision returns a copy of P = Σ⁻¹.
func (e *GaussianMean) Precision() *mat.SymDense {
	p := mat.NewSymDense(e.d, nil)
	p.CopySym(e.prec)
	return p
}

// Covariance returns a copy of Σ.
func (e *GaussianMean) Covariance() *mat.SymDense {
	s := mat.NewSymDense(e.d, nil)
	s.CopySym(e.sigma)
	return s
}

// quad returns ½θᵀPθ.
func (e *GaussianMean) quad(theta []float64) float64 {
	var s float64
	for a := 0; a < e.d; a++ {
		for b := 0; b < e.d; b++ {
			s += theta[a] * e.prec.At(a, b) * theta[b]
		}
	}
	return 0.5 * s
}

// Energies sets dst[k] = ½(θ − y_i)ᵀP(θ − y_i) = ½θᵀPθ − θᵀPy_i + ½y_iᵀPy_i.
func (e *GaussianMean) Energies(dst, theta []float64, idx []int) {
	q := e.quad(theta)
	for k, i := range idx {
		dst[k] = q - vec.Dot(theta, e.py[i*e.d:(i+1)*e.d]) + e.half[i]
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ') = ½θᵀPθ − ½θ'ᵀPθ' − (θ − θ')ᵀPy_i,
// which has no cancellation between large terms of each datum.
func (e *GaussianMean) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	q := e.quad(theta) - e.quad(thetaNew)
	for k, i := range idx {
		var s float64
		for j, v := range e.py[i*e.d : (i+1)*e.d] {
			s += (theta[j] - thetaNew[j]) * v
		}
		dst[k] = q - s
	}
}

// AddGradient adds Σ_k w[k]·P(θ − y_i) to grad.
func (e *GaussianMean) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var wsum float64
	for k, i := range idx {
		wsum += w[k]
		for j, v := range e.py[i*e.d : (i+1)*e.d] {
			grad[j] -= w[k] * v
		}
	}
	for a := 0; a < e.d; a++ {
		var s float64
		for b := 0; b < e.d; b++ {
			s += e.prec.At(a, b) * theta[b]
		}
		grad[a] += wsum * s
	}
}

// AddHessian adds Σ_k w[k]·P to the upper triangle of h (Hessianer): every
// datum's Hessian is the precision P = Σ⁻¹.
func (e *GaussianMean) AddHessian(h, _ []float64, idx []int, w []float64) {
	var wsum float64
	for k := range idx {
		wsum += w[k]
	}
	for a := range e.d {
		for b := a; b < e.d; b++ {
			h[a*e.d+b] += wsum * e.prec.At(a, b)
		}
	}
}

// DiffBound returns c_i = λ_max(Σ⁻¹)·max_θ‖θ − y_i‖₂ over a Box or Ball
// support: ∇U_i = Σ⁻¹(θ − y_i) and the support is convex.
func (e *GaussianMean) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	for i := range c {
		m, err := maxDist(e.Row(i), prior)
		if err != nil {
			return nil, err
		}
		c[i] = e.lmax * m
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange returns Lo = 0, Width = ½λ_max(Σ⁻¹)·max_θ‖θ − y_i‖₂² over a Box
// or Ball support; on the cube [−K, K]^d this is the auxiliary-variable
// paper's M_i = ½λ_max(Σ⁻¹)Σ_j(|y_ij| + K)² (App. D.1).
func (e *GaussianMean) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	for i := range r.Lo {
		m, err := maxDist(e.Row(i), prior)
		if err != nil {
			return nil, err
		}
		r.Width[i] = 0.5 * e.lmax * m * m
	}
	return r, nil
}

// TaylorBound returns, for order 1, the largest entry of Σ⁻¹ in magnitude
// for every datum (the Hessian of every U_i). Order 2 is not offered: the
// remainder of order 2 is identically zero.
func (e *GaussianMean) TaylorBound(order int, _ exactmh.Prior) ([]float64, error) {
	if order != 1 {
		return nil, fmt.Errorf("exactmh: GaussianMean.TaylorBound: order %d, want 1", order)
	}
	p := e.Precision()
	var m float64
	for j := range e.d {
		for l := range e.d {
			m = math.Max(m, math.Abs(p.At(j, l)))
		}
	}
	b := prefault.Make[float64](e.Len())
	for i := range b {
		b[i] = m
	}
	return b, nil
}

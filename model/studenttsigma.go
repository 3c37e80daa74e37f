// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
)

// StudentTScaleRegression is robust linear regression with Student-t
// noise of ν degrees of freedom and the scale σ unknown (brms's
// student() with ν fixed), in θ = (β, log σ) of dimension d + 1:
//
//	U_i(θ) = s + (ν+1)/2 · log(1 + r_i²e^{−2s}/ν),  r_i = y_i − x_iᵀβ, s = log σ,
//
// its gradient ∂U_i/∂β = −w_i r_i e^{−2s}·x_i and ∂U_i/∂s = 1 − w_i r_i²e^{−2s},
// w_i = (ν+1)/(ν + r_i²e^{−2s}). σ enters outside the linear predictor, so
// this is not a GLM in θ: the automatic default pilots the full-batch
// kernels on it (NUTS, MH-CN). The prior on σ is WithScale's
// (TestStudentTScaleMoments, TestStudentTScaleSBC).
type StudentTScaleRegression struct {
	x, y []float64
	d    int
	nu   float64

	// mutantNu, a mutant of the kit tests, weighs the log term by ν/2
	// instead of (ν+1)/2.
	mutantNu bool
}

// NewStudentTScaleRegression returns the energy of x (row-major, N×d),
// responses y and ν > 0 degrees of freedom. The slices are kept.
func NewStudentTScaleRegression(x, y []float64, d int, nu float64) (*StudentTScaleRegression, error) {
	if _, err := NewStudentTRegression(x, y, d, nu); err != nil { // the same checks
		return nil, err
	}
	return &StudentTScaleRegression{x: x, y: y, d: d, nu: nu}, nil
}

// Len returns the number of data.
func (e *StudentTScaleRegression) Len() int { return len(e.y) }

// Dim returns d + 1: the coefficients and log σ.
func (e *StudentTScaleRegression) Dim() int { return e.d + 1 }

// Row returns x_i (not a copy).
func (e *StudentTScaleRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// u returns U_i at residual r and s = log σ (c = e^{−2s}).
func (e *StudentTScaleRegression) u(r, s, c float64) float64 {
	return s + 0.5*e.nu1()*math.Log1p(r*r*c/e.nu)
}

// nu1 is ν + 1 (ν in the mutant).
func (e *StudentTScaleRegression) nu1() float64 {
	if e.mutantNu {
		return e.nu
	}
	return e.nu + 1
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *StudentTScaleRegression) Energies(dst, theta []float64, idx []int) {
	s := theta[e.d]
	c := math.Exp(-2 * s)
	for k, i := range idx {
		dst[k] = e.u(e.y[i]-vec.Dot(e.Row(i), theta[:e.d]), s, c)
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *StudentTScaleRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	s, sn := theta[e.d], thetaNew[e.d]
	c, cn := math.Exp(-2*s), math.Exp(-2*sn)
	for k, i := range idx {
		z, zn := vec.Dot2(e.Row(i), theta[:e.d], thetaNew[:e.d])
		dst[k] = e.u(e.y[i]-z, s, c) - e.u(e.y[i]-zn, sn, cn)
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad.
func (e *StudentTScaleRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	d := e.d
	s := theta[d]
	c := math.Exp(-2 * s)
	for k, i := range idx {
		row := e.Row(i)
		r := e.y[i] - vec.Dot(row, theta[:d])
		dst[k] = e.u(r, s, c)
		wi := e.nu1() / (e.nu + r*r*c)
		vec.Axpy(grad[:d], -w[k]*wi*r*c, row)
		grad[d] += w[k] * (1 - wi*r*r*c)
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) to grad.
func (e *StudentTScaleRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	var u [1]float64
	for k := range idx {
		e.EnergiesAndGradient(u[:], grad, theta, idx[k:k+1], w[k:k+1])
	}
}

// String names the model.
func (e *StudentTScaleRegression) String() string {
	return fmt.Sprintf("StudentTScaleRegression(ν = %v, σ unknown)", e.nu)
}

// Compile-time checks.
var (
	_ exactmh.EnergyDiffer     = (*StudentTScaleRegression)(nil)
	_ exactmh.EnergyGradienter = (*StudentTScaleRegression)(nil)
	_ exactmh.Gradienter       = (*StudentTScaleRegression)(nil)
)

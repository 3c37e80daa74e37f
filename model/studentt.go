// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/vec"
)

// StudentTRegression is the energy of robust linear regression with Student-t
// noise of ν degrees of freedom (TunaMH paper App. J.2):
// U_i(θ) = (ν+1)/2 · log(1 + (y_i − x_iᵀθ)²/ν).
type StudentTRegression struct {
	x  []float64
	y  []float64
	d  int
	nu float64
}

// NewStudentTRegression returns the robust-regression energy of x (row-major,
// N×d), responses y and ν > 0 degrees of freedom. The slices are kept.
func NewStudentTRegression(x, y []float64, d int, nu float64) (*StudentTRegression, error) {
	if err := vec.DataRows("NewStudentTRegression", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.FiniteVec("NewStudentTRegression: y", y); err != nil {
		return nil, err
	}
	if !(nu > 0) || math.IsInf(nu, 0) {
		return nil, fmt.Errorf("exactmh: NewStudentTRegression: degrees of freedom ν = %v, want finite > 0", nu)
	}
	return &StudentTRegression{x: x, y: y, d: d, nu: nu}, nil
}

// Len returns the number of data.
func (e *StudentTRegression) Len() int { return len(e.y) }

// Dim returns the number of regressors.
func (e *StudentTRegression) Dim() int { return e.d }

// Nu returns the degrees of freedom ν.
func (e *StudentTRegression) Nu() float64 { return e.nu }

// Row returns the regressors of datum i (not a copy).
func (e *StudentTRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Response returns y_i.
func (e *StudentTRegression) Response(i int) float64 { return e.y[i] }

func (e *StudentTRegression) u(r float64) float64 {
	return 0.5 * (e.nu + 1) * math.Log1p(r*r/e.nu)
}

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *StudentTRegression) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.u(e.y[i] - vec.Dot(e.Row(i), theta))
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *StudentTRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		row := e.Row(i)
		z, zn := vec.Dot2(row, theta, thetaNew)
		r, rn := e.y[i]-z, e.y[i]-zn
		// log1p(a) − log1p(b) = log1p((a − b)/(1 + b)) keeps precision for close θ, θ'.
		a, b := r*r/e.nu, rn*rn/e.nu
		dst[k] = 0.5 * (e.nu + 1) * math.Log1p((a-b)/(1+b))
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing the residual once per datum.
func (e *StudentTRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		r := e.y[i] - vec.Dot(row, theta)
		dst[k] = e.u(r)
		g := -w[k] * (e.nu + 1) * r / (e.nu + r*r)
		vec.Axpy(grad, g, row)
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ), ∇U_i = −(ν+1)·r_i/(ν + r_i²)·x_i with r_i = y_i − x_iᵀθ.
func (e *StudentTRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		r := e.y[i] - vec.Dot(row, theta)
		g := -w[k] * (e.nu + 1) * r / (e.nu + r*r)
		vec.Axpy(grad, g, row)
	}
}

// Loss returns f_i(z) = (ν+1)/2·log(1 + (y_i − z)²/ν), U_i at x_iᵀθ = z
// (GLM).
func (e *StudentTRegression) Loss(i int, z float64) float64 { return e.u(e.y[i] - z) }

// LossDerivs returns f_i′(z) = −(ν+1)r/(ν + r²) and
// f_i″(z) = (ν+1)(ν − r²)/(ν + r²)², r = y_i − z.
func (e *StudentTRegression) LossDerivs(i int, z float64) (f1, f2 float64) {
	r := e.y[i] - z
	q := e.nu + r*r
	return -(e.nu + 1) * r / q, (e.nu + 1) * (e.nu - r*r) / (q * q)
}

// LossBound returns global bounds on the Student-t loss's derivatives, for
// every y_i and z: |f′| ≤ (ν+1)/(2√ν) (at r² = ν), |f″| ≤ (ν+1)/ν (at r = 0;
// its minimum is −(ν+1)/(8ν)) and |f‴| ≤ 2(ν+1)(3 + 2√2)/(8ν^{3/2}) (see
// TaylorBound); +Inf for k outside 1…3.
func (e *StudentTRegression) LossBound(_, k int, _, _ float64) float64 {
	switch k {
	case 1:
		return (e.nu + 1) / (2 * math.Sqrt(e.nu))
	case 2:
		return (e.nu + 1) / e.nu
	case 3:
		return 2 * (e.nu + 1) * (3 + 2*math.Sqrt2) / (8 * math.Pow(e.nu, 1.5))
	}
	return math.Inf(1)
}

// LossDeriv3 returns f_i‴(z) = −2(ν+1)·r(r² − 3ν)/(ν + r²)³, r = y_i − z,
// for the third-order control variates of exactmh.ControlVariates.
func (e *StudentTRegression) LossDeriv3(i int, z float64) float64 {
	r := e.y[i] - z
	q := e.nu + r*r
	return -2 * (e.nu + 1) * r * (r*r - 3*e.nu) / (q * q * q)
}

// LossBound4 returns 6(ν+1)/ν² ≥ |f_i⁗(z)| for every y_i and z:
// f⁗ = −6(ν+1)/ν²·h(r²/ν) with h(t) = (t² − 6t + 1)/(1 + t)⁴, whose
// extremes on t ≥ 0 are h(0) = 1, h(5 − 2√5) ≈ −0.347 and
// h(5 + 2√5) ≈ 0.003 (TestLossCubers checks it on a grid).
func (e *StudentTRegression) LossBound4(_ int, _, _ float64) float64 {
	return 6 * (e.nu + 1) / (e.nu * e.nu)
}

// DiffBound returns c_i = (ν+1)/(2√ν)·‖x_i‖₂ = sup ‖∇U_i‖₂, M = ‖θ − θ'‖₂,
// valid on all of R^d (TunaMH paper App. J.2).
func (e *StudentTRegression) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	k := (e.nu + 1) / (2 * math.Sqrt(e.nu))
	for i := range c {
		c[i] = k * vec.Norm2(e.Row(i))
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange returns the range of U_i on a Box or Ball support from the
// range of the residual y_i − x_iᵀθ; on the ball ‖θ‖ ≤ R its width is the
// auxiliary-variable paper's M_i = (ν+1)/2·log(1 + (|y_i| + ‖x_i‖R)²/ν)
// (App. D.2) whenever |y_i| ≤ ‖x_i‖R.
func (e *StudentTRegression) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	for i := range r.Lo {
		a, b, err := linearRange(e.Row(i), prior)
		if err != nil {
			return nil, err
		}
		ra, rb := e.y[i]-b, e.y[i]-a // residual range [ra, rb]
		rmax := math.Max(math.Abs(ra), math.Abs(rb))
		rmin := 0.0
		if ra > 0 || rb < 0 {
			rmin = math.Min(math.Abs(ra), math.Abs(rb))
		}
		r.Lo[i] = e.u(rmin)
		r.Width[i] = e.u(rmax) - r.Lo[i]
	}
	return r, nil
}

// FlyBound returns the tangent bound of the Student-t likelihood in r²
// (Maclaurin & Adams 2014, §4.2): log L = −(ν+1)/2·log(1 + t/ν) is convex in
// t = r², so its tangent at t₀ = r₀² lies below it:
//
//	log B_i = a r_i² + c, a = −(ν+1)/(2(ν + r₀²)), c = −(ν+1)/2·log(1 + r₀²/ν) − a r₀²,
//
// with r_i = y_i − x_iᵀθ. For a nil at every datum uses r₀ = 0 (the FlyMC
// reference's default); otherwise r₀ is datum i's residual at θ = at, so
// every bound is tight there. The prior is not needed.
func (e *StudentTRegression) FlyBound(at []float64, _ exactmh.Prior) (exactmh.FlyBound, error) {
	if at == nil {
		return e.FlyBoundR0(0)
	}
	if len(at) != e.d {
		return nil, fmt.Errorf("exactmh: StudentTRegression.FlyBound: len(at) = %d, want %d", len(at), e.d)
	}
	if err := vec.FiniteVec("StudentTRegression.FlyBound: at", at); err != nil {
		return nil, err
	}
	return e.tangentBound(func(i int) float64 { return e.y[i] - vec.Dot(e.Row(i), at) }), nil
}

// FlyBoundR0 returns the tangent bound tight at |r_i| = r₀ for every datum
// (see FlyBound).
func (e *StudentTRegression) FlyBoundR0(r0 float64) (exactmh.FlyBound, error) {
	if math.IsNaN(r0) || math.IsInf(r0, 0) {
		return nil, fmt.Errorf("exactmh: StudentTRegression.FlyBoundR0: r₀ = %v, want finite", r0)
	}
	return e.tangentBound(func(int) float64 { return r0 }), nil
}

// tangentBound writes a(y − z)² + c as a z² − 2a y z + (a y² + c).
func (e *StudentTRegression) tangentBound(r0 func(i int) float64) exactmh.FlyBound {
	n := e.Len()
	a, b, c := prefault.Make[float64](n), prefault.Make[float64](n), prefault.Make[float64](n)
	for i := range n {
		t0 := r0(i) * r0(i)
		ai := -(e.nu + 1) / (2 * (e.nu + t0))
		ci := -e.u(r0(i)) - ai*t0
		y := e.y[i]
		a[i], b[i], c[i] = ai, -2*ai*y, ai*y*y+ci
	}
	return exactmh.GLMQuadraticFlyBound(e, a, b, c)
}

// TaylorBound returns b_i = sup|f^{(k+1)}|·m_i^{k+1}, m_i = max_j |x_ij|,
// for f(r) = (ν+1)/2·log(1 + r²/ν): f″(r) = (ν+1)(ν − r²)/(ν + r²)², largest
// at r = 0, (ν+1)/ν; f‴(r) = −2(ν+1)r(3ν − r²)/(ν + r²)³, whose largest
// magnitude, at r = (√2 − 1)√ν, is 2(ν+1)(3 + 2√2)/(8ν^{3/2}) (the
// reference code's constant, checked; LossBound).
func (e *StudentTRegression) TaylorBound(order int, _ exactmh.Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("exactmh: StudentTRegression.TaylorBound: order %d, want 1 or 2", order)
	}
	return vec.TaylorBounds(e.x, e.d, order, e.LossBound(0, order+1, 0, 0)), nil
}

// DenseRows returns the covariates and responses as stored
// (DenseGLM).
func (e *StudentTRegression) DenseRows() exactmh.DenseRows {
	return exactmh.DenseRows{X: e.x, Y: e.y}
}

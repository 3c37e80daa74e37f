// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/vec"
)

// LogisticRegression is the energy of Bayesian logistic regression:
// U_i(θ) = −y_i log σ(x_iᵀθ) − (1 − y_i) log σ(−x_iᵀθ) = softplus(x_iᵀθ) − y_i x_iᵀθ,
// with labels y_i ∈ {0, 1}. It is computed through a softplus that never
// overflows, so U_i is finite for every finite θ.
type LogisticRegression struct {
	x []float64 // N×d row-major features
	y []float64 // labels in {0, 1}
	d int
}

// NewLogisticRegression returns the logistic-regression energy of the
// features x (row-major, N rows of d columns) and labels y ∈ {0, 1}.
// The slices are kept, not copied.
func NewLogisticRegression(x, y []float64, d int) (*LogisticRegression, error) {
	if err := vec.DataRows("NewLogisticRegression", x, len(y), d); err != nil {
		return nil, err
	}
	if err := vec.Streamed(y, 1, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if v := y[i]; v != 0 && v != 1 {
				return fmt.Errorf("exactmh: NewLogisticRegression: label y[%d] = %v, want 0 or 1", i, v)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return &LogisticRegression{x: x, y: y, d: d}, nil
}

// Len returns the number of data.
func (e *LogisticRegression) Len() int { return len(e.y) }

// Dim returns the number of features.
func (e *LogisticRegression) Dim() int { return e.d }

// Row returns the features of datum i (not a copy).
func (e *LogisticRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Label returns y_i.
func (e *LogisticRegression) Label(i int) float64 { return e.y[i] }

// Energies sets dst[k] = U_{idx[k]}(θ).
func (e *LogisticRegression) Energies(dst, theta []float64, idx []int) {
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.y, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = vec.Dot(e.Row(i), theta)
		}
		logit.Losses(dst[lo:hi], e.y, idx[lo:hi])
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), reading x_i once.
func (e *LogisticRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	var zn [logit.Group]float64
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.y, idx) {
		for g := lo; g < hi; g += logit.Group {
			group := idx[g:min(g+logit.Group, hi)]
			for k, i := range group {
				dst[g+k], zn[k] = vec.Dot2(e.Row(i), theta, thetaNew)
			}
			logit.LossDiffs(dst[g:g+len(group)], zn[:len(group)], e.y, group)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·∇U_i(θ) to grad
// for i = idx[k], computing x_iᵀθ once per datum.
func (e *LogisticRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	var slope [logit.Group]float64
	for g := 0; g < len(idx); g += logit.Group {
		group := idx[g:min(g+logit.Group, len(idx))]
		for k, i := range group {
			dst[g+k] = vec.Dot(e.Row(i), theta)
		}
		logit.LossSlopes(dst[g:g+len(group)], slope[:len(group)], e.y, group, w[g:])
		for k, i := range group {
			vec.Axpy(grad, slope[k], e.Row(i))
		}
	}
}

// AddGradient adds Σ_k w[k]·(σ(x_iᵀθ) − y_i)·x_i to grad.
func (e *LogisticRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		g := w[k] * (logit.Sigmoid(vec.Dot(row, theta)) - e.y[i])
		vec.Axpy(grad, g, row)
	}
}

// Loss returns f_i(z) = softplus(z) − y_i z, U_i at x_iᵀθ = z (GLM).
func (e *LogisticRegression) Loss(i int, z float64) float64 { return logit.Softplus(z) - e.y[i]*z }

// LossDerivs returns f_i′(z) = σ(z) − y_i and f_i″(z) = σ(z)(1 − σ(z)).
func (e *LogisticRegression) LossDerivs(i int, z float64) (f1, f2 float64) {
	s := logit.Sigmoid(z)
	return s - e.y[i], s * (1 - s)
}

// lossAndDerivs returns Loss(i, z) and LossDerivs(i, z), bit for bit,
// from one exponential (softplusSigmoid).
func (e *LogisticRegression) lossAndDerivs(i int, z float64) (f, f1, f2 float64) {
	return logit.LossAndDerivs(e.y[i], z)
}

// LossBound returns global bounds on the logistic loss's derivatives, for
// every y_i and z: |f′| = |σ − y_i| ≤ 1, f″ = σ(1 − σ) ≤ 1/4 and
// |f‴| = |σ(1 − σ)(1 − 2σ)| ≤ 1/(6√3) (at σ = (3 ± √3)/6); +Inf for k
// outside 1…3.
func (e *LogisticRegression) LossBound(_, k int, _, _ float64) float64 {
	switch k {
	case 1:
		return 1
	case 2:
		return 0.25
	case 3:
		return 1 / (6 * math.Sqrt(3))
	}
	return math.Inf(1)
}

// LossDeriv3 returns f_i‴(z) = σ(z)(1 − σ(z))(1 − 2σ(z)), for the
// third-order control variates of exactmh.ControlVariates.
func (e *LogisticRegression) LossDeriv3(_ int, z float64) float64 {
	s := logit.Sigmoid(z)
	return s * (1 - s) * (1 - 2*s)
}

// LossBound4 returns 1/8 ≥ |f_i⁗(z)| for every z: f⁗ = p(1 − 6p) with
// p = σ(1 − σ) ∈ (0, ¼], whose extremes are −⅛ at p = ¼ and 1/24 at
// p = 1/12 (TestLossCubers checks it on a grid).
func (e *LogisticRegression) LossBound4(_ int, _, _ float64) float64 { return 0.125 }

// DiffBound returns c_i = ‖x_i‖₂, M = ‖θ − θ'‖₂, valid on all of R^d since
// |σ(z) − y| ≤ 1 (TunaMH paper App. J.4; auxiliary-variable paper App. D.3).
func (e *LogisticRegression) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	for i := range c {
		c[i] = vec.Norm2(e.Row(i))
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange returns the exact range of U_i on a Box or Ball support: with
// z = x_iᵀθ ∈ [a, b], U_i = softplus(z) − y_i z is monotone in z.
func (e *LogisticRegression) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	// The support first: under an unbounded prior there is no range, and
	// its 16 bytes a datum are not allocated.
	if _, _, err := linearRange(e.Row(0), prior); err != nil {
		return nil, err
	}
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	for i := range r.Lo {
		a, b, err := linearRange(e.Row(i), prior)
		if err != nil {
			return nil, err
		}
		ua, ub := logit.Softplus(a)-e.y[i]*a, logit.Softplus(b)-e.y[i]*b
		r.Lo[i], r.Width[i] = math.Min(ua, ub), math.Abs(ua-ub)
	}
	return r, nil
}

// jjCurvature returns −tanh(ξ/2)/(4ξ), the curvature of the Jaakkola–Jordan
// bound, with its limit −1/8 at ξ = 0 (where the reference code's
// (e^ξ − 1)/((e^ξ + 1)4ξ) is 0/0).
func jjCurvature(xi float64) float64 {
	if math.Abs(xi) < 1e-4 {
		return -0.125 + xi*xi/96 // Taylor: tanh(x/2)/(4x) = 1/8 − x²/96 + …
	}
	return -math.Tanh(xi/2) / (4 * xi)
}

// FlyBound returns the Jaakkola–Jordan bound (Jaakkola & Jordan 2000, used
// by FlyMC, Maclaurin & Adams 2014): with s = (2y_i − 1)x_iᵀθ,
//
//	log σ(s) ≥ a(ξ)s² + s/2 + log σ(ξ) − ξ/2 − a(ξ)ξ², a(ξ) = −tanh(ξ/2)/(4ξ),
//
// tight at s = ±ξ. For a nil at every datum uses the untuned ξ = 1.5 of the
// FlyMC and TunaMH experiments; otherwise ξ_i = x_iᵀat, so every bound is
// tight at θ = at (MAP-tuned FlyMC). The prior is not needed.
func (e *LogisticRegression) FlyBound(at []float64, _ exactmh.Prior) (exactmh.FlyBound, error) {
	if at == nil {
		return e.FlyBoundXi(1.5)
	}
	if len(at) != e.d {
		return nil, fmt.Errorf("exactmh: LogisticRegression.FlyBound: len(at) = %d, want %d", len(at), e.d)
	}
	if err := vec.FiniteVec("LogisticRegression.FlyBound: at", at); err != nil {
		return nil, err
	}
	return e.jjBound(func(i int) float64 { return vec.Dot(e.Row(i), at) }), nil
}

// FlyBoundXi returns the Jaakkola–Jordan bound tight at |s| = ξ for every
// datum (see FlyBound).
func (e *LogisticRegression) FlyBoundXi(xi float64) (exactmh.FlyBound, error) {
	if math.IsNaN(xi) || math.IsInf(xi, 0) {
		return nil, fmt.Errorf("exactmh: LogisticRegression.FlyBoundXi: ξ = %v, want finite", xi)
	}
	return e.jjBound(func(int) float64 { return xi }), nil
}

// jjBound writes the bound of datum i, in s, as a polynomial in z = x_iᵀθ:
// s = σ_i z with σ_i = 2y_i − 1, so a s² + s/2 + c = a z² + (σ_i/2) z + c.
func (e *LogisticRegression) jjBound(xi func(i int) float64) exactmh.FlyBound {
	return logisticJJBound(e, e.y, xi)
}

// logisticJJBound is jjBound of the logistic GLM g with labels y (the
// float64 and float32 types share it).
func logisticJJBound(g exactmh.GLM, y []float64, xi func(i int) float64) exactmh.FlyBound {
	n := len(y)
	a, b, c := prefault.Make[float64](n), prefault.Make[float64](n), prefault.Make[float64](n)
	for i := range n {
		x := xi(i)
		a[i] = jjCurvature(x)
		b[i] = y[i] - 0.5
		c[i] = -logit.Softplus(-x) - x/2 - a[i]*x*x
	}
	return exactmh.GLMQuadraticFlyBound(g, a, b, c)
}

// TaylorBound returns b_i = sup|f^{(k+1)}|·m_i^{k+1}, m_i = max_j |x_ij|:
// the logistic loss has |f″| ≤ 1/4 and |f‴| = |σ(1−σ)(1−2σ)| ≤ 1/(6√3)
// (LossBound).
func (e *LogisticRegression) TaylorBound(order int, _ exactmh.Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("exactmh: LogisticRegression.TaylorBound: order %d, want 1 or 2", order)
	}
	return vec.TaylorBounds(e.x, e.d, order, e.LossBound(0, order+1, 0, 0)), nil
}

// DenseRows returns the features and labels as stored, with the logistic
// loss declared (DenseGLM): the kernels inline it.
func (e *LogisticRegression) DenseRows() exactmh.DenseRows {
	return exactmh.DenseRows{X: e.x, Y: e.y, Logistic: true}
}

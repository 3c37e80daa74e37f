// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/vec"
)

// BinomialRegression is the energy of binomial regression — k_i
// successes out of n_i trials, P(success) = F(x_iᵀθ) with F the logistic
// function (Link LogisticFamily{}) or the normal cdf (ProbitFamily{}),
// brms's binomial(k | trials(n)) and glm's cbind(k, n − k):
//
//	U_i(θ) = k_i·f(1, z) + (n_i − k_i)·f(0, z),  z = x_iᵀθ,
//
// f the link's Bernoulli loss (the binomial coefficient, a constant, is
// dropped). For the logit link U_i = n_i·log(1 + e^z) − k_i·z. Every
// derivative is that combination of the Bernoulli loss's, and every
// bound the same combination of its bounds (valid by the triangle
// inequality; for the logit link's f′ = n_iσ(z) − k_i, monotone, the
// exact sup at the ends): the loss is n_i times a Bernoulli loss at most,
// so the GLM bounds (DiffBound, TaylorBound, the control variates' cubic
// expansion through LossDeriv3 and LossBound4) scale with n_i. It
// implements exactmh.GLM and DenseGLM, so every GLM kernel and the
// automatic default's control-variate route run on it
// (TestBinomialRegressionExpanded, TestBinomialMoments, TestBinomialSBC).
type BinomialRegression struct {
	x    []float64 // N×d row-major covariates
	k, n []float64 // successes and trials
	d    int
	link GLMFamily // LogisticFamily or ProbitFamily
	cube GLMCuber
	// logit is true for the logit link (exact f′ bound).
	logit bool

	// ignoreTrials, a mutant of the kit tests, takes every datum as one
	// trial with the fraction k_i/n_i as its response.
	ignoreTrials bool
}

// NewBinomialRegression returns the binomial-regression energy of the
// covariates x (row-major, N rows of d columns), successes k and trials n
// with the link's Bernoulli family: LogisticFamily{} (logit) or
// ProbitFamily{} (probit). The slices are kept, not copied. It checks
// that every n_i is an integer ≥ 1 and every k_i an integer in [0, n_i].
func NewBinomialRegression(x, k, n []float64, d int, link GLMFamily) (*BinomialRegression, error) {
	if err := vec.DataRows("NewBinomialRegression", x, len(k), d); err != nil {
		return nil, err
	}
	if len(n) != len(k) {
		return nil, fmt.Errorf("exactmh: NewBinomialRegression: %d successes but %d trials", len(k), len(n))
	}
	for i := range k {
		if !(n[i] >= 1) || n[i] != math.Trunc(n[i]) || math.IsInf(n[i], 0) {
			return nil, fmt.Errorf("exactmh: NewBinomialRegression: trials n[%d] = %v, want an integer ≥ 1", i, n[i])
		}
		if !(k[i] >= 0 && k[i] <= n[i]) || k[i] != math.Trunc(k[i]) {
			return nil, fmt.Errorf("exactmh: NewBinomialRegression: successes k[%d] = %v, want an integer in [0, n[%d] = %v]", i, k[i], i, n[i])
		}
	}
	e := &BinomialRegression{x: x, k: k, n: n, d: d, link: link}
	switch link.(type) {
	case LogisticFamily:
		e.logit = true
	case ProbitFamily:
	default:
		return nil, fmt.Errorf("exactmh: NewBinomialRegression: link %T, want LogisticFamily or ProbitFamily", link)
	}
	e.cube = link.(GLMCuber)
	return e, nil
}

// Len returns the number of data (rows, not trials).
func (e *BinomialRegression) Len() int { return len(e.k) }

// Dim returns the number of covariates d.
func (e *BinomialRegression) Dim() int { return e.d }

// Row returns x_i (not a copy).
func (e *BinomialRegression) Row(i int) []float64 { return e.x[i*e.d : (i+1)*e.d] }

// Successes returns k_i and Trials n_i.
func (e *BinomialRegression) Successes(i int) float64 { return e.k[i] }

// Trials returns n_i.
func (e *BinomialRegression) Trials(i int) float64 { return e.n[i] }

// weights returns the weights of f(1, ·) and f(0, ·) in U_i: k_i and
// n_i − k_i.
func (e *BinomialRegression) weights(i int) (a, b float64) {
	if e.ignoreTrials {
		p := e.k[i] / e.n[i]
		return p, 1 - p
	}
	return e.k[i], e.n[i] - e.k[i]
}

// Loss returns U_i at x_iᵀθ = z.
func (e *BinomialRegression) Loss(i int, z float64) float64 {
	a, b := e.weights(i)
	var f float64
	if a != 0 {
		f += a * e.link.Loss(1, z)
	}
	if b != 0 {
		f += b * e.link.Loss(0, z)
	}
	return f
}

// LossDerivs returns U_i′ and U_i″ at z.
func (e *BinomialRegression) LossDerivs(i int, z float64) (f1, f2 float64) {
	a, b := e.weights(i)
	if a != 0 {
		g1, g2 := e.link.LossDerivs(1, z)
		f1, f2 = a*g1, a*g2
	}
	if b != 0 {
		g1, g2 := e.link.LossDerivs(0, z)
		f1, f2 = f1+b*g1, f2+b*g2
	}
	return f1, f2
}

// LossBound returns a bound on sup |U_i^{(k)}| over lo ≤ z ≤ hi: the
// weighted sum of the Bernoulli loss's bounds, and for the logit link and
// k = 1 the exact n_i·max(|σ(lo) − p_i|, |σ(hi) − p_i|), p_i = k_i/n_i.
func (e *BinomialRegression) LossBound(i, k int, lo, hi float64) float64 {
	a, b := e.weights(i)
	if e.logit && k == 1 {
		w := a + b
		p := a / w
		return w * math.Max(math.Abs(sigmoid(lo)-p), math.Abs(sigmoid(hi)-p))
	}
	var s float64
	if a != 0 {
		s += a * e.link.LossBound(1, k, lo, hi)
	}
	if b != 0 {
		s += b * e.link.LossBound(0, k, lo, hi)
	}
	return s
}

// LossDeriv3 returns U_i‴(z), for the control variates' cubic expansion.
func (e *BinomialRegression) LossDeriv3(i int, z float64) float64 {
	a, b := e.weights(i)
	var f float64
	if a != 0 {
		f += a * e.cube.LossDeriv3(1, z)
	}
	if b != 0 {
		f += b * e.cube.LossDeriv3(0, z)
	}
	return f
}

// LossBound4 returns n_i times the link's bound on |f⁗| (1/8 logit,
// 0.1890 probit).
func (e *BinomialRegression) LossBound4(i int, lo, hi float64) float64 {
	a, b := e.weights(i)
	return (a + b) * e.cube.LossBound4(0, lo, hi)
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *BinomialRegression) Energies(dst, theta []float64, idx []int) {
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.k, idx) {
		for k, i := range idx[lo:hi] {
			dst[lo+k] = e.Loss(i, vec.Dot(e.Row(i), theta))
		}
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *BinomialRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for lo, hi := range prefetch.Blocks(dst, e.x, e.d, e.k, idx) {
		for k, i := range idx[lo:hi] {
			z, zn := vec.Dot2(e.Row(i), theta, thetaNew)
			dst[lo+k] = e.Loss(i, z) - e.Loss(i, zn)
		}
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds w[k]·U_i′·x_i to
// grad for i = idx[k].
func (e *BinomialRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		z := vec.Dot(row, theta)
		dst[k] = e.Loss(i, z)
		f1, _ := e.LossDerivs(i, z)
		vec.Axpy(grad, w[k]*f1, row)
	}
}

// AddGradient adds Σ_k w[k]·U_i′(x_iᵀθ)·x_i to grad.
func (e *BinomialRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		row := e.Row(i)
		f1, _ := e.LossDerivs(i, vec.Dot(row, theta))
		vec.Axpy(grad, w[k]*f1, row)
	}
}

// DiffBound returns exactmh.GLMDiffBound(e, prior).
func (e *BinomialRegression) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	return exactmh.GLMDiffBound(e, prior)
}

// EnergyRange returns exactmh.GLMEnergyRange(e, prior).
func (e *BinomialRegression) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	return exactmh.GLMEnergyRange(e, prior)
}

// TaylorBound returns the generic GLM bounds, exactmh.GLMTaylorBounder(e).TaylorBound.
func (e *BinomialRegression) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	return exactmh.GLMTaylorBounder(e).TaylorBound(order, prior)
}

// FlyBound returns exactmh.GLMFlyBound(e, at, prior).
func (e *BinomialRegression) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	return exactmh.GLMFlyBound(e, at, prior)
}

// DenseRows returns the covariates as stored (DenseGLM); the responses
// are not a single column, so Y is nil and the loss is called, never
// inlined.
func (e *BinomialRegression) DenseRows() exactmh.DenseRows { return exactmh.DenseRows{X: e.x} }

// String names the model by its link, as errors about its bounds do.
func (e *BinomialRegression) String() string {
	return fmt.Sprintf("BinomialRegression(%T)", e.link)
}

// Compile-time checks.
var (
	_ exactmh.DenseGLM         = (*BinomialRegression)(nil)
	_ exactmh.EnergyDiffer     = (*BinomialRegression)(nil)
	_ exactmh.EnergyGradienter = (*BinomialRegression)(nil)
)

// BinomialFamily is the GLMFamily of a binomial response written as the
// fraction of successes y = k/n with the trials n as the datum's weight
// (NewWeightedSparseGLM, Multilevel.Weights): the loss per trial
//
//	f(y, z) = y·F(1, z) + (1 − y)·F(0, z),
//
// F the link's Bernoulli loss (LogisticFamily or ProbitFamily), so that
// n·f(k/n, z) = k·F(1, z) + (n − k)·F(0, z) is BinomialRegression's U_i.
// Derivatives and bounds are the same combination of the link's (for the
// logit link's f′ = σ(z) − y the exact sup at the ends).
type BinomialFamily struct {
	// Link is LogisticFamily{} or ProbitFamily{}.
	Link GLMFamily
}

// Validate checks the link and that every response is a fraction in
// [0, 1].
func (f BinomialFamily) Validate(y []float64) error {
	switch f.Link.(type) {
	case LogisticFamily, ProbitFamily:
	default:
		return fmt.Errorf("BinomialFamily: link %T, want LogisticFamily or ProbitFamily", f.Link)
	}
	for i, v := range y {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("BinomialFamily: y[%d] = %v, want the fraction of successes in [0, 1]", i, v)
		}
	}
	return nil
}

// Loss returns y·F(1, z) + (1 − y)·F(0, z).
func (f BinomialFamily) Loss(y, z float64) float64 {
	var s float64
	if y != 0 {
		s += y * f.Link.Loss(1, z)
	}
	if y != 1 {
		s += (1 - y) * f.Link.Loss(0, z)
	}
	return s
}

// LossDerivs returns f′ and f″, the same combination of the link's.
func (f BinomialFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	if y != 0 {
		a1, a2 := f.Link.LossDerivs(1, z)
		f1, f2 = y*a1, y*a2
	}
	if y != 1 {
		b1, b2 := f.Link.LossDerivs(0, z)
		f1, f2 = f1+(1-y)*b1, f2+(1-y)*b2
	}
	return f1, f2
}

// LossBound returns the combination of the link's bounds (the logit
// link's exact sup |σ − y| for k = 1).
func (f BinomialFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	if _, ok := f.Link.(LogisticFamily); ok && k == 1 {
		return math.Max(math.Abs(sigmoid(lo)-y), math.Abs(sigmoid(hi)-y))
	}
	var s float64
	if y != 0 {
		s += y * f.Link.LossBound(1, k, lo, hi)
	}
	if y != 1 {
		s += (1 - y) * f.Link.LossBound(0, k, lo, hi)
	}
	return s
}

// LossDeriv3 returns f‴ (GLMCuber).
func (f BinomialFamily) LossDeriv3(y, z float64) float64 {
	c := f.Link.(GLMCuber)
	var s float64
	if y != 0 {
		s += y * c.LossDeriv3(1, z)
	}
	if y != 1 {
		s += (1 - y) * c.LossDeriv3(0, z)
	}
	return s
}

// LossBound4 returns the link's bound on |f⁗| (GLMCuber).
func (f BinomialFamily) LossBound4(y, lo, hi float64) float64 {
	return f.Link.(GLMCuber).LossBound4(y, lo, hi)
}

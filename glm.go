// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/vec"
)

// GLM is the contract of a generalised linear model: every datum's energy
// depends on θ only through its linear predictor z_i = x_iᵀθ,
//
//	U_i(θ) = f_i(x_iᵀθ),
//
// with f_i the negative log-likelihood of datum i's response as a function
// of z. Everything the GLM-aware kernels and bounds need follows from x_i,
// f_i, f_i′, f_i″ and bounds on |f_i^{(k)}|, k ≤ 3, over an interval of z:
//
//   - TunaMH, TFMH, TunaMH-SGLD (GLMDiffBound): by the mean-value theorem and
//     Cauchy–Schwarz, |U_i(θ) − U_i(θ′)| ≤ sup|f_i′|·‖x_i‖₂·‖θ − θ′‖₂, so
//     c_i = sup|f_i′|·‖x_i‖₂ with M the Euclidean distance (TunaMH paper,
//     Assumption 1), the supremum over the z-range of the prior's support.
//   - SMH-1/SMH-2 (GLMTaylorBounder): every (k+1)-th partial derivative of U_i
//     is f_i^{(k+1)}(z)·x_{ij1}⋯x_{ij(k+1)}, so
//     b_i = sup|f_i^{(k+1)}|·(max_j |x_ij|)^{k+1}; the kernel stores only the
//     scalars f_i′ and f_i″ at ẑ_i = x_iᵀθ̂ (O(N) memory, not N Hessians).
//   - FlyMC (GLMFlyBound): if f_i″ ≤ K_i on the z-range, then
//     f_i(z) ≤ f_i(ẑ) + f_i′(ẑ)(z − ẑ) + ½K_i(z − ẑ)², a lower bound on the
//     likelihood that is quadratic in θ and so collapses to O(d²) per step.
//     Tighter model-specific bounds (Jaakkola–Jordan for the logistic loss,
//     the r² tangent for Student-t) need more than this contract and are
//     methods of those models (FlyBounder), preferred when present.
//   - PoissonMH and its gradient relatives (GLMEnergyRange): on a bounded
//     support, z_i ∈ [lo, hi] and |f_i(z) − f_i(mid)| ≤ sup|f_i′|·(hi − lo)/2.
//   - A second-order control variate Σ_i U_i(θ̂) + gᵀΔ + ½ΔᵀHΔ, Δ = θ − θ̂,
//     needs Σ_i f_i′(ẑ_i)x_i, Σ_i f_i″(ẑ_i)x_ix_iᵀ and the per-datum
//     remainder bound sup|f_i‴|·|x_iᵀΔ|³/6 ≤ sup|f_i‴|·‖x_i‖₂³‖Δ‖₂³/6.
//
// Kernels and Posterior.DiffBound, Posterior.EnergyRange use these generic
// bounds for any GLM that does not provide its own (DiffBounder,
// EnergyRanger, TaylorBounder, FlyBounder), and a Target derives from the
// contract the one-read energy difference f_i(x_iᵀθ) − f_i(x_iᵀθ′) and the
// gradient ∇U_i = f_i′(x_iᵀθ)·x_i (for FindMAP and the gradient kernels)
// when the GLM does not implement EnergyDiffer or Gradienter. LogisticRegression,
// StudentTRegression and GLMEnergy (NewGLM) implement GLM. A GLM must be
// safe for concurrent use, as every Energy.
//
// Two optional method sets widen what the control variates do for a GLM:
//
//   - LossGrowth(i int, z0 float64) (a float64, ok bool), for a loss whose
//     f_i‴ is unbounded on ℝ but grows at most exponentially,
//     |f_i‴(z)| ≤ A_i(z₀)·e^{|z − z₀|} with A_i(z₀) = a (ok false where the
//     GLM has none): ControlVariates then bounds the remainders pair by pair
//     rather than globally, so that TFMH and TunaMH run on a Poisson
//     regression (f‴ = e^z, a = e^{z₀}) under a Gaussian prior
//     (bounds_pairwise.go).
//   - LossDeriv3(i int, z float64) float64 and LossBound4(i int, lo, hi
//     float64) float64, f_i‴(z) and a bound on sup|f_i⁗| over [lo, hi]: the
//     third-order expansion of ControlVariates (cv_cubic.go).
type GLM interface {
	Energy
	// Row returns x_i, the d covariates of datum i. The caller must not
	// modify it.
	Row(i int) []float64
	// Loss returns f_i(z). It must agree with Energies:
	// U_i(θ) = Loss(i, Row(i)ᵀθ).
	Loss(i int, z float64) float64
	// LossDerivs returns f_i′(z) and f_i″(z).
	LossDerivs(i int, z float64) (f1, f2 float64)
	// LossBound returns an upper bound on sup |f_i^{(k)}(z)| over
	// lo ≤ z ≤ hi for k ∈ {1, 2, 3}, or +Inf if there is none. lo may be
	// −Inf and hi +Inf (an unbounded prior support).
	LossBound(i, k int, lo, hi float64) float64
}

// checkPriorDim returns an error if a prior that knows its dimension has
// another than d.
func checkPriorDim(prior Prior, d int) error {
	if dc, ok := prior.(dimChecker); ok {
		return dc.CheckDim(d)
	}
	return nil
}

// glmZRange returns the range of z = xᵀθ over the prior's support: finite
// on a Box or Ball (or one wrapped, see supportOf), (−Inf, +Inf) otherwise.
func glmZRange(x []float64, prior Prior) (lo, hi float64) {
	if s, ok := supportOf(prior).(BoundedSupport); ok {
		return s.LinearRange(x)
	}
	return math.Inf(-1), math.Inf(1)
}

// glmLossBound returns g.LossBound(i, k, lo, hi), or an error naming the
// datum, the interval and the value when it is not a finite bound ≥ 0.
func glmLossBound(who string, g GLM, i, k int, lo, hi float64) (float64, error) {
	s := g.LossBound(i, k, lo, hi)
	if s >= 0 && !math.IsInf(s, 1) {
		return s, nil
	}
	model := fmt.Sprintf("%T", g)
	if s, ok := g.(fmt.Stringer); ok { // model.GLMEnergy names its family
		model = s.String()
	}
	if math.IsInf(s, 1) {
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return 0, fmt.Errorf("exactmh: %s: %s has no bound on |f^(%d)| of datum %d over z ∈ (%v, %v): use a bounded prior support (a BoundedSupport such as model.Box or model.Ball)", who, model, k, i, lo, hi)
		}
		return 0, fmt.Errorf("exactmh: %s: %s bounds |f^(%d)| of datum %d over z ∈ [%v, %v] by +Inf: shrink the prior's support", who, model, k, i, lo, hi)
	}
	return 0, fmt.Errorf("exactmh: %s: %s.LossBound(datum %d, k = %d, [%v, %v]) = %v, want ≥ 0", who, model, i, k, lo, hi, s)
}

// GLMDiffBound returns the DiffBound of any GLM on the prior's support:
// c_i = sup|f_i′|·‖x_i‖₂ over the z-range of datum i (the whole line for an
// unbounded prior, [x_iᵀθ]'s range for a Box or Ball), M = ‖θ − θ′‖₂. It
// fails, naming the datum, where sup|f_i′| is infinite — the Gaussian and
// Poisson losses on an unbounded support — and a Box or Ball prior is then
// needed.
func GLMDiffBound(g GLM, prior Prior) (*DiffBound, error) {
	if err := checkPriorDim(prior, g.Dim()); err != nil {
		return nil, err
	}
	c := prefault.Make[float64](g.Len())
	rows := newRowCursor(g)
	for i := range c {
		row := rows.row(i)
		lo, hi := glmZRange(row, prior)
		s, err := glmLossBound("GLMDiffBound", g, i, 1, lo, hi)
		if err != nil {
			return nil, err
		}
		c[i] = s * vec.Norm2(row)
	}
	return &DiffBound{C: c}, nil
}

// GLMEnergyRange returns an EnergyRange of any GLM on a Box or Ball
// support from the Lipschitz bound: with z_i ∈ [lo, hi] and
// L = sup|f_i′| there, f_i(z) ∈ f_i(m) ± L(hi − lo)/2, m = (lo + hi)/2. It
// is at most twice as wide as the exact range of a monotone loss; a family
// with an exact range implements GLMLossRanger, a GLM type EnergyRanger.
func GLMEnergyRange(g GLM, prior Prior) (*EnergyRange, error) {
	return glmEnergyRange(g, prior, nil)
}

// glmEnergyRange is GLMEnergyRange returning errInterrupted within a chunk
// of data once stop is set.
func glmEnergyRange(g GLM, prior Prior, stop *atomic.Bool) (*EnergyRange, error) {
	if err := checkPriorDim(prior, g.Dim()); err != nil {
		return nil, err
	}
	if err := rangeSupport(prior); err != nil {
		return nil, err
	}
	r := &EnergyRange{Lo: prefault.Make[float64](g.Len()), Width: prefault.Make[float64](g.Len())}
	rows := newRowCursor(g)
	for i := range r.Lo {
		if i%chunk == 0 && stopped(stop) {
			return nil, errInterrupted
		}
		lo, hi, err := linearRange(rows.row(i), prior)
		if err != nil {
			return nil, err
		}
		s, err := glmLossBound("GLMEnergyRange", g, i, 1, lo, hi)
		if err != nil {
			return nil, err
		}
		half := s * (hi - lo) / 2
		mid := g.Loss(i, lo+(hi-lo)/2)
		if math.IsNaN(mid) || math.IsInf(mid, 0) {
			return nil, fmt.Errorf("exactmh: GLMEnergyRange: loss of datum %d at z = %v is %v", i, lo+(hi-lo)/2, mid)
		}
		r.Lo[i], r.Width[i] = mid-half, 2*half
	}
	return r, nil
}

// GLMTaylorBounder returns the generic TaylorBounder of any GLM, the one
// SMH uses for a GLM that has none of its own: its TaylorBound(order,
// prior) returns SMH's remainder bounds b_i = sup|f_i^{(k+1)}|·m_i^{k+1}, m_i = max_j |x_ij|, the
// supremum over the z-range of datum i on the prior's support (SMH's θ̂ and
// θ both lie in the support, which is convex, so the Taylor segment does
// too). It fails, naming the datum, where the supremum is infinite (the
// Poisson loss on an unbounded support). A zero bound (a datum whose
// remainder vanishes, as the Gaussian loss's of order 2) is replaced by the
// smallest positive float64, since SMH draws data in proportion to b_i.
func GLMTaylorBounder(g GLM) TaylorBounder { return glmBounds{g} }

// glmTaylorBound is the TaylorBound of GLMTaylorBounder(g).
func glmTaylorBound(g GLM, order int, prior Prior) ([]float64, error) {
	if order != 1 && order != 2 {
		return nil, fmt.Errorf("exactmh: GLMTaylorBound: order %d, want 1 or 2", order)
	}
	if err := checkPriorDim(prior, g.Dim()); err != nil {
		return nil, err
	}
	b := prefault.Make[float64](g.Len())
	rows := newRowCursor(g)
	for i := range b {
		row := rows.row(i)
		lo, hi := glmZRange(row, prior)
		s, err := glmLossBound("GLMTaylorBound", g, i, order+1, lo, hi)
		if err != nil {
			return nil, err
		}
		b[i] = vec.RowTaylorBound(row, order, s)
	}
	return b, nil
}

// GLMFlyBound returns FlyMC's quadratic lower bound for any GLM, tight at
// θ = at (θ = 0 for a nil at): with ẑ_i = x_iᵀat and K_i ≥ sup f_i″ over the
// z-range of datum i on the prior's support (widened to contain ẑ_i),
// Taylor's theorem gives
//
//	log B_i(θ) = −f_i(ẑ_i) − f_i′(ẑ_i)(z_i − ẑ_i) − ½K_i(z_i − ẑ_i)² ≤ −U_i(θ),
//
// z_i = x_iᵀθ, a quadratic in θ whose sum over i collapses to O(d²) per
// evaluation (for the logistic loss, K_i = 1/4, it is Böhning's bound). It
// fails, naming the datum, where sup|f_i″| is infinite (the Poisson loss on
// an unbounded support).
func GLMFlyBound(g GLM, at []float64, prior Prior) (FlyBound, error) {
	d := g.Dim()
	if err := checkPriorDim(prior, d); err != nil {
		return nil, err
	}
	if at != nil {
		if len(at) != d {
			return nil, fmt.Errorf("exactmh: GLMFlyBound: len(at) = %d, want %d", len(at), d)
		}
		if err := vec.FiniteVec("GLMFlyBound: at", at); err != nil {
			return nil, err
		}
	}
	n := g.Len()
	a, b, c := prefault.Make[float64](n), prefault.Make[float64](n), prefault.Make[float64](n)
	rows := newRowCursor(g)
	for i := range n {
		row := rows.row(i)
		var zh float64
		if at != nil {
			zh = vec.Dot(row, at)
		}
		lo, hi := glmZRange(row, prior)
		k, err := glmLossBound("GLMFlyBound", g, i, 2, math.Min(lo, zh), math.Max(hi, zh))
		if err != nil {
			return nil, err
		}
		f := g.Loss(i, zh)
		f1, _ := g.LossDerivs(i, zh)
		if math.IsNaN(f) || math.IsInf(f, 0) || math.IsNaN(f1) || math.IsInf(f1, 0) {
			return nil, fmt.Errorf("exactmh: GLMFlyBound: datum %d at ẑ = %v: f = %v, f′ = %v, want finite", i, zh, f, f1)
		}
		// −f − f1(z − zh) − ½k(z − zh)² = a z² + b z + c.
		a[i] = -k / 2
		b[i] = -f1 + k*zh
		c[i] = -f + f1*zh - k*zh*zh/2 - flyMargin
	}
	return newGLMBound(g, a, b, c), nil
}

// glmDiffer is the EnergyDiffer every GLM has: U_i(θ) − U_i(θ′) =
// f_i(x_iᵀθ) − f_i(x_iᵀθ′), reading x_i once.
type glmDiffer struct{ g GLM }

func (a glmDiffer) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	if c, ok := a.g.(rowConverter); ok {
		for k, i := range idx {
			z, zn := c.rowDot2(i, theta, thetaNew)
			dst[k] = a.g.Loss(i, z) - a.g.Loss(i, zn)
		}
		return
	}
	for k, i := range idx {
		row := a.g.Row(i)
		z, zn := vec.Dot2(row, theta, thetaNew)
		dst[k] = a.g.Loss(i, z) - a.g.Loss(i, zn)
	}
}

// glmGradient is the Gradienter every GLM has: ∇U_i(θ) = f_i′(x_iᵀθ)·x_i.
type glmGradient struct{ g GLM }

func (a glmGradient) AddGradient(grad, theta []float64, idx []int, w []float64) {
	if c, ok := a.g.(rowConverter); ok {
		for k, i := range idx {
			f1, _ := a.g.LossDerivs(i, c.rowDot(i, theta))
			c.rowAxpy(grad, w[k]*f1, i)
		}
		return
	}
	for k, i := range idx {
		row := a.g.Row(i)
		f1, _ := a.g.LossDerivs(i, vec.Dot(row, theta))
		c := w[k] * f1
		vec.Axpy(grad, c, row)
	}
}

// taylorBounderOf returns e's own TaylorBounder or, for a GLM without one,
// the generic GLMTaylorBounder.
func taylorBounderOf(e Energy) (TaylorBounder, bool) {
	if tb, ok := e.(TaylorBounder); ok {
		return tb, true
	}
	if g, ok := e.(GLM); ok {
		return glmBounds{g}, true
	}
	return nil, false
}

// flyBounderOf returns e's own FlyBounder or, for a GLM without one, the
// generic GLMFlyBound.
func flyBounderOf(e Energy) (FlyBounder, bool) {
	if fb, ok := e.(FlyBounder); ok {
		return fb, true
	}
	if g, ok := e.(GLM); ok {
		return glmBounds{g}, true
	}
	return nil, false
}

// glmBounds offers the generic GLM bounds as TaylorBounder and FlyBounder.
type glmBounds struct{ g GLM }

func (b glmBounds) TaylorBound(order int, prior Prior) ([]float64, error) {
	return glmTaylorBound(b.g, order, prior)
}

func (b glmBounds) FlyBound(at []float64, prior Prior) (FlyBound, error) {
	return GLMFlyBound(b.g, at, prior)
}

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
	"github.com/exactmh/exactmh/internal/vec"
)

// GaussianMixture is the energy of the two-component mixture of the TunaMH
// paper (App. J.3): x_i ~ ½N(θ1, σ²) + ½N(θ1 + θ2, σ²), θ = (θ1, θ2),
//
//	U_i(θ) = log(2√(2π)σ) − log[exp(−(x_i − θ1)²/2σ²) + exp(−(x_i − θ1 − θ2)²/2σ²)],
//
// evaluated by log-sum-exp so it stays finite far from the data.
type GaussianMixture struct {
	x      []float64
	sigma2 float64
	logC   float64
}

// NewGaussianMixture returns the mixture energy of the scalar data x with
// component variance sigma2 > 0 (the paper uses σ² = 2). x is kept.
func NewGaussianMixture(x []float64, sigma2 float64) (*GaussianMixture, error) {
	if err := vec.DataRows("NewGaussianMixture", x, len(x), 1); err != nil {
		return nil, err
	}
	if !(sigma2 > 0) || math.IsInf(sigma2, 0) {
		return nil, fmt.Errorf("exactmh: NewGaussianMixture: σ² = %v, want finite > 0", sigma2)
	}
	return &GaussianMixture{x: x, sigma2: sigma2, logC: math.Log(2 * math.Sqrt(2*math.Pi*sigma2))}, nil
}

// Len returns the number of data.
func (e *GaussianMixture) Len() int { return len(e.x) }

// Dim returns 2.
func (e *GaussianMixture) Dim() int { return 2 }

// Sigma2 returns the component variance σ².
func (e *GaussianMixture) Sigma2() float64 { return e.sigma2 }

// X returns datum x_i.
func (e *GaussianMixture) X(i int) float64 { return e.x[i] }

func (e *GaussianMixture) u(x, t1, t2 float64) float64 {
	r1, r2 := x-t1, x-t1-t2
	return e.logC - logit.LogAddExp(-r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2))
}

// mixtureGroup is how many data the mixture's batch methods transform at
// a time: first every exponential of the group, then every log1p, so that
// the two need not wait on each other datum by datum (as in logisticLosses).
const mixtureGroup = 64

// logKernels returns the two components' log kernels at x, and the larger
// and the exponential of the smaller minus the larger: U = logC − (hi +
// log1p(ex)), as logAddExp computes it.
func (e *GaussianMixture) logKernels(x, t1, t2 float64) (a1, a2, hi, d float64) {
	r1, r2 := x-t1, x-t1-t2
	a1, a2 = -r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2)
	return a1, a2, max(a1, a2), min(a1, a2) - max(a1, a2)
}

// Energies sets dst[k] = U_{idx[k]}(θ), bit for bit u's.
func (e *GaussianMixture) Energies(dst, theta []float64, idx []int) {
	var ex [mixtureGroup]float64
	for lo := 0; lo < len(idx); lo += mixtureGroup {
		group := idx[lo:min(lo+mixtureGroup, len(idx))]
		for k, i := range group {
			_, _, hi, d := e.logKernels(e.x[i], theta[0], theta[1])
			dst[lo+k], ex[k] = hi, math.Exp(d)
		}
		for k := range group {
			dst[lo+k] = e.logC - (dst[lo+k] + math.Log1p(ex[k]))
		}
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ'), bit for bit u's difference.
func (e *GaussianMixture) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	var ex, exNew, hiNew [mixtureGroup]float64
	for lo := 0; lo < len(idx); lo += mixtureGroup {
		group := idx[lo:min(lo+mixtureGroup, len(idx))]
		for k, i := range group {
			_, _, hi, d := e.logKernels(e.x[i], theta[0], theta[1])
			_, _, hn, dn := e.logKernels(e.x[i], thetaNew[0], thetaNew[1])
			dst[lo+k], ex[k], hiNew[k], exNew[k] = hi, math.Exp(d), hn, math.Exp(dn)
		}
		for k := range group {
			dst[lo+k] = (e.logC - (dst[lo+k] + math.Log1p(ex[k]))) - (e.logC - (hiNew[k] + math.Log1p(exNew[k])))
		}
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) (App. J.3) to grad.
func (e *GaussianMixture) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		x := e.x[i]
		r1, r2 := x-theta[0], x-theta[0]-theta[1]
		a1, a2 := -r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2)
		// Responsibility of component 2, computed stably.
		p1, p2 := logit.Sigmoid(a1-a2), logit.Sigmoid(a2-a1)
		grad[0] -= w[k] * (p1*r1 + p2*r2) / e.sigma2
		grad[1] -= w[k] * p2 * r2 / e.sigma2
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) and adds Σ_k w[k]·∇U_i(θ) to
// grad in one read of the data (EnergyGradienter, for MALA and HMC): the
// exponential of log-sum-exp gives the responsibilities too, so a datum
// costs one exp and one log1p where Energies and AddGradient take four
// transcendentals between them.
func (e *GaussianMixture) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	t0, t1, s2 := theta[0], theta[1], e.sigma2
	var g0, g1 float64
	var ex [mixtureGroup]float64
	var first [mixtureGroup]bool // a1 ≥ a2
	for lo := 0; lo < len(idx); lo += mixtureGroup {
		group := idx[lo:min(lo+mixtureGroup, len(idx))]
		for k, i := range group {
			a1, a2, hi, d := e.logKernels(e.x[i], t0, t1)
			dst[lo+k], ex[k], first[k] = hi, math.Exp(d), a1 >= a2
		}
		for k, i := range group {
			// p1, p2: the responsibilities; hi + log1p(ex) = log(e^{a1} + e^{a2}).
			x := e.x[i]
			r1, r2 := x-t0, x-t0-t1
			big := 1 / (1 + ex[k])
			p1, p2 := ex[k]*big, big
			if first[k] {
				p1, p2 = big, ex[k]*big
			}
			dst[lo+k] = e.logC - (dst[lo+k] + math.Log1p(ex[k]))
			g0 -= w[lo+k] * (p1*r1 + p2*r2) / s2
			g1 -= w[lo+k] * p2 * r2 / s2
		}
	}
	grad[0] += g0
	grad[1] += g1
}

// AddHessian adds Σ_k w[k]·∇²U_i(θ) to h (2×2 row-major, Hessianer). With
// a_c = −r_c²/2σ² the log kernels (r_1 = x − θ1, r_2 = x − θ1 − θ2) and p_c
// the responsibilities, U_i = const − log(e^{a_1} + e^{a_2}) has
//
//	∇²U_i = −Σ_c p_c∇²a_c − p_1p_2(∇a_1 − ∇a_2)(∇a_1 − ∇a_2)ᵀ
//	      = [[1, p_2], [p_2, p_2]]/σ² − p_1p_2·vvᵀ,  v = (θ2, −r_2)/σ²,
//
// the second term the covariance of ∇a_c under the responsibilities.
func (e *GaussianMixture) AddHessian(h, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		x := e.x[i]
		r1, r2 := x-theta[0], x-theta[0]-theta[1]
		a1, a2 := -r1*r1/(2*e.sigma2), -r2*r2/(2*e.sigma2)
		p1, p2 := logit.Sigmoid(a1-a2), logit.Sigmoid(a2-a1)
		v0, v1 := theta[1]/e.sigma2, -r2/e.sigma2
		c := w[k]
		h[0] += c * (1/e.sigma2 - p1*p2*v0*v0)
		h[1] += c * (p2/e.sigma2 - p1*p2*v0*v1)
		h[3] += c * (p2/e.sigma2 - p1*p2*v1*v1)
	}
}

// mixtureReach returns, for datum x on a Box support, A = max|x − θ1| and
// B = max|x − θ1 − θ2|.
func (e *GaussianMixture) mixtureReach(x float64, prior exactmh.Prior) (a, b float64, err error) {
	box, ok := prior.(*Box)
	if !ok {
		return 0, 0, fmt.Errorf("exactmh: GaussianMixture bounds need a Box prior (the paper's [−3, 3]²), have %T", prior)
	}
	a = math.Max(math.Abs(x-box.Lo[0]), math.Abs(x-box.Hi[0]))
	b = math.Max(math.Abs(x-box.Lo[0]-box.Lo[1]), math.Abs(x-box.Hi[0]-box.Hi[1]))
	return a, b, nil
}

// DiffBound returns the TunaMH paper's bound (App. J.3), generalised from
// [−3, 3]² to any box: |∂U_i/∂θ1| ≤ (A + B)/σ², |∂U_i/∂θ2| ≤ B/σ², so
// c_i = √(((A+B)/σ²)² + (B/σ²)²); on [−3, 3]², A = |x_i| + 3, B = |x_i| + 6.
func (e *GaussianMixture) DiffBound(prior exactmh.Prior) (*exactmh.DiffBound, error) {
	c := prefault.Make[float64](e.Len())
	for i := range c {
		a, b, err := e.mixtureReach(e.x[i], prior)
		if err != nil {
			return nil, err
		}
		c[i] = math.Hypot((a+b)/e.sigma2, b/e.sigma2)
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange returns Lo = log(2√(2π)σ) − log 2 (both exponentials ≤ 1) and
// the upper end log(2√(2π)σ) − log(e^{−A²/2σ²} + e^{−B²/2σ²}) on a Box.
func (e *GaussianMixture) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	r := &exactmh.EnergyRange{Lo: prefault.Make[float64](e.Len()), Width: prefault.Make[float64](e.Len())}
	for i := range r.Lo {
		a, b, err := e.mixtureReach(e.x[i], prior)
		if err != nil {
			return nil, err
		}
		r.Lo[i] = e.logC - math.Ln2
		r.Width[i] = math.Ln2 - logit.LogAddExp(-a*a/(2*e.sigma2), -b*b/(2*e.sigma2))
	}
	return r, nil
}

// FlyBound returns the first-order Taylor bound of the TunaMH paper's
// App. J.3 around θ⁰ = at (θ⁰ = 0 for a nil at):
//
//	log B_i(θ) = −U_i(θ⁰) − ∇U_i(θ⁰)ᵀ(θ − θ⁰) − ½Ū_{2,i}‖θ − θ⁰‖₁²,
//
// where Ū_{2,i} bounds every second partial derivative of U_i on the support.
// It needs a Box prior; Ū_{2,i} is the paper's
// ((2|x_i| + 3r)/σ²)² + ((|x_i| + r)/σ²)² + ((|x_i| + 2r)/σ²)² + 2/σ² with
// r = max_j max(|Lo_j|, |Hi_j|) (r = 3 in the paper). It is looser than
// necessary, but a tighter one would not reproduce the paper's batch sizes.
// Σ_i log B_i needs only Σ_i U_i(θ⁰), Σ_i ∇U_i(θ⁰) and Σ_i Ū_{2,i}.
func (e *GaussianMixture) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	box, ok := prior.(*Box)
	if !ok {
		return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound needs a *Box prior, have %T", prior)
	}
	theta0 := []float64{0, 0}
	if at != nil {
		if len(at) != 2 {
			return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound: len(at) = %d, want 2", len(at))
		}
		if !box.Contains(at) {
			return nil, fmt.Errorf("exactmh: GaussianMixture.FlyBound: at = %v outside the prior's box", at)
		}
		theta0 = []float64{at[0], at[1]}
	}
	r := 0.0
	for j := range 2 {
		r = math.Max(r, math.Max(math.Abs(box.Lo[j]), math.Abs(box.Hi[j])))
	}
	n := e.Len()
	b := &mixtureBound{e: e, theta0: theta0, u0: make([]float64, n), g0: make([]float64, 2*n), u2: make([]float64, n)}
	idx, one := []int{0}, []float64{1}
	for i := range n {
		x := math.Abs(e.x[i])
		idx[0] = i
		e.Energies(b.u0[i:i+1], theta0, idx)
		e.AddGradient(b.g0[2*i:2*i+2], theta0, idx, one)
		b.u2[i] = e.curvatureBound(x, r)
		b.sumU0 += b.u0[i]
		b.sumG0[0] += b.g0[2*i]
		b.sumG0[1] += b.g0[2*i+1]
		b.sumU2 += b.u2[i]
	}
	return b, nil
}

// curvatureBound is App. J.3's Ū_{2,i} for |x_i| = x on the box of radius r.
func (e *GaussianMixture) curvatureBound(x, r float64) float64 {
	s := e.sigma2
	p, q, t := (2*x+3*r)/s, (x+r)/s, (x+2*r)/s
	return p*p + q*q + t*t + 2/s
}

type mixtureBound struct {
	e            *GaussianMixture
	theta0       []float64
	u0, g0, u2   []float64
	sumU0, sumU2 float64
	sumG0        [2]float64
}

// flyMargin is exactmh.GLMQuadraticFlyBound's margin, subtracted from
// every log B_i so the gaps stay positive where the bound is tight.
const flyMargin = 1e-6

// LogBoundSum returns −ΣU_i(θ⁰) − (Σ∇U_i(θ⁰))ᵀ(θ − θ⁰) − ½ΣŪ_{2,i}‖θ − θ⁰‖₁².
func (b *mixtureBound) LogBoundSum(theta []float64) float64 {
	d0, d1 := theta[0]-b.theta0[0], theta[1]-b.theta0[1]
	l1 := math.Abs(d0) + math.Abs(d1)
	return -b.sumU0 - b.sumG0[0]*d0 - b.sumG0[1]*d1 - 0.5*b.sumU2*l1*l1 - flyMargin*float64(len(b.u0))
}

// Gaps sets dst[k] = −U_i(θ) − log B_i(θ).
func (b *mixtureBound) Gaps(dst, theta []float64, idx []int) {
	d0, d1 := theta[0]-b.theta0[0], theta[1]-b.theta0[1]
	l1 := math.Abs(d0) + math.Abs(d1)
	for k, i := range idx {
		logB := -b.u0[i] - b.g0[2*i]*d0 - b.g0[2*i+1]*d1 - 0.5*b.u2[i]*l1*l1 - flyMargin
		dst[k] = -b.e.u(b.e.x[i], theta[0], theta[1]) - logB
	}
}

// TaylorBound returns App. J.3's Ū_{2,i} for order 1 (see FlyBound); the
// mixture supports order 1 only, on a Box prior.
func (e *GaussianMixture) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	if order != 1 {
		return nil, fmt.Errorf("exactmh: GaussianMixture.TaylorBound: order %d, want 1", order)
	}
	box, ok := prior.(*Box)
	if !ok {
		return nil, fmt.Errorf("exactmh: GaussianMixture.TaylorBound needs a *Box prior, have %T", prior)
	}
	r := 0.0
	for j := range 2 {
		r = math.Max(r, math.Max(math.Abs(box.Lo[j]), math.Abs(box.Hi[j])))
	}
	b := prefault.Make[float64](e.Len())
	for i, x := range e.x {
		b[i] = e.curvatureBound(math.Abs(x), r)
	}
	return b, nil
}

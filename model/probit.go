// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
)

// ProbitFamily is the GLMFamily of probit regression: labels y_i ∈ {0, 1}
// with P(y_i = 1) = Φ(x_iᵀθ), Φ the standard normal cdf. With s = 2y − 1 and
// t = s·z,
//
//	f(y, z) = −log Φ(t),  f′ = −s·λ(t),  f″ = λ(t)(t + λ(t)),
//	f‴ = s·λ(t)[1 − (t + λ(t))(t + 2λ(t))],
//
// where λ(t) = φ(t)/Φ(t) is the inverse Mills ratio (λ′ = −λ(t + λ)).
// log Φ is computed through math.Erfc (log1p(−½erfc(t/√2)) for t > 0) and,
// for t < −12, where erfc nears underflow, through the asymptotic series of
// the Mills ratio (Abramowitz & Stegun 26.2.12), so the loss is finite and
// accurate for every finite z (f ≈ t²/2 in the far tail). Use it through
// NewGLM:
//
//	e, err := model.NewGLM(x, y, d, model.ProbitFamily{})
//
// Bounds: f″ = 1 − Var(N(0, 1) truncated to (−t, ∞)) ∈ (0, 1) decreases in t,
// λ decreases in t and grows like |t| as t → −∞, so sup|f′| = λ(t_min) is
// finite only on a Box or Ball prior (DiffBound fails with an error naming
// the datum otherwise), sup|f″| = f″(t_min) ≤ 1 (1 on an unbounded support)
// and sup|f‴| ≤ 0.2958 everywhere (0.295719 at t ≈ 1.0024, found on a grid of
// step 10⁻⁵ over [−30, 30]; the function decays outside it). SMH-1, SMH-2 and
// FlyMC (GLMFlyBound, K = 1) therefore work on any support.
type ProbitFamily struct{}

// probitF3 bounds sup_t |f‴| for the probit loss (see ProbitFamily).
const probitF3 = 0.2958

// probitTail is the t below which log Φ(t) and λ(t) use the Mills-ratio
// series instead of erfc.
const probitTail = -12

// Validate checks that every response is 0 or 1.
func (ProbitFamily) Validate(y []float64) error {
	for i, v := range y {
		if v != 0 && v != 1 {
			return fmt.Errorf("ProbitFamily: label y[%d] = %v, want 0 or 1", i, v)
		}
	}
	return nil
}

// millsSeries returns S = x·R(x) and 1 − S for the Mills ratio
// R(x) = Φ(−x)/φ(x), x ≥ 12, from the asymptotic series
// x·R(x) = 1 − 1/x² + 1·3/x⁴ − 1·3·5/x⁶ + … (A&S 26.2.12), whose error is
// below the first term left out; at x ≥ 12 the terms fall below 10⁻¹⁷ of the
// sum long before they start to grow (at k ≈ x²/2).
func millsSeries(x float64) (s, oneMinusS float64) {
	x2 := x * x
	term, tail := 1.0, 0.0
	for k := 1; k < 100; k++ {
		term *= float64(2*k-1) / x2
		if k%2 == 1 {
			tail += term
		} else {
			tail -= term
		}
		if term < 1e-17*tail {
			break
		}
	}
	return 1 - tail, tail
}

// logPhi returns log Φ(t), accurate in both tails.
func logPhi(t float64) float64 {
	switch {
	case t > 0:
		return math.Log1p(-0.5 * math.Erfc(t/math.Sqrt2))
	case t >= probitTail:
		return math.Log(0.5 * math.Erfc(-t/math.Sqrt2))
	}
	x := -t
	s, _ := millsSeries(x)
	// Φ(t) = φ(x)·R(x) = e^{−x²/2}/√(2π) · S/x.
	return math.Log(s/x) - x*x/2 - 0.5*math.Log(2*math.Pi)
}

// probitLambda returns λ(t) = φ(t)/Φ(t) and h(t) = λ(t)(t + λ(t)), the
// latter without the cancellation of t + λ in the far left tail.
func probitLambda(t float64) (lambda, h float64) {
	if t >= probitTail {
		l := math.Sqrt(2/math.Pi) * math.Exp(-t*t/2) / math.Erfc(-t/math.Sqrt2)
		return l, l * (t + l)
	}
	x := -t
	s, tail := millsSeries(x)
	// λ = x/S and t + λ = x/S − x = x(1 − S)/S.
	return x / s, x * x * tail / (s * s)
}

// probitT returns t = (2y − 1)·z, the argument of Φ.
func probitT(y, z float64) float64 {
	if y == 0 {
		return -z
	}
	return z
}

// Loss returns −log Φ((2y − 1)z).
func (ProbitFamily) Loss(y, z float64) float64 { return -logPhi(probitT(y, z)) }

// LossAndDeriv returns Loss and LossDerivs's f′, sharing the
// Erfc(−t/√2) that log Φ(t) and λ(t) both take for probitTail ≤ t ≤ 0
// (and the Mills series below probitTail); for t > 0 log Φ takes
// Erfc(t/√2) and the two are computed apart, as Loss and LossDerivs do.
func (ProbitFamily) LossAndDeriv(y, z float64) (loss, f1 float64) {
	t := probitT(y, z)
	var l float64
	switch {
	case t > 0:
		loss = -logPhi(t)
		l, _ = probitLambda(t)
	case t >= probitTail:
		c := math.Erfc(-t / math.Sqrt2)
		loss = -math.Log(0.5 * c)
		l = math.Sqrt(2/math.Pi) * math.Exp(-t*t/2) / c
	default:
		x := -t
		s, _ := millsSeries(x)
		loss = -(math.Log(s/x) - x*x/2 - 0.5*math.Log(2*math.Pi))
		l = x / s
	}
	if y == 0 {
		return loss, l
	}
	return loss, -l
}

// LossDerivs returns f′ = −(2y − 1)λ(t) and f″ = λ(t)(t + λ(t)),
// t = (2y − 1)z.
func (ProbitFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	l, h := probitLambda(probitT(y, z))
	if y == 0 {
		return l, h
	}
	return -l, h
}

// LossBound returns, over z ∈ [lo, hi] (t ∈ [t_min, t_max]), sup|f′| =
// λ(t_min) (+Inf if t_min = −Inf), sup|f″| = f″(t_min) (1 if t_min = −Inf)
// and sup|f‴| ≤ 0.2958; +Inf for k outside 1…3.
func (ProbitFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	tmin := lo
	if y == 0 {
		tmin = -hi
	}
	switch k {
	case 1:
		if math.IsInf(tmin, -1) {
			return math.Inf(1)
		}
		l, _ := probitLambda(tmin)
		return l
	case 2:
		if math.IsInf(tmin, -1) {
			return 1
		}
		_, h := probitLambda(tmin)
		return math.Min(h, 1)
	case 3:
		return probitF3
	}
	return math.Inf(1)
}

// probitF4 bounds sup_t |f⁗| for the probit loss: f⁗ = −λA(1 − AB) −
// λ((1 − λA)B + A(1 − 2λA)), A = t + λ, B = t + 2λ, reaches 0.188957 at
// t ≈ 2.0713 on a grid of step 10⁻⁴ over [−30, 30] and decays outside it
// (TestLossCubers checks the bound against LossDeriv3's differences).
const probitF4 = 0.1890

// LossDeriv3 returns f‴ = (2y − 1)·λ(t)[1 − (t + λ)(t + 2λ)], t = (2y − 1)z,
// for GroupGibbs's cross-cubic control variate (GLMCuber).
func (ProbitFamily) LossDeriv3(y, z float64) float64 {
	t := probitT(y, z)
	l, _ := probitLambda(t)
	f3 := l * (1 - (t+l)*(t+2*l))
	if y == 0 {
		return -f3
	}
	return f3
}

// LossBound4 returns 0.1890 ≥ |f⁗| for every y and z (probitF4).
func (ProbitFamily) LossBound4(_, _, _ float64) float64 { return probitF4 }

// LossRange returns the range of f(y, ·) over [lo, hi]: f decreases in
// t = (2y − 1)z, so its extremes are at the ends.
func (ProbitFamily) LossRange(y, lo, hi float64) (min, max float64) {
	a, b := -logPhi(probitT(y, lo)), -logPhi(probitT(y, hi))
	return math.Min(a, b), math.Max(a, b)
}

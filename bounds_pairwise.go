// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"
)

// LossGrowther is implemented by GLMs whose third loss derivative, though
// unbounded on ℝ, grows at most exponentially (GLM's optional LossGrowth
// method): for every real z,
//
//	|f_i‴(z)| ≤ A_i(z₀)·e^{|z − z₀|},  A_i(z₀) = LossGrowth(i, z₀),
//
// with ok false where the GLM has no such bound (its family does not
// provide one). Poisson regression with its log link has f‴ = e^z ≤
// e^{z₀}·e^{|z − z₀|}: A_i(z₀) = e^{z₀} (model.PoissonFamily).
//
// ControlVariates uses it where sup|f_i‴| over the prior's support is
// infinite (any prior but a Box or Ball): the remainders' DiffBound is then
// valid pair by pair rather than globally (growthDistance), so that TFMH
// and TunaMH run on a Poisson regression with a Gaussian prior.
type LossGrowther interface {
	LossGrowth(i int, z0 float64) (a float64, ok bool)
}

// growthMode reports whether ControlVariates bounds g's remainders through
// LossGrowth: g provides it and the third derivative of datum 0 is
// unbounded on its interval of x_0ᵀθ over the prior's support.
func growthMode(g GLM, prior Prior) (LossGrowther, bool) {
	lg, ok := g.(LossGrowther)
	if !ok || g.Len() == 0 {
		return nil, false
	}
	rows := newRowCursor(g)
	zlo, zhi := glmZRange(rows.row(0), prior)
	if k := g.LossBound(0, 3, zlo, zhi); !math.IsInf(k, 1) && !math.IsNaN(k) {
		return nil, false
	}
	if _, ok := lg.LossGrowth(0, 0); !ok {
		return nil, false
	}
	return lg, true
}

// growthDistance is the control-variate remainders' M(θ, θ′) when their
// third derivatives grow exponentially (LossGrowther): with a = ‖θ − θ̂‖_H,
// b = ‖θ′ − θ̂‖_H, δ = ‖θ − θ′‖_H and s_i = ‖x_i‖_{H⁻¹}, every z on the
// segments from ẑ_i to x_iᵀθ and x_iᵀθ′ and between them lies within
// s_i·max(a, b) of ẑ_i (Cauchy–Schwarz in H's inner product), where
// |f_i‴| ≤ A_i·e^{s_i·max(a, b)} ≤ A_i·e^{s·max(a, b)}, s = max_i s_i.
// Taylor's remainder at each end and the mean value theorem along the
// segment then give |R_i(θ) − R_i(θ′)| ≤ A_i·s_i³ · e^{s·max(a, b)}·
// min((a³ + b³)/6, max(a, b)²·δ/2): c_i = A_i·s_i³, a per-datum constant,
// times this per-pair scalar, so the kernels' sums and draws ∝ c_i are
// unchanged. Near a concentrated posterior s·max(a, b) is small (s ~
// √(d/N)/f″, max(a, b) ~ √d) and the factor is close to 1; far from θ̂ it
// grows as the derivatives do, and so do the batches.
func (e *cvEnergy) growthDistance(a, b, delta float64) float64 {
	hi := max(a, b)
	return math.Exp(e.sGrow*hi) * min((a*a*a+b*b*b)/6, hi*hi*delta/2)
}

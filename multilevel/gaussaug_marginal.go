// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// marginalWidth is the marginal scale move's slice width in s before
// warmup adapts it.
const marginalWidth = 0.5

// linearPredictors sets η_i = x_iᵀw + o_i at θ, one pass over the rows.
func (c *augChain) linearPredictors() {
	ptr, col, val, w := c.rows.ptr, c.rows.col, c.rows.val, c.theta
	for i := range c.eta {
		e := c.off[i]
		for k := ptr[i]; k < ptr[i+1]; k++ {
			e += val[k] * w[col[k]]
		}
		c.eta[i] = e
	}
}

// marginalScale is update 5 for term t, made once z is spent: a slice
// sampling update (Neal, Ann. Statist. 31, 2003: stepping out by
// marginalWidth, at most 32 widths, then shrinkage) of the position s
// along the orbit of the group
//
//	T_s: ℓ_t → ℓ_t + s, u_t → e^s·u_t;  every other scale ℓ → ℓ + k_t·s,
//	     every other location coordinate (β, other effects) → e^{k_t·s}·(·)
//
// under the probit likelihood itself, not z's. T_s∘T_r = T_{s+r}, and the
// state's density along the orbit in s (the group's Haar measure ds) is
//
//	h(s) = −Σ_i U_i(o_i + e^s·a_i + e^{k_t·s}·r_i) + log p(T_s θ) + (G_t + k_t(E − G_t))·s,
//
// a_i the term's part of η_i, r_i the rest less the offset, E = len(eff)
// the location coordinates (the Jacobian of the scalings): an exact
// update (Liu and Sabatti, Biometrika 87, 2000, the generalised Gibbs
// step, with any h-invariant kernel along the orbit). k_t = 0 is the
// non-centred update of τ_t given ũ_t = u_t/τ_t; k_t = τ_t²/(1 + Σ τ²) at
// the centre (asisTerm.k) follows a binary model's attenuation as well —
// the fixed effects and the other terms scale with the latent sd √(1 +
// Σ τ²), so a larger τ_t comes with larger β. Every earlier update
// conditions on z, which pins τ far more tightly than y does where each
// level holds a datum or two (the latent data say u, and so τ, to within
// about 1/√N); this one does not. Each evaluation reads every datum
// (counted).
func (c *augChain) marginalScale(rng *rand.Rand, t *asisTerm) (moved float64) {
	th := c.theta
	kt := t.k
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	for i := range c.a {
		var s float64
		for k := ptr[i]; k < ptr[i+1]; k++ {
			if j := int(col[k]); t.has(j) {
				s += val[k] * th[j]
			}
		}
		c.a[i] = s
		c.r[i] = c.eta[i] - c.off[i] - s
	}
	jac := float64(t.levels) + kt*float64(len(c.eff)-t.levels)
	if c.ah.marginalNoJacobian {
		jac = 0
	}
	// move sets dst = T_s θ.
	move := func(dst []float64, s float64) {
		copy(dst, th)
		e, ek := math.Exp(s), math.Exp(kt*s)
		for _, j := range c.eff {
			if t.has(j) {
				dst[j] *= e
			} else {
				dst[j] *= ek
			}
		}
		for _, j := range c.pxLog {
			if j == t.logTau {
				dst[j] += s
			} else {
				dst[j] += kt * s
			}
		}
	}
	lastU := math.NaN()
	f := func(s float64) float64 {
		var u float64
		if s == 0 && !math.IsNaN(c.uCur) {
			u = c.uCur // the state's energy, the previous term's last evaluation
		} else {
			e, ek := math.Exp(s), math.Exp(kt*s)
			for i, ai := range c.a {
				u += c.pe.Loss(i, c.off[i]+e*ai+ek*c.r[i])
			}
			c.t.Count(len(c.a))
		}
		lastU = u
		move(c.next, s)
		v := -u + c.t.LogPrior(c.next) + jac*s
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	fx0 := f(0)
	u0 := lastU
	x := sliceStep(rng, f, 0, fx0, t.width)
	if x == 0 {
		c.uCur = u0 // θ unchanged
		return 0
	}
	c.uCur = lastU // the last evaluation was at x
	move(c.next, x)
	copy(th, c.next)
	c.lp = c.t.LogPrior(th)
	e, ek := math.Exp(x), math.Exp(kt*x)
	for i, ai := range c.a {
		c.eta[i] = c.off[i] + e*ai + ek*c.r[i]
	}
	return x
}

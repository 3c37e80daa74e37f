// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// marginalWidth is the slice width in log τ of the marginal scale move.
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

// marginalScale is update 5 for term t, made once z is spent: log τ by
// slice sampling (Neal, Ann. Statist. 31, 2003: stepping out by
// marginalWidth, at most 32 widths, then shrinkage) on its conditional in
// the non-centred form given ũ = u/τ, β and the other terms — under the
// probit likelihood itself, not z's:
//
//	log π(ℓ | ũ, …) = −Σ_i U_i(η_i + (e^ℓ − τ)a_i) + log π(θ_ℓ) + Gℓ,
//
// a = Z_tũ, θ_ℓ the state with log τ = ℓ and u = e^ℓũ (the G effects'
// prior N(0, τ²) gives −Gℓ at u = τũ; the Jacobian τ^G of u = τũ adds it
// back). Every earlier update conditions on z, which pins τ far more
// tightly than y does where each level holds a datum or two (the latent
// data say u, and so τ, to within about 1/√N); this one does not. Each
// evaluation reads every datum (counted).
func (c *augChain) marginalScale(rng *rand.Rand, t *asisTerm) {
	const maxWidths = 32
	th := c.theta
	l0 := th[t.logTau]
	tau := math.Exp(l0)
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	for i := range c.a {
		var s float64
		for k := ptr[i]; k < ptr[i+1]; k++ {
			if j := int(col[k]); t.has(j) {
				s += val[k] * th[j]
			}
		}
		c.a[i] = s / tau
	}
	g := float64(t.levels)
	if c.ah.marginalNoJacobian {
		g = 0
	}
	f := func(l float64) float64 {
		d := math.Exp(l) - tau
		var u float64
		for i, ai := range c.a {
			u += c.pe.Loss(i, c.eta[i]+d*ai)
		}
		c.t.Count(len(c.a))
		copy(c.next, th)
		r := math.Exp(l) / tau
		for q := range t.levels {
			c.next[t.start+q*t.stride] *= r
		}
		c.next[t.logTau] = l
		v := -u + c.t.LogPrior(c.next) + g*l
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	y := f(l0) + math.Log(1-rng.Float64()) // log(u·π(l0)), u ∈ (0, 1]
	w := c.mWidth
	lo := l0 - w*rng.Float64()
	hi := lo + w
	jl := int(maxWidths * rng.Float64())
	kr := maxWidths - 1 - jl
	for ; jl > 0 && f(lo) >= y; jl-- {
		lo -= w
	}
	for ; kr > 0 && f(hi) >= y; kr-- {
		hi += w
	}
	// Shrinkage: l0 is in the slice, so the interval closes on it.
	x := lo + (hi-lo)*rng.Float64()
	for x != l0 && f(x) < y {
		if x < l0 {
			lo = x
		} else {
			hi = x
		}
		x = lo + (hi-lo)*rng.Float64()
	}
	if x == l0 {
		return
	}
	r := math.Exp(x) / tau
	d := math.Exp(x) - tau
	for q := range t.levels {
		th[t.start+q*t.stride] *= r
	}
	th[t.logTau] = x
	copy(c.next, th)
	c.lp = c.t.LogPrior(th)
	for i, ai := range c.a {
		c.eta[i] += d * ai
	}
}

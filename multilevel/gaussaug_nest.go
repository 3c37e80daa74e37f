// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// nestWidth is the nested scale move's slice width in s (nestScale).
const nestWidth = 1

// nestPair is a nested pair of the probit sweep's independent terms for
// nestScale: the parent's index in augChain.asis, the child's, and the
// parent's level of each child level (pOf; −1 for a child level no datum
// holds).
type nestPair struct {
	p, ch int
	pOf   []int32
}

// startNest finds the nested pairs nestScale moves: child term ch nested
// in parent p (every level's data of ch in one level of p: nesting) where
// every datum holding both has the same value in both columns (two
// intercept terms, mothers in communities), so that shifting a child's
// effect by −δ and its parent's by δ leaves the datum's η unchanged.
func (c *augChain) startNest() {
	par, _ := c.nesting()
	for p := range c.asis {
		if !par[p] {
			continue
		}
		for ch := range c.asis {
			if ch == p || c.asis[ch].levels <= c.asis[p].levels {
				continue
			}
			if pOf, ok := c.nestMap(&c.asis[p], &c.asis[ch]); ok {
				c.nest = append(c.nest, nestPair{p: p, ch: ch, pOf: pOf})
			}
		}
	}
}

// nestMap returns the parent level of each of ch's levels, and whether ch
// is nested in p with equal values: every datum that holds one holds both,
// with the same value, and each of ch's levels lies in one level of p.
func (c *augChain) nestMap(p, ch *asisTerm) ([]int32, bool) {
	pOf := make([]int32, ch.levels)
	for g := range pOf {
		pOf[g] = -1
	}
	for i := range len(c.rows.ptr) - 1 {
		gp, gc := -1, -1
		var vp, vc float64
		for k := c.rows.ptr[i]; k < c.rows.ptr[i+1]; k++ {
			j := int(c.rows.col[k])
			switch {
			case p.has(j):
				gp, vp = (j-p.start)/p.stride, c.rows.val[k]
			case ch.has(j):
				gc, vc = (j-ch.start)/ch.stride, c.rows.val[k]
			}
		}
		if gp < 0 && gc < 0 {
			continue
		}
		if gp < 0 || gc < 0 || vp != vc {
			return nil, false
		}
		switch pOf[gc] {
		case -1:
			pOf[gc] = int32(gp)
		case int32(gp):
		default:
			return nil, false
		}
	}
	return pOf, true
}

// nestScale is the nested scale move of pair n, a data-free update of
// π(θ) made each sweep on a probit model: slice sampling (sliceStep,
// width nestWidth) of the position s along the orbit of the group
//
//	T_s: ℓ_p → ℓ_p + s,  u_p[g] → e^s·u_p[g],
//	     u_c[m] → u_c[m] + (1 − e^s)·u_p[pOf[m]]   (every child level m),
//
// T_s∘T_r = T_{s+r}. Each datum's η holds u_p[g] + u_c[m] (equal values,
// nestMap), which T_s keeps: no datum is read. The map is triangular in
// (ℓ_p, u_p, u_c) with Jacobian e^{G_p·s}, so the state's density along
// the orbit in s (Haar measure ds) is h(s) = log π(T_s θ) + G_p·s (Liu
// and Sabatti, Biometrika 87, 2000): an exact update. It moves the
// parent's scale with its effects while the children's absorb the
// difference — the direction along which a nesting's parent scale and
// its children's sums are confounded (communities over their mothers),
// which the centred update (u_p held), the interweaving and the marginal
// scale move (the children held or scaled) do not take; the move costs
// about ten evaluations of the prior. TestAugmentNestMoments and
// TestAugmentNestSBC, with the mutants nest-jacobian and nest-shift.
func (c *augChain) nestScale(rng *rand.Rand, n *nestPair) {
	th := c.theta
	p, ch := &c.asis[n.p], &c.asis[n.ch]
	jac := float64(p.levels)
	if c.ah.nestNoJacobian {
		jac = 0
	}
	move := func(dst []float64, s float64) {
		copy(dst, th)
		e := math.Exp(s)
		dst[p.logTau] += s
		for g := range p.levels {
			dst[p.start+g*p.stride] *= e
		}
		if c.ah.nestNoShift {
			return
		}
		for m, g := range n.pOf {
			if g >= 0 {
				dst[ch.start+m*ch.stride] += (1 - e) * th[p.start+int(g)*p.stride]
			}
		}
	}
	f := func(s float64) float64 {
		move(c.next, s)
		v := c.t.LogPrior(c.next) + jac*s
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	x := sliceStep(rng, f, 0, f(0), nestWidth)
	if x == 0 {
		return
	}
	move(c.next, x)
	copy(th, c.next)
	c.lp = c.t.LogPrior(th)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The non-centred move of a correlated factor's scales and correlations,
// in the Gaussian sweep and the augmentation sweep.
//
// drawCorr updates a correlated factor's ξ = (log τ, y) given its effects
// u_g: the centred form, which mixes slowly where the data say little
// about the effects — a scale near 0 (lme4's singular fit), and with it
// the correlations, which the standardised effects then pin. Interweaving
// with the non-centred form (Yu and Meng 2011) moves ξ with z_g =
// A(ξ)⁻¹u_g held instead, A(ξ) = L(ξ) the lower Cholesky factor of Σ(ξ)
// (any square root that is a deterministic function of ξ makes a valid
// reparametrisation; this one keeps the first effect, the intercept the
// data pin best, out of the correlations' moves: cholCov). In (β, z, ξ)
// the target is π(θ(z, ξ))·|det A(ξ)|^G times the likelihood's Gaussian
// factor exp(ms·(bᵀw − ½wᵀMw)) of the location vector w, ms = β/σ² (the
// Gaussian family's likelihood; the augmentation's given its latent data,
// where ms = 1): no datum read. Each coordinate of ξ is slice-sampled
// (sliceStep) on that density, u_g = A(ξ)z_g moving with it: a
// π-invariant update of the joint in the non-centred coordinates.
//
// δ = w′ − w lies on the factor's effects only, and no datum holds two
// levels of one factor, so M on the factor's effects is block diagonal
// (level g's q×q block M_g): the Gaussian factor's change is
// ms·(δᵀ(b − Mw) − ½Σ_g δ_gᵀM_gδ_g), with (b − Mw) on the factor's effects
// computed once a move and carried along as its coordinates are kept.
// TestAugmentCorrelated and TestGaussGibbsCorrelated check the chains
// against NUTS, with the mutant
// corr-nc-jacobian (|det L|^(G−1) for |det L|^G) caught.

// corrNC is one correlated factor's non-centred move (gaussChain.corrNC).
type corrNC struct {
	cf *gaussCorr
	// mPos[g·q(q+1)/2 + …]: M's entries (a, b), b ≤ a, of level g's
	// block, row by row (−1 where M has none).
	mPos []int
	// Scratch: the standardised effects z (levels × q), the proposal's
	// effects u′, the residual (b − Mw) on the factor's effects, Σ⁻¹
	// then Σ, the Cholesky factor of each in turn, and the inverse of the
	// first.
	z, u, r, prec, chol, inv []float64
}

// corrReason is Choice.Reason's word on the correlated factors' moves:
// empty without any.
func (c *augChain) corrReason() string {
	if len(c.corr) == 0 {
		return ""
	}
	s := "; each correlated factor's scales and correlations slice-sampled given its effects"
	if len(c.asisCorr) > 0 {
		s += ", its scales interwoven as a term's"
	}
	if len(c.corrNC) > 0 {
		s += ", then all slice-sampled in the non-centred form (z_g = L⁻¹u_g held, L the Cholesky factor of Σ)"
	}
	return s
}

// startCorrNC sets c.corrNC for each correlated factor of the chain.
func (c *gaussChain) startCorrNC() {
	m := c.m
	for k := range c.corr {
		cf := c.corr[k]
		q := cf.q
		nc := corrNC{cf: cf, mPos: make([]int, cf.levels*q*(q+1)/2),
			z: make([]float64, cf.levels*q), u: make([]float64, cf.levels*q), r: make([]float64, cf.levels*q),
			prec: make([]float64, q*q), chol: make([]float64, q*q), inv: make([]float64, q*q)}
		for i := range nc.mPos {
			nc.mPos[i] = -1
		}
		end := cf.start + cf.levels*q
		for col := cf.start; col < end; col++ {
			for p := m.ColPtr[col]; p < m.ColPtr[col+1]; p++ {
				i := m.RowIdx[p] // ≥ col: the lower triangle
				if i >= end || (i-cf.start)/q != (col-cf.start)/q {
					continue
				}
				g, a, b := (i-cf.start)/q, (i-cf.start)%q, (col-cf.start)%q
				nc.mPos[g*q*(q+1)/2+a*(a+1)/2+b] = p
			}
		}
		c.corrNC = append(c.corrNC, nc)
	}
	if len(c.corrNC) > 0 {
		c.ncMw = make([]float64, m.N)
	}
}

// cholCov sets nc.chol to the lower Cholesky factor L of Σ at θ (row
// major; Σ from the prior's Σ⁻¹, through that precision's own factor) and
// returns log det L; false where Σ⁻¹ is not positive definite. L, not
// another square root, so that u_g0 = τ_0·z_g0 does not move with the
// correlations: the first effect (the intercept, which the data pin
// best) stays put while a correlation moves the others.
func (c *gaussChain) cholCov(nc *corrNC, theta []float64) (float64, bool) {
	lay, _ := c.base.(CorrelatedLayout)
	q := nc.cf.q
	if !lay.EffectPrecision(nc.cf.f, theta[:c.dw], nc.prec) {
		return 0, false
	}
	// prec = R Rᵀ, then Σ = R⁻ᵀR⁻¹ into prec, then Σ = L Lᵀ into chol.
	if !cholInto(nc.prec, nc.chol, q) {
		return 0, false
	}
	r := nc.chol
	inv := nc.inv
	for a := range q { // inv = R⁻¹, lower
		for b := range a + 1 {
			s := 0.0
			if a == b {
				s = 1
			}
			for k := b; k < a; k++ {
				s -= r[a*q+k] * inv[k*q+b]
			}
			inv[a*q+b] = s / r[a*q+a]
		}
	}
	for a := range q { // Σ_ab = Σ_k inv_ka inv_kb, k ≥ max(a, b)
		for b := range a + 1 {
			var s float64
			for k := a; k < q; k++ {
				s += inv[k*q+a] * inv[k*q+b]
			}
			nc.prec[a*q+b], nc.prec[b*q+a] = s, s
		}
	}
	if !cholInto(nc.prec, nc.chol, q) {
		return 0, false
	}
	var logDet float64
	for a := range q {
		logDet += math.Log(nc.chol[a*q+a])
	}
	return logDet, true
}

// cholInto sets l (q×q, row major, lower) to the Cholesky factor of
// the symmetric a; false where a is not positive definite.
func cholInto(a, l []float64, q int) bool {
	for i := range q {
		for j := range i + 1 {
			s := a[i*q+j]
			for k := range j {
				s -= l[i*q+k] * l[j*q+k]
			}
			if i == j {
				if !(s > 0) {
					return false
				}
				l[i*q+i] = math.Sqrt(s)
				continue
			}
			l[i*q+j] = s / l[j*q+j]
		}
	}
	return true
}

// corrNonCentred makes the non-centred move of every correlated factor's
// scales and correlations (see corrNC), given the latent data's b.
func (c *gaussChain) corrNonCentred(rng *rand.Rand) error {
	b := c.b
	th := c.theta
	for k := range c.corrNC {
		nc := &c.corrNC[k]
		cf := nc.cf
		q, G := cf.q, cf.levels
		logDet, ok := c.cholCov(nc, th)
		if !ok {
			return fmt.Errorf("GroupGibbs: correlated factor %d: Σ is not positive definite at θ[%d…] = %v", cf.f, cf.free[0], cf.freeValues(th))
		}
		// z_g = L⁻¹u_g; r = (b − Mw) on the factor's effects.
		l := nc.chol
		for g := range G {
			u := th[cf.start+g*q : cf.start+g*q+q]
			for a := range q {
				s := u[a]
				for i := range a {
					s -= l[a*q+i] * nc.z[g*q+i]
				}
				nc.z[g*q+a] = s / l[a*q+a]
			}
		}
		c.m.MulVec(c.ncMw, th[:c.m.N])
		for j := range nc.r {
			nc.r[j] = b[cf.start+j] - c.ncMw[cf.start+j]
		}
		jac := float64(G)
		if c.hooks.corrNCJacobianOff1 {
			jac-- // the mutant: |det L|^(G−1)
		}
		ms := c.beta * math.Exp(-2*c.logSigma())
		// f(ξ_j = x): log π + G·log det A + ms·(δᵀr − ½Σ_g δ_gᵀM_gδ_g),
		// its proposal's effects left in nc.u, θ at x in c.next, its log
		// prior in lastLP and log det L in lastLD (sliceStep evaluates f
		// last at the point it returns).
		var lastLP, lastLD float64
		f := func(j int, x float64) float64 {
			x0 := th[j]
			th[j] = x
			ld, ok := c.cholCov(nc, th)
			th[j] = x0
			if !ok {
				return math.Inf(-1)
			}
			var gauss float64
			mv := c.m.Val
			for g := range G {
				zg := nc.z[g*q : g*q+q]
				ug := nc.u[g*q : g*q+q]
				// u′_g = L′z_g.
				for a := range q {
					var s float64
					for i := range a + 1 {
						s += l[a*q+i] * zg[i]
					}
					ug[a] = s
				}
				for a := range q {
					da := ug[a] - th[cf.start+g*q+a]
					gauss += da * nc.r[g*q+a]
					for bb := range a + 1 {
						p := nc.mPos[g*q*(q+1)/2+a*(a+1)/2+bb]
						if p < 0 {
							continue
						}
						db := ug[bb] - th[cf.start+g*q+bb]
						if bb == a {
							gauss -= mv[p] * da * da / 2
						} else {
							gauss -= mv[p] * da * db
						}
					}
				}
			}
			copy(c.next, th)
			c.next[j] = x
			copy(c.next[cf.start:cf.start+G*q], nc.u)
			lastLP, lastLD = c.t.LogPrior(c.next), ld
			return lastLP + jac*ld + ms*gauss
		}
		for wi, j := range cf.free {
			x0 := th[j]
			fx0 := c.lp + jac*logDet // δ = 0 at x0
			x := sliceStep(rng, func(x float64) float64 { return f(j, x) }, x0, fx0, cf.width[wi])
			if x == x0 {
				continue
			}
			// Keep x, from f's last evaluation, which was at x: its
			// effects, log prior and log det L (nc.chol is L at x); r
			// carried along by −M_gδ_g.
			mv := c.m.Val
			for g := range G {
				for a := range q {
					for bb := range a + 1 {
						p := nc.mPos[g*q*(q+1)/2+a*(a+1)/2+bb]
						if p < 0 {
							continue
						}
						da := nc.u[g*q+a] - th[cf.start+g*q+a]
						db := nc.u[g*q+bb] - th[cf.start+g*q+bb]
						nc.r[g*q+a] -= mv[p] * db
						if bb != a {
							nc.r[g*q+bb] -= mv[p] * da
						}
					}
				}
			}
			th[j] = x
			copy(th[cf.start:cf.start+G*q], nc.u)
			c.lp, logDet = lastLP, lastLD
			c.corrNCN++
		}
		c.corrNCT += int64(len(cf.free))
	}
	return nil
}

// termNC is the Gaussian sweep's non-centred move of one independent
// term's scale: the q = 1 case of corrNC (L = τ). With z_g = u_g/τ held,
// log τ is slice-sampled on π(θ(z, ℓ))·τ^G times the likelihood's
// Gaussian factor; M on the term's effects is diagonal (one level of a
// term a datum), so the factor's change is ms·Σ_g(δ_g r_g − ½M_gg δ_g²),
// δ_g = u_g(τ′/τ − 1), r = (b − Mw) on the term's effects. The
// augmentation sweeps interweave instead (augChain.interweave), whose
// Gaussian conditional in τ they draw exactly.
type termNC struct {
	tm   gaussTerm
	diag []int // per level: M's diagonal entry at its effect (−1: none)
	r    []float64
}

// startTermNC sets c.termNC for each independent term of the chain.
func (c *gaussChain) startTermNC() {
	m := c.m
	for _, tm := range c.terms {
		nc := termNC{tm: tm, diag: make([]int, tm.levels), r: make([]float64, tm.levels)}
		for g := range tm.levels {
			j := tm.start + g*tm.stride
			nc.diag[g] = -1
			for p := m.ColPtr[j]; p < m.ColPtr[j+1]; p++ {
				if m.RowIdx[p] == j {
					nc.diag[g] = p
				}
			}
		}
		c.termNC = append(c.termNC, nc)
	}
	if len(c.termNC) > 0 && c.ncMw == nil {
		c.ncMw = make([]float64, m.N)
	}
}

// termNonCentred makes each independent term's non-centred scale move
// (termNC).
func (c *gaussChain) termNonCentred(rng *rand.Rand) {
	if len(c.termNC) == 0 {
		return
	}
	th := c.theta
	ms := c.beta * math.Exp(-2*c.logSigma())
	mv := c.m.Val
	for k := range c.termNC {
		nc := &c.termNC[k]
		tm := nc.tm
		c.m.MulVec(c.ncMw, th[:c.m.N]) // after the previous term's move
		G := float64(tm.levels)
		if c.hooks.termNCJacobianOff1 {
			G-- // the mutant: τ^(G−1)
		}
		for g := range tm.levels {
			j := tm.start + g*tm.stride
			nc.r[g] = c.b[j] - c.ncMw[j]
		}
		l0 := th[tm.logTau]
		// f leaves θ at l in c.next and its log prior in lastLP (sliceStep
		// evaluates f last at the point it returns).
		var lastLP float64
		f := func(l float64) float64 {
			ratio := math.Exp(l-l0) - 1
			var gauss float64
			copy(c.next, th)
			for g := range tm.levels {
				j := tm.start + g*tm.stride
				d := th[j] * ratio
				gauss += d * nc.r[g]
				if p := nc.diag[g]; p >= 0 {
					gauss -= mv[p] * d * d / 2
				}
				c.next[j] = th[j] + d
			}
			c.next[tm.logTau] = l
			lastLP = c.t.LogPrior(c.next)
			return lastLP + G*l + ms*gauss
		}
		l := sliceStep(rng, f, l0, c.lp+G*l0, 1)
		c.termNCT++
		if l == l0 {
			continue
		}
		copy(th, c.next)
		c.lp = lastLP
		c.termNCN++
	}
}

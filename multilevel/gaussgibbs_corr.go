// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/sparse"
)

// The Gaussian sweep on correlated random effects (CorrelatedLayout,
// lme4's (1 + x | g)).
//
// A correlated factor's q effects at level g are u_g ~ N(0, Σ) given its
// scales τ and correlation coordinates y, Σ = D·Ω·D. In update 1 of the
// sweep (gaussChain) the effects' prior precision is Σ⁻¹ on each level's
// q×q block of P in place of diag(τ⁻²) — the prior's EffectPrecision at
// the chain's τ and y — so the joint draw of w = (β, u) is still the
// exact conditional (its acceptance ratio, the prior's log ratio less the
// Gaussian part gaussR, is 0 for a Gaussian prior on β). The factor's q
// log τ_k and q(q−1)/2 y — which no row holds and whose full conditional
// given the effects is the prior's alone (the effects' normal density,
// the LKJ density and its transform's Jacobian, each τ's prior) — are
// updated by GroupGibbs's slice sampler on the log prior (slicePrior),
// reading no datum. TestGaussGibbsCorrelated proves it against NUTS and
// TestGaussGibbsCorrelatedSBC by calibration, with the mutants Σ⁻¹
// replaced by its diagonal in P (gaussHooks.corrDiag) and the LKJ
// transform's Jacobian dropped caught.

// gaussCorr is one correlated factor of a Gaussian sweep.
type gaussCorr struct {
	f                int // the layout's correlated factor
	q, levels, start int // level g's effects θ[start + g·q : start + g·q + q]
	logTau           []int
	// free: the θ coordinates the slice sampler updates (the q log τ_k,
	// then the q(q−1)/2 y), width its widths.
	free  []int
	width []float64
	// pos[g·q(q+1)/2 + …]: P's entries (a, b), b ≤ a, of level g's block,
	// row by row.
	pos  []int
	prec []float64 // Σ⁻¹ at θ (q×q), set by fillCorr
}

// findCorr finds lay's correlated factors, checks that each level's q
// effects are contiguous coordinates the rows hold, marks their log scales
// and correlation coordinates in updated, and returns which of lay's
// terms are correlated.
func (c *gaussChain) findCorr(name string, lay Layout, idx []int, updated []bool) ([]bool, error) {
	corrTerm := make([]bool, lay.NumTerms())
	c.corrEff = make([]bool, len(c.eff))
	cl, ok := lay.(CorrelatedLayout)
	if !ok {
		return corrTerm, nil
	}
	D := len(idx)
	for f := range cl.NumCorrelated() {
		terms, cor := cl.Correlated(f)
		q := len(terms)
		if q < 2 {
			return nil, fmt.Errorf("%s: the prior's correlated factor %d has %d terms, want at least 2", name, f, q)
		}
		_, _, start, _, levels, _ := cl.Term(terms[0])
		cf := &gaussCorr{f: f, q: q, levels: levels, start: start, prec: make([]float64, q*q)}
		for k, tm := range terms {
			_, _, s, stride, lv, lt := cl.Term(tm)
			if s != start+k || stride != q || lv != levels {
				return nil, fmt.Errorf("%s: the prior's correlated factor %d: term %d (start %d, stride %d, %d levels) is not effect %d of %d contiguous effects per level from θ[%d] over %d levels", name, f, tm, s, stride, lv, k, q, start, levels)
			}
			corrTerm[tm] = true
			cf.logTau = append(cf.logTau, lt)
			cf.free = append(cf.free, lt)
		}
		for k := range q * (q - 1) / 2 {
			j := cor + k
			if j < 0 || j >= D || idx[j] >= 0 {
				return nil, fmt.Errorf("%s: the prior's correlated factor %d: its correlation coordinate θ[%d] is not a coordinate no row holds", name, f, j)
			}
			updated[j] = true
			cf.free = append(cf.free, j)
		}
		for range cf.free {
			cf.width = append(cf.width, math.Sqrt(2/float64(max(levels, 1))))
		}
		for g := range levels {
			for k := range q {
				j := start + g*q + k
				if j < 0 || j >= D || idx[j] < 0 {
					return nil, fmt.Errorf("%s: the prior's correlated factor %d: effect %d of level %d at θ[%d] is not a coordinate the rows hold", name, f, k, g, j)
				}
				c.corrEff[idx[j]] = true
			}
		}
		c.corr = append(c.corr, cf)
	}
	return corrTerm, nil
}

// corrPattern adds each correlated level's q×q block to P's pattern.
func (c *gaussChain) corrPattern(idx []int, tr *sparse.Triplet) {
	for _, cf := range c.corr {
		for g := range cf.levels {
			j := cf.start + g*cf.q
			for a := range cf.q {
				for b := range a + 1 {
					tr.Add(idx[j+a], idx[j+b], 0)
				}
			}
		}
	}
}

// corrPositions sets each correlated factor's positions of its blocks'
// entries in P.
func (c *gaussChain) corrPositions(idx []int) {
	for _, cf := range c.corr {
		cf.pos = cf.pos[:0]
		for g := range cf.levels {
			j := cf.start + g*cf.q
			for a := range cf.q {
				for b := range a + 1 {
					cf.pos = append(cf.pos, entry(c.pv, idx[j+a], idx[j+b]))
				}
			}
		}
	}
}

// fillCorr sets each correlated factor's Σ⁻¹ at θ and adds it to P's
// level blocks (diag(τ⁻²) instead under the corrDiag hook).
func (c *gaussChain) fillCorr() error {
	lay, _ := c.base.(CorrelatedLayout)
	for _, cf := range c.corr {
		if !lay.EffectPrecision(cf.f, c.theta[:c.dw], cf.prec) {
			return fmt.Errorf("GroupGibbs: correlated factor %d: Σ is not positive definite at its scales and correlations θ[%d…] = %v", cf.f, cf.free[0], cf.freeValues(c.theta))
		}
		q, k := cf.q, 0
		for range cf.levels {
			for a := range q {
				for b := range a + 1 {
					v := cf.prec[a*q+b]
					if c.hooks.corrDiag {
						v = 0
						if a == b {
							v = math.Exp(-2 * c.theta[cf.logTau[a]])
						}
					}
					c.pv.Val[cf.pos[k]] += v
					k++
				}
			}
		}
	}
	return nil
}

// freeValues returns the factor's scales and correlation coordinates at θ
// (for an error).
func (cf *gaussCorr) freeValues(theta []float64) []float64 {
	v := make([]float64, len(cf.free))
	for k, j := range cf.free {
		v[k] = theta[j]
	}
	return v
}

// gaussCorrR returns −½Σ_g u_gᵀΣ⁻¹u_g over the correlated factors at θ's
// effects (Σ⁻¹ as fillCorr last set it).
func (c *gaussChain) gaussCorrR(theta []float64) float64 {
	var f float64
	for _, cf := range c.corr {
		q := cf.q
		for g := range cf.levels {
			u := theta[cf.start+g*q : cf.start+g*q+q]
			for a := range q {
				s := cf.prec[a*q+a] * u[a] / 2
				for b := range a {
					s += cf.prec[a*q+b] * u[b]
				}
				f -= u[a] * s
			}
		}
	}
	return f
}

// drawCorr updates each correlated factor's log scales and correlation
// coordinates given the effects: slicePrior on the log prior, their full
// conditional.
func (c *gaussChain) drawCorr(rng *rand.Rand) {
	if len(c.corr) == 0 {
		return
	}
	for _, cf := range c.corr {
		slicePrior(rng, c.t, c.theta, c.next, cf.free, cf.width)
	}
	c.lp = c.t.LogPrior(c.theta)
}

// centreCorr is gaussCentre's EM step for the correlated factors: Σ =
// Σ_g (u_g u_gᵀ + V_g)/G with V_g's diagonal the conditional variances
// inv (by eff position) and its off-diagonal left out, then τ_k and y
// from Σ (Stan's transform inverted: the canonical partial correlations
// of Ω's Cholesky factor, kept within ±0.95). It returns the largest move
// of a log scale or y.
func (c *gaussChain) centreCorr(inv []float64) float64 {
	var moved float64
	pos := make(map[int]int, len(c.eff))
	for a, j := range c.eff {
		pos[j] = a
	}
	for _, cf := range c.corr {
		q := cf.q
		s := make([]float64, q*q)
		for g := range cf.levels {
			u := c.theta[cf.start+g*q : cf.start+g*q+q]
			for a := range q {
				for b := range a + 1 {
					s[a*q+b] += u[a] * u[b]
				}
				s[a*q+a] += inv[pos[cf.start+g*q+a]]
			}
		}
		sd := make([]float64, q)
		for a := range q {
			sd[a] = math.Sqrt(math.Max(s[a*q+a]/float64(cf.levels), 1e-300))
			l := math.Log(sd[a])
			moved = math.Max(moved, math.Abs(l-c.theta[cf.logTau[a]]))
			c.theta[cf.logTau[a]] = l
		}
		omega := make([]float64, q*q)
		for a := range q {
			omega[a*q+a] = 1
			for b := range a {
				omega[a*q+b] = s[a*q+b] / float64(cf.levels) / (sd[a] * sd[b])
			}
		}
		k := q
		if cholesky(omega, q) {
			for i := 1; i < q; i++ {
				var ss float64
				for j := range i {
					z := omega[i*q+j] / math.Sqrt(math.Max(1-ss, 1e-300))
					z = math.Max(-0.95, math.Min(0.95, z))
					y := math.Atanh(z)
					moved = math.Max(moved, math.Abs(y-c.theta[cf.free[k]]))
					c.theta[cf.free[k]] = y
					ss += omega[i*q+j] * omega[i*q+j]
					k++
				}
			}
		}
	}
	return moved
}

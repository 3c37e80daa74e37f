// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh"
)

// GroupGibbs on correlated random effects (CorrelatedLayout).
//
// A correlated factor's effects at level g are u_g ~ N(0, Σ) given the
// scales and correlations, Σ = D·Ω·D. Its block update keeps the form of
// the independent case with the prior precision Σ⁻¹ in place of
// diag(τ⁻²): the proposal is the conditional Gaussian of the control-
// variate expansion times the prior,
//
//	P = βH_gg + Σ⁻¹,  μ = P⁻¹(βH_gg·u_g − β(g + HΔ)_g),
//
// so the Gaussian parts of target and proposal cancel exactly, as before,
// and the log ratio is the block's data remainders alone. Σ⁻¹ is the
// prior's (EffectPrecision), computed once per sweep: the blocks' updates
// leave the scales and correlations unchanged. The scales log τ_k and the
// correlation coordinates y (no row holds them) are updated by the
// sweep's slice sampling of their full conditional, the prior's alone
// (no datum read): log p(θ) of the model, with the LKJ density and its
// transform's Jacobian. The location moves, scale moves and nested scale
// moves take their ratios from the prior's LogPrior, exact for any
// prior; a shift that holds a correlated effect is accepted by that ratio
// too (its proposal is the independent form's Gaussian, corrected).
// TestGroupGibbsCorrelated proves it with its mutants.

// gibbsCorr is what Start finds of the correlated factors.
type gibbsCorr struct {
	lay CorrelatedLayout
	// of[m]: the correlated factor of block m (−1: none); q[c] its
	// effects per level; coord[j]: θ[j] is a correlated effect.
	of    []int32
	q     []int
	coord []bool
}

// buildCorr finds the correlated factors of lay (nil: none) and checks
// that each level's effects are one block, in the factor's order.
func (g *gibbsTerms) buildCorr(name string, lay Layout) (*gibbsCorr, error) {
	cl, ok := lay.(CorrelatedLayout)
	if !ok || cl.NumCorrelated() == 0 {
		return nil, nil
	}
	d := len(g.blocks)
	gc := &gibbsCorr{lay: cl, of: make([]int32, g.nb), coord: make([]bool, d)}
	for m := range gc.of {
		gc.of[m] = -1
	}
	for c := range cl.NumCorrelated() {
		terms, _ := cl.Correlated(c)
		q := len(terms)
		if q < 2 {
			return nil, fmt.Errorf("%s: the prior's correlated factor %d has %d terms, want at least 2", name, c, q)
		}
		_, _, start, _, levels, _ := cl.Term(terms[0])
		for k, tm := range terms {
			_, _, s, stride, lv, _ := cl.Term(tm)
			if s != start+k || stride != q || lv != levels {
				return nil, fmt.Errorf("%s: the prior's correlated factor %d: term %d (start %d, stride %d, %d levels) is not effect %d of %d contiguous effects per level from θ[%d] over %d levels", name, c, tm, s, stride, lv, k, q, start, levels)
			}
		}
		for l := range levels {
			j := start + l*q
			m := g.blocks[j]
			if m <= 0 || int(m) >= g.nb || g.bcPtr[m+1]-g.bcPtr[m] != q || gc.of[m] >= 0 {
				return nil, fmt.Errorf("%s: the prior's correlated factor %d: level %d's effects θ[%d:%d] are not a block of their own", name, c, l, j, j+q)
			}
			for k, jb := range g.bc[g.bcPtr[m]:g.bcPtr[m+1]] {
				if int(jb) != j+k {
					return nil, fmt.Errorf("%s: the prior's correlated factor %d: block %d holds θ[%d] at place %d, want θ[%d]", name, c, m, jb, k, j+k)
				}
				gc.coord[jb] = true
			}
			gc.of[m] = int32(c)
		}
		gc.q = append(gc.q, q)
	}
	return gc, nil
}

// checkCorrPrior checks on the centre that the prior makes each
// correlated factor's effects N(0, Σ) with Σ⁻¹ the layout's
// EffectPrecision — the form the blocks' proposals cancel — at its first
// two levels, moving each effect by one prior sd.
func checkCorrPrior(name string, t *exactmh.Target, g *gibbsTerms) error {
	gc := g.cor
	th := slices.Clone(g.center)
	lp0 := t.LogPrior(th)
	for c, q := range gc.q {
		prec := make([]float64, q*q)
		if !gc.lay.EffectPrecision(c, th, prec) {
			return fmt.Errorf("%s: the prior's correlated factor %d has a singular Σ at the centre", name, c)
		}
		terms, _ := gc.lay.Correlated(c)
		_, _, start, _, levels, _ := gc.lay.Term(terms[0])
		for l := range min(levels, 2) {
			u := th[start+l*q : start+l*q+q]
			for a := range q {
				var pu float64
				for b := range q {
					pu += prec[a*q+b] * u[b]
				}
				delta := 1 / math.Sqrt(prec[a*q+a])
				want := -delta*pu - prec[a*q+a]*delta*delta/2
				u[a] += delta
				got := t.LogPrior(th) - lp0
				u[a] -= delta
				if !(math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))) {
					return fmt.Errorf("%s: the prior is not N(0, Σ) on effect %d of correlated factor %d at level %d: log prior ratio %v, want %v", name, a, c, l, got, want)
				}
			}
		}
	}
	return nil
}

// corrPrecisions sets each correlated factor's Σ⁻¹ at θ (corrPrec, q×q
// each in turn), once per sweep.
func (c *gibbsChain) corrPrecisions() error {
	gc := c.cor
	off := 0
	for f, q := range gc.q {
		p := c.corrPrec[off : off+q*q]
		if !gc.lay.EffectPrecision(f, c.theta, p) {
			return fmt.Errorf("GroupGibbs: correlated factor %d: Σ is singular at θ = %v", f, c.theta)
		}
		if c.corrDiag {
			// The mutant: Σ⁻¹ replaced by diag(τ⁻²), the independent
			// effects' precision.
			terms, _ := gc.lay.Correlated(f)
			for a := range q {
				_, _, _, _, _, lt := gc.lay.Term(terms[a])
				for b := range q {
					p[a*q+b] = 0
				}
				p[a*q+a] = math.Exp(-2 * c.theta[lt])
			}
		}
		c.corrOff[f] = off
		off += q * q
	}
	return nil
}

// corrBlock returns block m's prior precision Σ⁻¹ (q×q, row-major) if its
// effects are a correlated factor's, else nil.
func (c *gibbsChain) corrBlock(m int) []float64 {
	if c.cor == nil || m >= len(c.cor.of) || c.cor.of[m] < 0 {
		return nil
	}
	f := c.cor.of[m]
	q := c.cor.q[f]
	return c.corrPrec[c.corrOff[f] : c.corrOff[f]+q*q]
}

// initCorr allocates the chain's Σ⁻¹ and sets them at θ.
func (c *gibbsChain) initCorr() error {
	if c.cor == nil {
		return nil
	}
	var n int
	for _, q := range c.cor.q {
		n += q * q
	}
	c.corrPrec, c.corrOff = make([]float64, n), make([]int, len(c.cor.q))
	return c.corrPrecisions()
}

// holds reports whether a shift's coordinates idx hold a correlated
// effect: along such a shift the log prior is not the independent
// effects' quadratic the shift's Gaussian draw assumes, so the draw is a
// proposal accepted by the prior's ratio (an explicit shift).
func (gc *gibbsCorr) holds(idx []int32) bool {
	if gc == nil {
		return false
	}
	for _, j := range idx {
		if gc.coord[j] {
			return true
		}
	}
	return false
}

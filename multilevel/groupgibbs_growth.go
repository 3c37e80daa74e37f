// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"

	"github.com/exactmh/exactmh"
)

// GroupGibbs's pair-wise bound for a family whose third derivative is
// unbounded but grows at most exponentially (exactmh.LossGrowther: Poisson with
// its log link, |f‴(z)| = e^z ≤ e^{ẑ}·e^{|z − ẑ|}).
//
// With h(s) = R_i at a = s (a = x_iᵀ(θ − θ̂), ẑ_i = x_iᵀθ̂ + o_i),
// h′(s) = f′(ẑ + s) − f′(ẑ) − f″(ẑ)s, and Taylor's theorem gives |h′(s)|
// ≤ s²/2·sup_{|t|≤|s|}|f‴(ẑ + t)| ≤ A_i/2·s²·e^{|s|}, A_i = A_i(ẑ_i) the
// family's LossGrowth (for Poisson e^{ẑ_i}, the fitted mean at the centre:
// |e^s − 1 − s| ≤ s²/2·e^{max(s, 0)}). By the mean value theorem, for any
// A ≥ max(|a|, |a′|),
//
//	|R_i(θ′) − R_i(θ)| ≤ |a′ − a|·A_i/2·A²·e^{A},
//
// and for a move of block m, |a′ − a| ≤ a_im·s and A = Σ_b a_ib·M_b over
// the datum's blocks (Cauchy–Schwarz on each, M_b = ‖Δ_b‖, M_m² = max(‖Δ_m‖²,
// ‖Δ′_m‖²)), A² ≤ B_i·Σ_b a_ib²M_b². The weights of GroupGibbs's pair
// tables, K_i·a_im·a_ib² with K_i = A_i·B_i/2, are unchanged; what changes
// is the pair factor: e^{A} is a product over the datum's blocks, and
// pair p = (m, b) takes
//
//	F_p = M_b²·exp(ā_pm·M_m + ā_pb·M_b·[b ≠ m] + L_p·E_m),
//	E_m = max over the pairs (m, c), c ≠ m, of ā_(m,c)c·M_c,
//
// with ā_pm, ā_pb the largest a_im, a_ib over the pair's data and L_p the
// most blocks other than m and b any of them touches. Every datum i of p
// then has F_p ≥ M_b²·e^{A_i}: its own a_im ≤ ā_pm and a_ib ≤ ā_pb, and
// each other block c it touches puts it in pair (m, c) too, so a_ic·M_c ≤
// E_m. Hence its sampling intensity β·s·Σ_b K_i·a_im·a_ib²·F_mb dominates
// its bound (updateBlock checks |r_i| ≤ φ_i at every draw), and a block
// update still costs O(pairs of m): E_m is one more pass over them. On a
// one-factor model (rows touching the fixed effects 0 and one group g)
// L_p = 0 for the pairs (g, 0), (0, g) and only the pairs (g, g) and (0, 0)
// use E_m: a group's E_g is its data's ā·M_0, the fixed block's E_0 the
// largest group term, weighed by the (0, 0) pair alone. Crossed factors
// (a row in two groups) add one E_m per further factor: valid, looser;
// where the factors make the thinning read more than the block's data
// the update reads them exactly, and the automatic default's pilot
// (grind) judges what that costs against full-batch NUTS.
//
// The cross-cubic control variate of block 0 (groupgibbs_cubic.go) needs
// sup|f⁗|, which Poisson's f⁗ = e^z does not have on the line; its bound
// takes the same pair-wise form (LossGrowther4, cubicFactor): without it
// the fixed block's acceptance falls with G/√N as the logistic one's
// (figures/bench/multilevel_poisson.txt). Proven by
// TestGroupGibbsPoissonMoments (with its mutants: the bound without its
// exponential factor, a stale expansion, a bound that ignores the groups),
// TestGroupGibbsPoissonCrossed and TestGroupGibbsPoissonSBC.
// docs/multilevel.md, section "Growth bound", holds the derivation with
// its detailed-balance argument.

// gibbsGrowth reports whether GroupGibbs bounds e's remainders pair-wise
// through LossGrowth: e has it, and the third derivative of datum 0 is
// unbounded on the line.
func gibbsGrowth(e SparseRowGLM) bool {
	if e.Len() == 0 {
		return false
	}
	if k := datumK3(e, 0); !math.IsInf(k, 1) && !math.IsNaN(k) {
		return false
	}
	lg, ok := e.(exactmh.LossGrowther)
	if !ok {
		return false
	}
	_, ok = lg.LossGrowth(0, 0)
	return ok
}

// growthReach returns E_m, the largest ā_(m,c)c·M_c over block m's pairs
// with the other blocks c the thinning bound counts.
func (c *gibbsChain) growthReach(m int) float64 {
	var em float64
	for p := c.pPtr[m]; p < c.pPtr[m+1]; p++ {
		b := c.pBlock[p]
		if int(b) == m || (c.mask != nil && !c.mask(b)) {
			continue
		}
		em = max(em, c.pAb[p]*math.Sqrt(c.dsq[b]))
	}
	return em
}

// growthFactor returns pair p = (m, b)'s factor F_p in block m's thinning
// rate: mb = M_b² (M_m² = mMax) times the exponential of the pair's
// largest A over its data, given E_m = em.
func (c *gibbsChain) growthFactor(p, m int, mb, mMax, em float64) float64 {
	if mb == 0 {
		return 0
	}
	x := c.pAm[p]*math.Sqrt(mMax) + float64(c.pL[p])*em
	if b := c.pBlock[p]; int(b) != m {
		x += c.pAb[p] * math.Sqrt(c.dsq[b])
	}
	return mb * c.growthExp(x)
}

// growthExp returns e^x, or 1 with the growthLoose test hook (the bound
// without its exponential factors).
func (c *gibbsChain) growthExp(x float64) float64 {
	if c.growthLoose {
		return 1
	}
	return math.Exp(x)
}

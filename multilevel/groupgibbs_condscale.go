// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// The conditional scale move (GroupGibbs.CondScale; docs/multilevel.md,
// "Conditional scale moves").
//
// Where each level of a factor holds enough data to pin its effect, both
// of interweaving's parametrisations are narrow in τ: the centred update
// given u sees the effects' spread, the non-centred one given z = u/τ the
// data's information about their common scale, and the two alternated
// relax τ only slowly (lme4's Chem97: τ_school's conditional sd 0.0125
// against its marginal 0.028). The direction that is wide is τ together
// with every effect moving to the same place in its own conditional.
//
// For random term t of scalar effects u_j (one per level, in the blocks of
// its factor), the expansion's conditional of u_j given everything but the
// term's effects is Gaussian,
//
//	P_j(τ) = β·h_j + τ⁻²,   μ_j(τ) = b_j/P_j(τ),
//	b_j = β(h_j·θ̂_j − g_j − Σ_{col ∉ t} H_j,col·Δ_col),
//
// h_j = H_jj, g and H the control variate's sums (the columns of the
// term's own effects left out of b_j, so that b depends on no coordinate
// the move changes). The move draws λ ~ N(0, σ²) and maps
//
//	log τ′ = log τ + λ,   u′_j = μ_j(τ′) + (u_j − μ_j(τ))·√(P_j(τ)/P_j(τ′)),
//
// each effect kept at its standardised place in its conditional. The map
// T_λ is inverted by T_−λ from θ′ (b is unchanged), its Jacobian is
// Π_j √(P_j(τ)/P_j(τ′)), and σ is fixed for the run — σ = condStep/
// √(1 + I(τ̂)) at the centre's τ̂, I(τ) = Σ_j 2(τ²βh_j/(1 + τ²βh_j))² the
// Fisher information about log τ of the collapsed Gaussian model (u_j's
// estimate ~ N(0, τ² + 1/(βh_j))) — so λ and −λ are equally likely and
// the Metropolis–Hastings ratio is
//
//	π(θ′)/π(θ) · Π_j √(P_j(τ)/P_j(τ′)),
//
// the prior's and the Jacobian's terms in O(G), the likelihood's decided
// by scaleFinish exactly as the plain scale move's. Where the expansion
// is exact (a Gaussian likelihood) the prior's change of the effects and
// the Jacobian cancel to the ratio of the collapsed marginal of τ, so λ
// is accepted at the marginal's rate whatever the groups' sizes; the
// remainders only lower it.
//
// TestGroupGibbsCondScaleMoments proves it (against non-centred NUTS) and
// catches the mutants GroupGibbsCondScaleNoJacobian and
// GroupGibbsCondScaleOwnB; TestGroupGibbsCondScaleSBC calibrates it.

// condLo and condHi bound the terms that take the move: those whose mean
// shrinkage r̄ = mean_j τ̂²βh_j/(1 + τ̂²βh_j) at the centre's scale τ̂ lies
// in [condLo, condHi]. Near r̄ = 1 the effects are pinned by their data
// and the centred update of τ given u is nearly the marginal's (its
// lag-one autocorrelation about 1 − r̄²: 0.36 at r̄ = 0.8); near r̄ = 0 the
// data say little and the non-centred update is (about 1 − (1 − r̄)²); in
// between neither is, and the move is made (lme4's Chem97: the schools at
// r̄ = 0.44, the areas at 0.37; InstEval: the students 0.48, the lecturers
// 0.79; the designs of the synthetic rows, 1,000 data a group, r̄ ≈ 1).
const (
	condLo = 0.2
	condHi = 0.8
)

// condStep is the move's step, σ = condStep/√(1 + I(τ̂)): half the
// random-walk optimum for a Gaussian of that curvature, as the groups'
// remainders lower the acceptance below the marginal's (lme4's Chem97,
// the schools: accepted 0.10 at 2.4, 0.20 at 1.2; figures/bench/
// multilevel_joint.txt, section 6).
const condStep = scaleStep / 2

// initCondScale fills each scale-move coordinate's h_j = H_jj and each
// term's step σ = condStep/√(1 + I(τ̂)) at the centre's scale τ̂, 0 (no
// move) for a term whose r̄ is outside [condLo, condHi].
func (c *gibbsChain) initCondScale() {
	mv := c.mv
	c.ms.condH = make([]float64, len(mv.sc))
	for q, j := range mv.sc {
		for p := c.hPtr[j]; p < c.hPtr[j+1]; p++ {
			if int(c.hCol[p]) == int(j) {
				c.ms.condH[q] = math.Max(c.hVal[p], 0)
			}
		}
	}
	c.ms.condSigma = make([]float64, len(mv.scTau))
	for r, lt := range mv.scTau {
		h := c.ms.condH[mv.scPtr[r]:mv.scPtr[r+1]]
		tau2, beta := math.Exp(2*c.center[lt]), c.t.Beta()
		var rb float64
		for _, hj := range h {
			rb += tau2 * beta * hj / (1 + tau2*beta*hj)
		}
		if rb /= float64(max(len(h), 1)); (rb >= condLo && rb <= condHi) || mv.hooks.condOnly {
			c.ms.condSigma[r] = condStep / math.Sqrt(1+condInfo(h, tau2, beta))
		}
	}
}

// condInfo is I(τ) above for the term's h (τ² = tau2, β the temperature).
func condInfo(h []float64, tau2, beta float64) float64 {
	var s float64
	for _, hj := range h {
		a := tau2 * beta * hj
		r := a / (1 + a)
		s += 2 * r * r
	}
	return s
}

// condScaleMove makes the conditional scale move of random term r and
// returns whether it moved θ and the data it read.
func (c *gibbsChain) condScaleMove(rng *rand.Rand, r int) (bool, int, error) {
	mv := c.mv
	lo, hi := mv.scPtr[r], mv.scPtr[r+1]
	coords, h := mv.sc[lo:hi], c.ms.condH[lo:hi]
	lt := int(mv.scTau[r])
	beta := c.t.Beta()
	tau2 := math.Exp(2 * c.theta[lt])
	sigma := c.ms.condSigma[r]
	if sigma == 0 {
		return false, 0, nil // a term outside [condLo, condHi]
	}
	lambda := sigma * rng.NormFloat64()
	tau2n := tau2 * math.Exp(2*lambda)
	c.ms.condTried++
	var logJac float64
	for q, j := range coords {
		var s float64
		for p := c.hPtr[j]; p < c.hPtr[j+1]; p++ {
			if col := c.hCol[p]; int(c.logTau[col]) != lt || (mv.hooks.condOwnB && int(col) == int(j)) {
				s += c.hVal[p] * (c.theta[col] - c.center[col])
			}
		}
		b := beta * (h[q]*c.center[j] - c.gradSum[j] - s)
		pj, pn := beta*h[q]+1/tau2, beta*h[q]+1/tau2n
		ratio := math.Sqrt(pj / pn)
		c.next[j] = b/pn + (c.theta[j]-b/pj)*ratio
		logJac += math.Log(ratio)
	}
	c.next[lt] = c.theta[lt] + lambda
	lpn := c.locPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) || math.IsNaN(logJac) {
		for _, j := range coords {
			c.next[j] = c.theta[j]
		}
		c.next[lt] = c.theta[lt]
		return false, 0, nil
	}
	if !c.ms.lpOK {
		c.ms.lp, c.ms.lpOK = c.locPrior(c.theta), true
	}
	logExact := lpn - c.ms.lp
	if !mv.hooks.condNoJacobian {
		logExact += logJac
	}
	return c.scaleFinish(rng, r, coords, lt, logExact, &c.ms.condAcc, &c.ms.condCapped)
}

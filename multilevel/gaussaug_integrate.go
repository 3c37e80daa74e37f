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

// integrateWidth is the integrated scale move's random-walk step in log τ
// before warmup adapts it.
const integrateWidth = 0.3

// integrateMaxRounds bounds the rounds of integrated scale moves the
// default makes a sweep: one round already moves log τ by its posterior
// width (chem97's log τ_lea: bulk ESS 622 of 4,000 draws at one round,
// 830 at two for 1.25 times the CPU; figures/bench/multilevel_real_integrate.txt).
const integrateMaxRounds = 1

// integrateShare is the share of a sweep's latent draws' counted cost the
// integrated scale moves may add (integrateRounds).
const integrateShare = 0.5

// integrateRounds returns the rounds of integrated scale moves a sweep
// makes by default on a model of terms independent terms: as many as fit
// in integrateShare of the latent draws' counted cost perDatum·n at one
// factorisation of P (flops, sparse.Symbolic.FactorFlops) a move — the
// sweep's own factorisation is the first move's current one, which
// update 1 then reuses — at most integrateMaxRounds, and none where not a
// round fits. Counted, never timed: the same on any machine.
func integrateRounds(n int, perDatum, flops float64, terms int) int {
	if terms == 0 || !(flops > 0) {
		return 0
	}
	factors := integrateShare * perDatum * float64(n) / flops
	return int(min(max(factors/float64(terms), 0), integrateMaxRounds))
}

// conditional sets ch to the factor of P at θ's scales (and σ) and mean to
// the Gaussian conditional's mean P⁻¹·rhs: update 1's distribution of w.
func (c *gaussChain) conditional(ch *sparse.Cholesky, mean []float64) error {
	if err := c.fill(); err != nil {
		return err
	}
	if err := ch.Refactor(c.pv); err != nil {
		return fmt.Errorf("GroupGibbs: the effects' precision at σ = %.4g: %w", math.Exp(c.logSigma()), err)
	}
	s := c.logSigma()
	ms := c.beta * math.Exp(-2*s)
	for a, j := range c.eff {
		c.rhs[a] = ms * c.b[j]
		if c.tauOf[a] < 0 {
			c.rhs[a] -= c.gF[a]
		}
	}
	// + H_F θ̂_F
	for j := range c.hF.N {
		for k := c.hF.ColPtr[j]; k < c.hF.ColPtr[j+1]; k++ {
			i, v := c.hF.RowIdx[k], c.hF.Val[k]
			c.rhs[i] += v * c.centre[c.eff[j]]
			if i != j {
				c.rhs[j] += v * c.centre[c.eff[i]]
			}
		}
	}
	ch.Solve(mean, c.rhs, c.work)
	return nil
}

// latentLik returns the log likelihood of w = θ[:D] given the latent
// variables, up to a constant: bᵀw − ½wᵀMw (the Gaussian model's, σ = 1).
func (c *augChain) latentLik(theta []float64) float64 {
	w := theta[:c.dw]
	var s float64
	for j, bj := range c.b {
		s += bj * w[j]
	}
	return s - 0.5*c.m.Quad(w, zeros(c.mw))
}

// integrate makes the integrated scale moves of a sweep, after the latent
// draw: for each independent term t in turn (c.integrateN rounds), a
// Metropolis–Hastings update of (log τ_t, w) jointly given the latent
// variables, whose proposal is
//
//	ℓ′ = ℓ_t + h·ε (ε ~ N(0, 1)),  w′ ~ N(m(τ′), P(τ′)⁻¹),
//
// update 1's Gaussian conditional of every fixed and group effect at the
// proposed scale (the sparse factor of P(τ′)), kept with probability
// min(1, α),
//
//	log α = log π(θ′) + L(w′) − log π(θ) − L(w)
//	        + log N(w; m(τ), P(τ)⁻¹) − log N(w′; m(τ′), P(τ′)⁻¹),
//
// L(w) = bᵀw − ½wᵀMw the likelihood given the latent variables (latentLik)
// and log N(w; m, P⁻¹) = ½log det P − ½(w − m)ᵀP(w − m). The random walk
// is symmetric in ℓ, so α holds no other proposal term: an exact update
// of π(θ)·p(latent | θ) for any prior (where the prior of the effects
// given τ is Gaussian, as model.NewMultilevel's, α is the ratio of τ's
// density with every location coordinate integrated out,
// p(τ′ | latent)/p(τ | latent), whatever w and w′ are). It is the
// collapsed Gibbs step of the Gaussian model given the latent data (Liu,
// JASA 89, 1994): τ moves with every effect it scales redrawn, so
// neither the centred form (τ given u, stuck where u is small) nor the
// non-centred one (τ given u/τ, stuck where the data pin u) holds it,
// and a scale near zero, or one whose effects are confounded with a
// nested factor's (u_lea against its schools'), moves in steps of its
// own posterior width. A proposal whose P(τ′) the factorisation finds
// not positive definite in floating point (a τ′ so far out that the
// effects and their fixed effect are confounded to rounding) is
// rejected. Each proposal costs one factorisation of P; the
// factor the last kept proposal left is the current one, and update 1
// draws w from it (fresh). h adapts during warmup to 2.4 times log τ_t's
// running sd. Proven by TestLogitIntegratedMoments and
// TestLogitIntegratedSBC, with the mutants integrated-logdet and
// integrated-q caught.
func (c *augChain) integrate(rng *rand.Rand) error {
	if err := c.conditional(c.chol, c.mean); err != nil {
		return err
	}
	ldCur := c.chol.LogDet()
	for a, j := range c.eff {
		c.dz[a] = c.theta[j] - c.mean[a]
	}
	qCur := c.pv.Quad(c.dz, c.zeroEff)
	likCur := c.latentLik(c.theta)
	for range c.integrateN {
		for k := range c.asis {
			a := &c.asis[k]
			lt := a.logTau
			old := c.theta[lt]
			c.theta[lt] = old + a.cw*rng.NormFloat64()
			err := c.conditional(c.chol2, c.mean2)
			lNew := c.theta[lt]
			c.theta[lt] = old
			a.cT++
			if err != nil {
				continue // P(τ′) numerically singular (τ′ far out): rejected
			}
			ldNew := c.chol2.LogDet()
			c.chol2.NormalInto(rng, c.dz)
			qNew := c.pv.Quad(c.dz, c.zeroEff)
			copy(c.next, c.theta)
			c.next[lt] = lNew
			for q, j := range c.eff {
				c.next[j] = c.mean2[q] + c.dz[q]
			}
			lpNew := c.t.LogPrior(c.next)
			likNew := c.latentLik(c.next)
			la := lpNew + likNew - c.lp - likCur
			switch {
			case c.ah.integrateNoLogDet:
				la += 0.5 * (qNew - qCur)
			case c.ah.integrateNoQ:
			default:
				la += 0.5*(ldCur-qCur) - 0.5*(ldNew-qNew)
			}
			if math.IsNaN(la) {
				return fmt.Errorf("GroupGibbs: the integrated scale move of θ[%d]: its ratio is NaN (log prior %v → %v)", lt, c.lp, lpNew)
			}
			if la >= 0 || rng.Float64() < math.Exp(la) {
				copy(c.theta, c.next)
				c.lp = lpNew
				c.chol, c.chol2 = c.chol2, c.chol
				c.mean, c.mean2 = c.mean2, c.mean
				ldCur, qCur, likCur = ldNew, qNew, likNew
				a.cN++
			}
		}
	}
	c.fresh = true
	return nil
}

// adaptIntegrate adds the sweep's log τ_t to warmup's sums and sets each
// term's step h = 2.4·sd (within [0.02, 2]) from them.
func (c *augChain) adaptIntegrate() {
	for k := range c.asis {
		a := &c.asis[k]
		l := c.theta[a.logTau]
		a.cS += l
		a.cSS += l * l
		if c.nWarm >= 20 {
			m := a.cS / c.nWarm
			v := max(a.cSS/c.nWarm-m*m, 0)
			a.cw = min(max(2.4*math.Sqrt(v), 0.02), 2)
		}
	}
}

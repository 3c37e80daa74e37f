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

// integrateMaxRounds is the most rounds of integrated scale moves a sweep
// GroupGibbs.IntegratedScale may ask for: more is an error, not a sweep
// that would factor P that many times per term.
const integrateMaxRounds = 100

// integrateShare is the share of the latent draws' counted cost that a
// nesting parent's round of integrated scale moves may add by default
// (integrateDefault).
const integrateShare = 0.5

// integrateRoundShare is the share of the latent draws' counted cost that
// the default's rounds of integrated scale moves for every term may add
// (integrateDefault): an eighth, where the moves are cheap against the
// sweep.
const integrateRoundShare = 0.125

// integrateDefaultMax is the most rounds a sweep the default makes for
// every term (integrateDefault): past it the least ESS is an effect's,
// which more moves of τ do not raise (figures/bench/multilevel_real_contra.txt).
const integrateDefaultMax = 3

// integrateCoordCost is a location coordinate's share of an integrated
// scale proposal's counted cost (integrateCost), in the multiply-adds of
// sparse.Symbolic.FactorFlops: its normal draw, its prior's log density,
// its entries of the right-hand side, the permutations and the factor's
// per-column work.
const integrateCoordCost = 64

// integrateCost returns the counted cost of one integrated scale proposal
// (integrate), in the multiply-adds of sparse.Symbolic.FactorFlops: the
// numeric factorisation of P(τ′) (FactorFlops) plus the passes around it
// — P's fill (nnz P), the factor's scatter, the two triangular solves for
// the mean and the back substitution of the draw (4·nnz L), the
// likelihood's quadratic form in M (nnz M) — and integrateCoordCost a
// location coordinate. The passes dominate where the factor is cheap (a
// nesting, whose factor has no fill beyond P): counting the
// factorisation alone would undercount such a proposal several times over.
func (c *augChain) integrateCost() float64 {
	sym := c.chol.Symbolic()
	return sym.FactorFlops() + float64(c.pv.NNZ()+c.m.NNZ()+4*sym.FactorNNZ()+integrateCoordCost*len(c.eff))
}

// integrateDefault sets the rounds of integrated scale moves the default
// makes a sweep on a model of n data, whose latent draws cost perDatum·n
// counted multiply-adds a sweep (B), each proposal integrateCost (q), T
// independent terms:
//
//   - every term makes r = ⌊integrateRoundShare·B/(T·q)⌋ rounds, at most
//     integrateDefaultMax: where a round of proposals for every term costs
//     at most an eighth of the latent draws (a single factor of few levels
//     over many data: contraception), the moves raise τ's ESS a draw for
//     little more CPU a sweep;
//   - a nesting's parent (nesting) makes at least one round where
//     the T_p parents' proposals cost at most integrateShare·B (T_p·q ≤
//     B/2): a parent's effects are confounded with its children's (an
//     LEA's with its schools' sum), which neither the centred nor the
//     non-centred update of its τ crosses;
//   - no other term makes any: it keeps the interweaving, which crosses a
//     variance near zero, and the sweep's cost stays the latent draws'
//     (crossed factors of hundreds of levels, whose proposal costs about
//     half a sweep's draws: verbagg).
//
// figures/bench/multilevel_real_integrate.txt and
// multilevel_real_contra.txt measure the rule's cases on the real suite.
// Counted, never timed: the same on any machine. Checked by
// TestLogitIntegrateRule.
func (c *augChain) integrateDefault(n int, perDatum float64) {
	nt := len(c.asis)
	q := c.integrateCost()
	b := perDatum * float64(n)
	if nt == 0 || !(q > 0) || !(b > 0) {
		return
	}
	r := min(integrateDefaultMax, int(math.Floor(integrateRoundShare*b/(float64(nt)*q))))
	par, _ := c.nesting()
	var np int
	for _, p := range par {
		if p {
			np++
		}
	}
	parent := np > 0 && float64(np)*q <= integrateShare*b
	for k := range c.asis {
		c.asis[k].rounds = r
		if parent && par[k] {
			c.asis[k].rounds = max(r, 1)
		}
	}
}

// nesting reports, for each independent term, whether another term is
// nested in it (parent) and whether it is nested in another (child): the
// nested term has more levels and every one of its levels' data lie in one
// level of the other (schools in LEAs). A datum without a term's effect (a
// slope whose covariate is 0 there) says nothing of it.
func (c *augChain) nesting() (parent, child []bool) {
	nt := len(c.asis)
	parent, child = make([]bool, nt), make([]bool, nt)
	lev := make([][]int32, nt) // lev[t][i]: datum i's level of term t, or −1
	for t := range c.asis {
		lev[t] = make([]int32, len(c.rows.ptr)-1)
		for i := range lev[t] {
			lev[t][i] = -1
			for k := c.rows.ptr[i]; k < c.rows.ptr[i+1]; k++ {
				if j := int(c.rows.col[k]); c.asis[t].has(j) {
					lev[t][i] = int32((j - c.asis[t].start) / c.asis[t].stride)
				}
			}
		}
	}
	for p := range c.asis {
		for ch := range c.asis {
			if p == ch || c.asis[ch].levels <= c.asis[p].levels {
				continue
			}
			par := make([]int32, c.asis[ch].levels)
			for g := range par {
				par[g] = -1
			}
			nested := true
			for i, g := range lev[ch] {
				q := lev[p][i]
				if g < 0 || q < 0 {
					continue
				}
				if par[g] < 0 {
					par[g] = q
				} else if par[g] != q {
					nested = false
					break
				}
			}
			if nested {
				parent[p], child[ch] = true, true
			}
		}
	}
	return parent, child
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
	c.condMean(ch, mean)
	return nil
}

// condMean sets mean to the conditional mean of w given b at the scales
// ch was factored at (conditional's second half: no refactorisation).
func (c *gaussChain) condMean(ch *sparse.Cholesky, mean []float64) {
	c.condRHS()
	ch.Solve(mean, c.rhs, c.work)
}

// condRHS sets c.rhs to the right-hand side r of the conditional of w
// given b: P·mean = r.
func (c *gaussChain) condRHS() {
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
// draw: for each independent term t in turn (a.rounds rounds), a
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
// draws w from it (fresh). h starts at integrateWidth and adapts during
// warmup toward an acceptance rate of 0.44 (adaptStep). Proven by
// TestLogitMoments (the default sweep, without the move and with two
// rounds; the mutants integrated-logdet and integrated-q caught) and
// TestLogitSBC.
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
	for r := range c.integrateN {
		for k := range c.asis {
			a := &c.asis[k]
			if r >= a.rounds {
				continue
			}
			lt := a.logTau
			old := c.theta[lt]
			c.theta[lt] = old + a.cw*rng.NormFloat64()
			err := c.conditional(c.chol2, c.mean2)
			lNew := c.theta[lt]
			c.theta[lt] = old
			a.cT++
			if err != nil {
				if c.warm {
					a.adaptStep(0)
				}
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
				la += 0.5 * (ldCur - qCur)
			default:
				la += 0.5*(ldCur-qCur) - 0.5*(ldNew-qNew)
			}
			if math.IsNaN(la) {
				return fmt.Errorf("GroupGibbs: the integrated scale move of θ[%d]: its ratio is NaN (log prior %v → %v)", lt, c.lp, lpNew)
			}
			if c.warm {
				a.adaptStep(math.Exp(min(la, 0)))
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

// integrateTarget is the acceptance rate warmup steers each term's
// random-walk step to: the optimum of a one-dimensional Gaussian target's
// random walk (Gelman, Roberts and Gilks, Bayesian Statistics 5, 1996).
const integrateTarget = 0.44

// adaptStep moves term a's random-walk step by the Robbins–Monro
// recursion log h ← log h + (p − integrateTarget)/n^0.6 toward
// integrateTarget, p the proposal's acceptance probability and n the
// proposals it has adapted over, within [0.02, 3]. Warmup only: the step
// then stays where it stands, so every sampling sweep is the same kernel.
func (a *asisTerm) adaptStep(p float64) {
	a.cA++
	l := math.Log(a.cw) + (p-integrateTarget)/math.Pow(a.cA, 0.6)
	a.cw = math.Exp(min(max(l, math.Log(0.02)), math.Log(3)))
}

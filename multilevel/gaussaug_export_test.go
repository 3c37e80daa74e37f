// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"errors"
	"math/rand/v2"
	"strings"

	"github.com/exactmh/exactmh"
)

// AugmentMutant returns k (Augment on) with the augmentation sweep's
// mutant name: "flip" (z truncated to the wrong side of 0), "asis-prior"
// (the interweaving τ drawn without its prior), "asis-centred" (its
// prior ratio the centred form's), "stale-b" (the joint draw
// from the previous sweep's b), "px-jacobian" (the expanded move without
// the location vector's Jacobian), "px-shape" (its ratio without the
// e^{G·s} its proposal's shape takes from the effects' priors),
// "nest-jacobian" (the nested scale move's target without e^{G_p·s}),
// "nest-shift" (its parent's effects scaled, the children's not
// shifted), "marginal-jacobian" (the marginal
// scale move without G·ℓ), "collapse-prior" (its collapsed target
// without the integrated levels' |S|·ℓ), "collapse-jacobian" (their
// effects counted in its Jacobian), "collapse-latent" (their effects
// redrawn with variance τ², not τ²/(1 + c²τ²)), "level-ratio" (levelDraw
// keeping every proposal), "cache-stale" (the next marginal scale move
// reading the collapsed data's energies at their integrated η); on a logistic model also "kappa-half" (κ_i =
// n_i·y_i, without the −n_i/2), "omega-stale" (ω drawn at the start's η,
// never refreshed), "trials-one" (ω_i ~ PG(1, η_i) whatever n_i),
// "omega-lag" (M's pairs of row i refilled with the previous row's ω);
// "integrated-logdet" (the integrated scale move without ½log det P),
// "integrated-q" (without the forward proposal's density of w′: half its log q ratio dropped),
// "level-q" (the logistic level move's ratio without its proposal's
// densities), "level-datum" (its level's likelihood without the
// level's last datum), "pair-rho" (a collapsed pair's Φ₂ with ρ of the
// wrong sign), "pair-product" (its Φ₂ as the product of the marginals)
// and "pair-one" (its effect redrawn given its first datum alone). Other
// names: no mutant. Also "no-marginal", "no-px", "no-collapse",
// "no-level", "no-level-mh", "no-half" and "no-nest", which leave out a move or the
// integration, "level-all" (the logistic level move on every level of a
// term of small levels, whatever its share of successes),
// "refill-pairs" (M refilled by the pairs where it would be by the
// grouped rows), "no-integrate" (no integrated scale move), "integrate-1" and "integrate-2" (one
// or two rounds of it a sweep), "gibbs-2", "asis-2", "marginal-2" and
// "nest-2" (updates 1–4, the interweaving steps, the marginal scale moves
// with the small levels' draws, the nested scale moves made twice a
// sweep), "zw-2" (z and w drawn a second time after update 2, at the same
// scales), "no-asis" and "no-tau" (no interweaving step, no centred τ
// update), "no-pairs" (no two-datum level integrated out of the Newton
// marginal scale move), "indep-only" (two Laplace independence moves a
// transition, no sweep) and "indep-sweep" (one after each sweep), all
// exact, not mutants. The independence move's mutants (with indep-only or
// indep-sweep): "indep-reverse" (q(current) left out of its ratio),
// "indep-stale" (the cached q(current) not updated on a kept move),
// "indep-mismatch" (the proposal's density at the current state's
// log det P, not its draw's) and "indep-jacobian" (q_ℓ taken as a
// density in τ, without the Jacobian of ℓ = log τ) and, on a model of one
// scale, "indep-cell" (q_ℓ's tabulated part read on the neighbouring
// segment of the grid) and "indep-node" (w's density at the neighbouring
// node's mean and precision); "indep-nogrid" (not a mutant) makes the move
// without its grid on a model of one scale. "no-schur" draws update 1
// through P's factor where it would eliminate a term's levels, "gibbs-1"
// makes one round of updates 1–4 where gibbsRounds makes two, "half-K" makes
// the marginal scale move of the K-th term in a random half of the sweeps,
// "no-corr-asis" leaves the correlated factors' scales out of the
// interweaving step, "no-corr-nc" makes no non-centred move of their
// scales and correlations (all exact); "corr-nc-jacobian" is the mutant
// that takes that move's Jacobian |det L|^G one power short; "schur-cond" is the mutant that draws the eliminated effects
// without their dependence on the rest. names is a comma-separated list
// of them.
func AugmentMutant(k GroupGibbs, names string) GroupGibbs {
	k.Augment = true
	for _, name := range strings.Split(names, ",") {
		k = augmentMutant(k, name)
	}
	return k
}

func augmentMutant(k GroupGibbs, name string) GroupGibbs {
	switch name {
	case "flip":
		k.augment.flipSide = true
	case "asis-prior":
		k.augment.asisNoPrior = true
	case "asis-centred":
		k.augment.asisCentred = true
	case "stale-b":
		k.augment.staleB = true
	case "px-jacobian":
		k.augment.pxNoJacobian = true
	case "px-shape":
		k.augment.pxNoShape = true
	case "no-nest":
		k.augment.nestOff = true
	case "nest-jacobian":
		k.augment.nestNoJacobian = true
	case "nest-shift":
		k.augment.nestNoShift = true
	case "marginal-jacobian":
		k.augment.marginalNoJacobian = true
	case "no-marginal":
		k.augment.marginalOff = true
	case "no-px":
		k.augment.pxOff = true
	case "no-collapse":
		k.augment.collapseOff = true
	case "collapse-prior":
		k.augment.collapseNoPrior = true
	case "collapse-jacobian":
		k.augment.collapseJacobian = true
	case "collapse-latent":
		k.augment.collapseLatentVar = true
	case "no-newton":
		k.augment.newtonOff = true
	case "newton-reverse":
		k.augment.newtonNoReverse = true
	case "half-0", "half-1", "half-2", "half-3":
		k.augment.halfMask |= 1 << (name[5] - '0')
	case "gibbs-1":
		k.augment.gibbsOne = true
	case "no-schur":
		k.augment.schurOff = true
	case "schur-cond":
		k.augment.schurCond = true
	case "no-half":
		k.augment.halfOff = true
	case "no-level":
		k.augment.levelOff = true
	case "level-ratio":
		k.augment.levelNoRatio = true
	case "cache-stale":
		k.augment.cacheStale = true
	case "phi-cell":
		k.augment.phiCell = true
	case "kappa-half":
		k.augment.kappaNoHalf = true
	case "omega-stale":
		k.augment.omegaStale = true
	case "trials-one":
		k.augment.trialsOne = true
	case "omega-lag":
		k.augment.omegaLag = true
	case "integrated-logdet":
		k.augment.integrateNoLogDet = true
	case "integrated-q":
		k.augment.integrateNoQ = true
	case "no-level-mh":
		k.augment.levelMHOff = true
	case "level-all":
		k.augment.levelMHAll = true
	case "level-q":
		k.augment.levelNoQ = true
	case "level-datum":
		k.augment.levelDropDatum = true
	case "refill-pairs":
		k.augment.refillPairs = true
	case "no-integrate":
		k.IntegratedScale = -1
	case "integrate-2":
		k.IntegratedScale = 2
	case "integrate-1":
		k.IntegratedScale = 1
	case "gibbs-2":
		k.augment.gibbsTwice = true
	case "asis-2":
		k.augment.asisTwice = true
	case "marginal-2":
		k.augment.marginalTwice = true
	case "nest-2":
		k.augment.nestTwice = true
	case "no-asis":
		k.augment.asisOff = true
	case "no-corr-asis":
		k.augment.corrAsisOff = true
	case "no-corr-nc":
		k.augment.corrNCOff = true
	case "corr-nc-jacobian":
		k.augment.corrNCJacobianOff1 = true
	case "no-tau":
		k.augment.tauOff = true
	case "zw-2":
		k.augment.zwTwice = true
	case "no-pairs":
		k.augment.pairsOff = true
	case "pair-rho":
		k.augment.pairRhoSign = true
	case "pair-product":
		k.augment.pairProduct = true
	case "pair-one":
		k.augment.pairRedrawOne = true
	case "indep-only":
		k.Independence = -2
	case "indep-sweep":
		k.Independence = 1
	case "indep-reverse":
		k.augment.indep.noReverse = true
	case "indep-stale":
		k.augment.indep.stale = true
	case "indep-mismatch":
		k.augment.indep.mismatch = true
	case "indep-jacobian":
		k.augment.indep.noJacobian = true
	case "indep-cell":
		k.augment.indep.cell = true
	case "indep-node":
		k.augment.indep.node = true
	case "indep-nogrid":
		k.augment.indep.noGrid = true
	}
	return k
}

// TruncAbove is truncAbove.
func TruncAbove(rng *rand.Rand, a float64) float64 { return truncAbove(rng, a) }

// ProposalExp is proposalExp.
func ProposalExp(x float64) float64 { return proposalExp(x) }

// AugmentProbitLoss returns the probit augmentation sweep's probitLoss
// and the energy's Loss, each of datum i at η, on the probit model p.
func AugmentProbitLoss(p *exactmh.Posterior) (sweep, model func(i int, eta float64) float64, err error) {
	lay, pe, ok := probitOf(p.Energy, p.Prior)
	if !ok {
		return nil, nil, errors.New("not a probit multilevel model")
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, nil, err
	}
	c, err := startAugment("test", t, lay, pe, false, make([]float64, p.Dim()), nil, 0, augHooks{})
	if err != nil {
		return nil, nil, err
	}
	return c.probitLoss, pe.Loss, nil
}

// IntegrateRounds returns the rounds of integrated scale moves a sweep
// the augmentation sweep makes by default (integrateDefault) on the
// logistic model p, summed over its terms, at centre.
func IntegrateRounds(p *exactmh.Posterior, centre []float64) (int, error) {
	lay, pe, logit, ok := augmentOf(p.Energy, p.Prior)
	if !ok || !logit {
		return 0, errors.New("not a logistic multilevel model")
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, err
	}
	c, err := startAugment("test", t, lay, pe, true, centre, centre, 0, augHooks{})
	if err != nil {
		return 0, err
	}
	var r int
	for _, a := range c.asis {
		r += a.rounds
	}
	return r, nil
}

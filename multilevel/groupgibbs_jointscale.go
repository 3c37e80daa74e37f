// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The joint rescaling move (GroupGibbs.JointScale; docs/multilevel.md,
// "Joint rescaling move").
//
// In a binary model with a latent error of fixed scale (probit: 1; logit:
// π/√3) the fixed effects are identified only relative to the latent sd
// √(1 + Σ τ_t²): a larger τ makes every marginal effect smaller, and the
// posterior holds the fixed effects and the scales together along a ridge
// (mlmRev's guImmun: log τ_mom and the covariates correlated 0.41). Every
// other update of the sweep keeps either β (the scale moves) or τ (the
// blocks, shifts, shears) and so crosses that ridge in small steps.
//
// The move scales every coordinate a row holds — the fixed effects F,
// the intercept among them, and every group effect U — and every random
// term's scale by one common factor c = e^λ, λ ~ N(0, s²), the fixed
// effects by c^a (a = JointScalePow in (0, 1], 1 by default):
//
//	β′_j = c^a·β_j (j ∈ F),   u′_j = c·u_j (j ∈ U),
//	log τ′_t = log τ_t + λ (every term t),
//
// the other coordinates (a correlated factor's correlations, which the
// map leaves Σ's correlation matrix) kept. At a = 1 each linear predictor
// moves η_i = o_i + x_iᵀθ → o_i + c·x_iᵀθ; a < 1 follows the attenuation
// β ∝ √(1 + Σ τ²) more closely (its slope d log β/d log τ is
// Σ τ²/(1 + Σ τ²)). The map T_λ is linear in the coordinates the chain
// holds (β by c^a, u by c, and the log scales — the chain holds log τ,
// not τ — by a shift), T_−λ inverts it, and its Jacobian is
//
//	|∂T_λ(θ)/∂θ| = c^{a|F| + |U|} = e^{λ(a|F| + |U|)}
//
// (the log scales' shift contributes 1). λ and −λ are equally likely, so
// the Metropolis–Hastings log ratio is
//
//	log π(T_λθ) − log π(θ) + λ(a|F| + |U|),
//	log π(θ) = −β Σ_i f_i(η_i(θ)) + log p(θ),
//
// with every datum read exactly (one pass over the data a move) and the
// whole prior — the fixed effects', the scales', and the effects' given
// their scales, whose Gaussian part u_j/τ_t the map keeps, so that the
// effects' normalisers e^{−λ} per effect cancel the effects' share of the
// Jacobian. The intercept scales with the other fixed effects: under the
// attenuation η/√(1 + Σ τ²) it shrinks as every slope does, and leaving
// it out would move the predictors off the ridge. The move is the same
// for a logistic model (the same attenuation, with the logistic's sd).
//
// The step s is fixed for the run from the centre θ̂: s = jointScaleStep/
// √(1 + I), I = β Σ_i f_i″(η̂_i)·(a·x_iᵀβ̂ + x_iᵀû)² the data's
// information about λ at λ = 0, so λ and −λ stay equally likely whatever
// the state.
//
// TestGroupGibbsJointScaleMoments proves it against non-centred NUTS and
// catches the mutants GroupGibbsJointScaleNoJacobian, ...TauKept and
// ...InterceptKept; TestGroupGibbsJointScaleSBC calibrates it.

// jointScaleStep is the move's step in units of the data's sd of λ at
// the centre: the random-walk optimum for a Gaussian of that curvature.
const jointScaleStep = 2.4

// jointScaleHooks are the move's test mutants, each a move whose
// Metropolis–Hastings ratio is not its map's: noJacobian drops λ(a|F| + |U|);
// tauKept leaves the log scales where the ratio took them scaled;
// fixedKept leaves coordinate 0 (the intercept) where the ratio took it
// scaled. only leaves the log scales no update given the effects: the
// sweep makes no slice update of a free coordinate, no shift, nested or
// conditional scale move, only the joint rescaling moves and each term's
// scale move (its effects scaled with its τ), so that a move which
// changes the effects' standardised values u/τ wrongly is not repaired
// by the centred update of τ.
type jointScaleHooks struct {
	noJacobian, tauKept, fixedKept, only bool
}

// jointScaleState is a chain's move: the coordinates it scales and the
// log scales it shifts, the step, the counters and their saved copies.
type jointScaleState struct {
	moves      int
	lin, tau   []int
	nfix       int     // lin[:nfix] are the fixed effects, lin[nfix:] the group effects
	pow        float64 // the fixed effects scale by c^pow
	logJac     float64 // the Jacobian's log per unit λ: pow·nfix + len(lin) − nfix
	step       float64
	hooks      jointScaleHooks
	tried, acc float64
	saved      [2]float64
}

// initJointScale fills the move's coordinates and its step from the
// centre (one pass over the data).
func (c *gibbsChain) initJointScale(name string, moves int, pow float64, hooks jointScaleHooks) error {
	if moves < 0 {
		return fmt.Errorf("%s: JointScale = %d, want it ≥ 0", name, moves)
	}
	if !(pow >= 0 && pow <= 1) {
		return fmt.Errorf("%s: JointScalePow = %v, want it in [0, 1]", name, pow)
	}
	s := &c.jsc
	s.moves, s.hooks = moves, hooks
	if moves == 0 {
		return nil
	}
	s.pow = pow
	if pow == 0 {
		s.pow = 1
	}
	seen := make(map[int]bool)
	for j, b := range c.blocks {
		if b >= 0 && c.logTau[j] < 0 {
			s.lin = append(s.lin, j)
		}
	}
	s.nfix = len(s.lin)
	for j, b := range c.blocks {
		if b < 0 || c.logTau[j] < 0 {
			continue
		}
		s.lin = append(s.lin, j)
		if lt := int(c.logTau[j]); !seen[lt] {
			seen[lt] = true
			s.tau = append(s.tau, lt)
		}
	}
	s.logJac = s.pow*float64(s.nfix) + float64(len(s.lin)-s.nfix)
	zero := make([]float64, len(c.center))
	copy(zero, c.center)
	for q, j := range s.lin {
		if q < s.nfix {
			zero[j] = (1 - s.pow) * c.center[j] // d/dλ of c^pow·θ̂_j at λ = 0 is pow·θ̂_j
		} else {
			zero[j] = 0
		}
	}
	var info float64
	for i := range c.t.N() {
		z, zo := c.rows.LinearPredictors(i, c.center, zero)
		_, f2 := c.rows.LossDerivs(i, z)
		if d := z - zo; f2 > 0 && !math.IsInf(f2, 0) && !math.IsNaN(d) {
			info += f2 * d * d
		}
	}
	if err := c.rowErr(); err != nil {
		return err
	}
	s.step = jointScaleStep / math.Sqrt(1+c.t.Beta()*info)
	return nil
}

// jointScaleMove makes one joint rescaling move and returns whether θ
// moved and the data it read (all N). It leaves next equal to θ.
func (c *gibbsChain) jointScaleMove(rng *rand.Rand) (bool, int, error) {
	s := &c.jsc
	lambda := s.step * rng.NormFloat64()
	f, ff := math.Exp(lambda), math.Exp(s.pow*lambda)
	for q, j := range s.lin {
		if q < s.nfix {
			c.next[j] = ff * c.theta[j]
		} else {
			c.next[j] = f * c.theta[j]
		}
	}
	for _, lt := range s.tau {
		c.next[lt] = c.theta[lt] + lambda
	}
	s.tried++
	lp, lpn := c.t.LogPrior(c.theta), c.t.LogPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) {
		c.jointScaleRevert()
		return false, 0, nil
	}
	beta := c.t.Beta()
	var du float64
	n := c.t.N()
	for lo := 0; lo < n; lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			c.jointScaleRevert()
			return false, 0, err
		}
		hi := min(lo+chunk, n)
		for i := lo; i < hi; i++ {
			z, zn := c.rows.LinearPredictors(i, c.theta, c.next)
			l, ln := c.loss2(i, z, zn)
			du += ln - l
		}
		c.t.Count(hi - lo)
	}
	c.seenAll = true
	if err := c.rowErr(); err != nil {
		c.jointScaleRevert()
		return false, 0, err
	}
	du *= beta
	if math.IsNaN(du) {
		c.jointScaleRevert()
		return false, n, fmt.Errorf("GroupGibbs: joint rescaling energy difference NaN at θ = %v, θ′ = %v", c.theta, c.next)
	}
	logR := lpn - lp - du
	if !s.hooks.noJacobian {
		logR += lambda * s.logJac
	}
	if !c.decide(rng, logR) {
		c.jointScaleRevert()
		return false, n, nil
	}
	if s.hooks.tauKept {
		for _, lt := range s.tau {
			c.next[lt] = c.theta[lt]
		}
	}
	if s.hooks.fixedKept && len(s.lin) > 0 {
		c.next[s.lin[0]] = c.theta[s.lin[0]]
	}
	for _, j := range s.lin {
		c.theta[j] = c.next[j]
	}
	for _, lt := range s.tau {
		c.theta[lt] = c.next[lt]
	}
	s.acc++
	c.ms.lpOK = false
	c.deltas()
	return true, n, nil
}

// jointScaleRevert puts next back to θ on the move's coordinates.
func (c *gibbsChain) jointScaleRevert() {
	for _, j := range c.jsc.lin {
		c.next[j] = c.theta[j]
	}
	for _, lt := range c.jsc.tau {
		c.next[lt] = c.theta[lt]
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

// GroupGibbsNoMoves returns k without its shifts and scale moves
// (groupgibbs_moves.go): the sweep of blocks, location moves and log
// scales alone.
func GroupGibbsNoMoves(k GroupGibbs) GroupGibbs {
	k.moveHooks.movesOff = true
	return k
}

// GroupGibbsNoShifts returns k without its shifts (scale moves kept).
func GroupGibbsNoShifts(k GroupGibbs) GroupGibbs {
	k.moveHooks.shiftsOff = true
	return k
}

// GroupGibbsNoScaleMoves returns k without its scale moves (shifts kept).
func GroupGibbsNoScaleMoves(k GroupGibbs) GroupGibbs {
	k.moveHooks.scalesOff = true
	return k
}

// GroupGibbsShiftBreak returns k with one level of each shift of two or
// more effects left uncompensated: a shift that changes a linear
// predictor, accepted on the prior alone, which the kit must catch.
func GroupGibbsShiftBreak(k GroupGibbs) GroupGibbs {
	k.moveHooks.shiftBreak = true
	return k
}

// GroupGibbsScaleNoJacobian returns k with its scale moves' Jacobian
// e^{Gλ} dropped (not the nested ones'), which the kit must catch.
func GroupGibbsScaleNoJacobian(k GroupGibbs) GroupGibbs {
	k.moveHooks.scaleNoJacobian = true
	return k
}

// GroupGibbsNestedNoJacobian returns k with its nested scale moves'
// Jacobian e^{G_P·λ} dropped, which the kit must catch.
func GroupGibbsNestedNoJacobian(k GroupGibbs) GroupGibbs {
	k.moveHooks.nestedNoJacobian = true
	return k
}

// GroupGibbsScaleExactSkip returns k with its scale moves that read the
// term's data exactly (every block small, ExactBelow) reading none: the
// expansion's ratio alone, every block's remainders ignored, which the
// kit must catch.
func GroupGibbsScaleExactSkip(k GroupGibbs) GroupGibbs {
	k.moveHooks.exactSkip = true
	return k
}

// GibbsShifts returns the shifts k finds on the posterior p (k.Center
// set): each as its coordinates and coefficients.
func GibbsShifts(p *exactmh.Posterior, k GroupGibbs) (idx [][]int32, w [][]float64, err error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, nil, err
	}
	g, err := newGibbsTerms("GroupGibbs", t, k)
	if err != nil || g.mv == nil {
		return nil, nil, err
	}
	mv := g.mv
	for s := range mv.expl {
		idx = append(idx, mv.idx[mv.ptr[s]:mv.ptr[s+1]])
		w = append(w, mv.w[mv.ptr[s]:mv.ptr[s+1]])
	}
	return idx, w, nil
}

// GroupGibbsJointNoQ returns k with its joint location move's log q ratio
// log N(θ) − log N(θ′) dropped: a Crank–Nicolson proposal accepted as if
// it were symmetric, which the kit must catch.
func GroupGibbsJointNoQ(k GroupGibbs) GroupGibbs {
	k.jointNoQ = true
	return k
}

// GroupGibbsJointIgnoresBlock returns k with its joint move's thinning
// bound ignoring the move of block b (its s_b taken as 0), which the kit
// must catch.
func GroupGibbsJointIgnoresBlock(k GroupGibbs, b int) GroupGibbs {
	k.jointIgnore = b + 1
	return k
}

// GroupGibbsJointThinAll returns k with its joint move's data thinned
// wherever thinning draws fewer than N (by default only where it draws a
// few): the thinning path of the joint move, for the kit.
func GroupGibbsJointThinAll(k GroupGibbs) GroupGibbs {
	k.jointThinAll = true
	return k
}

// GroupGibbsJointFixedBlockOnly returns k with its joint move's thinning
// bound ignoring the moves of every block but the fixed effects' (the
// group effects' s_m taken as 0), which the kit must catch.
func GroupGibbsJointFixedBlockOnly(k GroupGibbs) GroupGibbs {
	k.jointIgnore = -1
	return k
}

// JointShearIdentity starts k (JointFixed) on p at theta, makes one
// marginal proposal θ′ and returns log N(θ′) − log N(θ) under the joint
// Gaussian of the move and log N_β(β′) − log N_β(β) under its fixed
// effects' marginal, which the shear makes equal.
func JointShearIdentity(p *exactmh.Posterior, k GroupGibbs, theta []float64, seed uint64) (joint, marginal float64, err error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, 0, err
	}
	ch, err := k.Start(t, theta)
	if err != nil {
		return 0, 0, err
	}
	c := ch.(*gibbsChain)
	if !c.jointRefresh(t.Beta()) {
		return 0, 0, fmt.Errorf("P not positive definite")
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	c.jointShear(rng, c.jointRho, math.Sqrt(1-c.jointRho*c.jointRho))
	j, s := c.jt, &c.js
	for l, cc := range j.loc {
		s.u[l], s.v[l] = c.next[cc], c.theta[cc]
	}
	joint = -(s.a.Quad(s.u, s.mu) - s.a.Quad(s.v, s.mu)) / 2
	// The marginal: Σ_ββ = L_ββL_ββᵀ; ½‖L⁻¹(β − μ_β)‖².
	pn := len(j.fix)
	q := func(th []float64) float64 {
		d := make([]float64, pn)
		for a, l := range j.fix {
			d[a] = th[j.loc[l]] - s.mu[l]
		}
		forwardSub(s.sbb, pn, d)
		var r float64
		for _, v := range d {
			r += v * v
		}
		return r / 2
	}
	return joint, -(q(c.next) - q(c.theta)), nil
}

// GroupGibbsCondScaleNoJacobian returns k with its conditional scale
// moves' Jacobian Π_j √(P_j/P′_j) dropped, which the kit must catch.
func GroupGibbsCondScaleNoJacobian(k GroupGibbs) GroupGibbs {
	k.moveHooks.condNoJacobian = true
	return k
}

// GroupGibbsCondScaleOwnB returns k with each effect's own Δ_j taken into
// its conditional scale move's b_j: a map whose mean moves with the
// effect, which T_−λ does not invert, accepted with the ratio of the map
// that it does, which the kit must catch.
func GroupGibbsCondScaleOwnB(k GroupGibbs) GroupGibbs {
	k.moveHooks.condOwnB = true
	return k
}

// GroupGibbsCondScaleOnly returns k (CondScale set) with the conditional
// scale moves the log scales' only update: no slice update of log τ, no
// plain or nested scale move. Exact on its own; the mutants above are
// tested on it, where nothing else moves τ to hide their error.
func GroupGibbsCondScaleOnly(k GroupGibbs) GroupGibbs {
	k.CondScale = true
	k.moveHooks.condOnly = true
	return k
}

// GroupGibbsJointScaleNoJacobian returns k with its joint rescaling
// moves' Jacobian e^{λ|S|} dropped, which the kit must catch.
func GroupGibbsJointScaleNoJacobian(k GroupGibbs) GroupGibbs {
	k.jointScaleHooks.noJacobian = true
	return k
}

// GroupGibbsJointScaleTauKept returns k with its joint rescaling moves
// leaving the log scales where their ratio took them scaled with the
// effects, which the kit must catch.
func GroupGibbsJointScaleTauKept(k GroupGibbs) GroupGibbs {
	k.jointScaleHooks.tauKept = true
	return k
}

// GroupGibbsJointScaleInterceptKept returns k with its joint rescaling
// moves leaving the intercept where their energy and prior took it
// scaled, which the kit must catch.
func GroupGibbsJointScaleInterceptKept(k GroupGibbs) GroupGibbs {
	k.jointScaleHooks.fixedKept = true
	return k
}

// GroupGibbsJointScaleOnly returns k whose sweep updates the log scales
// by its joint rescaling moves and each term's scale move alone (no slice
// update of a free coordinate, no shift, nested or conditional scale
// move): τ given the effects is never updated.
func GroupGibbsJointScaleOnly(k GroupGibbs) GroupGibbs {
	k.jointScaleHooks.only = true
	return k
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "github.com/exactmh/exactmh"

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

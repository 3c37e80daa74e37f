// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/exactmh/exactmh"
)

// GroupGibbsStale returns k with its control-variate sums g and H taken
// at Center shifted by shift in every coordinate while the per-datum
// expansions stay at Center: a stale expansion, which the kit must catch.
func GroupGibbsStale(k GroupGibbs, shift float64) GroupGibbs {
	k.sumCenter = GroupSMHStale(GroupSMH{}, shift).sumCenter
	return k
}

// GroupGibbsFixedBlockOnly returns k with every thinning bound counting
// only how far the fixed effects (block 0) are from the centre — a bound
// that ignores the groups' blocks — thinning probabilities clipped to 1
// and the bound check skipped, which the kit must catch.
func GroupGibbsFixedBlockOnly(k GroupGibbs) GroupGibbs {
	k.blockMask = func(b int32) bool { return b == 0 }
	return k
}

// GroupGibbsWrongLocation returns k with each location move paired with
// the next fixed effect instead of the one whose column it matches: a move
// that changes the linear predictors, accepted on the prior ratio alone,
// which the kit must catch.
func GroupGibbsWrongLocation(k GroupGibbs) GroupGibbs {
	k.locOffset = 1
	return k
}

// GroupGibbsLocationScale returns k with its location moves' prior ratio
// taking the fixed-scale effects' prior N(0, (mul·sd)²) instead of N(0,
// sd²) (mul +Inf: their prior dropped from the ratio), which the kit must
// catch.
func GroupGibbsLocationScale(k GroupGibbs, mul float64) GroupGibbs {
	k.locSDMul = mul
	return k
}

// CenterOf is the centre the automatic default finds on a multilevel
// posterior, and its standard deviations.
func CenterOf(p *exactmh.Posterior) (center, sd []float64, err error) {
	return Center(context.Background(), p)
}

// GroupGibbsNoSplit returns k with the fixed effects kept in one block
// however poorly the data determine some (splitFixed off).
func GroupGibbsNoSplit(k GroupGibbs) GroupGibbs {
	k.splitFixedOff = true
	return k
}

// GroupGibbsSplitIgnored returns k with every thinning bound ignoring how
// far the fixed effects split into blocks of their own are from the centre
// — a sub-block bound that ignores a coordinate — thinning probabilities
// clipped to 1 and the bound check skipped, which the kit must catch.
func GroupGibbsSplitIgnored(k GroupGibbs) GroupGibbs {
	k.maskSplit = true
	return k
}

// SetGibbsGrind sets the data per sweep, as a multiple of N, above which
// the automatic default calls GroupGibbs grinding, and returns a function
// that restores it.
func SetGibbsGrind(f float64) (restore func()) {
	old := gibbsGrind
	gibbsGrind = f
	return func() { gibbsGrind = old }
}

// SetMultilevelCenterPerturb makes the automatic default move its
// multilevel centre by f before piloting GroupGibbs around it, and returns
// a function that restores the default.
func SetMultilevelCenterPerturb(f func(center, sd []float64)) (restore func()) {
	old := perturbCenter
	perturbCenter = f
	return func() { perturbCenter = old }
}

// GibbsFixedFloor is the automatic default's floor on GroupGibbs's
// fixed-effect acceptance.
func GibbsFixedFloor() float64 { return gibbsFixedFloor }

// CountGibbsTables counts the sets of GroupGibbs's tables built from now
// on (one per centre, ExactBelow and option the kernels asked for, in any
// run cache: the automatic default's pilots' and the run's), until
// restore is called.
func CountGibbsTables() (count func() int, restore func()) {
	var n atomic.Int64
	old := onGibbsTerms
	onGibbsTerms = func() { n.Add(1) }
	return func() int { return int(n.Load()) }, func() { onGibbsTerms = old }
}

// GroupGibbsCubicOff returns k without the cross-cubic control variate
// of its fixed-effect block.
func GroupGibbsCubicOff(k GroupGibbs) GroupGibbs {
	k.cubicOff = true
	return k
}

// GroupGibbsCubicAll returns k with the cross-cubic control variate
// including every eligible group however far from the centre.
func GroupGibbsCubicAll(k GroupGibbs) GroupGibbs {
	k.cubicAll = true
	return k
}

// GroupGibbsCubicLoose returns k with the cross-cubic bound's terms in the
// groups' deviations W dropped (a bound that ignores the groups' blocks),
// thinning probabilities clipped to 1 and the bound check skipped, which
// the kit must catch.
func GroupGibbsCubicLoose(k GroupGibbs) GroupGibbs {
	k.cubicLoose = true
	return k
}

// GroupGibbsCubicNoShift returns k with the cross-cubic control variate
// left out of the fixed block's proposal but kept in its remainders: a
// ratio that is not the proposal's, which the kit must catch.
func GroupGibbsCubicNoShift(k GroupGibbs) GroupGibbs {
	k.cubicNoShift = true
	return k
}

// GroupGibbsGrowthLoose returns k with its pair-wise bound (a Poisson
// family) without its exponential factors, thinning probabilities clipped
// to 1 and the bound check skipped, which the kit must catch.
func GroupGibbsGrowthLoose(k GroupGibbs) GroupGibbs {
	k.growthLoose = true
	return k
}

// SetNoJointRepilot sets whether the automatic default skips its second
// GroupGibbs pilot with a joint move where the first finds the fixed
// block stuck, and returns a function that restores it.
func SetNoJointRepilot(off bool) func() {
	old := noJointRepilot
	noJointRepilot = off
	return func() { noJointRepilot = old }
}

// GroupGibbsCorrDiagonal returns k with each correlated factor's prior
// precision Σ⁻¹ in its blocks' proposals replaced by diag(τ⁻²), the
// independent effects' (the target keeps Σ): the Gaussian parts no longer
// cancel, which the kit must catch.
func GroupGibbsCorrDiagonal(k GroupGibbs) GroupGibbs {
	k.corrDiag = true
	return k
}

// BackfitCenterOf is the backfitting Laplace-EM centre (backfitCenter) on
// a multilevel posterior whose factors of at least minLevels levels are
// crossed (crossed false and no centre otherwise), with the passes over
// the rows it made.
func BackfitCenterOf(p *exactmh.Posterior, minLevels int) (center, sd []float64, passes int, crossed bool, err error) {
	lay, ok := Of(p)
	if !ok {
		return nil, nil, 0, false, fmt.Errorf("not a multilevel posterior")
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, nil, 0, false, err
	}
	e := p.Energy.(SparseRowGLM)
	pl := planBackfit(context.Background(), e, t.N(), lay, lay.Blocks(), minLevels)
	if pl == nil || !pl.crossed {
		return nil, nil, 0, false, nil
	}
	center, sd, passes, err = backfitCenter(context.Background(), t, pl, lay, e)
	return center, sd, passes, true, err
}

// GroupGibbsTailNoQ returns k with its block proposals' Student-t
// component (TailMix) kept and its log q ratio dropped: the chain then
// targets π·q/N, whose tails are too heavy, which the kit must catch.
func GroupGibbsTailNoQ(k GroupGibbs) GroupGibbs {
	k.tailNoQ = true
	return k
}

// GroupGibbsCrossed returns k with the group partners of a group block
// taken by class at any N (groupgibbs_cross.go), each class's factor
// multiplied by inflate (1: the kernel's own).
func GroupGibbsCrossed(k GroupGibbs, inflate float64) GroupGibbs {
	k.crossAgg, k.crossInflate = true, inflate
	return k
}

// GroupGibbsCrossNoCorrection returns k (with classes) testing each datum
// drawn at its class's factor against its own partner's factor instead:
// the thinning correction left out, which the kit must catch.
func GroupGibbsCrossNoCorrection(k GroupGibbs) GroupGibbs {
	k.crossNoCorr = true
	return k
}

// GibbsPairs returns the number of block pairs and of alias records of
// GroupGibbs's tables on p at centre (the pairs by class with crossed).
func GibbsPairs(p *exactmh.Posterior, center []float64, crossed bool) (pairs, records int, err error) {
	k := GroupGibbs{Center: center, crossAgg: crossed}
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, 0, err
	}
	g, err := newGibbsTerms("GroupGibbs", tg, k)
	if err != nil {
		return 0, 0, err
	}
	return len(g.pBlock), g.rPtr[len(g.pBlock)], nil
}

// GroupGibbsMemoOff returns k keeping no per-datum memo
// (groupgibbs_memo.go).
func GroupGibbsMemoOff(k GroupGibbs) GroupGibbs {
	k.memoOff = true
	return k
}

// GroupGibbsMemoStale returns k with a memo that returns a datum's kept
// loss whatever its linear predictor, which TestGroupGibbsMemoSameDraws
// must catch.
func GroupGibbsMemoStale(k GroupGibbs) GroupGibbs {
	k.memoStale = true
	return k
}

// GroupGibbsSliceFull returns k slicing every log scale on the whole
// LogPrior rather than on its closed-form full conditional (sliceScale).
func GroupGibbsSliceFull(k GroupGibbs) GroupGibbs {
	k.sliceFull = true
	return k
}

// ScaleSliced reports, for GroupGibbs k started on t at theta0, which
// coordinates its sweep slices on a log scale's closed-form conditional.
func ScaleSliced(k GroupGibbs, t *exactmh.Target, theta0 []float64) ([]int, error) {
	ch, err := k.Start(t, theta0)
	if err != nil {
		return nil, err
	}
	c := ch.(*gibbsChain)
	var out []int
	for q, j := range c.free {
		if c.freeSc != nil && c.freeSc[q] {
			out = append(out, j)
		}
	}
	return out, nil
}

// SmallGibbsKernel is the automatic default's small-N GroupGibbs
// (smallGibbsKernel) about center on a posterior of n data.
func SmallGibbsKernel(center []float64, n int) GroupGibbs { return smallGibbsKernel(center, n) }

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/distinct"
	"github.com/exactmh/exactmh/internal/poisson"
	"github.com/exactmh/exactmh/internal/vec"
)

// GroupGibbs is an exact minibatch Metropolis-within-Gibbs kernel for
// multilevel GLMs (the posteriors of model.NewMultilevel). One transition
// is a fixed sweep of π-invariant updates:
//
//  1. each block of effects (the fixed effects, each group's effects) by
//     an independence proposal from its conditional Gaussian under the
//     control variate at Center, accepted on its own data's remainders,
//     read exactly or by Poisson thinning with a bound pair by pair;
//  2. data-invariant location moves (a fixed effect against the mean of a
//     term's effects);
//  3. each log scale by slice sampling of its full conditional;
//  4. data-free shifts along the directions the rows leave every linear
//     predictor unchanged on, and the interweaved (non-centred) and nested
//     scale moves.
//
// The derivation of each update, its detailed-balance argument and the
// tests and mutants that check it are in docs/multilevel.md (sections
// "GroupGibbs: the sweep" through "Interweaving and nested scale moves").
//
//  5. With Joint > 0, first in the sweep, joint location moves
//     (groupgibbs_joint.go): every fixed and group effect at once given
//     the scales, by Crank–Nicolson through the sparse Cholesky factor of
//     the expansion's joint precision (or, JointFixed, on the fixed
//     effects' marginal with the groups sheared along), the data decided
//     as in step 1 with a bound summed over the blocks each row touches.
//  6. With FixedNewton, the fixed blocks by an independence proposal
//     from their conditional's Laplace approximation at the current
//     group effects (groupgibbs_newton.go), in a sweep with probability
//     1/NewtonEvery; FreeRepeats repeats the updates that read no datum.
//     The automatic default uses them where its pilot finds the fixed
//     block stuck.
//  7. With Shear, after the blocks, shear moves (groupgibbs_shear.go):
//     a fixed effect whose covariate varies within a factor's levels
//     against that factor's intercepts, β_k + t and u_j − t·x̄_jk, which
//     moves only the within-level part of each linear predictor; a Newton
//     step along the line, read exactly on the data whose covariate
//     differs from its level's mean.
//  8. With FixedRho, the fixed blocks' updates of step 1 by
//     Crank–Nicolson about the same conditional Gaussian, FixedRepeats of
//     them a sweep (docs/multilevel.md, "Fixed blocks by Crank–Nicolson").
//     The automatic default uses them where the fixed block is stuck and
//     the Newton proposal would read every datum uncached.
//
// On a Gaussian multilevel model with σ estimated — a GaussianStatistics
// energy (model.SparseGaussianRegression) under a ScaledPrior over a
// Layout (model.WithScale) — a sweep is instead exact Gibbs from the
// sufficient statistics, reading no datum (gaussgibbs.go, gaussChain):
// the fixed and group effects jointly from their Gaussian conditional by
// the sparse Cholesky factor of βM/σ² + the prior precision, then σ and
// each τ from theirs (TestGaussGibbsMoments, TestGaussGibbsSBC).
//
// With Augment, on a probit multilevel model (IsProbit), a sweep is the
// data-augmentation sweep (gaussaug.go, augChain; docs/multilevel.md,
// "Probit by augmentation"): latent z_i ~ N(η_i, 1) on the side of 0 that
// y_i says, the Gaussian sweep's joint draw of the effects given z, each τ
// centred and interwoven, and scale moves under the probit likelihood
// itself (TestAugmentMoments, TestAugmentSBC). On a logistic multilevel
// model (IsLogit) the latent variables are Pólya–Gamma, ω_i ~ PG(n_i,
// η_i), and the Gaussian model given them has M = XᵀΩX (gaussaug_logit.go;
// docs/multilevel.md, "Logistic by Pólya–Gamma augmentation";
// TestLogitMoments, TestLogitSBC). The automatic default chooses it for
// N < 200,000 (logistic: a counted sweep cost within logitMaxFlops).
//
// It is exact for every centre; the centre sets the cost and the
// acceptance (Center gives one). The bound needs sup|f‴| finite (logistic,
// probit; Gaussian remainders vanish) or an exponentially growing one
// (exactmh.LossGrowther: Poisson; docs/multilevel.md, "Growth bound"); an
// energy with neither is refused at Start with exactmh.ErrNoBound. A sweep
// costs O(nnz(H) + d + pairs) plus the data read; memory is O(N·B²) for
// the pairs' alias tables (B the blocks a row touches) and O(nnz(H)). From
// 2¹⁹ data a group block's group partners are taken by class
// (groupgibbs_cross.go), so the pairs are O(blocks × classes) on crossed
// factors, not one per distinct pair of levels.
// Where the energy's rows are in a file (model.SparseGLM.SetRowReaders
// over a data.SparseStore), each chain reads the rows it draws with
// pread, so sampling adds no page of the file to the resident set. Proven
// by TestGroupGibbsMoments and TestGroupGibbsSBC with their mutants.
type GroupGibbs struct {
	// Center is θ̂, the expansion point (nil: the Laplace-EM centre the
	// automatic default finds, once per run).
	Center []float64
	// ExactBelow, if positive, makes a block with fewer data small: its
	// data are read exactly at each update that moves a block they touch
	// (its own, and the fixed effects'), out of every thinning. A small
	// group's effects move by their prior's scale, far from the centre,
	// where its data's remainders are large and of both signs: thinned one
	// by one, each positive one may reject (the factorised test pays
	// Σ max(0, r_i), the exact one |Σ r_i|). At 0, the default, no block
	// is small, and a block's data are read exactly only where thinning
	// would draw more: on examples/multilevel a positive ExactBelow raised
	// the fixed effects' acceptance but read far more data per sweep, for
	// less ESS per CPU-second (examples/README.md, "multilevel").
	ExactBelow int
	// Joint is the number of joint location moves per sweep
	// (groupgibbs_joint.go; docs/multilevel.md, "Joint location move"):
	// every fixed and group effect moved at once given the scales, by a
	// Crank–Nicolson proposal through the sparse Cholesky factor of the
	// expansion's joint precision, made before the blocks. 0: none.
	Joint int
	// JointRho is the joint move's Crank–Nicolson autocorrelation ρ in
	// [0, 1) (0: an independence proposal from the expansion's Gaussian).
	JointRho float64
	// JointFixed makes the joint move's proposal the marginal one: the
	// fixed effects by Crank–Nicolson on their marginal under the
	// expansion's Gaussian, every group effect shifted by its conditional
	// mean's change (a shear): a move of dimension p, the number of fixed
	// effects, along the directions they are confounded with the groups
	// on, whose acceptance does not fall with the number of groups.
	JointFixed bool
	// FixedNewton updates each block of fixed effects (block 0 and those
	// split off it) by an independence proposal from its conditional's
	// Laplace approximation at the current group effects — one Newton
	// step from the centre, two passes over the block's data
	// (groupgibbs_newton.go) — instead of the expansion's conditional,
	// once a sweep. For a strong covariate on many data, whose conditional
	// moves with the group effects by more than its sd.
	FixedNewton bool
	// FixedRho, in (0, 1), makes the fixed blocks' updates (block 0 and
	// those split off it) Crank–Nicolson moves about their conditional
	// under the expansion, θ′_m = μ + ρ(θ_m − μ) + √(1 − ρ²)·L⁻ᵀz, in
	// place of independence proposals from it (FixedRho 0): the move is
	// reversible for that Gaussian, so the acceptance is the same
	// remainder test (docs/multilevel.md, "Fixed blocks by
	// Crank–Nicolson"), and the thinning bound's ‖θ′_m − θ_m‖ falls with
	// √(1 − ρ). For a fixed block of many data whose remainders, summed
	// over the data one by one, reject almost every independence
	// proposal (crossed factors, figures/bench/multilevel_crossed.txt
	// §11): smaller steps accepted often, at O(data drawn) each, where the
	// Newton proposal reads every datum.
	FixedRho float64
	// FixedRepeats is the number of updates a sweep of each fixed block
	// (0: fixedRepeats, 3).
	FixedRepeats int
	// NewtonEvery, above 1, makes the Newton proposal the fixed blocks'
	// update in a sweep with probability 1/NewtonEvery, drawn each sweep
	// independently of the state, and the block update otherwise: its two
	// passes over the data then cost 2N/NewtonEvery a sweep on average.
	NewtonEvery int
	// ShapeEvery, on a negative binomial multilevel model, makes the
	// shape's update every ShapeEvery-th sweep, the sweeps between them
	// updating the effects alone (a deterministic scan of kernels each
	// invariant for the posterior; docs/multilevel.md, "Negative binomial
	// sweep"). 0: DefaultShapeEvery (every sweep); 1: every sweep.
	ShapeEvery int
	// FreeRepeats, above 1, repeats the updates that read no datum — the
	// location moves, the log scales' slice updates, the data-free
	// shifts and nested scale moves — FreeRepeats times a sweep: a scale
	// near zero and its effects move along the directions that keep every
	// linear predictor, at O(d) a repeat.
	FreeRepeats int
	// TailMix is the weight ε of a Student-t component (4 degrees of
	// freedom, the Gaussian's centre and scale) in each group block's
	// independence proposal (groupgibbs_tail.go): a group whose
	// conditional has a longer tail than the expansion's Gaussian (a
	// person who answered every item alike) is then still proposed from
	// its tail. 0: the Gaussian alone. Must be in [0, 1).
	TailMix float64
	// Shear is the number of rounds of shear moves per sweep, made after
	// the blocks (0: none); a round makes a shear move for each
	// fixed effect whose covariate varies within the levels of a factor
	// with random intercepts and whose level means x̄ are not all 0
	// (groupgibbs_shear.go; docs/multilevel.md, "Shear moves"): β_k + t
	// and u_j − t·x̄_j, which keeps each linear predictor's between-level
	// part and moves its within-level part, by a Newton step along the
	// line, read exactly in two passes over the data whose covariate
	// differs from its level's mean.
	Shear int
	// ShearEvery, above 1, makes the shear moves in a sweep with
	// probability 1/ShearEvery, drawn each sweep independently of the
	// state.
	ShearEvery int
	// ShearMaxRatio, if positive, keeps only the shears along which the
	// posterior's precision at the centre is below ShearMaxRatio times
	// the fixed effect's own (groupgibbs_shear.go): where a shear moves
	// it at least 1/√ShearMaxRatio times as far as its block update.
	ShearMaxRatio float64
	// CondScale adds, after each scale move of a random term, a
	// conditional scale move (groupgibbs_condscale.go; docs/multilevel.md,
	// "Conditional scale moves"): τ moved with every effect kept at its
	// standardised place in its conditional under the expansion, for a
	// factor whose levels each hold enough data to pin their effects,
	// where neither the centred nor the non-centred update of τ is wide.
	CondScale bool
	// JointScale is the number of joint rescaling moves per sweep
	// (groupgibbs_jointscale.go; docs/multilevel.md, "Joint rescaling
	// move"), made first: every fixed and group effect scaled by one
	// factor c and every random term's τ with them, decided exactly on
	// every datum (one pass a move). For a binary model whose fixed
	// effects scale with the latent sd √(1 + Σ τ²). 0: none. The
	// Gaussian and negative binomial sweeps do not make it.
	JointScale int
	// JointScalePow, in (0, 1], makes the joint rescaling move scale the
	// fixed effects by c^JointScalePow while the group effects and the
	// scales go by c: along the attenuation β ∝ √(1 + Σ τ²), whose
	// slope d log β/d log τ is Σ τ²/(1 + Σ τ²). 0: 1.
	JointScalePow float64
	// Augment samples a probit multilevel model (IsProbit) by its
	// data-augmentation sweep instead (gaussaug.go; docs/multilevel.md,
	// "Probit by augmentation"): latent z_i ~ N(η_i, 1) truncated to the
	// side of 0 y_i says, then every fixed and group effect drawn jointly
	// from the Gaussian model's conditional given z (the sparse Cholesky
	// factor), each τ centred and then interwoven with the non-centred
	// form. Every datum is read once a sweep. Center only sets where the
	// fixed effects' prior is expanded (exact at any centre: the
	// model.NewMultilevel priors are Gaussian or flat); the other fields
	// are unused. On a logistic multilevel model (IsLogit) the latent
	// variables are Pólya–Gamma, ω_i ~ PG(n_i, η_i), and the effects are
	// drawn given them ("Logistic by Pólya–Gamma augmentation"). A
	// posterior that is neither a probit nor a logistic multilevel one is
	// an error.
	Augment bool
	// IntegratedScale sets the augmentation sweep's integrated scale moves
	// (docs/multilevel.md, "Integrated scale moves"): rounds a sweep in
	// which each independent term's log τ moves jointly with every fixed
	// and group effect, given the latent variables. 0: on a logistic model
	// the counted rule of integrateDefault — as many rounds for every term
	// (at most 3) as cost an eighth of the Pólya–Gamma draws' counted
	// cost, and at least one for each term another term is nested in (an
	// LEA term over its schools) where those fit in half of it — and none
	// on a probit model; n > 0: n rounds for every independent term (at
	// most 100); < 0: none.
	IntegratedScale int
	// Independence sets the augmentation sweep's Laplace independence
	// moves on a logistic model (docs/multilevel.md, "The Laplace
	// independence move"): n > 0 moves of the whole state after each
	// Pólya–Gamma sweep; n < 0 |n| moves a transition and no sweep; 0
	// none.
	Independence int
	// SettleWarmup makes the sweep's chains exactmh.WarmupSettler chains
	// (settleChain): the sweep adapts nothing in warmup — its proposals,
	// thinning bounds, slice widths and scale moves' steps are all fixed
	// by Start from the centre and the data — so its warmup is burn-in
	// alone, and the runner ends it after exactmh.MinBurnIn sweeps,
	// Settings.Draws made all the same. The automatic default sets it on
	// its small-N sweep (smallGibbsKernel) and on the large-N sweep with
	// the expansion's or Crank–Nicolson's fixed blocks (multilevelChoice;
	// TestChooseMultilevelFixedStuck); without it the chain is not told
	// about warmup and runs all of Settings.Warmup (TestGroupGibbsSettles).
	// It has no effect on the Gaussian, augmented and negative binomial
	// sweeps, which say their own warmup's end.
	SettleWarmup bool

	// Test hooks (export_test.go), nil in every real kernel: the centre of
	// the control-variate sums g and H (nil: Center); a mask of the blocks
	// whose moves the thinning bound counts (nil: all; set, it also clips
	// the thinning probability to 1 and skips the check of |r_i| ≤ φ_i);
	// and an offset added to the fixed effect each location move pairs
	// with (a move that changes the linear predictors).
	sumCenter func(center []float64) []float64
	blockMask func(b int32) bool
	locOffset int
	// Test hooks: splitFixedOff leaves block 0 whole; maskSplit makes the
	// thinning bound ignore the blocks splitFixed added (as blockMask).
	splitFixedOff, maskSplit bool
	// Test hook: if nonzero, the location moves' prior ratio takes the
	// fixed-scale effects' prior at locSDMul times their sd (+Inf: drops
	// it), a ratio that is not the posterior's.
	locSDMul float64
	// Test hook: sliceFull slices every log scale on the whole LogPrior,
	// not on its closed-form full conditional (sliceScale).
	sliceFull bool
	// Test hooks of the cross-cubic control variate (groupgibbs_cubic.go):
	// cubicOff builds none; cubicAll includes every eligible group at any
	// distance; cubicLoose drops the bound's terms in the groups'
	// deviations W (and, as blockMask, the check of |r_i| ≤ φ_i);
	// cubicNoShift leaves it out of the proposal's mean but not out of the
	// remainders.
	cubicOff, cubicAll, cubicLoose, cubicNoShift bool
	// Test hook of the pair-wise bound (a family whose f‴ grows
	// exponentially): growthLoose drops its exponential factors (and, as
	// blockMask, the check of |r_i| ≤ φ_i).
	growthLoose bool
	// Test hooks of the shifts and scale moves (groupgibbs_moves.go).
	moveHooks moveHooks
	// Test hook (groupgibbs_corr.go): corrDiag replaces a correlated
	// factor's Σ⁻¹ in its blocks' proposals by diag(τ⁻²).
	corrDiag bool
	// Test hooks of the Gaussian sweep (gaussgibbs.go).
	gauss gaussHooks
	// Test hooks of the negative binomial sweep (groupgibbs_negbin.go).
	negBin negBinHooks
	// Test hooks of the augmentation sweep (gaussaug.go).
	augment augHooks
	// Test hooks of the joint move: jointNoQ drops its log q ratio;
	// jointIgnore, if positive, makes its thinning bound ignore the move
	// of block jointIgnore − 1, if −1 the moves of every block but the
	// fixed effects' (and skips the check of |r_i| ≤ φ_i).
	jointNoQ    bool
	jointIgnore int
	// Test hook: jointThinAll thins the joint move's data wherever the
	// expected batch is below N (not only below jointThinMax).
	jointThinAll bool
	// Test hooks of the Newton proposal: newtonNoQ drops its log q ratio;
	// newtonFromState starts the Newton step at the current β_m, so the
	// proposal depends on it while the ratio treats it as independent.
	newtonNoQ, newtonFromState bool
	// Test hooks of the Newton proposal's thinned test (newtonThin):
	// newtonThinOff reads every datum of the block instead; newtonNoRem
	// thins nothing (the Newton quadratic's ratio alone decides: the
	// remainders ignored); newtonThinAll thins wherever the expected batch
	// is finite, not only below the block's data count.
	newtonThinOff, newtonNoRem, newtonThinAll bool
	// Test hook: tailNoQ drops the tail mixture's log q ratio.
	tailNoQ bool
	// Test hook: fixedRhoBad leaves the Crank–Nicolson move's innovation
	// unshrunk (√(1 − ρ²) taken as 1), a move not reversible for the
	// block's Gaussian while the ratio treats it as one.
	fixedRhoBad bool
	// Test hooks of the class partners (groupgibbs_cross.go): crossAgg
	// takes them by class at any N; crossNoCorr tests a datum drawn at
	// the class's factor against its own partner's (the thinning
	// correction left out); crossInflate, if above 1, multiplies every
	// class's factor (a looser bound, still exact: the mutant's error
	// grows with it).
	crossAgg, crossNoCorr bool
	crossInflate          float64
	// crossOff keeps a pair per partner at any N (the negative binomial
	// sweep's inner kernel, whose bound scales the pairs' weights).
	crossOff bool
	// Test hooks of the shear moves (groupgibbs_shear.go).
	shearHooks shearHooks
	// Test hooks of the joint rescaling move (groupgibbs_jointscale.go).
	jointScaleHooks jointScaleHooks
	// Test hooks of the per-datum memo (groupgibbs_memo.go): memoOff
	// keeps none; memoStale returns a datum's first kept loss whatever
	// its linear predictor (a memo that is not keyed on it).
	memoOff, memoStale bool
}

// Name returns "GroupGibbs".
func (GroupGibbs) Name() string { return "GroupGibbs" }

// Exact returns true.
func (GroupGibbs) Exact() bool { return true }

// gibbsLoc is a location move: θ[fixed] + c, θ[start + g·stride] − c,
// c ~ N(0, τ²/levels) with τ = e^{θ[logTau]}, or sd for a term of fixed
// scale (logTau < 0).
type gibbsLoc struct {
	fixed, start, stride, levels, logTau int
	sd                                   float64
	// dup: a data-free shift moves along the same direction (shiftDup),
	// drawing δ from the line's Gaussian rather than by a random walk, so
	// locationMoves skips this one.
	dup bool
}

// gibbsTerms is what GroupGibbs precomputes at the centre, shared by the
// run's chains.
type gibbsTerms struct {
	e       SparseRowGLM
	center  []float64
	gradSum []float64 // Σ∇U_i at the (sum) centre
	// H = Σ∇²U_i, both triangles, by rows.
	hPtr []int
	hCol []int32
	// hSorted: every row's columns ascend (a move reads a column range of
	// a row by binary search).
	hSorted bool
	hVal    []float64
	// Blocks: coordinates bc[bcPtr[b]:bcPtr[b+1]], each coordinate's block
	// and position in it; the prior kind of the block (explicit: the prior
	// ratio is evaluated, with its expansion pGrad, pPrec at the centre);
	// for an effect coordinate the index of its log scale.
	nb     int
	bcPtr  []int
	bc     []int32
	blocks []int32
	local  []int32
	logTau []int32 // −1 for a coordinate that is not a term's effect
	expl   []bool
	pGrad  []float64
	pPrec  []float64
	qMax   int
	// Block m has mPtr[m+1] − mPtr[m] data (blockData): the range
	// mLo[m] … when they are consecutive rows (mLo[m] ≥ 0: block 0's
	// fixed effects, and a factor whose rows are stored level by level
	// — no list), else the list mData[mOff[m]:]. small[m]: fewer than
	// ExactBelow, read exactly at its updates; the data of a larger block
	// that touch a small one, read exactly at its updates too (out of the
	// thinning): eData[ePtr[m]:ePtr[m+1]].
	mPtr  []int
	mLo   []int32
	mOff  []int
	mData []int32
	small []bool
	ePtr  []int
	eData []int32
	// Block m's pairs pPtr[m]:pPtr[m+1]: the other block pBlock, S = Σ_i
	// K_i·a_im·a_ib², and the alias table of its data over
	// rPtr[p]:rPtr[p+1] (column q: keep probability rProb, alias rAlias,
	// both relative to rPtr[p]). The pair's data, ascending, are
	// pList[p][q] — mostly one block's data (blockData of pOff[p]: a
	// group's data are its pairs' with the fixed effects), else their own
	// list: the data themselves in xData, or with pX16 their positions in
	// their block's data as 16 bits in x16 (a class pair of a block of at
	// most 2¹⁶ data: a crossed factor's level and one class of the other
	// factor's) — so a record is 12 bytes, not 16 with its datum.
	pPtr   []int
	pBlock []int32
	pS     []float64
	rPtr   []int
	rProb  []float64
	rAlias []int32
	pSrc   []int32 // the pair's data are block pSrc[p]'s or, pX[p], a part of them listed from pOff[p]
	pOff   []int   // in xData, or in x16 with pX16
	pX     []bool  // the pair's data are listed in xData or x16
	pX16   []bool  // … as positions in their block's data in x16
	xData  []int32
	x16    []uint16
	maxP   int
	// cls[b]: group block b's class, −1 for a fixed block; nil where each
	// partner has its own pair (groupgibbs_cross.go). A pair's partner
	// nb + κ stands for class κ's group blocks. With classes the records
	// are 16-bit codes of the weights rounded up (rCode, no rProb and
	// rAlias), drawn by rBl[p], a two-level sampler over the pair's codes.
	cls   []int32
	rCode []uint16
	rBl   []*alias.Blocked
	// The updates per sweep (fixedRepeats for each explicit block), and
	// the first block splitFixed added (nb if none).
	updates, firstSplit int
	// Block 0's cross-cubic control variate (nil: none), and each
	// coordinate's location move (−1: none) for its frame.
	cub   *gibbsCubic
	locOf []int32
	// growth: the family's f‴ is unbounded but grows at most
	// exponentially (exactmh.LossGrowther), and the thinning bound is pair-wise
	// (groupgibbs_growth.go): K_i holds A_i(ẑ_i) for sup|f‴_i|, and each
	// pair p = (m, b) the largest a_im (pAm) and a_ib (pAb) of its data
	// and the most blocks other than m and b any of them touches (pL).
	growth   bool
	pAm, pAb []float64
	pL       []int32
	// The coordinates no row holds, and their slice widths.
	free  []int
	freeW []float64
	// The prior, where it is the MultilevelPrior, and for each free
	// coordinate whether it is a log scale whose full conditional
	// ScaleTerm gives (sliceScale); nil: every slice reads LogPrior.
	scPrior scaleConditional
	freeSc  []bool
	locs    []gibbsLoc
	// locsAllDup: every location move is a shift's duplicate (skipped).
	locsAllDup bool
	// The shifts and scale moves (groupgibbs_moves.go; nil: none).
	mv *gibbsMoves
	// The joint location move (groupgibbs_joint.go; nil: none).
	jt *gibbsJoint
	// The shear moves (groupgibbs_shear.go; nil: none).
	sh *gibbsShear
	// The correlated factors (groupgibbs_corr.go; nil: none).
	cor *gibbsCorr
}

// onGibbsTerms, a test hook nil in every real run, is called for each set
// of tables newGibbsTerms builds (CountGibbsTables).
var onGibbsTerms func()

// Start checks the configuration and precomputes the terms at the centre
// (one pass over the data, the energy's sparse Hessian there).
func (k GroupGibbs) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	name := k.Name()
	if err := t.CheckStart(name, theta0); err != nil {
		return nil, err
	}
	if lay, gs, ok := gaussianOf(t.Energy(), t.Prior()); ok {
		return startGauss(name, t, lay, gs, theta0, k.Center, k.gauss)
	}
	if k.Augment {
		lay, pe, logit, ok := augmentOf(t.Energy(), t.Prior())
		if !ok {
			return nil, fmt.Errorf("%s: Augment needs a probit or logistic multilevel model (probit regression with unit weights, model.ProbitFamily, or logistic regression on binomial counts, model.LogisticFamily or BinomialFamily with the logit link and whole trials, under model.NewMultilevel's prior); got energy %T, prior %T", name, t.Energy(), t.Prior())
		}
		c, err := startAugment(name, t, lay, pe, logit, theta0, k.Center, k.IntegratedScale, k.augment)
		if err == nil && k.Independence != 0 {
			if err = c.startIndep(max(k.Independence, -k.Independence), k.Independence < 0); err != nil {
				err = fmt.Errorf("%s: Independence: %w", name, err)
			}
		}
		return c, err
	}
	if nb, lay, base, ok := negBinOf(t.Energy(), t.Prior()); ok {
		return startNegBin(name, t, k, nb, lay, base, theta0)
	}
	d := t.Dim()
	if k.Center == nil {
		c, _, err := defaultMultilevelCenter(name, t)
		if err != nil {
			return nil, err
		}
		k.Center = c
	}
	if len(k.Center) != d {
		return nil, fmt.Errorf("%s: len(Center) = %d, want %d", name, len(k.Center), d)
	}
	if err := vec.FiniteVec(name+": Center", k.Center); err != nil {
		return nil, err
	}
	if math.IsInf(t.LogPrior(k.Center), -1) {
		return nil, fmt.Errorf("%s: Center = %v outside the prior's support", name, k.Center)
	}
	if math.IsInf(t.LogPrior(theta0), -1) {
		return nil, fmt.Errorf("%s: θ0 outside the prior's support", name)
	}
	terms, err := shared(t, fmt.Sprintf("groupgibbs/%p/%d/%d/%t/%t/%v/%t/%t", &k.Center[0], k.ExactBelow, k.locOffset, k.splitFixedOff, k.cubicOff, k.moveHooks, k.Joint > 0, k.crossAgg)+fmt.Sprintf("/%t/%v/%v", k.Shear > 0, k.ShearMaxRatio, k.shearHooks), func() (*gibbsTerms, error) {
		return newGibbsTerms(name, t, k)
	})
	if err != nil {
		return nil, err
	}
	q := terms.qMax
	c := &gibbsChain{gibbsTerms: terms, t: t, tpLT: -1, theta: slices.Clone(theta0), next: slices.Clone(theta0),
		mask: k.blockMask, locSDMul: k.locSDMul, seen: distinct.New(),
		dsq: make([]float64, terms.nb), cum: make([]float64, terms.maxP), fac: make([]float64, terms.facLen()),
		hp: make([]float64, q*q), rhs: make([]float64, q), z: make([]float64, q),
		pg: make([]float64, q), growthLoose: k.growthLoose}
	if k.maskSplit {
		c.mask = func(b int32) bool { return int(b) < terms.firstSplit }
	}
	if terms.cub != nil {
		c.cvec, c.cubIncl = make([]float64, terms.cub.p0), make([]bool, terms.nb)
		c.omg, c.mug, c.mloc = make([]float64, terms.nb), make([]float64, terms.nb), make([]float64, len(terms.locs))
		c.cubicAll, c.cubicLoose, c.cubicNoShift = k.cubicAll, k.cubicLoose, k.cubicNoShift
	}
	if terms.cls != nil {
		c.tree, c.crossNoCorr, c.crossInflate = newClsTree(terms.cls), k.crossNoCorr, max(k.crossInflate, 1)
	}
	c.rb.init(terms.blocks)
	c.freeRepeats = max(k.FreeRepeats, 1)
	c.rbRow = -1
	c.condScale = k.CondScale
	c.initMoves()
	c.corrDiag = k.corrDiag
	if err := c.initCorr(); err != nil {
		return nil, err
	}
	if k.Joint > 0 {
		if !(k.JointRho >= 0 && k.JointRho < 1) {
			return nil, fmt.Errorf("%s: JointRho = %v, want it in [0, 1)", name, k.JointRho)
		}
		c.jt, c.joint, c.jointRho, c.jointNoQ, c.jointIgnore = terms.jt, k.Joint, k.JointRho, k.jointNoQ, int32(k.jointIgnore-1)
		c.jointThinAll, c.jointFixed = k.jointThinAll, k.JointFixed
		if err := c.initJoint(); err != nil {
			return nil, err
		}
	}
	if !(k.FixedRho >= 0 && k.FixedRho < 1) || k.FixedRepeats < 0 {
		return nil, fmt.Errorf("%s: FixedRho = %v, FixedRepeats = %d, want ρ in [0, 1) and repeats ≥ 0", name, k.FixedRho, k.FixedRepeats)
	}
	c.fixedRho, c.fixedReps, c.fixedRhoBad = k.FixedRho, fixedRepeats, k.fixedRhoBad
	if k.FixedRepeats > 0 {
		c.fixedReps = k.FixedRepeats
	}
	c.sweepUpdts = c.updates
	for _, e := range c.expl {
		if e {
			c.sweepUpdts += c.fixedReps - fixedRepeats
		}
	}
	if k.FixedNewton {
		c.fixedNewton, c.newtonNoQ, c.newtonFromState = true, k.newtonNoQ, k.newtonFromState
		c.nw.thinOff, c.nw.noRem, c.nw.thinAll = k.newtonThinOff, k.newtonNoRem, k.newtonThinAll
		c.newtonEvery = max(k.NewtonEvery, 1)
		c.initNewton()
	}
	if k.Shear < 0 {
		return nil, fmt.Errorf("%s: Shear = %d, want it ≥ 0", name, k.Shear)
	}
	if k.Shear > 0 && terms.sh != nil {
		c.sh, c.shears, c.shearEvery = terms.sh, k.Shear, max(k.ShearEvery, 1)
		c.initShear()
	}
	if !(k.TailMix >= 0 && k.TailMix < 1) {
		return nil, fmt.Errorf("%s: TailMix = %v, want it in [0, 1)", name, k.TailMix)
	}
	c.tailMix, c.tailNoQ = k.TailMix, k.tailNoQ
	if c.tailMix > 0 {
		c.tailC = tailConsts(q)
		c.tailE = tailScaled(c.tailC, c.tailMix)
	}
	c.rows = terms.e
	if v, ok := terms.e.(RowViewer); ok {
		if view := v.RowView(); view != nil {
			c.rows = view
			if r, ok := view.(interface{ Err() error }); ok {
				c.rowsErr = r.Err
			}
		}
	}
	if err := c.initJointScale(name, k.JointScale, k.JointScalePow, k.jointScaleHooks); err != nil {
		return nil, err
	}
	c.noMemo, c.memoStale = k.memoOff, k.memoStale
	c.initMemo()
	c.deltas()
	if k.SettleWarmup {
		return settleChain{c}, nil
	}
	return c, nil
}

// settleChain is a GroupGibbs chain whose warmup ends at
// exactmh.MinBurnIn sweeps (GroupGibbs.SettleWarmup). A separate type, so
// that a chain without SettleWarmup stays one the runner does not tell
// about warmup, as its checkpoints record.
type settleChain struct{ *gibbsChain }

// SetWarmup implements exactmh.WarmupAware: the sweep adapts nothing, so
// warmup and sampling make the same sweep.
func (settleChain) SetWarmup(bool) {}

// WarmupSettled implements exactmh.WarmupSettler. The sweep has no
// adaptation to converge: every quantity a sweep uses is a function of the
// centre, the data and θ, fixed by Start, so the kernel of a warmup sweep
// is the kernel of a draw, and warmup is burn-in. The runner asks first
// after exactmh.MinBurnIn sweeps (twice Stan's initial buffer; the
// default's chains start at the Laplace-EM centre), and the answer, a
// constant, ends warmup there: a count, never a clock, so a seed fixes
// the draws, and a checkpoint on either side of the end resumes bit for
// bit (TestGroupGibbsSettles).
func (settleChain) WarmupSettled(int) bool { return true }

// rowErr returns the chain's row view's read error, if any.
func (c *gibbsChain) rowErr() error {
	if c.rowsErr == nil {
		return nil
	}
	if err := c.rowsErr(); err != nil {
		return fmt.Errorf("GroupGibbs: %w", err)
	}
	return nil
}

// newGibbsTerms computes GroupGibbs's terms at the centre.
func newGibbsTerms(name string, t *exactmh.Target, k GroupGibbs) (*gibbsTerms, error) {
	if onGibbsTerms != nil {
		onGibbsTerms()
	}
	e, hs, err := sparseRowParts(name, t)
	if err != nil {
		return nil, err
	}
	lay, ok := t.Prior().(Layout)
	if !ok {
		return nil, fmt.Errorf("%s: prior %T does not describe a multilevel model (Blocks, NumTerms, Term: the MultilevelPrior of model.NewMultilevel)", name, t.Prior())
	}
	d, n := t.Dim(), t.N()
	g := &gibbsTerms{e: e, center: slices.Clone(k.Center), blocks: lay.Blocks(), gradSum: make([]float64, d), growth: gibbsGrowth(e)}
	if len(g.blocks) != d {
		return nil, fmt.Errorf("%s: the prior's Blocks has %d entries, want the dimension %d", name, len(g.blocks), d)
	}
	g.blocks = slices.Clone(g.blocks)
	nb, err := countBlocks(name, g.blocks)
	if err != nil {
		return nil, err
	}
	g.nb = int(nb)
	g.index()
	for j, b := range g.blocks {
		if b < 0 {
			g.free = append(g.free, j)
		}
	}
	// The terms: effects with their log scale, location moves.
	g.logTau = make([]int32, d)
	for j := range g.logTau {
		g.logTau[j] = -1
	}
	type termPos struct {
		start, stride, levels, logTau int
		sd                            float64 // of a fixed-scale term (logTau −1)
	}
	var terms []termPos
	width := make(map[int]float64)
	for tm := range lay.NumTerms() {
		_, _, start, stride, levels, lt := lay.Term(tm)
		if stride < 1 || levels < 0 || start < 0 || start+(levels-1)*stride >= d || lt < 0 || lt >= d || g.blocks[lt] != -1 {
			return nil, fmt.Errorf("%s: the prior's term %d (start %d, stride %d, %d levels, log τ at %d) does not fit θ of dimension %d", name, tm, start, stride, levels, lt, d)
		}
		for l := range levels {
			j := start + l*stride
			if g.blocks[j] <= 0 {
				return nil, fmt.Errorf("%s: the prior's term %d has its effect %d in block %d, want a group block ≥ 1", name, tm, j, g.blocks[j])
			}
			g.logTau[j] = int32(lt)
		}
		terms = append(terms, termPos{start, stride, levels, lt, 0})
		width[lt] = math.Sqrt(2 / float64(max(levels, 1)))
	}
	g.setExpl()
	for _, j := range g.free {
		w, ok := width[j]
		if !ok {
			w = 1
		}
		g.freeW = append(g.freeW, w)
	}
	if g.cor, err = g.buildCorr(name, lay); err != nil {
		return nil, err
	}
	if err := checkEffectPrior(name, t, g); err != nil {
		return nil, err
	}
	if mp, ok := t.Prior().(scaleConditional); ok && !k.sliceFull {
		g.scPrior, g.freeSc = mp, make([]bool, len(g.free))
		for q, j := range g.free {
			g.freeSc[q] = scaleCondAgrees(t, mp, g.center, j)
		}
	}
	if g.cor != nil {
		if err := checkCorrPrior(name, t, g); err != nil {
			return nil, err
		}
	}
	// The prior's expansion at the centre on the explicit blocks' coordinates.
	g.pGrad, g.pPrec = make([]float64, d), make([]float64, d)
	th := slices.Clone(k.Center)
	lp0 := t.LogPrior(th)
	for j, b := range g.blocks {
		if b < 0 || !g.expl[b] {
			continue
		}
		h := 1e-3 * math.Max(1, math.Abs(th[j]))
		th[j] = k.Center[j] + h
		lpp := t.LogPrior(th)
		th[j] = k.Center[j] - h
		lpm := t.LogPrior(th)
		th[j] = k.Center[j]
		if d2 := -(lpp - 2*lp0 + lpm) / (h * h); d2 > 0 && !math.IsInf(d2, 0) {
			g.pPrec[j] = d2
		}
		if d1 := (lpp - lpm) / (2 * h); !math.IsNaN(d1) && !math.IsInf(d1, 0) {
			g.pGrad[j] = d1
		}
	}

	// The control-variate sums and the full symmetric Hessian by rows.
	sc := k.Center
	if k.sumCenter != nil {
		sc = k.sumCenter(k.Center)
	}
	hess, err := hessianOnce(t, name, hs, sc, d)
	if err != nil {
		return nil, err
	}
	g.hPtr = make([]int, d+1)
	for j := range d {
		for q := hess.ColPtr[j]; q < hess.ColPtr[j+1]; q++ {
			r := hess.RowIdx[q]
			g.hPtr[r+1]++
			if r != j {
				g.hPtr[j+1]++
			}
		}
	}
	for j := range d {
		g.hPtr[j+1] += g.hPtr[j]
	}
	g.hCol, g.hVal = make([]int32, g.hPtr[d]), make([]float64, g.hPtr[d])
	fill := slices.Clone(g.hPtr[:d])
	for j := range d {
		for q := hess.ColPtr[j]; q < hess.ColPtr[j+1]; q++ {
			r, v := hess.RowIdx[q], hess.Val[q]
			g.hCol[fill[r]], g.hVal[fill[r]] = int32(j), v
			fill[r]++
			if r != j {
				g.hCol[fill[j]], g.hVal[fill[j]] = int32(r), v
				fill[j]++
			}
		}
	}
	g.hSorted = true
	for j := range d {
		g.hSorted = g.hSorted && slices.IsSorted(g.hCol[g.hPtr[j]:g.hPtr[j+1]])
	}

	// The fixed effects the data determine poorly, each a block of its own.
	fixedAll := slices.Clone(g.bc[g.bcPtr[0]:g.bcPtr[1]])
	if g.splitFixed(e, t.Beta(), k.splitFixedOff) {
		g.index()
		g.setExpl()
	}
	nb = int32(g.nb)
	if !g.growth && !k.crossOff && (k.crossAgg || n >= crossMinN) {
		g.setCross()
	}

	// Three passes over the data, storing nothing per datum but the
	// alias records (a datum's expansion, blocks and norms are recomputed
	// from its row when drawn): the sums and pair counts; each block's
	// data; the records.
	pairID := make(map[uint64]int32)
	var pairKeys []uint64
	var pairCount []int
	mCount := make([]int, nb+1)
	mFirst, mLast := make([]int32, nb), make([]int32, nb)
	for b := range mFirst {
		mFirst[b] = -1
	}
	err = blockRows(name, e, g.blocks, "the prior's Blocks", g.center, sc, nil, g.gradSum, g.growth, func(i int, k3 float64, touched []int32, norms []float64) {
		for _, b := range touched {
			mCount[b+1]++
			if mFirst[b] < 0 {
				mFirst[b] = int32(i)
			}
			mLast[b] = int32(i)
		}
		for _, m := range touched {
			for q, b := range touched {
				b = g.partner(m, b)
				if g.seenPartner(m, b, touched[:q]) {
					continue
				}
				key := uint64(m)<<32 | uint64(b)
				id, ok := pairID[key]
				if !ok {
					id = int32(len(pairKeys))
					pairID[key] = id
					pairKeys = append(pairKeys, key)
					pairCount = append(pairCount, 0)
				}
				pairCount[id]++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if err := vec.FiniteVec(name+": Σ∇U_i at Center", g.gradSum); err != nil {
		return nil, err
	}
	// Each block's data; the small blocks, and the data that touch one.
	g.mPtr = make([]int, nb+1)
	for b := range nb {
		g.mPtr[b+1] = g.mPtr[b] + mCount[b+1]
	}
	exactBelow := k.ExactBelow
	g.small = make([]bool, nb)
	anySmall := false
	for b := range nb {
		g.small[b] = g.mPtr[b+1]-g.mPtr[b] < exactBelow
		anySmall = anySmall || g.small[b]
	}
	var isExact []bool
	if anySmall {
		isExact = make([]bool, n)
	}
	// A block whose data are consecutive rows keeps their range, the
	// others a list.
	g.mLo, g.mOff = make([]int32, nb), make([]int, nb)
	listed := 0
	for b := range nb {
		k := mCount[b+1]
		if k == 0 || int(mLast[b]-mFirst[b])+1 == k {
			g.mLo[b] = max(mFirst[b], 0)
			continue
		}
		g.mLo[b], g.mOff[b] = -1, listed
		listed += k
	}
	g.mData = make([]int32, listed)
	mNext := slices.Clone(g.mOff)
	var rb rowBlocks
	rb.init(g.blocks)
	for i := range n {
		if err := rb.load(name, e, g.blocks, "the prior's Blocks", i); err != nil {
			return nil, err
		}
		for _, b := range rb.touched {
			if g.mLo[b] < 0 {
				g.mData[mNext[b]] = int32(i)
				mNext[b]++
			}
			if g.small[b] {
				isExact[i] = true
			}
		}
		if isExact != nil && isExact[i] {
			for _, m := range rb.touched {
				for q, b := range rb.touched {
					b = g.partner(m, b)
					if !g.seenPartner(m, b, rb.touched[:q]) {
						pairCount[pairID[uint64(m)<<32|uint64(b)]]--
					}
				}
			}
		}
	}
	g.ePtr = make([]int, nb+1)
	for b := range nb {
		g.ePtr[b+1] = g.ePtr[b]
		if g.small[b] || isExact == nil {
			continue
		}
		dl := g.blockData(int32(b))
		for k := range dl.n {
			if i := dl.at(k); isExact[i] {
				g.eData = append(g.eData, int32(i))
				g.ePtr[b+1]++
			}
		}
	}
	// The pairs, sorted by (m, b), and their records (the data read
	// exactly left out).
	order := make([]int32, len(pairKeys))
	for p := range order {
		order[p] = int32(p)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if pairKeys[a] < pairKeys[b] {
			return -1
		}
		if pairKeys[a] > pairKeys[b] {
			return 1
		}
		return 0
	})
	rank := make([]int32, len(order)) // pair id → sorted position
	g.pPtr = make([]int, nb+1)
	g.pBlock = make([]int32, len(order))
	g.pS = make([]float64, len(order))
	g.rPtr = make([]int, len(order)+1)
	for p, id := range order {
		rank[id] = int32(p)
		key := pairKeys[id]
		g.pBlock[p] = int32(key & 0xffffffff)
		g.pPtr[key>>32+1]++
		g.rPtr[p+1] = g.rPtr[p] + pairCount[id]
	}
	for b := range nb {
		g.pPtr[b+1] += g.pPtr[b]
		g.maxP = max(g.maxP, g.pPtr[b+1]-g.pPtr[b])
	}
	// Where each pair's data are listed: the data of (m, b) are those of
	// b (or m) when as many (none read exactly), in the same ascending
	// order; else their positions in m's data in x16 when m has at most
	// 2¹⁶, else the data in xData.
	g.pOff, g.pSrc = make([]int, len(order)), make([]int32, len(order))
	g.pX, g.pX16 = make([]bool, len(order)), make([]bool, len(order))
	var nX, nX16 int
	for p := range order {
		m, b, k := int(g.pBlockOf(p)), int(g.pBlock[p]), g.rPtr[p+1]-g.rPtr[p]
		nm := g.mPtr[m+1] - g.mPtr[m]
		switch {
		case b < g.nb && k == g.mPtr[b+1]-g.mPtr[b]:
			g.pSrc[p] = int32(b)
		case k == nm:
			g.pSrc[p] = int32(m)
		case nm <= 1<<16:
			g.pSrc[p], g.pX[p], g.pX16[p], g.pOff[p] = int32(m), true, true, nX16
			nX16 += k
		default:
			g.pSrc[p], g.pX[p], g.pOff[p] = int32(m), true, nX
			nX += k
		}
	}
	g.xData, g.x16 = make([]int32, nX), make([]uint16, nX16)
	// The records, each weight K_i·a_im·a_ib² held in rProb until its
	// pair's alias table replaces it (with classes: its code in rCode).
	if g.cls != nil {
		g.rCode = make([]uint16, g.rPtr[len(order)])
	} else {
		g.rProb, g.rAlias = make([]float64, g.rPtr[len(order)]), make([]int32, g.rPtr[len(order)])
	}
	if g.growth {
		g.pAm, g.pAb, g.pL = make([]float64, len(order)), make([]float64, len(order)), make([]int32, len(order))
	}
	rNext := slices.Clone(g.rPtr[:len(order)])
	for i := range n {
		if isExact != nil && isExact[i] {
			continue
		}
		if err := rb.load(name, e, g.blocks, "the prior's Blocks", i); err != nil {
			return nil, err
		}
		_, kf, err := datumExpansion(name, e, i, g.center, g.growth)
		if err != nil {
			return nil, err
		}
		nt := len(rb.touched)
		dK := kf * float64(nt) / 2
		for q, m := range rb.touched {
			for r, b := range rb.touched {
				pb := g.partner(m, b)
				if g.seenPartner(m, pb, rb.touched[:r]) {
					continue
				}
				p := rank[pairID[uint64(m)<<32|uint64(pb)]]
				w := g.recordWeight(m, pb, q, r, rb.touched, rb.norms, dK)
				if g.cls != nil {
					code, ok := alias.Up(w)
					if !ok {
						return nil, fmt.Errorf("%s: datum %d: the weight %v of its pair (%d, %d) is beyond the codes' range", name, i, w, m, pb)
					}
					g.rCode[rNext[p]] = code
				} else {
					g.rProb[rNext[p]] = w
				}
				if g.growth {
					g.pAm[p] = max(g.pAm[p], rb.norms[q])
					g.pAb[p] = max(g.pAb[p], rb.norms[r])
					other := int32(nt - 2)
					if m == b {
						other = int32(nt - 1)
					}
					g.pL[p] = max(g.pL[p], other)
				}
				switch k := rNext[p] - g.rPtr[p]; {
				case g.pX16[p]:
					g.x16[g.pOff[p]+k] = uint16(g.dataPos(m, i))
				case g.pX[p]:
					g.xData[g.pOff[p]+k] = int32(i)
				case g.datum(g.pSrc[p], k) != i:
					return nil, fmt.Errorf("%s: internal error: pair (%d, %d)'s datum %d is not its block's", name, m, b, i)
				}
				rNext[p]++
			}
		}
	}
	// Each pair's alias table in place of its weights (alias.Build: no
	// copy of the largest pair's N weights).
	if g.cls != nil {
		g.rBl = make([]*alias.Blocked, len(order))
	}
	for p := range order {
		lo, hi := g.rPtr[p], g.rPtr[p+1]
		if g.cls != nil {
			var s float64
			for _, q := range g.rCode[lo:hi] {
				s += alias.Value(q)
			}
			if !(s > 0) {
				continue
			}
			bl, err := alias.NewBlocked(g.rCode[lo:hi], nil)
			if err != nil {
				return nil, fmt.Errorf("%s: pair %d: %w", name, p, err)
			}
			g.rBl[p], g.pS[p] = bl, bl.Total()
			continue
		}
		var s float64
		for _, w := range g.rProb[lo:hi] {
			s += w
		}
		if !(s > 0) {
			continue // no remainder (a Gaussian family): never drawn
		}
		total, err := alias.Build(g.rProb[lo:hi], g.rAlias[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("%s: pair %d: %w", name, p, err)
		}
		g.pS[p] = total
	}
	if !k.cubicOff {
		if g.cub, err = g.buildCubic(name, e, sc, isExact, t.Beta()); err != nil {
			return nil, err
		}
	}
	// Location moves: a term whose effect column equals a fixed effect's
	// column on every row — a random term, or one of fixed scale, whose
	// location the prior alone identifies against the fixed effect's.
	locTerms := terms
	if fs, ok := lay.(FixedScaleLayout); ok {
		locTerms = slices.Clone(terms)
		for t := range fs.NumFixedScale() {
			start, stride, levels, sd := fs.FixedScale(t)
			if stride < 1 || levels < 0 || start < 0 || start+(levels-1)*stride >= d || !(sd > 0) {
				return nil, fmt.Errorf("%s: the prior's fixed-scale term %d (start %d, stride %d, %d levels, sd %v) does not fit θ of dimension %d", name, t, start, stride, levels, sd, d)
			}
			locTerms = append(locTerms, termPos{start, stride, levels, -1, sd})
		}
	}
	var cols []int32
	var vals []float64
	for _, tp := range locTerms {
		fixed := fixedAll
		if !g.expl[0] || len(fixed) == 0 {
			break
		}
		match := make([]bool, len(fixed))
		for q := range match {
			match[q] = true
		}
		left := len(fixed)
		for i := 0; i < n && left > 0; i++ {
			cols, vals = e.SparseRow(i, cols[:0], vals[:0])
			var uv float64
			for q, c := range cols {
				if o := int(c) - tp.start; o >= 0 && o%tp.stride == 0 && o/tp.stride < tp.levels {
					uv = vals[q]
				}
			}
			for f, j := range fixed {
				if !match[f] {
					continue
				}
				var xv float64
				for q, c := range cols {
					if c == j {
						xv = vals[q]
					}
				}
				if xv != uv {
					match[f] = false
					left--
				}
			}
		}
		for f, j := range fixed {
			if match[f] {
				fj := (f + k.locOffset) % len(fixed)
				if k.locOffset != 0 {
					j = fixed[fj]
				}
				g.locs = append(g.locs, gibbsLoc{fixed: int(j), start: tp.start, stride: tp.stride, levels: tp.levels, logTau: tp.logTau, sd: tp.sd})
				break
			}
		}
	}
	g.locOf = make([]int32, d)
	for j := range g.locOf {
		g.locOf[j] = -1
	}
	for l, lc := range g.locs {
		for lv := range lc.levels {
			g.locOf[lc.start+lv*lc.stride] = int32(l)
		}
	}
	g.mv = g.buildMoves(e, lay, fixedAll, k.moveHooks)
	g.locsAllDup = len(g.locs) > 0
	for l := range g.locs {
		g.locs[l].dup = g.mv.shiftDup(g.locs[l])
		g.locsAllDup = g.locsAllDup && g.locs[l].dup
	}
	if k.Shear > 0 {
		g.sh = g.buildShears(e, lay, fixedAll, t.Beta(), k.ShearMaxRatio, k.shearHooks)
	}
	if k.Joint > 0 {
		if g.jt, err = newGibbsJoint(name, g, isExact != nil); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// pBlockOf returns the block m of pair p (the pairs are sorted by m).
func (g *gibbsTerms) pBlockOf(p int) int32 {
	m, _ := slices.BinarySearch(g.pPtr, p+1)
	return int32(m - 1)
}

// index sets the blocks' coordinates (bcPtr, bc), each coordinate's
// position in its block (local) and the largest block (qMax) from blocks
// and nb.
func (g *gibbsTerms) index() {
	nb := g.nb
	g.bcPtr = make([]int, nb+1)
	for _, b := range g.blocks {
		if b >= 0 {
			g.bcPtr[b+1]++
		}
	}
	g.qMax = 0
	for b := range nb {
		g.bcPtr[b+1] += g.bcPtr[b]
		g.qMax = max(g.qMax, g.bcPtr[b+1]-g.bcPtr[b])
	}
	g.bc = make([]int32, g.bcPtr[nb])
	g.local = make([]int32, len(g.blocks))
	next := slices.Clone(g.bcPtr[:nb])
	for j, b := range g.blocks {
		if b >= 0 {
			g.local[j] = int32(next[b] - g.bcPtr[b])
			g.bc[next[b]] = int32(j)
			next[b]++
		}
	}
}

// setExpl marks the blocks whose prior is evaluated (expl): those with a
// coordinate that is not a term's effect.
func (g *gibbsTerms) setExpl() {
	g.expl = make([]bool, g.nb)
	g.updates = g.nb
	for j, b := range g.blocks {
		if b >= 0 && g.logTau[j] < 0 && !g.expl[b] {
			g.expl[b] = true
			g.updates += fixedRepeats - 1
		}
	}
}

// splitVariance is how many times the median conditional variance of the
// fixed effects one must exceed to be split off (an sd 4 times the
// median's).
const splitVariance = 16

// splitFixed moves each fixed effect that the data determine poorly —
// its conditional variance 1/(βH_jj + prior precision) at the centre above
// splitVariance times the fixed effects' median — and that at most half
// the data hold (a rare level of a categorical covariate) out of block 0
// into a block of its own, appended after the prior's blocks (firstSplit
// is the first), and reports whether it moved one. Left in block 0, such
// a coordinate's large moves would enter every datum's thinning bound
// through ‖Δβ‖ (the bound is by blocks, Cauchy–Schwarz within a block):
// the fixed effects' updates would read the data exactly, several passes
// per sweep. On its own block it enters the bounds of its own data alone.
// Any partition leaves each update π-invariant, so this changes the cost,
// not the target. off (a test hook) disables it.
func (g *gibbsTerms) splitFixed(e SparseRowGLM, beta float64, off bool) bool {
	g.firstSplit = g.nb
	fixed := g.bc[g.bcPtr[0]:g.bcPtr[1]]
	if off || !g.expl[0] || len(fixed) < 2 {
		return false
	}
	v := make([]float64, len(fixed))
	for a, j := range fixed {
		var hjj float64
		for p := g.hPtr[j]; p < g.hPtr[j+1]; p++ {
			if g.hCol[p] == j {
				hjj = g.hVal[p]
			}
		}
		v[a] = math.Inf(1)
		if prec := beta*hjj + g.pPrec[j]; prec > 0 {
			v[a] = 1 / prec
		}
	}
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	med := sorted[(len(sorted)-1)/2]
	count := make(map[int32]int)
	for a, j := range fixed {
		if v[a] > splitVariance*med {
			count[j] = 0
		}
	}
	if len(count) == 0 {
		return false
	}
	n := e.Len()
	var cols []int32
	var vals []float64
	for i := range n {
		cols, vals = e.SparseRow(i, cols[:0], vals[:0])
		for q, c := range cols {
			if _, ok := count[c]; ok && vals[q] != 0 {
				count[c]++
			}
		}
	}
	split := false
	for _, j := range fixed {
		if c, ok := count[j]; ok && 2*c <= n {
			g.blocks[j] = int32(g.nb)
			g.nb++
			split = true
		}
	}
	return split
}

// checkEffectPrior checks on the centre that the prior makes each
// effect N(0, e^{2θ[logTau]}) — the form the group blocks' proposals
// cancel — at the first two levels of every term.
func checkEffectPrior(name string, t *exactmh.Target, g *gibbsTerms) error {
	th := slices.Clone(g.center)
	lp0 := t.LogPrior(th)
	checked := map[int32]int{}
	for j, lt := range g.logTau {
		if lt < 0 || checked[lt] >= 2 || g.cor != nil && g.cor.coord[j] {
			continue // (a correlated effect: checkCorrPrior)
		}
		checked[lt]++
		tau := math.Exp(th[lt])
		u := th[j]
		un := u + tau
		th[j] = un
		got := t.LogPrior(th) - lp0
		th[j] = u
		want := -(un*un - u*u) / (2 * tau * tau)
		if !(math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))) {
			return fmt.Errorf("%s: the prior is not N(0, τ²) on effect %d given its log scale θ[%d] = %v: log prior ratio %v, want %v", name, j, lt, th[lt], got, want)
		}
	}
	return nil
}

// fixedRepeats is the number of updates per sweep of a block whose prior
// is evaluated (the fixed effects): its independence proposal accepts
// less often than a group's (on examples/multilevel about a quarter of
// the time against 0.97), and one update costs O(nnz(H) of its rows + d),
// a small part of the sweep.
const fixedRepeats = 3

// gibbsChain is one chain of GroupGibbs.
type gibbsChain struct {
	*gibbsTerms
	t          *exactmh.Target
	theta      []float64
	next       []float64 // equal to theta but in the block being updated
	mask       func(b int32) bool
	locSDMul   float64 // GroupGibbs.locSDMul
	seen       distinct.Set
	seenAll    bool      // this sweep read every datum (newtonBlock): its distinct count is N
	dsq        []float64 // ‖(θ − θ̂)_b‖² per block
	cum        []float64
	hp         []float64 // the block's precision, then its Cholesky factor
	rhs, z, pg []float64
	rb         rowBlocks // the drawn datum's blocks and norms
	rbRow      int       // the datum rb holds (−1: none)
	// The rows the chain reads at its updates: the energy's, or its own
	// view of them (RowViewer) with the view's first read error.
	rows    SparseRowGLM
	rowsErr func() error

	ms gibbsMoveState // the shifts' and scale moves' scratch and counters

	// tpLT, tpTheta, tpPrec: the last effect prior precision tauPrec
	// computed, e^{−2θ[tpLT]} at θ[tpLT] = tpTheta (tpLT −1: none).
	tpLT    int32
	tpTheta float64
	tpPrec  float64

	// The joint location move (nil jt: none): moves per sweep, ρ, the
	// test hooks (jointIgnore −1: none), the chain's scratch.
	jt           *gibbsJoint
	joint        int
	jointRho     float64
	jointNoQ     bool
	jointIgnore  int32
	jointThinAll bool
	jointFixed   bool
	js           jointState

	// The fixed blocks' Newton proposal (GroupGibbs.FixedNewton) and its
	// test hooks.
	fixedNewton, newtonNoQ, newtonFromState bool
	nw                                      newtonState
	// The fixed blocks' Crank–Nicolson autocorrelation (GroupGibbs.FixedRho,
	// 0: independence proposals), their updates a sweep and the block
	// updates a sweep with them (updates with fixedReps for fixedRepeats).
	fixedRho              float64
	fixedReps, sweepUpdts int
	fixedRhoBad           bool
	// The shear moves (nil sh: none), shears rounds of them in a sweep
	// with probability 1/shearEvery.
	sh                 *gibbsShear
	shears, shearEvery int
	sst                shearState
	jsc                jointScaleState // the joint rescaling move (groupgibbs_jointscale.go)
	// The block proposals' Student-t component (groupgibbs_tail.go).
	tailMix float64
	tailNoQ bool
	tailC   []float64 // tailConsts(qMax): the t₄ density's constant by block size
	tailE   []float64 // tailScaled(tailC, tailMix): ε·e^{cq} by block size

	// The cross-cubic control variate at a block-0 update: on, the
	// groups included, the proposal's shift c and each block's factor in
	// the thinning rate; the test hooks.
	cubOn                              bool
	cubIncl                            []bool
	cvec, fac, omg, mug, mloc          []float64
	cubicAll, cubicLoose, cubicNoShift bool
	growthLoose                        bool    // GroupGibbs.growthLoose
	cubW                               float64 // the included groups' largest ā_(0,g)g·P_g (cubicShift)
	// Each correlated factor's Σ⁻¹ at θ, set once per sweep, at
	// corrPrec[corrOff[f]:] (groupgibbs_corr.go); the corrDiag hook.
	corrPrec    []float64
	corrOff     []int
	corrDiag    bool
	newtonEvery int
	freeRepeats int  // GroupGibbs.FreeRepeats, at least 1
	condScale   bool // GroupGibbs.CondScale
	// The classes' largest ‖Δ_b‖² (nil without classes) and the
	// crossNoCorr test hook (groupgibbs_cross.go).
	tree         *clsTree
	crossNoCorr  bool
	crossInflate float64
	// k3Scale, if positive, scales every datum's sup|f‴| the pair weights
	// were built with (the negative binomial sweep's λ·max(1, φ/φ̂)).
	k3Scale float64
	// expand, if set, is the energy whose derivatives at the centre make
	// each datum's expansion — the control variate's sums' own, while
	// the chain's energy (rows) differs from it (the negative binomial
	// sweep keeps the sums at the centre's shape φ̂ as φ moves) — its
	// sup|f‴| scaled by k3Scale; facFloor, added to every pair's factor
	// F_mb, bounds the two energies' mismatch (negBinChain.setShape).
	expand   SparseRowGLM
	facFloor float64
	// The per-datum memo (groupgibbs_memo.go; nil: none) and its test
	// hooks noMemo and memoStale (GroupGibbs.memoOff, memoStale).
	lm                []lossMemo
	xm                []expMemo
	noMemo, memoStale bool
	// checkBound, a test hook, checks every datum of an updated block
	// against its bound (TestNegBinMismatchBound).
	checkBound bool
	// Counts for Params.
	tried, accepted, thinned, exactN, locTried, locAcc, fixedAcc float64
	undo                                                         gibbsUndo
}

// counts returns the counters Params reports, which MarshalState saves.
func (c *gibbsChain) counts() []*float64 {
	ps := append([]*float64{&c.tried, &c.accepted, &c.thinned, &c.exactN, &c.locTried, &c.locAcc, &c.fixedAcc}, c.moveCounts()...)
	if c.jt != nil {
		ps = append(ps, &c.js.tried, &c.js.acc, &c.js.exact)
	}
	if c.fixedNewton {
		ps = append(ps, &c.nw.tried, &c.nw.acc, &c.nw.thinned, &c.nw.reads)
	}
	if c.sh != nil {
		ps = append(ps, &c.sst.tried, &c.sst.acc)
	}
	if c.jsc.moves > 0 {
		ps = append(ps, &c.jsc.tried, &c.jsc.acc)
	}
	return ps
}

// MarshalState saves the counters Params reports (the rest of the
// chain's state is θ, and what Start computes from it).
func (c *gibbsChain) MarshalState() ([]byte, error) {
	var b []byte
	for _, p := range c.counts() {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*p))
	}
	return b, nil
}

// UnmarshalState restores what MarshalState saved.
func (c *gibbsChain) UnmarshalState(b []byte) error {
	ps := c.counts()
	if len(b) != 8*len(ps) {
		return fmt.Errorf("GroupGibbs: checkpoint state of %d bytes, want %d", len(b), 8*len(ps))
	}
	for q, p := range ps {
		*p = math.Float64frombits(binary.LittleEndian.Uint64(b[8*q:]))
	}
	return nil
}

// Position returns θ.
func (c *gibbsChain) Position() []float64 { return c.theta }

// Params reports the acceptance rates of the block and location updates
// (block0_accept: the fixed effects', absent in a model without them) and
// the share of block updates decided by thinning.
func (c *gibbsChain) Params() map[string]float64 {
	ps := map[string]float64{
		"block_accept": c.accepted / max(c.tried, 1), "thinned": c.thinned / max(c.tried, 1),
		"location_accept": c.locAcc / max(c.locTried, 1), "blocks": float64(c.nb),
		"split_fixed": float64(c.nb - c.firstSplit)}
	if c.nb > 0 && c.expl[0] && c.bcPtr[1] > c.bcPtr[0] {
		ps["block0_accept"] = c.fixedAcc / max(c.tried/float64(c.sweepUpdts), 1) / float64(c.fixedReps)
		if c.fixedRho > 0 {
			ps["fixed_rho"] = c.fixedRho
			ps["fixed_repeats"] = float64(c.fixedReps)
		}
	}
	if c.fixedNewton {
		// The fixed blocks' updates are the Newton proposal's.
		ps["block0_accept"] = c.nw.acc / max(c.nw.tried, 1)
		ps["fixed_newton_accept"] = ps["block0_accept"]
		ps["newton_every"] = float64(c.newtonEvery)
		ps["newton_thinned"] = c.nw.thinned / max(c.nw.tried, 1)
		ps["newton_thin_reads"] = c.nw.reads / max(c.nw.thinned, 1)
	}
	c.moveParams(ps)
	if c.sh != nil {
		ps["shears"] = float64(len(c.sh.fix))
		ps["shear_accept"] = c.sst.acc / max(c.sst.tried, 1)
		ps["shear_every"] = float64(c.shearEvery)
		ps["shear_rounds"] = float64(c.shears)
		ps["shear_ratio_min"] = slices.Min(c.sh.ratio)
		ps["shear_data"] = float64(len(c.sh.dat))
	}
	if c.jsc.moves > 0 {
		ps["joint_scale_accept"] = c.jsc.acc / max(c.jsc.tried, 1)
		ps["joint_scale_step"] = c.jsc.step
	}
	if c.jt != nil {
		ps["joint_accept"] = c.js.acc / max(c.js.tried, 1)
		ps["joint_exact"] = c.js.exact / max(c.js.tried, 1)
		ps["joint_per_sweep"] = float64(c.joint)
	}
	return ps
}

// deltas sets dsq from θ.
func (c *gibbsChain) deltas() {
	clear(c.dsq)
	for j, b := range c.blocks {
		if b >= 0 {
			r := c.theta[j] - c.center[j]
			c.dsq[b] += r * r
		}
	}
	c.dsqChanged()
}

// Step makes one sweep.
func (c *gibbsChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	info := exactmh.Info{AcceptProb: math.NaN(), LogDensity: math.NaN()}
	c.seen.Next()
	c.seenAll = false
	c.undo.save(c)
	for range c.jsc.moves {
		acc, nread, err := c.jointScaleMove(rng)
		if err != nil {
			return exactmh.Info{}, err
		}
		info.Batch += nread
		info.Accepted = info.Accepted || acc
	}
	if c.cor != nil {
		if err := c.corrPrecisions(); err != nil {
			return exactmh.Info{}, err
		}
	}
	for range c.joint {
		if c.jt == nil {
			break
		}
		acc, nread, err := c.jointMove(rng)
		if err != nil {
			return exactmh.Info{}, err
		}
		info.Batch += nread
		info.Accepted = info.Accepted || acc
	}
	newton := c.fixedNewton && (c.newtonEvery == 1 || rng.IntN(c.newtonEvery) == 0)
	for m := range c.nb {
		if newton && c.expl[m] {
			acc, nread, err := c.newtonBlock(rng, m)
			if err != nil {
				return exactmh.Info{}, err
			}
			info.Batch += nread
			info.Accepted = info.Accepted || acc
			continue
		}
		reps := 1
		if c.expl[m] {
			reps = c.fixedReps
		}
		for range reps {
			acc, nread, err := c.updateBlock(rng, m)
			c.cubOn = false
			if err != nil {
				return exactmh.Info{}, err
			}
			info.Batch += nread
			info.Accepted = info.Accepted || acc
		}
	}
	if c.sh != nil && (c.shearEvery == 1 || rng.IntN(c.shearEvery) == 0) {
		for range c.shears {
			acc, nread, err := c.shearMoves(rng)
			if err != nil {
				return exactmh.Info{}, err
			}
			info.Batch += nread
			info.Accepted = info.Accepted || acc
		}
	}
	if c.locationMoves(rng) {
		info.Accepted = true
	}
	if (c.mv == nil || !c.mv.hooks.condOnly || !c.condScale) && !c.jsc.hooks.only && c.sliceFree(rng) {
		info.Accepted = true
	}
	acc, nread, err := c.moves(rng)
	if err != nil {
		return exactmh.Info{}, err
	}
	info.Batch += nread
	info.Accepted = info.Accepted || acc
	for range c.freeRepeats - 1 {
		if c.dataFree(rng) {
			info.Accepted = true
		}
	}
	info.Distinct = c.seen.Count
	if c.seenAll {
		info.Distinct = c.t.N()
	}
	return info, nil
}

// updateBlock updates block m and returns whether it moved and the data
// it read.
func (c *gibbsChain) updateBlock(rng *rand.Rand, m int) (bool, int, error) {
	coords := c.bc[c.bcPtr[m]:c.bcPtr[m+1]]
	q := len(coords)
	if q == 0 {
		return false, 0, nil
	}
	beta := c.t.Beta()
	expl := c.expl[m]
	if m == 0 && c.cub != nil {
		c.cubOn = c.cubicShift()
	}
	hp, rhs := c.hp[:q*q], c.rhs[:q]
	clear(hp)
	cp := c.corrBlock(m) // a correlated factor's Σ⁻¹, or nil
	// rhs = βH_mmθ_m − β(g + HΔ)_m (+ the prior expansion's terms).
	for a, j := range coords {
		var hd float64
		lo, hi := c.hPtr[j], c.hPtr[j+1]
		if c.hSorted {
			// H_mm's entries of row j found by binary search: the pass
			// over the row (every level of the other factors it meets)
			// is then a dot product alone.
			for p := lo; p < hi; p++ {
				hd += c.hVal[p] * (c.theta[c.hCol[p]] - c.center[c.hCol[p]])
			}
			for b, jb := range coords {
				if k, ok := slices.BinarySearch(c.hCol[lo:hi], jb); ok {
					hp[a*q+b] += beta * c.hVal[lo+k]
				}
			}
		} else {
			for p := lo; p < hi; p++ {
				col := c.hCol[p]
				v := c.hVal[p]
				hd += v * (c.theta[col] - c.center[col])
				if c.blocks[col] == int32(m) {
					b := c.local[col]
					hp[a*q+int(b)] += beta * v
				}
			}
		}
		rhs[a] = -beta * (c.gradSum[j] + hd)
		if c.cubOn && !c.cubicNoShift {
			rhs[a] -= beta * c.cvec[a]
		}
		switch {
		case expl:
			hp[a*q+a] += c.pPrec[j]
			rhs[a] += c.pGrad[j] + c.pPrec[j]*c.center[j]
		case cp != nil:
			for b := range q {
				hp[a*q+b] += cp[a*q+b]
			}
		default:
			hp[a*q+a] += c.tauPrec(c.logTau[j])
		}
	}
	for a, j := range coords {
		var s float64
		for b, jb := range coords {
			s += hp[a*q+b] * c.theta[jb]
		}
		switch {
		case expl:
			s -= c.pPrec[j] * c.theta[j]
		case cp != nil:
			for b, jb := range coords {
				s -= cp[a*q+b] * c.theta[jb]
			}
		default:
			s -= c.tauPrec(c.logTau[j]) * c.theta[j]
		}
		rhs[a] += s
	}
	// P = LLᵀ in place (lower triangle), μ = P⁻¹rhs, θ′_m = μ + L⁻ᵀz.
	if !cholesky(hp, q) {
		return false, 0, fmt.Errorf("GroupGibbs: the conditional precision of block %d is not positive definite at θ = %v", m, c.theta)
	}
	mu := rhs
	forwardSub(hp, q, mu)
	backSub(hp, q, mu)
	z := c.z[:q]
	var zz float64
	for a := range z {
		z[a] = rng.NormFloat64()
		zz += z[a] * z[a]
	}
	tail := c.tailMix > 0 && !expl && !c.cubOn
	if tail {
		zz *= c.tailDraw(rng, z)
	}
	backSub(hp, q, z)
	// A fixed block's Crank–Nicolson move (FixedRho): reversible for the
	// same Gaussian N(μ, P⁻¹), so the ratio below holds unchanged.
	rho, sr := 0.0, 1.0
	if expl && c.fixedRho > 0 {
		rho, sr = c.fixedRho, math.Sqrt(1-c.fixedRho*c.fixedRho)
		if c.fixedRhoBad {
			sr = 1
		}
	}
	var s2 float64
	for a, j := range coords {
		v := mu[a] + z[a]
		if rho > 0 {
			v = mu[a] + rho*(c.theta[j]-mu[a]) + sr*z[a]
		}
		c.next[j] = v
		d := v - c.theta[j]
		s2 += d * d
	}
	c.tried++
	logExact := 0.0
	if expl {
		lpn := c.t.LogPrior(c.next)
		if math.IsInf(lpn, -1) {
			c.revert(coords)
			return false, 0, nil
		}
		logExact = lpn - c.t.LogPrior(c.theta) - c.priorExpansionDiff(coords)
	}
	if tail && !c.tailNoQ {
		logExact = c.tailLogRatio(hp, q, coords, mu, zz)
	}
	// |Δ′_m|² and the thinning rate.
	var dn float64
	for _, j := range coords {
		r := c.next[j] - c.center[j]
		dn += r * r
	}
	mOld := c.dsq[m]
	mMax := math.Max(mOld, dn)
	s := math.Sqrt(s2)
	var rate float64
	pl, ph := c.pPtr[m], c.pPtr[m+1]
	var em float64
	if c.growth {
		em = c.growthReach(m)
	}
	for p := pl; p < ph; p++ {
		b := c.pBlock[p]
		var mb float64
		switch {
		case int(b) >= c.nb:
			// A class of group partners: its largest ‖Δ‖², m's counted
			// at mMax (the same for the move and its reverse).
			k := b - int32(c.nb)
			mb = c.tree.max(k)
			if c.cls[m] == k {
				mb = max(mb, mMax)
			}
			mb *= c.crossInflate
		case int(b) == m:
			mb = mMax
		default:
			mb = c.dsq[b]
		}
		if c.mask != nil && !c.mask(b) {
			mb = 0
		} else if c.cubOn {
			mb = c.cubicFactor(p, b, mMax, em)
		} else if c.growth {
			mb = c.growthFactor(p, m, mb, mMax, em)
		}
		if c.mask == nil || c.mask(b) {
			mb += c.facFloor
		}
		c.fac[b] = mb
		if c.pS[p] > 0 {
			rate += c.pS[p] * mb
		}
		c.cum[p-pl] = rate
	}
	rate *= beta * s
	if c.k3Scale > 0 {
		rate *= c.k3Scale
	}
	if !(rate >= 0) || (math.IsInf(rate, 1) && !c.growth) {
		return false, 0, fmt.Errorf("GroupGibbs: block %d: expected batch %v at θ = %v", m, rate, c.theta)
	}
	if c.checkBound {
		if err := c.checkBlockBound(m, beta, s); err != nil {
			return false, 0, err
		}
	}
	nm := c.mPtr[m+1] - c.mPtr[m]
	ne := c.ePtr[m+1] - c.ePtr[m]
	if c.small[m] || rate >= float64(nm-ne) {
		// The block's data, exactly.
		sum, err := c.exactSum(c.blockData(int32(m)), beta)
		if err != nil {
			return false, 0, err
		}
		c.exactN++
		if c.decide(rng, logExact-sum) {
			return c.acceptBlock(m, coords, dn), nm, nil
		}
		c.revert(coords)
		return false, nm, nil
	}
	if ne > 0 {
		// The data that touch a small block, exactly, with the prior
		// factor: one factor of the acceptance.
		sum, err := c.exactSum(listOf(c.eData[c.ePtr[m]:c.ePtr[m+1]]), beta)
		if err != nil {
			return false, 0, err
		}
		if !c.decide(rng, logExact-sum) {
			c.revert(coords)
			return false, ne, nil
		}
		logExact = 0
	}
	// The prior factor, then one factor per datum by Poisson thinning.
	c.thinned++
	if logExact < 0 && rng.Float64() >= math.Exp(logExact) {
		c.revert(coords)
		return false, ne, nil
	}
	if err := poisson.Check(rate); err != nil {
		return false, 0, err
	}
	draws := poisson.Draw(rng, rate)
	if draws > 0 && ph == pl {
		return false, 0, fmt.Errorf("GroupGibbs: block %d: %d data to draw from no pair", m, draws)
	}
	total := 0.0
	if ph > pl {
		total = c.cum[ph-pl-1]
	}
	for k := range draws {
		p := pl + sort.SearchFloat64s(c.cum[:ph-pl], (1-rng.Float64())*total)
		i := c.pairDatum(rng, p)
		c.seen.Add(i)
		rd, du, kf, err := c.remainderDiff(i, beta)
		if err != nil {
			return false, 0, err
		}
		ph, err := c.phi(i, m, kf)
		if err != nil {
			return false, 0, err
		}
		bound := beta * s * ph
		if c.mask == nil && !c.cubicLoose && !c.growthLoose && math.Abs(rd) > bound*(1+boundTol)+1e-12*math.Abs(du) {
			return false, 0, fmt.Errorf("GroupGibbs: block %d: Taylor remainder: %w", m, diffViolation(i, rd, bound, c.theta, c.next))
		}
		if rng.Float64()*bound < rd {
			c.revert(coords)
			return false, ne + k + 1, nil
		}
	}
	return c.acceptBlock(m, coords, dn), ne + draws, nil
}

// checkBlockBound checks every datum of block m against its bound
// β·s·phi (the checkBound hook).
func (c *gibbsChain) checkBlockBound(m int, beta, s float64) error {
	dl := c.blockData(int32(m))
	for k := range dl.n {
		i := dl.at(k)
		rd, du, kf, err := c.remainderDiff(i, beta)
		if err != nil {
			return err
		}
		ph, err := c.phi(i, m, kf)
		if err != nil {
			return err
		}
		if bound := beta * s * ph; math.Abs(rd) > bound*(1+boundTol)+1e-12*math.Abs(du) {
			return fmt.Errorf("GroupGibbs: block %d: Taylor remainder: %w", m, diffViolation(i, rd, bound, c.theta, c.next))
		}
	}
	return nil
}

// exactSum returns Σ βR_i(θ′) − βR_i(θ) over the data idx, or
// errInterrupted within a chunk of them once the run is cancelled.
func (c *gibbsChain) exactSum(idx dataList, beta float64) (float64, error) {
	var sum float64
	for lo := 0; lo < idx.n; lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			return 0, err
		}
		for k := lo; k < min(lo+chunk, idx.n); k++ {
			i := idx.at(k)
			c.seen.Add(i)
			r, _, _, err := c.remainderDiff(i, beta)
			if err != nil {
				return 0, err
			}
			sum += r
		}
	}
	if math.IsNaN(sum) {
		return 0, fmt.Errorf("GroupGibbs: remainder difference NaN at θ = %v, θ′ = %v", c.theta, c.next)
	}
	return sum, nil
}

// decide accepts with probability min(1, e^{logR}).
func (c *gibbsChain) decide(rng *rand.Rand, logR float64) bool {
	return logR >= 0 || rng.Float64() < math.Exp(logR)
}

// loadRow loads datum i's row into rb unless rb holds it already (a
// block-0 update reads a drawn datum's row for its cross-cubic term and
// then for its bound; the chain reads one energy, c.rows, whose rows do
// not change).
func (c *gibbsChain) loadRow(i int) error {
	if i == c.rbRow {
		return nil
	}
	c.rbRow = -1
	if err := c.rb.load("GroupGibbs", c.rows, c.blocks, "the prior's Blocks", i); err != nil {
		return err
	}
	c.rbRow = i
	return nil
}

// phi returns K_i·a_im·Σ_b a_ib²F_mb over datum i's blocks, with K_i =
// kf·B_i/2 (kf = sup|f‴_i|, or A_i(ẑ_i) with growth) and a_ib from the
// row, as the set-up's records weighed it, and F_mb the factor of pair
// (m, b) in the thinning rate (fac, set by updateBlock: M_b², M_m² =
// max(‖Δ_m‖², ‖Δ′_m‖²), or the cross-cubic's or the pair-wise bound's
// factor).
func (c *gibbsChain) phi(i, m int, kf float64) (float64, error) {
	if err := c.loadRow(i); err != nil {
		return 0, err
	}
	if err := c.rowErr(); err != nil {
		return 0, err
	}
	if c.cls != nil && !c.crossNoCorr {
		return c.codedPhi(int32(m), kf, c.fac), nil
	}
	var am, s float64
	for q, b := range c.rb.touched {
		a := c.rb.norms[q]
		if int(b) == m {
			am = a
		}
		if c.cls != nil {
			s += a * a * c.partnerFac(int32(m), b)
		} else {
			s += a * a * c.fac[b]
		}
	}
	return kf * float64(len(c.rb.touched)) / 2 * am * s, nil
}

// priorExpansionDiff returns the prior expansion's log p̃(θ′) − log p̃(θ)
// on the block's coordinates.
func (c *gibbsChain) priorExpansionDiff(coords []int32) float64 {
	var s float64
	for _, j := range coords {
		a, b := c.next[j]-c.center[j], c.theta[j]-c.center[j]
		s += c.pGrad[j]*(a-b) - c.pPrec[j]*(a*a-b*b)/2
	}
	return s
}

func (c *gibbsChain) acceptBlock(m int, coords []int32, dn float64) bool {
	for _, j := range coords {
		c.theta[j] = c.next[j]
	}
	c.setDsq(m, dn)
	c.accepted++
	if m == 0 {
		c.fixedAcc++
	}
	return true
}

func (c *gibbsChain) revert(coords []int32) {
	for _, j := range coords {
		c.next[j] = c.theta[j]
	}
}

// remainderDiff returns βR_i(θ′) − βR_i(θ), β(U_i(θ′) − U_i(θ)) and the
// datum's constant kf of the bound (datumExpansion: sup|f‴_i|, or A_i(ẑ_i)
// with growth).
func (c *gibbsChain) remainderDiff(i int, beta float64) (r, du, kf float64, err error) {
	c.t.Count(1)
	z, zn := c.rows.LinearPredictors(i, c.theta, c.next)
	l, ln := c.loss2(i, z, zn)
	du = beta * (ln - l)
	if err := c.rowErr(); err != nil {
		return 0, 0, 0, err
	}
	if math.IsNaN(du) || math.IsInf(du, 0) {
		return 0, 0, 0, newEnergyError(i, c.theta, c.next, -du)
	}
	ex := c.rows
	if c.expand != nil {
		ex = c.expand
	}
	x, kf, err := c.expansion(ex, i)
	if err != nil {
		return 0, 0, 0, err
	}
	if c.expand != nil && c.k3Scale > 0 {
		kf *= c.k3Scale
	}
	r = du - beta*x.diff(z, zn)
	if c.cubOn {
		v, err := c.cubicTerm(i, beta, x.zHat, z, zn)
		if err != nil {
			return 0, 0, 0, err
		}
		r -= v
	}
	return r, du, kf, nil
}

// locationRepeats is the number of location moves of each pair per sweep:
// each costs two O(d) prior evaluations and reads no datum, and the
// intercept and the slopes paired with random effects are the slowest
// coordinates to mix (examples/multilevel).
const locationRepeats = 5

// locationMoves makes locationRepeats location moves of each pair, on
// the prior ratio alone, and reports whether one was accepted.
func (c *gibbsChain) locationMoves(rng *rand.Rand) (moved bool) {
	if len(c.locs) == 0 || c.locsAllDup {
		return false // (no move to make: no prior to evaluate)
	}
	lp := c.locPrior(c.theta)
	for _, l := range c.locs {
		if l.dup {
			continue
		}
		sd := l.sd
		if l.logTau >= 0 {
			sd = math.Exp(c.theta[l.logTau])
		}
		sd /= math.Sqrt(float64(max(l.levels, 1)))
		for range locationRepeats {
			d := sd * rng.NormFloat64()
			c.next[l.fixed] += d
			for g := range l.levels {
				c.next[l.start+g*l.stride] -= d
			}
			c.locTried++
			lpn := c.locPrior(c.next)
			if r := lpn - lp; r >= 0 || rng.Float64() < math.Exp(r) {
				c.theta[l.fixed] = c.next[l.fixed]
				for g := range l.levels {
					j := l.start + g*l.stride
					c.theta[j] = c.next[j]
				}
				lp = lpn
				moved = true
				c.locAcc++
				continue
			}
			c.next[l.fixed] = c.theta[l.fixed]
			for g := range l.levels {
				j := l.start + g*l.stride
				c.next[j] = c.theta[j]
			}
		}
	}
	if moved {
		c.deltas()
	}
	return moved
}

// tauPrec returns τ⁻² = e^{−2θ[lt]}, the prior precision of the effects
// whose log scale is coordinate lt, at the current θ. It keeps the last
// one: the block updates and shifts of a term's levels, one after another,
// take one exponential between the moves of its scale, not one a level.
// The value is the exponential's, bit for bit, at any θ.
func (c *gibbsChain) tauPrec(lt int32) float64 {
	if lt != c.tpLT || c.theta[lt] != c.tpTheta {
		c.tpLT, c.tpTheta, c.tpPrec = lt, c.theta[lt], math.Exp(-2*c.theta[lt])
	}
	return c.tpPrec
}

// locPrior is the log prior at th that the location moves' ratio reads:
// the posterior's, or with the locSDMul test hook set, one whose
// fixed-scale effects have the wrong scale.
func (c *gibbsChain) locPrior(th []float64) float64 {
	lp := c.t.LogPrior(th)
	if m := c.locSDMul; m != 0 {
		for _, l := range c.locs {
			if l.logTau >= 0 {
				continue
			}
			for g := range l.levels {
				v := th[l.start+g*l.stride] / l.sd
				lp += v*v/2 - v*v/(2*m*m)
			}
		}
	}
	return lp
}

// sliceFree updates each coordinate no row holds by slicePrior. It
// reports whether one moved.
//
// A log scale whose full conditional the MultilevelPrior gives in closed
// form (ScaleTerm: an uncorrelated term's) is sliced on that, O(1) an
// evaluation after one O(G) sum of its effects' squares, where LogPrior
// is O(d): the same slice sampler on the same density up to a constant in
// the coordinate (TestScaleLogConditional), so the same kernel.
func (c *gibbsChain) sliceFree(rng *rand.Rand) (moved bool) {
	if c.scPrior == nil {
		return slicePrior(rng, c.t, c.theta, c.next, c.free, c.freeW)
	}
	for q, j := range c.free {
		var mv bool
		if c.freeSc[q] {
			mv = sliceScale(rng, c.scPrior, c.theta, c.next, j, c.freeW[q])
		} else {
			mv = slicePrior(rng, c.t, c.theta, c.next, c.free[q:q+1], c.freeW[q:q+1])
		}
		moved = moved || mv
	}
	return moved
}

// scaleConditional is the MultilevelPrior's closed-form full conditional
// of a log scale (model.MultilevelPrior.ScaleTerm, ScaleLogConditional).
type scaleConditional interface {
	ScaleTerm(theta []float64, j int) (g int, ss float64, ok bool)
	ScaleLogConditional(j int, l float64, g int, ss float64) float64
}

// scaleCondAgrees reports whether p gives coordinate j's full conditional
// (ScaleTerm ok) and its differences equal the target's log prior's at
// th with θ[j] moved to five points about th[j] (to 1e-9 relative): a
// prior that embeds the MultilevelPrior and adds a term in the log scale
// inherits the methods but not their meaning, and is sliced on LogPrior.
func scaleCondAgrees(t *exactmh.Target, p scaleConditional, th []float64, j int) bool {
	g, ss, ok := p.ScaleTerm(th, j)
	if !ok {
		return false
	}
	x := slices.Clone(th)
	l0 := x[j]
	lp0, c0 := t.LogPrior(x), p.ScaleLogConditional(j, l0, g, ss)
	for _, d := range []float64{-2, -0.5, 0.3, 1, 2.5} {
		x[j] = l0 + d
		got, want := p.ScaleLogConditional(j, x[j], g, ss)-c0, t.LogPrior(x)-lp0
		if !(math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))) {
			return false
		}
	}
	return true
}

// sliceScale is slicePrior's update of the one coordinate j, a log scale
// of p (ScaleTerm), on its full conditional ScaleLogConditional: the same
// stepping out and shrinkage, the same draws of rng.
func sliceScale(rng *rand.Rand, p scaleConditional, theta, next []float64, j int, w float64) (moved bool) {
	g, ss, _ := p.ScaleTerm(theta, j)
	f := func(x float64) float64 { return p.ScaleLogConditional(j, x, g, ss) }
	x0 := theta[j]
	x := sliceStep(rng, f, x0, f(x0), w)
	theta[j], next[j] = x, x
	return x != x0
}

// slicePrior updates each θ[j], j in free, by sliceStep on the target's
// log prior, θ[j]'s full conditional when no row holds it (the log
// scales, the correlation coordinates), and sets next[j] to the same
// value. It reports whether one moved. GroupGibbs's sweep and its
// Gaussian sweep (gaussgibbs_corr.go) share it.
func slicePrior(rng *rand.Rand, t *exactmh.Target, theta, next []float64, free []int, widths []float64) (moved bool) {
	for q, j := range free {
		x0 := theta[j]
		f := func(x float64) float64 { return freeLogPrior(t, theta, j, x0, x) }
		x := sliceStep(rng, f, x0, t.LogPrior(theta), widths[q])
		theta[j], next[j] = x, x
		moved = moved || x != x0
	}
	return moved
}

// sliceStep makes one slice-sampling update of a scalar x0 whose log
// density f has the value fx0 at x0, by stepping out and shrinkage (Neal
// 2003, §4: at most 32 widths of w, split at random), and returns the new
// point. It draws rng in a fixed order (the level, the interval's offset,
// the split, then one draw a shrinkage step) and evaluates f last at the
// point it returns unless that is x0: callers that cache f's work read it
// there (augChain.marginalScale). Every slice move of the package is this
// step.
func sliceStep(rng *rand.Rand, f func(float64) float64, x0, fx0, w float64) float64 {
	const maxWidths = 32
	y := fx0 + math.Log(1-rng.Float64()) // log(u·h(x0)), u ∈ (0, 1]
	lo := x0 - w*rng.Float64()
	hi := lo + w
	jl := int(maxWidths * rng.Float64())
	kr := maxWidths - 1 - jl
	for ; jl > 0 && f(lo) >= y; jl-- {
		lo -= w
	}
	for ; kr > 0 && f(hi) >= y; kr-- {
		hi += w
	}
	// Shrinkage: x0 is in the slice, so the interval closes on it.
	x := lo + (hi-lo)*rng.Float64()
	for x != x0 && f(x) < y {
		if x < x0 {
			lo = x
		} else {
			hi = x
		}
		x = lo + (hi-lo)*rng.Float64()
	}
	return x
}

// freeLogPrior returns log p(θ) with θ[j] = x, θ[j] = x0 on return (NaN:
// −Inf).
func freeLogPrior(t *exactmh.Target, theta []float64, j int, x0, x float64) float64 {
	theta[j] = x
	v := t.LogPrior(theta)
	theta[j] = x0
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	return v
}

// cholesky factorises the q×q symmetric positive definite a (row-major,
// lower triangle read) in place into L, a = LLᵀ, and reports success.
func cholesky(a []float64, q int) bool {
	for j := range q {
		s := a[j*q+j]
		for k := range j {
			s -= a[j*q+k] * a[j*q+k]
		}
		if !(s > 0) {
			return false
		}
		l := math.Sqrt(s)
		a[j*q+j] = l
		for i := j + 1; i < q; i++ {
			t := a[i*q+j]
			for k := range j {
				t -= a[i*q+k] * a[j*q+k]
			}
			a[i*q+j] = t / l
		}
	}
	return true
}

// forwardSub solves Lx = b in place.
func forwardSub(l []float64, q int, b []float64) {
	for i := range q {
		s := b[i]
		for k := range i {
			s -= l[i*q+k] * b[k]
		}
		b[i] = s / l[i*q+i]
	}
}

// backSub solves Lᵀx = b in place.
func backSub(l []float64, q int, b []float64) {
	for i := q - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < q; k++ {
			s -= l[k*q+i] * b[k]
		}
		b[i] = s / l[i*q+i]
	}
}

// gibbsUndo is a sweep's starting point — θ, the blocks' ‖Δ‖² and the
// counters — kept while the run may interrupt a transition
// (Target.interrupt): a sweep is abandoned in a block's exact reads
// (exactSum), after the blocks before it have moved θ, and AbandonStep
// puts it back.
type gibbsUndo struct {
	theta, dsq []float64
	counts     [10]float64
}

// save keeps c's state at the start of a sweep (nothing if the run
// cannot be interrupted).
func (u *gibbsUndo) save(c *gibbsChain) {
	if !c.t.Interruptible() {
		return
	}
	u.theta = append(u.theta[:0], c.theta...)
	u.dsq = append(u.dsq[:0], c.dsq...)
	u.counts = [...]float64{c.tried, c.accepted, c.thinned, c.exactN, c.locTried, c.locAcc, c.fixedAcc, c.js.tried, c.js.acc, c.js.exact}
	c.saveMoves()
	c.nw.saved = [4]float64{c.nw.tried, c.nw.acc, c.nw.thinned, c.nw.reads}
	c.sst.saved = [2]float64{c.sst.tried, c.sst.acc}
	c.jsc.saved = [2]float64{c.jsc.tried, c.jsc.acc}
}

// A GroupGibbs sweep may be abandoned between any two chunks of its exact
// reads; AbandonStep restores the state save kept.
func (c *gibbsChain) AbandonStep() {
	copy(c.theta, c.undo.theta)
	copy(c.next, c.undo.theta)
	copy(c.dsq, c.undo.dsq)
	c.dsqChanged()
	u := &c.undo.counts
	c.tried, c.accepted, c.thinned, c.exactN, c.locTried, c.locAcc, c.fixedAcc = u[0], u[1], u[2], u[3], u[4], u[5], u[6]
	c.js.tried, c.js.acc, c.js.exact = u[7], u[8], u[9]
	c.restoreMoves()
	c.nw.tried, c.nw.acc, c.nw.thinned, c.nw.reads = c.nw.saved[0], c.nw.saved[1], c.nw.saved[2], c.nw.saved[3]
	c.sst.tried, c.sst.acc = c.sst.saved[0], c.sst.saved[1]
	c.jsc.tried, c.jsc.acc = c.jsc.saved[0], c.jsc.saved[1]
}

var _ interface{ AbandonStep() } = (*gibbsChain)(nil)

// pairDatum draws a datum of block pair p from the pair's alias table
// (the second stage of the thinning bound's two-stage draw, docs/multilevel.md
// "Thinning bound"), shared by the block updates and the joint move.
func (c *gibbsChain) pairDatum(rng *rand.Rand, p int) int {
	var r int
	if c.rBl != nil {
		r = c.rBl[p].Draw(rng)
	} else {
		lo, hi := c.rPtr[p], c.rPtr[p+1]
		r = rng.IntN(hi - lo)
		if rng.Float64() >= c.rProb[lo+r] {
			r = int(c.rAlias[lo+r])
		}
	}
	switch {
	case !c.pX[p]:
		return c.datum(c.pSrc[p], r)
	case c.pX16[p]:
		return c.datum(c.pSrc[p], int(c.x16[c.pOff[p]+r]))
	}
	return int(c.xData[c.pOff[p]+r])
}

// dataList is a list of data: idx, or with idx nil the range lo … lo+n−1.
type dataList struct {
	idx   []int32
	lo, n int
}

// listOf returns the dataList of idx.
func listOf(idx []int32) dataList { return dataList{idx: idx, n: len(idx)} }

// at returns the list's k-th datum.
func (d dataList) at(k int) int {
	if d.idx == nil {
		return d.lo + k
	}
	return int(d.idx[k])
}

// blockData returns block b's data, ascending.
func (g *gibbsTerms) blockData(b int32) dataList {
	n := g.mPtr[b+1] - g.mPtr[b]
	if lo := g.mLo[b]; lo >= 0 {
		return dataList{lo: int(lo), n: n}
	}
	return dataList{idx: g.mData[g.mOff[b] : g.mOff[b]+n], n: n}
}

// datum returns block b's k-th datum.
func (g *gibbsTerms) datum(b int32, k int) int {
	if lo := g.mLo[b]; lo >= 0 {
		return int(lo) + k
	}
	return int(g.mData[g.mOff[b]+k])
}

// dataPos returns the position of datum i, which block b has, in b's data.
func (g *gibbsTerms) dataPos(b int32, i int) int {
	if lo := g.mLo[b]; lo >= 0 {
		return i - int(lo)
	}
	dl := g.blockData(b)
	k, _ := slices.BinarySearch(dl.idx, int32(i))
	return k
}

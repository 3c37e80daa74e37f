// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/exactmh/exactmh/internal/poisson"
)

// GroupGibbs's moves along the directions its block updates cannot take.
//
// A block update moves one block given the others, so a direction that
// changes many blocks together — the intercept against the mean of a
// factor's effects, a department's effect against its lecturers', an
// item-level covariate against the items' effects, a scale τ against the
// spread of its effects — relaxes only as fast as the blocks' conditional
// variances let it (Papaspiliopoulos, Roberts & Zanella 2020; Yu & Meng
// 2011). Three kinds of move are added to each sweep:
//
//  1. Shifts (data-free). A direction v with Xv = 0 on every row leaves
//     every linear predictor, hence the likelihood, unchanged, and the
//     posterior along θ + δv is the prior's. Start finds, on the rows
//     (exactly, in one pass, never assumed):
//     (a, c) each fixed effect j and term t (random or of fixed scale)
//     whose columns satisfy x_ij = w_g·z_it on every row i of every level
//     g — a fixed column constant within the levels of the term's factor
//     (the intercept and a random intercept, w_g = 1; a group-level
//     covariate, w_g its value at level g) or a fixed slope and the random
//     slope on the same covariate — giving v = e_j − Σ_g w_g e_{u_tg};
//     (b) each pair of terms of two factors with equal columns on every
//     row whose child factor is nested in the parent factor (every child
//     level's data within one parent level), giving for each parent level
//     k v = e_{u_Pk} − Σ_{j ⊂ k} e_{u_Cj}.
//     Along v the log prior is exactly quadratic in δ on the effects of
//     random terms (N(0, τ²), the form Start checks) and is expanded to
//     second order at the centre on the other coordinates (the fixed
//     effects, the effects of fixed scale: pGrad, pPrec), so δ is drawn
//     from that Gaussian, N(b/a, 1/a), and accepted with probability
//     min(1, p(θ′)p̃(θ)/(p(θ)p̃(θ′))), p̃ the quadratic: a Gibbs draw along
//     the line where the prior is Gaussian there (the effects-only moves
//     of (b) need no evaluation of the prior at all), an independence
//     Metropolis step on the line otherwise. The proposal N(b/a, 1/a) is
//     p̃ restricted to the line, so its ratio is p̃(θ)/p̃(θ′) and the step
//     is exact for any prior. O(entries of v) per move (plus one O(d)
//     prior evaluation where v holds a fixed effect); no datum is read.
//
//  2. Scale moves (interweaving). For each random term t with G levels,
//     the joint move log τ′ = log τ + λ, u′_tg = e^λ·u_tg (every level),
//     λ ~ N(0, σ²): the update of τ in the non-centred parametrisation u =
//     τz with z held, which alternated with the centred slice update of
//     log τ given u (sweep step 3) is Yu & Meng's ancillarity–sufficiency
//     interweaving. Its Jacobian e^{Gλ} cancels the change of the effects'
//     normalising constants τ^{−G}, so the ratio is the scale prior's
//     (with its log-τ Jacobian) times the likelihood ratio times the
//     proposal's: σ = 2.4/√(1 + β·u_tᵀH_tt·u_t) follows the data's
//     information about the effects' common scale (≈ 2.4 in the funnel's
//     neck, where u ≈ 0 and the likelihood is flat in λ), so its ratio
//     N(−λ; 0, σ′²)/N(λ; 0, σ²) enters. The likelihood ratio is decided
//     exactly by GroupGibbs's own machinery: the control-variate
//     expansion's difference −β(Û(θ′) − Û(θ)) in O(nnz(H) of the term's
//     rows), and the remainders by Poisson thinning with the bound of
//     step 1 of the sweep applied to each datum's one moving block m — a
//     datum touches one level of each factor, so |a′ − a| ≤ a_im·s_m with
//     s_m = |u′_tm − u_tm| — summed over the term's blocks' pairs in
//     O(pairs), M_m² taken as max(‖Δ_m‖², ‖Δ′_m‖²) on every moving block.
//     Near τ = 0 the effects are small, so are s_m and the data read; a
//     move whose expected batch exceeds scaleReadCap(N) is rejected
//     unread (a symmetric function of θ, θ′: detailed balance holds).
//     Families whose f‴ is unbounded (Poisson's pair-wise bound) have no
//     such scale moves.
//
//  3. Nested scale moves (data-free). Where a random term P has a nested
//     child term C of equal columns (shifts (b) above), the scale move of
//     P composed with each parent level's shift by (e^λ − 1)·u_Pk leaves
//     every linear predictor unchanged: the parent's effects scale, its
//     children absorb the change, and only the prior decides
//     (nestedScale). A parent factor of few levels whose scale is near
//     zero (the areas over schools) is what this move frees: its effects
//     are pinned by the data only through their children's.
//
// TestGroupGibbsMovesMoments, TestGroupGibbsMovesSBC and their mutants
// prove both (groupgibbs_moves_test.go).
// docs/multilevel.md, section "Data-free shifts" and "Interweaving and nested scale moves", holds the derivation with
// its detailed-balance argument.

// moveHooks are the moves' test hooks (groupgibbs_moves_export_test.go),
// zero in every real kernel: movesOff drops both kinds; shiftBreak leaves
// one level of each shift uncompensated (a shift that changes a linear
// predictor); scaleNoJacobian drops the scale moves' Jacobian e^{Gλ},
// nestedNoJacobian the nested scale moves'.
type moveHooks struct {
	movesOff, shiftsOff, scalesOff, shiftBreak, scaleNoJacobian, nestedNoJacobian bool
	// condNoJacobian drops the conditional scale moves' Jacobian
	// Π_j √(P_j/P′_j); condOwnB takes each effect's own Δ_j into b_j, a map
	// that T_−λ does not invert (groupgibbs_condscale.go);
	// condOnly leaves them the log scales' only update (no slice update,
	// plain or nested scale move), so that the kit sees them alone.
	condNoJacobian, condOwnB, condOnly bool
	// exactSkip makes a scale move that reads its term's data exactly
	// (scaleExact) skip them: the likelihood ratio is the expansion's
	// alone, the remainders of every block the move changes ignored.
	exactSkip bool
}

// scaleStep is the scale move's step, σ = scaleStep/√(1 + β·uᵀHu): the
// random-walk optimum for a Gaussian of that curvature.
const scaleStep = 2.4

// scaleReadCap is the largest expected batch a scale move may read (N/16,
// at least 256): above it the move is rejected unread.
func scaleReadCap(n int) float64 { return math.Max(256, float64(n)/16) }

// gibbsMoves is what Start finds for the moves, shared by the chains.
type gibbsMoves struct {
	// Shift s: coordinates idx[ptr[s]:ptr[s+1]] with coefficients w;
	// expl[s]: it holds a coordinate whose prior is expanded (a fixed
	// effect or an effect of fixed scale).
	ptr  []int
	idx  []int32
	w    []float64
	expl []bool
	// Scale move of random term r: its coordinates sc[scPtr[r]:scPtr[r+1]]
	// (one per level, each in its own block), its log scale scTau[r], the
	// data its blocks hold that are read exactly (small blocks, data that
	// touch one) in exData[exPtr[r]:exPtr[r+1]] and the thinnable data's
	// count nThin[r].
	scPtr    []int
	sc       []int32
	scTau    []int32
	exPtr    []int
	exData   []int32
	nThin    []int
	maxPairs int
	// The nested scale moves.
	nested []nestedScale
	hooks  moveHooks
}

// gibbsMoveState is a chain's scratch and counters for the moves.
type gibbsMoveState struct {
	lp                                                      float64 // log prior at θ, valid if lpOK
	lpOK                                                    bool
	sBlk                                                    []float64 // each moving block's s_m
	dsqNew                                                  []float64 // each moving block's ‖Δ′_m‖²
	cum                                                     []float64
	shiftTried, shiftAcc, scaleTried, scaleAcc, scaleCapped float64
	// The conditional scale moves (groupgibbs_condscale.go): each
	// scale-move coordinate's H_jj, aligned with sc, and the counters.
	condH, condSigma               []float64
	condTried, condAcc, condCapped float64
	saved                          [8]float64
}

// buildMoves finds the shifts and scale moves of the model on the rows
// (one pass) and returns nil if there are none or hooks.movesOff.
func (g *gibbsTerms) buildMoves(e SparseRowGLM, lay Layout, fixed []int32, hooks moveHooks) *gibbsMoves {
	if hooks.movesOff {
		return nil
	}
	terms := layoutTerms(lay)
	d := len(g.blocks)
	mv := &gibbsMoves{hooks: hooks}
	if !hooks.shiftsOff && len(terms) > 0 {
		termOf, levelOf, fixIdx := make([]int32, d), make([]int32, d), make([]int32, d)
		for j := range d {
			termOf[j], fixIdx[j] = -1, -1
		}
		for t, tm := range terms {
			for l := range tm.levels {
				termOf[tm.start+l*tm.stride], levelOf[tm.start+l*tm.stride] = int32(t), int32(l)
			}
		}
		if len(g.expl) > 0 && g.expl[0] {
			for f, j := range fixed {
				fixIdx[j] = int32(f)
			}
		} else {
			fixed = nil
		}
		nt, nf := len(terms), len(fixed)
		// (a, c): w[f][t][g] (NaN unset), failFT[f·nt + t].
		w := make([][]float64, nf*nt)
		failFT := make([]bool, nf*nt)
		for q := range w {
			w[q] = make([]float64, terms[q%nt].levels)
			for l := range w[q] {
				w[q][l] = math.NaN()
			}
		}
		// (b): parentOf[p·nt + c][level of c] (−1 unset), failTT.
		parentOf := make([][]int32, nt*nt)
		failTT := make([]bool, nt*nt)
		for p := range nt {
			for ch := range nt {
				q := p*nt + ch
				same := terms[p].levels == 0 || terms[ch].levels == 0 || g.blocks[terms[p].start] == g.blocks[terms[ch].start]
				if same {
					failTT[q] = true
					continue
				}
				parentOf[q] = make([]int32, terms[ch].levels)
				for l := range parentOf[q] {
					parentOf[q][l] = -1
				}
			}
		}
		lev, val, xv := make([]int32, nt), make([]float64, nt), make([]float64, nf)
		var cols []int32
		var vals []float64
		live := func() bool {
			return slices.Contains(failFT, false) || slices.Contains(failTT, false)
		}
		for i := range e.Len() {
			if i%4096 == 0 && !live() {
				break // every candidate has failed: the rest cannot revive one
			}
			cols, vals = e.SparseRow(i, cols[:0], vals[:0])
			for t := range lev {
				lev[t], val[t] = -1, 0
			}
			clear(xv)
			for q, c := range cols {
				if c < 0 || int(c) >= d {
					continue // Start's passes have refused such a row
				}
				if f := fixIdx[c]; f >= 0 {
					xv[f] = vals[q]
				}
				if t := termOf[c]; t >= 0 && vals[q] != 0 {
					lev[t], val[t] = levelOf[c], vals[q]
				}
			}
			for f := range nf {
				x := xv[f]
				for t := range nt {
					q := f*nt + t
					if failFT[q] {
						continue
					}
					z := val[t]
					if z == 0 {
						failFT[q] = x != 0
						continue
					}
					wg := &w[q][lev[t]]
					if math.IsNaN(*wg) {
						*wg = x / z
					}
					failFT[q] = x != *wg*z
				}
			}
			for p := range nt {
				for ch := range nt {
					q := p*nt + ch
					if failTT[q] {
						continue
					}
					if val[ch] == 0 {
						failTT[q] = val[p] != 0
						continue
					}
					if val[p] != val[ch] {
						failTT[q] = true
						continue
					}
					po := &parentOf[q][lev[ch]]
					if *po < 0 {
						*po = lev[p]
					}
					failTT[q] = *po != lev[p]
				}
			}
		}
		mv.ptr = []int{0}
		add := func(expl bool) {
			if hooks.shiftBreak && mv.ptr[len(mv.ptr)-1]+2 < len(mv.idx) {
				// One level left uncompensated: its data's linear
				// predictors move with δ.
				mv.idx, mv.w = mv.idx[:len(mv.idx)-1], mv.w[:len(mv.w)-1]
			}
			expl = expl || g.cor.holds(mv.idx[mv.ptr[len(mv.ptr)-1]:])
			mv.ptr = append(mv.ptr, len(mv.idx))
			mv.expl = append(mv.expl, expl)
		}
		for t, tm := range terms {
			for f, j := range fixed {
				q := f*nt + t
				if failFT[q] {
					continue
				}
				lo := len(mv.idx)
				mv.idx, mv.w = append(mv.idx, j), append(mv.w, 1)
				for l, wg := range w[q] {
					if wg != 0 && !math.IsNaN(wg) {
						mv.idx, mv.w = append(mv.idx, int32(tm.start+l*tm.stride)), append(mv.w, -wg)
					}
				}
				if len(mv.idx) == lo+1 {
					mv.idx, mv.w = mv.idx[:lo], mv.w[:lo]
					continue
				}
				add(true)
			}
		}
		for p, tp := range terms {
			for ch, tc := range terms {
				q := p*nt + ch
				if failTT[q] {
					continue
				}
				sLo := len(mv.expl)
				for k := range tp.levels {
					lo := len(mv.idx)
					mv.idx, mv.w = append(mv.idx, int32(tp.start+k*tp.stride)), append(mv.w, 1)
					for l, po := range parentOf[q] {
						if int(po) == k {
							mv.idx, mv.w = append(mv.idx, int32(tc.start+l*tc.stride)), append(mv.w, -1)
						}
					}
					if len(mv.idx) == lo+1 {
						mv.idx, mv.w = mv.idx[:lo], mv.w[:lo]
						continue
					}
					add(tp.logTau < 0 || tc.logTau < 0)
				}
				if tp.logTau >= 0 && !hooks.scalesOff && len(mv.expl) > sLo {
					mv.nested = append(mv.nested, nestedScale{tp.start, tp.stride, tp.levels, tp.logTau, sLo, len(mv.expl), tc.logTau, tc.sd})
				}
			}
		}
	}
	// Scale moves: each random term, for a family with a bounded f‴; for
	// one under the growth bound (Poisson), each term whose every block is
	// small (ExactBelow), whose moves then read the term's data exactly.
	if !hooks.scalesOff {
		mv.scPtr, mv.exPtr = []int{0}, []int{0}
		for _, tm := range terms {
			if tm.logTau < 0 || tm.levels == 0 || (g.growth && !g.allSmall(tm.start, tm.stride, tm.levels)) {
				continue
			}
			pairs, thin := 0, 0
			for l := range tm.levels {
				j := tm.start + l*tm.stride
				m := g.blocks[j]
				mv.sc = append(mv.sc, int32(j))
				pairs += g.pPtr[m+1] - g.pPtr[m]
				if g.small[m] {
					dl := g.blockData(m)
					for k := range dl.n {
						mv.exData = append(mv.exData, int32(dl.at(k)))
					}
					continue
				}
				mv.exData = append(mv.exData, g.eData[g.ePtr[m]:g.ePtr[m+1]]...)
				thin += g.mPtr[m+1] - g.mPtr[m] - (g.ePtr[m+1] - g.ePtr[m])
			}
			mv.scPtr = append(mv.scPtr, len(mv.sc))
			mv.exPtr = append(mv.exPtr, len(mv.exData))
			mv.scTau = append(mv.scTau, int32(tm.logTau))
			mv.nThin = append(mv.nThin, thin)
			mv.maxPairs = max(mv.maxPairs, pairs)
		}
	}
	if len(mv.expl) == 0 && len(mv.scTau) == 0 && len(mv.nested) == 0 {
		return nil
	}
	return mv
}

// shiftDup reports whether a shift of mv moves along location move l's
// direction, e_fixed − Σ_g e_{u_g} over every level of a random term (a
// term of estimated scale, whose effects' prior the shift takes exactly):
// the shift draws δ on that line from its Gaussian, a move the location
// move's random walk on the same line adds nothing to. A composition of
// π-invariant moves without it is π-invariant.
func (mv *gibbsMoves) shiftDup(l gibbsLoc) bool {
	if mv == nil || l.logTau < 0 {
		return false
	}
	for s := range len(mv.expl) {
		idx, w := mv.idx[mv.ptr[s]:mv.ptr[s+1]], mv.w[mv.ptr[s]:mv.ptr[s+1]]
		if len(idx) != l.levels+1 || int(idx[0]) != l.fixed || w[0] != 1 {
			continue
		}
		same := true
		for g := range l.levels {
			if int(idx[g+1]) != l.start+g*l.stride || w[g+1] != -1 {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

// initMoves allocates the chain's scratch for the moves.
func (c *gibbsChain) initMoves() {
	if c.mv == nil {
		return
	}
	c.ms.sBlk, c.ms.dsqNew = make([]float64, c.nb), make([]float64, c.nb)
	c.ms.cum = make([]float64, c.mv.maxPairs)
	c.initCondScale()
}

// moves makes the sweep's shifts and scale moves and returns whether one
// moved θ and the data read.
func (c *gibbsChain) moves(rng *rand.Rand) (moved bool, nread int, err error) {
	if c.mv == nil {
		return false, 0, nil
	}
	c.ms.lpOK = false
	if c.jsc.hooks.only {
		// Test hook: the log scales' updates are the joint rescaling
		// moves and each term's scale move, which keeps its effects'
		// standardised values.
		for r := range c.mv.scTau {
			acc, n, err := c.scaleMove(rng, r)
			if err != nil {
				return moved, nread, err
			}
			nread += n
			moved = moved || acc
		}
		return moved, nread, nil
	}
	if c.shiftMoves(rng) {
		moved = true
		c.deltas()
	}
	condOnly := c.mv.hooks.condOnly && c.condScale
	for r := range c.mv.nested {
		if !condOnly && c.nestedScaleMove(rng, &c.mv.nested[r]) {
			moved = true
			c.deltas()
		}
	}
	for r := range c.mv.scTau {
		if !condOnly {
			acc, n, err := c.scaleMove(rng, r)
			if err != nil {
				return moved, nread, err
			}
			nread += n
			moved = moved || acc
		}
		if !c.condScale {
			continue
		}
		acc, n, err := c.condScaleMove(rng, r)
		if err != nil {
			return moved, nread, err
		}
		nread += n
		moved = moved || acc
	}
	return moved, nread, nil
}

// shiftMoves draws each shift once (the doc above, 1) and reports whether
// one moved θ. It leaves dsq stale.
func (c *gibbsChain) shiftMoves(rng *rand.Rand) (moved bool) {
	mv := c.mv
	for s := range len(mv.expl) {
		idx, w := mv.idx[mv.ptr[s]:mv.ptr[s+1]], mv.w[mv.ptr[s]:mv.ptr[s+1]]
		// log p̃(θ + δv) − log p̃(θ) = bδ − aδ²/2 (τ⁻² by tauPrec: one
		// exponential a term, not one an entry; and one call for a run of
		// entries of one term, whose log scale the loop leaves as it is).
		var a, b, p float64
		last := int32(-1)
		for q, j := range idx {
			v := w[q]
			if lt := c.logTau[j]; lt >= 0 {
				if lt != last {
					p, last = c.tauPrec(lt), lt
				}
				a += v * v * p
				b -= v * c.theta[j] * p
			} else {
				a += v * v * c.pPrec[j]
				b += v * (c.pGrad[j] - c.pPrec[j]*(c.theta[j]-c.center[j]))
			}
		}
		if !(a > 0) || math.IsInf(a, 0) || math.IsNaN(b) {
			continue
		}
		delta := b/a + rng.NormFloat64()/math.Sqrt(a)
		c.ms.shiftTried++
		for q, j := range idx {
			c.next[j] = c.theta[j] + delta*w[q]
		}
		if mv.expl[s] {
			if !c.ms.lpOK {
				c.ms.lp, c.ms.lpOK = c.locPrior(c.theta), true
			}
			lpn := c.locPrior(c.next)
			logR := lpn - c.ms.lp - (b*delta - a*delta*delta/2)
			if math.IsNaN(logR) || !c.decide(rng, logR) {
				for _, j := range idx {
					c.next[j] = c.theta[j]
				}
				continue
			}
			c.ms.lp = lpn
		} else {
			c.ms.lpOK = false
		}
		for _, j := range idx {
			c.theta[j] = c.next[j]
		}
		c.ms.shiftAcc++
		moved = true
	}
	return moved
}

// scaleMove makes the scale move of random term r (the doc above, 2) and
// returns whether it moved θ and the data it read.
func (c *gibbsChain) scaleMove(rng *rand.Rand, r int) (bool, int, error) {
	mv := c.mv
	coords := mv.sc[mv.scPtr[r]:mv.scPtr[r+1]]
	lt := int(mv.scTau[r])
	beta := c.t.Beta()
	// B = uᵀH_tt·u over the term's coordinates: in each (ascending) row of
	// H only the columns from the term's first coordinate to its last —
	// the row's one or few entries of the term (one level a datum), where
	// the whole row holds every level of the other factor it meets.
	var bq float64
	lo, hi := coords[0], coords[len(coords)-1]
	for _, j := range coords {
		var s float64
		p := c.hPtr[j]
		if c.hSorted {
			k, _ := slices.BinarySearch(c.hCol[p:c.hPtr[j+1]], lo)
			p += k
		}
		for ; p < c.hPtr[j+1] && (!c.hSorted || c.hCol[p] <= hi); p++ {
			if col := c.hCol[p]; int(c.logTau[col]) == lt {
				s += c.hVal[p] * c.theta[col]
			}
		}
		bq += c.theta[j] * s
	}
	bq = math.Max(bq, 0)
	sigma := scaleStep / math.Sqrt(1+beta*bq)
	lambda := sigma * rng.NormFloat64()
	f := math.Exp(lambda)
	sigmaN := scaleStep / math.Sqrt(1+beta*bq*f*f)
	for _, j := range coords {
		c.next[j] = f * c.theta[j]
	}
	c.next[lt] = c.theta[lt] + lambda
	c.ms.scaleTried++
	reject := func() {
		for _, j := range coords {
			c.next[j] = c.theta[j]
		}
		c.next[lt] = c.theta[lt]
	}
	lpn := c.locPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) {
		reject()
		return false, 0, nil
	}
	if !c.ms.lpOK {
		c.ms.lp, c.ms.lpOK = c.locPrior(c.theta), true
	}
	logExact := lpn - c.ms.lp
	if !mv.hooks.scaleNoJacobian {
		logExact += float64(len(coords)) * lambda
	}
	logExact += math.Log(sigma/sigmaN) - lambda*lambda/(2*sigmaN*sigmaN) + lambda*lambda/(2*sigma*sigma)
	return c.scaleFinish(rng, r, coords, lt, logExact, &c.ms.scaleAcc, &c.ms.scaleCapped)
}

// scaleFinish decides a move of random term r's effects coords and its
// log scale lt from θ to next (set), given the log ratio logExact of
// everything but the likelihood (prior, Jacobian, proposal): the control
// variate's difference exactly and the remainders by Poisson thinning over
// the term's blocks' pairs, each moving block m's s_m = |θ′_m − θ_m| (a
// datum touches one level of the term's factor). It counts an acceptance
// in *acc and a move rejected unread in *capped, and returns whether θ
// moved and the data read.
func (c *gibbsChain) scaleFinish(rng *rand.Rand, r int, coords []int32, lt int, logExact float64, acc, capped *float64) (bool, int, error) {
	mv := c.mv
	beta := c.t.Beta()
	reject := func() {
		for _, j := range coords {
			c.next[j] = c.theta[j]
		}
		c.next[lt] = c.theta[lt]
	}
	// −β(Û(θ′) − Û(θ)), e = θ′ − θ on the term's coordinates:
	// Û(θ′) − Û(θ) = Σ_j e_j(g_j + Σ_col H_j,col(Δ_col + e_col/2)).
	// With ascending rows the term's columns are the run [a, b) of the
	// row: outside it no entry is the term's (the same sums, in order).
	lo, hi := coords[0], coords[len(coords)-1]
	var du float64
	for _, j := range coords {
		ej := c.next[j] - c.theta[j]
		s := c.gradSum[j]
		p0, p1 := c.hPtr[j], c.hPtr[j+1]
		a, b := p0, p1
		if c.hSorted {
			k, _ := slices.BinarySearch(c.hCol[p0:p1], lo)
			a = p0 + k
			for b = a; b < p1 && c.hCol[b] <= hi; b++ {
			}
		}
		for p := p0; p < a; p++ {
			s += c.hVal[p] * (c.theta[c.hCol[p]] - c.center[c.hCol[p]])
		}
		for p := a; p < b; p++ {
			col := c.hCol[p]
			dc := c.theta[col] - c.center[col]
			if int(c.logTau[col]) == lt {
				dc += (c.next[col] - c.theta[col]) / 2
			}
			s += c.hVal[p] * dc
		}
		for p := b; p < p1; p++ {
			s += c.hVal[p] * (c.theta[c.hCol[p]] - c.center[c.hCol[p]])
		}
		du += ej * s
	}
	logExact -= beta * du
	if c.growth {
		// Every block small (the moves' setup): the term's data, exactly.
		return c.scaleExact(rng, coords, lt, logExact, acc)
	}
	// The thinning rate over the term's blocks' pairs.
	copy(c.fac, c.dsq)
	for _, j := range coords {
		m := c.blocks[j]
		o, n := c.theta[j]-c.center[j], c.next[j]-c.center[j]
		dn := math.Max(c.dsq[m]-o*o+n*n, 0)
		c.ms.dsqNew[m] = dn
		c.fac[m] = math.Max(c.dsq[m], dn)
		c.ms.sBlk[m] = math.Abs(c.next[j] - c.theta[j])
	}
	c.classFac()
	if c.facFloor > 0 {
		for b := range c.fac {
			c.fac[b] += c.facFloor
		}
	}
	var rate float64
	k := 0
	for _, j := range coords {
		m := c.blocks[j]
		sm := beta * c.ms.sBlk[m]
		for p := c.pPtr[m]; p < c.pPtr[m+1]; p++ {
			if c.pS[p] > 0 {
				rate += sm * c.pS[p] * c.fac[c.pBlock[p]]
			}
			c.ms.cum[k] = rate
			k++
		}
	}
	if c.k3Scale > 0 {
		rate *= c.k3Scale
		for q := range k {
			c.ms.cum[q] *= c.k3Scale
		}
	}
	if !(rate >= 0) || math.IsInf(rate, 1) || math.IsNaN(logExact) {
		reject()
		return false, 0, nil
	}
	if rate > scaleReadCap(c.t.N()) {
		*capped++
		reject()
		return false, 0, nil
	}
	ex := mv.exData[mv.exPtr[r]:mv.exPtr[r+1]]
	if rate >= float64(mv.nThin[r]) {
		return c.scaleExact(rng, coords, lt, logExact, acc)
	}
	if len(ex) > 0 {
		sum, err := c.exactSum(listOf(ex), beta)
		if err != nil {
			return false, 0, err
		}
		if !c.decide(rng, logExact-sum) {
			reject()
			return false, len(ex), nil
		}
		logExact = 0
	}
	if logExact < 0 && rng.Float64() >= math.Exp(logExact) {
		reject()
		return false, len(ex), nil
	}
	if err := poisson.Check(rate); err != nil {
		return false, 0, err
	}
	draws := poisson.Draw(rng, rate)
	cum := c.ms.cum[:k]
	for q := range draws {
		pos := sort.SearchFloat64s(cum, (1-rng.Float64())*rate)
		pos = min(pos, k-1)
		// pos → pair p of block m.
		var p int
		var m int32
		for _, j := range coords {
			mm := c.blocks[j]
			np := c.pPtr[mm+1] - c.pPtr[mm]
			if pos < np {
				p, m = c.pPtr[mm]+pos, mm
				break
			}
			pos -= np
		}
		i := c.pairDatum(rng, p)
		c.seen.Add(i)
		rd, du, kf, err := c.remainderDiff(i, beta)
		if err != nil {
			return false, 0, err
		}
		ph, err := c.phi(i, int(m), kf)
		if err != nil {
			return false, 0, err
		}
		bound := beta * c.ms.sBlk[m] * ph
		if math.Abs(rd) > bound*(1+boundTol)+1e-12*math.Abs(du) {
			return false, 0, diffViolation(i, rd, bound, c.theta, c.next)
		}
		if rng.Float64()*bound < rd {
			reject()
			return false, len(ex) + q + 1, nil
		}
	}
	c.acceptScale(coords, lt, acc)
	return true, len(ex) + draws, nil
}

// acceptScale moves θ to θ′ on a scale move's coordinates.
func (c *gibbsChain) acceptScale(coords []int32, lt int, acc *float64) {
	for _, j := range coords {
		c.theta[j] = c.next[j]
		m := c.blocks[j]
		c.setDsq(int(m), c.ms.dsqNew[m])
	}
	c.theta[lt] = c.next[lt]
	c.ms.lpOK = false
	*acc++
}

// scaleExact decides a scale move of the effects coords and log scale lt
// from θ to next (set) by reading all the term's data exactly: a datum
// touches one level of the term's factor, so the blocks' data partition
// the data whose linear predictor the move changes, and the remainders'
// exact sum with logExact (everything else) is the Metropolis–Hastings
// log ratio. It counts an acceptance in *acc and returns whether θ moved
// and the data read.
func (c *gibbsChain) scaleExact(rng *rand.Rand, coords []int32, lt int, logExact float64, acc *float64) (bool, int, error) {
	var sum float64
	var nread int
	for _, j := range coords {
		if c.mv.hooks.exactSkip {
			break
		}
		m := c.blocks[j]
		s, err := c.exactSum(c.blockData(m), c.t.Beta())
		if err != nil {
			return false, 0, err
		}
		sum += s
		nread += c.mPtr[m+1] - c.mPtr[m]
	}
	if c.decide(rng, logExact-sum) {
		c.acceptScale(coords, lt, acc)
		return true, nread, nil
	}
	for _, j := range coords {
		c.next[j] = c.theta[j]
	}
	c.next[lt] = c.theta[lt]
	return false, nread, nil
}

// allSmall reports whether every block of a term's levels (coordinates
// start + l·stride) is small (ExactBelow).
func (g *gibbsTerms) allSmall(start, stride, levels int) bool {
	for l := range levels {
		if !g.small[g.blocks[start+l*stride]] {
			return false
		}
	}
	return true
}

// moveParams adds the moves' rates to Params: shift_accept and
// scale_accept (absent without such moves), scale_capped (the share of
// scale moves rejected unread), nested_scales (the number of nested scale
// moves, absent without one).
func (c *gibbsChain) moveParams(ps map[string]float64) {
	if c.mv == nil {
		return
	}
	if len(c.mv.expl) > 0 {
		ps["shifts"] = float64(len(c.mv.expl))
		ps["shift_accept"] = c.ms.shiftAcc / max(c.ms.shiftTried, 1)
	}
	if len(c.mv.nested) > 0 {
		ps["nested_scales"] = float64(len(c.mv.nested))
	}
	if len(c.mv.scTau) > 0 || len(c.mv.nested) > 0 {
		ps["scale_accept"] = c.ms.scaleAcc / max(c.ms.scaleTried, 1)
		ps["scale_capped"] = c.ms.scaleCapped / max(c.ms.scaleTried, 1)
	}
	if c.condScale && len(c.mv.scTau) > 0 {
		ps["cond_scale_accept"] = c.ms.condAcc / max(c.ms.condTried, 1)
		ps["cond_scale_capped"] = c.ms.condCapped / max(c.ms.condTried, 1)
	}
}

// moveCounts returns the counters moveParams reports (MarshalState
// saves them).
func (c *gibbsChain) moveCounts() []*float64 {
	ps := []*float64{&c.ms.shiftTried, &c.ms.shiftAcc, &c.ms.scaleTried, &c.ms.scaleAcc, &c.ms.scaleCapped}
	if c.condScale {
		ps = append(ps, &c.ms.condTried, &c.ms.condAcc, &c.ms.condCapped)
	}
	return ps
}

// saveMoves keeps the counters at the start of a sweep that may be
// abandoned; restoreMoves puts them back.
func (c *gibbsChain) saveMoves() {
	c.ms.saved = [8]float64{c.ms.shiftTried, c.ms.shiftAcc, c.ms.scaleTried, c.ms.scaleAcc, c.ms.scaleCapped, c.ms.condTried, c.ms.condAcc, c.ms.condCapped}
}

func (c *gibbsChain) restoreMoves() {
	s := &c.ms.saved
	c.ms.shiftTried, c.ms.shiftAcc, c.ms.scaleTried, c.ms.scaleAcc, c.ms.scaleCapped = s[0], s[1], s[2], s[3], s[4]
	c.ms.condTried, c.ms.condAcc, c.ms.condCapped = s[5], s[6], s[7]
	c.ms.lpOK = false
}

// nestedScale is a data-free scale move of a random term P whose factor
// has a factor nested in it with a term C of equal columns (the shifts
// sLo…sHi−1 of the doc's (b), one per parent level k, v_k = e_{u_Pk} −
// Σ_{j ⊂ k} e_{u_Cj}): log τ_P + λ, u_Pk·e^λ for every level, and each
// child's u_Cj − (e^λ − 1)·u_Pk — the scale move of u_P composed with the
// shift of each parent level by (e^λ − 1)·u_Pk, which leaves every linear
// predictor unchanged, so no datum is read. The map is triangular (u_C
// translated), so its Jacobian is e^{G_P·λ}, as the plain scale move's;
// the ratio is the prior's (the children's priors now change) times the
// proposal's, σ = scaleStep/√(1 + Σ_k n_k·u_Pk²/τ_C²) following the
// children's prior curvature in λ (n_k children of level k, τ_C their
// scale: e^{θ[cTau]}, or cSD for a term of fixed scale).
type nestedScale struct {
	start, stride, levels, logTau int
	sLo, sHi                      int
	cTau                          int
	cSD                           float64
}

// nestedScaleMove makes the nested scale move ns and reports whether it
// moved θ (dsq is left stale).
func (c *gibbsChain) nestedScaleMove(rng *rand.Rand, ns *nestedScale) bool {
	mv := c.mv
	prec := 1 / (ns.cSD * ns.cSD)
	if ns.cTau >= 0 {
		prec = math.Exp(-2 * c.theta[ns.cTau])
	}
	var bq float64
	for s := ns.sLo; s < ns.sHi; s++ {
		u := c.theta[mv.idx[mv.ptr[s]]]
		bq += float64(mv.ptr[s+1]-mv.ptr[s]-1) * u * u * prec
	}
	sigma := scaleStep / math.Sqrt(1+bq)
	lambda := sigma * rng.NormFloat64()
	f := math.Exp(lambda)
	sigmaN := scaleStep / math.Sqrt(1+bq*f*f)
	c.ms.scaleTried++
	for g := range ns.levels {
		j := ns.start + g*ns.stride
		c.next[j] = f * c.theta[j]
	}
	for s := ns.sLo; s < ns.sHi; s++ {
		idx, w := mv.idx[mv.ptr[s]:mv.ptr[s+1]], mv.w[mv.ptr[s]:mv.ptr[s+1]]
		delta := (f - 1) * c.theta[idx[0]]
		for q, j := range idx[1:] {
			c.next[j] = c.theta[j] + delta*w[q+1]
		}
	}
	c.next[ns.logTau] = c.theta[ns.logTau] + lambda
	if !c.ms.lpOK {
		c.ms.lp, c.ms.lpOK = c.locPrior(c.theta), true
	}
	lpn := c.locPrior(c.next)
	logR := lpn - c.ms.lp
	if !mv.hooks.nestedNoJacobian {
		logR += float64(ns.levels) * lambda
	}
	logR += math.Log(sigma/sigmaN) - lambda*lambda/(2*sigmaN*sigmaN) + lambda*lambda/(2*sigma*sigma)
	accept := !math.IsNaN(logR) && c.decide(rng, logR)
	for g := range ns.levels {
		j := ns.start + g*ns.stride
		if accept {
			c.theta[j] = c.next[j]
		} else {
			c.next[j] = c.theta[j]
		}
	}
	for s := ns.sLo; s < ns.sHi; s++ {
		for _, j := range mv.idx[mv.ptr[s]+1 : mv.ptr[s+1]] {
			if accept {
				c.theta[j] = c.next[j]
			} else {
				c.next[j] = c.theta[j]
			}
		}
	}
	if accept {
		c.theta[ns.logTau] = c.next[ns.logTau]
		c.ms.lp = lpn
		c.ms.scaleAcc++
	} else {
		c.next[ns.logTau] = c.theta[ns.logTau]
	}
	return accept
}

// layoutTerm is a random-effect term of a Layout: its effects' first
// index, stride and levels, and its log-scale index (−1 for a term of
// fixed scale sd, FixedScaleLayout).
type layoutTerm struct {
	start, stride, levels, logTau int
	sd                            float64
}

// layoutTerms lists lay's terms, then its fixed-scale terms.
func layoutTerms(lay Layout) []layoutTerm {
	var terms []layoutTerm
	for t := range lay.NumTerms() {
		_, _, start, stride, levels, lt := lay.Term(t)
		terms = append(terms, layoutTerm{start, stride, levels, lt, 0})
	}
	if fs, ok := lay.(FixedScaleLayout); ok {
		for t := range fs.NumFixedScale() {
			start, stride, levels, sd := fs.FixedScale(t)
			terms = append(terms, layoutTerm{start, stride, levels, -1, sd})
		}
	}
	return terms
}

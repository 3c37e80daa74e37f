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

// Shear moves (GroupGibbs.Shear; docs/multilevel.md, "Shear moves"): a
// fixed effect β_k whose covariate varies within the levels of a factor
// with random intercepts u_j, and whose level means x̄_jk are not all 0,
// is confounded with the u_j through x̄_jk: a block update of β_k given u
// moves it by its conditional sd, a small part of its marginal one. The
// move along
//
//	v = e_k − Σ_j x̄_jk e_{u_j}   (θ + t·v: β_k + t, u_j − t·x̄_jk)
//
// keeps the between-level part of every linear predictor and moves only
// the within-level part: η_i changes by t·w_i, w_i = x_ik − x̄_{j(i)k},
// so the data of the levels where x_k is constant (w_i = 0) are not read.
// Start checks on the rows that the factor's term is an intercept (its
// column is 1 on every row) and finds x̄ exactly (the level's value where
// x_k is constant in it, so that w_i = 0 exactly there).
//
// The proposal is a Newton step along the line from the line's own point
// θ₀ = θ − t_c·v, t_c = β_k − β̂_k (where β_k is at the centre β̂_k; θ₀ is
// the same for every point of the line): with E(t) = βU(θ₀ + tv) −
// log p̃(θ₀ + tv), p̃ the prior with the fixed effect's part expanded at
// the centre (pGrad, pPrec) and the effects' exact N(0, τ²),
//
//	G = E′(0) = β Σ_i f′_i(z_i⁰) w_i − p_k − Σ_j u⁰_j x̄_j / τ²,
//	J = E″(0) = β Σ_i f″_i(z_i⁰) w_i² + π_k + Σ_j x̄_j² / τ²,
//
// one pass over the shear's data (z_i⁰ = z_i − t_c·w_i, u⁰_j = u_j +
// t_c·x̄_j), and t′ ~ N(−G/J, 1/J). (G, J) are functions of the line (and
// τ, which the move does not change), so this is an independence
// Metropolis–Hastings step for π restricted to the line, whose Jacobian
// is 1 (a translation along v):
//
//	log r = −β Σ_i (f_i(z_i + δ w_i) − f_i(z_i)) + log p(θ′) − log p(θ) + log q(t_c) − log q(t′),
//
// δ = t′ − t_c, read exactly in a second pass over the shear's data, with
// the whole prior (the effects' N(0, τ²) terms, which the shear changes,
// included). The line through θ along v is the same for every point of it,
// so the step leaves π invariant. Cost: two passes over the data whose
// covariate differs from its level's mean (the second reads no row: the
// first keeps their linear predictors, O(those data) scratch a chain),
// and O(levels + d) for the prior. Where J ≤ 0 (a family that is not convex) the move is the
// identity, a function of the line.
//
// TestGroupGibbsShearMoments, TestGroupGibbsShearSBC and
// TestGroupGibbsShearStructural prove it (groupgibbs_shear_test.go).

// gibbsShear is what Start finds for the shear moves, shared by the
// chains. Shear s moves fixed effect fix[s] and the effects
// idx[ptr[s]:ptr[s+1]] with their level means xbar; its effects' log
// scale is lt[s] (−1: a term of fixed scale, sd[s]); its data are
// dat[dPtr[s]:dPtr[s+1]] with w_i in w.
type gibbsShear struct {
	fix  []int32
	ptr  []int
	idx  []int32
	xbar []float64
	lt   []int32
	sd   []float64
	dPtr []int
	dat  []int32
	w    []float64
	// ratio[s]: the line's precision over β_k's own at the centre (the
	// doc above: how far a shear moves β_k against a block update).
	ratio []float64
	// Test hooks: meanOff is added to every x̄ the move shifts the effects
	// by (not to the w_i the ratio reads: a shear that changes a linear
	// predictor it does not charge for); noEffectPrior drops the effects'
	// N(0, τ²) terms from the ratio.
	meanOff       float64
	noEffectPrior bool
}

// shearState is a chain's scratch and counters for the shear moves: z
// holds the shear's data's linear predictors at θ from the first pass,
// which the second reads instead of the rows.
type shearState struct {
	z          []float64
	tried, acc float64
	saved      [2]float64
}

// initShear allocates the chain's scratch for the shear moves.
func (c *gibbsChain) initShear() {
	n := 0
	for s := range len(c.sh.fix) {
		n = max(n, c.sh.dPtr[s+1]-c.sh.dPtr[s])
	}
	c.sst.z = make([]float64, n)
}

// shearHooks are the shear moves' test hooks (groupgibbs_shear_export_test.go).
type shearHooks struct {
	meanOff       float64
	noEffectPrior bool
}

// buildShears finds the shears of the model on the rows (two passes) and
// returns nil if there are none.
//
// With maxRatio > 0 it keeps only the shears whose line precision at the
// centre, v·(βH)·v + Σ_j x̄_j²/τ̂² + π_k, is below maxRatio times β_k's
// own, βH_kk + π_k: those along which β_k moves at least 1/√maxRatio
// times as far as a block update moves it (a datum lies in one level of
// the factor, so H couples no two of its levels and the product is
// O(levels)).
func (g *gibbsTerms) buildShears(e SparseRowGLM, lay Layout, fixed []int32, beta, maxRatio float64, hooks shearHooks) *gibbsShear {
	if len(g.expl) == 0 || !g.expl[0] || len(fixed) == 0 {
		return nil
	}
	terms := layoutTerms(lay)
	nt, nf := len(terms), len(fixed)
	if nt == 0 {
		return nil
	}
	d := len(g.blocks)
	termOf, levelOf, fixIdx := make([]int32, d), make([]int32, d), make([]int32, d)
	for j := range d {
		termOf[j], fixIdx[j] = -1, -1
	}
	for t, tm := range terms {
		for l := range tm.levels {
			termOf[tm.start+l*tm.stride], levelOf[tm.start+l*tm.stride] = int32(t), int32(l)
		}
	}
	for f, j := range fixed {
		fixIdx[j] = int32(f)
	}
	// Per (f, t): each level's sum, count, first value and whether x_f is
	// constant in it; fail[f·nt + t] where t is not an intercept on every row.
	type acc struct {
		sum, first []float64
		cnt        []int
		varies     []bool
	}
	accs := make([]acc, nf*nt)
	termFail := make([]bool, nt)
	for q := range accs {
		l := terms[q%nt].levels
		accs[q] = acc{make([]float64, l), make([]float64, l), make([]int, l), make([]bool, l)}
	}
	n := e.Len()
	lev, val, xv := make([]int32, nt), make([]float64, nt), make([]float64, nf)
	var cols []int32
	var vals []float64
	row := func(i int) {
		cols, vals = e.SparseRow(i, cols[:0], vals[:0])
		for t := range lev {
			lev[t], val[t] = -1, 0
		}
		clear(xv)
		for q, c := range cols {
			if c < 0 || int(c) >= d {
				continue
			}
			if f := fixIdx[c]; f >= 0 {
				xv[f] = vals[q]
			}
			if t := termOf[c]; t >= 0 && vals[q] != 0 {
				lev[t], val[t] = levelOf[c], vals[q]
			}
		}
	}
	for i := range n {
		row(i)
		for t := range nt {
			if termFail[t] {
				continue
			}
			if val[t] != 1 {
				termFail[t] = true
				continue
			}
			l := lev[t]
			for f := range nf {
				a := &accs[f*nt+t]
				if a.cnt[l] == 0 {
					a.first[l] = xv[f]
				} else if xv[f] != a.first[l] {
					a.varies[l] = true
				}
				a.sum[l] += xv[f]
				a.cnt[l]++
			}
		}
	}
	sh := &gibbsShear{ptr: []int{0}, dPtr: []int{0}, meanOff: hooks.meanOff, noEffectPrior: hooks.noEffectPrior}
	type cand struct {
		f, t int
		xbar []float64
	}
	var cands []cand
	for f := range nf {
		for t, tm := range terms {
			if termFail[t] || tm.levels == 0 {
				continue
			}
			a := &accs[f*nt+t]
			varies, nonzero := false, false
			xbar := make([]float64, tm.levels)
			for l := range tm.levels {
				switch {
				case a.cnt[l] == 0:
				case a.varies[l]:
					xbar[l] = a.sum[l] / float64(a.cnt[l])
					varies = true
				default:
					xbar[l] = a.first[l]
				}
				nonzero = nonzero || xbar[l] != 0
			}
			// Constant within every level: a data-free shift
			// (groupgibbs_moves.go); every mean 0: the block update's.
			if varies && nonzero {
				cands = append(cands, cand{f, t, xbar})
			}
		}
	}
	// The line's precision against β_k's own, at the centre.
	pos := make([]float64, d) // x̄ of the candidate's levels, by coordinate
	ratios := make([]float64, 0, len(cands))
	kept := cands[:0]
	for _, cd := range cands {
		tm, k := terms[cd.t], int(fixed[cd.f])
		prec := 1 / (tm.sd * tm.sd)
		if tm.logTau >= 0 {
			prec = math.Exp(-2 * g.center[tm.logTau])
		}
		for l, xb := range cd.xbar {
			pos[tm.start+l*tm.stride] = xb
		}
		var hkk, vhv, pr float64
		for p := g.hPtr[k]; p < g.hPtr[k+1]; p++ {
			col := g.hCol[p]
			if int(col) == k {
				hkk = g.hVal[p]
			} else if xb := pos[col]; xb != 0 {
				vhv -= 2 * xb * g.hVal[p]
			}
		}
		vhv += hkk
		for l, xb := range cd.xbar {
			j := tm.start + l*tm.stride
			pos[j] = 0
			if xb == 0 {
				continue
			}
			pr += xb * xb * prec
			for p := g.hPtr[j]; p < g.hPtr[j+1]; p++ {
				if int(g.hCol[p]) == j {
					vhv += xb * xb * g.hVal[p]
				}
			}
		}
		r := (beta*vhv + pr + g.pPrec[k]) / (beta*hkk + g.pPrec[k])
		if maxRatio > 0 && !(r < maxRatio) {
			continue
		}
		kept = append(kept, cd)
		ratios = append(ratios, r)
	}
	cands = kept
	if len(cands) == 0 {
		return nil
	}
	sh.ratio = ratios
	for _, cd := range cands {
		tm := terms[cd.t]
		sh.fix = append(sh.fix, fixed[cd.f])
		for l, xb := range cd.xbar {
			if xb != 0 {
				sh.idx, sh.xbar = append(sh.idx, int32(tm.start+l*tm.stride)), append(sh.xbar, xb)
			}
		}
		sh.ptr = append(sh.ptr, len(sh.idx))
		sh.lt, sh.sd = append(sh.lt, int32(tm.logTau)), append(sh.sd, tm.sd)
	}
	// The data lists, shear by shear, ascending.
	dl, wl := make([][]int32, len(cands)), make([][]float64, len(cands))
	for i := range n {
		row(i)
		for s, cd := range cands {
			if w := xv[cd.f] - cd.xbar[lev[cd.t]]; w != 0 {
				dl[s], wl[s] = append(dl[s], int32(i)), append(wl[s], w)
			}
		}
	}
	for s := range cands {
		sh.dat, sh.w = append(sh.dat, dl[s]...), append(sh.w, wl[s]...)
		sh.dPtr = append(sh.dPtr, len(sh.dat))
	}
	return sh
}

// shearMoves makes each shear move once and returns whether one moved θ
// and the data read.
func (c *gibbsChain) shearMoves(rng *rand.Rand) (moved bool, nread int, err error) {
	for s := range len(c.sh.fix) {
		acc, n, err := c.shearMove(rng, s)
		nread += n
		if err != nil {
			return moved, nread, err
		}
		moved = moved || acc
	}
	if moved {
		c.deltas()
	}
	return moved, nread, nil
}

// shearMove makes shear s (the doc above) and returns whether it moved θ
// and the data it read. It leaves dsq stale.
func (c *gibbsChain) shearMove(rng *rand.Rand, s int) (bool, int, error) {
	sh := c.sh
	k := int(sh.fix[s])
	idx, xb := sh.idx[sh.ptr[s]:sh.ptr[s+1]], sh.xbar[sh.ptr[s]:sh.ptr[s+1]]
	dat, w := sh.dat[sh.dPtr[s]:sh.dPtr[s+1]], sh.w[sh.dPtr[s]:sh.dPtr[s+1]]
	beta := c.t.Beta()
	prec := 1 / (sh.sd[s] * sh.sd[s])
	if lt := sh.lt[s]; lt >= 0 {
		prec = math.Exp(-2 * c.theta[lt])
	}
	tc := c.theta[k] - c.center[k]
	gr, jm := -c.pGrad[k], c.pPrec[k]
	for q, j := range idx {
		u0 := c.theta[j] + tc*xb[q]
		gr -= u0 * xb[q] * prec
		jm += xb[q] * xb[q] * prec
	}
	for lo := 0; lo < len(dat); lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			return false, 0, err
		}
		hi := min(lo+chunk, len(dat))
		for q, i := range dat[lo:hi] {
			c.t.Count(1)
			c.seen.Add(int(i))
			z, _ := c.rows.LinearPredictors(int(i), c.theta, c.theta)
			c.sst.z[lo+q] = z
			wi := w[lo+q]
			f1, f2 := c.rows.LossDerivs(int(i), z-tc*wi)
			gr += beta * f1 * wi
			jm += beta * f2 * wi * wi
		}
	}
	if err := c.rowErr(); err != nil {
		return false, 0, err
	}
	c.sst.tried++
	if !(jm > 0) || math.IsInf(jm, 0) || math.IsNaN(gr) {
		return false, len(dat), nil
	}
	mu := -gr / jm
	tn := mu + rng.NormFloat64()/math.Sqrt(jm)
	delta := tn - tc
	logQ := jm / 2 * ((tn-mu)*(tn-mu) - (tc-mu)*(tc-mu))
	c.next[k] = c.theta[k] + delta
	var dPrior float64
	for q, j := range idx {
		c.next[j] = c.theta[j] - delta*(xb[q]+sh.meanOff)
		dPrior -= (c.next[j]*c.next[j] - c.theta[j]*c.theta[j]) * prec / 2
	}
	reject := func() {
		c.next[k] = c.theta[k]
		for _, j := range idx {
			c.next[j] = c.theta[j]
		}
	}
	lpn := c.locPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) {
		reject()
		return false, len(dat), nil
	}
	logR := lpn - c.locPrior(c.theta) + logQ
	if sh.noEffectPrior {
		logR -= dPrior
	}
	var sum float64
	for lo := 0; lo < len(dat); lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			reject()
			return false, 0, err
		}
		hi := min(lo+chunk, len(dat))
		for q, i := range dat[lo:hi] {
			c.t.Count(1)
			z := c.sst.z[lo+q]
			sum += c.rows.Loss(int(i), z+delta*w[lo+q]) - c.rows.Loss(int(i), z)
		}
	}
	if err := c.rowErr(); err != nil {
		reject()
		return false, 0, err
	}
	if math.IsNaN(sum) {
		reject()
		return false, 0, fmt.Errorf("GroupGibbs: shear of θ[%d]: energy difference NaN at θ = %v, δ = %v", k, c.theta, delta)
	}
	if !c.decide(rng, logR-beta*sum) {
		reject()
		return false, 2 * len(dat), nil
	}
	c.theta[k] = c.next[k]
	for _, j := range idx {
		c.theta[j] = c.next[j]
	}
	c.sst.acc++
	return true, 2 * len(dat), nil
}

// DefaultShearEvery and DefaultShearMaxRatio are GroupGibbs's ShearEvery
// and ShearMaxRatio in the automatic default (with Shear 1): on InstEval
// the lecturers' shear (ratio 0.32) alone mixes the covariate as all
// three do, for 29% of their reads (figures/bench/multilevel_joint.txt,
// section 5). One sweep in two: the covariate's bulk ESS then about
// doubles against one in four (4 × 1,000 draws: 1,006–1,194 against 467,
// its R-hat 1.002 against 1.010), and the whole command stays within
// glmer's CPU (95.2 CPU-s against 176; figures/bench/multilevel_real.txt,
// insteval).
const (
	DefaultShearEvery    = 2
	DefaultShearMaxRatio = 0.5
)

// shearPasses is the passes over the data a sweep of c's GroupGibbs makes
// for its shear moves on average (its Params' shear_data, two reads a
// move), which the automatic default allows on top of gibbsGrind: they
// are what the shears are for, and the pilot's ESS per cost counts them.
func shearPasses(p *exactmh.Posterior, c *exactmh.ChainResult) float64 {
	nd, ok := c.Params["shear_data"]
	if !ok || p.Len() == 0 {
		return 0
	}
	return 2 * nd * c.Params["shear_rounds"] / max(c.Params["shear_every"], 1) / float64(p.Len())
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
)

// The cross-cubic control variate of GroupGibbs's fixed-effect block.
//
// A move δβ of block 0 changes datum i's remainder R_i = U_i − Û_i by
// about f‴_i/2·a_i²·x_i0ᵀδβ, a_i = x_iᵀ(θ − θ̂). The part w_i = z_iᵀ(u_g −
// û_g) of a_i that the group's effects contribute is of the order of the
// group's posterior sd, and the changes have both signs: the factorised
// test pays the positive ones group after group, so without this term the
// block's acceptance falls as G/√N grows (figures/bench/multilevel_scale.txt
// §4). For a datum whose row touches block 0 and one other block g,
// GroupGibbs's block-0 update adds the cross term of the cubic,
//
//	V_i(θ) = f‴_i/2·ω_i²·b_i,  ω_i = z_iᵀ(u_g − û_g − m),  b_i = x_i0ᵀ(β − β̂),
//
// f‴_i = f‴(ẑ_i), to the expansion the proposal and the remainders use;
// m is the frame of cubicFrame (a function of u alone). Its sum over a
// group is linear in β and exact from a per-group tensor,
//
//	Σ_{i∈g} V_i = (β − β̂)ᵀc_g,  c_g = Σ_{k≤l} (2 − [k = l])·d_kd_l·T_g[k, l],
//	T_g[k, l] = Σ_{i∈g} f‴_i/2·z_ikz_il·x_i0,  d = u_g − û_g − m,
//
// so the block's conditional proposal stays Gaussian (its mean shifted by
// −βP⁻¹c, c = Σ_g c_g over the groups it includes), and the log ratio is
// −βΣ_i((R_i − V_i)(θ′) − (R_i − V_i)(θ)), the same identity as without
// it: exact for any c_g that depends on u alone, as long as the proposal
// and the remainders use the same one. What it buys is the remainder.
// With h_i(a) = R_i and a = ω + τ (τ = b + z_iᵀm), Taylor's theorem for
// f′ to second order gives h′(ω + τ) − f‴/2·ω² = f‴/2·(2ωτ + τ²) + ρ,
// |ρ| ≤ S₄/6·|ω + τ|³, S₄ = sup|f⁗_i|, so for W ≥ |ω|, B ≥ |τ| over the
// move,
//
//	|(R_i − V_i)(θ′) − (R_i − V_i)(θ)| ≤ |b′ − b|·(|f‴_i|(WB + B²/2) + S₄/6·(W + B)³),
//
// whose leading term S₄/6·W³ replaces sup|f‴|/2·W² (the order in the
// group's deviation drops by one). With W = a_ig·Ω_g, B = Q + R, Q =
// a_i0·M_0, R = a_ig·μ_g (Cauchy–Schwarz on each block: Ω_g = ‖u_g − û_g
// − m‖, μ_g = ‖m_g‖, M_0 = max(‖Δ_0‖, ‖Δ′_0‖)), and WQ ≤ W² + Q²/4, QR ≤
// Q²/4 + R² in the quadratic part, the bound is at most
// K_i·(a_i0²·F_00 + a_ig²·F_0g) with the pair factors (P = Ω_g + μ_g)
//
//	F_0g = α_g/6·P³ + β_g/2·P²M_0 + δ_g/2·PM_0² + h·(2Ω_g² + 2Ω_gμ_g + 3μ_g²),
//	F_00 = max(M_0², 2h·M_0² + r/6·M_0³),
//
// α_g = max S₄a_ig/K_i, β_g = max S₄a_i0/K_i, δ_g = max S₄a_i0²/(K_ia_ig)
// over the pair's data, h = max |f‴_i|/(2K_i) and r = max S₄a_i0/K_i over
// every such datum (F_00 also covers the data of groups left out, at the
// old M_0²): the pair tables GroupGibbs already draws from — weights
// K_i·a_i0·a_ib² for its pairs (0, 0) and (0, g), K_i = sup|f‴_i| — cover
// it with these factors in place of ‖u_g − û_g‖² and M_0². A group is
// included when α_g·P ≤ cubicReach (far from the centre the cubic
// overshoots what it approximates) and its F_0g at a typical M_0 costs at
// most cubicCost times its old factor — both functions of u alone, as the
// proposal's density may not depend on β′. Eligible are the pairs (0, g)
// all of whose data touch exactly blocks 0 and g, none read exactly
// (ExactBelow), of a family with f‴ and a finite sup|f⁗|
// (model.GLMCuber), or, under the pair-wise bound, a fourth derivative
// that grows at most exponentially (LossGrowther4, cubicFactor). Proven
// by TestGroupGibbsMoments (with its mutants), TestGroupGibbsCubicSBC,
// TestGroupGibbsPoissonMoments, TestGroupGibbsPoissonSBC;
// TestGroupGibbsCubicAccept measures the gain.
// docs/multilevel.md, section "Cross-cubic control variate", holds the derivation with
// its detailed-balance argument.
type gibbsCubic struct {
	p0 int // block 0's coordinates
	// By eligible pair e of block 0 (pair pPtr[0] + pair[e]): its block,
	// the offset of its tensor in tens (q(q+1)/2 rows of p0, q the
	// block's size, row k ≤ l in order), and α, β, δ.
	pair, blk, tOff []int
	al, be, de      []float64
	tens            []float64
	h, r            float64
	// m0 is a typical M_0, 1.5·√tr(P⁻¹) of block 0's conditional
	// precision P at the centre, for the inclusion rule (a constant).
	m0 float64
	// of0[b]: the eligible pair of block b, or −1.
	of0 []int
}

// cubicFrame sets the chain's frame for the cross-cubic terms at the
// current u: mloc[l] = the mean of (u − û) over the levels of the term of
// location move l, and shift[j] = mloc of coordinate j's term (0 for a
// term without a location move). Where the fixed effect a term's
// location move pairs with is far from the centre, every group's effect
// of that term is the same distance off the other way (the posterior's
// long direction, along which no linear predictor moves), so w_i = z_iᵀ(u_g
// − û_g) is large while a_i = w_i + b_i is not; measured from the shift,
// ω_i = z_iᵀ(u_g − û_g − m) is not (m a function of u alone, like
// everything the proposal's density depends on). For the bound, a_i =
// ω_i + (b_i + z_iᵀm) with |z_iᵀm| ≤ a_ig·‖m_g‖.
func (c *gibbsChain) cubicFrame() {
	for l, lc := range c.locs {
		var s float64
		for g := range lc.levels {
			j := lc.start + g*lc.stride
			s += c.theta[j] - c.center[j]
		}
		c.mloc[l] = s / float64(max(lc.levels, 1))
	}
}

// shiftOf returns coordinate j's shift in the cubic frame.
func (c *gibbsChain) shiftOf(j int32) float64 {
	if l := c.locOf[j]; l >= 0 {
		return c.mloc[l]
	}
	return 0
}

// cubicReach is the largest α_g·M_g at which a group is included: there
// the bound's cubic term α_g/6·M_g³ is half the quadratic M_g² it
// replaces.
const cubicReach = 3.0

// cubicCost is the most a group's pair factor may cost, at the typical
// M_0 m0, against its factor without the control variate (‖u_g − û_g‖²):
// a group the control variate would make much dearer to bound than it
// helps the block's acceptance is left out (a function of u alone, as the
// inclusion must be). At 3, examples/multilevel's fixed block accepts
// 0.52 of its proposals at G/√N = 3.2 (0.53 with every group in reach,
// 0.27 at 1.5) while at G/√N = 0.35 a sweep reads 349 data (441 with
// every group, 272 without the control variate;
// figures/bench/multilevel_scale.txt §7).
const cubicCost = 3.0

// buildCubic returns block 0's cross-cubic control variate at the
// centre sc of the sums (one pass over the data), or nil where no pair
// is eligible. isExact marks the data read exactly (nil: none).
func (g *gibbsTerms) buildCubic(name string, e SparseRowGLM, sc []float64, isExact []bool, beta float64) (*gibbsCubic, error) {
	cub, ok := e.(exactmh.LossCuber)
	if !ok || g.nb < 2 {
		return nil, nil
	}
	var g4 LossGrowther4
	if g.growth {
		if g4, ok = e.(LossGrowther4); !ok {
			return nil, nil
		}
		if _, ok := g4.LossGrowth4(0, 0); !ok {
			return nil, nil
		}
	}
	p0 := g.bcPtr[1] - g.bcPtr[0]
	if p0 == 0 {
		return nil, nil
	}
	cb := &gibbsCubic{p0: p0, of0: make([]int, g.nb)}
	for b := range cb.of0 {
		cb.of0[b] = -1
	}
	for p := g.pPtr[0]; p < g.pPtr[1]; p++ {
		b := int(g.pBlock[p])
		if b == 0 || g.small[b] || !onlyWith0(g, b) {
			continue
		}
		q := g.bcPtr[b+1] - g.bcPtr[b]
		cb.of0[b] = len(cb.pair)
		cb.pair = append(cb.pair, p-g.pPtr[0])
		cb.blk = append(cb.blk, b)
		cb.tOff = append(cb.tOff, len(cb.tens))
		cb.tens = append(cb.tens, make([]float64, q*(q+1)/2*p0)...)
	}
	np := len(cb.pair)
	if np == 0 {
		return nil, nil
	}
	cb.al, cb.be, cb.de = make([]float64, np), make([]float64, np), make([]float64, np)
	bad := make([]bool, np)
	var rb rowBlocks
	rb.init(g.blocks)
	var zs, xs [64]float64 // a row's entries of block g, of block 0 (dense by local position)
	zb, xb := zs[:0], xs[:0]
	for i := range e.Len() {
		if err := rb.load(name, e, g.blocks, "the prior's Blocks", i); err != nil {
			return nil, err
		}
		t0 := -1
		for q, b := range rb.touched {
			if b == 0 {
				t0 = q
			}
		}
		if t0 < 0 || len(rb.touched) == 1 {
			continue
		}
		if len(rb.touched) != 2 || (isExact != nil && isExact[i]) {
			for _, b := range rb.touched {
				if b != 0 && cb.of0[b] >= 0 {
					bad[cb.of0[b]] = true
				}
			}
			continue
		}
		b := int(rb.touched[1-t0])
		ep := cb.of0[b]
		if ep < 0 || bad[ep] {
			continue
		}
		a0, ab := rb.norms[t0], rb.norms[1-t0]
		x, ki, err := datumExpansion(name, e, i, g.center, g.growth)
		if err != nil {
			return nil, err
		}
		z, _ := e.LinearPredictors(i, sc, sc)
		f3 := cub.LossDeriv3(i, z)
		s4 := cub.LossBound4(i, math.Inf(-1), math.Inf(1))
		if g.growth {
			s4, _ = g4.LossGrowth4(i, x.zHat) // |f⁗| ≤ s4·e^{|z − ẑ_i|}
		}
		if !(ki > 0) || math.IsInf(ki, 0) || math.IsNaN(f3) || math.IsInf(f3, 0) || !(s4 >= 0) || math.IsInf(s4, 0) {
			bad[ep] = true
			continue
		}
		cb.al[ep] = math.Max(cb.al[ep], s4*ab/ki)
		cb.be[ep] = math.Max(cb.be[ep], s4*a0/ki)
		cb.de[ep] = math.Max(cb.de[ep], s4*a0*a0/(ki*ab))
		cb.h = math.Max(cb.h, math.Abs(f3)/(2*ki))
		cb.r = math.Max(cb.r, s4*a0/ki)
		// T_g[k, l] += f‴/2·z_kz_l·x_0.
		q := g.bcPtr[b+1] - g.bcPtr[b]
		zb, xb = dense(zb, q), dense(xb, p0)
		for c, col := range rb.cols {
			switch g.blocks[col] {
			case 0:
				xb[g.local[col]] += rb.vals[c]
			case int32(b):
				zb[g.local[col]] += rb.vals[c]
			}
		}
		tens := cb.tens[cb.tOff[ep]:]
		kl := 0
		for k := range q {
			for l := k; l < q; l++ {
				w := f3 / 2 * zb[k] * zb[l]
				row := tens[kl*p0 : (kl+1)*p0]
				for j, x := range xb {
					row[j] += w * x
				}
				kl++
			}
		}
	}
	// Keep the eligible pairs only.
	keep := 0
	for ep := range np {
		if bad[ep] {
			cb.of0[cb.blk[ep]] = -1
			continue
		}
		cb.of0[cb.blk[ep]] = keep
		cb.pair[keep], cb.blk[keep], cb.tOff[keep] = cb.pair[ep], cb.blk[ep], cb.tOff[ep]
		cb.al[keep], cb.be[keep], cb.de[keep] = cb.al[ep], cb.be[ep], cb.de[ep]
		keep++
	}
	if keep == 0 {
		return nil, nil
	}
	cb.pair, cb.blk, cb.tOff = cb.pair[:keep], cb.blk[:keep], cb.tOff[:keep]
	cb.al, cb.be, cb.de = cb.al[:keep], cb.be[:keep], cb.de[:keep]
	for _, v := range cb.tens {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: cross-cubic tensor entry %v at the centre, want finite", name, v)
		}
	}
	// M_0's scale: block 0's conditional precision at the centre.
	prec := make([]float64, p0*p0)
	for a, j := range g.bc[g.bcPtr[0]:g.bcPtr[1]] {
		for q := g.hPtr[j]; q < g.hPtr[j+1]; q++ {
			if col := g.hCol[q]; g.blocks[col] == 0 {
				prec[a*p0+int(g.local[col])] += beta * g.hVal[q]
			}
		}
		prec[a*p0+a] += g.pPrec[j]
	}
	if cholesky(prec, p0) {
		var tr float64
		e := make([]float64, p0)
		for k := range p0 {
			clear(e)
			e[k] = 1
			forwardSub(prec, p0, e)
			for _, v := range e {
				tr += v * v
			}
		}
		cb.m0 = 1.5 * math.Sqrt(tr)
	}
	return cb, nil
}

// onlyWith0 reports whether block b's pairs are with block 0 and itself
// only (no datum of b touches a third block: a one-factor design), read
// from the pair index without a pass over the data.
func onlyWith0(g *gibbsTerms, b int) bool {
	for p := g.pPtr[b]; p < g.pPtr[b+1]; p++ {
		if o := int(g.pBlock[p]); o != 0 && o != b {
			return false
		}
	}
	return true
}

// dense returns s resized to n zeros (its backing array reused).
func dense(s []float64, n int) []float64 {
	if cap(s) < n {
		s = make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// cubicShift decides, from the current u, which groups block 0's update
// includes (cubIncl) and sets cvec = Σ_g c_g over them; it reports
// whether any is included.
func (c *gibbsChain) cubicShift() bool {
	cb := c.cub
	clear(c.cvec)
	c.cubicFrame()
	c.cubW = 0
	on := false
	for ep, b := range cb.blk {
		c.cubIncl[b] = false
		if c.mask != nil && !c.mask(int32(b)) {
			continue
		}
		coords := c.bc[c.bcPtr[b]:c.bcPtr[b+1]]
		var om, mm float64 // ‖u_g − û_g − m‖², ‖m_g‖²
		for _, j := range coords {
			m := c.shiftOf(j)
			o := c.theta[j] - c.center[j] - m
			om += o * o
			mm += m * m
		}
		c.omg[b], c.mug[b] = math.Sqrt(om), math.Sqrt(mm)
		if !c.cubicAll && (cb.al[ep]*(c.omg[b]+c.mug[b]) > cubicReach || c.pairFactor(ep, int32(b), cb.m0) > cubicCost*c.dsq[b]) {
			continue
		}
		c.cubIncl[b] = true
		on = true
		if c.growth {
			c.cubW = max(c.cubW, c.pAb[c.pPtr[0]+cb.pair[ep]]*(c.omg[b]+c.mug[b]))
		}
		q := len(coords)
		tens := cb.tens[cb.tOff[ep]:]
		kl := 0
		for k := range q {
			dk := c.theta[coords[k]] - c.center[coords[k]] - c.shiftOf(coords[k])
			for l := k; l < q; l++ {
				w := dk * (c.theta[coords[l]] - c.center[coords[l]] - c.shiftOf(coords[l]))
				if l != k {
					w *= 2
				}
				for j, t := range tens[kl*cb.p0 : (kl+1)*cb.p0] {
					c.cvec[j] += w * t
				}
				kl++
			}
		}
	}
	return on
}

// cubicFactor returns pair p = (0, b)'s factor in block 0's thinning
// rate with the cross-cubic control variate on: M_0² = mMax. Under the
// pair-wise bound (growth; em = E_0 of groupgibbs_growth.go) S₄ stands
// for A₄·e^{W + B} with A₄ = LossGrowth4 at ẑ_i (|f⁗(z)| ≤ A₄e^{|z − ẑ_i|},
// and |z − ẑ_i| = |ω + τ| ≤ W + B ≤ a_ig·P_g + a_i0·M_0 on the move), so
// each term in S₄ takes the exponential of the pair's largest W + B —
// ā_pb·P_g + ā_p0·M_0 for a group's pair (its data touch blocks 0 and g
// only), ā_p0·M_0 + max over the included groups of ā_(0,g)g·P_g (cubW,
// set by cubicShift) for (0, 0) — and a group left out, or a datum of no
// eligible pair, the growth factor it has without the control variate.
func (c *gibbsChain) cubicFactor(p int, b int32, mMax, em float64) float64 {
	cb := c.cub
	m0 := math.Sqrt(mMax)
	if b == 0 {
		if c.growth {
			return math.Max(c.growthFactor(p, 0, mMax, mMax, em), 2*cb.h*mMax+cb.r/6*mMax*m0*c.growthExp(c.pAm[p]*m0+c.cubW))
		}
		return math.Max(mMax, 2*cb.h*mMax+cb.r/6*mMax*m0)
	}
	if !c.cubIncl[b] {
		if c.growth {
			return c.growthFactor(p, 0, c.dsq[b], mMax, em)
		}
		return c.dsq[b]
	}
	if c.cubicLoose {
		return 0
	}
	return c.pairFactor(cb.of0[b], b, m0)
}

// pairFactor returns F_0b of eligible pair ep (block b) at M_0 = m0.
func (c *gibbsChain) pairFactor(ep int, b int32, m0 float64) float64 {
	cb := c.cub
	om, mu := c.omg[b], c.mug[b]
	p := om + mu
	e := 1.0
	if c.growth {
		e = c.growthExp(c.pAb[c.pPtr[0]+cb.pair[ep]]*p + c.pAm[c.pPtr[0]+cb.pair[ep]]*m0)
	}
	return (cb.al[ep]/6*p*p*p+cb.be[ep]/2*p*p*m0+cb.de[ep]/2*p*m0*m0)*e + cb.h*(2*om*om+2*om*mu+3*mu*mu)
}

// cubicTerm returns β(V_i(θ′) − V_i(θ)) = βf‴_i/2·w_i²·(z′ − z) for datum
// i at a block-0 move from linear predictor z to zn, if its group is
// included (0 otherwise); zHat is its linear predictor at the centre.
func (c *gibbsChain) cubicTerm(i int, beta, zHat, z, zn float64) (float64, error) {
	if err := c.loadRow(i); err != nil {
		return 0, err
	}
	if len(c.rb.touched) != 2 {
		return 0, nil
	}
	g := c.rb.touched[0]
	if g == 0 {
		g = c.rb.touched[1]
	}
	if !c.cubIncl[g] {
		return 0, nil
	}
	var w float64
	for q, col := range c.rb.cols {
		if c.blocks[col] == g {
			w += c.rb.vals[q] * (c.theta[col] - c.center[col] - c.shiftOf(col))
		}
	}
	f3 := c.rows.(exactmh.LossCuber).LossDeriv3(i, zHat)
	return beta * f3 / 2 * w * w * (zn - z), nil
}

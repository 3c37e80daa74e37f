// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/poisson"
)

// The shape's update by a minibatch test (docs/multilevel.md, "Negative
// binomial sweep"). Given w, −log π(ℓ | w) is, up to terms free of ℓ,
//
//	V(ℓ) = −Σ_k c_k·log(φ + k) + Yℓ + Σ_i k_i(η_i, ℓ) − log p(ℓ),
//	k_i(η, ℓ) = (y_i + e^ℓ)·sp(η − ℓ),  sp(s) = log(1 + e^s),
//
// (U_i = log Γ(φ) − log Γ(y_i + φ) + y_iℓ − y_iη + (y_i + φ)·sp(η − ℓ),
// Y = Σ_iy_i, c_k = #{i : y_i > k}): the first two terms cost O(max y).
// Each k_i has the control variate k̂_i, its third-order expansion in
// (a, b) = (η − ẑ_i, ℓ − ℓ̂) at the centre (ẑ_i, ℓ̂), of which the terms
// with b are
//
//	k_ℓb + k_ηℓab + k_ℓℓb²/2 + k_ηηℓa²b/2 + k_ηℓℓab²/2 + k_ℓℓℓb³/6,
//
// whose sum over the data at fixed w is
//
//	(A₁ + v₁ᵀΔ + ΔᵀQΔ/2)·b + (A₂ + v₂ᵀΔ)·b²/2 + A₃b³/6,  Δ = w − ŵ,
//
// A₁, A₂, A₃ the sums of k_ℓ, k_ℓℓ, k_ℓℓℓ, v₁ = Σ_ik_ηℓ,i·x_i, v₂ =
// Σ_ik_ηℓℓ,i·x_i and Q = Σ_ik_ηηℓ,i·x_ix_iᵀ (H's pattern), built once:
// O(D + nnz(H)) a shape update. (The second-order expansion leaves
// Σ_ik_ηηℓ,ia_i²b/2 to the remainder, which at N = 10⁶ is of order one,
// and the factorised test below pays for the remainders' positive parts:
// the third order keeps them small.) The remainder R_i = k_i − k̂_i has
// ∂_ℓR_i the second-order Taylor remainder of ∂_ℓk_i along the segment
// from (ẑ_i, ℓ̂), so |∂_ℓR_i(η, s)| ≤ M_i(|η − ẑ_i| + |s − ℓ̂|)³/6 with M_i
// a bound on the fourth derivatives of k_i with an ℓ there. With σ the
// logistic at η − ℓ, σ′ = σ(1 − σ), σ″ = σ′(1 − 2σ), σ‴ =
// σ′(1 − 6σ + 6σ²) (|σ″| ≤ nbK3, |σ‴| ≤ 1/8):
//
//	k_ηηηℓ = φσ″ − (y + φ)σ‴,  k_ηηℓℓ = φ(σ′ − 2σ″) + (y + φ)σ‴,
//	k_ηℓℓℓ = φ(σ − 3σ′ + 3σ″) − (y + φ)σ‴,
//	k_ℓℓℓℓ = φ(sp − 4σ + 6σ′ − 4σ″) + (y + φ)σ‴,
//
// so over the region |η − ẑ_i| ≤ rEta, |ℓ − ℓ̂| ≤ rL,
// M_i = φ₊·(6 + log 2 + (ẑ_i − ℓ̂ + rEta + rL)₊) + (y_i + φ₊)/8,
// φ₊ = φ̂e^{rL}. With |η_i − ẑ_i| ≤ Σ_b a_ib·√D_b (a_ib the row's norm on
// block b, D_b = ‖w_b − ŵ_b‖²) and (Σ_{k≤n}t_k)³ ≤ n²Σt_k³,
//
//	|R_i(η_i, ℓ′) − R_i(η_i, ℓ)| ≤ c_i = |ℓ′ − ℓ|·ω_i·(Σ_b a_ib³D_b^{3/2} + β³),
//
// ω_i = M_i(B_i + 1)²/6, β = max(|ℓ − ℓ̂|, |ℓ′ − ℓ̂|). Their sum
// |ℓ′ − ℓ|·(Σ_bD_b^{3/2}S_b + β³S_ℓ) (S_b = Σ_{i∈b}ω_ia_ib³, S_ℓ = Σ_iω_i)
// costs O(number of blocks), and a datum is drawn with probability
// c_i/Σc_i by a component (a block, or the β³ part) and that component's
// alias table, built once. The update: ℓ′ from the Newton proposal of Ṽ
// (V with Σk̂_i in place of Σk_i), accepted with probability
// min(1, e^{−ΔṼ}q(ℓ | ℓ′)/q(ℓ′ | ℓ))·Π_i min(1, e^{−ΔR_i}) (factorised
// Metropolis–Hastings; the data's factors by Poisson thinning, each drawn
// datum rejecting with probability ΔR_i/c_i) where w and both ℓ, ℓ′ are
// inside the region, with probability min(1, e^{−ΔV}q(ℓ | ℓ′)/q(ℓ′ | ℓ))
// from every datum where ℓ or ℓ′ is outside it or the rate is at least N
// (the choice symmetric in ℓ, ℓ′), and by shapeStepFull where w is outside (a choice by w alone,
// fixed in the update).
type shapeMB struct {
	lHat, phiHat, phiMax float64
	rEta, rL             float64
	wHat                 []float64
	y                    float64   // Σ_iy_i
	a1, a2, a3           float64   // Σ_ik_ℓ,i, Σ_ik_ℓℓ,i, Σ_ik_ℓℓℓ,i at the centre
	v1, v2               []float64 // Σ_ik_ηℓ,i·x_i, Σ_ik_ηℓℓ,i·x_i
	// The blocks' alias tables over their data (at the inner chain's
	// mPtr offsets, in blockData's order), their totals S_b and largest
	// a_ib; the β³ part's over all data and S_ℓ; the most blocks a row
	// touches.
	prob, probL   []float64
	alias, aliasL []int32
	sb, amax      []float64
	sL            float64
	bmax          int
	// bsMin is min_i B_iS_i over the rows that touch a block (the inner
	// chain's mismatch floor, setShape).
	bsMin float64
}

// The shape test's region: |η_i − ẑ_i| ≤ negBinREta for every datum and
// |ℓ − ℓ̂| ≤ negBinRL. Outside it the update reads every datum. M_i grows
// with rEta where ẑ_i − ℓ̂ + rEta + rL > 0, and with rL as e^{rL}.
const (
	negBinREta = 4
	negBinRL   = 0.25
)

// softplus returns log(1 + e^s).
func softplus(s float64) float64 {
	if s > 0 {
		return s + math.Log1p(math.Exp(-s))
	}
	return math.Log1p(math.Exp(s))
}

// kDerivs returns k_ℓ, k_ηℓ, k_ℓℓ, k_ηηℓ, k_ηℓℓ, k_ℓℓℓ of a datum with
// count y at μ̂ = e^{ẑ} and φ̂ (ℓ̂ = log φ̂).
func kDerivs(y, muHat, phiHat float64) (kl, kel, kll, keel, kell, klll float64) {
	f := phiHat
	r := muHat / f
	s0 := r / (1 + r)
	s1 := s0 / (1 + r)
	s2 := s1 * (1 - 2*s0)
	sp := math.Log1p(r)
	return f*sp - (y+f)*s0, f*s0 - (y+f)*s1, f*sp - 2*f*s0 + (y+f)*s1,
		f*s1 - (y+f)*s2, f*s0 - 2*f*s1 + (y+f)*s2, f*sp - 3*f*s0 + 3*f*s1 - (y+f)*s2
}

// omega returns ω_i = M_i(B_i + 1)²/6 for a datum with count y, μ̂ = e^{ẑ}
// and B blocks.
func (sm *shapeMB) omega(y, muHat float64, b int) float64 {
	s := math.Log(muHat) - sm.lHat + sm.rEta + sm.rL
	m := sm.phiMax*(6+math.Ln2+math.Max(0, s)) + (y+sm.phiMax)/8
	return m * float64((b+1)*(b+1)) / 6
}

// remainder returns R_i(η, ℓn) − R_i(η, ℓ) for a datum with count y,
// μ̂ = e^{ẑ}, linear predictor eta at w and zHat at ŵ.
func (sm *shapeMB) remainder(y, muHat, eta, zHat, l, ln float64) float64 {
	kl, kel, kll, keel, kell, klll := kDerivs(y, muHat, sm.phiHat)
	a := eta - zHat
	t := func(b float64) float64 {
		return b * (kl + kel*a + keel*a*a/2 + b*(kll/2+kell*a/2+klll*b/6))
	}
	fn, f := math.Exp(ln), math.Exp(l)
	return (y+fn)*softplus(eta-ln) - (y+f)*softplus(eta-l) - (t(ln-sm.lHat) - t(l-sm.lHat))
}

// newShapeMB builds the shape test's terms at the centre in one pass over
// the data.
func (c *negBinChain) newShapeMB(name string, centre []float64) (*shapeMB, error) {
	g := c.inner.gibbsTerms
	D := c.d - 1
	rEta, rL := float64(negBinREta), float64(negBinRL)
	if c.hooks.rEta > 0 {
		rEta = c.hooks.rEta
	}
	if c.hooks.rL > 0 {
		rL = c.hooks.rL
	}
	sm := &shapeMB{lHat: centre[D], phiHat: c.ref, phiMax: c.ref * math.Exp(rL), rEta: rEta, rL: rL,
		wHat: centre[:D:D], v1: make([]float64, D), v2: make([]float64, D), bsMin: math.Inf(1)}
	n := c.view.Len()
	nb := c.inner.nb
	total := g.mPtr[nb]
	sm.prob, sm.alias = make([]float64, total), make([]int32, total)
	sm.probL, sm.aliasL = make([]float64, n), make([]int32, n)
	sm.sb, sm.amax = make([]float64, nb), make([]float64, nb)
	y := c.sc.y
	var rb rowBlocks
	rb.init(c.inner.blocks)
	for i := range n {
		if err := rb.load(name, c.view, c.inner.blocks, "the prior's Blocks", i); err != nil {
			return nil, err
		}
		mu := c.muHat[i]
		kl, kel, kll, _, kell, klll := kDerivs(y[i], mu, sm.phiHat)
		sm.y += y[i]
		sm.a1 += kl
		sm.a2 += kll
		sm.a3 += klll
		for q, col := range rb.cols {
			sm.v1[col] += kel * rb.vals[q]
			sm.v2[col] += kell * rb.vals[q]
		}
		om := sm.omega(y[i], mu, len(rb.touched))
		if !(om >= 0) || math.IsInf(om, 0) || math.IsNaN(kl+kel+kll+kell+klll) {
			return nil, fmt.Errorf("%s: datum %d at the centre: the shape test's weight %v, derivatives %v, %v, %v, %v, %v, want finite", name, i, om, kl, kel, kll, kell, klll)
		}
		sm.probL[i] = om
		var s float64
		for q, b := range rb.touched {
			a := rb.norms[q]
			s += a * a
			sm.prob[g.mPtr[b]+g.dataPos(b, i)] = om * a * a * a
			sm.amax[b] = math.Max(sm.amax[b], a)
		}
		if s > 0 {
			sm.bsMin = math.Min(sm.bsMin, float64(len(rb.touched))*s)
		}
		sm.bmax = max(sm.bmax, len(rb.touched))
	}
	for b := range nb {
		lo, hi := g.mPtr[b], g.mPtr[b+1]
		if hi == lo {
			continue
		}
		var s float64
		for _, w := range sm.prob[lo:hi] {
			s += w
		}
		if !(s > 0) {
			continue
		}
		t, err := alias.Build(sm.prob[lo:hi], sm.alias[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("%s: the shape test's block %d: %w", name, b, err)
		}
		sm.sb[b] = t
	}
	t, err := alias.Build(sm.probL, sm.aliasL)
	if err != nil {
		return nil, fmt.Errorf("%s: the shape test's table: %w", name, err)
	}
	sm.sL = t
	if math.IsInf(sm.bsMin, 1) {
		sm.bsMin = 1 // no row moves with w: the mismatch floor is never used
	}
	return sm, nil
}

// drawFrom draws a position of the alias table prob, alias.
func drawFrom(rng *rand.Rand, prob []float64, alias []int32) int {
	r := rng.IntN(len(prob))
	if rng.Float64() >= prob[r] {
		r = int(alias[r])
	}
	return r
}

// cvVals returns Ṽ, Ṽ′, Ṽ″ at l without the prior: the exact O(max y)
// terms and the control variate's sums, c1 = v₁ᵀΔ + ΔᵀQΔ/2, c2 = v₂ᵀΔ.
func (c *negBinChain) cvVals(l, c1, c2 float64) shapeVals {
	sm := c.sm
	f := math.Exp(l)
	lk, d1k, d2k := c.sc.countSums(f)
	b := l - sm.lHat
	p1, p2 := sm.a1+c1, sm.a2+c2
	return shapeVals{
		v:  -lk + sm.y*l + p1*b + p2*b*b/2 + sm.a3*b*b*b/6,
		d1: -f*d1k + sm.y + p1 + p2*b + sm.a3*b*b/2,
		d2: -f*d1k + f*f*d2k + p2 + sm.a3*b,
	}
}

// shapePrep sets D_b (dsq) and Δ = w − ŵ (dw) at the chain's w and
// returns the control variate's c1 = v₁ᵀΔ + ΔᵀQΔ/2 and c2 = v₂ᵀΔ and the
// reach Σ (the bmax largest amax_b·√D_b) ≥ max_i |η_i − ẑ_i|.
func (c *negBinChain) shapePrep() (c1, c2, reach float64) {
	sm := c.sm
	D := c.d - 1
	w := c.theta[:D]
	clear(c.dsq)
	dw := c.dw
	for j, b := range c.inner.blocks {
		dj := w[j] - sm.wHat[j]
		dw[j] = dj
		c1 += sm.v1[j] * dj
		c2 += sm.v2[j] * dj
		if b >= 0 {
			c.dsq[b] += dj * dj
		}
	}
	g := c.inner.gibbsTerms
	var qq float64
	for r := range D {
		var s float64
		for p := g.hPtr[r]; p < g.hPtr[r+1]; p++ {
			s += c.q[p] * dw[g.hCol[p]]
		}
		qq += dw[r] * s
	}
	c1 += qq / 2
	if c.hooks.noCross {
		c1 = 0
	}
	// |η_i − ẑ_i| ≤ Σ_{b∈row i} a_ib·√D_b ≤ the sum of the bmax largest
	// amax_b·√D_b.
	top := c.cum[:sm.bmax]
	clear(top)
	for b, dq := range c.dsq {
		t := sm.amax[b] * math.Sqrt(dq)
		for k := range top {
			if t > top[k] {
				top[k], t = t, top[k]
			}
		}
	}
	for _, t := range top {
		reach += t
	}
	return c1, c2, reach
}

// shapeRate fills cum with the components' cumulative weights and
// returns the thinning rate Σ_ic_i of ℓ → ln and the weights' total.
func (c *negBinChain) shapeRate(l, ln float64) (rate, total float64) {
	sm := c.sm
	bb := math.Max(math.Abs(l-sm.lHat), math.Abs(ln-sm.lHat))
	for b, dq := range c.dsq {
		if !(c.hooks.dropBlock && b == 1) {
			total += dq * math.Sqrt(dq) * sm.sb[b]
		}
		c.cum[b] = total
	}
	total += bb * bb * bb * sm.sL
	c.cum[len(c.dsq)] = total
	return total * math.Abs(ln-l), total
}

// datumBound returns datum i's c_i for ℓ → ln, its row loaded in rb.
func (c *negBinChain) datumBound(i int, l, ln float64) (float64, error) {
	sm := c.sm
	if err := c.rb.load("GroupGibbs", c.view, c.inner.blocks, "the prior's Blocks", i); err != nil {
		return 0, err
	}
	var s float64
	for q, b := range c.rb.touched {
		a := c.rb.norms[q]
		s += a * a * a * c.dsq[b] * math.Sqrt(c.dsq[b])
	}
	bb := math.Max(math.Abs(l-sm.lHat), math.Abs(ln-sm.lHat))
	return math.Abs(ln-l) * sm.omega(c.sc.y[i], c.muHat[i], len(c.rb.touched)) * (s + bb*bb*bb), nil
}

// shapeStep updates ℓ = log φ given w (shapeMB's comment): by the
// minibatch test where w is inside its region, else by shapeStepFull.
func (c *negBinChain) shapeStep(rng *rand.Rand) (bool, error) {
	sm := c.sm
	D := c.d - 1
	w := c.theta[:D]
	c1, c2, reach := c.shapePrep()
	if !(reach <= sm.rEta) {
		return c.shapeStepFull(rng)
	}
	l, lNew, logR, ok := c.shapeProposal(rng, func(l float64) shapeVals { return c.cvVals(l, c1, c2) })
	if !ok {
		return false, nil
	}
	y := c.sc.y
	n := c.view.Len()
	rate, total := c.shapeRate(l, lNew)
	if math.Abs(l-sm.lHat) > sm.rL || math.Abs(lNew-sm.lHat) > sm.rL || !(rate < float64(n)) {
		// Every datum's remainder, exactly: outside the region, or where
		// the thinning would draw more than N (both symmetric in ℓ, ℓ′).
		var sum float64
		for lo := 0; lo < n; lo += chunk {
			if err := c.t.Interrupted(); err != nil {
				return false, err
			}
			for i := lo; i < min(lo+chunk, n); i++ {
				eta, zHat := c.view.LinearPredictors(i, w, sm.wHat)
				sum += sm.remainder(y[i], c.muHat[i], eta, zHat, l, lNew)
			}
		}
		c.t.Count(n)
		c.read += n
		c.full++
		if !(logR-sum >= 0 || rng.Float64() < math.Exp(logR-sum)) {
			return false, nil
		}
		c.accept(lNew)
		return true, nil
	}
	if !(logR >= 0 || rng.Float64() < math.Exp(logR)) {
		return false, nil
	}
	// The data's factors by Poisson thinning.
	g := c.inner.gibbsTerms
	if err := poisson.Check(rate); err != nil {
		return false, err
	}
	draws := poisson.Draw(rng, rate)
	for k := range draws {
		comp := sort.SearchFloat64s(c.cum, (1-rng.Float64())*total)
		var i int
		if comp >= len(c.dsq) {
			i = drawFrom(rng, sm.probL, sm.aliasL)
		} else {
			lo, hi := g.mPtr[comp], g.mPtr[comp+1]
			i = g.datum(int32(comp), drawFrom(rng, sm.prob[lo:hi], sm.alias[lo:hi]))
		}
		c.t.Count(1)
		ci, err := c.datumBound(i, l, lNew)
		if err != nil {
			return false, err
		}
		eta, zHat := c.view.LinearPredictors(i, w, sm.wHat)
		rd := sm.remainder(y[i], c.muHat[i], eta, zHat, l, lNew)
		if math.Abs(rd) > ci*(1+boundTol)+1e-12*(1+y[i])*math.Abs(lNew-l) {
			c.read += k + 1
			return false, fmt.Errorf("GroupGibbs: the shape's update ℓ %v → %v: datum %d's remainder difference %v exceeds its bound %v", l, lNew, i, rd, ci)
		}
		if rng.Float64()*ci < rd {
			c.read += k + 1
			return false, nil
		}
	}
	c.read += draws
	c.accept(lNew)
	return true, nil
}

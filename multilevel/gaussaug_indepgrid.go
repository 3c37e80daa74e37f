// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"errors"
	"math"
	"math/rand/v2"
)

// The grid of the Laplace independence move with one scale (indepGrid):
// indepGridNodes nodes evenly over ℓ̂ ± indepGridHalf standard deviations
// of the Laplace marginal (S before its inflation), indepGridNewton
// Newton steps at each node from its neighbour's conditional mode, and
// the share indepGridT of q_ℓ left to the t of the move without a grid
// (its polynomial tails beyond the grid and under it).
const (
	indepGridNodes  = 33
	indepGridHalf   = 8
	indepGridNewton = 2
	indepGridT      = 0.1
)

// indepGrid is the Laplace independence move's proposal of a model of one
// log scale ℓ, a deterministic function of the data and the centre built
// once at the start (buildGrid), never adapted. At the nodes ℓ_j = lo +
// j·h it holds the likelihood's second-order expansion (M₀_j, b₀_j) at the
// conditional mode of w given ℓ_j (Newton from the neighbouring node) and
// the Laplace log marginal f_j = log π(ℓ_j, m_j) − U(m_j) − ½log det P_j.
// The proposal is
//
//	q(ℓ, w) = q_ℓ(ℓ) · t_νW(w; m(ℓ), P(ℓ)⁻¹),
//	q_ℓ = (1 − ε)·p̃ + ε·t_νL(ℓ̂, S),
//
// p̃ the density whose log is linear between nodes through the f_j
// (normalised on [ℓ_0, ℓ_{G−1}], zero outside), ε = indepGridT, and m(ℓ),
// P(ℓ) update 2's conditional at ℓ with the expansion interpolated
// linearly between the two nodes about ℓ (the end node's outside): every
// piece a function of ℓ alone, the same in the draw and in the density,
// so the move stays Tierney's exact independence sampler; the t share
// keeps the weights bounded (indepMove).
type indepGrid struct {
	lo, h float64
	// mVal, b0: node j's expansion at [j·len : (j+1)·len]; f: the
	// normalised log p̃ at the nodes; cum: p̃'s mass up to the end of each
	// segment (the last 1).
	mVal, b0 []float64
	f, cum   []float64
	// The t's scale and log normalising constant.
	tScale, tNorm float64
}

// buildGrid sets the chain's grid (indepMove.grid) about the fitted mode
// ℓ̂ of its one log scale; x holds ℓ̂ and w at m(ℓ̂) (indepFit), and is
// left at the last node. M₀ and b₀ are the joint Laplace point's again on
// return. On a node where P is singular or the marginal not finite, no
// grid (the move of indepMove alone).
func (c *augChain) buildGrid(x []float64, pt pairTab) error {
	ind := c.ind
	if len(ind.lt) != 1 {
		return errors.New("a grid needs one log scale")
	}
	saveM := append([]float64(nil), ind.mVal...)
	saveB := append([]float64(nil), ind.b0...)
	defer func() {
		copy(ind.mVal, saveM)
		copy(ind.b0, saveB)
		copy(c.m.Val, saveM)
		copy(c.b, saveB)
	}()
	jl := ind.lt[0]
	s := ind.sL[0]
	sd := s / math.Sqrt(indepInflate)
	const n = indepGridNodes
	nm, nb := len(ind.mVal), len(ind.b0)
	g := &indepGrid{lo: ind.mode[0] - indepGridHalf*sd, h: 2 * indepGridHalf * sd / (n - 1),
		mVal: make([]float64, n*nm), b0: make([]float64, n*nb), f: make([]float64, n), cum: make([]float64, n-1),
		tScale: s}
	nu := float64(indepNuL)
	lg1, _ := math.Lgamma((nu + 1) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	g.tNorm = lg1 - lg2 - 0.5*math.Log(nu*math.Pi) - math.Log(s)
	node := func(j int) error {
		x[jl] = g.lo + float64(j)*g.h
		for range indepGridNewton {
			c.expandAt(x, pt)
			if _, err := c.laplaceAt(x); err != nil {
				return err
			}
		}
		c.expandAt(x, pt)
		f, err := c.laplaceAt(x)
		if err != nil {
			return err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("the Laplace marginal is not finite on the grid")
		}
		copy(g.mVal[j*nm:(j+1)*nm], ind.mVal)
		copy(g.b0[j*nb:(j+1)*nb], ind.b0)
		g.f[j] = f
		return nil
	}
	w0 := append([]float64(nil), x...)
	mid := (n - 1) / 2
	for j := mid; j < n; j++ {
		if err := node(j); err != nil {
			return err
		}
	}
	copy(x, w0)
	for j := mid - 1; j >= 0; j-- {
		if err := node(j); err != nil {
			return err
		}
	}
	top := math.Inf(-1)
	for _, v := range g.f {
		top = max(top, v)
	}
	var z float64
	for j := range n - 1 {
		z += g.h * math.Exp(g.f[j]-top) * expm1Ratio(g.f[j+1]-g.f[j])
		g.cum[j] = z
	}
	for j := range g.cum {
		g.cum[j] /= z
	}
	g.cum[n-2] = 1
	lz := top + math.Log(z)
	for j := range g.f {
		g.f[j] -= lz
	}
	ind.grid = g
	return nil
}

// expm1Ratio returns (e^d − 1)/d, 1 at d = 0: the mass of e^{d·a} over
// a ∈ [0, 1].
func expm1Ratio(d float64) float64 {
	if math.Abs(d) < 1e-12 {
		return 1
	}
	return math.Expm1(d) / d
}

// cellOf returns the segment j of ℓ (clamped to the grid's) and ℓ's
// place a = (ℓ − ℓ_j)/h in it, clamped to [0, 1].
func (g *indepGrid) cellOf(l float64) (int, float64) {
	u := (l - g.lo) / g.h
	last := len(g.f) - 2
	switch {
	case !(u > 0): // NaN too
		return 0, 0
	case u >= float64(last+1):
		return last, 1
	}
	j := min(int(u), last)
	return j, u - float64(j)
}

// gridExpand sets the chain's M and b (swapped in: indep) to the expansion at
// ℓ, linear between the nodes about it.
func (c *augChain) gridExpand(l float64) {
	g := c.ind.grid
	j, a := g.cellOf(l)
	nm, nb := len(c.m.Val), len(c.b)
	m0, m1 := g.mVal[j*nm:(j+1)*nm], g.mVal[(j+1)*nm:(j+2)*nm]
	m1 = m1[:len(m0)]
	mv := c.m.Val[:len(m0)]
	for i, v := range m0 {
		mv[i] = v + a*(m1[i]-v)
	}
	b0, b1 := g.b0[j*nb:(j+1)*nb], g.b0[(j+1)*nb:(j+2)*nb]
	b1 = b1[:len(b0)]
	bv := c.b[:len(b0)]
	for i, v := range b0 {
		bv[i] = v + a*(b1[i]-v)
	}
}

// draw returns ℓ ~ q_ℓ: the t with probability indepGridT, else p̃ (its
// segment by its mass, then the inverse of the segment's exponential
// distribution function).
func (g *indepGrid) draw(rng *rand.Rand, mode float64) float64 {
	if rng.Float64() < indepGridT {
		gl := math.Sqrt(gammaDraw(rng, indepNuL/2) / (indepNuL / 2))
		return mode + g.tScale*rng.NormFloat64()/gl
	}
	u := rng.Float64()
	lo, hi := 0, len(g.cum)-1
	for lo < hi { // the first segment whose cum ≥ u
		m := (lo + hi) / 2
		if g.cum[m] < u {
			lo = m + 1
		} else {
			hi = m
		}
	}
	d := g.f[lo+1] - g.f[lo]
	v := rng.Float64()
	a := v
	if math.Abs(d) >= 1e-12 {
		a = math.Log1p(v*math.Expm1(d)) / d
	}
	return g.lo + (float64(lo)+min(max(a, 0), 1))*g.h
}

// logQ returns log q_ℓ(ℓ), normalised; cell (the mutant indep-cell) reads
// p̃ on the neighbouring segment's line instead of ℓ's own.
func (g *indepGrid) logQ(l, mode float64, cell bool) float64 {
	z := (l - mode) / g.tScale
	lt := math.Log(indepGridT) + g.tNorm - 0.5*(indepNuL+1)*math.Log1p(z*z/indepNuL)
	if !(l >= g.lo && l <= g.lo+float64(len(g.f)-1)*g.h) {
		return lt
	}
	j, a := g.cellOf(l)
	if cell {
		if j+1 < len(g.f)-1 {
			j++
		} else {
			j--
		}
	}
	lp := math.Log1p(-indepGridT) + g.f[j] + a*(g.f[j+1]-g.f[j])
	hi, lo := max(lp, lt), min(lp, lt)
	return hi + math.Log1p(math.Exp(lo-hi))
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/sparse"
)

// The grid of the Laplace independence move with one scale (indepGrid):
// indepGridNodes nodes evenly over ℓ̂ ± indepGridHalf standard deviations
// of the Laplace marginal (S before its inflation), a quarter of one
// apart: there a cell's (m, P) held constant loses no acceptance against
// (m, P) interpolated between nodes (contraception: 0.78 and 0.76; half
// a standard deviation apart 0.74); indepGridNewton Newton steps at each
// node from its neighbour's conditional mode before the last (one: the
// same draws as two; none: acceptance 0.77); and the share indepGridT of
// q_ℓ left to the t of the move without a grid (its polynomial tails
// beyond the grid and under it).
const (
	indepGridNodes  = 49
	indepGridHalf   = 6
	indepGridNewton = 1
	indepGridT      = 0.1
)

// indepGrid is the Laplace independence move's proposal of a model of one
// log scale ℓ, a deterministic function of the data and the centre built
// once at the start (buildGrid), never adapted. At each node ℓ_j = lo +
// j·h it holds the Laplace approximation of w given ℓ_j: the conditional
// mode m_j (Newton from the neighbouring node's; the last step is update
// 2's conditional with the likelihood's expansion at the previous
// iterate), the precision P_j (its values and sparse factor) and the
// Laplace log marginal f_j = log π(ℓ_j, m_j) − U(m_j) − ½log det P_j. The
// proposal is
//
//	q(ℓ, w) = q_ℓ(ℓ) · t_νW(w; m_{j(ℓ)}, P_{j(ℓ)}⁻¹),
//	q_ℓ = (1 − ε)·p̃ + ε·t_νL(ℓ̂, S),
//
// j(ℓ) the node nearest ℓ (the end node's beyond the grid), p̃ the
// density whose log is linear between nodes through the f_j (normalised
// on [ℓ_0, ℓ_{G−1}], zero outside) and ε = indepGridT: a function of ℓ
// alone in every piece, the same in the draw and in the density, so the
// move stays Tierney's exact independence sampler (TestLogitIndepMoments,
// TestLogitIndepSBC, the mutants indep-cell and indep-node caught), and
// no factorisation a move; the t share keeps the weights bounded
// (indepMove).
type indepGrid struct {
	lo, h float64
	// Node j's conditional mode at mean[j·E : (j+1)·E] (E effects), its
	// precision, factor and log det; f: the normalised log p̃ at the
	// nodes; cum: p̃'s mass up to the end of each segment (the last 1).
	mean []float64
	prec []*sparse.SymCSC
	chol []*sparse.Cholesky
	ld   []float64
	f    []float64
	cum  []float64
	// The t's scale and log normalising constant.
	tScale, tNorm float64
}

// buildGrid sets the chain's grid (indepMove.grid) about the fitted mode
// ℓ̂ of its one log scale; x holds ℓ̂ and w at m(ℓ̂) (indepFit), and is
// left at the last node. M₀ and b₀ are the joint Laplace point's again on
// return. An error (P singular at a node, the marginal not finite) leaves
// the move without a grid (indepFit).
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
	ne := len(c.eff)
	g := &indepGrid{lo: ind.mode[0] - indepGridHalf*sd, h: 2 * indepGridHalf * sd / (n - 1),
		mean: make([]float64, n*ne), prec: make([]*sparse.SymCSC, n), chol: make([]*sparse.Cholesky, n),
		ld: make([]float64, n), f: make([]float64, n), cum: make([]float64, n-1), tScale: s}
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
		f, err := c.laplaceAt(x) // c.pv, chol2 and mean2 at ℓ_j
		if err != nil {
			return err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("the Laplace marginal is not finite on the grid")
		}
		p := &sparse.SymCSC{N: c.pv.N, ColPtr: c.pv.ColPtr, RowIdx: c.pv.RowIdx, Val: slices.Clone(c.pv.Val)}
		ch, err := c.chol2.Symbolic().Factor(p)
		if err != nil {
			return err
		}
		copy(g.mean[j*ne:(j+1)*ne], c.mean2)
		g.prec[j], g.chol[j], g.ld[j], g.f[j] = p, ch, ch.LogDet(), f
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

// node returns the node nearest ℓ, clamped to the grid's.
func (g *indepGrid) node(l float64) int {
	u := (l - g.lo) / g.h
	last := len(g.f) - 1
	switch {
	case !(u > 0): // NaN too
		return 0
	case u >= float64(last):
		return last
	}
	return min(int(u+0.5), last)
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

// qW sets c.dz to θ's w − m_j and returns log t_νW(w; m_j, P_j⁻¹) up to a
// constant (logQW), j the node of θ's ℓ or, for the mutant indep-node,
// its neighbour.
func (c *augChain) qW(theta []float64) float64 {
	g := c.ind.grid
	j := g.node(theta[c.ind.lt[0]])
	if c.ah.indep.node {
		if j+1 < len(g.f) {
			j++
		} else {
			j--
		}
	}
	ne := len(c.eff)
	m := g.mean[j*ne : (j+1)*ne]
	dz := c.dz[:len(m)]
	for a, k := range c.eff {
		dz[a] = theta[k] - m[a]
	}
	return logQW(g.ld[j], g.prec[j].Quad(c.dz, c.zeroEff), ne)
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

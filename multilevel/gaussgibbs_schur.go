// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/sparse"
)

// schurMaxGroups bounds the distinct diagonals of an eliminated term's
// levels: each group keeps one matrix on the reduced pattern.
const schurMaxGroups = 16

// schur is update 1's draw of w ~ N(P⁻¹r, P⁻¹) with the levels E of one
// random intercept term eliminated, where M is fixed (the probit
// augmentation's XᵀX). No datum holds two levels of one term, so P's
// block on E is diagonal, d_a = P_aa, and with P_Ea = ms·v_a (v_a the
// level's column of M off E) the marginal of the rest R is Gaussian with
// precision the Schur complement
//
//	S = P_RR − Σ_{a∈E} ms² v_a v_aᵀ / d_a = P_RR − Σ_g (ms²/d_g) H_g,
//
// H_g = Σ_{a∈g} v_a v_aᵀ summed once at the start over each group g of
// levels with the same diagonal (d_a = P⁰_aa + ms·M_aa + τ⁻², the same
// for all levels with the same P⁰_aa and M_aa: a mother's count of
// children), and mean S⁻¹(r_R − Σ_a ms·v_a r_a/d_a); then each eliminated
// effect given w_R is N((r_a − ms·v_aᵀw_R)/d_a, 1/d_a). That is the joint
// Gaussian draw factored as p(w_R) p(w_E | w_R): the same distribution as
// the draw through P's factor (TestSchurMatchesFull checks S and the
// mean against the dense Schur complement and P⁻¹r, and the kit's
// TestAugmentMoments the chain, with the mutant schur-cond), at the cost
// of S's factor: the refactorisation of P each sweep is most of update 1
// on a model of many small levels (guimmun: 1,595 mothers of 1–3
// children, P of order 1,774 against S of order 179).
type schur struct {
	elim   []int // the eliminated positions of eff
	red    []int // reduced index → position of eff
	redJ   []int // reduced index → θ's coordinate
	grp    []int // per eliminated level: its group
	tau    int   // the term's log scale coordinate
	gDiag  []int // per group: P's diagonal entry at its first level (d_g)
	vPtr   []int // per eliminated level k: its entries vRow, vVal in [vPtr[k], vPtr[k+1])
	vRow   []int
	vVal   []float64
	s      *sparse.SymCSC
	sFrom  []int // per entry of S: P's entry on R × R with its value, or −1 (fill of the H_g)
	hPos   [][]int
	hVal   [][]float64
	chol   *sparse.Cholesky
	d      []float64 // per group: d_g at this sweep's scales
	rhs    []float64
	mean   []float64
	xi     []float64
	work   []float64
	noCond bool // mutant schur-cond: the eliminated effects drawn without −ms·v_aᵀw_R
}

// startSchur sets c.schur where eliminating one term's levels makes
// update 1's factorisation at least twice cheaper (by FactorFlops and the
// per-sweep sums), M's values are fixed (the caller's word: true of the
// probit augmentation, not of the logistic one) and no correlated factor
// adds to P. It chooses the cheapest term; nil where none qualifies.
func (c *gaussChain) startSchur() error {
	if len(c.corr) > 0 {
		return nil
	}
	pv := c.pv
	ne := pv.N
	mAt := make([]float64, pv.NNZ())
	for k, p := range c.mPos {
		mAt[p] += c.m.Val[c.mK[k]]
	}
	old := c.chol.Symbolic().FactorFlops()
	var best *schur
	bestCost := old / 2
	for _, tm := range c.terms {
		s, cost := c.trySchur(tm, mAt, ne, bestCost)
		if s != nil && cost < bestCost {
			best, bestCost = s, cost
		}
	}
	if best == nil {
		return nil
	}
	sym, err := sparse.Analyze(best.s, nil)
	if err != nil {
		return err
	}
	c.schur = best
	if err := c.fill(); err != nil {
		return err
	}
	c.schurValues()
	best.chol, err = sym.Factor(best.s) // S at θ's scales
	return err
}

// trySchur builds term tm's elimination and returns it with its cost per
// sweep (FactorFlops of S, the groups' sums, the levels' entries), or nil
// where it does not qualify or its outer products alone exceed limit
// (before S's pattern is built: a level of many rows across a crossed
// factor would fill S densely).
func (c *gaussChain) trySchur(tm gaussTerm, mAt []float64, ne int, limit float64) (*schur, float64) {
	pv := c.pv
	pos := make([]int, ne) // position → reduced index, or −(k+1) for the k-th eliminated
	var s schur
	s.tau = tm.logTau
	inE := make([]bool, ne)
	effPos := make(map[int]int, len(c.eff))
	for a, j := range c.eff {
		effPos[j] = a
	}
	for g := range tm.levels {
		a, ok := effPos[tm.start+g*tm.stride]
		if !ok || c.tauOf[a] != tm.logTau || c.corrEff[a] {
			return nil, 0
		}
		inE[a] = true
		s.elim = append(s.elim, a)
	}
	if len(s.elim) < 2 {
		return nil, 0
	}
	for a := range ne {
		if inE[a] {
			continue
		}
		pos[a] = len(s.red)
		s.red = append(s.red, a)
		s.redJ = append(s.redJ, c.eff[a])
	}
	for k, a := range s.elim {
		pos[a] = -(k + 1)
	}
	nr := len(s.red)
	// E's block diagonal, nothing but M off it, and each level's column:
	// P's entries off its diagonal, with the reduced index of their
	// other end.
	colOf := make([]int, pv.NNZ())
	cols := make([][][2]int, len(s.elim))
	diag := make([]int, len(s.elim))
	for j := range ne {
		for p := pv.ColPtr[j]; p < pv.ColPtr[j+1]; p++ {
			colOf[p] = j
			i := pv.RowIdx[p]
			switch {
			case i == j && inE[i]:
				diag[-pos[i]-1] = p
			case inE[i] && inE[j]:
				return nil, 0
			case inE[i] || inE[j]:
				if c.pBase[p] != 0 {
					return nil, 0
				}
				a, o := i, j
				if inE[j] {
					a, o = j, i
				}
				cols[-pos[a]-1] = append(cols[-pos[a]-1], [2]int{p, pos[o]})
			}
		}
	}
	// Groups by the diagonal's fixed parts.
	type key struct{ base, m float64 }
	gOf := map[key]int{}
	s.grp = make([]int, len(s.elim))
	for k := range s.elim {
		q := key{c.pBase[diag[k]], mAt[diag[k]]}
		g, ok := gOf[q]
		if !ok {
			if len(gOf) == schurMaxGroups {
				return nil, 0
			}
			g = len(gOf)
			gOf[q] = g
			s.gDiag = append(s.gDiag, diag[k])
		}
		s.grp[k] = g
	}
	var outer float64
	for k := range s.elim {
		v := float64(len(cols[k]))
		outer += v * (v + 1) / 2
	}
	if outer > limit {
		return nil, 0
	}
	// Each level's v_a (reduced rows, M's values) and S's pattern.
	tr := sparse.NewTriplet(nr)
	for r := range nr {
		tr.Add(r, r, 0)
	}
	for j := range ne {
		for p := pv.ColPtr[j]; p < pv.ColPtr[j+1]; p++ {
			if i := pv.RowIdx[p]; !inE[i] && !inE[j] {
				tr.Add(max(pos[i], pos[j]), min(pos[i], pos[j]), 0)
			}
		}
	}
	s.vPtr = make([]int, len(s.elim)+1)
	for k := range s.elim {
		for _, e := range cols[k] {
			s.vRow = append(s.vRow, e[1])
			s.vVal = append(s.vVal, mAt[e[0]])
		}
		s.vPtr[k+1] = len(s.vRow)
		for x := s.vPtr[k]; x < s.vPtr[k+1]; x++ {
			for y := s.vPtr[k]; y <= x; y++ {
				r1, r2 := s.vRow[x], s.vRow[y]
				tr.Add(max(r1, r2), min(r1, r2), 0)
			}
		}
	}
	sm, err := tr.SymCSC()
	if err != nil {
		return nil, 0
	}
	s.s = sm
	sym, err := sparse.Analyze(sm, nil)
	if err != nil {
		return nil, 0
	}
	// Where each entry of S takes P's value from.
	s.sFrom = make([]int, sm.NNZ())
	for q := range s.sFrom {
		s.sFrom[q] = -1
	}
	for j := range ne {
		for p := pv.ColPtr[j]; p < pv.ColPtr[j+1]; p++ {
			if i := pv.RowIdx[p]; !inE[i] && !inE[j] {
				s.sFrom[entry(sm, max(pos[i], pos[j]), min(pos[i], pos[j]))] = p
			}
		}
	}
	// H_g on S's pattern, kept sparse.
	ng := len(s.gDiag)
	if sym.FactorFlops() > limit {
		return nil, 0
	}
	h := make([][]float64, ng)
	for g := range h {
		h[g] = make([]float64, sm.NNZ())
	}
	for k := range s.elim {
		hg := h[s.grp[k]]
		for x := s.vPtr[k]; x < s.vPtr[k+1]; x++ {
			for y := s.vPtr[k]; y <= x; y++ {
				r1, r2 := s.vRow[x], s.vRow[y]
				hg[entry(sm, max(r1, r2), min(r1, r2))] += s.vVal[x] * s.vVal[y]
			}
		}
	}
	s.hPos, s.hVal = make([][]int, ng), make([][]float64, ng)
	cost := sym.FactorFlops() + float64(2*len(s.vRow))
	for g, hg := range h {
		for p, v := range hg {
			if v != 0 {
				s.hPos[g] = append(s.hPos[g], p)
				s.hVal[g] = append(s.hVal[g], v)
			}
		}
		cost += float64(len(s.hPos[g]))
	}
	s.d = make([]float64, ng)
	s.rhs, s.mean, s.xi, s.work = make([]float64, nr), make([]float64, nr), make([]float64, nr), make([]float64, nr)
	return &s, cost
}

// drawSchur sets c.next's effects to a draw of update 1's conditional at
// θ's scales through S (schur): w_R then each eliminated w_a given w_R.
// c.rhs is left at the conditional's right-hand side r.
func (c *gaussChain) drawSchur(rng *rand.Rand) error {
	s := c.schur
	if err := c.schurFactor(); err != nil {
		return err
	}
	c.schurMean()
	s.chol.NormalInto(rng, s.xi)
	for r, j := range s.redJ {
		c.next[j] = s.mean[r] + s.xi[r]
	}
	ms := c.beta * math.Exp(-2*c.logSigma())
	for k, a := range s.elim {
		d := s.d[s.grp[k]]
		v := c.rhs[a]
		if !s.noCond {
			for q := s.vPtr[k]; q < s.vPtr[k+1]; q++ {
				v -= ms * s.vVal[q] * c.next[s.redJ[s.vRow[q]]]
			}
		}
		c.next[c.eff[a]] = v/d + rng.NormFloat64()/math.Sqrt(d)
	}
	return nil
}

// schurFactor sets P's values at θ's scales (fill), S's and each group's
// d_g from them (schurValues), and refactors S.
func (c *gaussChain) schurFactor() error {
	if err := c.fill(); err != nil {
		return err
	}
	c.schurValues()
	return c.schur.chol.Refactor(c.schur.s)
}

// schurValues sets S = P_RR − Σ_g (ms²/d_g) H_g and d_g from P's values
// as fill last set them: P_RR's entries copied, d_g read at the group's
// first level's diagonal.
func (c *gaussChain) schurValues() {
	s := c.schur
	ms := c.beta * math.Exp(-2*c.logSigma())
	sv, pv := s.s.Val, c.pv.Val
	for q, p := range s.sFrom {
		sv[q] = 0
		if p >= 0 {
			sv[q] = pv[p]
		}
	}
	for g, p := range s.gDiag {
		d := pv[p]
		s.d[g] = d
		f := ms * ms / d
		for q, x := range s.hPos[g] {
			sv[x] -= f * s.hVal[g][q]
		}
	}
}

// schurMean sets c.rhs to r and s.mean to w_R's marginal mean
// S⁻¹(r_R − Σ_a ms·v_a r_a/d_a), S factored at θ's scales.
func (c *gaussChain) schurMean() {
	s := c.schur
	ms := c.beta * math.Exp(-2*c.logSigma())
	c.condRHS()
	for r, a := range s.red {
		s.rhs[r] = c.rhs[a]
	}
	for k, a := range s.elim {
		t := ms * c.rhs[a] / s.d[s.grp[k]]
		for q := s.vPtr[k]; q < s.vPtr[k+1]; q++ {
			s.rhs[s.vRow[q]] -= s.vVal[q] * t
		}
	}
	s.chol.Solve(s.mean, s.rhs, s.work)
}

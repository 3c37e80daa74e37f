// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"

	"github.com/exactmh/exactmh/internal/alias"
)

// Crossed designs: the group partners of a group block by class.
//
// GroupGibbs's thinning bound for block m's update is, datum by datum,
// φ_i = K_i·a_im·Σ_b a_ib²·F_b over the blocks b the row touches (phi),
// drawn through one alias table per pair (m, b) weighted K_i·a_im·a_ib²,
// at rate Σ_b S_mb·F_b. On two crossed factors (users × items) a user's
// rows meet hundreds of items: the pairs are the distinct user–item
// pairs, up to one per row, each with its own table, its entry in a map
// from (m, b) while the tables are built, and a term of every update's
// rate — O(N) pairs, memory and work a sweep.
//
// Above crossMinN data (or with the crossAgg test hook) the group
// partners b ≠ m of a group block m are taken by class instead: a class
// κ holds the group blocks whose information tr H_bb at the centre is
// within a factor √2 (crossClass), so their deviations ‖Δ_b‖² are of one
// scale. The pair (m, κ) — partner nb + κ — has one table over m's data
// weighted K_i·a_im·Σ_{b∈κ, b≠m} a_ib², and its factor is the class's
// largest, F_κ = max_{b∈κ} F_b (m's own F_m = max(‖Δ_m‖², ‖Δ′_m‖²) when
// m ∈ κ: the maximum is then the same for the move and its reverse, so
// the choice between the exact read and thinning stays symmetric). A
// datum is then drawn with probability φ̄_i/Σφ̄ where
//
//	φ̄_i = K_i·a_im·Σ_b a_ib²·F̄_mb,  F̄_mb = F_κ(b) for a group b ≠ m, else F_b,
//
// and its thinning test must use φ̄_i — the thinning correction: the
// factorised test accepts with Π_i e^{−max(0, r_i)} whatever bound
// φ̄_i ≥ |r_i| its Poisson process is drawn at, as long as the test's
// bound is the one the datum was drawn with (a datum tested against the
// tighter φ_i after a draw at φ̄_i is rejected φ̄_i/φ_i times too often:
// the mutant GroupGibbsCrossNoCorrection, caught by TestGroupGibbsCrossed).
// The pairs are then O(blocks × classes) and no map of user–item pairs
// is built. The records stay one per (datum, block, partner), each a
// 16-bit code of its weight rounded up (alias.Up) drawn by alias.Blocked
// (2.5 bytes a record, not 12); the drawn datum's bound sums its coded
// weights times the pairs' factors (codedPhi), so it is drawn with
// probability ∝ its bound and the bound is still one.
// Fixed blocks (block 0 and the blocks splitFixed adds) keep a pair per
// partner, as the fixed effects' factor F_0 is small and their partners'
// F_g differ by group. Not with a family whose f‴ grows (the pair-wise
// bound of groupgibbs_growth.go keeps per-pair maxima).

// crossMinN is the number of data from which GroupGibbs takes the group
// partners of a group block by class. Below it the tables are per pair,
// as the golden draws were made with.
const crossMinN = 1 << 19

// crossClasses is the most classes: tr H_bb from 1 to 2^(crossClasses/2)
// by factors of √2, every block beyond in the last.
const crossClasses = 64

// crossClass returns the class of a group block with information h =
// tr H_bb at the centre.
func crossClass(h float64) int32 {
	if !(h > 1) {
		return 0
	}
	k := int32(2 * math.Log2(h))
	return min(k, crossClasses-1)
}

// setCross sets the classes of the group blocks from the Hessian's
// diagonal (the fixed blocks, 0 and those from firstSplit on, get −1).
func (g *gibbsTerms) setCross() {
	g.cls = make([]int32, g.nb)
	for b := range g.nb {
		if g.fixedBlock(int32(b)) {
			g.cls[b] = -1
			continue
		}
		var h float64
		for _, j := range g.bc[g.bcPtr[b]:g.bcPtr[b+1]] {
			for p := g.hPtr[j]; p < g.hPtr[j+1]; p++ {
				if g.hCol[p] == j {
					h += g.hVal[p]
				}
			}
		}
		g.cls[b] = crossClass(h)
	}
}

// fixedBlock reports whether block b holds fixed effects: block 0 or a
// block splitFixed added.
func (g *gibbsTerms) fixedBlock(b int32) bool { return b == 0 || int(b) >= g.firstSplit }

// partner returns the partner of block b in block m's pairs: b itself, or
// with classes (cls set) nb + the class of b for a group block b ≠ m of a
// group block m.
func (g *gibbsTerms) partner(m, b int32) int32 {
	if g.cls == nil || b == m || g.cls[m] < 0 || g.cls[b] < 0 {
		return b
	}
	return int32(g.nb) + g.cls[b]
}

// clsTree keeps each class's largest ‖Δ_b‖² under point updates: one
// max-tree per class over its blocks (leaves at n_κ + position), so the
// class's maximum is its root, O(log n_κ) an update.
type clsTree struct {
	off []int   // class κ's tree at t[off[κ]:off[κ+1]] (2n_κ entries)
	pos []int32 // block b's leaf index in its class's tree
	t   []float64
}

func newClsTree(cls []int32) *clsTree {
	tr := &clsTree{off: make([]int, crossClasses+1), pos: make([]int32, len(cls))}
	n := make([]int, crossClasses)
	for b, k := range cls {
		if k >= 0 {
			tr.pos[b] = int32(n[k])
			n[k]++
		}
	}
	for k := range crossClasses {
		tr.off[k+1] = tr.off[k] + 2*n[k]
	}
	for b, k := range cls {
		if k >= 0 {
			tr.pos[b] += int32(n[k]) // the leaves are at n_κ … 2n_κ − 1
		}
	}
	tr.t = make([]float64, tr.off[crossClasses])
	return tr
}

// set sets block b's value (of class k) to v.
func (tr *clsTree) set(k int32, b int, v float64) {
	t := tr.t[tr.off[k]:tr.off[k+1]]
	i := int(tr.pos[b])
	t[i] = v
	for i > 1 {
		i >>= 1
		t[i] = max(t[2*i], t[2*i+1])
	}
}

// max returns class k's largest value.
func (tr *clsTree) max(k int32) float64 {
	if tr.off[k+1] == tr.off[k] {
		return 0
	}
	return tr.t[tr.off[k]+1]
}

// rebuild sets every block's value from dsq.
func (tr *clsTree) rebuild(cls []int32, dsq []float64) {
	clear(tr.t)
	for b, k := range cls {
		if k >= 0 {
			tr.t[tr.off[k]+int(tr.pos[b])] = dsq[b]
		}
	}
	for k := range crossClasses {
		t := tr.t[tr.off[k]:tr.off[k+1]]
		for i := len(t)/2 - 1; i >= 1; i-- {
			t[i] = max(t[2*i], t[2*i+1])
		}
	}
}

// setDsq sets block m's ‖Δ_m‖² and keeps its class's maximum.
func (c *gibbsChain) setDsq(m int, v float64) {
	c.dsq[m] = v
	if c.tree != nil && c.cls[m] >= 0 {
		c.tree.set(c.cls[m], m, v)
	}
}

// dsqChanged rebuilds the classes' maxima after dsq changed as a whole.
func (c *gibbsChain) dsqChanged() {
	if c.tree != nil {
		c.tree.rebuild(c.cls, c.dsq)
	}
}

// classFac sets fac[nb + κ] = max_{b∈κ} fac[b] from the blocks' factors
// fac[:nb] (a move of many blocks at once: O(blocks)).
func (c *gibbsChain) classFac() {
	if c.cls == nil {
		return
	}
	f := c.fac[c.nb:]
	clear(f)
	for b, k := range c.cls {
		if k >= 0 {
			f[k] = max(f[k], c.fac[b])
		}
	}
	for k := range f {
		f[k] *= c.crossInflate
	}
}

// partnerFac returns the factor of partner b in block m's bound: fac of
// its pair's partner (the class's with classes), or with the
// crossNoCorr mutant the block's own ‖Δ_b‖² for a class partner.
func (c *gibbsChain) partnerFac(m, b int32) float64 {
	p := c.partner(m, b)
	if c.crossNoCorr && p != b {
		return c.dsq[b]
	}
	return c.fac[p]
}

// seenPartner reports whether one of the blocks before (a row's touched
// blocks before b's) has block m's partner pb: the row is then already
// counted in pair (m, pb).
func (g *gibbsTerms) seenPartner(m, pb int32, before []int32) bool {
	if g.cls == nil {
		return false
	}
	for _, o := range before {
		if g.partner(m, o) == pb {
			return true
		}
	}
	return false
}

// facLen returns the length of a chain's fac: a factor per block, and per
// class with classes.
func (g *gibbsTerms) facLen() int {
	if g.cls == nil {
		return g.nb
	}
	return g.nb + crossClasses
}

// recordWeight returns a datum's weight in block m's pair with partner
// pb, K_i·a_im·Σ_{b: partner(m, b) = pb} a_ib², from its row's blocks and
// norms (m at position q, the first block of partner pb at r), dK = K_i:
// the set-up's records and the sweep's bounds (codedPhi) compute it alike,
// to the bit.
func (g *gibbsTerms) recordWeight(m, pb int32, q, r int, touched []int32, norms []float64, dK float64) float64 {
	w, more := norms[r]*norms[r], false
	for r2 := r + 1; r2 < len(touched) && pb != touched[r]; r2++ {
		if g.partner(m, touched[r2]) == pb {
			w += norms[r2] * norms[r2] // another block of the class
			more = true
		}
	}
	if more {
		return dK * norms[q] * w
	}
	return dK * norms[q] * norms[r] * norms[r]
}

// codedPhi returns the loaded row's bound at block m's update with
// classes: Σ_p w̃_p·fac[p] over m's pairs p the row is in, w̃_p the
// value of its record's code (its weight rounded up, alias.Up) — the
// weight the pair's sampler draws it with, so the datum is drawn with
// probability ∝ its bound as the thinning needs; w̃_p ≥ w_p keeps it a
// bound.
func (c *gibbsChain) codedPhi(m int32, kf float64, fac []float64) float64 {
	t, a := c.rb.touched, c.rb.norms
	q := -1
	for k, b := range t {
		if b == m {
			q = k
		}
	}
	if q < 0 {
		return 0
	}
	dK := kf * float64(len(t)) / 2
	var s float64
	for r, b := range t {
		pb := c.partner(m, b)
		if c.seenPartner(m, pb, t[:r]) {
			continue
		}
		code, _ := alias.Up(c.recordWeight(m, pb, q, r, t, a, dK))
		s += alias.Value(code) * fac[pb]
	}
	return s
}

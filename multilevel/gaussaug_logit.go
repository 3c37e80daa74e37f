// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/polyagamma"
	"github.com/exactmh/exactmh/sparse"
)

// augGLM is the energy of a model the augmentation sweep samples: its
// rows, responses and offsets.
type augGLM interface {
	SparseRowGLM
	// Response returns y_i.
	Response(i int) float64
	// Offset returns o_i (0 without offsets).
	Offset(i int) float64
}

// LogitGLM is a SparseRowGLM that can say it is logistic regression on
// binomial counts, U_i = n_i·(softplus(η_i) − y_i·η_i), η_i = x_iᵀw + o_i,
// y_i ∈ [0, 1] the fraction of successes of n_i trials, n_i a whole
// number ≥ 1 (model.SparseGLM of model.LogisticFamily, or of
// model.BinomialFamily with the logit link and the trials as weights):
// the model GroupGibbs's Pólya–Gamma augmentation sweep samples
// (GroupGibbs.Augment; docs/multilevel.md, "Logistic by Pólya–Gamma
// augmentation").
type LogitGLM interface {
	augGLM
	// Logit reports whether the energy is such a logistic regression.
	Logit() bool
	// Weight returns n_i.
	Weight(i int) float64
}

// augmentOf returns the layout and energy of a multilevel model the
// augmentation sweep samples — probit (probitOf) or logistic (a LogitGLM
// whose Logit is true, under the same kind of prior) — and whether it is
// the logistic one.
func augmentOf(e exactmh.Energy, p exactmh.Prior) (lay Layout, pe augGLM, logit, ok bool) {
	if lay, pe, ok := probitOf(e, p); ok {
		return lay, pe, false, true
	}
	le, ok := e.(LogitGLM)
	if !ok || !le.Logit() {
		return nil, nil, false, false
	}
	lay, ok = p.(Layout)
	if !ok || lay.NumTerms() == 0 || len(lay.Blocks()) != e.Dim() {
		return nil, nil, false, false
	}
	if _, ok := p.(exactmh.SparseHessianer); !ok {
		return nil, nil, false, false
	}
	return lay, le, true, true
}

// IsLogit reports whether p is a logistic multilevel model GroupGibbs's
// Pólya–Gamma augmentation sweep samples (GroupGibbs.Augment): logistic
// regression on binomial counts (LogitGLM) under a multilevel prior,
// untempered.
func IsLogit(p *exactmh.Posterior) bool {
	_, _, logit, ok := augmentOf(p.Energy, p.Prior)
	return ok && logit && (p.Beta == 0 || p.Beta == 1)
}

// startLogit sets the logistic sweep's data: κ_i = n_i(y_i − ½) and the
// trials n_i (kept only where some n_i > 1).
func (c *augChain) startLogit(name string, le LogitGLM) error {
	n := le.Len()
	c.kappa = make([]float64, n)
	c.latentVar = math.Pi * math.Pi / 3
	for i := range n {
		y, w := le.Response(i), le.Weight(i)
		if !(y >= 0 && y <= 1) || !(w >= 1) || w != math.Trunc(w) {
			return fmt.Errorf("%s: logistic datum %d: y = %v of n = %v trials, want y in [0, 1] and n a whole number ≥ 1", name, i, y, w)
		}
		if w != 1 && c.trials == nil {
			c.trials = make([]int, n)
			for q := range i {
				c.trials[q] = 1
			}
		}
		if c.trials != nil {
			c.trials[i] = int(w)
		}
		c.kappa[i] = w * (y - 0.5)
		if c.ah.kappaNoHalf {
			c.kappa[i] = w * y
		}
	}
	return nil
}

// pairTab lists, row by row in gram's order (for each entry a of the row,
// then each b ≤ a), the row's pairs of entries: pos, the position in M's
// values of entry (col[a], col[b]), and prod, x_a·x_b. drawOmega refills
// M = XᵀΩX in place from it (its pattern, P's and the factor's analysis
// unchanged) by one flat scaled add a row, M[pos] += ω_i·prod, instead of
// a loop over a and b with its products.
type pairTab struct {
	pos  []int32
	prod []float64
}

// pairs returns r's pairTab in m.
func pairs(r *augRows, m *sparse.SymCSC) pairTab {
	ptr, col, val := r.ptr, r.col, r.val
	var np int
	for i := range len(ptr) - 1 {
		k := ptr[i+1] - ptr[i]
		np += k * (k + 1) / 2
	}
	t := pairTab{pos: make([]int32, 0, np), prod: make([]float64, 0, np)}
	for i := range len(ptr) - 1 {
		lo, hi := ptr[i], ptr[i+1]
		for a := lo; a < hi; a++ {
			for b := lo; b <= a; b++ {
				t.pos = append(t.pos, int32(entry(m, int(col[a]), int(col[b]))))
				t.prod = append(t.prod, val[a]*val[b])
			}
		}
	}
	return t
}

// drawOmega is the logistic sweep's update 1 (Polson, Scott and Windle,
// JASA 108, 2013): each ω_i ~ PG(n_i, η_i) at the current w, exactly
// (polyagamma.Draw, DrawSum for n_i > 1), which makes the likelihood given
// ω the Gaussian e^{κ_iη_i − ω_iη_i²/2} in each η_i, κ_i = n_i(y_i − ½):
// the Gaussian multilevel model with
//
//	M = XᵀΩX,  b = Xᵀ(κ − Ω·o)
//
// (Ω = diag(ω), o the offsets), both summed in the same pass, O(Σ_i k_i²)
// for rows of k_i entries; M's values are written in place (pairPos), or
// by the rows' patterns where that is less work (groupTab,
// drawOmegaGrouped).
func (c *augChain) drawOmega(rng *rand.Rand, b []float64) {
	c.pg.Seed(rng)
	if c.groups != nil {
		c.drawOmegaGrouped(b)
		return
	}
	clear(b)
	mv := c.m.Val
	clear(mv)
	w := c.theta
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	pos, prod := c.pairPos.pos, c.pairPos.prod
	prod = prod[:len(pos)]
	off, trials := c.off, c.trials
	one := trials == nil || c.ah.trialsOne
	q := 0
	lag, omPrev := c.ah.omegaLag, 0.0
	for i, ki := range c.kappa {
		rc, rv := col[ptr[i]:ptr[i+1]], val[ptr[i]:ptr[i+1]]
		rv = rv[:len(rc)]
		eta := off[i]
		for k, j := range rc {
			eta += rv[k] * w[j]
		}
		if c.etaPrev != nil {
			eta = c.etaPrev[i]
		}
		var om float64
		if one || trials[i] == 1 {
			om = polyagamma.Draw(c.pg, eta)
		} else {
			om = polyagamma.DrawSum(c.pg, trials[i], eta)
		}
		r := ki - om*off[i]
		for a, j := range rc {
			b[j] += rv[a] * r
		}
		if lag {
			om, omPrev = omPrev, om
		}
		q1 := q + len(rc)*(len(rc)+1)/2
		pq, pv := pos[q:q1], prod[q:q1]
		pv = pv[:len(pq)]
		for k, p := range pq {
			mv[p] += om * pv[k]
		}
		q = q1
	}
}

// groupTab is drawOmega's grouped form of the rows, for a model without
// offsets: each row x_i splits into its unit entries (value 1: the
// intercept, a factor's level, a 0/1 covariate's dummy), whose columns
// S_i with the columns O_i of its other entries make the row's pattern
// g(i), and its other entries v_o (o ∈ O_i). Then
//
//	ω_i x_i x_iᵀ = ω_i·1_S1_Sᵀ + Σ_o ω_i v_o (e_o1_Sᵀ + 1_Se_oᵀ) + Σ_{o,o′} ω_i v_o v_o′ e_oe_o′ᵀ,
//
// so M = XᵀΩX sums, over the rows of a pattern, ω_i into the pattern's
// W_g and ω_i v_o into its V_{g,o} (accumulators), and only the products
// of other entries into M per row (direct entries); once a sweep each
// accumulator is added to its entries of M (flush). Likewise η_i =
// base_g + Σ_o v_o w_o, with base_g = Σ_{s∈S_g} w_s once a sweep. Where
// rows share patterns (contraception: 1,934 rows, 357 patterns of its 60
// districts, livch and urban), a row costs 1 + 2|O_i| + |O_i|(|O_i|+1)/2
// adds instead of k_i(k_i+1)/2 + k_i: the same M and η up to the
// summation's rounding (TestLogitGroupedRefill).
type groupTab struct {
	grp        []int32   // row i's pattern
	optr       []int32   // row i's other entries: [optr[i], optr[i+1])
	ocol       []int32   // their columns
	oval       []float64 // their values
	oslot      []int32   // their accumulators V_{g,o}
	dptr       []int32   // row i's direct entries: [dptr[i], dptr[i+1])
	dpos       []int32   // their positions in M's values
	dprod      []float64 // their products v_o·v_o′
	uptr, ucol []int32   // pattern g's unit columns: ucol[uptr[g]:uptr[g+1]]
	fptr, fpos []int32   // accumulator a's positions in M: fpos[fptr[a]:fptr[a+1]]
	ng         int       // patterns: accumulators 0 … ng−1 are the W_g
}

// refillWork returns the counted adds a sweep of the refill of M and of
// the linear predictors by the pairs (pairTab: k_i(k_i+1)/2 + k_i a row)
// and by the grouped rows (groupTab: 1 + 2|O_i| + |O_i|(|O_i|+1)/2 a row,
// the flush and the bases): drawOmega takes the grouped form when it is
// the fewer. Counted, never timed: the same choice on any machine.
func (t *groupTab) refillWork(r *augRows) (pairWork, groupWork int) {
	for i := range len(r.ptr) - 1 {
		k := r.ptr[i+1] - r.ptr[i]
		pairWork += k*(k+1)/2 + k
		o := int(t.optr[i+1] - t.optr[i])
		groupWork += 1 + 2*o + o*(o+1)/2
	}
	return pairWork, groupWork + len(t.fpos) + len(t.ucol)
}

// groupRows returns r's groupTab in m's pattern.
func groupRows(r *augRows, m *sparse.SymCSC) *groupTab {
	n := len(r.ptr) - 1
	t := &groupTab{grp: make([]int32, n), optr: make([]int32, n+1), dptr: make([]int32, n+1), uptr: []int32{0}, fptr: []int32{0}}
	type pattern struct{ g, vbase int32 }
	seen := map[string]pattern{}
	var key []byte
	var unit, other []int32
	// W_g's accumulators come first (0 … ng−1): their positions are set
	// once every pattern is known; V's positions are listed as found.
	var wpos [][]int32
	var vpos [][]int32
	for i := range n {
		unit, other = unit[:0], other[:0]
		for k := r.ptr[i]; k < r.ptr[i+1]; k++ {
			if r.val[k] == 1 {
				unit = append(unit, int32(k))
			} else {
				other = append(other, int32(k))
			}
		}
		key = key[:0]
		for _, k := range unit {
			key = binary.LittleEndian.AppendUint32(key, uint32(r.col[k]))
		}
		key = binary.LittleEndian.AppendUint32(key, math.MaxUint32)
		for _, k := range other {
			key = binary.LittleEndian.AppendUint32(key, uint32(r.col[k]))
		}
		p, ok := seen[string(key)]
		if !ok {
			p = pattern{g: int32(len(wpos)), vbase: int32(len(vpos))}
			seen[string(key)] = p
			var w []int32
			for a, ka := range unit {
				t.ucol = append(t.ucol, r.col[ka])
				for _, kb := range unit[:a+1] {
					w = append(w, int32(entry(m, int(r.col[ka]), int(r.col[kb]))))
				}
			}
			wpos = append(wpos, w)
			t.uptr = append(t.uptr, int32(len(t.ucol)))
			for _, ko := range other {
				var v []int32
				for _, ks := range unit {
					v = append(v, int32(entry(m, int(r.col[ko]), int(r.col[ks]))))
				}
				vpos = append(vpos, v)
			}
		}
		t.grp[i] = p.g
		for q, ko := range other {
			t.ocol = append(t.ocol, r.col[ko])
			t.oval = append(t.oval, r.val[ko])
			t.oslot = append(t.oslot, p.vbase+int32(q)) // offset by ng below
			for _, kb := range other[:q+1] {
				t.dpos = append(t.dpos, int32(entry(m, int(r.col[ko]), int(r.col[kb]))))
				t.dprod = append(t.dprod, r.val[ko]*r.val[kb])
			}
		}
		t.optr[i+1] = int32(len(t.ocol))
		t.dptr[i+1] = int32(len(t.dpos))
	}
	t.ng = len(wpos)
	for k := range t.oslot {
		t.oslot[k] += int32(t.ng)
	}
	for _, ps := range append(wpos, vpos...) {
		t.fpos = append(t.fpos, ps...)
		t.fptr = append(t.fptr, int32(len(t.fpos)))
	}
	return t
}

// drawOmegaGrouped is drawOmega by the grouped rows (groupTab), on a
// model without offsets: b = Xᵀκ is the chain's constant bKappa, and
// each row adds ω_i to its pattern's accumulators and its direct entries
// to M; the flush adds the accumulators to M. The draws of ω are
// drawOmega's, in the same order of rows, each at η_i = base_g + Σ_o v_o w_o.
func (c *augChain) drawOmegaGrouped(b []float64) {
	copy(b, c.bKappa)
	mv := c.m.Val
	clear(mv)
	t := c.groups
	acc, base := c.acc, c.base
	clear(acc)
	w := c.theta
	for g := range base {
		var s float64
		for _, j := range t.ucol[t.uptr[g]:t.uptr[g+1]] {
			s += w[j]
		}
		base[g] = s
	}
	trials := c.trials
	one := trials == nil || c.ah.trialsOne
	lag, omPrev := c.ah.omegaLag, 0.0
	grp, optr, ocol, oval, oslot := t.grp, t.optr, t.ocol, t.oval, t.oslot
	dptr, dpos, dprod := t.dptr, t.dpos, t.dprod
	// η first, in a pass of its own: its loads and adds then overlap
	// across rows instead of waiting behind each draw's branches.
	etas := c.etaG[:len(grp)]
	for i, g := range grp {
		lo, hi := optr[i], optr[i+1]
		oc, ov := ocol[lo:hi], oval[lo:hi]
		ov = ov[:len(oc)]
		eta := base[g]
		for k, j := range oc {
			eta += ov[k] * w[j]
		}
		etas[i] = eta
	}
	if c.etaPrev != nil {
		etas = c.etaPrev
	}
	for i, g := range grp {
		lo, hi := optr[i], optr[i+1]
		ov, os := oval[lo:hi], oslot[lo:hi]
		os = os[:len(ov)]
		eta := etas[i]
		var om float64
		if one || trials[i] == 1 {
			om = polyagamma.Draw(c.pg, eta)
		} else {
			om = polyagamma.DrawSum(c.pg, trials[i], eta)
		}
		if lag {
			om, omPrev = omPrev, om
		}
		acc[g] += om
		for k, a := range os {
			acc[a] += om * ov[k]
		}
		dp, dv := dpos[dptr[i]:dptr[i+1]], dprod[dptr[i]:dptr[i+1]]
		dv = dv[:len(dp)]
		for k, p := range dp {
			mv[p] += om * dv[k]
		}
	}
	fptr, fpos := t.fptr, t.fpos
	for a, v := range acc {
		for _, p := range fpos[fptr[a]:fptr[a+1]] {
			mv[p] += v
		}
	}
}

// refillGroups returns the grouped rows (groupRows) of a logistic model
// without offsets where their counted refill work is less than the pairs'
// (groupTab.refillWork), nil otherwise (the pairs: pairTab).
func refillGroups(pe augGLM, r *augRows, m *sparse.SymCSC) *groupTab {
	for i := range pe.Len() {
		if pe.Offset(i) != 0 {
			return nil
		}
	}
	if !groupFits(r, math.MaxInt32) {
		return nil
	}
	t := groupRows(r, m)
	if pw, gw := t.refillWork(r); gw >= pw {
		return nil
	}
	return t
}

// groupFits reports whether r's grouped rows (groupRows) can be indexed
// by groupTab's int32 pointers and slots, limit the largest index: each of
// its tables holds at most n + Σ_i (k_i(k_i+1)/2 + k_i) entries (a row's
// pattern, its pairs and its entries), counted before any is built. Where
// they cannot, refillGroups keeps the pairs, whose table is indexed by
// int: a wrapped pointer would refill a wrong M without a word.
func groupFits(r *augRows, limit int) bool {
	n := len(r.ptr) - 1
	total := n
	for i := range n {
		k := r.ptr[i+1] - r.ptr[i]
		total += k*(k+1)/2 + k
		if total > limit {
			return false
		}
	}
	return true
}

// startRefill sets the chain's refill of M from the shared rows: the
// grouped rows with their accumulators, bases and b = Xᵀκ, or the pairs
// (sh's, or the chain's own where the hook refillPairs declines the
// grouped rows).
func (c *augChain) startRefill(sh *augShared, m *sparse.SymCSC) {
	c.pg = polyagamma.NewSource(nil)
	if sh.groups == nil {
		c.pairPos = sh.pairPos
		return
	}
	if c.ah.refillPairs {
		c.pairPos = pairs(&c.rows, m)
		return
	}
	t := sh.groups
	c.groups = t
	c.acc = make([]float64, len(t.fptr)-1)
	c.base = make([]float64, t.ng)
	c.etaG = make([]float64, len(t.grp))
	c.bKappa = make([]float64, len(c.b))
	for i, ki := range c.kappa {
		for k := c.rows.ptr[i]; k < c.rows.ptr[i+1]; k++ {
			c.bKappa[c.rows.col[k]] += c.rows.val[k] * ki
		}
	}
}

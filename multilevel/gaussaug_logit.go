// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
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
// for rows of k_i entries; M's values are written in place (pairPos).
func (c *augChain) drawOmega(rng *rand.Rand, b []float64) {
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
			om = polyagamma.Draw(rng, eta)
		} else {
			om = polyagamma.DrawSum(rng, trials[i], eta)
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

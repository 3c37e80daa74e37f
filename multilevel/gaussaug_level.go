// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// levelSet is one independent term's levels that the logistic sweep
// moves one at a time under the logistic likelihood itself
// (augChain.levelMH): level q's coordinate col[q], its data
// row[ptr[q]:ptr[q+1]] with the values val there in that coordinate's
// column; the term's log τ; the proposals kept and made; and levelLik's
// scratch, 1 + e^{−|η_i|} of a level's data at u.
type levelSet struct {
	logTau int
	col    []int32
	ptr    []int32
	row    []int32
	val    []float64
	n, t   int64
	buf    []float64
}

// levelMHMaxData is the most data a term's levels hold on average for
// the logistic sweep to move them by levelMH: a level of few data has a
// wide conditional, which the Pólya–Gamma draw given ω crosses slowly
// where its η is far from 0 (ω_i ≈ tanh(η_i/2)/(2η_i) small, the
// conditional given ω narrow against the one given y); a level of many
// data is pinned by them either way, and its move would read them all
// for little. Counted from the rows, never timed.
const levelMHMaxData = 64

// levelMHFrac sets which levels of a term levelMH moves: those whose
// share of successes Σ n_iy_i/Σ n_i is at most levelMHFrac or at least 1
// − levelMHFrac — the levels whose η lie far from 0, which the Pólya–Gamma
// draw moves slowest (the least bulk ESS of the sweep without the move on
// verbagg is such a person's effect: figures/bench/multilevel_real_verbagg.txt);
// a level of mixed responses mixes under the Pólya–Gamma draw, and its move
// would cost its reads for little. Counted from the data, never timed.
const levelMHFrac = 0.2

// startLevels sets the logistic sweep's level moves (levelMH): for each
// independent term whose levels hold on average at most levelMHMaxData
// data, every level of at least one datum none of whose rows holds
// another of the term's coordinates and whose share of successes is
// within levelMHFrac of 0 or 1 (any share with the levelMHAll hook). A
// term nested in another (schools in LEAs: nesting) gets none: on
// chem97 its moves left the scales with less bulk ESS, not more
// (figures/bench/multilevel_real_verbagg.txt); there the integrated
// scale move of the parent is what mixes.
func (c *augChain) startLevels() {
	n := len(c.rows.ptr) - 1
	_, child := c.nesting()
	for k := range c.asis {
		a := &c.asis[k]
		if child[k] {
			continue
		}
		cnt := make([]int32, a.levels)
		bad := make([]bool, a.levels)
		var nnz int
		for i := range n {
			in := -1
			for p := c.rows.ptr[i]; p < c.rows.ptr[i+1]; p++ {
				j := int(c.rows.col[p])
				if !a.has(j) {
					continue
				}
				g := (j - a.start) / a.stride
				cnt[g]++
				nnz++
				if in >= 0 {
					bad[g], bad[in] = true, true
				}
				in = g
			}
		}
		if nnz == 0 || nnz > levelMHMaxData*a.levels {
			continue
		}
		s := levelSet{logTau: a.logTau, ptr: []int32{0}}
		var ny, nn []float64 = make([]float64, a.levels), make([]float64, a.levels) // Σ n_iy_i, Σ n_i
		for i := range n {
			for p := c.rows.ptr[i]; p < c.rows.ptr[i+1]; p++ {
				if j := int(c.rows.col[p]); a.has(j) {
					g := (j - a.start) / a.stride
					nt := 1.0
					if c.trials != nil {
						nt = float64(c.trials[i])
					}
					ny[g] += c.kappa[i] + nt/2
					nn[g] += nt
				}
			}
		}
		at := make([]int32, a.levels) // level g's position in s.col, or −1
		for g := range a.levels {
			at[g] = -1
			if f := ny[g] / nn[g]; cnt[g] > 0 && !bad[g] && (c.ah.levelMHAll || f <= levelMHFrac || f >= 1-levelMHFrac) {
				at[g] = int32(len(s.col))
				s.col = append(s.col, int32(a.start+g*a.stride))
				s.ptr = append(s.ptr, s.ptr[len(s.ptr)-1]+cnt[g])
			}
		}
		if len(s.col) == 0 {
			continue
		}
		var most int32
		for q := range s.col {
			most = max(most, s.ptr[q+1]-s.ptr[q])
		}
		s.buf = make([]float64, most)
		s.row = make([]int32, s.ptr[len(s.ptr)-1])
		s.val = make([]float64, len(s.row))
		fill := make([]int32, len(s.col))
		for i := range n {
			for p := c.rows.ptr[i]; p < c.rows.ptr[i+1]; p++ {
				j := int(c.rows.col[p])
				if !a.has(j) {
					continue
				}
				if q := at[(j-a.start)/a.stride]; q >= 0 {
					r := s.ptr[q] + fill[q]
					s.row[r], s.val[r] = int32(i), c.rows.val[p]
					fill[q]++
				}
			}
		}
		c.levels = append(c.levels, s)
	}
}

// levelMH (docs/multilevel.md, section "Logistic by Pólya–Gamma
// augmentation", its level moves under the logistic likelihood) is the
// logistic sweep's last update, made once ω is spent: each
// level u of each levelSet given y (not ω) and the rest of θ, by
// Metropolis–Hastings with a Newton proposal. With ℓ(u) = Σ_i ℓ_i(η_i) −
// u²/(2τ²), over the level's data, ℓ_i(η) = κ_iη − n_i·log(2cosh(η/2))
// the logistic log-likelihood n_i(y_iη − log(1 + e^η)) (κ_i = n_i(y_i −
// ½)), and the prior N(0, τ²) of the term's effects,
//
//	g(u) = ℓ′(u) = Σ_i x_i(κ_i − n_i(σ(η_i) − ½)) − u/τ²,
//	h(u) = −ℓ″(u) = Σ_i x_i²n_iσ(η_i)(1 − σ(η_i)) + 1/τ²,
//
// the proposal is u′ ~ q(·|u) = N(u + g(u)/h(u), 1/h(u)), kept with
// probability min(1, e^{ℓ(u′) − ℓ(u)}·q(u|u′)/q(u′|u)): an exact
// Metropolis–Hastings update of u's conditional, whose proposal is that
// conditional itself where it is Gaussian. It reads the level's data
// twice, at u and at u′ (O(level data)), its η first summed from θ.
// The Pólya–Gamma draw moves a level whose η are far from 0 by steps of
// its conditional given ω, narrower than the one given y; this move takes
// it across the latter in one step. Proven by
// TestLogitLevelMoments and TestLogitLevelSBC with the mutants level-q
// (the proposal's densities dropped) and level-datum (a level's last
// datum left out of ℓ).
func (c *augChain) levelMH(rng *rand.Rand) {
	if len(c.levels) == 0 {
		return
	}
	th := c.theta
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	var reads int
	for k := range c.levels {
		s := &c.levels[k]
		ip := math.Exp(-2 * th[s.logTau])
		for q, j := range s.col {
			lo, hi := s.ptr[q], s.ptr[q+1]
			if c.ah.levelDropDatum && hi > lo {
				hi--
			}
			for _, i := range s.row[lo:hi] {
				e := c.off[i]
				for p := ptr[i]; p < ptr[i+1]; p++ {
					e += val[p] * th[col[p]]
				}
				c.eta[i] = e
			}
			u := th[j]
			l0, g0, h0 := c.levelLik(s, lo, hi, 0, false)
			l0 -= u * u * ip / 2
			g0 -= u * ip
			h0 += ip
			m0 := u + g0/h0
			un := m0 + rng.NormFloat64()/math.Sqrt(h0)
			l1, g1, h1 := c.levelLik(s, lo, hi, un-u, true)
			l1 -= un * un * ip / 2
			g1 -= un * ip
			h1 += ip
			m1 := un + g1/h1
			la := l1 - l0 // levelLik's log1p terms are all in l1
			if !c.ah.levelNoQ {
				la += 0.5*math.Log(h1/h0) - 0.5*h1*(u-m1)*(u-m1) + 0.5*h0*(un-m0)*(un-m0)
			}
			reads += 2 * int(hi-lo)
			s.t++
			if la >= 0 || rng.Float64() < math.Exp(la) {
				th[j] = un
				s.n++
			}
		}
	}
	c.t.Count(reads)
	c.lp = c.t.LogPrior(th)
	c.uCur = math.NaN()
}

// levelLik returns, over the level's data s.row[lo:hi] (x_i = s.val) at
// η_i + x_i·d, the derivative Σ_i x_iℓ_i′ and minus the second
// derivative Σ_i x_i²·n_iσ(1 − σ) of ℓ = Σ_i ℓ_i in d, and ℓ less the
// terms log(1 + e^{−|η_i|}) — one exponential a datum: with a = |η|, z =
// e^{−a}, log(2cosh(η/2)) = a/2 + log1p(z), σ(η) − ½ = ±(1 − z)/(2(1 +
// z)) and σ(1 − σ) = z/(1 + z)². Without second, each datum's 1 + z is
// kept in s.buf; with second, the ℓ returned is ℓ(d) − ℓ(0)'s log terms
// less, i.e. it adds −Σ_i n_i·log((1 + z_i(d))/(1 + z_i(0))), summed as
// the log of a product (one log a level; n_i > 1 by powers), so that l(d,
// second) − l(0) is ℓ(d) − ℓ(0).
func (c *augChain) levelLik(s *levelSet, lo, hi int32, d float64, second bool) (l, g, h float64) {
	rows, vals := s.row[lo:hi], s.val[lo:hi]
	vals = vals[:len(rows)]
	buf := s.buf[:len(rows)]
	prod := 1.0
	for p, i := range rows {
		x := vals[p]
		e := c.eta[i] + x*d
		a := math.Abs(e)
		z := math.Exp(-a)
		z1 := 1 + z
		r := 1 / z1
		nt := 1.0
		if c.trials != nil {
			nt = float64(c.trials[i])
		}
		sh := nt * (1 - z) * r / 2 // n_i(σ(|η|) − ½)
		if e < 0 {
			sh = -sh
		}
		k := c.kappa[i]
		l += k*e - nt*a/2
		g += x * (k - sh)
		h += x * x * nt * z * r * r
		if !second {
			buf[p] = z1
			continue
		}
		f := z1 / buf[p] // in (½, 2)
		if nt == 1 {
			prod *= f
		} else {
			prod *= math.Pow(f, nt)
		}
		if p&63 == 63 || nt != 1 { // 2^±64 at most: no overflow
			l -= math.Log(prod)
			prod = 1
		}
	}
	return l - math.Log(prod), g, h
}

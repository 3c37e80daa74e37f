// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
)

// Ising is the ferromagnetic Ising model on an L×L square lattice with free
// boundaries, a DoublyIntractable model for the Exchange kernel. Spins
// x_i ∈ {−1, +1}; θ = (J), the coupling (inverse temperature), J ≥ 0; a
// data set is m independent configurations (replicates), with likelihood
//
//	p_J(x) = Π_r exp(J·S(x_r))/Z(J),   S(x) = Σ_{i~j} x_i x_j,
//
// the sum over the 2L(L−1) nearest-neighbour pairs. Z(J) is a sum over
// 2^{L²} states: intractable in general, which is the point; for L ≤ 4
// the model enumerates them once (LogPartition, ExactMoments), so that the
// exchange algorithm can be checked against the exact posterior.
//
// Simulate draws exactly by coupling from the past (Propp and Wilson 1996)
// with the monotone heat-bath sweep: chains started from all −1 and all +1
// at time −T, driven by the same uniforms, have coalesced by time 0 for
// some T; T doubles until they have, reusing the randomness of the later
// times.
type Ising struct {
	l, m  int
	nbr   [][4]int // neighbours of each site, −1 where the lattice ends
	obs   *IsingData
	sObs  float64
	dos   []float64 // dos[s + E]: number of states of one lattice with S = s (L ≤ 4), E the number of pairs
	pairs int
}

// IsingData is one data set of an Ising model: m configurations of L×L
// spins, with the scratch memory of the CFTP sampler.
type IsingData struct {
	// Spins holds replicate r's spin at row i, column j at
	// r·L² + i·L + j, each −1 or +1.
	Spins []int8

	lower []int8   // the lower CFTP chain (Spins holds the upper one)
	seeds []uint64 // one seed per block of sweeps, newest last
	src   *rand.PCG
	rng   *rand.Rand
}

// isingMaxEnum is the largest L whose 2^{L²} states are enumerated.
const isingMaxEnum = 4

// isingMaxBlocks bounds CFTP's doublings: 2^(isingMaxBlocks−1) sweeps.
const isingMaxBlocks = 25

// NewIsing returns the Ising model on an l×l lattice with the observed
// spins (row-major, one or more replicates of l² spins, each −1 or +1).
func NewIsing(l int, spins []int8) (*Ising, error) {
	switch {
	case l < 2 || l > 64:
		return nil, fmt.Errorf("exactmh: NewIsing: L = %d, want in [2, 64]", l)
	case len(spins) == 0 || len(spins)%(l*l) != 0:
		return nil, fmt.Errorf("exactmh: NewIsing: %d spins, want a positive multiple of L² = %d", len(spins), l*l)
	}
	for i, s := range spins {
		if s != 1 && s != -1 {
			return nil, fmt.Errorf("exactmh: NewIsing: spins[%d] = %d, want −1 or +1", i, s)
		}
	}
	m := &Ising{l: l, m: len(spins) / (l * l), pairs: 2 * l * (l - 1)}
	m.nbr = make([][4]int, l*l)
	for i := range l {
		for j := range l {
			n := [4]int{-1, -1, -1, -1}
			if i > 0 {
				n[0] = (i-1)*l + j
			}
			if i < l-1 {
				n[1] = (i+1)*l + j
			}
			if j > 0 {
				n[2] = i*l + j - 1
			}
			if j < l-1 {
				n[3] = i*l + j + 1
			}
			m.nbr[i*l+j] = n
		}
	}
	m.obs = m.NewData()
	copy(m.obs.Spins, spins)
	m.sObs = m.Stat(m.obs)
	if l <= isingMaxEnum {
		m.dos = make([]float64, 2*m.pairs+1)
		x := make([]int8, l*l)
		for code := range 1 << (l * l) {
			for k := range x {
				x[k] = int8(2*((code>>k)&1) - 1)
			}
			m.dos[m.stat(x)+m.pairs]++
		}
	}
	return m, nil
}

// L returns the lattice's side.
func (m *Ising) L() int { return m.l }

// Replicates returns the number of configurations in a data set.
func (m *Ising) Replicates() int { return m.m }

// Dim returns 1: θ = (J).
func (m *Ising) Dim() int { return 1 }

// Observed returns the observed data set.
func (m *Ising) Observed() *IsingData { return m.obs }

// NewData returns storage for one data set and its CFTP scratch memory.
func (m *Ising) NewData() *IsingData {
	src := rand.NewPCG(0, 0)
	return &IsingData{
		Spins: make([]int8, m.m*m.l*m.l),
		lower: make([]int8, m.l*m.l),
		seeds: make([]uint64, 0, isingMaxBlocks),
		src:   src,
		rng:   rand.New(src),
	}
}

// stat returns S(x) = Σ_{i~j} x_i x_j of one configuration.
func (m *Ising) stat(x []int8) int {
	var s int
	for i, n := range m.nbr {
		// Each pair once: the neighbours below and to the right.
		if n[1] >= 0 {
			s += int(x[i]) * int(x[n[1]])
		}
		if n[3] >= 0 {
			s += int(x[i]) * int(x[n[3]])
		}
	}
	return s
}

// Stat returns the sufficient statistic Σ_r S(x_r) of data set x.
func (m *Ising) Stat(x *IsingData) float64 {
	var s int
	n := m.l * m.l
	for r := range m.m {
		s += m.stat(x.Spins[r*n : (r+1)*n])
	}
	return float64(s)
}

// UnnormLogLik returns log f_J(x) = J·Σ_r S(x_r).
func (m *Ising) UnnormLogLik(theta []float64, x *IsingData) float64 {
	if x == m.obs {
		return theta[0] * m.sObs
	}
	return theta[0] * m.Stat(x)
}

// Simulate draws each replicate of dst exactly from p_J by coupling from
// the past. It returns an error for J < 0 (the heat-bath coupling is
// monotone only for a ferromagnet) or if the chains have not coalesced
// after 2^24 sweeps.
func (m *Ising) Simulate(rng *rand.Rand, theta []float64, dst *IsingData) error {
	j := theta[0]
	if !(j >= 0) || math.IsInf(j, 0) {
		return fmt.Errorf("Ising: J = %v, want finite ≥ 0", j)
	}
	// The heat-bath probability of +1 given the neighbours' sum h ∈ [−4, 4]:
	// 1/(1 + e^{−2Jh}).
	var pUp [9]float64
	for h := -4; h <= 4; h++ {
		pUp[h+4] = 1 / (1 + math.Exp(-2*j*float64(h)))
	}
	n := m.l * m.l
	for r := range m.m {
		if err := m.cftp(rng, &pUp, dst.Spins[r*n:(r+1)*n], dst); err != nil {
			return err
		}
	}
	return nil
}

// cftp draws one configuration into upper. Block 0 is the sweep at time
// −1, block b ≥ 1 the 2^{b−1} sweeps from time −2^b to −2^{b−1}, each
// driven by a generator seeded with seeds[b], so that a restart from
// further back reuses exactly the randomness of the later times.
func (m *Ising) cftp(rng *rand.Rand, pUp *[9]float64, upper []int8, d *IsingData) error {
	d.seeds = d.seeds[:0]
	for k := range isingMaxBlocks {
		d.seeds = append(d.seeds, rng.Uint64())
		for i := range upper {
			upper[i], d.lower[i] = 1, -1
		}
		for b := k; b >= 0; b-- {
			d.src.Seed(d.seeds[b], 0x6973696e67)
			sweeps := 1
			if b > 0 {
				sweeps = 1 << (b - 1)
			}
			for range sweeps {
				m.sweep(d.rng, pUp, upper, d.lower)
			}
		}
		if slices.Equal(upper, d.lower) {
			return nil
		}
	}
	return errors.New("Ising: coupling from the past did not coalesce within 2^24 sweeps")
}

// sweep updates every site of both chains in turn from its heat-bath
// conditional, with one uniform per site shared by the chains (the
// monotone coupling: upper ≥ lower is preserved).
func (m *Ising) sweep(rng *rand.Rand, pUp *[9]float64, upper, lower []int8) {
	for i, n := range m.nbr {
		var hu, hl int
		for _, k := range n {
			if k >= 0 {
				hu += int(upper[k])
				hl += int(lower[k])
			}
		}
		u := rng.Float64()
		upper[i], lower[i] = -1, -1
		if u < pUp[hu+4] {
			upper[i] = 1
		}
		if u < pUp[hl+4] {
			lower[i] = 1
		}
	}
}

// LogPartition returns log Z(J) = log Σ_x exp(J·S(x)) of one L×L lattice,
// by enumeration of its 2^{L²} states (L ≤ 4; an error otherwise).
func (m *Ising) LogPartition(j float64) (float64, error) {
	if m.dos == nil {
		return 0, fmt.Errorf("exactmh: Ising.LogPartition: L = %d: enumeration needs L ≤ %d", m.l, isingMaxEnum)
	}
	// log-sum-exp over the levels s = −E … E with multiplicities dos.
	top := math.Inf(-1)
	for k, g := range m.dos {
		if g > 0 {
			top = max(top, j*float64(k-m.pairs))
		}
	}
	var sum float64
	for k, g := range m.dos {
		if g > 0 {
			sum += g * math.Exp(j*float64(k-m.pairs)-top)
		}
	}
	return top + math.Log(sum), nil
}

// ExactMoments returns the posterior mean and variance of J given the
// observed data under the uniform prior on [lo, hi] (0 ≤ lo < hi), from
// the enumerated Z(J) (L ≤ 4) and composite Simpson quadrature on 2·10⁴
// intervals, accurate to about 1e-12 relative for the posteriors it
// serves.
func (m *Ising) ExactMoments(lo, hi float64) (mean, variance float64, err error) {
	if !(lo >= 0 && hi > lo) || math.IsInf(hi, 0) {
		return 0, 0, fmt.Errorf("exactmh: Ising.ExactMoments: interval [%v, %v], want 0 ≤ lo < hi < ∞", lo, hi)
	}
	const n = 20000
	h := (hi - lo) / n
	logp := make([]float64, n+1)
	top := math.Inf(-1)
	for k := range logp {
		j := lo + float64(k)*h
		lz, err := m.LogPartition(j)
		if err != nil {
			return 0, 0, err
		}
		logp[k] = j*m.sObs - float64(m.m)*lz
		top = max(top, logp[k])
	}
	var z, s1, s2 float64
	for k, lp := range logp {
		w := 2.0
		switch {
		case k == 0 || k == n:
			w = 1
		case k%2 == 1:
			w = 4
		}
		j := lo + float64(k)*h
		p := w * math.Exp(lp-top)
		z += p
		s1 += p * j
		s2 += p * j * j
	}
	mean = s1 / z
	return mean, s2/z - mean*mean, nil
}

var _ exactmh.DoublyIntractable[*IsingData] = (*Ising)(nil)

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package alias

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
)

// Compact weights: 16-bit codes on a fixed grid, and Blocked, the
// sampler that draws from them with about 2.5 bytes a weight where a Table
// holds 16 (and its caller's float64 weights 8 more).
//
// A code q stands for the number Value(q): 0 for q = 0, else
// 2^(e−127)·(1 + m/256) with e = q>>8 ∈ [1, 255] and m = q&255 — the upper
// 16 bits of a positive float32 (bfloat16), and for e = 0 the
// continuation of the grid below 2^−126 in steps of 2^−134. The grid is
// scale-free: its relative spacing, at most 2^−8, is the same from 2^−126
// to MaxValue (about 6.8·10³⁸), so a weight can be coded before the others
// are known, in one pass, with no scale to fix first. Up rounds a weight
// up to the grid: a per-datum bound constant c_i ≤ Value(Up(c_i)) stays a
// bound, at most 0.4 % looser.

// MaxValue is the largest number on the grid, Value(0xffff).
var MaxValue = Value(0xffff)

// Value returns the number code q stands for. It is exact (no rounding):
// the code's bits placed in a float64 and scaled by a power of two.
func Value(q uint16) float64 {
	return math.Float64frombits(uint64(q)<<44) * 0x1p896
}

// Up returns the smallest code q with Value(q) ≥ c, and ok false (with q
// 0) for a c that is negative, NaN or above MaxValue. Up(0) is 0.
func Up(c float64) (q uint16, ok bool) {
	switch {
	case c == 0:
		return 0, true
	case !(c > 0) || c > MaxValue:
		return 0, false
	case c < 0x1p-126:
		// Below the normal range the grid's steps are 2^−134 (Value's
		// float64 is subnormal there): c·2^134 < 256 is exact.
		return uint16(math.Ceil(c * 0x1p134)), true
	}
	// c·2^−896 ≥ 2^−1022 is a normal float64, exactly c scaled: its upper
	// 20 bits (exponent and 8 bits of mantissa) are the code, rounded up
	// when any lower bit is set. Codes are ordered as their values, so the
	// carry into the exponent is right; c ≤ MaxValue keeps q ≤ 0xffff.
	bits := math.Float64bits(c * 0x1p-896)
	q64 := bits >> 44
	if bits&(1<<44-1) != 0 {
		q64++
	}
	return uint16(q64), true
}

// BlockSize is the number of consecutive weights a Blocked groups into a
// block: large enough that the blocks' records cost half a byte a weight,
// small enough that a block's codes are one 64-byte cache line and the
// rejection inside it takes few trials.
const BlockSize = 32

// Blocked draws index i with probability Value(codes[i])/Σ_j Value(codes[j])
// in two levels: a block of BlockSize consecutive indices by Walker's alias
// method over the blocks' sums W_B, then an index inside the block by
// rejection — i drawn uniformly from the block and kept with probability
// Value(codes[i])/Value(top_B), top_B the block's largest code, else
// another drawn from the same block. Its probability is
// W_B/W · Value(codes[i])/W_B, the weight's share, exactly as a Table over
// the decoded weights draws it (up to the rounding of the sums and of the
// keep probabilities, ~10⁻¹⁶, as for a Table).
//
// A trial inside block B is kept with probability W_B/(|B|·Value(top_B)),
// so the expected number of trials of a draw is
// Σ_B |B|·Value(top_B)/W ≤ BlockSize whatever the weights, and near 1 where
// the weights of neighbours are alike; it does not grow with the number of
// weights. The memory is the caller's codes (2 bytes a weight, kept by
// reference and never changed) and a 16-byte record per block, 0.5 byte a
// weight. A Blocked is immutable once built and safe for concurrent
// draws with distinct generators.
type Blocked struct {
	codes []uint16
	rec   []blockRecord
	total float64
}

// blockRecord is column k of the alias table over the blocks, with the
// envelopes of both blocks a draw of the column can yield: a draw reads
// one record whether it keeps the column or takes its alias.
type blockRecord struct {
	prob  float64 // column k keeps block k with probability prob, else yields alias
	alias int32
	top   uint16 // block k's envelope: its largest code
	atop  uint16 // block alias's
}

// NewBlocked builds the sampler for codes in O(len(codes)) time; it keeps
// codes, which the caller must not change afterwards. envelope, nil in
// real use, replaces each block's envelope (its largest code) for the
// tests, which pass wrong ones: one below some code of the block breaks
// the rejection (a weight above the envelope is kept with probability 1,
// not Value(code)/Value(top)), and 0 skips it (every code of positive
// weight kept at once, the block drawn uniformly). It returns an error
// for no codes, codes all zero, or codes whose values sum beyond float64.
func NewBlocked(codes []uint16, envelope func(block []uint16) uint16) (*Blocked, error) {
	n := len(codes)
	if n == 0 {
		return nil, fmt.Errorf("alias: no weights")
	}
	nb := (n + BlockSize - 1) / BlockSize
	if nb > math.MaxInt32 {
		return nil, fmt.Errorf("alias: %d blocks of weights, at most %d supported", nb, math.MaxInt32)
	}
	w := prefault.Make[float64](nb)
	tops := prefault.Make[uint16](nb)
	for b := range nb {
		blk := codes[b*BlockSize : min((b+1)*BlockSize, n)]
		var s float64
		var top uint16
		for _, q := range blk {
			s += Value(q)
			top = max(top, q)
		}
		if envelope != nil {
			top = envelope(blk)
		}
		w[b], tops[b] = s, top
	}
	al := prefault.Make[int32](nb)
	total, err := Build(w, al)
	if err != nil {
		return nil, err
	}
	t := &Blocked{codes: codes, rec: prefault.Make[blockRecord](nb), total: total}
	for k := range t.rec {
		t.rec[k] = blockRecord{prob: w[k], alias: al[k], top: tops[k], atop: tops[al[k]]}
	}
	return t, nil
}

// Draw returns index i with probability Value(codes[i])/Total(): a block's
// column and coin, then trials inside the block until one is kept; no
// allocation.
func (t *Blocked) Draw(rng *rand.Rand) int {
	k := rng.IntN(len(t.rec))
	r := &t.rec[k]
	if rng.Float64() < r.prob {
		return t.within(rng, k, r.top)
	}
	return t.within(rng, int(r.alias), r.atop)
}

// within draws an index of block b ∝ its codes by rejection against the
// envelope top.
func (t *Blocked) within(rng *rand.Rand, b int, top uint16) int {
	lo := b * BlockSize
	env := Value(top)
	if hi := lo + BlockSize; hi <= len(t.codes) {
		blk := t.codes[lo:hi:hi]
		for {
			// One 64-bit number per trial: the position from its top 5
			// bits, the uniform from its low 53 (as rand.Float64 makes
			// one), independent bits of one uniform draw.
			r := rng.Uint64()
			if float64(r<<11>>11)*0x1p-53*env < Value(blk[r>>(64-5)]) {
				return lo + int(r>>(64-5))
			}
		}
	}
	blk := t.codes[lo:]
	for {
		j := rng.IntN(len(blk))
		if rng.Float64()*env < Value(blk[j]) {
			return lo + j
		}
	}
}

// DrawInto sets each idx[j] to an index drawn as Draw draws it: every
// block's column and coin first (DrawColumns), then the columns read in a
// loop of independent loads and the blocks' code lines prefetched, then
// the trials inside each block. The random numbers are Draw's in another
// order, so the indices are independent draws from the same law (not
// those of len(idx) calls of Draw). On a sampler far larger than the
// caches the misses of the records, and then of the codes, overlap. u (at
// least len(idx) long) is scratch.
func (t *Blocked) DrawInto(rng *rand.Rand, idx []int, u []float64) {
	if len(idx) == 0 {
		return
	}
	u = u[:len(idx)]
	DrawColumns(rng, len(t.rec), idx, u)
	for j, k := range idx {
		r := &t.rec[k]
		if u[j] < r.prob {
			u[j] = float64(r.top)
		} else {
			idx[j], u[j] = int(r.alias), float64(r.atop)
		}
	}
	sink := prefetch.Rows(t.codes, BlockSize, 1, idx)
	for j, b := range idx {
		idx[j] = t.within(rng, b, uint16(u[j]))
	}
	u[0] = float64(sink) // scratch: the prefetching reads are not dead
}

// Weight returns Value(codes[i]).
func (t *Blocked) Weight(i int) float64 { return Value(t.codes[i]) }

// Len returns the number of weights.
func (t *Blocked) Len() int { return len(t.codes) }

// Total returns Σ_i Value(codes[i]).
func (t *Blocked) Total() float64 { return t.total }

// Prob returns Value(codes[i])/Total(), the probability that Draw returns i.
func (t *Blocked) Prob(i int) float64 { return t.Weight(i) / t.total }

// Bytes returns the memory the sampler holds: its block records (the
// codes are the caller's, 2 bytes a weight, and not counted).
func (t *Blocked) Bytes() int { return len(t.rec) * 16 }

// ExpectedTrials returns the expected number of trials inside a block per
// draw, Σ_B |B|·Value(top_B)/W.
func (t *Blocked) ExpectedTrials() float64 {
	var s float64
	for b, r := range t.rec {
		s += float64(min(BlockSize, len(t.codes)-b*BlockSize)) * Value(r.top)
	}
	return s / t.total
}

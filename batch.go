// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/alias"
	idistinct "github.com/exactmh/exactmh/internal/distinct"
	"github.com/exactmh/exactmh/internal/prefault"
)

// Mechanisms shared by the minibatch kernels: the chunk size in which
// sampled data are evaluated, the distinct-data counter, subsets without
// replacement, the bound lookup and the full-batch energy difference every
// truncated kernel falls back to.

// batchChunk is the number of sampled data evaluated per call to the
// energy: large enough to amortise the call, small enough to live in fixed
// scratch, so that a batch of any size needs no allocation.
const batchChunk = 256

// distinct counts the distinct data a step touches (package
// internal/distinct, shared with exactmh/multilevel's kernels).
type distinct = idistinct.Set

func newDistinct() distinct { return idistinct.New() }

// posteriorOf rebuilds the Posterior a Target views, to construct its bounds.
func posteriorOf(t *Target) *Posterior {
	return &Posterior{Energy: t.energy, Prior: t.prior, Beta: t.beta}
}

// boundTable builds the alias table ∝ w, the tempered per-datum bound
// constants the kernel draws data from (what names them, in the plural:
// "bound constants c_i (DiffBound.C)"), with errors in the terms of the bound and of β
// rather than the table's. squared: the kernel's batch size grows with the
// square of their sum (TunaMH's χC²M²), which must then be finite and
// non-zero as well.
func boundTable(who, what string, w []float64, t *Target, squared bool) (*alias.Table, error) {
	if err := checkBoundWeights(who, what, w, t, squared); err != nil {
		return nil, err // N = 0 among them: the weights sum to 0
	}
	// One table per run for the same weights (the run's shared bound),
	// whichever kernel asks: TunaMH's (squared) and TFMH's are the same
	// table, built once for the automatic default's two pilots.
	return shared(t.cache, fmt.Sprintf("alias/%s/%p", what, &w[0]), func() (*alias.Table, error) {
		table, err := alias.New(w)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", who, what, err)
		}
		return table, nil
	})
}

// compactConsts are the bound constants c_i = scale·alias.Value(codes[i])
// of a DiffBound in 2 bytes a datum: the control variates' c_i rounded up
// to alias's 16-bit grid (alias.Up), so that each is still a bound, at most
// 2^−8 of itself looser (cvCompactLimit says when and why). Tempering
// multiplies scale by β and shares the codes.
type compactConsts struct {
	codes []uint16
	scale float64
	// envelope, nil in real use, is the tests' wrong envelope for the
	// blocks of the sampler drawn from the codes (alias.NewBlocked).
	envelope func(block []uint16) uint16
}

// at returns c_i.
func (c *compactConsts) at(i int) float64 { return c.scale * alias.Value(c.codes[i]) }

// boundDraws draws data ∝ a tempered DiffBound's c_i and returns each
// drawn datum's c_i: the bound kernels' (TFMH, TunaMH, TunaMH-SGLD)
// sampler. For c_i in a float64 slice it is Walker's alias table over
// them (16 bytes a datum beside the 8 of c_i); for compact c_i it is
// alias.Blocked over their codes — a block of 32 data by an alias table
// over the blocks, then a datum of the block by rejection against the
// block's largest c_i — which draws with the same law from 2.5 bytes a
// datum, codes included. Either way a draw costs O(1) expected time,
// whatever N.
type boundDraws struct {
	table *alias.Table // float64 c_i
	c     []float64
	blk   *alias.Blocked // compact c_i = scale·Value(code_i)
	scale float64
	total float64 // C = Σ_i c_i
}

// at returns c_i of datum i.
func (s *boundDraws) at(i int) float64 {
	if s.blk != nil {
		return s.scale * s.blk.Weight(i)
	}
	return s.c[i]
}

// draw returns a datum drawn ∝ c_i.
func (s *boundDraws) draw(rng *rand.Rand) int {
	if s.blk != nil {
		return s.blk.Draw(rng)
	}
	return s.table.Draw(rng)
}

// drawInto sets idx to data drawn ∝ c_i, through the scratch u (at least
// len(idx) long): alias.Table.DrawInto or alias.Blocked.DrawInto.
func (s *boundDraws) drawInto(rng *rand.Rand, idx []int, u []float64) {
	if s.blk != nil {
		s.blk.DrawInto(rng, idx, u)
		return
	}
	s.table.DrawInto(rng, idx, u)
}

// newBoundDraws returns the sampler ∝ the tempered bound constants of b
// (diffBound's), with boundTable's errors. A compact bound's sampler is
// shared by the run's chains and kernels, as boundTable's table is.
func newBoundDraws(who, what string, b *DiffBound, t *Target, squared bool) (*boundDraws, error) {
	if b.compact == nil {
		table, err := boundTable(who, what, b.C, t, squared)
		if err != nil {
			return nil, err
		}
		return &boundDraws{table: table, c: b.C, total: table.Total()}, nil
	}
	cc := b.compact
	blk, err := shared(t.cache, fmt.Sprintf("blocked/%s/%p", what, &cc.codes[0]), func() (*alias.Blocked, error) {
		blk, err := alias.NewBlocked(cc.codes, cc.envelope)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", who, what, err)
		}
		return blk, nil
	})
	if err != nil {
		if err := checkBoundSum(who, what, 0, t, squared); err != nil {
			return nil, err // all zero: the error in the bound's terms
		}
		return nil, err
	}
	total := cc.scale * blk.Total()
	if err := checkBoundSum(who, what, total, t, squared); err != nil {
		return nil, err
	}
	return &boundDraws{blk: blk, scale: cc.scale, total: total}, nil
}

// datumRecord is what SMH's step reads of a datum it draws,
// kept together: the datum's column of the alias table over the data's
// weights (as alias.Table's: a draw of column k keeps k with probability
// prob, else yields alias) and the kernel's own terms of the datum, T. A
// draw reads column k's record; when it keeps k — most draws where the
// weights are near uniform — that is also the drawn datum's terms, one
// cache miss where a separate table and separate arrays cost one each
// (docs/scaling.md, "Per-datum records and prefetch instructions"). The
// bound kernels (TunaMH, TFMH, the Poisson kernels) keep the table and
// their arrays instead: their records would be 32 bytes a datum where the
// table's columns are 16, and building them costs the automatic default's
// pilots more than the steps gain (docs/scaling.md).
type datumRecord[T any] struct {
	prob  float64
	alias int32
	data  T
}

// newRecords returns the records of table's columns, with data(i) as
// datum i's terms.
func newRecords[T any](table *alias.Table, data func(i int) T) []datumRecord[T] {
	recs := prefault.Make[datumRecord[T]](table.Len())
	for k := range recs {
		prob, a := table.Column(k)
		recs[k] = datumRecord[T]{prob: prob, alias: int32(a), data: data(k)}
	}
	return recs
}

// drawRecords draws len(group) data into group as the table the records
// were built from draws them (alias.Table.DrawInto: the same random
// numbers, the same indices), then a thinning uniform for each into coins:
// the group of data SMH's step draws before reading any, in the order of
// the random stream it keeps. The columns are read in a loop of their own,
// so that their misses overlap.
func drawRecords[T any](rng *rand.Rand, recs []datumRecord[T], group []int, coins []float64) {
	alias.DrawColumns(rng, len(recs), group, coins) // coins as scratch, then drawn
	for j, k := range group {
		if r := &recs[k]; !(coins[j] < r.prob) {
			group[j] = int(r.alias)
		}
	}
	for j := range coins {
		coins[j] = rng.Float64()
	}
}

// checkBoundWeights checks boundTable's weights, with its errors.
func checkBoundWeights(who, what string, w []float64, t *Target, squared bool) error {
	var sum float64
	for i, v := range w {
		if !(v >= 0) {
			return fmt.Errorf("%s: %s: datum %d has %v, want ≥ 0", who, what, i, v)
		}
		sum += v
	}
	return checkBoundSum(who, what, sum, t, squared)
}

// checkBoundSum checks the sum of boundTable's weights, with its errors.
func checkBoundSum(who, what string, sum float64, t *Target, squared bool) error {
	switch beta := t.Beta(); {
	case sum == 0 && beta != 1:
		return fmt.Errorf("%s: the %s are all 0 after tempering by β = %v: raise β, or check the bound", who, what, beta)
	case sum == 0:
		return fmt.Errorf("%s: the %s are all 0, so the bound says no datum can move the energy and there is nothing for a minibatch to estimate: check the bound (MH needs none)", who, what)
	case math.IsInf(sum, 1), squared && (math.IsInf(sum*sum, 1) || sum*sum == 0):
		big := "large"
		if sum < 1 {
			big = "small"
		}
		return fmt.Errorf("%s: the %s sum to C = %v after tempering by β = %v: too %s for the minibatch sizes, which grow with C², to be computed; %s β, or use tighter bounds",
			who, what, sum, beta, big, map[string]string{"large": "lower", "small": "raise"}[big])
	}
	return nil
}

// betaNote says, when β ≠ 1, that the bounds behind a kernel's batch size
// are tempered by it: an out-of-range batch size may be β's doing.
func betaNote(t *Target) string {
	if t.Beta() == 1 {
		return ""
	}
	return fmt.Sprintf("; the bounds are tempered by β = %v, which may be too large or too small for this data", t.Beta())
}

// shuffleLogged draws len(swaps) data uniformly without replacement into
// perm[:len(swaps)] by a partial Fisher–Yates shuffle (TunaMH-SGLD's
// minibatches) and records each swap's partner in swaps so that unshuffle
// can undo it.
func shuffleLogged(rng *rand.Rand, perm, swaps []int) {
	n := len(perm)
	for k := range swaps {
		r := k + rng.IntN(n-k)
		swaps[k] = r
		perm[k], perm[r] = perm[r], perm[k]
	}
}

// unshuffle undoes shuffleLogged's swaps, replaying them in reverse.
func unshuffle(perm, swaps []int) {
	for k := len(swaps) - 1; k >= 0; k-- {
		r := swaps[k]
		perm[k], perm[r] = perm[r], perm[k]
	}
}

// diffBound returns the kernel's DiffBound in tempered units, β·c_i: b (in
// the untempered energy's units, as every user-supplied bound) checked
// against the data, or the posterior's own when b is nil. The caller's b is
// never changed.
func diffBound(who string, t *Target, b *DiffBound) (*DiffBound, error) {
	// The run's chains share one tempered bound: the posterior's, or the
	// kernel's (the same *DiffBound for every chain of a run).
	return shared(t.cache, fmt.Sprintf("diffbound/%p", b), func() (*DiffBound, error) {
		return buildDiffBound(who, t, b)
	})
}

// buildDiffBound is diffBound without the run's cache.
func buildDiffBound(who string, t *Target, b *DiffBound) (*DiffBound, error) {
	if b == nil {
		var err error
		if b, err = posteriorOf(t).diffBound(); err != nil {
			return nil, within(who, err)
		}
	} else if err := b.check(t.N()); err != nil {
		return nil, within(who, err)
	}
	if t.beta == 1 {
		return b, nil
	}
	if cc := b.compact; cc != nil {
		return &DiffBound{Metric: b.Metric, compact: &compactConsts{codes: cc.codes, scale: t.beta * cc.scale, envelope: cc.envelope}}, nil
	}
	out := &DiffBound{C: prefault.Make[float64](len(b.C)), Metric: b.Metric}
	for i, c := range b.C {
		out.C[i] = t.beta * c
	}
	return out, nil
}

// energyRange returns the kernel's EnergyRange in tempered units, β·Lo and
// β·Width: r (untempered, as every user-supplied bound) checked against the
// data, or the posterior's own when r is nil. The caller's r is never
// changed.
func energyRange(who string, t *Target, r *EnergyRange) (*EnergyRange, error) {
	return shared(t.cache, fmt.Sprintf("energyrange/%p", r), func() (*EnergyRange, error) {
		return buildEnergyRange(who, t, r)
	})
}

// buildEnergyRange is energyRange without the run's cache.
func buildEnergyRange(who string, t *Target, r *EnergyRange) (*EnergyRange, error) {
	if r == nil {
		var err error
		if r, err = posteriorOf(t).energyRange(t.interrupt); err != nil {
			if errors.Is(err, errInterrupted) {
				return nil, err
			}
			return nil, within(who, err)
		}
	} else if err := r.check(t.N()); err != nil {
		return nil, within(who, err)
	}
	if t.beta == 1 {
		return r, nil
	}
	out := &EnergyRange{Lo: prefault.Make[float64](len(r.Lo)), Width: prefault.Make[float64](len(r.Width))}
	for i := range r.Lo {
		out.Lo[i], out.Width[i] = t.beta*r.Lo[i], t.beta*r.Width[i]
	}
	return out, nil
}

// fullEnergyDiff returns β Σ_i (U_i(θ) − U_i(θ′)) over all N data, in chunks
// through the caller's scratch: the exact log-likelihood ratio of a
// full-batch MH step, which the truncated kernels fall back to. Like the
// Target's own passes it returns errInterrupted, within a chunk, once the
// run is cancelled (Target.interrupt).
func fullEnergyDiff(t *Target, theta, next []float64, idx *[batchChunk]int, diff *[batchChunk]float64) (float64, error) {
	n := t.N()
	var sum float64
	for lo := 0; lo < n; lo += batchChunk {
		if t.interrupted() {
			return 0, errInterrupted
		}
		m := min(batchChunk, n-lo)
		for j := range m {
			idx[j] = lo + j
		}
		if err := t.EnergyDiffs(diff[:m], theta, next, idx[:m]); err != nil {
			return 0, err
		}
		for _, d := range diff[:m] {
			sum += d
		}
	}
	return sum, nil
}

// fullEnergies is the memo behind the full-batch MH steps of a minibatch
// chain whose every step is one (warmup switched it to MH, or no batch
// fits its MaxBatch): βΣ_iU_i at the last two points it evaluated. A step
// from a remembered θ — every step after the first, θ being the last
// step's θ or θ′ — evaluates each datum once, at θ′, as MH does, where
// fullEnergyDiff evaluates every datum at both points (a logistic
// regression's fused difference costs two losses and two inner products,
// MH's one of each: the switched chains ran at half MH's speed at d = 50
// and 100). An isolated fallback keeps fullEnergyDiff: the memo would have
// to read θ too. The points are compared exactly, in O(d), so the memo is
// right wherever the chain moved in between.
type fullEnergies struct {
	at [2][]float64 // the points; a slot is filled when its point is not empty
	u  [2]float64
}

// newFullEnergies returns the empty memo of a d-dimensional chain (d ≥ 1),
// its storage allocated at the chain's start so that no step allocates.
func newFullEnergies(d int) fullEnergies {
	buf := make([]float64, 2*d)
	return fullEnergies{at: [2][]float64{buf[:0:d], buf[d:d]}}
}

// fallback returns β Σ_i (U_i(θ) − U_i(θ′)) over all N data for a
// fallback step: through the memo when every step is one, else by
// fullEnergyDiff through the scratch idx and diff.
func (f *fullEnergies) fallback(t *Target, theta, next []float64, every bool, idx *[batchChunk]int, diff *[batchChunk]float64) (float64, error) {
	if every {
		return f.diff(t, theta, next)
	}
	return fullEnergyDiff(t, theta, next, idx, diff)
}

// diff returns β Σ_i (U_i(θ) − U_i(θ′)) over all N data.
func (f *fullEnergies) diff(t *Target, theta, next []float64) (float64, error) {
	k := f.find(theta)
	if k < 0 {
		u, uNext, err := t.totalEnergies(theta, next)
		if err != nil {
			return 0, err
		}
		f.keep(0, theta, u)
		f.keep(1, next, uNext)
		return u - uNext, nil
	}
	if j := 1 - k; !slices.Equal(f.at[j], next) {
		u, err := t.TotalEnergy(next)
		if err != nil {
			return 0, err
		}
		f.keep(j, next, u)
	}
	return f.u[k] - f.u[1-k], nil
}

// find returns the slot that holds theta, or −1.
func (f *fullEnergies) find(theta []float64) int {
	for k := range f.at {
		if len(f.at[k]) > 0 && slices.Equal(f.at[k], theta) {
			return k
		}
	}
	return -1
}

// keep remembers βΣ_iU_i(theta) = u in slot k (in newFullEnergies' storage).
func (f *fullEnergies) keep(k int, theta []float64, u float64) {
	f.at[k], f.u[k] = append(f.at[k][:0], theta...), u
}

// fullMemoer is a chain whose full-batch MH steps keep a fullEnergies
// memo. Checkpoints save the memo, so that a resumed run reads the data
// exactly as the uninterrupted one would have (its Totals agree).
type fullMemoer interface{ fullMemo() *fullEnergies }

// savedMemo is a fullEnergies memo in a checkpoint: its filled slots.
type savedMemo struct {
	Slot []int
	At   [][]float64
	U    []float64
}

// save returns the memo's filled slots, or nil if it has none.
func (f *fullEnergies) save() *savedMemo {
	var s savedMemo
	for k := range f.at {
		if len(f.at[k]) > 0 {
			s.Slot, s.At, s.U = append(s.Slot, k), append(s.At, f.at[k]), append(s.U, f.u[k])
		}
	}
	if len(s.Slot) == 0 {
		return nil
	}
	return &s
}

// restore refills the memo of a d-dimensional chain from s, after
// checking it.
func (f *fullEnergies) restore(s *savedMemo, d int) error {
	if len(s.Slot) > len(f.at) || len(s.At) != len(s.Slot) || len(s.U) != len(s.Slot) {
		return fmt.Errorf("saved full-batch energy memo has %d slots, %d points and %d energies, want at most %d of each", len(s.Slot), len(s.At), len(s.U), len(f.at))
	}
	for j, k := range s.Slot {
		if k < 0 || k >= len(f.at) || len(f.at[k]) > 0 {
			return fmt.Errorf("saved full-batch energy memo: slot %d repeated or outside 0…%d", k, len(f.at)-1)
		}
		if len(s.At[j]) != d || math.IsNaN(s.U[j]) || math.IsInf(s.U[j], 0) {
			return fmt.Errorf("saved full-batch energy memo: slot %d has a point of dimension %d (want %d) and energy %v (want finite)", k, len(s.At[j]), d, s.U[j])
		}
		f.keep(k, s.At[j], s.U[j])
	}
	return nil
}

// diffViolation reports datum i whose energy (or remainder) difference d
// between θ and θ′ exceeds its bound: the kernel's probabilities would leave
// [0, 1] and the chain be inexact, so the step fails with the numbers.
func diffViolation(i int, d, bound float64, theta, next []float64) *BoundViolation {
	return &BoundViolation{Datum: i, Theta: slices.Clone(theta), ThetaNew: slices.Clone(next),
		Value: math.Abs(d), Bound: bound, Ratio: math.Abs(d) / bound}
}

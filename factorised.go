// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	idistinct "github.com/exactmh/exactmh/internal/distinct"
	"github.com/exactmh/exactmh/internal/poisson"
)

// factorisedChain is a kernel's side of the factorised MH step
// (factorised): TFMH's, SMH's and, through Walk.Factorised, GroupSMH's.
type factorisedChain interface {
	// firstFactor returns the log of the step's first factor, the part
	// of the ratio decided by one uniform (the prior and proposal's,
	// with SMH's control variates, and GroupSMH's data evaluated
	// exactly), and how many data it read.
	firstFactor(logExact float64) (log1 float64, read int, err error)
	// draw sets group to data drawn ∝ their bounds and coins to their
	// thinning uniforms.
	draw(rng *rand.Rand, group []int, coins []float64)
	// prefetch starts loading what datumFactor will read of the data.
	prefetch(group []int)
	// datumFactor returns datum i's exponent r_i, whose factor is
	// min(1, e^{−r_i}), and its bound b_i ≥ |r_i| (checked: an error
	// where it fails).
	datumFactor(i int) (r, bound float64, err error)
}

// factorised is the factorised Metropolis–Hastings step once the expected
// batch rate = Σ_i b_i is known, written once for TFMH, SMH and GroupSMH.
// Factorised MH accepts with a product of factors, each reversible, so
// their product is (Cornish et al. 2019; TunaMH paper §2.2):
//
//   - Truncation: where rate exceeds maxRate (or is +Inf) the step is a
//     full MH step instead, decided from the rate alone so that the chain
//     stays exact; maxRate = asMHRate (the mid-warmup switch to MH) makes
//     every step one, remembering the energies at θ.
//   - The first factor, min(1, e^{log1}), by one uniform.
//   - One factor min(1, e^{−r_i}) per datum, by Poisson thinning: K ~
//     Poisson(rate) data drawn ∝ b_i, each rejecting with probability
//     max(0, r_i)/b_i; the first rejection ends the step, and no datum is
//     evaluated after the step is decided. The data are drawn len(group)
//     at a time, each with its thinning uniform (drawn for every datum,
//     used only where r_i > 0), and prefetched before any is evaluated,
//     so that the group's cache misses are outstanding together; the
//     indices and uniforms are independent draws whichever order they
//     come in, so this is the same kernel, and at most a group's worth of
//     draws is spent past a rejection.
//
// seen counts the distinct data the step reads (Info.Distinct); fullIdx
// and fullDiff are the full MH step's scratch.
func (w *walk) factorised(rng *rand.Rand, c factorisedChain, logExact, rate, maxRate float64, seen *distinct, group []int, coins []float64, fullIdx *[batchChunk]int, fullDiff *[batchChunk]float64) (Info, error) {
	if rate > maxRate || math.IsInf(rate, 1) {
		return w.fullMHStep(rng, logExact, maxRate == asMHRate, fullIdx, fullDiff)
	}
	info := Info{AcceptProb: math.NaN(), LogDensity: math.NaN()}
	seen.Next()
	log1, read, err := c.firstFactor(logExact)
	if err != nil {
		return Info{}, err
	}
	if log1 < 0 && rng.Float64() >= math.Exp(log1) {
		info.Batch, info.Distinct = read, seen.Count
		return info, nil
	}
	if err := poisson.Check(rate); err != nil {
		return Info{}, fmt.Errorf("%w at θ = %v, θ′ = %v", err, w.theta, w.next)
	}
	draws := poisson.Draw(rng, rate)
	ahead := len(group)
	for lo := 0; lo < draws; lo += ahead {
		// A minibatch can be as long as a pass over the data (the
		// expected batch is at most maxRate, the draw itself unbounded):
		// a cancelled run stops within a chunk of it, the chain as it was.
		if lo%batchChunk == 0 && lo > 0 && w.t.interrupted() {
			return Info{}, errInterrupted
		}
		group := group[:min(ahead, draws-lo)]
		coins := coins[:len(group)]
		c.draw(rng, group, coins)
		c.prefetch(group)
		for k, i := range group {
			seen.Add(i)
			r, bound, err := c.datumFactor(i)
			if err != nil {
				return Info{}, err
			}
			// u·b_i ≥ 0, so this rejects only where r_i > 0, as the
			// factor min(1, e^{−r_i}) asks, without a branch on its sign
			// (positive about half the time: unpredictable).
			if coins[k]*bound < r {
				info.Batch, info.Distinct = read+lo+k+1, seen.Count
				return info, nil
			}
		}
	}
	// Every factor accepted.
	info.Batch, info.Distinct = read+draws, seen.Count
	copy(w.theta, w.next)
	info.Accepted = true
	return info, nil
}

// Factorised makes the factorised MH step of a kernel written outside the
// package (GroupSMH) once its expected batch rate is known: the step
// TFMH and SMH make (see their documentation), with the kernel's parts
// as functions — first, the log of the first factor and the data it read;
// draw, a datum drawn ∝ its bound with its thinning uniform (one at a
// time: group and coins have length 1); remainder, datum i's exponent r_i
// and bound b_i ≥ |r_i|. Where rate exceeds maxRate the step is FullMH.
// seen counts the distinct data (Info.Distinct). The functions are kept
// until the next call: pass method values made once, so that a step
// allocates nothing.
func (w *Walk) Factorised(rng *rand.Rand, logExact, rate, maxRate float64, seen *idistinct.Set,
	first func(logExact float64) (float64, int, error), draw func(rng *rand.Rand, group []int, coins []float64), remainder func(i int) (r, bound float64, err error)) (Info, error) {
	w.fns = funcChain{first, draw, remainder}
	return w.w.factorised(rng, &w.fns, logExact, rate, maxRate, seen, w.idx[:1], w.diff[:1], &w.idx, &w.diff)
}

// funcChain is a factorisedChain of functions (Walk.Factorised).
type funcChain struct {
	first  func(logExact float64) (float64, int, error)
	drawFn func(rng *rand.Rand, group []int, coins []float64)
	rem    func(i int) (r, bound float64, err error)
}

func (f *funcChain) firstFactor(logExact float64) (float64, int, error) { return f.first(logExact) }
func (f *funcChain) draw(rng *rand.Rand, group []int, coins []float64)  { f.drawFn(rng, group, coins) }
func (f *funcChain) prefetch([]int)                                     {}
func (f *funcChain) datumFactor(i int) (float64, float64, error)        { return f.rem(i) }

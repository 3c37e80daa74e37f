// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// mhRival is the comparison with full-batch MH that a minibatch chain
// makes halfway through warmup (midWarmuper), and the switch it leaves:
// on a concentrated posterior the data a minibatch step must read can cost
// more than a full pass buys, and a kernel that would be slower than MH
// runs as MH instead and says so (Params "as_mh", "mh_speedup"; Summary
// warns). SMH and TFMH embed it whole; TunaMH uses its comparison beside
// its own χ state.
//
// Efficiency is expected squared jump distance E[α·‖θ′ − θ‖²] per unit of
// cost, measured rather than modelled so that it holds for any Proposal.
// From the current point, with the rival's own generator (the chain's
// stream is untouched; θ does not move), mhProbes proposals at a scale and
// their full-batch log ratios give MH's acceptance ā(s) and jump J(s)
// there. The chain's jump per unit of cost is J(s_c)·a_c/ā(s_c)/(8·B̄_c +
// stepCost): it accepts a_c (measured so far in warmup, capped at ā(s_c):
// an average over the scales warmup moved through can exceed what the
// chain accepts at s_c) where MH accepts ā(s_c), at B̄_c data per step (minibatchDatumCost and the step cost are in
// units of one datum of a full pass). MH's is the best J(s)/N over
// s_c·4^k, k < mhScales, stopping once its acceptance falls below 5%. If
// MH's is larger the chain runs as MH from here on — every step a full MH
// step, marked Info.Fallback — from MH's best scale, where the driver
// restarts the step adaptation. Exactness never depends on it: the switch
// is made in warmup, from the rival's stream only. The costs are fixed
// constants, not timings, so that a seed gives the same draws on every run.
type mhRival struct {
	src  *rand.PCG
	rng  *rand.Rand
	buf  []float64
	idx  [batchChunk]int
	diff [batchChunk]float64

	asMH    bool    // warmup switched the chain to full-batch MH
	speedup float64 // MH's predicted speed-up when it did
}

// newMHRival returns a rival for a d-dimensional chain.
func newMHRival(d int) *mhRival {
	src := rand.NewPCG(0x6d68, 0x70726f6265)
	return &mhRival{src: src, rng: rand.New(src), buf: make([]float64, d)}
}

// The cost of a minibatch step in units of one datum's energy in a full
// pass: a datum drawn at random costs about 8 (alias draw, bound, a row
// out of cache, the ejection test; examples/tall, rlr d = 10: TunaMH 109 ns
// per datum drawn, MH 10 ns per datum of a pass) and a step about 50 more
// (proposal, prior, Poisson draw).
const (
	minibatchDatumCost = 8
	minibatchStepCost  = 50
)

// mhProbes is the number of full-batch log ratios per step scale behind
// the comparison, and mhScales the most scales tried.
const (
	mhProbes = 6
	mhScales = 5
)

// compare measures MH against the chain walking w on t, whose warmup so
// far is warm and whose steps cost stepCost beyond their data. If MH wins
// it returns MH's best scale and true, and records the switch.
func (r *mhRival) compare(w *walk, t *Target, warm Totals, stepCost float64) (float64, bool, error) {
	if r.asMH || warm.Steps == 0 {
		return 0, false, nil
	}
	if r.clearlyFaster(w, t, warm, stepCost) {
		return 0, false, nil
	}
	r.src.Seed(0x6d68, 0x70726f6265)
	probe := func(scale float64) (jump, acc float64, err error) {
		for range mhProbes {
			logQ := w.prop.Propose(r.rng, r.buf, w.theta, scale)
			lp := t.LogPrior(r.buf) - t.LogPrior(w.theta)
			if math.IsInf(lp, -1) || math.IsNaN(lp) {
				continue // outside the support: a rejection
			}
			d, err := fullEnergyDiff(t, w.theta, r.buf, &r.idx, &r.diff)
			if err != nil {
				return 0, 0, err
			}
			a := math.Exp(min(lp+logQ+d, 0))
			var sq float64
			for j, v := range r.buf {
				sq += (v - w.theta[j]) * (v - w.theta[j])
			}
			acc += a
			jump += a * sq
		}
		return jump / mhProbes, acc / mhProbes, nil
	}
	j0, a0, err := probe(w.scale)
	if err != nil {
		return 0, false, err
	}
	// The warmup's acceptance so far is an average over scales that
	// adaptation has moved through; at the current scale the chain does
	// not accept more than MH does (its ratio is an unbiased-type estimate
	// of MH's), so a_c is capped at ā(s_c).
	own := j0 * math.Min(warm.AcceptRate(), a0) / max(a0, 1e-12) / (minibatchDatumCost*warm.MeanBatch() + stepCost)
	best, bestScale := j0, w.scale
	for k, s := 1, 4*w.scale; k < mhScales; k, s = k+1, 4*s {
		j, a, err := probe(s)
		if err != nil {
			return 0, false, err
		}
		if j > best {
			best, bestScale = j, s
		}
		if a < 0.05 {
			break
		}
	}
	mh := best / float64(t.N())
	if !(mh > own) {
		return 0, false, nil
	}
	r.asMH, r.speedup = true, math.Min(mh/own, math.MaxFloat64)
	return bestScale, true, nil
}

// clearlyFaster reports, without reading any datum, whether the chain is
// so much faster than MH could be that the probes (up to mhProbes·mhScales
// full passes, seconds on 10⁶ data) are not worth making. MH's expected
// squared jump at scale s is at most its proposal's, J_q(s) (acceptance ≤
// 1), so MH's efficiency is at most max_k J_q(s_c·4^k)/N over the scales
// the probes would try; the chain's is about a_c·J_q(s_c)/(8·B̄_c +
// stepCost). The chain is clearly faster when its estimate exceeds MH's
// bound by rivalMargin, a margin for accepted moves being shorter than
// the average proposal. The proposals come from the rival's generator,
// reseeded before the probes, so the probes are the same as without it.
func (r *mhRival) clearlyFaster(w *walk, t *Target, warm Totals, stepCost float64) bool {
	r.src.Seed(0x6a756d70, 0x626f756e64)
	jumpAt := func(scale float64) float64 {
		var sum float64
		for range mhProbes {
			w.prop.Propose(r.rng, r.buf, w.theta, scale)
			for j, v := range r.buf {
				sum += (v - w.theta[j]) * (v - w.theta[j])
			}
		}
		return sum / mhProbes
	}
	own := warm.AcceptRate() * jumpAt(w.scale) / (minibatchDatumCost*warm.MeanBatch() + stepCost)
	var mhBound float64
	for k, s := 0, w.scale; k < mhScales; k, s = k+1, 4*s {
		mhBound = math.Max(mhBound, jumpAt(s))
	}
	return own > rivalMargin*mhBound/float64(t.N())
}

// rivalMargin is how much faster than MH's best possible efficiency the
// chain's estimated one must be to skip the probes.
const rivalMargin = 10

// params adds the switch to a chain's Params.
func (r *mhRival) params(p map[string]float64) map[string]float64 {
	if r.asMH {
		p["as_mh"], p["mh_speedup"] = 1, r.speedup
	}
	return p
}

// rivalState is what a chain whose only state is the switch saves.
type rivalState struct {
	AsMH    bool
	Speedup float64
}

// MarshalState saves whether warmup switched the chain to MH.
func (r *mhRival) MarshalState() ([]byte, error) {
	if !r.asMH {
		return nil, nil // as a chain without the switch always saved
	}
	return gobState(rivalState{r.asMH, r.speedup})
}

// UnmarshalState restores it; the empty state is a chain not switched.
func (r *mhRival) UnmarshalState(b []byte) error {
	if len(b) == 0 {
		r.asMH, r.speedup = false, 0
		return nil
	}
	var s rivalState
	if err := ungobState(b, &s); err != nil {
		return err
	}
	if !s.AsMH || !(s.Speedup > 1) || math.IsInf(s.Speedup, 0) {
		return fmt.Errorf("saved switch to MH %v with predicted speed-up %v, want true and finite > 1", s.AsMH, s.Speedup)
	}
	r.asMH, r.speedup = true, s.Speedup
	return nil
}

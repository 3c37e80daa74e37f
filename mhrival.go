// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/chainstate"

	"github.com/exactmh/exactmh/internal/vec"
)

// asMHRate is the truncation threshold (TFMH's and SMH's maxRate) of a
// chain that runs as full-batch MH: every expected batch, ≥ 0, exceeds it,
// so every step is a full MH step (fullMHStep with asMH).
const asMHRate = -1.0

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
// The chain's is ā·J_q(s_c)/(8·B̄_c + stepCost): J_q(s_c) the mean squared
// length of 64 of its proposals at its current scale (no datum read), B̄_c
// its batch so far in warmup, the costs in units of one datum of a full
// pass (minibatchDatumCost, stepCost), and ā the mean of its warmup
// acceptance (an average over the scales adaptation moved through) and
// MH's at s_c (a minibatch kernel accepts about what MH does at the same
// scale; each estimate alone is biased or noisy). MH's is the best J(s)/N
// over s_c·4^k, k = −2 … 8 (upwards stopping once MH's acceptance falls
// below 5%), with J(s) from mhProbes proposals at s and their full-batch
// log ratios (Rao–Blackwellised: Σ min(1, r)·‖θ′ − θ‖²). The probes are
// skipped when even MH's bound J_q(s)/N over those scales (acceptance 1)
// is rivalMargin below the chain's estimate from its own acceptance. If
// MH's is at least rivalSwitchMargin times the chain's, the chain runs as
// MH from here on — every step a full MH step, marked Info.Fallback —
// from MH's best scale, where the driver restarts the step adaptation.
// All of it comes from the rival's own generator (the chain's stream is
// untouched; θ does not move), so exactness never depends on it, and the
// costs are fixed constants, not timings, so that a seed gives the same
// draws on every run.
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
// out of cache, the ejection test, against a streamed row in a pass) and a
// step about 50 more (proposal, prior, Poisson draw); BenchmarkStepAcrossN
// and BenchmarkGatherAcrossN measure both.
const (
	minibatchDatumCost = 8
	minibatchStepCost  = 50
)

// mhProbes is the number of full-batch log ratios per step scale behind
// the comparison; MH's bound is taken over mhScales scales around the
// chain's, and its efficiency measured at up to mhLongerScales longer ones
// (×4 each, until MH's acceptance falls below 5%): a chain whose χ or
// batch kept its steps short adapted a scale that can be far below MH's
// best.
const (
	mhProbes       = 6
	mhScales       = 5
	mhLongerScales = 8
)

// compare measures MH against the chain walking w on t, whose warmup so
// far totals warmup and whose steps cost stepCost beyond their data. If MH wins
// it returns MH's best scale and true, and records the switch.
func (r *mhRival) compare(w *walk, t *Target, warmup Totals, stepCost float64) (float64, bool, error) {
	if r.asMH || warmup.Steps == 0 {
		return 0, false, nil
	}
	own, jc, cost := r.ownEfficiency(w, nil, warmup, stepCost)
	// The chain's acceptance at s_c: its warmup average a_c is over the
	// scales adaptation moved through, and a minibatch kernel accepts
	// about what MH does at the same scale, so once MH's ā(s_c) is probed
	// a_c is averaged with it (each alone is noisy or biased).
	refine := func(a0 float64) float64 { return (warmup.AcceptRate() + a0) / 2 * jc / cost }
	return r.against(walkProposer(w), saturation(w.prop), t, w.theta, w.scale, own, refine)
}

// ownEfficiency is the efficiency of the chain walking w from its warmup
// so far and ownJumpProposals of its proposals (propose; nil: the walk's
// Proposal) at its scale (no datum read): ā·J_q(s_c)/(8·B̄_c + stepCost),
// with J_q(s_c) = jump and the denominator cost.
func (r *mhRival) ownEfficiency(w *walk, propose proposer, warmup Totals, stepCost float64) (own, jump, cost float64) {
	if propose == nil {
		propose = walkProposer(w)
	}
	r.src.Seed(0x6a756d70, 0x626f756e64)
	cost = minibatchDatumCost*warmup.MeanBatch() + stepCost
	jump = r.proposalJump(propose, w.theta, w.scale, ownJumpProposals)
	return warmup.AcceptRate() * jump / cost, jump, cost
}

// proposer draws a proposal θ′ from the chain's position at a step scale
// from the generator given (never the chain's) and returns its log
// proposal ratio log q(θ|θ′) − log q(θ′|θ): the walk's Proposal, or a
// chain's own move (TunaMH-SGLD's Langevin step).
type proposer func(rng *rand.Rand, next []float64, scale float64) (logQ float64, err error)

// walkProposer is the Proposal of the walk w from its position.
func walkProposer(w *walk) proposer {
	return func(rng *rand.Rand, next []float64, scale float64) (float64, error) {
		return w.prop.Propose(rng, next, w.theta, scale), nil
	}
}

// against compares full-batch MH with proposals from propose at theta
// with a chain whose efficiency is own (in the units above) at scale. If
// refine is not nil it re-estimates own from MH's acceptance at that
// scale once probed. If MH wins by rivalSwitchMargin it returns MH's best
// scale and true, and records the switch.
//
// Scales at or above sat (saturation) make the same moves, so MH is
// probed at one of them at most: a scale above it would cost mhProbes
// full passes to estimate the same jump again (a Crank–Nicolson chain at
// its independence limit otherwise probed eight longer scales, 48 of the
// comparison's 66 passes; TestRivalSaturation).
func (r *mhRival) against(propose proposer, sat float64, t *Target, theta []float64, scale, own float64,
	refine func(mhAccept float64) float64) (float64, bool, error) {
	if r.asMH {
		return 0, false, nil
	}
	// MH's bound (acceptance 1), from proposals alone.
	r.src.Seed(0x6a756d70, 0x626f756e64)
	var mhBound float64
	for k, s := -mhScales/2, scale/16; k <= mhLongerScales; k, s = k+1, 4*s {
		mhBound = math.Max(mhBound, r.proposalJump(propose, theta, s, mhProbes))
	}
	if own > rivalMargin*mhBound/float64(t.N()) {
		return 0, false, nil // clearly faster: no probe worth its full passes
	}
	// MH's efficiency, measured.
	r.src.Seed(0x6d68, 0x70726f6265)
	probe := func(s float64) (jump, acc float64, err error) {
		for range mhProbes {
			logQ, err := propose(r.rng, r.buf, s)
			if err != nil {
				return 0, 0, err
			}
			lp := t.LogPrior(r.buf) - t.LogPrior(theta)
			if math.IsInf(lp, -1) || math.IsNaN(lp) {
				continue // outside the support: a rejection
			}
			d, err := fullEnergyDiff(t, theta, r.buf, &r.idx, &r.diff)
			if err != nil {
				return 0, 0, err
			}
			a := math.Exp(min(lp+logQ+d, 0))
			acc += a
			jump += a * vec.SqDist(r.buf, theta)
		}
		return jump / mhProbes, acc / mhProbes, nil
	}
	j0, a0, err := probe(scale)
	if err != nil {
		return 0, false, err
	}
	if refine != nil {
		own = refine(a0)
	}
	best, bestScale := j0, scale
	try := func(s float64) (float64, error) {
		j, a, err := probe(s)
		if err == nil && j > best {
			best, bestScale = j, s
		}
		return a, err
	}
	for k, s := 1, 4*scale; k <= mhLongerScales && s/4 < sat; k, s = k+1, 4*s { // longer steps
		a, err := try(s)
		if err != nil {
			return 0, false, err
		}
		if a < 0.05 {
			break
		}
	}
	for k, s := 1, scale/4; k <= mhScales/2; k, s = k+1, s/4 { // shorter steps
		if s >= sat {
			continue // the same moves as at scale, probed
		}
		if _, err := try(s); err != nil {
			return 0, false, err
		}
	}
	mh := best / float64(t.N())
	if !(mh > rivalSwitchMargin*own) {
		return 0, false, nil
	}
	r.asMH, r.speedup = true, math.Min(mh/own, math.MaxFloat64)
	return bestScale, true, nil
}

// force records a switch to MH that no measured efficiency decided: a
// chain whose χ search judged no step (chiTurn) and whose MH probes all
// rejected. It returns the shortest scale against probed, where MH's
// acceptance is highest, for the driver's step adaptation to start from,
// and records the speed-up as the largest finite one, as against does for
// a chain of efficiency 0.
func (r *mhRival) force(scale float64) float64 {
	r.asMH, r.speedup = true, math.MaxFloat64
	return scale / math.Pow(4, mhScales/2)
}

// saturation returns the step scale from which the proposal p makes the
// same moves at any larger scale: a Crank–Nicolson proposal's cap
// MaxScale, or without a cap its independence limit cnIndependentScale
// (ρ below a double's rounding); +Inf for any other proposal.
func saturation(p Proposal) float64 {
	cn, ok := p.(*CrankNicolson)
	switch {
	case !ok || cn == nil:
		return math.Inf(1)
	case cn.MaxScale > 0:
		return min(cn.MaxScale, cnIndependentScale)
	default:
		return cnIndependentScale
	}
}

// proposalJump returns the mean ‖θ′ − θ‖² of n proposals at scale, from
// the rival's generator; it reads no datum.
func (r *mhRival) proposalJump(propose proposer, theta []float64, scale float64, n int) float64 {
	var sum float64
	for range n {
		if _, err := propose(r.rng, r.buf, scale); err != nil {
			return math.Inf(1) // unknown: never skip the probes on it
		}
		sum += vec.SqDist(r.buf, theta)
	}
	return sum / float64(n)
}

// ownJumpProposals is how many proposals estimate the chain's own jump
// (free: no datum is read).
const ownJumpProposals = 64

// rivalMargin is how much faster than MH's best possible efficiency the
// chain's estimated one must be to skip the probes, a margin for accepted
// moves being shorter than the average proposal; rivalSwitchMargin is how
// much faster MH's measured efficiency must be than the chain's for the
// switch, a margin for the noise of a few probes and for MH being credited
// with the best of several scales.
const (
	rivalMargin       = 10
	rivalSwitchMargin = 1.25
)

// params adds the switch to a chain's Params (none for a nil r, a chain
// that never compares).
func (r *mhRival) params(p map[string]float64) map[string]float64 {
	if r != nil && r.asMH {
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
	return chainstate.Encode(rivalState{r.asMH, r.speedup})
}

// UnmarshalState restores it; the empty state is a chain not switched.
func (r *mhRival) UnmarshalState(b []byte) error {
	if len(b) == 0 {
		r.asMH, r.speedup = false, 0
		return nil
	}
	var s rivalState
	if err := chainstate.Decode(b, &s); err != nil {
		return err
	}
	if !s.AsMH {
		return fmt.Errorf("saved state %+v of a chain not switched to MH, want none", s)
	}
	if err := checkSwitch(s.AsMH, s.Speedup); err != nil {
		return err
	}
	r.asMH, r.speedup = true, s.Speedup
	return nil
}

// saveSwitch is MarshalState of a chain whose only state is r's switch
// (TFMH, SMH, PoissonMH); a nil r, a chain that never compares, saves
// nothing.
func (r *mhRival) saveSwitch() ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return r.MarshalState()
}

// restoreSwitch is UnmarshalState of such a chain: it restores r's switch
// (a nil r takes only the empty state) and reports whether the chain runs
// as MH.
func (r *mhRival) restoreSwitch(b []byte) (asMH bool, err error) {
	if r == nil {
		return false, noState{}.UnmarshalState(b)
	}
	if err := r.UnmarshalState(b); err != nil {
		return false, err
	}
	return r.asMH, nil
}

// checkSwitch checks a saved switch to MH: none (asMH false), or one with
// a finite predicted speed-up > 1.
func checkSwitch(asMH bool, speedup float64) error {
	if asMH && (!(speedup > 1) || math.IsInf(speedup, 0)) {
		return fmt.Errorf("saved switch to MH with predicted speed-up %v, want finite > 1", speedup)
	}
	return nil
}

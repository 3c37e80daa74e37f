// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// walk is the part of a transition every proposal-driven chain shares, written
// once: the position θ and the proposal buffer θ′, the Proposal and its step
// scale (Position, StepScale and SetStepScale), "propose θ′ and return the
// exact prior and proposal part of the log ratio, or reject outside the
// prior's support before any datum is read", and "accept with probability
// min(1, e^{log r})". A kernel's chain embeds a walk and adds only its own
// auxiliary variables and ratio estimate.
type walk struct {
	name  string // the kernel's name, for errors
	t     *Target
	prop  Proposal // nil for chains with their own proposal (MALA, HMC, Aux schemes)
	scale float64
	theta []float64 // θ, the chain's position
	next  []float64 // θ′, the proposal

	// logPriorNext and logQ are the parts of the last proposal's exact
	// log ratio: log p(θ′) and log q(θ|θ′) − log q(θ′|θ).
	logPriorNext, logQ float64

	full fullEnergies // fullMHStep's memo
}

// newWalk checks θ0 and a user-set scale and applies the defaults shared by
// every kernel: a zero scale is 0.1 and, for kernels that take a Proposal
// (usesProposal), a nil one is the isotropic RandomWalk. Every kernel's
// Start calls it, so it is where a doubly-intractable target
// (IntractableLikelihood) is refused: only the exchange algorithm, which
// starts with newWalkAny, may sample one.
func newWalk(name string, t *Target, prop Proposal, usesProposal bool, scale float64, theta0 []float64) (walk, error) {
	if err := refuseIntractable(name, t); err != nil {
		return walk{}, err
	}
	return newWalkAny(name, t, prop, usesProposal, scale, theta0)
}

// newWalkAny is newWalk for the exchange algorithm: it accepts any target.
func newWalkAny(name string, t *Target, prop Proposal, usesProposal bool, scale float64, theta0 []float64) (walk, error) {
	if usesProposal {
		if prop == nil {
			prop = RandomWalk{}
		}
		if p, ok := prop.(interface{ checkDim(int) error }); ok {
			if err := p.checkDim(t.Dim()); err != nil {
				return walk{}, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if scale == 0 {
		scale = 0.1
	}
	if err := checkScale(name, scale); err != nil {
		return walk{}, err
	}
	if err := checkStart(t, theta0); err != nil {
		return walk{}, fmt.Errorf("%s: %w", name, err)
	}
	return walk{name: name, t: t, prop: prop, scale: scale, theta: slices.Clone(theta0), next: make([]float64, t.Dim())}, nil
}

// Position returns θ.
func (w *walk) Position() []float64 { return w.theta }

// StepScale returns the proposal's step scale.
func (w *walk) StepScale() float64 { return w.scale }

// SetStepScale sets the proposal's step scale (the driver adapts it during
// warmup).
func (w *walk) SetStepScale(s float64) { w.scale = s }

// propose draws θ′ from the Proposal into w.next and returns the exact part
// of the log acceptance ratio, log p(θ′) − log p(θ) + log q(θ|θ′) − log q(θ′|θ)
// (see exactPart).
func (w *walk) propose(rng *rand.Rand) (logR float64, ok bool) {
	return w.exactPart(w.prop.Propose(rng, w.next, w.theta, w.scale))
}

// exactPart finishes a proposal already in w.next whose log proposal ratio
// is logQ: it evaluates the prior at θ′ exactly (priors are never
// subsampled) and returns log p(θ′) − log p(θ) + logQ. ok is false when θ′
// lies outside the prior's support: the step then rejects before reading a
// datum.
func (w *walk) exactPart(logQ float64) (logR float64, ok bool) {
	w.logQ = logQ
	w.logPriorNext = w.t.LogPrior(w.next)
	if math.IsInf(w.logPriorNext, -1) {
		return math.Inf(-1), false
	}
	return w.logPriorNext - w.t.LogPrior(w.theta) + logQ, true
}

// accept accepts θ′ with probability min(1, e^{logR}): it sets
// info.AcceptProb and info.Accepted and on acceptance moves θ to θ′. A NaN
// log ratio is an error naming θ and θ′. (Info by value: through a pointer
// it would escape to the heap.)
func (w *walk) accept(rng *rand.Rand, logR float64, info Info) (Info, error) {
	if math.IsNaN(logR) {
		return Info{}, fmt.Errorf("log acceptance ratio is NaN at θ = %v, θ′ = %v", w.theta, w.next)
	}
	info.AcceptProb = math.Exp(min(logR, 0))
	if logR >= 0 || rng.Float64() < info.AcceptProb {
		copy(w.theta, w.next)
		info.Accepted = true
	}
	return info, nil
}

// fullMemo is the memo of fullMHStep, saved with checkpoints.
func (w *walk) fullMemo() *fullEnergies { return &w.full }

// fullMHStep is the full-batch MH step the truncated kernels (TFMH, SMH)
// fall back to: the exact log ratio — logExact, its prior and proposal part
// from propose, plus all N energy differences (fullEnergies.fallback: by
// the memo when every step is a full one) — and the decision.
func (w *walk) fullMHStep(rng *rand.Rand, logExact float64, every bool, idx *[batchChunk]int, diff *[batchChunk]float64) (Info, error) {
	sum, err := w.full.fallback(w.t, w.theta, w.next, every, idx, diff)
	if err != nil {
		return Info{}, err
	}
	n := w.t.N()
	return w.accept(rng, logExact+sum, Info{Batch: n, Distinct: n, Fallback: true, LogDensity: math.NaN()})
}

// checkStart checks θ0's dimension.
func checkStart(t *Target, theta0 []float64) error {
	if len(theta0) != t.Dim() {
		return fmt.Errorf("len(θ0) = %d, want %d", len(theta0), t.Dim())
	}
	return nil
}

// noState is embedded by chains whose whole state is their position and
// values Start recomputes from it: their Checkpointer saves nothing.
type noState struct{}

// MarshalState returns no state.
func (noState) MarshalState() ([]byte, error) { return nil, nil }

// UnmarshalState accepts only the empty state.
func (noState) UnmarshalState(b []byte) error {
	if len(b) != 0 {
		return fmt.Errorf("the chain has no state beyond θ, but the checkpoint holds %d bytes for it", len(b))
	}
	return nil
}

// Walk is the shared loop of the built-in proposal-driven kernels, for a
// kernel written outside the package: it holds θ and the proposal buffer
// θ′, the Proposal and its step scale (a Walk's chain is Tunable through
// Position, StepScale and SetStepScale), draws θ′ and returns the exact
// prior-and-proposal part of the log acceptance ratio — rejecting outside
// the prior's support before a datum is read —, and accepts. A kernel's
// chain embeds a *Walk and adds its own estimate of the data part of the
// ratio, as TunaMH, TFMH and the others do (mcmctest's example kernel is
// written so).
type Walk struct {
	w walk
	// FullMH's scratch: a chunk of indices and energy differences.
	idx  [batchChunk]int
	diff [batchChunk]float64
	fns  funcChain // Factorised's
}

// NewWalk starts a walk at θ0 on t for the kernel named name (for errors):
// a nil prop is the isotropic RandomWalk and a zero scale is 0.1; θ0's
// dimension, the scale and the proposal's fit to the dimension are
// checked, as every built-in kernel's Start checks them.
func NewWalk(name string, t *Target, prop Proposal, scale float64, theta0 []float64) (*Walk, error) {
	w, err := newWalk(name, t, prop, true, scale, theta0)
	if err != nil {
		return nil, err
	}
	w.full = newFullEnergies(t.Dim())
	return &Walk{w: w}, nil
}

// Position returns θ.
func (w *Walk) Position() []float64 { return w.w.theta }

// StepScale returns the proposal's step scale.
func (w *Walk) StepScale() float64 { return w.w.scale }

// SetStepScale sets the proposal's step scale (the driver adapts it
// during warmup).
func (w *Walk) SetStepScale(s float64) { w.w.scale = s }

// Next returns θ′, the last proposal.
func (w *Walk) Next() []float64 { return w.w.next }

// Propose draws θ′ and returns the exact part of the log acceptance
// ratio, log p(θ′) − log p(θ) + log q(θ|θ′) − log q(θ′|θ). ok is false,
// and logR −Inf, when θ′ lies outside the prior's support: the step then
// rejects without reading a datum.
func (w *Walk) Propose(rng *rand.Rand) (logR float64, ok bool) { return w.w.propose(rng) }

// Finish is Propose for a chain that draws θ′ itself (into Next, as
// MHBT's gradient proposals do) with log proposal ratio logQ: it
// evaluates the prior at θ′ and returns the exact part of the log ratio,
// ok false outside the prior's support.
func (w *Walk) Finish(logQ float64) (logR float64, ok bool) { return w.w.exactPart(logQ) }

// Parts returns the parts of the last proposal's exact log ratio: log p(θ′),
// log p(θ) and log q(θ|θ′) − log q(θ′|θ).
func (w *Walk) Parts() (logPriorNext, logPrior, logQ float64) {
	return w.w.logPriorNext, w.w.t.LogPrior(w.w.theta), w.w.logQ
}

// Accept accepts θ′ with probability min(1, e^{logR}), logR the whole log
// ratio (Propose's exact part plus the chain's estimate of the data
// part): it sets info.AcceptProb and info.Accepted and, on acceptance,
// moves θ to θ′. A NaN logR is an error naming θ and θ′.
func (w *Walk) Accept(rng *rand.Rand, logR float64, info Info) (Info, error) {
	return w.w.accept(rng, logR, info)
}

// FullMH is the full-batch MH step a truncated kernel falls back to where
// its expected batch exceeds N (TFMH's, SMH's, GroupSMH's): the exact log
// ratio — logExact, Propose's part, plus all N energy differences — and
// the decision, with Info's Fallback set. every says that every step is
// such a step: the energies at θ are then remembered from step to step
// (and saved with checkpoints), one pass a step instead of two.
func (w *Walk) FullMH(rng *rand.Rand, logExact float64, every bool) (Info, error) {
	return w.w.fullMHStep(rng, logExact, every, &w.idx, &w.diff)
}

// fullMemo is FullMH's memo, saved with checkpoints (fullMemoer).
func (w *Walk) fullMemo() *fullEnergies { return w.w.fullMemo() }

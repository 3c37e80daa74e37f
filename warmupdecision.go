// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "slices"

// The warmup decisions — a chain's mid-warmup choice (midWarmuper: the
// comparison with full-batch MH, TunaMH's χ search) and its check of the
// final step scale (finalScaler) — read the data tens of times and change
// the chain as they go, so abandonStep cannot take them back. For a chain
// that can be checkpointed, the runner instead keeps the checkpoint of
// the chain as it was before the transition the decision follows; a
// decision cut by a cancellation leaves that checkpoint as the chain's
// state (Result.Checkpoint writes it; Resume rebuilds the chain from it,
// as LoadCheckpoint would), and the transition and its decision are made
// again, from the start, when the run resumes: the draws are those of the
// uninterrupted run (TestInterruptWarmupDecision).

// decides reports whether a warmup decision follows transition it.
func (cr *chainRunner) decides(it int, set *Settings) bool {
	if set.NoAdapt || it >= set.Warmup {
		return false
	}
	if _, ok := cr.ch.(midWarmuper); ok && it == set.Warmup/2 && set.Warmup >= minMidWarmup && cr.midAt == 0 {
		return true
	}
	_, ok := cr.ch.(finalScaler)
	return ok && cr.tune != nil && it == set.Warmup-1
}

// beforeDecision returns the runner's checkpoint before transition it if
// a warmup decision follows it and can be abandoned — the chain's passes
// poll the cancellation and it is a Checkpointer — else nil: the decision
// then runs to its end (suspendInterrupt).
func (cr *chainRunner) beforeDecision(it int, set *Settings) (*chainCheckpoint, error) {
	if cr.t.interrupt == nil || !cr.decides(it, set) {
		return nil, nil
	}
	k, ok := cr.ch.(Checkpointer)
	if !ok {
		return nil, nil
	}
	state, err := k.MarshalState()
	if err != nil {
		return nil, err
	}
	cc, err := cr.save(state)
	if err != nil {
		return nil, err
	}
	// The transition changes what save shares with the live runner.
	cc.Theta = slices.Clone(cc.Theta)
	if m := cc.FullMemo; m != nil {
		for k := range m.At {
			m.At[k] = slices.Clone(m.At[k])
		}
	}
	if w := cc.Windows; w != nil {
		c := *w
		c.Mean, c.M2, c.delta = slices.Clone(w.Mean), slices.Clone(w.M2), slices.Clone(w.delta)
		cc.Windows = &c
	}
	return &cc, nil
}

// rebuild replaces the chain of a runner cut in a warmup decision by one
// restored from the checkpoint before it, as LoadCheckpoint restores a
// chain, for Resume to continue; the runner's ChainResult (shared with
// the Result) is set back to the checkpoint's.
func (cr *chainRunner) rebuild(c int, res *Result) error {
	cc := cr.saved
	p := posteriorOf(cr.t)
	var nr *chainRunner
	err := protect(res.Settings.FirstChain, c, "restoring the chain cut in a warmup decision (Kernel.Start, UnmarshalState, SetMetric)", func() (err error) {
		nr, err = cc.restore(c, p, res.Config, &res.Settings, res.Kernel, cr.t.cache)
		return err
	})
	if err != nil {
		return err
	}
	r := cr.r
	*r = *nr.r
	*cr = *nr
	cr.r = r
	return nil
}

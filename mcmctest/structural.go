// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
)

// allocReps is how many times AllocsPerStep counts a phase's steps before
// it charges an allocation to the kernel.
const allocReps = 4

// AllocsPerStep returns the mean number of heap allocations per transition
// of a chain of k on p started at theta0. It starts the chain as the driver
// does (exactmh.NewTarget, k.Start) and counts, with testing.AllocsPerRun,
// the allocations of steps transitions made after steps uncounted ones (so
// that the chain's scratch memory has reached its steady size) — first with
// the chain told it is in warmup, if it is exactmh.WarmupAware, then after
// warmup. Each phase is one counted call, so that one allocation in a
// thousand steps shows as 0.001 instead of vanishing in AllocsPerRun's
// integer mean, and each is counted up to allocReps times, keeping the
// smallest count: an allocation made meanwhile by another goroutine (the
// testing framework finishing a test, a cancelled run draining) is not
// charged to the kernel, while one the kernel makes in its steady state
// shows in every count. exactmh's contract is that a step
// allocates nothing: 0.
//
// Like testing.AllocsPerRun it sets GOMAXPROCS to 1 while counting, and it
// panics if called while parallel tests run.
func AllocsPerStep(k exactmh.Kernel, p *exactmh.Posterior, theta0 []float64, steps int) (float64, error) {
	if steps <= 0 {
		return 0, fmt.Errorf("mcmctest: AllocsPerStep: steps = %d, want > 0", steps)
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, err
	}
	ch, err := k.Start(t, theta0)
	if err != nil {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var stepErr error
	run := func() {
		for range steps {
			if _, err := ch.Step(rng); err != nil {
				stepErr = err
				return
			}
		}
	}
	// The least of up to allocReps counts, stopping at the first 0:
	// testing.AllocsPerRun reads the process's malloc count, so a
	// goroutine another test left draining (a cancelled run's chains, on
	// a loaded machine) can add to one count, not to every one, while a
	// kernel that allocates in its steps does so in each.
	count := func() float64 {
		least := math.Inf(1)
		for range allocReps {
			if least = math.Min(least, testing.AllocsPerRun(1, run)); least == 0 {
				break
			}
		}
		return least
	}
	var total float64
	phases := 1
	if wa, ok := ch.(exactmh.WarmupAware); ok {
		wa.SetWarmup(true)
		total += count()
		wa.SetWarmup(false)
		phases++
	}
	total += count()
	if stepErr != nil {
		return 0, stepErr
	}
	return total / float64(phases*steps), nil
}

// cancelAfter is a Recorder that cancels its run once it has seen n
// transitions.
type cancelAfter struct {
	n      int64
	seen   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Init(exactmh.RunInfo) error { return nil }

func (c *cancelAfter) Record(*exactmh.Event) error {
	if c.seen.Add(1) == c.n {
		c.cancel()
	}
	return nil
}

// CheckCheckpoint checks that a run of k on p stopped part way, written with
// Result.Checkpoint, read back with exactmh.LoadCheckpoint (as another
// process would) and continued with exactmh.Resume makes exactly — bit for
// bit — the run made without interruption: the same draws, the same Info for
// every draw, the same totals, final step scales and parameters. It stops a
// run by cancellation in the middle of warmup and in the middle of sampling,
// and it extends a finished run of half the draws. set gives the run's
// Chains, Warmup, Draws, Thin, Seed, Init and TargetAccept; its Workers and
// Recorder are replaced. Warmup and Draws must be at least 2.
func CheckCheckpoint(p *exactmh.Posterior, k exactmh.Kernel, set exactmh.Settings) error {
	if set.Warmup < 2 || set.Draws < 2 {
		return fmt.Errorf("mcmctest: CheckCheckpoint: Warmup = %d, Draws = %d, want at least 2 each", set.Warmup, set.Draws)
	}
	ctx := context.Background()
	set.Recorder = nil
	set.Workers = 1 // chains run one after another, so a cut lands in chain 0
	whole, err := exactmh.Sample(ctx, p, k, &set)
	if err != nil {
		return fmt.Errorf("uninterrupted run: %w", err)
	}
	roundTrip := func(res *exactmh.Result, more int) (*exactmh.Result, error) {
		var file bytes.Buffer
		if err := res.Checkpoint(&file); err != nil {
			return nil, err
		}
		loaded, err := exactmh.LoadCheckpoint(&file, p, k, nil)
		if err != nil {
			return nil, err
		}
		for c := range res.Chains {
			if err := sameChain(res.Chains[c], loaded.Chains[c]); err != nil {
				return nil, fmt.Errorf("the checkpoint changed chain %d: %w", c, err)
			}
		}
		return exactmh.Resume(ctx, loaded, more)
	}
	thin := max(set.Thin, 1)
	for _, cut := range []struct {
		name string
		at   int
	}{{"in warmup", set.Warmup/2 | 1}, {"in sampling", (set.Warmup + set.Draws*thin/2) | 1}} {
		cctx, cancel := context.WithCancel(ctx)
		s := set
		s.Recorder = &cancelAfter{n: int64(cut.at), cancel: cancel}
		part, err := exactmh.Sample(cctx, p, k, &s)
		cancel()
		if part == nil || part.Status != exactmh.Canceled {
			return fmt.Errorf("run cancelled %s: not cancelled (err %v)", cut.name, err)
		}
		res, err := roundTrip(part, 0)
		if err != nil {
			return fmt.Errorf("run cancelled %s: %w", cut.name, err)
		}
		if err := sameRun(whole, res); err != nil {
			return fmt.Errorf("run cancelled %s, checkpointed and resumed: %w", cut.name, err)
		}
	}
	half := set
	half.Draws = set.Draws / 2
	first, err := exactmh.Sample(ctx, p, k, &half)
	if err != nil {
		return fmt.Errorf("run of %d draws: %w", half.Draws, err)
	}
	res, err := roundTrip(first, set.Draws-half.Draws)
	if err != nil {
		return fmt.Errorf("finished run extended: %w", err)
	}
	if err := sameRun(whole, res); err != nil {
		return fmt.Errorf("run of %d draws checkpointed and extended to %d: %w", half.Draws, set.Draws, err)
	}
	return nil
}

// sameRun reports how two runs differ, if they do, ignoring times.
func sameRun(a, b *exactmh.Result) error {
	if len(a.Chains) != len(b.Chains) {
		return fmt.Errorf("%d chains vs %d", len(a.Chains), len(b.Chains))
	}
	for c := range a.Chains {
		if err := sameChain(a.Chains[c], b.Chains[c]); err != nil {
			return fmt.Errorf("chain %d: %w", c, err)
		}
	}
	return nil
}

// sameChain reports how two chains' results differ, if they do, ignoring
// times.
func sameChain(a, b *exactmh.ChainResult) error {
	if a.Len() != b.Len() || len(a.Draws) != len(b.Draws) {
		return fmt.Errorf("%d draws vs %d", a.Len(), b.Len())
	}
	for i := range a.Draws {
		if !sameFloat(a.Draws[i], b.Draws[i]) {
			return fmt.Errorf("draws differ from value %d on (%v vs %v)", i, a.Draws[i], b.Draws[i])
		}
	}
	for i := range a.Infos {
		if !sameInfo(a.Infos[i], b.Infos[i]) {
			return fmt.Errorf("draw %d: Info %+v vs %+v", i, a.Infos[i], b.Infos[i])
		}
	}
	if !sameTotals(a.Warmup, b.Warmup) || !sameTotals(a.Sampling, b.Sampling) {
		return fmt.Errorf("totals differ: warmup %+v vs %+v, sampling %+v vs %+v", a.Warmup, b.Warmup, a.Sampling, b.Sampling)
	}
	if !sameFloat(a.Scale, b.Scale) {
		return fmt.Errorf("final step scale %v vs %v", a.Scale, b.Scale)
	}
	if len(a.Params) != len(b.Params) {
		return fmt.Errorf("parameters %v vs %v", a.Params, b.Params)
	}
	for name, v := range a.Params {
		if w, ok := b.Params[name]; !ok || !sameFloat(v, w) {
			return fmt.Errorf("parameters %v vs %v", a.Params, b.Params)
		}
	}
	return nil
}

// sameFloat is bitwise equality, NaN equal to NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func sameInfo(a, b exactmh.Info) bool {
	return a.Accepted == b.Accepted && sameFloat(a.AcceptProb, b.AcceptProb) && sameFloat(a.LogDensity, b.LogDensity) &&
		a.Batch == b.Batch && a.Distinct == b.Distinct && a.Fallback == b.Fallback &&
		a.Evals == b.Evals && a.GradEvals == b.GradEvals && a.AuxEvals == b.AuxEvals &&
		a.TreeDepth == b.TreeDepth && a.Divergent == b.Divergent
}

func sameTotals(a, b exactmh.Totals) bool {
	a.Time, b.Time = 0, 0
	return a == b
}

// CheckWorkers checks that a run's draws do not depend on the number of
// goroutines running its chains, nor on a Recorder observing it: it runs k
// on p with Workers 1, 2 and 4, the last with a Recorder, and compares the
// runs bit for bit (draws, Infos, totals, scales, parameters). A kernel
// whose chains share state, or draw from a random source other than the one
// Step is given, fails. set gives the run (at least 4 chains are used);
// its Workers and Recorder are replaced.
func CheckWorkers(p *exactmh.Posterior, k exactmh.Kernel, set exactmh.Settings) error {
	set.Chains = max(set.Chains, 4)
	var ref *exactmh.Result
	for _, w := range []int{1, 2, 4} {
		s := set
		s.Workers = w
		s.Recorder = nil
		if w == 4 {
			s.Recorder = &recorderFunc{} // observes and does nothing
		}
		res, err := exactmh.Sample(context.Background(), p, k, &s)
		if err != nil {
			return fmt.Errorf("%d workers: %w", w, err)
		}
		if ref == nil {
			ref = res
			continue
		}
		if err := sameRun(ref, res); err != nil {
			return fmt.Errorf("1 worker vs %d (the last with a recorder): %w", w, err)
		}
	}
	return nil
}

// recorderFunc is a Recorder calling f (if not nil) on every transition.
type recorderFunc struct {
	f func(e *exactmh.Event) error
}

func (*recorderFunc) Init(exactmh.RunInfo) error { return nil }

func (r *recorderFunc) Record(e *exactmh.Event) error {
	if r.f == nil {
		return nil
	}
	return r.f(e)
}

// CheckInfo runs k on p, warmup included, and checks every transition's
// Info against what exactmh.Info promises of every kernel:
//
//   - AcceptProb is NaN or in [0, 1]; at 0 the proposal is rejected, at 1
//     accepted;
//   - LogDensity is NaN or finite, and when finite it is the log posterior
//     at the new position (p.LogDensity, to a relative 10⁻⁹);
//   - 0 ≤ Distinct ≤ Batch, Distinct ≤ N, and a Fallback step has Batch = N;
//   - Evals, GradEvals ≥ 0 and 0 ≤ AuxEvals ≤ Evals; without gradients
//     (gradients false) GradEvals = 0, with them some transition evaluates
//     one;
//   - a rejected transition leaves the position unchanged, bit for bit, and
//     every position is finite and inside the prior's support.
//
// set gives the run; its Recorder is replaced, and it must set Init (or
// Inits) so that the first transitions can be compared with the start. The
// error lists the first violations.
func CheckInfo(p *exactmh.Posterior, k exactmh.Kernel, set exactmh.Settings, gradients bool) error {
	if set.Init == nil && set.Inits == nil {
		return errors.New("mcmctest: CheckInfo: set Init or Inits")
	}
	chains := set.Chains
	if chains == 0 {
		chains = 4
	}
	n := p.Len()
	prev := make([][]float64, chains)
	for c := range prev {
		if set.Inits != nil {
			prev[c] = slices.Clone(set.Inits[c])
		} else {
			prev[c] = slices.Clone(set.Init)
		}
	}
	const maxMsgs = 5
	msgs := make([][]string, chains) // per chain: Record runs concurrently for distinct chains
	grads := make([]int64, chains)
	set.Recorder = &recorderFunc{f: func(e *exactmh.Event) error {
		c := e.Chain
		if len(msgs[c]) >= maxMsgs {
			return nil
		}
		bad := func(format string, args ...any) {
			msgs[c] = append(msgs[c], fmt.Sprintf("chain %d, transition %d: ", c, e.Iteration)+fmt.Sprintf(format, args...))
		}
		in := e.Info
		switch ap := in.AcceptProb; {
		case math.IsNaN(ap):
		case ap < 0 || ap > 1:
			bad("AcceptProb %v outside [0, 1]", ap)
		case ap == 0 && in.Accepted:
			bad("accepted with AcceptProb 0")
		case ap == 1 && !in.Accepted:
			bad("rejected with AcceptProb 1")
		}
		if ld := in.LogDensity; !math.IsNaN(ld) {
			want, err := p.LogDensity(e.Theta)
			switch {
			case err != nil:
				bad("log density at the new position: %v", err)
			case math.IsInf(ld, 0):
				bad("LogDensity %v, want finite or NaN", ld)
			case !(math.Abs(ld-want) <= 1e-9*math.Max(1, math.Abs(want))):
				bad("LogDensity %v, but the log posterior at the new position is %v", ld, want)
			}
		}
		if in.Batch < 0 || in.Distinct < 0 || in.Distinct > in.Batch || in.Distinct > n {
			bad("Batch %d, Distinct %d: want 0 ≤ Distinct ≤ Batch and Distinct ≤ N = %d", in.Batch, in.Distinct, n)
		}
		if in.Fallback && in.Batch != n {
			bad("a fallback step with Batch %d, want N = %d", in.Batch, n)
		}
		if in.TreeDepth < 0 {
			bad("TreeDepth %d < 0", in.TreeDepth)
		}
		if in.Evals < 0 || in.GradEvals < 0 || in.AuxEvals < 0 || in.AuxEvals > in.Evals {
			bad("Evals %d, GradEvals %d, AuxEvals %d: want all ≥ 0 and AuxEvals ≤ Evals", in.Evals, in.GradEvals, in.AuxEvals)
		}
		if !gradients && in.GradEvals != 0 {
			bad("%d gradient evaluations by a kernel declared gradient-free", in.GradEvals)
		}
		grads[c] += int64(in.GradEvals)
		if !in.Accepted && !slices.EqualFunc(prev[c], e.Theta, sameFloat) {
			bad("rejected, but the position moved from %v to %v", prev[c], e.Theta)
		}
		for _, v := range e.Theta {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				bad("position %v not finite", e.Theta)
				break
			}
		}
		if lp := p.Prior; lp != nil && math.IsInf(lp.LogPrior(e.Theta), -1) {
			bad("position %v outside the prior's support", e.Theta)
		}
		copy(prev[c], e.Theta)
		return nil
	}}
	if _, err := exactmh.Sample(context.Background(), p, k, &set); err != nil {
		return err
	}
	var all []string
	var totalGrads int64
	for c := range msgs {
		all = append(all, msgs[c]...)
		totalGrads += grads[c]
	}
	if gradients && totalGrads == 0 {
		all = append(all, "a kernel declared to use gradients evaluated none")
	}
	if len(all) > 0 {
		return fmt.Errorf("mcmctest: Info invariants violated:\n\t%s", joinLines(all))
	}
	return nil
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, l := range s {
		if i > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(l)
	}
	return b.String()
}

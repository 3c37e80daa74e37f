// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"
)

// checkpoint is the file format (gob): the run and every chain.
type checkpoint struct {
	Version  string
	Kernel   string
	Exact    bool
	Dim, N   int
	Settings Settings
	Status   Status
	Elapsed  time.Duration
	Chains   []chainCheckpoint
}

type chainCheckpoint struct {
	Result      ChainResult // Err is not saved
	Theta       []float64
	State       []byte // Checkpointer.MarshalState
	RNG         []byte // PCG.MarshalBinary
	Scale       float64
	Adapt       dualAveraging // the step-scale adaptation
	Next        int
	Clock       time.Duration
	WarmupAware bool
	Metric      Metric         // the chain's metric, if it has one (MetricAdapter)
	Windows     *metricWindows // the metric adaptation, if any
	FullMemo    *savedMemo     // full-batch steps' energies (fullMemoer), if any
	MidAt       int            // chainRunner.midAt: an early mid-warmup decision
}

// Checkpoint writes the run — settings, draws and every chain's full state
// (position, kernel state, metric, random stream, adaptation, next
// transition) — to w, for LoadCheckpoint to rebuild in another process and
// Resume to continue; not the posterior's data or the kernel, which
// LoadCheckpoint is given again. Of a DiscardDraws run it saves the count
// of draws each chain streamed (ChainResult.Streamed): the Recorder's files
// must keep them. A failed run cannot be checkpointed — except one that
// failed only because its Recorder did (a *RecorderError), whose chains
// are intact: it is saved as the cancelled run it is (completed, if every
// chain had finished), and Resume after LoadCheckpoint continues it. Nor
// can a run whose chains do not implement Checkpointer.
func (r *Result) Checkpoint(w io.Writer) error {
	if r == nil || r.runners == nil {
		return errors.New("exactmh: Checkpoint: the result holds no chain state")
	}
	if r.Status == Failed && r.broken {
		return errors.New("exactmh: Checkpoint: the run failed")
	}
	set := r.Settings
	set.Recorder = nil // not serialisable; give LoadCheckpoint's result a new one if needed
	set.ChoiceProgress = nil
	status := r.Status
	if status == Failed { // only the recorder failed
		status = Completed
		for _, cr := range r.runners {
			if cr.it < set.transitions() && !(set.Duration > 0 && cr.r.Sampling.Time >= set.Duration) {
				status = Canceled
			}
		}
	}
	cp := checkpoint{Version: Version, Kernel: r.Kernel, Exact: r.Exact, Dim: r.Dim, N: r.N,
		Settings: set, Status: status, Elapsed: r.Elapsed}
	for c, cr := range r.runners {
		k, ok := cr.ch.(Checkpointer)
		if !ok {
			return fmt.Errorf("exactmh: Checkpoint: %s chains (%T) do not implement Checkpointer", r.Kernel, cr.ch)
		}
		if cr.saved != nil { // cut in a warmup decision: the state before it
			cp.Chains = append(cp.Chains, *cr.saved)
			continue
		}
		var state []byte
		err := protect(set.FirstChain, c, "Checkpointer.MarshalState", func() (err error) {
			state, err = k.MarshalState()
			return err
		})
		if err != nil {
			return fmt.Errorf("exactmh: Checkpoint: chain %d: %w", chainNumber(set.FirstChain, c), err)
		}
		cc, err := cr.save(state)
		if err != nil {
			return err
		}
		cp.Chains = append(cp.Chains, cc)
	}
	return gob.NewEncoder(w).Encode(&cp)
}

// save returns the runner's checkpoint, given its chain's MarshalState.
func (cr *chainRunner) save(state []byte) (chainCheckpoint, error) {
	rng, err := cr.src.MarshalBinary()
	if err != nil {
		return chainCheckpoint{}, err
	}
	res := *cr.r
	res.Err = nil
	cc := chainCheckpoint{Result: res, Theta: cr.ch.Position(), State: state, RNG: rng, Scale: res.Scale,
		Adapt: cr.adapt,
		Next:  cr.it, Clock: cr.clock, WarmupAware: cr.warmupAware != nil, MidAt: cr.midAt}
	if m, ok := cr.ch.(fullMemoer); ok {
		cc.FullMemo = m.fullMemo().save()
	}
	if cr.tune != nil {
		cc.Scale = cr.tune.StepScale()
	}
	if cr.met != nil {
		cc.Metric, cc.Windows = cr.met.Metric(), cr.win
	}
	return cc, nil
}

// LoadCheckpoint reads a checkpoint written by Result.Checkpoint and
// rebuilds the run on posterior p with kernel k — the same data and kernel
// configuration as the original run, which it cannot check beyond the
// kernel's name, N and the dimension. The result can be inspected like any
// other and continued with Resume; rec, if not nil, becomes its Recorder.
//
// A checkpoint is input like any other and is checked as strictly as
// Settings and Start check fresh input: the settings (as Sample resolves
// them), the status, and for every chain its draws, infos and times against
// its next transition, its position (finite, inside the prior's support),
// step scale, adaptation and random stream, and its kernel's own state
// (permutations, brightness, batches, χ …, through UnmarshalState). A file
// that fails a check is refused with an error naming the chain, the field
// and the values, never loaded to fail later.
//
// rec's Init is called here with the restored run's RunInfo (its
// StartTime set back by the run's elapsed time), unless rec is a
// ResumeRecorder: Resume initialises those through InitResume, with the
// draws made so far, so that it can continue their output.
func LoadCheckpoint(rd io.Reader, p *Posterior, k Kernel, rec Recorder) (res *Result, err error) {
	defer func() { // in the posterior's, the kernel's or the recorder's code
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("exactmh: LoadCheckpoint: %w", newPanicError(0, -1, -1, "LoadCheckpoint", v))
		}
	}()
	if rd == nil {
		return nil, errors.New("exactmh: LoadCheckpoint: nil io.Reader")
	}
	var cp checkpoint
	in := &countReader{r: rd}
	if err := gob.NewDecoder(in).Decode(&cp); err != nil {
		switch {
		case in.n == 0 && errors.Is(err, io.EOF):
			return nil, errors.New("exactmh: LoadCheckpoint: the input is empty, not a checkpoint")
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: the input ends after %d bytes: not an exactmh checkpoint, or a truncated one (%w)", in.n, err)
		}
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: not an exactmh checkpoint (or a corrupted one), after reading %d bytes: %w", in.n, err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: nil Kernel; the checkpoint is of kernel %s (for a run of the automatic default, pass its Result.Choice's Kernel and Posterior)", cp.Kernel)
	}
	if k.Name() != cp.Kernel {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: the checkpoint is of kernel %s, not %v", cp.Kernel, k.Name())
	}
	if p.Len() != cp.N || p.Dim() != cp.Dim {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: the checkpoint has N = %d, d = %d; the posterior N = %d, d = %d", cp.N, cp.Dim, p.Len(), p.Dim())
	}
	cp.Settings.Recorder = rec // checked too: DiscardDraws needs one
	if err := cp.check(k); err != nil {
		return nil, fmt.Errorf("exactmh: LoadCheckpoint: %w", err)
	}
	set, cache := &cp.Settings, newRunCache() // the chains share their tables, as in Sample
	res = &Result{Kernel: cp.Kernel, Exact: cp.Exact, Config: k, Dim: cp.Dim, N: cp.N, Settings: cp.Settings,
		Status: cp.Status, Elapsed: cp.Elapsed, Names: p.Names}
	for c := range cp.Chains {
		var cr *chainRunner
		err := protect(set.FirstChain, c, "restoring the chain (Kernel.Start, UnmarshalState, SetMetric)", func() (err error) {
			cr, err = cp.Chains[c].restore(c, p, k, set, cp.Kernel, cache)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: chain %d: %w", chainNumber(set.FirstChain, c), err)
		}
		res.runners = append(res.runners, cr)
		res.Chains = append(res.Chains, cr.r)
	}
	if _, ok := rec.(ResumeRecorder); rec != nil && !ok {
		if err := rec.Init(res.runInfo(time.Now())); err != nil {
			return nil, fmt.Errorf("exactmh: LoadCheckpoint: recorder: %w", err)
		}
	}
	return res, nil
}

// check checks what the checkpoint says of the whole run: the kernel's
// exactness, the settings as Sample stores them, the status and the number
// of chains.
func (cp *checkpoint) check(k Kernel) error {
	if cp.Exact != k.Exact() {
		return fmt.Errorf("the checkpoint says kernel %s is exact = %v, the kernel says %v", cp.Kernel, cp.Exact, k.Exact())
	}
	if err := checkResolved(&cp.Settings, cp.Dim, k); err != nil {
		return within("settings", err)
	}
	if cp.Status != Completed && cp.Status != Canceled {
		return fmt.Errorf("status %v: only a completed or cancelled run is checkpointed", cp.Status)
	}
	if cp.Elapsed < 0 {
		return fmt.Errorf("elapsed time %v < 0", cp.Elapsed)
	}
	if len(cp.Chains) != cp.Settings.Chains {
		return fmt.Errorf("%d chains saved, the settings have Chains = %d", len(cp.Chains), cp.Settings.Chains)
	}
	if cp.Status == Completed && cp.Settings.Duration == 0 {
		total := cp.Settings.transitions()
		for c := range cp.Chains {
			if n := cp.Chains[c].Next; n != total {
				return fmt.Errorf("chain %d: the run completed, but its next transition is %d of %d", chainNumber(cp.Settings.FirstChain, c), n, total)
			}
		}
	}
	return nil
}

// transitions returns the number of transitions each chain makes:
// Warmup + Draws·Thin (resolved settings, checked not to overflow).
func (s *Settings) transitions() int { return s.Warmup + s.Draws*s.Thin }

// checkResolved checks settings as Sample stores them in Result.Settings:
// valid for resolve, and with every default filled in (no zero meaning
// "the default" is left, and Workers is within [1, Chains]).
func checkResolved(s *Settings, d int, k Kernel) error {
	if _, err := s.resolve(d, k); err != nil {
		return err
	}
	switch {
	case s.Chains < 1:
		return fmt.Errorf("Settings.Chains = %d, want ≥ 1", s.Chains)
	case s.Workers < 1 || s.Workers > s.Chains:
		return fmt.Errorf("Settings.Workers = %d, want in [1, Chains = %d]", s.Workers, s.Chains)
	case s.Warmup < 0:
		return fmt.Errorf("Settings.Warmup = %d, want ≥ 0", s.Warmup)
	case s.Draws < 1:
		return fmt.Errorf("Settings.Draws = %d, want ≥ 1", s.Draws)
	case s.Thin < 1:
		return fmt.Errorf("Settings.Thin = %d, want ≥ 1", s.Thin)
	case !(s.TargetAccept > 0 && s.TargetAccept < 1):
		return fmt.Errorf("Settings.TargetAccept = %v, want in (0, 1)", s.TargetAccept)
	case s.Draws > (math.MaxInt-s.Warmup)/s.Thin:
		return fmt.Errorf("Settings.Warmup + Draws·Thin = %d + %d·%d overflows", s.Warmup, s.Draws, s.Thin)
	}
	return nil
}

// check checks a chain's saved record against the run's settings before
// its kernel is started: kept draws, infos and times against the next
// transition, the totals of both phases, the position and the clock.
func (cc *chainCheckpoint) check(c int, set *Settings, d int) error {
	r := &cc.Result
	if r.Chain != c {
		return fmt.Errorf("ChainResult.Chain = %d, want %d", r.Chain, c)
	}
	total := set.transitions()
	if cc.Next < 0 || cc.Next > total {
		return fmt.Errorf("next transition %d outside [0, %d] (Warmup %d + Draws %d × Thin %d)", cc.Next, total, set.Warmup, set.Draws, set.Thin)
	}
	warmup := min(cc.Next, set.Warmup)
	kept, streamed := (cc.Next-warmup)/set.Thin, 0
	if set.DiscardDraws { // passed to the Recorder, counted, not kept
		kept, streamed = 0, kept
	}
	if len(r.Infos) != kept || len(r.Times) != kept || len(r.Draws) != kept*d || r.Streamed != streamed {
		return fmt.Errorf("%d infos, %d times, %d draw values and %d streamed draws; %d transitions (Warmup %d, Thin %d, DiscardDraws %v) keep %d draws of dimension %d and stream %d",
			len(r.Infos), len(r.Times), len(r.Draws), r.Streamed, cc.Next, set.Warmup, set.Thin, set.DiscardDraws, kept, d, streamed)
	}
	ranWarmup := warmup
	if r.WarmupStop != "" && cc.Next >= set.Warmup && r.Warmup.Steps >= 1 && r.Warmup.Steps <= set.Warmup {
		// Its warmup stopped early (ChainResult.WarmupStop): the rest of
		// the warmup transitions were skipped, not made.
		ranWarmup = r.Warmup.Steps
	}
	if r.Warmup.Steps != ranWarmup || r.Sampling.Steps != cc.Next-warmup {
		return fmt.Errorf("%d warmup and %d sampling steps counted; the next transition is %d with Warmup %d", r.Warmup.Steps, r.Sampling.Steps, cc.Next, set.Warmup)
	}
	for _, t := range []struct {
		phase string
		t     *Totals
	}{{"warmup", &r.Warmup}, {"sampling", &r.Sampling}} {
		if err := t.t.check(); err != nil {
			return fmt.Errorf("%s totals: %w", t.phase, err)
		}
	}
	for k := range r.Infos {
		if err := r.Infos[k].check(); err != nil {
			return fmt.Errorf("Infos[%d]: %w", k, err)
		}
		if r.Times[k] < 0 {
			return fmt.Errorf("Times[%d] = %v < 0", k, r.Times[k])
		}
	}
	for i, v := range r.Draws {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("draw %d: θ[%d] = %v is not finite", i/d, i%d, v)
		}
	}
	if cc.Clock < 0 {
		return fmt.Errorf("chain clock %v < 0", cc.Clock)
	}
	if len(cc.Theta) != d {
		return fmt.Errorf("θ has length %d, want dimension %d", len(cc.Theta), d)
	}
	for j, v := range cc.Theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("θ[%d] = %v is not finite", j, v)
		}
	}
	return nil
}

// check checks that a phase's counts are consistent: none negative, none
// beyond the phase's transitions.
func (t *Totals) check() error {
	switch {
	case t.Accepted < 0 || t.Accepted > t.Steps, t.Fallbacks < 0 || t.Fallbacks > t.Steps:
		return fmt.Errorf("%d accepted and %d fallbacks in %d steps", t.Accepted, t.Fallbacks, t.Steps)
	case t.Evals < 0 || t.GradEvals < 0 || t.AuxEvals < 0 || t.AuxEvals > t.Evals || t.Batch < 0:
		return fmt.Errorf("evaluations %d (%d auxiliary), gradients %d, batch %d: want ≥ 0", t.Evals, t.AuxEvals, t.GradEvals, t.Batch)
	case t.Time < 0:
		return fmt.Errorf("time %v < 0", t.Time)
	}
	return nil
}

// check checks a kept draw's Info: no negative counts.
func (info *Info) check() error {
	if info.Batch < 0 || info.Distinct < 0 || info.Evals < 0 || info.GradEvals < 0 || info.AuxEvals < 0 {
		return fmt.Errorf("batch %d, distinct %d, evaluations %d, gradients %d, auxiliary %d: want ≥ 0",
			info.Batch, info.Distinct, info.Evals, info.GradEvals, info.AuxEvals)
	}
	return nil
}

// restore checks chain c's checkpoint and rebuilds its runner: the kernel
// started at the saved θ (inside the prior's support), its state restored
// by UnmarshalState, the random stream, the step scale, the adaptation and
// the warmup signal, each checked against the run.
func (cc *chainCheckpoint) restore(c int, p *Posterior, k Kernel, set *Settings, kernel string, cache *runCache) (*chainRunner, error) {
	if err := cc.check(c, set, p.Dim()); err != nil {
		return nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	t.cache = cache // the run's, when Resume rebuilds a chain (chainRunner.rebuild)
	if lp := t.LogPrior(cc.Theta); math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, fmt.Errorf("θ = %v is outside the prior's support (log prior %v)", cc.Theta, lp)
	}
	ch, err := k.Start(t, cc.Theta)
	if err != nil {
		return nil, err // Start errors name the kernel
	}
	kc, ok := ch.(Checkpointer)
	if !ok {
		return nil, fmt.Errorf("%s chains do not implement Checkpointer", kernel)
	}
	if err := kc.UnmarshalState(cc.State); err != nil {
		return nil, fmt.Errorf("%s state: %w", kernel, err)
	}
	if cc.FullMemo != nil {
		m, ok := ch.(fullMemoer)
		if !ok {
			return nil, fmt.Errorf("saved full-batch energy memo, but %s chains keep none", kernel)
		}
		if err := m.fullMemo().restore(cc.FullMemo, len(cc.Theta)); err != nil {
			return nil, err
		}
	}
	src := &rand.PCG{}
	if err := src.UnmarshalBinary(cc.RNG); err != nil {
		return nil, fmt.Errorf("random stream: %w", err)
	}
	r := cc.Result
	cr := &chainRunner{ch: ch, t: t, src: src, rng: rand.New(src), it: cc.Next, clock: cc.Clock, r: &r,
		adapt: cc.Adapt, defaultTarget: defaultTargetAccept(k), maxScale: proposalMaxScale(k), cnLimit: uncappedCN(k), midAt: cc.MidAt}
	cr.tune, _ = ch.(Tunable)
	if cr.tune != nil {
		if err := cc.checkAdaptation(set, r.Warmup.Steps, cr.defaultTarget); err != nil {
			return nil, err
		}
		cr.tune.SetStepScale(cc.Scale)
	}
	wa, isAware := ch.(WarmupAware)
	if want := isAware && !set.NoAdapt && set.Warmup > 0; cc.WarmupAware != want {
		return nil, fmt.Errorf("the checkpoint says the chain is told about warmup = %v; a %T with NoAdapt = %v, Warmup = %d is told %v",
			cc.WarmupAware, ch, set.NoAdapt, set.Warmup, want)
	}
	if cc.WarmupAware {
		cr.warmupAware = wa
	}
	if wr, ok := ch.(warmupReporter); ok && wr.inWarmup() && !(cr.warmupAware != nil && cc.Next < set.Warmup) {
		return nil, fmt.Errorf("the %s state is in warmup mode at transition %d (Warmup %d): sampling would not be exact", kernel, cc.Next, set.Warmup)
	}
	if cr.met, _ = ch.(MetricAdapter); cr.met != nil {
		if err := cr.met.SetMetric(cc.Metric); err != nil {
			return nil, fmt.Errorf("metric: %w", err)
		}
		cr.win = cc.Windows
	}
	return cr, nil
}

// adaptsMetric reports whether the chain's metric was being adapted in
// windows (which restart the step-size adaptation).
func (cc *chainCheckpoint) adaptsMetric() bool { return cc.Windows != nil }

// checkAdaptation checks a Tunable chain's step scale and dual-averaging
// state: finite, positive scales, the run's target, one update per warmup
// transition unless NoAdapt.
func (cc *chainCheckpoint) checkAdaptation(set *Settings, warmupSteps int, defaultTarget float64) error {
	if s := cc.Scale; !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("step scale %v, want finite > 0", s)
	}
	if s := cc.Result.Scale; !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("ChainResult.Scale = %v, want finite > 0", s)
	}
	a := &cc.Adapt
	updates := warmupSteps
	if set.NoAdapt {
		updates = 0
	}
	for _, v := range []float64{a.Mu, a.Hbar, a.LogAvg} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("step-scale adaptation state %+v is not finite", *a)
		}
	}
	// Windowed metric adaptation restarts the dual averaging after each
	// window, so it has made at most one update per warmup transition.
	// A chain that switched kernels halfway through warmup (midWarmuper)
	// restarted it after transition Warmup/2, or after transition
	// MidAt − 1 where it decided early (chainRunner.earlyDecision).
	mid := set.Warmup / 2
	if cc.MidAt > 0 {
		mid = cc.MidAt - 1
	}
	if cc.MidAt < 0 || cc.MidAt > set.Warmup/2 || cc.MidAt > warmupSteps {
		return fmt.Errorf("an early mid-warmup decision after transition %d of %d warmup transitions, %d made", cc.MidAt-1, set.Warmup, warmupSteps)
	}
	restarted := set.Warmup >= minMidWarmup && updates > mid && a.T == updates-mid-1
	// A chain may have chosen its own target then (TunaMH's χ search),
	// only at the kernel's default.
	ownTarget := set.Warmup >= minMidWarmup && updates > mid && a.Target > 0 && a.Target < 1 &&
		set.TargetAccept == defaultTarget
	if a.Target != set.TargetAccept && !ownTarget || a.T < 0 || a.T > updates || (!cc.adaptsMetric() && a.T != updates && !restarted) {
		return fmt.Errorf("step-scale adaptation at target %v after %d updates; the run targets %v and made %d",
			a.Target, a.T, set.TargetAccept, updates)
	}
	return nil
}

// warmupReporter is implemented by WarmupAware chains that can say whether
// their state is in warmup mode (adapting their parameters), so that
// LoadCheckpoint can refuse a state that would keep adapting after warmup.
type warmupReporter interface {
	inWarmup() bool
}

// runInfo describes res to a Recorder at time now: the run's settings and
// transitions, and a StartTime set back by the time the run has taken.
func (res *Result) runInfo(now time.Time) RunInfo {
	set := res.Settings
	return RunInfo{
		Kernel: res.Kernel, Exact: res.Exact, Chains: set.Chains, Dim: res.Dim, N: res.N,
		Warmup: set.Warmup, Draws: set.Draws, Thin: set.Thin, Seed: set.Seed,
		Steps: set.transitions(), StartTime: now.Add(-res.Elapsed), Config: res.Config, Settings: set,
		Choice: res.Choice, Names: res.Names,
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// Info reports one transition.
type Info struct {
	// Accepted reports whether the proposal was accepted (NUTS: whether
	// the draw differs from the starting point).
	Accepted bool
	// AcceptProb is the acceptance probability of this transition when the
	// kernel knows it (full-batch MH: min(1, ratio)), or the probability
	// given the auxiliary minibatch for minibatch kernels; NaN if unknown.
	// For NUTS it is Stan's accept_stat__, the mean of min(1, e^{−ΔH})
	// over the states of the trajectory.
	AcceptProb float64
	// LogDensity is the exact unnormalised log posterior at the chain's new
	// position when the kernel knows it (full-batch kernels); NaN otherwise.
	LogDensity float64
	// Batch is the kernel's own batch size in the papers' sense (MH: N;
	// TunaMH, PoissonMH: the Poisson count B).
	Batch int
	// Distinct is the number of distinct data the step touched (≤ Batch
	// for kernels that draw with replacement).
	Distinct int
	// Fallback reports whether a minibatch kernel fell back to full MH.
	Fallback bool
	// Evals and GradEvals are the datum energy and gradient evaluations of
	// the step. The driver sets them from its counting Target; a kernel's
	// own values are overwritten.
	Evals, GradEvals int
	// AuxEvals is the part of Evals a kernel spent on its auxiliary
	// variables rather than on the θ move (FlyMC: the brightness z-step;
	// its θ-step is Evals − AuxEvals). Set by the kernel.
	AuxEvals int
	// TreeDepth is the depth of NUTS's trajectory tree (it holds up to
	// 2^TreeDepth states; Stan's treedepth__), 0 for other kernels.
	TreeDepth int
	// Divergent reports a divergent trajectory (NUTS and HMC: an energy
	// error above MaxDeltaH, a step out of the prior's support or to a
	// non-finite energy or gradient; Stan's divergent__).
	Divergent bool
}

// Settings configures Sample. A nil *Settings, or the zero value of any
// field, does the right thing.
type Settings struct {
	// Chains is the number of chains (0: 4; at most MaxChains).
	Chains int
	// Workers is the number of goroutines running chains (0: the smaller of
	// Chains and GOMAXPROCS). Draws do not depend on it.
	Workers int
	// Warmup is the number of warmup transitions per chain, during which
	// the step scale is adapted and nothing is kept (0: 1000; NoWarmup:
	// none).
	Warmup int
	// Draws is the number of kept draws per chain (0: 1000).
	Draws int
	// Thin keeps every Thin-th transition after warmup (0: 1).
	Thin int
	// Duration, if positive, ends each chain's sampling phase after this
	// much wall time (warmup not counted) even if fewer than Draws draws
	// were made: fixed-time comparisons such as ESS per second. Status is
	// then Completed. With Duration set, Draws 0 means no limit. (Resume
	// extends such a run only after res.Settings.Duration is raised.)
	Duration time.Duration
	// Seed seeds every chain: chain c uses rand.NewPCG(Seed, FirstChain +
	// c). The zero value is the valid seed 0.
	Seed uint64
	// FirstChain makes this run's chains chains FirstChain, FirstChain + 1,
	// … of a larger run: chain c draws from rand.NewPCG(Seed, FirstChain +
	// c), so a run split over processes or machines (one chain each, say,
	// with FirstChain = its index) makes the same draws, bit for bit, as
	// one run of all the chains with the same Seed and a fixed kernel. The
	// package stancsv numbers its files and chain ids by it. 0: the first.
	FirstChain int
	// Init is θ0 for every chain (nil: the origin, or the centre of a Box
	// or Ball prior's support that does not hold the origin; with a nil Kernel that chose a kernel built on
	// the Laplace approximation, one draw of it per chain: LaplaceInits;
	// for GroupGibbs and GroupSMH, the Laplace-EM centre, since at the
	// origin a log scale's conditional is improper). Inits, if set, gives
	// one θ0 per chain instead.
	Init  []float64
	Inits [][]float64
	// TargetAccept is the acceptance rate warmup adapts the step scale
	// toward (0: the kernel's default, AcceptTarget: 0.234 for
	// random-walk kernels, 0.574 for MALA, 0.65 for HMC, 0.8 for NUTS). For
	// NUTS it is the mean acceptance statistic (Stan's adapt_delta).
	TargetAccept float64
	// Metric says what warmup estimates for chains with an inverse mass
	// matrix (MetricAdapter: MALA, HMC, NUTS): MetricAuto (the default, as
	// ""), each window's dense covariance when the draws are strongly
	// correlated and it has enough of them, else their variances;
	// MetricDiag, a diagonal M⁻¹ from the warmup draws' variances;
	// MetricDense, a dense one from their covariance; MetricUnit, nothing —
	// the chains keep their kernel's Metric. See Sample for the windows.
	// Other chains ignore it.
	Metric MetricKind
	// NoAdapt keeps the kernel's step scale (and metric) fixed during
	// warmup.
	NoAdapt bool
	// Recorder, if not nil, observes the run.
	Recorder Recorder
	// DiscardDraws passes the kept draws to the Recorder (a
	// stancsv.Recorder streams them to files) without keeping them in the
	// Result, whose chains then count them in ChainResult.Streamed: a run
	// may keep more draws than memory holds (Result.DrawBytes). It needs a
	// Recorder. Such a run can be resumed in this process (Resume) but not
	// checkpointed (the checkpoint could not restore the draws).
	DiscardDraws bool
	// ChoiceProgress, if not nil, is told each step of the automatic
	// default's choice ([Choose], and [Sample] with a nil kernel) as it
	// starts or ends: finding the MAP and the Laplace approximation, then
	// each pilot ("pilot 2 of 5: TFMH-CV-CN") and its outcome. The choice
	// takes seconds (the MAP's passes over the data, then a second or so a
	// pilot) before any chain starts, and a command line shows this rather
	// than nothing. It is called from the choosing goroutine, one call at a
	// time, and must not block for long. The steps are for people: their
	// wording may change.
	ChoiceProgress func(step string)

	// onTarget, if set (the automatic default's pilot guard), is called
	// with each chain's Target once it is made, before its Start.
	onTarget func(c int, t *Target)
}

// maxDenseDim is the largest dimension with a dense metric of at most
// MaxDim entries.
const maxDenseDim = 1 << 13

// Limits and special values of a run's sizes, and the automatic
// default's MAP tolerance.
const (
	// MaxDim is the largest dimension of θ the package accepts (2²⁶, 512
	// MiB per vector of θ): constructors and Posterior.Validate refuse a
	// larger one with an error, rather than let an allocation of that size
	// kill the process.
	MaxDim = 1 << 26
	// MaxChains is the largest Settings.Chains: each chain is started,
	// with its scratch memory, before any runs, so a mistyped count must
	// be an error, not an allocation that kills the process.
	MaxChains = 1 << 16
	// NoWarmup as Settings.Warmup runs no warmup transitions.
	NoWarmup = -1
	// AutoMAPTol is the MAPSettings.Tol with which the automatic default
	// (Choose) finds the MAP and the Laplace approximation; a program that
	// rebuilds a Choice's kernel from its name (WithLaplace) passes it to
	// FindLaplace to build the same one. It is the Newton decrement at which
	// the search stops: √(2·10⁻⁶) ≈ 0.0014 standard deviations of the Laplace
	// approximation from the mode, far closer than its kernels need (the
	// control variates are exact at any expansion point, and the proposals
	// move by whole sds). FindMAP's default, 10⁻¹⁶, typically takes one more
	// pass over the data to get there: Newton's decrement falls
	// quadratically.
	AutoMAPTol = 1e-6
	// AutoSmallN is the number of data below which the automatic default
	// takes a full-batch sampler (NUTS) without pilots: a pass over the
	// data is cheap.
	AutoSmallN = autoSmallN
)

// defaultChains is the number of chains when Settings.Chains is 0.
const defaultChains = 4

func (s *Settings) resolve(d int, k Kernel) (Settings, error) {
	var r Settings
	if s != nil {
		r = *s
	}
	switch {
	case r.Chains < 0 || r.Chains > MaxChains:
		return r, fmt.Errorf("exactmh: Settings.Chains = %d, want in [0, MaxChains = %d]", r.Chains, MaxChains)
	case r.Workers < 0:
		return r, fmt.Errorf("exactmh: Settings.Workers = %d, want ≥ 0", r.Workers)
	case r.Warmup < NoWarmup:
		return r, fmt.Errorf("exactmh: Settings.Warmup = %d, want ≥ 0 (or NoWarmup)", r.Warmup)
	case r.Draws < 0:
		return r, fmt.Errorf("exactmh: Settings.Draws = %d, want ≥ 0", r.Draws)
	case r.Thin < 0:
		return r, fmt.Errorf("exactmh: Settings.Thin = %d, want ≥ 1 (0 means 1)", r.Thin)
	case r.Duration < 0:
		return r, fmt.Errorf("exactmh: Settings.Duration = %v, want ≥ 0", r.Duration)
	case r.TargetAccept < 0 || r.TargetAccept >= 1 || math.IsNaN(r.TargetAccept):
		return r, fmt.Errorf("exactmh: Settings.TargetAccept = %v, want in (0, 1) (0 means the kernel's default)", r.TargetAccept)
	case r.Metric != "" && r.Metric != MetricDiag && r.Metric != MetricDense && r.Metric != MetricUnit && r.Metric != MetricAuto:
		return r, fmt.Errorf("exactmh: Settings.Metric = %q, want %q, %q, %q or %q", r.Metric, MetricAuto, MetricDiag, MetricDense, MetricUnit)
	case r.FirstChain < 0 || r.FirstChain > MaxChains:
		return r, fmt.Errorf("exactmh: Settings.FirstChain = %d, want in [0, MaxChains = %d]", r.FirstChain, MaxChains)
	case r.DiscardDraws && r.Recorder == nil:
		return r, errors.New("exactmh: Settings.DiscardDraws without a Recorder: the draws would be lost (stream them with a stancsv.Recorder)")
	}
	if r.Metric == "" {
		r.Metric = MetricAuto
	}
	if r.Chains == 0 {
		r.Chains = defaultChains
	}
	if r.Workers == 0 {
		r.Workers = min(r.Chains, runtime.GOMAXPROCS(0))
	}
	r.Workers = min(r.Workers, r.Chains)
	switch r.Warmup {
	case 0:
		r.Warmup = 1000
	case NoWarmup:
		r.Warmup = 0
	}
	switch {
	case r.Draws == 0 && r.Duration > 0:
		r.Draws = math.MaxInt32 // bounded by time instead
	case r.Draws == 0:
		r.Draws = 1000
	}
	if r.Thin == 0 {
		r.Thin = 1
	}
	// Warmup + Draws·Thin transitions per chain must fit in an int: an
	// overflow would make the run end at once, "completed" with no draws.
	if r.Draws > (math.MaxInt-r.Warmup)/r.Thin {
		return r, fmt.Errorf("exactmh: Settings: Warmup + Draws·Thin = %d + %d·%d transitions per chain overflows int", r.Warmup, r.Draws, r.Thin)
	}
	if r.TargetAccept == 0 {
		r.TargetAccept = defaultTargetAccept(k)
	}
	if r.Init != nil && len(r.Init) != d {
		return r, fmt.Errorf("exactmh: Settings.Init has length %d, want dimension %d", len(r.Init), d)
	}
	if r.Inits != nil {
		if len(r.Inits) != r.Chains {
			return r, fmt.Errorf("exactmh: Settings.Inits has %d points, want one per chain (%d)", len(r.Inits), r.Chains)
		}
		for c, x := range r.Inits {
			if len(x) != d {
				return r, fmt.Errorf("exactmh: Settings.Inits[%d] has length %d, want dimension %d", c, len(x), d)
			}
		}
	}
	return r, nil
}

// init returns chain c's θ0: Inits[c], Init, or defaultInit of p.
func (s *Settings) init(c int, p *Posterior) []float64 {
	switch {
	case s.Inits != nil:
		return append([]float64(nil), s.Inits[c]...)
	case s.Init != nil:
		return append([]float64(nil), s.Init...)
	}
	return defaultInit(p.prior(), p.Dim())
}

// defaultInit returns θ0 when Settings give none: the origin, or, where the
// origin lies outside the support of a BoundedSupport prior (or one wrapping
// it), the support's centre — a uniform prior on [1, 2]ᵈ should not need
// an Init to start.
func defaultInit(prior Prior, d int) []float64 {
	x := make([]float64, d)
	if inSupport(prior, x) {
		return x
	}
	if s, ok := supportOf(prior).(BoundedSupport); ok {
		s.Middle(x)
	}
	return x
}

// Status says how a run ended.
type Status int

const (
	// Completed: every chain made all its draws.
	Completed Status = iota
	// Canceled: the context was cancelled; the draws made so far are kept.
	Canceled
	// Failed: a chain stopped with an error (a violated bound, a
	// non-finite energy, a panic in user code: a *PanicError) or the
	// Recorder failed (a *RecorderError, from Record or from Finish at the
	// end of an otherwise complete run); the draws made so far are kept.
	// A run failed only by its Recorder can still be resumed and
	// checkpointed; other failed runs cannot.
	Failed
)

// String returns "completed", "canceled" or "failed".
func (s Status) String() string {
	switch s {
	case Completed:
		return "completed"
	case Canceled:
		return "canceled"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Totals accumulates the transitions of one phase (warmup or sampling) of a chain.
type Totals struct {
	Steps     int           // transitions made
	Accepted  int           // accepted proposals
	Evals     int64         // datum energy evaluations
	GradEvals int64         // datum gradient evaluations
	AuxEvals  int64         // sum of Info.AuxEvals (included in Evals)
	Batch     int64         // sum of Info.Batch
	Fallbacks int           // transitions that fell back to full MH
	Divergent int           // divergent transitions (Info.Divergent)
	Time      time.Duration // wall time of the phase
}

// AcceptRate returns Accepted/Steps (NaN with no steps).
func (t Totals) AcceptRate() float64 { return float64(t.Accepted) / float64(t.Steps) }

// EvalsPerStep returns Evals/Steps.
func (t Totals) EvalsPerStep() float64 { return float64(t.Evals) / float64(t.Steps) }

// GradPerStep returns GradEvals/Steps.
func (t Totals) GradPerStep() float64 { return float64(t.GradEvals) / float64(t.Steps) }

// MeanBatch returns the mean of Info.Batch (proposals outside the prior's
// support count with the batch they read: none).
func (t Totals) MeanBatch() float64 { return float64(t.Batch) / float64(t.Steps) }

func (t *Totals) add(info *Info) {
	t.Steps++
	if info.Accepted {
		t.Accepted++
	}
	t.Evals += int64(info.Evals)
	t.GradEvals += int64(info.GradEvals)
	t.AuxEvals += int64(info.AuxEvals)
	t.Batch += int64(info.Batch)
	if info.Fallback {
		t.Fallbacks++
	}
	if info.Divergent {
		t.Divergent++
	}
}

func (t *Totals) merge(u Totals) {
	t.Steps += u.Steps
	t.Accepted += u.Accepted
	t.Evals += u.Evals
	t.GradEvals += u.GradEvals
	t.AuxEvals += u.AuxEvals
	t.Batch += u.Batch
	t.Fallbacks += u.Fallbacks
	t.Divergent += u.Divergent
	t.Time += u.Time
}

// ChainResult holds one chain's draws and statistics.
type ChainResult struct {
	// Chain is the chain's index (its RNG stream is PCG(Seed, Chain)).
	Chain int
	// Draws holds the kept draws row-major: draw k is
	// Draws[k*Dim : (k+1)*Dim]. Use Result.Draw or Result.Samples.
	Draws []float64
	// Infos[k] is the Info of the transition that produced draw k.
	Infos []Info
	// Times[k] is the wall time from the start of the chain (warmup
	// included) to draw k, for accuracy-versus-time curves.
	Times []time.Duration
	// Streamed counts the kept draws passed to the Recorder and not kept
	// here (Settings.DiscardDraws); kept draws are Len() + Streamed.
	Streamed int
	// Warmup and Sampling total the two phases.
	Warmup, Sampling Totals
	// Scale is the step scale after warmup (NaN if the chain is not Tunable).
	Scale float64
	// WarmupStop, when not empty, says why the chain's warmup stopped
	// before Settings.Warmup transitions (Warmup.Steps of them ran): it had
	// nothing left to adapt — a Crank–Nicolson proposal at its
	// independence limit or its cap, or a WarmupSettler chain whose own
	// adaptation is frozen — and the remaining warmup transitions were
	// skipped. The draws are the fixed kernel's all the same.
	WarmupStop string
	// Metric is the chain's inverse mass matrix as the chain ended with it
	// — warmup's estimate, unless Settings.Metric is MetricUnit — for
	// chains that have one (MetricAdapter); the identity otherwise.
	Metric Metric
	// Params holds kernel parameters as the chain ended with them, for
	// chains that report any (TunaMH: "chi", "C"); nil otherwise.
	Params map[string]float64
	// Err is the error that stopped the chain, if any.
	Err error
}

// Len returns the number of kept draws.
func (c *ChainResult) Len() int { return len(c.Infos) }

// Result is the outcome of Sample.
type Result struct {
	Kernel   string   // Kernel.Name()
	Exact    bool     // Kernel.Exact()
	Config   Kernel   // the kernel value itself, with its hyperparameters
	Dim      int      // dimension of θ
	N        int      // number of data
	Settings Settings // the settings used, defaults filled in
	Status   Status
	Chains   []*ChainResult
	Elapsed  time.Duration // wall time of the whole run
	// Choice is what the automatic default chose and why (Sample with a
	// nil Kernel; its Time is not in Elapsed), nil otherwise.
	Choice *Choice
	// Names are the coordinates' names (Posterior.Names), nil if unnamed.
	Names []string

	runners []*chainRunner // the chains' state, for Resume and Checkpoint
	broken  bool           // a chain failed in a way that leaves its state unknown: no Resume, no Checkpoint
}

// Draw returns draw k of chain c (not a copy). Like indexing a slice, it
// panics, with a message saying so, if c is not in [0, len(Chains)) or k
// not in [0, Chains[c].Len()).
func (r *Result) Draw(c, k int) []float64 {
	if c < 0 || c >= len(r.Chains) || k < 0 || k >= r.Chains[c].Len() {
		n := -1
		if c >= 0 && c < len(r.Chains) {
			n = r.Chains[c].Len()
		}
		panic(fmt.Sprintf("exactmh: Result.Draw(%d, %d): out of range (%d chains; the chain has %d draws)", c, k, len(r.Chains), n))
	}
	return r.Chains[c].Draws[k*r.Dim : (k+1)*r.Dim]
}

// Samples returns parameter j as x[chain][iteration], the layout of the
// diagnostics (ESSBulk, RHat, …). Chains keep their own lengths, which differ
// only after a cancellation or failure. Like Draw, and like indexing a
// slice, it panics, with a message saying so, if j is not in [0, Dim).
func (r *Result) Samples(j int) [][]float64 {
	if j < 0 || j >= r.Dim {
		panic(fmt.Sprintf("exactmh: Result.Samples(%d): parameter index out of range [0, %d)", j, r.Dim))
	}
	x := make([][]float64, len(r.Chains))
	for c, ch := range r.Chains {
		x[c] = make([]float64, ch.Len())
		for k := range x[c] {
			x[c][k] = ch.Draws[k*r.Dim+j]
		}
	}
	return x
}

// Sampling returns the sampling-phase totals summed over chains.
func (r *Result) Sampling() Totals {
	var t Totals
	for _, c := range r.Chains {
		t.merge(c.Sampling)
	}
	return t
}

// Warmup returns the warmup totals summed over chains.
func (r *Result) Warmup() Totals {
	var t Totals
	for _, c := range r.Chains {
		t.merge(c.Warmup)
	}
	return t
}

// Mean returns the posterior mean estimate over all kept draws of all chains.
func (r *Result) Mean() []float64 {
	m := make([]float64, r.Dim)
	var n int
	for _, c := range r.Chains {
		for k := 0; k < c.Len(); k++ {
			for j := range m {
				m[j] += c.Draws[k*r.Dim+j]
			}
		}
		n += c.Len()
	}
	for j := range m {
		m[j] /= float64(n)
	}
	return m
}

// RunInfo describes a run to a Recorder before it starts.
type RunInfo struct {
	Kernel              string
	Exact               bool
	Chains, Dim, N      int
	Warmup, Draws, Thin int
	Seed                uint64
	// Steps is the number of transitions each chain will make (at most,
	// with Settings.Duration).
	Steps     int
	StartTime time.Time
	// Config is the kernel value, with its hyperparameters, and Settings
	// the run's settings with defaults filled in.
	Config   Kernel
	Settings Settings
	// Choice is the automatic default's choice (Sample with a nil Kernel),
	// nil otherwise.
	Choice *Choice
	// Names are the coordinates' names (Posterior.Names), nil if unnamed.
	Names []string
}

// Event is one transition, as a Recorder sees it.
type Event struct {
	Chain     int
	Iteration int  // 0-based transition index, warmup included
	Warmup    bool // whether the transition belongs to warmup
	Draw      int  // index of the kept draw it produced, or −1
	// Theta is the position after the transition. It is owned by the
	// chain: read it during the call, never modify or retain it.
	Theta   []float64
	Info    Info
	Elapsed time.Duration // since the chain started
	// StepScale is the chain's step scale after the transition (NaN if the
	// chain is not Tunable).
	StepScale float64
	// Metric is the chain's inverse mass matrix after the transition, for
	// chains that have one (MetricAdapter); the identity otherwise.
	Metric Metric
}

// Sample runs the chains of kernel k on posterior p and returns their draws.
// A nil k is the automatic default: Choose picks the kernel (and, for a
// GLM, the control-variate rewrite of p it samples) from short pilots, and
// Result.Choice says what it chose and why.
//
// Chains run in parallel on Settings.Workers goroutines; chain c draws from
// rand.New(rand.NewPCG(Seed, c)), so a seed gives bit-identical draws whatever
// the number of workers.
//
// # Warmup
//
// During warmup (unless Settings.NoAdapt) the step scale of Tunable chains
// is adapted toward Settings.TargetAccept by dual averaging (Hoffman and
// Gelman 2014, §3.2.1) and then fixed at its running average. Chains with
// an inverse mass matrix (MetricAdapter) also get Stan's windowed metric
// adaptation (Stan Reference Manual, "HMC algorithm parameters"), which
// Settings.Metric selects: after an initial buffer of 75 transitions,
// where only the step scale adapts (the chain finds the typical set), the
// warmup draws are collected in windows of 25, 50, 100, … transitions (the
// last one stretched to the start of the terminal buffer); at the end of
// each window M⁻¹ becomes the draws' sample variances (MetricDiag) or
// covariance (MetricDense), or under MetricAuto, the default, the
// covariance when the draws' correlations are strong (see MetricAuto) and
// else the variances, regularised as Stan does toward 10⁻³·I,
//
//	M⁻¹ = n/(n+5)·Σ̂ + 10⁻³·5/(n+5)·I,  n the window's draws,
//
// and dual averaging restarts from the current step scale ε with
// μ = log(10ε); a terminal buffer of 50 transitions adapts the step scale
// to the final metric. A warmup shorter than 150 transitions gets Stan's
// 15%/75%/10% split (one window), one shorter than 20 no metric
// adaptation. (Stan also searches for a step scale after each metric
// update, which needs the integrator; here dual averaging's first steps
// do that job.) The estimated metric is in ChainResult.Metric.
//
// A chain that moves by a Crank–Nicolson proposal stops its warmup when
// nothing is left to adapt: after at least 75 transitions, once the scale
// and its running average are past the independence limit (ρ < 10⁻¹⁷), or
// at the proposal's cap MaxScale, with the mean acceptance above its target
// and no metric or mid-warmup decision pending. The remaining warmup
// transitions are skipped, the draws are the fixed kernel's, and
// ChainResult.WarmupStop says so (the CLI prints it and its files' trailer
// carries it; TestWarmupStopsAtIndependenceLimit). A chain with no step
// scale or metric to adapt whose own adaptation is frozen (WarmupSettler:
// package localgibbs's kernel) stops its warmup so too, after at least
// MinBurnIn transitions.
//
// On cancellation of ctx, Sample returns the draws made so far, Status
// Canceled and ctx's error. The built-in kernels' chains notice it within
// a chunk of data (512, or 256 in a minibatch kernel's full-batch step)
// wherever a transition reads O(N) data — MH, MALA, HMC and NUTS's passes,
// the full-batch MH steps the minibatch kernels fall back to, TunaMH's
// and the Poisson kernels' minibatches (as large as MaxBatch, N by
// default), FlyMC's sweeps, GroupGibbs's and GroupSMH's exact reads — and
// abandon that
// transition, leaving the chain and its random stream as they were before
// it, so that Resume or a checkpoint continues bit-identically
// (TestInterruptMidTransition, TestInterruptFullBatchFallback,
// TestInterruptGroupExactReads, TestAbandonStepRestoresState). TFMH's and
// SMH's minibatches and an [Aux] scheme of the user's finish first. A
// warmup decision (the mid-warmup comparison with full-batch MH, TunaMH's
// χ search, TunaMH-SGLD's check of its final step: tens of passes, once)
// is abandoned with the transition it follows, both made again on
// resuming (TestInterruptWarmupDecision); the χ search's own passes
// finish first. Cancelled while the chains start (the bound audits, a
// Poisson kernel's range, a group kernel's Hessian), Sample returns ctx's
// error and no Result (TestInterruptStartAudit). With a nil Kernel, the
// automatic default's passes (the MAP, the Laplace Hessian, the control
// variates, the Poisson candidate's range, the multilevel centre and its
// sparse Hessians) stop within a chunk too (TestChooseInterrupted,
// TestInterruptRange, TestInterruptSparseHessian). If a chain fails (violated bound, non-finite
// energy, a panic in user code — a *PanicError) or the Recorder does (a
// *RecorderError), the run stops and Sample returns the draws made so far,
// Status Failed and the error. Errors in p, k or s are returned before any
// work, as is a panic in the kernel's Start or the recorder's Init. Status
// Completed always comes with a nil error.
func Sample(ctx context.Context, p *Posterior, k Kernel, s *Settings) (*Result, error) {
	if k != nil {
		return sample(ctx, p, k, s, nil, nil)
	}
	choice, err := Choose(ctx, p, s)
	if err != nil {
		return nil, err
	}
	if s != nil && s.ChoiceProgress != nil { // before warmup starts, not only in the Result
		s.ChoiceProgress("chose " + choice.Name + ": " + choice.Reason)
	}
	if choice.fromLaplace {
		s = LaplaceInits(s, choice.Laplace, choice.Posterior)
	} else if choice.Center != nil {
		s = centerInits(s, choice.Center, choice.CenterSD, choice.Posterior)
	}
	return sample(ctx, choice.Posterior, choice.Kernel, s, choice, choice.cache(choice.Posterior))
}

// LaplaceInits returns a copy of s with one θ0 per chain drawn from the
// Laplace approximation la, N(θ̂, H⁻¹), when s sets neither Init nor Inits
// (else s itself, as when la is nil or has no covariance). Sample with a
// nil Kernel starts its chains so when the kernel it chose is built on la
// (a -CV or -CN name): where the posterior is, not at the origin, from which a minibatch kernel's first steps can be full passes
// over the data, and dispersed at the posterior's scale, as R-hat needs.
// Chain c's draw comes from its own stream of Seed, so a run split by
// FirstChain starts each chain where the whole run would; a draw outside
// p's prior support is replaced by θ̂. A program that runs a Choice in
// another process (by its name, WithLaplace) starts it the same way.
func LaplaceInits(s *Settings, la *LaplaceApprox, p *Posterior) *Settings {
	if la == nil || la.CovChol == nil && la.SparseFactor == nil || p == nil || s != nil && (s.Init != nil || s.Inits != nil) {
		return s
	}
	var r Settings
	if s != nil {
		r = *s
	}
	chains := cmp.Or(r.Chains, defaultChains)
	if chains < 0 || chains > MaxChains || r.FirstChain < 0 {
		return s // resolve reports it
	}
	prior := p.prior()
	r.Inits = make([][]float64, chains)
	for k := range r.Inits {
		rng := rand.New(rand.NewPCG(r.Seed, 0x6c61706c616365^uint64(r.FirstChain+k)))
		x := la.Rand(rng, nil)
		if lp := prior.LogPrior(x); math.IsInf(lp, -1) || math.IsNaN(lp) {
			x = slices.Clone(la.Mean)
		}
		r.Inits[k] = x
	}
	return &r
}

// sample is Sample with the kernel given, and the automatic default's
// choice that led to it (nil: the caller's).
func sample(ctx context.Context, p *Posterior, k Kernel, s *Settings, choice *Choice, cache *runCache) (res *Result, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if k == nil {
		return nil, errors.New("exactmh: Sample: nil Kernel")
	}
	// User code called while setting up (the energy's Len and Dim, the
	// kernel's Name and Start, the prior, the recorder's Init) may panic:
	// that is an error, not the end of the process.
	where, chain, first := "Kernel.Name", -1, 0
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("exactmh: Sample: %w", newPanicError(first, chain, -1, where, v))
		}
	}()
	name, exact := k.Name(), k.Exact()
	where = "Posterior"
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d := p.Dim()
	where = "Kernel.DefaultTargetAccept"
	set, err := s.resolve(d, k)
	if err != nil {
		return nil, err
	}
	first = set.FirstChain
	res = &Result{Kernel: name, Exact: exact, Config: k, Dim: d, N: p.Len(), Settings: set, Choice: choice, Names: p.Names}

	// Start every chain before any sampling so configuration errors surface
	// at once, in chain order. Starts run on the workers in parallel: a
	// minibatch kernel's Start reads all the data (its bound, alias table
	// and audit), which at N = 10⁷ takes seconds per chain.
	targets := make([]*Target, set.Chains)
	chains := make([]Chain, set.Chains)
	startErrs := make([]error, set.Chains)
	if cache == nil {
		cache = newRunCache()
	}
	startChain := func(c int) (err error) {
		where := "Sample"
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("exactmh: Sample: %w", newPanicError(set.FirstChain, c, -1, where, v))
			}
		}()
		theta0 := set.init(c, p)
		if err := vec.FiniteVec(fmt.Sprintf("Sample: initial point of chain %d", chainNumber(set.FirstChain, c)), theta0); err != nil {
			return err
		}
		t, err := NewTarget(p)
		if err != nil {
			return err
		}
		t.cache = cache
		targets[c] = t
		if set.onTarget != nil {
			set.onTarget(c, t)
		}
		where = "Prior.LogPrior"
		if lp := t.LogPrior(theta0); math.IsInf(lp, -1) || math.IsNaN(lp) {
			return fmt.Errorf("exactmh: Sample: initial point %v of chain %d is outside the prior's support (log prior %v); set Settings.Init", theta0, chainNumber(set.FirstChain, c), lp)
		}
		where = "Kernel.Start"
		// Start's passes over the data (the bound audit, the range, a
		// Laplace centre's gradient) stop within a chunk once ctx is
		// cancelled: nothing has been drawn, so nothing is rolled back
		// (TestInterruptStartAudit).
		release := t.watch(ctx)
		if ds, ok := k.(DefaultStarter); ok && set.Init == nil && set.Inits == nil {
			// A kernel that has its own start (the multilevel kernels: the
			// centre they are built on, not the origin, where every effect
			// is exactly 0 and a log scale's conditional is improper;
			// TestMultilevelDefaultStart). An error is Start's to report.
			where = "Kernel.DefaultStart"
			if c0, err := ds.DefaultStart(t); err == nil && len(c0) == len(theta0) {
				theta0 = slices.Clone(c0)
			} else if ctx.Err() != nil && errors.Is(err, errInterrupted) {
				release()
				return ctx.Err()
			}
			where = "Kernel.Start"
		}
		ch, err := k.Start(t, theta0)
		release()
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, errInterrupted) {
				return ctx.Err()
			}
			return fmt.Errorf("exactmh: chain %d: %w", chainNumber(set.FirstChain, c), err) // Start errors name the kernel
		}
		if _, ok := ch.(MetricAdapter); ok && set.Metric == MetricDense && !set.NoAdapt && d > maxDenseDim {
			return fmt.Errorf("exactmh: Sample: Settings.Metric = %q in dimension %d: a d×d metric has more than MaxDim = %d entries; use %q", MetricDense, d, MaxDim, MetricDiag)
		}
		chains[c] = ch
		return nil
	}
	where = "Kernel.Start"
	if set.Workers <= 1 || set.Chains == 1 {
		for c := range chains {
			if startErrs[c] = startChain(c); startErrs[c] != nil {
				break
			}
		}
	} else {
		next := make(chan int)
		var wg sync.WaitGroup
		for range set.Workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := range next {
					startErrs[c] = startChain(c)
				}
			}()
		}
		for c := range chains {
			next <- c
		}
		close(next)
		wg.Wait()
	}
	for _, err := range startErrs {
		if err != nil {
			return nil, err
		}
	}
	chain = -1

	reserve, err := reserveDraws(&set, d)
	if err != nil {
		return nil, err
	}
	total := set.Warmup + set.Draws*set.Thin
	start := time.Now()
	if set.Recorder != nil {
		where = "Recorder.Init"
		err := set.Recorder.Init(RunInfo{
			Kernel: res.Kernel, Exact: res.Exact, Chains: set.Chains, Dim: d, N: res.N,
			Warmup: set.Warmup, Draws: set.Draws, Thin: set.Thin, Seed: set.Seed,
			Steps: total, StartTime: start, Config: k, Settings: set, Choice: choice, Names: p.Names,
		})
		if err != nil {
			return nil, fmt.Errorf("exactmh: Sample: recorder: %w", err)
		}
	}
	where = "Chain"
	res.runners = make([]*chainRunner, set.Chains)
	res.Chains = make([]*ChainResult, set.Chains)
	for c := range chains {
		chain = c
		res.runners[c] = newChainRunner(c, k, chains[c], targets[c], &set, d, reserve)
		res.Chains[c] = res.runners[c].r
	}
	runAll(ctx, res)
	res.Elapsed = time.Since(start)
	return finishRun(ctx, res)
}

// runAll runs every chain of res from where it stands to its end (or
// cancellation, or a failure, which stops the others) on Settings.Workers
// goroutines.
func runAll(ctx context.Context, res *Result) {
	set := &res.Settings
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	work := make(chan int)
	var wg sync.WaitGroup
	for range set.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				r := res.runners[c]
				r.run(ctx, stop, set)
				if r.r.Err != nil && ctx.Err() == nil {
					halt()
				}
			}
		}()
	}
	for c := range res.runners {
		work <- c
	}
	close(work)
	wg.Wait()
}

// Resume continues a run that was cancelled, or extends a completed one by
// more draws per chain, with every chain picking up exactly where it
// stopped: the same kernel state, random stream, warmup adaptation and
// thinning phase, so the draws are bit-identical to those of one
// uninterrupted run with the final number of draws. It appends to res and
// returns it. The Recorder of the original settings, if any, keeps
// receiving events (its Init is not called again; Finish is); a
// ResumeRecorder is first given the run so far through InitResume.
//
// more is added to Settings.Draws, the number of draws each chain makes
// in all, whatever the state of the run: Resume(ctx, res, 0) finishes a
// cancelled run with the draws it was asked for, a cancelled chain with
// 300 of 1000 draws making the 700 left, and Resume(ctx, res, 500) makes
// it 1500 in all. On a completed run, more 0 runs no transition.
//
// A run limited by Settings.Duration stops each chain's sampling when the
// chain has sampled for that long, so more draws alone cannot extend it
// once every chain has used up its Duration: Resume then returns an error
// for more > 0, unless res.Settings.Duration is raised first (then each
// chain samples on until its new Duration, or Draws, is reached; more may
// be 0). A cancelled fixed-duration run continues with the time each chain
// has left.
//
// Resume works on Results made by Sample in this process or by
// LoadCheckpoint. A failed run cannot be resumed, except one that failed
// only because its Recorder did (a *RecorderError: every chain's state is
// intact), which Resume continues once the cause is fixed.
func Resume(ctx context.Context, res *Result, more int) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if res == nil || res.runners == nil {
		return res, errors.New("exactmh: Resume: the result holds no chain state (make it with Sample or LoadCheckpoint)")
	}
	if res.Status == Failed && res.broken {
		return res, errors.New("exactmh: Resume: the run failed; fix the cause and start again")
	}
	if more < 0 {
		return res, fmt.Errorf("exactmh: Resume: more = %d, want ≥ 0", more)
	}
	set := &res.Settings
	if set.Duration < 0 {
		return res, fmt.Errorf("exactmh: Resume: Settings.Duration = %v, want ≥ 0", set.Duration)
	}
	if more > (math.MaxInt-set.Warmup)/set.Thin-set.Draws {
		return res, fmt.Errorf("exactmh: Resume: Warmup + (Draws + more)·Thin = %d + (%d + %d)·%d overflows", set.Warmup, set.Draws, more, set.Thin)
	}
	if more > 0 && set.Duration > 0 && res.durationUsed() {
		return res, fmt.Errorf("exactmh: Resume: every chain has sampled for Settings.Duration = %v, so %d more draws cannot be made: raise res.Settings.Duration first (Resume then samples until the new Duration)", set.Duration, more)
	}
	if !set.DiscardDraws && set.Duration == 0 {
		if _, err := checkDrawsFit(set.Chains, set.Draws+more, res.Dim); err != nil {
			return res, fmt.Errorf("exactmh: Resume: %w", err)
		}
	}
	for c, cr := range res.runners {
		if cr.saved != nil {
			if err := cr.rebuild(c, res); err != nil {
				return res, fmt.Errorf("exactmh: Resume: chain %d: %w", chainNumber(set.FirstChain, c), err)
			}
		}
	}
	set.Draws += more
	for _, r := range res.runners {
		r.r.Err = nil
	}
	if rr, ok := set.Recorder.(ResumeRecorder); ok {
		err := protect(set.FirstChain, -1, "Recorder.InitResume", func() error { return rr.InitResume(res.runInfo(time.Now()), res) })
		if err != nil {
			set.Draws -= more
			return res, fmt.Errorf("exactmh: Resume: %w", &RecorderError{Op: "InitResume", Chain: -1, Transition: -1, Err: err})
		}
	}
	start := time.Now()
	runAll(ctx, res)
	res.Elapsed += time.Since(start)
	return finishRun(ctx, res)
}

// durationUsed reports whether every chain of a run with Settings.Duration
// has sampled for that long.
func (res *Result) durationUsed() bool {
	for _, r := range res.Chains {
		if r.Sampling.Time < res.Settings.Duration {
			return false
		}
	}
	return true
}

// finishRun sets the run's status from its chains' errors, lets the
// recorder finish, and returns the result with its error. A run that
// failed only because of its recorder keeps its chains' state usable
// (res.broken stays false), so that it can be resumed and checkpointed.
func finishRun(ctx context.Context, res *Result) (*Result, error) {
	var errs []error
	intact := true
	for _, r := range res.Chains {
		if r.Err == nil || errors.Is(r.Err, errStopped) || (ctx.Err() != nil && errors.Is(r.Err, ctx.Err())) {
			continue
		}
		switch r.Err.(type) {
		case *RecorderError:
			errs = append(errs, r.Err) // it names the chain
		case *PanicError:
			intact = false
			errs = append(errs, r.Err)
		default:
			intact = false
			errs = append(errs, fmt.Errorf("chain %d: %w", chainNumber(res.Settings.FirstChain, r.Chain), r.Err))
		}
	}
	switch {
	case len(errs) > 0:
		res.Status = Failed
	case ctx.Err() != nil:
		res.Status = Canceled
	default:
		res.Status = Completed
	}
	res.broken = res.broken || !intact
	if f, ok := res.Settings.Recorder.(RunFinisher); ok {
		if ferr := protect(res.Settings.FirstChain, -1, "Recorder.Finish", func() error { return f.Finish(res) }); ferr != nil {
			res.Status = Failed
			errs = append(errs, &RecorderError{Op: "Finish", Chain: -1, Transition: -1, Err: ferr})
		}
	}
	switch {
	case len(errs) > 0:
		return res, fmt.Errorf("exactmh: %s: %w", res.Kernel, errors.Join(errs...))
	case res.Status == Canceled:
		return res, ctx.Err()
	}
	return res, nil
}

// maxPrealloc bounds the draws a chain reserves room for before it starts
// when the memory available cannot be read.
const maxPrealloc = 1 << 16

// reserveDraws returns the number of draws each chain reserves room for
// before it starts: all of them (no append growth, which would take up to
// twice the room) when they fit in memory, an error when they do not,
// and at most maxPrealloc when the memory available is unknown. A run that
// keeps none (DiscardDraws) reserves nothing, and a run bounded by time
// (Duration), whose Draws is only a cap, at most maxPrealloc.
func reserveDraws(set *Settings, d int) (int, error) {
	switch {
	case set.DiscardDraws:
		return 0, nil
	case set.Duration > 0:
		return min(set.Draws, maxPrealloc), nil
	}
	fits, err := checkDrawsFit(set.Chains, set.Draws, d)
	switch {
	case err != nil:
		return 0, err
	case fits:
		return set.Draws, nil
	}
	return min(set.Draws, maxPrealloc), nil
}

// stepInterrupter is a chain whose transitions may be abandoned midway:
// when the run is cancelled, the Target's whole-data passes return
// errInterrupted, the chain's Step returns it, and abandonStep restores
// whatever the Step changed of the chain's state (the driver restores
// the random stream). A chain that changes its state only after its last
// whole-data pass (MH, MALA, HMC) has nothing to restore; NUTS, whose
// progressive sampling moves θ between doublings, restores θ, its
// gradient and log π. interruptible is false where the chain's Step
// could swallow the error (a user's Proposal or Energy is not a reason:
// their calls are not interrupted, only the Target's passes between
// them).
type stepInterrupter interface {
	interruptible() bool
	abandonStep()
}

// errStopped marks a chain stopped because another chain failed.
var errStopped = errors.New("stopped because another chain failed")

// chainRunner is one chain's complete state between transitions — the
// chain, its random stream, the warmup adaptation, the next transition's
// index and the clocks — so that a run can stop and continue bit-identically.
type chainRunner struct {
	ch          Chain
	t           *Target
	src         *rand.PCG
	rng         *rand.Rand
	tune        Tunable
	warmupAware WarmupAware // nil if the chain is not told about warmup
	adapt       dualAveraging
	met         MetricAdapter  // nil if the chain has no metric
	win         *metricWindows // nil if warmup does not estimate the metric
	it          int            // index of the next transition
	clock       time.Duration  // chain time before the current segment
	r           *ChainResult
	where       string // the call in progress, named if it panics
	// defaultTarget is the kernel's default acceptance target: a run at it
	// lets a chain choose its own at mid-warmup (midWarmuper).
	defaultTarget float64
	// maxScale, when positive, is the highest step scale warmup sets: the
	// cap of the kernel's Crank–Nicolson proposal (CrankNicolson.MaxScale),
	// above which a larger scale would change nothing.
	maxScale float64
	// cnLimit: the kernel moves by a Crank–Nicolson proposal without a cap
	// on its step scale, whose warmup may reach the independence limit
	// (independenceLimit) and stop there; a capped one stops at its cap.
	cnLimit bool
	// midAt is 1 + the warmup transition after which the mid-warmup
	// decision was made early, the chain's scale at its saturation
	// (earlyDecision); 0 when it was not (made at Warmup/2, or not yet).
	midAt int
	// saved, when not nil, is the chain's state: a warmup decision was
	// cut by a cancellation, and the live chain is to be rebuilt from
	// the checkpoint before it (warmupdecision.go).
	saved *chainCheckpoint
}

// capped returns s, or the runner's maxScale when that is positive and
// smaller.
func (cr *chainRunner) capped(s float64) float64 {
	if cr.maxScale > 0 {
		return min(s, cr.maxScale)
	}
	return s
}

// newChainRunner returns chain c's runner with room for reserve draws.
func newChainRunner(c int, k Kernel, ch Chain, t *Target, set *Settings, d, reserve int) *chainRunner {
	src := rand.NewPCG(set.Seed, uint64(set.FirstChain+c))
	cr := &chainRunner{ch: ch, t: t, src: src, rng: rand.New(src), defaultTarget: defaultTargetAccept(k), maxScale: proposalMaxScale(k), cnLimit: uncappedCN(k),
		r: &ChainResult{
			Chain: c,
			Draws: make([]float64, 0, reserve*d),
			Infos: make([]Info, 0, reserve),
			Times: make([]time.Duration, 0, reserve),
			Scale: math.NaN(),
		}}
	cr.tune, _ = ch.(Tunable)
	if cr.tune != nil {
		if s := cr.tune.StepScale(); cr.capped(s) < s {
			cr.tune.SetStepScale(cr.capped(s))
		}
		cr.r.Scale = cr.tune.StepScale()
		cr.adapt.init(cr.r.Scale, set.TargetAccept)
	}
	cr.warmupAware, _ = ch.(WarmupAware)
	if set.NoAdapt || set.Warmup == 0 {
		cr.warmupAware = nil
	}
	cr.met, _ = ch.(MetricAdapter)
	if cr.met != nil && !set.NoAdapt && set.Metric != MetricUnit {
		cr.win = newMetricWindows(set.Warmup, d, set.Metric == MetricDense, set.Metric == MetricAuto && d <= autoDenseMaxDim)
	}
	return cr
}

// run advances the chain from transition cr.it to the end of the run,
// cancellation, a stop signal or a failure. A panic in the chain, its
// kernel's user code or the recorder stops the chain with a *PanicError.
func (cr *chainRunner) run(ctx context.Context, stop <-chan struct{}, set *Settings) {
	r := cr.r
	start := time.Now()
	phaseStart := start
	if _, ok := abandoner(cr.ch); ok {
		// The whole-data passes of a long transition poll a flag set when
		// ctx is cancelled, so that the run stops within a chunk of data
		// rather than at the end of the transition.
		defer cr.t.watch(ctx)()
		cr.t.abandonable = true
	}
	cr.steps(ctx, stop, set, start, &phaseStart)
	// The phase still running when the loop ended gets the remaining time.
	now := time.Now()
	if cr.it >= set.Warmup {
		r.Sampling.Time += now.Sub(phaseStart)
	} else {
		r.Warmup.Time += now.Sub(phaseStart)
	}
	cr.clock += now.Sub(start)
	if cr.saved != nil {
		return // the result is the checkpoint's, before the cut decision
	}
	if err := protect(set.FirstChain, r.Chain, "the chain's StepScale, Metric or Params", cr.report); err != nil && r.Err == nil {
		r.Err = err
	}
}

// report copies the chain's step scale, metric and parameters into its
// result.
func (cr *chainRunner) report() error {
	r := cr.r
	if cr.tune != nil {
		r.Scale = cr.tune.StepScale()
	}
	if cr.met != nil {
		r.Metric = cr.met.Metric()
	}
	if pr, ok := cr.ch.(ParamReporter); ok {
		r.Params = pr.Params()
	}
	return nil
}

// steps runs the transitions of run; *phaseStart is when the current phase
// (warmup or sampling) began in this segment.
func (cr *chainRunner) steps(ctx context.Context, stop <-chan struct{}, set *Settings, start time.Time, phaseStart *time.Time) {
	r, ch, t := cr.r, cr.ch, cr.t
	cr.where = "SetWarmup"
	defer func() {
		if v := recover(); v != nil {
			r.Err = newPanicError(set.FirstChain, r.Chain, cr.it, cr.where, v)
		}
	}()
	if cr.it == 0 && cr.warmupAware != nil {
		cr.warmupAware.SetWarmup(true)
	}
	total := set.Warmup + set.Draws*set.Thin
	done := ctx.Done()
	var ev Event
	// A segment that starts with sampling time left makes at least one
	// draw, however late its goroutine runs (TestResumeFixedDuration).
	firstDraw := -1
	if r.Sampling.Time < set.Duration {
		firstDraw = max(cr.it, set.Warmup)
	}
	for ; cr.it < total; cr.it++ {
		it := cr.it
		select {
		case <-done:
			r.Err = ctx.Err()
		case <-stop:
			r.Err = errStopped
		default:
		}
		if r.Err != nil {
			break
		}
		if it > firstDraw && set.Duration > 0 && r.Sampling.Time+time.Since(*phaseStart) >= set.Duration {
			break
		}
		inWarmup := it < set.Warmup
		cr.where = "MarshalState"
		before, err := cr.beforeDecision(it, set)
		if err != nil {
			r.Err = fmt.Errorf("transition %d: %w", it, err)
			break
		}
		e0, g0 := t.evals, t.gradEvals
		src0 := *cr.src
		cr.where = "Step"
		t.inStep = true
		info, err := ch.Step(cr.rng)
		t.inStep = false
		info.Evals, info.GradEvals = int(t.evals-e0), int(t.gradEvals-g0)
		if err != nil && errors.Is(err, errInterrupted) {
			// Cancelled mid-transition: the chain, its random stream and
			// its counts are put back as they were before it, so that a
			// checkpoint taken now resumes bit-identically
			// (TestInterruptMidTransition).
			*cr.src = src0
			t.evals, t.gradEvals = e0, g0
			cr.where = "abandonStep"
			abandon, _ := abandoner(ch)
			abandon()
			r.Err = ctx.Err()
			break
		}
		if err != nil {
			r.Err = fmt.Errorf("transition %d: %w", it, err)
			break
		}
		now := time.Now()
		ev = Event{Chain: r.Chain, Iteration: it, Warmup: inWarmup, Draw: -1, Info: info, Elapsed: cr.clock + now.Sub(start)}
		if inWarmup {
			r.Warmup.add(&info)
			if !set.NoAdapt {
				cr.where = "warmup adaptation"
				stopped, err := cr.adaptWarmup(it, set, &info, before != nil)
				if err != nil {
					if before != nil && errors.Is(err, errInterrupted) {
						// A warmup decision cut by the cancellation:
						// the chain's state is the checkpoint before
						// transition it, made again on resuming.
						cr.saved = before
						*r = before.Result
						r.Err = ctx.Err()
						break
					}
					r.Err = fmt.Errorf("transition %d: %w", it, err)
					break
				}
				if stopped != "" {
					// Nothing is left to adapt: the remaining warmup
					// transitions are skipped, and the draws come from the
					// kernel as it is now, fixed (ChainResult.WarmupStop).
					r.WarmupStop = stopped
					cr.it = set.Warmup - 1
				}
			}
			if cr.it == set.Warmup-1 && cr.warmupAware != nil {
				cr.where = "SetWarmup"
				cr.warmupAware.SetWarmup(false)
			}
			if cr.it == set.Warmup-1 {
				r.Warmup.Time += now.Sub(*phaseStart)
				*phaseStart = now
			}
		} else {
			r.Sampling.add(&info)
			if (it-set.Warmup+1)%set.Thin == 0 {
				ev.Draw = len(r.Infos) + r.Streamed
				if set.DiscardDraws {
					r.Streamed++
				} else {
					cr.where = "Position"
					r.Draws = append(r.Draws, ch.Position()...)
					r.Infos = append(r.Infos, info)
					r.Times = append(r.Times, ev.Elapsed)
				}
			}
		}
		if set.Recorder != nil {
			cr.where = "Position"
			ev.Theta = ch.Position()
			ev.StepScale = math.NaN()
			if cr.tune != nil {
				ev.StepScale = cr.tune.StepScale()
			}
			if cr.met != nil {
				cr.where = "Metric"
				ev.Metric = cr.met.Metric()
			}
			cr.where = "Recorder.Record"
			if err := set.Recorder.Record(&ev); err != nil {
				r.Err = &RecorderError{Op: "Record", Chain: r.Chain, Transition: it, Err: err, first: set.FirstChain}
				cr.it++
				break
			}
		}
	}
}

// adaptWarmup adapts the chain after warmup transition it: the step scale
// by dual averaging, the metric at the end of each window (dual averaging
// then restarts), and at the last warmup transition the final step scale.
//
// It returns, when nothing is left to adapt after transition it
// (independenceLimit), why: the chain's step scale is then final and the
// caller skips the remaining warmup transitions.
//
// With abandon, a decision that follows it (chainRunner.decides) returns
// errInterrupted once the run is cancelled, the caller keeping the
// checkpoint before transition it as the chain's state; without, it runs
// to its end.
func (cr *chainRunner) adaptWarmup(it int, set *Settings, info *Info, abandon bool) (stopped string, err error) {
	if cr.tune != nil {
		cr.tune.SetStepScale(cr.capped(cr.adapt.update(acceptStat(info))))
	}
	if cr.win != nil {
		pos := cr.ch.Position()
		if w, ok := cr.ch.(workingPositioner); ok {
			pos = w.workingPosition() // the coordinates the metric acts on
		}
		m, ok, err := cr.win.learn(pos)
		if err != nil {
			return "", err
		}
		if ok {
			if err := cr.met.SetMetric(m); err != nil {
				return "", err
			}
			if cr.tune != nil {
				cr.adapt.restart(cr.tune.StepScale())
			}
		}
	}
	early := cr.earlyDecision(it, set)
	if mw, ok := cr.ch.(midWarmuper); ok && set.Warmup >= minMidWarmup && cr.midAt == 0 && (it == set.Warmup/2 || early) {
		var atLimit string // why warmup may stop, as it stands before the decision
		if early {
			cr.midAt = it + 1
			atLimit = cr.limitReason(it, set)
		}
		e0 := cr.t.evals
		// The decision's passes (mhRival's probes, χ's search) change the
		// chain as they go: they are abandoned only where the caller can
		// restore the chain from before transition it (abandon).
		resume := func() {}
		if !abandon {
			resume = cr.t.suspendInterrupt()
		}
		turn, err := mw.midWarmup(cr.r.Warmup, set.TargetAccept == cr.defaultTarget)
		resume()
		cr.r.Warmup.Evals += cr.t.evals - e0 // the decision's data reads are warmup's cost
		if err != nil {
			return "", err
		}
		if turn.Scale > 0 && cr.tune != nil {
			cr.tune.SetStepScale(cr.capped(turn.Scale))
			cr.adapt.restart(cr.capped(turn.Scale))
			// A capped Crank–Nicolson chain keeps its target: the turn's
			// target is the acceptance predicted at a scale the cap may
			// hold below the one warmup sought, and dual averaging toward
			// it from the cap drove TunaMH-CV-CN's scale on examples/rare
			// to 10⁻³, where the chain barely moves.
			if turn.Target > 0 && cr.maxScale == 0 {
				cr.adapt.Target = turn.Target
			}
		}
		if early && it < set.Warmup-1 && cr.tune.StepScale() >= cr.saturation() {
			stopped = atLimit + "; the mid-warmup decision was made there"
		}
	}
	if cr.tune != nil && it < set.Warmup-1 && stopped == "" {
		stopped = warmupStop(cr, it, set)
	}
	if cr.tune == nil && cr.win == nil && it < set.Warmup-1 && it+1 >= MinBurnIn {
		stopped = settled(cr, it, set)
	}
	if (it == set.Warmup-1 || stopped != "") && cr.tune != nil {
		scale := cr.adapt.final()
		if stopped != "" {
			scale = max(scale, cr.tune.StepScale())
		}
		if fs, ok := cr.ch.(finalScaler); ok {
			e0 := cr.t.evals
			var err error
			resume := func() {}
			if !abandon {
				resume = cr.t.suspendInterrupt()
			}
			scale, err = fs.finalScale(scale)
			resume()
			cr.r.Warmup.Evals += cr.t.evals - e0
			if err != nil {
				return "", err
			}
		}
		cr.tune.SetStepScale(cr.capped(scale))
	}
	return stopped, nil
}

// cnIndependentScale is the step scale from which an uncapped
// Crank–Nicolson proposal is its independence limit: ρ = e^{−40} ≈ 4·10⁻¹⁸,
// so the move θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·Lz differs from an
// independent draw μ + Lz by less than a double's rounding of θ′ (2⁻⁵³
// relative) wherever ‖θ − μ‖ is within a factor 2·10³ of ‖θ′‖, and a
// larger scale changes no move.
const cnIndependentScale = 40

// minStopWarmup is the fewest warmup transitions before warmup may stop
// early (independenceLimit): Stan's initial buffer, in which the chain
// leaves its start.
const minStopWarmup = 75

// independenceLimit returns why warmup has nothing left to adapt after
// transition it, or "": the chain moves by a Crank–Nicolson proposal, the
// scale warmup sets and its running average are both at least its limit —
// cnIndependentScale with no cap on the scale (the proposal is an
// independence sampler from N(μ, Σ)), else the cap MaxScale (the moves use
// min(scale, MaxScale)): a larger scale changes no move — the mean
// acceptance statistic is above its target (so dual averaging would keep
// raising the scale: Hbar < 0), and no metric is being estimated and no
// mid-warmup decision is still to come. The kernel after it is then fixed,
// and so is every transition that follows: the draws are those of one
// Markov kernel that leaves the posterior invariant, started wherever
// warmup left the chain, as after a warmup run to its end
// (TestWarmupStopsAtIndependenceLimit checks the moments on a Gaussian
// posterior, capped and uncapped). On examples/tall's logreg_d200 (N = 10⁵)
// full-batch MH-CN ran its scale past 10¹⁰⁰ within the first transitions
// and spent 1000 full passes a chain on a warmup with nothing to adapt.
func (cr *chainRunner) independenceLimit(it int, set *Settings) string {
	if _, ok := cr.ch.(midWarmuper); ok && set.Warmup >= minMidWarmup && it <= set.Warmup/2 && cr.midAt == 0 {
		return ""
	}
	if !cr.atLimit(it) {
		return ""
	}
	return cr.limitReason(it, set)
}

// saturation is the step scale from which the chain's Crank–Nicolson
// moves are the same at any larger scale: cnIndependentScale uncapped,
// else the cap (0 for a chain that moves otherwise).
func (cr *chainRunner) saturation() float64 {
	if cr.cnLimit {
		return cnIndependentScale
	}
	return cr.maxScale
}

// atLimit reports independenceLimit's condition on the adaptation after
// transition it, mid-warmup decisions aside: past Stan's initial buffer,
// no metric being estimated, the scale and its running average at the
// saturation and the mean acceptance above its target.
func (cr *chainRunner) atLimit(it int) bool {
	limit := cr.saturation()
	if !(limit > 0) || cr.win != nil || it+1 < minStopWarmup {
		return false
	}
	a := &cr.adapt
	return cr.tune.StepScale() >= limit && a.LogAvg >= math.Log(limit) && a.Hbar < 0
}

// limitReason says why warmup stops at the limit after transition it.
func (cr *chainRunner) limitReason(it int, set *Settings) string {
	limit := cr.saturation()
	what := "past its independence limit 40 (ρ < 10⁻¹⁷)"
	if !cr.cnLimit {
		what = fmt.Sprintf("at its cap %.3g (ρ = %.2g)", limit, math.Exp(-limit))
	}
	a := &cr.adapt
	return fmt.Sprintf("stopped after %d of %d warmup transitions: the Crank–Nicolson step scale (%.3g, averaged %.3g) is %s with the mean acceptance above its target %.3g, nothing left to adapt",
		it+1, set.Warmup, cr.tune.StepScale(), math.Exp(a.LogAvg), what, a.Target)
}

// earlyDecision reports whether a midWarmuper chain makes its mid-warmup
// decision (TunaMH's χ search, the comparison with full-batch MH) after
// transition it, before Warmup/2: its Crank–Nicolson scale is at its
// saturation (atLimit), so the second half of warmup would adapt nothing
// the decision depends on. Warmup then stops after the decision if the
// scale stays there (adaptWarmup); the decision is made once (midAt). A
// TunaMH-CV-CN chain near a Gaussian posterior (examples/tall's
// logreg_d200) is there within Stan's initial buffer, and would otherwise
// read the data for hundreds of warmup transitions that change nothing
// (figures/bench/default_table.txt); TestWarmupEarlyDecision checks the
// decision, the stop, resumption and the draws. The decision is not abandoned on a cancellation, as one at Warmup/2
// can be (decides): it cannot be known before the transition, and it runs
// to its end.
func (cr *chainRunner) earlyDecision(it int, set *Settings) bool {
	if _, ok := cr.ch.(midWarmuper); !ok || cr.tune == nil || cr.midAt != 0 || set.Warmup < minMidWarmup || it >= set.Warmup/2 {
		return false
	}
	return earlyMid && cr.atLimit(it)
}

// earlyMid enables earlyDecision; the test hook EarlyMidOff clears it.
var earlyMid = true

// settled returns why the warmup of a WarmupSettler chain (one with no
// step scale and no metric for the runner to adapt) stops after transition
// it, or "": its own adaptation is over (WarmupSettled) and no mid-warmup
// decision is still to come.
func settled(cr *chainRunner, it int, set *Settings) string {
	s, ok := cr.ch.(WarmupSettler)
	if !ok || cr.warmupAware == nil {
		return ""
	}
	if _, ok := cr.ch.(midWarmuper); ok && set.Warmup >= minMidWarmup && it <= set.Warmup/2 {
		return ""
	}
	if !s.WarmupSettled(it + 1) {
		return ""
	}
	return fmt.Sprintf("stopped after %d of %d warmup transitions: the kernel has no step scale or metric to adapt and its own adaptation is frozen (at least %d burn-in transitions), nothing left to adapt",
		it+1, set.Warmup, MinBurnIn)
}

// warmupStop is independenceLimit; WarmupStopMutant swaps in mutants.
var warmupStop = (*chainRunner).independenceLimit

// uncappedCN reports whether k moves by a Crank–Nicolson proposal with no
// cap on its step scale (CrankNicolson.MaxScale 0).
func uncappedCN(k Kernel) bool {
	cn, ok := cnProposal(k)
	return ok && !(cn.MaxScale > 0)
}

// minMidWarmup is the shortest warmup with a mid-warmup decision: half of
// it must remain to adapt the step for whatever was decided.
const minMidWarmup = 200

// acceptStat returns the acceptance probability of a transition if known, else
// the indicator of acceptance.
func acceptStat(info *Info) float64 {
	if p := info.AcceptProb; p >= 0 && p <= 1 {
		return p
	}
	if info.Accepted {
		return 1
	}
	return 0
}

// dualAveraging adapts log(scale) so the mean acceptance statistic approaches
// a target, by the dual-averaging scheme of Hoffman and Gelman (2014, §3.2.1)
// as Stan uses it for step sizes: γ = 0.05, t0 = 10, κ = 0.75, μ = log(10·s0).
// Its fields are its whole state and are exported so that a checkpoint
// stores it as one value.
type dualAveraging struct {
	Mu, Hbar, LogAvg, Target float64
	T                        int // updates so far
}

func (a *dualAveraging) init(s0, target float64) {
	*a = dualAveraging{Mu: math.Log(10 * s0), Target: target, LogAvg: math.Log(s0)}
}

// restart starts the adaptation afresh from scale s, keeping its target:
// what Stan does after each metric update.
func (a *dualAveraging) restart(s float64) { a.init(s, a.Target) }

// update records an acceptance statistic and returns the next scale.
func (a *dualAveraging) update(stat float64) float64 {
	const gamma, t0, kappa = 0.05, 10.0, 0.75
	a.T++
	t := float64(a.T)
	a.Hbar += (a.Target - stat - a.Hbar) / (t + t0)
	logS := a.Mu - math.Sqrt(t)/gamma*a.Hbar
	w := math.Pow(t, -kappa)
	a.LogAvg = w*logS + (1-w)*a.LogAvg
	return math.Exp(logS)
}

// final returns the averaged scale used after warmup.
func (a *dualAveraging) final() float64 { return math.Exp(a.LogAvg) }

// metricWindows is Stan's windowed estimation of the inverse metric from
// warmup draws (stan::mcmc::windowed_adaptation with its variance and
// covariance estimators): Counter counts warmup transitions; the draws
// after transitions InitBuffer … Warmup−TermBuffer−1 are collected, and
// the window ending at transition Next yields an estimate. Its fields are
// its whole state, exported so that a checkpoint stores it.
type metricWindows struct {
	Warmup, InitBuffer, TermBuffer int
	Counter, Size, Next            int // transitions seen; the current window's size and last transition
	Dense                          bool
	// Auto (Settings.Metric MetricAuto, d ≤ autoDenseMaxDim): M2 holds
	// the d×d sums and each window chooses a dense or a diagonal estimate
	// (denseWorthIt).
	Auto bool
	// Welford's running mean and sum of squared deviations (d values, or
	// d×d row-major for the dense estimate) over N draws.
	N        int
	Mean, M2 []float64

	delta []float64 // scratch
}

// newMetricWindows lays out the windows of a warmup of the given length:
// buffers of 75 and 50 transitions around windows of 25, 50, 100, …, or
// 15%/75%/10% of a warmup shorter than 150; nil (no estimation) for one
// shorter than 20.
func newMetricWindows(warmup, d int, dense, auto bool) *metricWindows {
	if warmup < 20 {
		return nil
	}
	initBuf, term, base := 75, 50, 25
	if initBuf+term+base > warmup {
		initBuf = int(0.15 * float64(warmup))
		term = int(0.1 * float64(warmup))
		base = warmup - initBuf - term
	}
	m2 := d
	if dense || auto {
		m2 = d * d
	}
	return &metricWindows{Warmup: warmup, InitBuffer: initBuf, TermBuffer: term, Size: base, Next: initBuf + base - 1,
		Dense: dense, Auto: auto, Mean: make([]float64, d), M2: make([]float64, m2)}
}

// learn records the position θ after the current warmup transition and,
// at the end of a window, returns the window's estimate of M⁻¹ (ok) and
// starts the next window afresh.
func (w *metricWindows) learn(theta []float64) (m Metric, ok bool, err error) {
	if w.Counter >= w.InitBuffer && w.Counter < w.Warmup-w.TermBuffer {
		w.add(theta)
	}
	if w.Counter == w.Next {
		w.nextWindow()
		m, err = w.estimate()
		ok = err == nil
		w.N = 0
		clear(w.Mean)
		clear(w.M2)
	}
	w.Counter++
	return m, ok, err
}

// add is Welford's update of the mean and the squared deviations.
func (w *metricWindows) add(theta []float64) {
	if w.delta == nil {
		w.delta = make([]float64, len(theta))
	}
	w.N++
	n := float64(w.N)
	for j, x := range theta {
		w.delta[j] = x - w.Mean[j]
		w.Mean[j] += w.delta[j] / n
	}
	d := len(theta)
	for i, x := range theta {
		if !w.Dense && !w.Auto {
			w.M2[i] += (x - w.Mean[i]) * w.delta[i]
			continue
		}
		for j := range d {
			w.M2[i*d+j] += (x - w.Mean[i]) * w.delta[j]
		}
	}
}

// nextWindow places the next window: twice as long as the last, unless
// the one after it would not fit before the terminal buffer, in which case
// it stretches to the terminal buffer.
func (w *metricWindows) nextWindow() {
	end := w.Warmup - w.TermBuffer - 1
	if w.Next == end {
		return
	}
	w.Size *= 2
	w.Next = w.Counter + w.Size
	if w.Next != end && w.Next+2*w.Size >= w.Warmup-w.TermBuffer {
		w.Next = end
	}
}

// estimate returns the regularised sample (co)variance of the window's
// draws, n/(n+5)·Σ̂ + 10⁻³·5/(n+5)·I.
func (w *metricWindows) estimate() (Metric, error) {
	if w.N < 2 {
		return Metric{}, fmt.Errorf("metric adaptation: a window of %d draws", w.N)
	}
	n := float64(w.N)
	shrink, reg := n/(n+5), 1e-3*5/(n+5)
	d := len(w.Mean)
	full := w.Dense || w.Auto
	if !w.Dense && !(w.Auto && w.denseWorthIt()) {
		v := make([]float64, d)
		for j := range v {
			m2 := w.M2[j]
			if full {
				m2 = w.M2[j*d+j]
			}
			v[j] = shrink*m2/(n-1) + reg
		}
		m, err := NewDiagMetric(v)
		if err != nil {
			return Metric{}, fmt.Errorf("metric adaptation (the warmup draws may be extreme: is the posterior proper?): %w", err)
		}
		return m, nil
	}
	c := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			v := shrink * (w.M2[i*d+j] + w.M2[j*d+i]) / (2 * (n - 1))
			if i == j {
				v += reg
			}
			c.SetSym(i, j, v)
		}
	}
	m, err := NewDenseMetric(c)
	if err != nil {
		return Metric{}, fmt.Errorf("metric adaptation (the warmup draws may be extreme: is the posterior proper?): %w", err)
	}
	return m, nil
}

// autoDenseMaxDim is the largest dimension in which MetricAuto considers
// a dense metric (it keeps d×d running sums during warmup).
const autoDenseMaxDim = 100

// autoDenseFactor: MetricAuto estimates a dense metric when the window's
// correlation matrix is this many times worse conditioned than a dense
// estimate's own sampling noise would leave the whitened posterior.
const autoDenseFactor = 4

// denseWorthIt decides MetricAuto's estimate for the window: dense when
// the draws' correlations would leave the diagonally whitened posterior
// badly conditioned — the condition number κ(R̂) of their correlation
// matrix above autoDenseFactor times ((1 + √(d/n))/(1 − √(d/n)))², the
// Marchenko–Pastur spread of the eigenvalues of n draws' covariance in d
// dimensions, the conditioning a dense estimate itself leaves — and the
// window has at least 10d draws. Step sizes of gradient kernels are capped
// by the narrowest whitened direction (MALA's drift overshoots it beyond
// twice its sd), so a diagonal metric on a ridge costs them a factor of
// about √κ in every step. When it says diagonal, the estimate is bit for
// bit MetricDiag's.
func (w *metricWindows) denseWorthIt() bool {
	d := len(w.Mean)
	n := float64(w.N)
	if d < 2 || n < 10*float64(d) {
		return false
	}
	r := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			c := (w.M2[i*d+j] + w.M2[j*d+i]) / 2
			den := math.Sqrt(w.M2[i*d+i] * w.M2[j*d+j])
			if !(den > 0) {
				return false
			}
			r.SetSym(i, j, c/den)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(r, false) {
		return false
	}
	ev := es.Values(nil)
	lo, hi := ev[0], ev[len(ev)-1]
	q := math.Sqrt(float64(d) / n)
	noise := (1 + q) / (1 - q)
	noise *= noise
	return !(lo > 0) || hi/lo > autoDenseFactor*noise
}

// centerInits returns a copy of s with one θ0 per chain, the centre plus
// its standard deviations times standard normal draws (dispersed at the
// posterior's scale, as R-hat needs), when s sets neither Init nor Inits;
// a draw outside the prior's support is replaced by the centre. Sample
// starts the chains of a Choice with a Center so.
func centerInits(s *Settings, center, sd []float64, p *Posterior) *Settings {
	if center == nil || s != nil && (s.Init != nil || s.Inits != nil) {
		return s
	}
	var r Settings
	if s != nil {
		r = *s
	}
	chains := cmp.Or(r.Chains, defaultChains)
	if chains < 0 || chains > MaxChains || r.FirstChain < 0 {
		return s // resolve reports it
	}
	prior := p.prior()
	r.Inits = make([][]float64, chains)
	for k := range r.Inits {
		rng := rand.New(rand.NewPCG(r.Seed, 0x6d6c63656e746572^uint64(r.FirstChain+k)))
		x := slices.Clone(center)
		for j := range x {
			x[j] += sd[j] * rng.NormFloat64()
		}
		if lp := prior.LogPrior(x); math.IsInf(lp, -1) || math.IsNaN(lp) {
			x = slices.Clone(center)
		}
		r.Inits[k] = x
	}
	return &r
}

// DefaultStarter is a Kernel with its own θ0 for chains whose Settings
// give none (Init and Inits nil), used in place of the origin: the
// multilevel kernels start from the centre they are built on, since at
// the origin a log scale's conditional is improper. DefaultStart is called
// with the chain's Target, watching the run's context (Target.RunContext).
type DefaultStarter interface {
	DefaultStart(t *Target) ([]float64, error)
}

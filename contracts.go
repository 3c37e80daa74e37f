// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The contracts between the driver (Sample, Resume, Checkpoint) and the
// kernels and recorders, in one place. A Kernel starts Chains; a Chain must
// implement Step and Position and may implement the optional interfaces
// below, which the driver discovers by type assertion. The schemes of the
// auxiliary-variable framework have their own contract, AuxScheme and
// AuxChain, in auxmcmc.go. Each kernel's file asserts at compile time the
// contracts its kernel and chain satisfy.

// Kernel is a Markov transition kernel: a configuration (step sizes, bounds,
// hyperparameters) that starts per-chain state. The same Kernel value starts
// every chain of a run, concurrently (one Target per chain), so Start must
// not modify the Kernel or anything it shares.
type Kernel interface {
	// Name identifies the kernel in tables and output files.
	Name() string
	// Exact reports whether the kernel leaves the posterior exactly
	// invariant. Inexact comparators (AustereMH, MHminibatch, MHBT, SGLD) return false.
	Exact() bool
	// Start checks that the target provides what the kernel needs (an
	// error then, never mid-run), allocates all the chain's scratch memory
	// and returns the chain positioned at θ0. The Target counts every datum
	// evaluation; the Chain must evaluate data only through it.
	Start(t *Target, theta0 []float64) (Chain, error)
}

// Chain is the state of one chain of a Kernel: its position and whatever the
// kernel carries between steps (cached energies, FlyMC's brightness,
// MHBT's batch).
type Chain interface {
	// Step advances the chain by one transition in place and reports what
	// happened. It allocates nothing. An error (a violated bound, a
	// non-finite energy) stops the chain.
	Step(rng *rand.Rand) (Info, error)
	// Position returns the current θ. The slice is owned by the chain and
	// valid until the next Step; callers must not modify it.
	Position() []float64
}

// A Chain may also implement
//
//	AbandonStep()
//
// to have long transitions cancelled midway: the driver then makes its
// Target's passes over the data, and Target.Interrupted, return
// ErrInterrupted once the run is cancelled; Step returns that error
// unchanged, the driver restores the random stream and the Target's
// counts, and AbandonStep restores whatever the Step changed of the
// chain's state, so that a checkpoint taken then resumes bit for bit.
// (The built-in kernels' chains do so through an unexported method.)

// multilevelLayout is what the non-centred form (noncentred.go) reads of
// a multilevel model's prior: its random-effect terms, θ[start + g·stride]
// for the levels g < levels with log scale θ[logTau]. It is part of
// package multilevel's Layout, the whole contract of a multilevel prior.
type multilevelLayout interface {
	NumTerms() int
	Term(t int) (factor, term string, start, stride, levels, logTau int)
}

// abandoner returns ch's AbandonStep (the built-in chains' abandonStep)
// and true if ch's transitions may be abandoned midway.
func abandoner(ch Chain) (func(), bool) {
	if si, ok := ch.(stepInterrupter); ok {
		return si.abandonStep, si.interruptible()
	}
	if a, ok := ch.(interface{ AbandonStep() }); ok {
		return a.AbandonStep, true
	}
	return nil, false
}

// WarmupAware is implemented by chains that tune their own parameters
// during warmup (TunaMH's χ). Unless Settings.NoAdapt, the driver calls
// SetWarmup(true) before the first warmup transition and SetWarmup(false)
// after the last one, once the step scale is final; from then on the chain
// must keep its parameters fixed, so that sampling is exact. A chain never
// told keeps the parameters Start chose.
type WarmupAware interface {
	SetWarmup(on bool)
}

// WarmupSettler is implemented by WarmupAware chains that adapt nothing the
// runner adapts (no step scale: not Tunable; no metric: not
// MetricAdapter) and can say when their own adaptation is over. After
// warmup transition it (0-based) the runner asks WarmupSettled(it+1), once
// at least MinBurnIn warmup transitions have run; on true it skips the
// remaining warmup transitions, calls SetWarmup(false) and records why in
// ChainResult.WarmupStop, as it does for a Crank–Nicolson proposal at its
// independence limit. The chain must then be the fixed kernel it will be
// for the draws: the rule reads counts, never clocks, so a seed still
// fixes the draws (package localgibbs's kernel;
// TestLocalGibbsWarmupSettles). Settings.Draws are made all the same.
type WarmupSettler interface {
	WarmupAware
	WarmupSettled(transitions int) bool
}

// PilotSeeder is a Kernel whose own warmup adaptation the automatic
// default carries from its winning pilot into the run it decides: the
// pilot is one chain of the kernel, warmed up and sampled, and FromPilot
// returns the kernel with that chain's adapted, frozen parameters fixed
// from the start (ok false where ch is not one of its chains past its
// warmup, or adapted nothing), so that the run's chains do not pay to
// adapt them again. Its chains' parameters are fixed throughout, so
// every draw comes from one kernel: the pilot's randomness chose it, as a
// warmup's does. Package localgibbs's kernel carries its re-centring
// shifts so (its warmup then burn-in alone, no gradient pass).
type PilotSeeder interface {
	Kernel
	FromPilot(ch Chain) (Kernel, bool)
}

// MinBurnIn is the fewest warmup transitions before a WarmupSettler chain
// may stop its warmup: twice Stan's initial buffer of 75 transitions, in
// which a chain started from a draw of a Gaussian approximation leaves it
// for the posterior's typical set.
const MinBurnIn = 150

// midWarmuper is implemented by chains that decide halfway through an
// adapted warmup (or earlier, at a saturated Crank–Nicolson scale:
// chainRunner.earlyDecision) whether another transition or other parameters would
// serve them better (TunaMH: its χ chosen by a search, or
// full-batch MH when no minibatch pays), given the warmup's totals so far.
// ownTarget says the run's target acceptance is the kernel's default, so
// the chain may choose the acceptance its new parameters are best at.
type midWarmuper interface {
	midWarmup(warmup Totals, ownTarget bool) (warmupTurn, error)
}

// finalScaler is a chain that checks the step scale warmup ends with
// (dual averaging's average of its iterates) before sampling starts and
// may lower it: where acceptance falls off a cliff past some step, as
// TunaMH-SGLD's does where its Langevin drift overshoots, iterates on both
// sides of the cliff can average to a step on it. The data it reads are
// warmup's cost.
type finalScaler interface {
	finalScale(scale float64) (float64, error)
}

// warmupTurn is a chain's mid-warmup decision: if Scale > 0, the driver
// sets the step scale to Scale and restarts its dual averaging there,
// toward Target if that is > 0 (else the run's target).
type warmupTurn struct {
	Scale, Target float64
}

// restartAt is the turn of a chain that switched (to MH, from scale) or
// did not.
func restartAt(scale float64, switched bool) warmupTurn {
	if !switched {
		return warmupTurn{}
	}
	return warmupTurn{Scale: scale}
}

// Tunable is implemented by chains whose proposal has a step scale; the
// driver adapts it during warmup toward Settings.TargetAccept.
type Tunable interface {
	StepScale() float64
	SetStepScale(s float64)
}

// MetricAdapter is implemented by chains whose moves are preconditioned by
// an inverse mass matrix (MALA, HMC, NUTS, Poisson-Barker, Poisson-MALA,
// TunaMH-SGLD). Unless Settings.NoAdapt or
// Settings.Metric is MetricUnit, the driver estimates M⁻¹ from the warmup
// draws in Stan's expanding windows and calls SetMetric at the end of each
// window (see Sample); the chain uses the new metric from its next
// transition on, and the driver never changes it after warmup, so that
// sampling is exact. SetMetric returns an error, and changes nothing, for
// a metric of the wrong dimension. Metric returns the metric in use, which
// checkpoints save and ChainResult.Metric reports.
type MetricAdapter interface {
	Metric() Metric
	SetMetric(m Metric) error
}

// AcceptTarget is implemented by kernels with their own default target
// acceptance rate, the rate warmup's dual averaging adapts the step scale
// toward when Settings.TargetAccept is 0: the rate at which the kernel
// mixes best per unit of cost, from theory (random-walk Metropolis 0.234,
// MALA 0.574, HMC 0.651) or measurement. A kernel without one gets 0.234.
type AcceptTarget interface {
	DefaultTargetAccept() float64
}

// defaultTargetAccept returns the acceptance rate Sample adapts k's step
// scale toward when Settings.TargetAccept is 0: k's own (AcceptTarget) or
// else 0.234, the optimal rate of random-walk Metropolis in high
// dimension (Roberts, Gelman and Gilks 1997).
func defaultTargetAccept(k Kernel) float64 {
	if a, ok := k.(AcceptTarget); ok {
		if r := a.DefaultTargetAccept(); r > 0 && r < 1 {
			return r
		}
	}
	return 0.234
}

// ParamReporter is implemented by chains that report their (tuned)
// parameters, which Sample stores in ChainResult.Params.
type ParamReporter interface {
	Params() map[string]float64
}

// Checkpointer is implemented by chains whose state beyond their position
// can be saved, which Result.Checkpoint needs. A chain is restored by
// starting its kernel at the saved position and then calling UnmarshalState
// with what MarshalState returned; values that Start recomputes from the
// position (cached energies, gradients) need not be saved. Every built-in
// kernel implements it.
type Checkpointer interface {
	MarshalState() ([]byte, error)
	UnmarshalState(b []byte) error
}

// Recorder observes a run. It must not modify anything it is given, and it
// never draws random numbers, so recording cannot change the draws. Record is
// called from the chains' goroutines concurrently (with distinct Chain
// values), so implementations must be safe for that. An error stops the run.
type Recorder interface {
	Init(run RunInfo) error
	Record(e *Event) error
}

// RunFinisher is implemented by Recorders that want to know when a run
// ends (to write a trailer, flush, close files). Sample calls Finish once,
// after every chain has stopped, with the Result it is about to return.
type RunFinisher interface {
	Finish(res *Result) error
}

// ResumeRecorder is a Recorder that continues its output when a run is
// resumed, in this process or after LoadCheckpoint in another. Resume calls
// InitResume — in place of Init, which is then not called again — before
// the first transition it runs, with the run's RunInfo (Draws and Steps as
// extended by Resume, StartTime set back by the run's elapsed time) and the
// Result so far, whose draws, infos and totals are what the recorder has
// seen, or would have seen, of the run. Progress and stancsv.Recorder
// implement it.
type ResumeRecorder interface {
	Recorder
	InitResume(run RunInfo, res *Result) error
}

// Sentinel errors for a capability a kernel needs and the posterior lacks,
// or a posterior it cannot sample; test for them with errors.Is.
var (
	// ErrNoGradient: the kernel needs ∇U_i and ∇log prior, but the energy
	// does not implement Gradienter or the prior PriorGradienter.
	ErrNoGradient = errors.New("needs gradients")
	// ErrNoBound: the kernel needs a bound (DiffBound, EnergyRange,
	// FlyBound or Taylor remainder bounds) that neither the kernel's
	// configuration nor the energy provides.
	ErrNoBound = errors.New("no bound")
	// ErrIntractable: a kernel other than Exchange was given a posterior
	// whose Energy is an IntractableLikelihood.
	ErrIntractable = errors.New("the likelihood is doubly intractable (f_θ(x)/Z(θ), Z(θ) unknown)")
	// ErrInterrupted: a Target's pass over the data was abandoned because
	// the run was cancelled mid-transition (Target.Interrupted); a chain's
	// Step returns it and its AbandonStep undoes the transition (Chain).
	ErrInterrupted = errInterrupted
)

// requireGradient returns an error wrapping ErrNoGradient, naming what is
// missing, unless the target has gradients.
func (t *Target) requireGradient() error {
	switch {
	case t.grad == nil:
		return fmt.Errorf("%w: energy %T implements neither Gradienter nor GLM", ErrNoGradient, t.Energy())
	case t.pgrad == nil:
		return fmt.Errorf("%w: prior %T does not implement PriorGradienter", ErrNoGradient, t.Prior())
	}
	return nil
}

// driverChain is what the driver needs of every built-in chain: a Chain
// whose step scale it adapts and whose state it can checkpoint.
type driverChain interface {
	Chain
	Tunable
	Checkpointer
}

// schemeChain is what every built-in scheme chain of the framework
// provides beyond AuxChain.
type schemeChain interface {
	Checkpointer
	ParamReporter
}

// within prefixes another layer's error with who, dropping the package
// prefix that an exported function put on it: the API boundary adds
// "exactmh: " once. errors.Is and errors.As still see the original.
func within(who string, err error) error {
	if err == nil {
		return nil
	}
	return &innerError{who: who, err: err}
}

type innerError struct {
	who string
	err error
}

func (e *innerError) Error() string {
	return e.who + ": " + strings.TrimPrefix(e.err.Error(), "exactmh: ")
}
func (e *innerError) Unwrap() error { return e.err }

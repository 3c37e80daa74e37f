// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Aux is the auxiliary-variable MCMC framework (the paper that unifies the
// exchange algorithm, PoissonMH and TunaMH as auxiliary-variable methods,
// Algorithm 4)
// as a Kernel. Each transition
//
//  1. draws ω1 ~ P_θ (it may drive the proposal: a minibatch for a
//     gradient estimate);
//
//  2. proposes θ′ ~ q_{ω1}(θ, ·);
//
//  3. draws ω2 ~ P_{θ,θ′}(· | ω1) (it drives the ratio estimate);
//
//  4. accepts with probability a(r) — min(1, r) unless Accept says
//     otherwise (footnote 1, Prop. 10: any a with a(t) = t·a(1/t)) —
//
//     r = Π(θ′)P_{θ′,θ}(ω1, ω2)·q_{ω1}(θ′, θ) / (Π(θ)P_{θ,θ′}(ω1, ω2)·q_{ω1}(θ, θ′)),
//
// which leaves the posterior Π exactly invariant (Prop. 2) while the
// likelihood ratio inside r is computed from a few data only: the
// auxiliary densities are designed so that the expensive part cancels.
// PoissonMH and TunaMH are Case 1 (no ω1), Poisson-Barker and
// Poisson-MALA Case 2 (ω2 = ω1, Poisson counts reused for the gradient and
// the ratio), TunaMH-SGLD Case 3 (independent ω1, ω2).
//
// W1 and W2 are the types of ω1 and ω2 — typically pointers to storage the
// scheme's chain owns, so that a step allocates nothing. The prior ratio is
// applied exactly by Aux; the scheme supplies everything else through
// AuxChain.
type Aux[W1, W2 any] struct {
	// Scheme defines the auxiliary variables, the proposal and the ratio.
	Scheme AuxScheme[W1, W2]
	// Scale is the proposal's initial step scale (0: 0.1); warmup adapts
	// it unless Settings.NoAdapt.
	Scale float64
	// Accept is the acceptance function a(r) (zero value: AcceptMetropolis,
	// min(1, r)).
	Accept Acceptance
}

// Acceptance is the function a(r) with which a framework kernel (Aux and
// the kernels built on it: TunaMH, PoissonMH, Exchange) accepts θ′ given
// its ratio r. Step 7 of Algorithm 4 accepts with min(1, r); footnote 1
// and Prop. 10 of the auxiliary-variable framework paper show that any
// a : [0, ∞) → [0, 1] with a(t) = t·a(1/t) keeps the chain reversible with
// respect to the posterior, because then Π(θ)P(ω)q·a(r) is symmetric in
// the move and its reverse, whose ratio is 1/r. By Peskun's ordering
// min(1, r) is the most efficient such a; Barker's r/(1 + r) accepts less
// often (but at least half as often: r/(1 + r) ≥ ½·min(1, r)) and is
// offered for comparison and for schemes whose analysis assumes it.
type Acceptance int

const (
	// AcceptMetropolis is a(r) = min(1, r), the Metropolis–Hastings rule
	// (the default).
	AcceptMetropolis Acceptance = iota
	// AcceptBarker is a(r) = r/(1 + r), Barker's (1965) rule.
	AcceptBarker
)

// String returns "Metropolis" or "Barker".
func (a Acceptance) String() string {
	switch a {
	case AcceptMetropolis:
		return "Metropolis"
	case AcceptBarker:
		return "Barker"
	}
	return fmt.Sprintf("Acceptance(%d)", int(a))
}

// Prob returns a(r) for r = e^{logR}: min(1, r) or r/(1 + r), in a form
// that neither overflows nor loses accuracy for large |log r|. It returns
// NaN for an unknown Acceptance or a NaN logR.
func (a Acceptance) Prob(logR float64) float64 {
	switch a {
	case AcceptMetropolis:
		return math.Exp(min(logR, 0))
	case AcceptBarker:
		// r/(1 + r) = 1/(1 + e^{−log r}) = e^{log r}/(1 + e^{log r}).
		if logR > 0 {
			return 1 / (1 + math.Exp(-logR))
		}
		e := math.Exp(logR)
		return e / (1 + e)
	}
	return math.NaN()
}

// check returns an error for an Acceptance that is not one of the
// constants.
func (a Acceptance) check(who string) error {
	if a != AcceptMetropolis && a != AcceptBarker {
		return fmt.Errorf("%s: unknown Acceptance %d (want AcceptMetropolis or AcceptBarker)", who, int(a))
	}
	return nil
}

// nameWith returns the kernel's name with a non-default acceptance
// function appended: "TunaMH" or "TunaMH (Barker)".
func (a Acceptance) nameWith(name string) string {
	if a == AcceptMetropolis {
		return name
	}
	return name + " (" + a.String() + ")"
}

// AuxScheme is one algorithm of the framework.
type AuxScheme[W1, W2 any] interface {
	// Name identifies the kernel.
	Name() string
	// Start checks the target and returns the per-chain state, with all its
	// scratch memory.
	Start(t *Target, theta0 []float64) (AuxChain[W1, W2], error)
}

// AuxChain is the per-chain part of an AuxScheme: the steps of Algorithm 4.
// theta, next and the ω values passed in are owned by the caller and valid
// for the transition.
type AuxChain[W1, W2 any] interface {
	// DrawOmega1 draws ω1 ~ P_θ (step 3).
	DrawOmega1(rng *rand.Rand, theta []float64) (W1, error)
	// Propose draws θ′ ~ q_{ω1}(θ, ·) into next (step 4) and returns
	// log q_{ω1}(θ′, θ) − log q_{ω1}(θ, θ′) when the proposal alone knows it
	// (a random walk); a scheme whose proposal ratio needs state at θ′ (a
	// gradient there) returns 0 and includes the ratio in LogRatio.
	Propose(rng *rand.Rand, next, theta []float64, w1 W1, scale float64) (logQ float64, err error)
	// DrawOmega2 draws ω2 ~ P_{θ,θ′}(· | ω1) (step 5). It is called only for
	// θ′ in the prior's support.
	DrawOmega2(rng *rand.Rand, theta, next []float64, w1 W1) (W2, error)
	// LogRatio returns log r without the prior ratio (step 6):
	// log[L(θ′)P_{θ′,θ}(ω1, ω2)q_{ω1}(θ′, θ)] − log[L(θ)P_{θ,θ′}(ω1, ω2)q_{ω1}(θ, θ′)],
	// L the likelihood — without the proposal ratio if Propose returned it.
	LogRatio(theta, next []float64, w1 W1, w2 W2, scale float64) (float64, error)
	// Report returns info with the scheme's cost fields (Batch, Distinct,
	// Fallback) filled in for the transition just made. It is also called
	// when θ′ fell outside the prior's support, right after Propose and
	// without DrawOmega2: report only what Propose and DrawOmega1 read then.
	// (By value: a pointer would make every Info escape to the heap.)
	Report(info Info) Info
}

// Name returns the scheme's name ("Aux(nil Scheme)" for the zero value,
// which Start refuses), followed by " (Barker)" with AcceptBarker.
func (k Aux[W1, W2]) Name() string {
	if k.Scheme == nil {
		return "Aux(nil Scheme)"
	}
	return k.Accept.nameWith(k.Scheme.Name())
}

// Exact reports whether the chain is exact: true, as every scheme that
// follows Algorithm 4 is (Prop. 2), unless the scheme has an Exact method
// saying otherwise (an approximate ratio, for comparison).
func (k Aux[W1, W2]) Exact() bool {
	if e, ok := k.Scheme.(interface{ Exact() bool }); ok {
		return e.Exact()
	}
	return true
}

// DefaultTargetAccept returns the scheme's default target acceptance rate
// if it has one (AcceptTarget), else 0.234.
func (k Aux[W1, W2]) DefaultTargetAccept() float64 {
	if a, ok := k.Scheme.(AcceptTarget); ok {
		return a.DefaultTargetAccept()
	}
	return 0.234
}

// Start starts the scheme's chain.
func (k Aux[W1, W2]) Start(t *Target, theta0 []float64) (Chain, error) {
	if k.Scheme == nil {
		return nil, errors.New("exactmh: Aux.Scheme is nil: set it to the scheme to run (a zero Aux has none)")
	}
	return startAux(k.Scheme, k.Scale, k.Accept, t, theta0)
}

// startAux is Aux.Start, shared with the named kernels built on the
// framework. Only a scheme that samples doubly-intractable targets
// (intractableScheme: the exchange algorithm) may run on a posterior whose
// Energy is an IntractableLikelihood.
func startAux[W1, W2 any](s AuxScheme[W1, W2], scale float64, acc Acceptance, t *Target, theta0 []float64) (Chain, error) {
	name := acc.nameWith(s.Name())
	if err := acc.check(name); err != nil {
		return nil, err
	}
	var w walk
	var err error
	if _, ok := s.(intractableScheme); ok {
		w, err = newWalkAny(name, t, nil, false, scale, theta0)
	} else {
		w, err = newWalk(name, t, nil, false, scale, theta0)
	}
	if err != nil {
		return nil, err
	}
	ch, err := s.Start(t, theta0)
	if err != nil {
		return nil, err
	}
	return &auxChain[W1, W2]{walk: w, scheme: ch, acc: acc}, nil
}

// auxChain runs an AuxChain: the walk holds θ, θ′ and the scale, applies
// the prior exactly and accepts; the scheme does the rest.

type auxChain[W1, W2 any] struct {
	walk
	scheme AuxChain[W1, W2]
	acc    Acceptance // a(r): min(1, r) unless AcceptBarker
}

// Params passes on the scheme's parameters, if it reports any, with
// "barker" = 1 when the chain accepts with Barker's a(r) = r/(1 + r).
func (c *auxChain[W1, W2]) Params() map[string]float64 {
	var p map[string]float64
	if r, ok := c.scheme.(ParamReporter); ok {
		p = r.Params()
	}
	if c.acc == AcceptBarker {
		if p == nil {
			p = map[string]float64{}
		}
		p["barker"] = 1
	}
	return p
}

// SetWarmup passes the warmup signal on to schemes that tune themselves.
func (c *auxChain[W1, W2]) SetWarmup(on bool) {
	if w, ok := c.scheme.(WarmupAware); ok {
		w.SetWarmup(on)
	}
}

// midWarmup passes the mid-warmup decision on to schemes that make one.
func (c *auxChain[W1, W2]) midWarmup(warmup Totals, ownTarget bool) (warmupTurn, error) {
	if w, ok := c.scheme.(midWarmuper); ok {
		return w.midWarmup(warmup, ownTarget)
	}
	return warmupTurn{}, nil
}

// finalScale passes the check of warmup's final step on to schemes that
// make one.
func (c *auxChain[W1, W2]) finalScale(scale float64) (float64, error) {
	if f, ok := c.scheme.(finalScaler); ok {
		return f.finalScale(scale)
	}
	return scale, nil
}

// inWarmup passes on whether the scheme's state is in warmup mode.
func (c *auxChain[W1, W2]) inWarmup() bool {
	w, ok := c.scheme.(warmupReporter)
	return ok && w.inWarmup()
}

// fullMemo is the scheme's memo of full-batch steps if it keeps one (its
// fallbacks), else the walk's.
func (c *auxChain[W1, W2]) fullMemo() *fullEnergies {
	if m, ok := c.scheme.(fullMemoer); ok {
		return m.fullMemo()
	}
	return &c.walk.full
}

// MarshalState saves the scheme's state, if it has any.
func (c *auxChain[W1, W2]) MarshalState() ([]byte, error) {
	if k, ok := c.scheme.(Checkpointer); ok {
		return k.MarshalState()
	}
	return nil, fmt.Errorf("the %s scheme's chain (%T) does not implement Checkpointer", c.name, c.scheme)
}

// UnmarshalState restores the scheme's state.
func (c *auxChain[W1, W2]) UnmarshalState(b []byte) error {
	if k, ok := c.scheme.(Checkpointer); ok {
		return k.UnmarshalState(b)
	}
	return fmt.Errorf("the %s scheme's chain (%T) does not implement Checkpointer", c.name, c.scheme)
}

// Step makes one transition of Algorithm 4.
func (c *auxChain[W1, W2]) Step(rng *rand.Rand) (Info, error) {
	info := Info{LogDensity: math.NaN()}
	// ω1 ~ P_θ, then θ′ ~ q_{ω1}(θ, ·); the prior is exact and rejects
	// outside its support before ω2 is drawn.
	w1, err := c.scheme.DrawOmega1(rng, c.theta)
	if err != nil {
		return Info{}, err
	}
	logQ, err := c.scheme.Propose(rng, c.next, c.theta, w1, c.scale)
	if err != nil {
		return Info{}, err
	}
	logExact, ok := c.exactPart(logQ)
	if !ok {
		return c.scheme.Report(info), nil
	}
	// ω2 ~ P_{θ,θ′}(· | ω1) and the scheme's estimate of the rest of log r.
	w2, err := c.scheme.DrawOmega2(rng, c.theta, c.next, w1)
	if err != nil {
		return Info{}, err
	}
	logR, err := c.scheme.LogRatio(c.theta, c.next, w1, w2, c.scale)
	if err != nil {
		return Info{}, err
	}
	// Accept with probability a(r): min(1, r) or Barker's r/(1 + r).
	if c.acc == AcceptMetropolis {
		return c.accept(rng, logExact+logR, c.scheme.Report(info))
	}
	return c.acceptBy(rng, c.acc, logExact+logR, c.scheme.Report(info))
}

// interruptible reports whether the scheme's transitions may be abandoned
// midway (a built-in scheme that implements stepInterrupter: its
// whole-data passes, as a fallback step's, return errInterrupted once the
// run is cancelled); a user's scheme may not be.
func (c *auxChain[W1, W2]) interruptible() bool {
	si, ok := c.scheme.(stepInterrupter)
	return ok && si.interruptible()
}

// abandonStep puts back what the scheme changed in an abandoned
// transition; the walk's θ changes only on acceptance, after every pass.
func (c *auxChain[W1, W2]) abandonStep() { c.scheme.(stepInterrupter).abandonStep() }

// acceptBy is walk.accept with the acceptance function a: it accepts θ′
// with probability a(e^{logR}). (Metropolis chains call walk.accept
// itself, whose draws are pinned by the golden tests.)
func (w *walk) acceptBy(rng *rand.Rand, a Acceptance, logR float64, info Info) (Info, error) {
	if math.IsNaN(logR) {
		return Info{}, fmt.Errorf("log acceptance ratio is NaN at θ = %v, θ′ = %v", w.theta, w.next)
	}
	info.AcceptProb = a.Prob(logR)
	if rng.Float64() < info.AcceptProb {
		copy(w.theta, w.next)
		info.Accepted = true
	}
	return info, nil
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel        = Aux[struct{}, struct{}]{}
	_ AcceptTarget  = Aux[struct{}, struct{}]{}
	_ driverChain   = (*auxChain[struct{}, struct{}])(nil)
	_ ParamReporter = (*auxChain[struct{}, struct{}])(nil)
	_ WarmupAware   = (*auxChain[struct{}, struct{}])(nil)
	_ midWarmuper   = (*auxChain[struct{}, struct{}])(nil)

	_ stepInterrupter = (*auxChain[struct{}, struct{}])(nil)
)

// The capabilities Aux declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k Aux[W1, W2]) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k Aux[W1, W2]) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

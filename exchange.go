// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DoublyIntractable is a model whose likelihood is known only up to a
// θ-dependent normaliser, p_θ(x) = f_θ(x)/Z(θ) with Z(θ) = Σ_x f_θ(x)
// (or ∫) intractable — an Ising or Potts model, an exponential random
// graph, a spatial point process — but which can be simulated exactly:
// the "promise" of the exchange algorithm (Murray, Ghahramani and MacKay
// 2006; Algorithm 1 of the auxiliary-variable framework paper). D is the
// type of one data set (the observed data and each synthetic one),
// typically a pointer to storage that Simulate overwrites.
//
// Its posterior p(θ)f_θ(x)/Z(θ) cannot be written as an Energy: an Energy
// that returned −log f_θ(x) would silently drop Z(θ), and every
// Metropolis–Hastings-type kernel would then sample the wrong
// distribution. So a DoublyIntractable model enters a Posterior only
// wrapped in IntractableLikelihood, which every kernel but Exchange
// refuses at Start.
//
// A model is shared by the chains of a run, which call it concurrently:
// UnnormLogLik and Simulate must not modify the model (Simulate writes
// only into dst, which belongs to one chain).
type DoublyIntractable[D any] interface {
	// Dim returns the dimension of θ.
	Dim() int
	// Observed returns the observed data x. The kernel only reads it.
	Observed() D
	// NewData returns storage for one synthetic data set, with any
	// scratch memory Simulate needs, so that Simulate allocates nothing.
	// It is called once per chain, at Start.
	NewData() D
	// UnnormLogLik returns log f_θ(x), the log of the unnormalised
	// likelihood of data set x at θ (−Inf where f_θ(x) = 0).
	UnnormLogLik(theta []float64, x D) float64
	// Simulate overwrites dst with an exact draw ω ~ p_θ. θ is in the
	// prior's support.
	Simulate(rng *rand.Rand, theta []float64, dst D) error
}

// IntractableLikelihood wraps a DoublyIntractable model as a Posterior's
// Energy, so that Sample can run Exchange on
//
//	&Posterior{Energy: IntractableLikelihood[D]{Model: m}, Prior: prior}
//
// It is an Energy in type only: it has one datum (the data set x) and no
// energy — Energies sets every value to NaN, so that any kernel that
// evaluated it anyway would stop with an EnergyError — and every kernel
// other than Exchange refuses it at Start, naming it. Tempering (β ≠ 1)
// is refused too: the exchange algorithm has no simulator for
// (f_θ/Z(θ))^β.
type IntractableLikelihood[D any] struct {
	Model DoublyIntractable[D]
}

// Len returns 1: the data set x is one datum.
func (e IntractableLikelihood[D]) Len() int { return 1 }

// Dim returns the model's dimension.
func (e IntractableLikelihood[D]) Dim() int {
	if e.Model == nil {
		return 0
	}
	return e.Model.Dim()
}

// Energies sets every dst[k] to NaN: −log p_θ(x) = Z(θ) − log f_θ(x) is
// unknown.
func (e IntractableLikelihood[D]) Energies(dst, _ []float64, idx []int) {
	for k := range idx {
		dst[k] = math.NaN()
	}
}

// intractable marks IntractableLikelihood for refuseIntractable.
func (e IntractableLikelihood[D]) intractable() string {
	return fmt.Sprintf("IntractableLikelihood[%T]", e.Model)
}

// intractableEnergy is implemented by IntractableLikelihood of every D.
type intractableEnergy interface{ intractable() string }

// refuseIntractable returns an error wrapping ErrIntractable if t's energy
// is an IntractableLikelihood: the kernel name would compute a ratio
// without Z(θ′)/Z(θ) and sample the wrong distribution.
func refuseIntractable(name string, t *Target) error {
	e, ok := t.Energy().(intractableEnergy)
	if !ok {
		return nil
	}
	return fmt.Errorf("%s: %w: the posterior's Energy is %s, which only the Exchange kernel samples",
		name, ErrIntractable, e.intractable())
}

// intractableScheme is implemented by AuxSchemes that sample
// doubly-intractable targets: startAux lets them start on an
// IntractableLikelihood.
type intractableScheme interface{ samplesIntractable() }

// Exchange is the exchange algorithm of Murray, Ghahramani and MacKay
// (2006) for doubly-intractable posteriors p(θ)f_θ(x)/Z(θ), as Algorithm 1
// and Example 1 of the auxiliary-variable framework paper present it: an
// instance of the framework (Aux, Case 1: no ω1, ω2 = ω). Each transition
//
//  1. proposes θ′ ~ q(θ, ·);
//
//  2. simulates a synthetic data set ω ~ p_θ′ = f_θ′/Z(θ′) exactly
//     (DoublyIntractable.Simulate);
//
//  3. computes
//
//     r = p(θ′)f_θ′(x)f_θ(ω)·q(θ′, θ) / (p(θ)f_θ(x)f_θ′(ω)·q(θ, θ′)),
//
//     in which the unknown Z(θ′)/Z(θ) cancels against the density of ω;
//
//  4. accepts with probability a(r) (min(1, r) by default).
//
// The chain is exactly reversible with respect to the posterior (Prop. 1
// with P_{θ→θ′} = p_θ′). Its spectral gap is at least
// (1 − sup d_TV(p_θ, p_θ′)) times that of the ideal MH chain that knew
// Z(θ) (Prop. 4): the exchange chain mixes well when the proposal moves
// between parameters whose data distributions overlap.
//
// The posterior must be &Posterior{Energy: IntractableLikelihood[D]{m},
// Prior: p} with β = 1; D is the model's data type. Info.Batch is 1 (one
// synthetic data set per step). The model's evaluations are not counted by
// the Target (they are not per-datum energies): Totals.Evals stays 0.
type Exchange[D any] struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
	// Accept is the acceptance function (zero value: AcceptMetropolis).
	Accept Acceptance

	// Test hook (export_test.go), nil in every real kernel: the parameter
	// the synthetic data are simulated at, given θ and θ′ (nil: θ′).
	simAt func(theta, next []float64) []float64
}

// Name returns "Exchange", or "Exchange (Barker)" with AcceptBarker.
func (k Exchange[D]) Name() string { return k.Accept.nameWith("Exchange") }

// Exact returns true.
func (Exchange[D]) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's rate.
func (Exchange[D]) DefaultTargetAccept() float64 { return 0.234 }

// Start checks that the posterior is an untempered IntractableLikelihood
// of data type D and allocates the chain's synthetic data set.
func (k Exchange[D]) Start(t *Target, theta0 []float64) (Chain, error) {
	name := k.Accept.nameWith("Exchange")
	e, ok := t.Energy().(IntractableLikelihood[D])
	if !ok {
		var d D
		return nil, fmt.Errorf("%s: the posterior's Energy is %T, want IntractableLikelihood[%T]: the exchange algorithm samples doubly-intractable models", name, t.Energy(), d)
	}
	if e.Model == nil {
		return nil, fmt.Errorf("%s: IntractableLikelihood.Model is nil", name)
	}
	if t.Beta() != 1 {
		return nil, fmt.Errorf("%s: β = %v: a doubly-intractable likelihood cannot be tempered (no simulator for (f_θ/Z(θ))^β)", name, t.Beta())
	}
	return startAux[struct{}, D](exchangeScheme[D]{k: k, model: e.Model}, k.Scale, k.Accept, t, theta0)
}

// exchangeScheme is the exchange algorithm as an AuxScheme.
type exchangeScheme[D any] struct {
	k     Exchange[D]
	model DoublyIntractable[D]
}

func (exchangeScheme[D]) samplesIntractable() {}

// Name returns "Exchange".
func (s exchangeScheme[D]) Name() string { return "Exchange" }

// Start checks the proposal's dimension and allocates ω.
func (s exchangeScheme[D]) Start(t *Target, theta0 []float64) (AuxChain[struct{}, D], error) {
	prop := s.k.Proposal
	if prop == nil {
		prop = RandomWalk{}
	}
	if p, ok := prop.(interface{ checkDim(int) error }); ok {
		if err := p.checkDim(t.Dim()); err != nil {
			return nil, fmt.Errorf("Exchange: %w", err)
		}
	}
	if l := s.model.UnnormLogLik(theta0, s.model.Observed()); math.IsNaN(l) || math.IsInf(l, 1) {
		return nil, fmt.Errorf("Exchange: log f_θ0(x) = %v at θ0 = %v, want finite or −Inf", l, theta0)
	}
	simAt := s.k.simAt
	if simAt == nil {
		simAt = func(_, next []float64) []float64 { return next }
	}
	return &exchangeChain[D]{model: s.model, x: s.model.Observed(), omega: s.model.NewData(), prop: prop, simAt: simAt}, nil
}

// exchangeChain is one chain's part of the exchange algorithm: the
// proposal, the observed data and the chain's synthetic data set.
type exchangeChain[D any] struct {
	noState
	model DoublyIntractable[D]
	x     D // the observed data
	omega D // ω, overwritten every step
	prop  Proposal
	simAt func(theta, next []float64) []float64
	sims  int // synthetic data sets drawn this step (0 or 1)
}

// Params reports nothing: the exchange algorithm has no parameter beyond
// the proposal's scale.
func (c *exchangeChain[D]) Params() map[string]float64 { return nil }

// DrawOmega1 draws nothing (Case 1).
func (c *exchangeChain[D]) DrawOmega1(*rand.Rand, []float64) (struct{}, error) {
	return struct{}{}, nil
}

// Propose draws θ′ ~ q(θ, ·) (Algorithm 1, step 4).
func (c *exchangeChain[D]) Propose(rng *rand.Rand, next, theta []float64, _ struct{}, scale float64) (float64, error) {
	return c.prop.Propose(rng, next, theta, scale), nil
}

// DrawOmega2 simulates ω ~ p_θ′ (step 5).
func (c *exchangeChain[D]) DrawOmega2(rng *rand.Rand, theta, next []float64, _ struct{}) (D, error) {
	c.sims = 1
	if err := c.model.Simulate(rng, c.simAt(theta, next), c.omega); err != nil {
		return c.omega, fmt.Errorf("simulating at θ′ = %v: %w", next, err)
	}
	return c.omega, nil
}

// LogRatio returns log[f_θ′(x)f_θ(ω)/(f_θ(x)f_θ′(ω))] (step 6; the prior
// and proposal ratios are applied by Aux).
func (c *exchangeChain[D]) LogRatio(theta, next []float64, _ struct{}, omega D, _ float64) (float64, error) {
	lxNew := c.model.UnnormLogLik(next, c.x)
	lxOld := c.model.UnnormLogLik(theta, c.x)
	lwOld := c.model.UnnormLogLik(theta, omega)
	lwNew := c.model.UnnormLogLik(next, omega)
	// ω ~ p_θ′ has f_θ′(ω) > 0; a −Inf here is a simulator bug.
	if math.IsInf(lwNew, -1) || math.IsNaN(lwNew) {
		return 0, fmt.Errorf("log f_θ′(ω) = %v for the data simulated at θ′ = %v", lwNew, next)
	}
	switch {
	case math.IsInf(lxNew, -1) || math.IsInf(lwOld, -1):
		return math.Inf(-1), nil // f_θ′(x)f_θ(ω) = 0: reject
	case math.IsInf(lxOld, -1):
		return 0, fmt.Errorf("log f_θ(x) = −Inf at the chain's θ = %v", theta)
	}
	return (lxNew - lxOld) + (lwOld - lwNew), nil
}

// Report gives one synthetic data set per step; none when θ′ left the
// support.
func (c *exchangeChain[D]) Report(info Info) Info {
	info.Batch, c.sims = c.sims, 0
	return info
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel                     = Exchange[struct{}]{}
	_ AcceptTarget               = Exchange[struct{}]{}
	_ AuxScheme[struct{}, []int] = exchangeScheme[[]int]{}
	_ intractableScheme          = exchangeScheme[[]int]{}
	_ AuxChain[struct{}, []int]  = (*exchangeChain[[]int])(nil)
	_ schemeChain                = (*exchangeChain[[]int])(nil)
)

// The capabilities Exchange declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k Exchange[D]) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k Exchange[D]) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k Exchange[D]) Proposer() Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k Exchange[D]) WithProposal(p Proposal) Kernel {
	k.Proposal = p
	return k
}

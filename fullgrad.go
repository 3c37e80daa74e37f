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

// Full-batch gradient kernels: MALA and HMC, the exact gradient-based
// baselines the auxiliary-variable paper compares its minibatch kernels
// with. Both read all N data for every gradient.

// MALA is the full-batch Metropolis-adjusted Langevin algorithm. With step
// scale σ (Scale) it proposes
//
//	θ′ = θ + (σ²/2)·∇log π(θ) + σ·ξ,  ξ ~ N(0, I),
//
// and accepts with the exact MH ratio, the proposal densities evaluated with
// the gradient at each end. (The reference code of the auxiliary-variable
// paper writes θ′ = θ + h²∇log π + √2·h·ξ: its h is σ/√2.) The energy must
// implement Gradienter and the prior PriorGradienter. A step costs N energy
// and N gradient evaluations; the gradient at the current state is cached.
type MALA struct {
	// Scale is σ, the proposal's noise standard deviation (0: 0.1); warmup
	// adapts it unless Settings.NoAdapt.
	Scale float64

	mutation int // test hook: a deliberately wrong variant (export_test.go)
}

// Name returns "MALA".
func (MALA) Name() string { return "MALA" }

// Exact returns true.
func (MALA) Exact() bool { return true }

// Start evaluates log π and its gradient at θ0.
func (k MALA) Start(t *Target, theta0 []float64) (Chain, error) {
	scale := k.Scale
	if scale == 0 {
		scale = 0.1
	}
	if err := checkScale("MALA", scale); err != nil {
		return nil, err
	}
	g, err := newGradState(t, theta0, "MALA")
	if err != nil {
		return nil, err
	}
	return &malaChain{k: k, gradState: g, scale: scale}, nil
}

// gradState is the state shared by the full-gradient chains: θ with its
// log density and gradient, and the same at a proposal.
type gradState struct {
	t                 *Target
	theta, next       []float64
	logPi, logPiNext  float64
	grad, gradNext    []float64
	momentum, scratch []float64
}

func newGradState(t *Target, theta0 []float64, who string) (gradState, error) {
	if err := checkStart(t, theta0); err != nil {
		return gradState{}, err
	}
	if !t.HasGradient() {
		return gradState{}, fmt.Errorf("%s needs gradients: energy %T must implement Gradienter and prior %T PriorGradienter", who, t.Energy(), t.Prior())
	}
	d := t.Dim()
	g := gradState{t: t, theta: slices.Clone(theta0), next: make([]float64, d), grad: make([]float64, d),
		gradNext: make([]float64, d), momentum: make([]float64, d), scratch: make([]float64, d)}
	lp, err := g.eval(g.grad, theta0)
	if err != nil {
		return gradState{}, err
	}
	if math.IsInf(lp, -1) {
		return gradState{}, fmt.Errorf("%s: θ0 = %v outside the prior's support", who, theta0)
	}
	g.logPi = lp
	return g, nil
}

// eval returns log π(θ) = log prior(θ) − βΣU_i(θ) and sets grad = ∇log π(θ),
// reading every datum once (EnergyGradienter) or twice; outside the support
// it returns −Inf and touches no data.
func (g *gradState) eval(grad, theta []float64) (float64, error) {
	lp := g.t.LogPrior(theta)
	if math.IsInf(lp, -1) {
		return lp, nil
	}
	clear(grad)
	u, err := g.t.TotalEnergyAndGradient(grad, theta)
	if err != nil {
		return 0, err
	}
	for j := range grad {
		grad[j] = -grad[j]
	}
	return lp - u, g.t.AddLogPriorGradient(grad, theta)
}

// gradient sets grad = ∇log prior(θ) − β Σ_i ∇U_i(θ).
func (g *gradState) gradient(grad, theta []float64) error {
	clear(grad)
	if err := g.t.addFullGradient(grad, theta); err != nil {
		return err
	}
	for j := range grad {
		grad[j] = -grad[j]
	}
	return g.t.AddLogPriorGradient(grad, theta)
}

// acceptNext makes the proposal the state.
func (g *gradState) acceptNext() {
	copy(g.theta, g.next)
	copy(g.grad, g.gradNext)
	g.logPi = g.logPiNext
}

type malaChain struct {
	k MALA
	gradState
	scale float64
}

func (c *malaChain) Position() []float64    { return c.theta }
func (c *malaChain) StepScale() float64     { return c.scale }
func (c *malaChain) SetStepScale(s float64) { c.scale = s }

// logQ returns log N(to; from + (σ²/2)g, σ²I) up to a constant.
func (c *malaChain) logQ(to, from, g []float64) float64 {
	h := c.scale * c.scale / 2
	var s float64
	for j := range to {
		r := to[j] - from[j] - h*g[j]
		s += r * r
	}
	return -s / (2 * c.scale * c.scale)
}

// Step makes one MALA transition.
func (c *malaChain) Step(rng *rand.Rand) (Info, error) {
	info := Info{LogDensity: c.logPi, Batch: c.t.N()}
	h := c.scale * c.scale / 2
	for j := range c.theta {
		c.next[j] = c.theta[j] + h*c.grad[j] + c.scale*rng.NormFloat64()
	}
	lp, err := c.eval(c.gradNext, c.next)
	if err != nil {
		return Info{}, err
	}
	if math.IsInf(lp, -1) {
		return info, nil
	}
	c.logPiNext = lp
	reverse := c.gradNext
	if c.k.mutation == malaMutationStaleReverse {
		reverse = c.grad // the reverse move with θ's gradient: wrong
	}
	logA := lp - c.logPi + c.logQ(c.theta, c.next, reverse) - c.logQ(c.next, c.theta, c.grad)
	if math.IsNaN(logA) {
		return Info{}, fmt.Errorf("MALA: log acceptance ratio is NaN at θ = %v, θ′ = %v", c.theta, c.next)
	}
	info.AcceptProb = math.Exp(min(logA, 0))
	if logA >= 0 || rng.Float64() < info.AcceptProb {
		c.acceptNext()
		info.Accepted, info.LogDensity = true, c.logPi
	}
	return info, nil
}

// HMC is full-batch Hamiltonian Monte Carlo with an identity mass matrix:
// momentum p ~ N(0, I), Steps leapfrog steps of size ε (Scale), each
// half-kick with the gradient at the current position (fresh gradients:
// the integrator is then reversible and volume-preserving, which the MH
// correction needs), accepted with the exact change in the Hamiltonian
// −log π(θ) + ½‖p‖². A trajectory that leaves the prior's support is
// rejected there. A step costs Steps·N gradient and N energy evaluations.
type HMC struct {
	// Scale is the leapfrog step size ε (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
	// Steps is the number of leapfrog steps per transition (0: 10).
	Steps int
	// Jitter, in [0, 1), draws each transition's step size uniformly from
	// ε·(1 ± Jitter): with a fixed trajectory length, periodic orbits can
	// bring trajectories back near their start and stall the chain, which
	// jitter breaks (0: no jitter, the reference code's behaviour).
	Jitter float64

	mutation int // test hook: a deliberately wrong variant (export_test.go)
}

// Name returns "HMC".
func (HMC) Name() string { return "HMC" }

// Exact returns true.
func (HMC) Exact() bool { return true }

// Start evaluates log π and its gradient at θ0.
func (k HMC) Start(t *Target, theta0 []float64) (Chain, error) {
	scale := k.Scale
	if scale == 0 {
		scale = 0.1
	}
	if err := checkScale("HMC", scale); err != nil {
		return nil, err
	}
	steps := k.Steps
	if steps == 0 {
		steps = 10
	}
	if steps < 0 {
		return nil, fmt.Errorf("HMC: Steps = %d, want > 0", k.Steps)
	}
	if !(k.Jitter >= 0 && k.Jitter < 1) {
		return nil, fmt.Errorf("HMC: Jitter = %v, want in [0, 1)", k.Jitter)
	}
	g, err := newGradState(t, theta0, "HMC")
	if err != nil {
		return nil, err
	}
	return &hmcChain{k: k, gradState: g, scale: scale, steps: steps}, nil
}

type hmcChain struct {
	k HMC
	gradState
	scale float64
	steps int
}

func (c *hmcChain) Position() []float64    { return c.theta }
func (c *hmcChain) StepScale() float64     { return c.scale }
func (c *hmcChain) SetStepScale(s float64) { c.scale = s }

// Params reports the number of leapfrog steps.
func (c *hmcChain) Params() map[string]float64 { return map[string]float64{"steps": float64(c.steps)} }

// leapfrog integrates (θ, p) = (c.next, c.momentum) for c.steps steps of
// size eps from the gradient c.gradNext at c.next, leaving the gradient at
// the end in c.gradNext and log π there in c.logPiNext (the last gradient
// and the energy in one read of the data). It returns false if the path
// left the support.
func (c *hmcChain) leapfrog(eps float64) (bool, error) {
	p, th, g := c.momentum, c.next, c.gradNext
	for j := range p {
		p[j] += eps / 2 * g[j]
	}
	for l := range c.steps {
		for j := range th {
			th[j] += eps * p[j]
		}
		if math.IsInf(c.t.LogPrior(th), -1) {
			return false, nil
		}
		switch {
		case l == c.steps-1:
			lp, err := c.eval(g, th)
			if err != nil {
				return false, err
			}
			c.logPiNext = lp
		case c.k.mutation != hmcMutationStaleGradient:
			if err := c.gradient(g, th); err != nil {
				return false, err
			}
		}
		kick := eps
		if l == c.steps-1 {
			kick = eps / 2
		}
		for j := range p {
			p[j] += kick * g[j]
		}
	}
	return true, nil
}

// Step makes one HMC transition.
func (c *hmcChain) Step(rng *rand.Rand) (Info, error) {
	info := Info{LogDensity: c.logPi, Batch: c.t.N()}
	var k0 float64
	for j := range c.momentum {
		v := rng.NormFloat64()
		c.momentum[j] = v
		k0 += v * v / 2
	}
	copy(c.next, c.theta)
	copy(c.gradNext, c.grad)
	eps := c.scale
	if c.k.Jitter > 0 {
		eps *= 1 + c.k.Jitter*(2*rng.Float64()-1)
	}
	inside, err := c.leapfrog(eps)
	if err != nil {
		return Info{}, err
	}
	if !inside {
		return info, nil
	}
	var k1 float64
	for _, v := range c.momentum {
		k1 += v * v / 2
	}
	logA := (c.logPiNext - k1) - (c.logPi - k0)
	if math.IsNaN(logA) {
		return Info{}, fmt.Errorf("HMC: log acceptance ratio is NaN at θ = %v, θ′ = %v", c.theta, c.next)
	}
	info.AcceptProb = math.Exp(min(logA, 0))
	if logA >= 0 || rng.Float64() < info.AcceptProb {
		c.acceptNext()
		info.Accepted, info.LogDensity = true, c.logPi
	}
	return info, nil
}

// Test hooks: deliberately wrong variants that the exactness tests must
// catch.
const (
	malaMutationNone = iota
	malaMutationStaleReverse
)

const (
	hmcMutationNone = iota
	hmcMutationStaleGradient
)

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// HMC is full-batch Hamiltonian Monte Carlo (Duane et al. 1987; Neal 2011)
// with inverse mass matrix M⁻¹ (Metric): momentum p ~ N(0, M), Steps
// leapfrog steps of size ε (Scale), each half-kick with the gradient at the
// current position (fresh gradients: the integrator is then reversible and
// volume-preserving, which the MH correction needs) and each drift
// θ += ε·M⁻¹p, accepted with the exact change in the Hamiltonian
// −log π(θ) + ½pᵀM⁻¹p. A step costs Steps·N gradient and N energy
// evaluations.
//
// A trajectory that leaves the prior's support, or reaches a position
// whose energy or gradient is not finite (zero density there: a Poisson
// rate e^η past η ≈ 709), is rejected there; it and a trajectory whose
// energy error H − H(z₀) exceeds MaxDeltaH are divergent (Info.Divergent,
// as NUTS's; TestLeapfrogOverflowDiverges).
//
// As for MALA, leapfrog is stable only for ε below twice the narrowest
// posterior sd in the metric's units, which a diagonal metric leaves small
// on a correlated posterior; but the momentum carries a trajectory about
// Steps·ε along the long directions, so HMC suffers less from it (on the
// tempered mixture of examples/tall, ρ = −0.96, 0.3–0.6 effective draws per
// transition with either a diagonal or a dense metric, N = 10⁴).
type HMC struct {
	// Scale is the leapfrog step size ε (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
	// Metric is M⁻¹ (zero value: the identity). Warmup replaces it with
	// one estimated from the warmup draws unless Settings.Metric is
	// MetricUnit (or NoAdapt).
	Metric Metric
	// Steps is the number of leapfrog steps per transition (0: 10).
	Steps int
	// MaxDeltaH is the energy error beyond which a trajectory is reported
	// divergent (0: 1000, as NUTS's); it changes no draw.
	MaxDeltaH float64
	// Jitter, in [0, 1), draws each transition's step size uniformly from
	// ε·(1 ± Jitter): with a fixed trajectory length, periodic orbits can
	// bring trajectories back near their start and stall the chain, which
	// jitter breaks (0: no jitter, the reference code's behaviour).
	Jitter float64
	// NonCentred makes the chain move in the non-centred parametrisation
	// of a multilevel posterior, as NUTS.NonCentred.
	NonCentred bool

	// Test hooks (export_test.go), nil in every real kernel: sets g to the
	// gradient at an inner leapfrog position (nil: gradWalk.gradient);
	// with NonCentred, leave the Jacobian out.
	refresh      func(c *hmcChain, g, theta []float64) error
	ncNoJacobian bool
}

// Name returns "HMC".
func (HMC) Name() string { return "HMC" }

// Exact returns true.
func (HMC) Exact() bool { return true }

// DefaultTargetAccept returns 0.65, near the optimal acceptance rate 0.651
// of HMC in high dimension (Beskos, Pillai, Roberts, Sanz-Serna and Stuart
// 2013).
func (HMC) DefaultTargetAccept() float64 { return 0.65 }

// Start evaluates log π and its gradient at θ0.
func (k HMC) Start(t *Target, theta0 []float64) (Chain, error) {
	steps := k.Steps
	if steps == 0 {
		steps = 10
	}
	if steps < 0 {
		return nil, fmt.Errorf("HMC: Steps = %d, want > 0", k.Steps)
	}
	maxDeltaH := k.MaxDeltaH
	if maxDeltaH == 0 {
		maxDeltaH = 1000
	}
	if !(maxDeltaH > 0) {
		return nil, fmt.Errorf("HMC: MaxDeltaH = %v, want > 0 (0 means 1000)", k.MaxDeltaH)
	}
	if !(k.Jitter >= 0 && k.Jitter < 1) {
		return nil, fmt.Errorf("HMC: Jitter = %v, want in [0, 1)", k.Jitter)
	}
	g, err := newGradWalkOn("HMC", t, k.Scale, k.Metric, theta0, k.NonCentred, k.ncNoJacobian)
	if err != nil {
		return nil, err
	}
	c := &hmcChain{k: k, gradWalk: g, steps: steps, maxDeltaH: maxDeltaH, refresh: k.refresh, velocity: make([]float64, t.Dim())}
	if c.refresh == nil {
		c.refresh = func(c *hmcChain, g, theta []float64) error { return c.gradient(g, theta) }
	}
	return c, nil
}

type hmcChain struct {
	k HMC
	gradWalk
	steps     int
	maxDeltaH float64
	refresh   func(c *hmcChain, g, theta []float64) error
	velocity  []float64 // M⁻¹p
}

// MarshalState saves nothing for a centred chain; a non-centred one saves
// its position in φ (gradWalk.marshalState).
func (c *hmcChain) MarshalState() ([]byte, error) { return c.marshalState() }

// UnmarshalState restores what MarshalState saved.
func (c *hmcChain) UnmarshalState(b []byte) error { return c.unmarshalState(b) }

// Params reports the number of leapfrog steps and the divergence threshold.
func (c *hmcChain) Params() map[string]float64 {
	return map[string]float64{"steps": float64(c.steps), "max_delta_h": c.maxDeltaH}
}

// leapfrog integrates (θ, p) = (c.next, c.momentum) for c.steps steps of
// size eps from the gradient c.gradNext at c.next, leaving the gradient at
// the end in c.gradNext and log π there in c.logPiNext (the last gradient
// and the energy in one read of the data). It returns false if the path
// left the support or reached a non-finite energy or gradient (zero
// density: evalStep).
func (c *hmcChain) leapfrog(eps float64) (bool, error) {
	p, th, g := c.momentum, c.next, c.gradNext
	for j := range p {
		p[j] += eps / 2 * g[j]
	}
	for l := range c.steps {
		c.metric.MulInvMass(c.velocity, p)
		for j := range th {
			th[j] += eps * c.velocity[j]
		}
		if math.IsInf(c.logPrior(th), -1) {
			return false, nil
		}
		switch {
		case l == c.steps-1:
			lp, err := c.evalStep(g, th)
			if err != nil {
				return false, err
			}
			if math.IsInf(lp, -1) {
				return false, nil
			}
			c.logPiNext = lp
		default:
			if err := c.refresh(c, g, th); err != nil {
				if isNonFinite(err) {
					return false, nil
				}
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
	info := Info{LogDensity: c.logDensity(), Batch: c.t.N()}
	c.metric.DrawMomentum(rng, c.momentum)
	k0 := c.metric.KineticEnergy(c.momentum)
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
		info.Divergent = true
		return info, nil
	}
	k1 := c.metric.KineticEnergy(c.momentum)
	logA := (c.logPiNext - k1) - (c.logPi - k0)
	info.Divergent = !(-logA <= c.maxDeltaH)
	return c.accept(rng, logA, info)
}

// An HMC transition changes the chain only after its last leapfrog step.
func (c *hmcChain) interruptible() bool { return true }
func (c *hmcChain) abandonStep()        {}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel        = HMC{}
	_ AcceptTarget  = HMC{}
	_ driverChain   = (*hmcChain)(nil)
	_ MetricAdapter = (*hmcChain)(nil)
	_ ParamReporter = (*hmcChain)(nil)

	_ stepInterrupter = (*hmcChain)(nil)
)

// The capabilities HMC declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k HMC) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k HMC) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// WithSteps returns k with Steps n (the leapfrog steps per transition).
func (k HMC) WithSteps(n int) Kernel {
	k.Steps = n
	return k
}

// WithNonCentred returns k with NonCentred on.
func (k HMC) WithNonCentred(on bool) Kernel {
	k.NonCentred = on
	return k
}

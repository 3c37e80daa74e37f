// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MALA is a full-batch gradient kernel, an exact baseline the
// auxiliary-variable paper compares its minibatch kernels with; it reads all
// N data for every gradient. gradWalk, the state it shares with HMC, is
// here too.

// MALA is the full-batch Metropolis-adjusted Langevin algorithm. With step
// scale σ (Scale) and inverse mass matrix M⁻¹ (Metric) it proposes
//
//	θ′ = θ + (σ²/2)·M⁻¹∇log π(θ) + σ·ξ,  ξ ~ N(0, M⁻¹),
//
// (Roberts and Tweedie 1996; preconditioned, Roberts and Stramer 2002) and
// accepts with the exact MH ratio, the proposal densities evaluated with
// the gradient at each end. (The reference code of the auxiliary-variable
// paper writes θ′ = θ + h²∇log π + √2·h·ξ with M⁻¹ = I: its h is σ/√2.)
// The energy must implement Gradienter and the prior PriorGradienter. A
// step costs N energy and N gradient evaluations, in one read of the data
// if the energy implements EnergyGradienter (else two); the gradient at
// the current state is cached.
//
// The metric matters more to MALA than to a random walk. The drift is an
// explicit Euler step of the Langevin diffusion, which overshoots along any
// direction whose posterior sd, in the metric's units, is below σ/2: past
// that the acceptance falls roughly like (sd/σ)³, a random walk's like
// sd/σ. So MALA's mean squared jump peaks near σ = 2·sd of the narrowest
// whitened direction, and its step along every other direction is capped
// there, where a random walk's keeps growing with its step. On a correlated
// posterior a diagonal metric, which scales the marginal sds to 1, leaves
// that sd at √(1 − |ρ|) (two coordinates with correlation ρ). On
// examples/tall's tempered mixture, a ridge with ρ = −0.96 (sd 0.2), MALA
// with the diagonal metric made 0.004–0.011 effective draws per transition
// to MH's 0.016–0.021 (N = 10⁴, four data sets), and with Settings.Metric =
// MetricDense, which whitens the ridge, 0.12–0.23
// (TestMALADiagonalMetricOnRidge, TestMALATemperedMixture).
type MALA struct {
	// Scale is σ, the proposal's noise standard deviation (0: 0.1); warmup
	// adapts it unless Settings.NoAdapt.
	Scale float64
	// Metric is M⁻¹ (zero value: the identity). Warmup replaces it with
	// one estimated from the warmup draws unless Settings.Metric is
	// MetricUnit (or NoAdapt).
	Metric Metric

	// Test hook (export_test.go), nil in every real kernel: the gradient
	// the reverse proposal density is evaluated with, from those at θ and
	// θ′ (nil: the one at θ′).
	reverse func(g, gNew []float64) []float64
}

// Name returns "MALA".
func (MALA) Name() string { return "MALA" }

// Exact returns true.
func (MALA) Exact() bool { return true }

// DefaultTargetAccept returns 0.574, the optimal acceptance rate of MALA
// in high dimension (Roberts and Rosenthal 1998).
func (MALA) DefaultTargetAccept() float64 { return 0.574 }

// Start evaluates log π and its gradient at θ0.
func (k MALA) Start(t *Target, theta0 []float64) (Chain, error) {
	g, err := newGradWalk("MALA", t, k.Scale, k.Metric, theta0)
	if err != nil {
		return nil, err
	}
	d := t.Dim()
	c := &malaChain{gradWalk: g, reverse: k.reverse, drift: make([]float64, d), resid: make([]float64, d)}
	if c.reverse == nil {
		c.reverse = func(_, gNew []float64) []float64 { return gNew }
	}
	return c, nil
}

// gradWalk is the state shared by the full-gradient chains (MALA, HMC,
// NUTS): the walk with the log density and its gradient at θ, the same at
// θ′, and the metric.
type gradWalk struct {
	walk
	logPi, logPiNext float64
	grad, gradNext   []float64
	momentum         []float64 // HMC's p
	metric           Metric
	// nc, if not nil, makes the chain move in the non-centred φ of a
	// multilevel posterior (noncentred.go): θ, next, grad and logPi are
	// then φ's, log π_φ's and its gradient's.
	nc *nonCentring
}

// newGradWalk checks that the target has gradients and that the metric
// fits, and evaluates log π and its gradient at θ0.
func newGradWalk(who string, t *Target, scale float64, m Metric, theta0 []float64) (gradWalk, error) {
	return newGradWalkOn(who, t, scale, m, theta0, false, false)
}

// newGradWalkOn is newGradWalk, in the non-centred parametrisation of a
// multilevel posterior if nonCentred (noJacobian: the test mutant that
// drops its Jacobian); θ0 is centred.
func newGradWalkOn(who string, t *Target, scale float64, m Metric, theta0 []float64, nonCentred, noJacobian bool) (gradWalk, error) {
	w, err := newWalk(who, t, nil, false, scale, theta0)
	if err != nil {
		return gradWalk{}, err
	}
	if err := t.requireGradient(); err != nil {
		return gradWalk{}, fmt.Errorf("%s %w", who, err)
	}
	d := t.Dim()
	if err := m.check(d); err != nil {
		return gradWalk{}, fmt.Errorf("%s: %w", who, err)
	}
	g := gradWalk{walk: w, grad: make([]float64, d), gradNext: make([]float64, d), momentum: make([]float64, d), metric: m}
	if nonCentred {
		if g.nc, err = newNonCentring(who, t, noJacobian); err != nil {
			return gradWalk{}, err
		}
		g.nc.working(g.theta, theta0)
		copy(g.nc.pos, theta0)
		copy(g.nc.posPhi, g.theta)
	}
	lp, err := g.eval(g.grad, g.theta)
	if err != nil {
		return gradWalk{}, err
	}
	if math.IsInf(lp, -1) {
		return gradWalk{}, fmt.Errorf("%s: θ0 = %v outside the prior's support", who, theta0)
	}
	g.logPi = lp
	return g, nil
}

// eval returns log π(θ) = log prior(θ) − βΣU_i(θ) and sets grad = ∇log π(θ),
// reading every datum once (EnergyGradienter) or twice; outside the support
// it returns −Inf and touches no data. For a non-centred chain θ is φ and
// π is π_φ (nonCentring.eval).
func (g *gradWalk) eval(grad, theta []float64) (float64, error) {
	if g.nc != nil {
		return g.nc.eval(g, grad, theta)
	}
	return g.evalAt(grad, theta)
}

// evalStep is eval at a leapfrog position of NUTS or HMC: a non-finite
// energy, energy sum or gradient there (isNonFinite — a Poisson rate e^η
// past η ≈ 709, say) is zero density, −Inf, which the trajectory counts as
// a divergence, not an error. The target is the same but for the points
// where its density is not representable. Start's θ0 still uses eval, so a
// non-finite start stays an error.
func (g *gradWalk) evalStep(grad, theta []float64) (float64, error) {
	lp, err := g.eval(grad, theta)
	if err != nil && isNonFinite(err) {
		return math.Inf(-1), nil
	}
	return lp, err
}

// evalAt is eval in the centred θ.
func (g *gradWalk) evalAt(grad, theta []float64) (float64, error) {
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

// gradient sets grad = ∇log prior(θ) − β Σ_i ∇U_i(θ) (for a non-centred
// chain, ∇log π_φ(φ)).
func (g *gradWalk) gradient(grad, theta []float64) error {
	if g.nc != nil {
		return g.nc.gradient(g, grad, theta)
	}
	return g.gradientAt(grad, theta)
}

// gradientAt is gradient in the centred θ.
func (g *gradWalk) gradientAt(grad, theta []float64) error {
	clear(grad)
	if err := g.t.addFullGradient(grad, theta); err != nil {
		return err
	}
	for j := range grad {
		grad[j] = -grad[j]
	}
	return g.t.AddLogPriorGradient(grad, theta)
}

// Metric returns the chain's inverse mass matrix.
func (g *gradWalk) Metric() Metric { return g.metric }

// SetMetric replaces the inverse mass matrix (warmup's metric adaptation).
func (g *gradWalk) SetMetric(m Metric) error {
	if g.metric.kind == extMetric { // NewMetric's: rescaled to warmup's variances if it can be
		if r, ok := g.metric.ext.(interface{ Rescale(v []float64) MetricOps }); ok && m.kind != unitMetric && m.d == g.metric.d {
			g.metric.ext = r.Rescale(m.InvMassDiag())
		}
		return nil
	}
	if err := m.check(g.t.Dim()); err != nil {
		return fmt.Errorf("%s: %w", g.name, err)
	}
	g.metric = m
	return nil
}

// accept accepts θ′ with probability min(1, e^{logR}) (walk.accept) and
// then takes its log density and gradient along; info.LogDensity is log π
// at the chain's position after the step.
func (g *gradWalk) accept(rng *rand.Rand, logR float64, info Info) (Info, error) {
	info, err := g.walk.accept(rng, logR, info)
	if info.Accepted {
		copy(g.grad, g.gradNext)
		g.logPi = g.logPiNext
		info.LogDensity = g.logDensity()
	}
	return info, err
}

type malaChain struct {
	gradWalk
	noState
	reverse      func(g, gNew []float64) []float64
	drift, resid []float64 // M⁻¹∇log π; the noise, then θ′ − μ
}

// logProposal returns log N(to; from + (σ²/2)M⁻¹g, σ²M⁻¹) up to a
// constant.
func (c *malaChain) logProposal(to, from, g []float64) float64 {
	h := c.scale * c.scale / 2
	c.metric.MulInvMass(c.drift, g)
	for j := range to {
		c.resid[j] = to[j] - from[j] - h*c.drift[j]
	}
	return -c.metric.MassNorm(c.resid) / (2 * c.scale * c.scale)
}

// Step makes one MALA transition.
func (c *malaChain) Step(rng *rand.Rand) (Info, error) {
	info := Info{LogDensity: c.logPi, Batch: c.t.N()}
	// 1. The Langevin proposal from the gradient at θ.
	h := c.scale * c.scale / 2
	c.metric.MulInvMass(c.drift, c.grad)
	c.metric.DrawNoise(rng, c.resid)
	for j := range c.theta {
		c.next[j] = c.theta[j] + h*c.drift[j] + c.scale*c.resid[j]
	}
	// 2. log π and its gradient at θ′, in one read of the data.
	lp, err := c.eval(c.gradNext, c.next)
	if err != nil {
		return Info{}, err
	}
	if math.IsInf(lp, -1) {
		return info, nil
	}
	c.logPiNext = lp
	// 3. Accept with the exact ratio, each proposal density with the
	// gradient at its own start.
	reverse := c.reverse(c.grad, c.gradNext)
	logA := lp - c.logPi + c.logProposal(c.theta, c.next, reverse) - c.logProposal(c.next, c.theta, c.grad)
	return c.accept(rng, logA, info)
}

// A MALA transition changes the chain only after its one pass over the
// data.
func (c *malaChain) interruptible() bool { return true }
func (c *malaChain) abandonStep()        {}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel        = MALA{}
	_ AcceptTarget  = MALA{}
	_ driverChain   = (*malaChain)(nil)
	_ MetricAdapter = (*malaChain)(nil)

	_ stepInterrupter = (*malaChain)(nil)
)

// The capabilities MALA declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k MALA) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k MALA) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

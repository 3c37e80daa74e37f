// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/logit"
)

// PoissonBarker is the locally balanced PoissonMH of the auxiliary-variable
// paper (Algorithm 5 with the Barker proposal; Case 2 of Aux): the Poisson
// counts s drawn at θ as in PoissonMH estimate the gradient of log π,
//
//	g(θ) = ∇log prior(θ) + Σ_i s_i ∇φ_i(θ)/(λM_i/L + φ_i(θ)),
//
// which drives a Barker proposal — per coordinate z ~ N(0, h²), moved by +z
// with probability 1/(1 + e^{−z g_j}) and by −z otherwise — and the same
// counts, evaluated at θ′, give both the reverse proposal's gradient and
// PoissonMH's ratio estimate. It needs an EnergyRange (like PoissonMH) and
// gradients (Gradienter, PriorGradienter). Scale is h. It is exact.
//
// With a Metric M⁻¹ = LLᵀ the proposal is made in the whitened coordinates
// ζ = L⁻¹θ, where the target's gradient is Lᵀg (the preconditioned Barker
// proposal of Livingstone and Zanella 2022, §4, for a dense L): per
// coordinate of ζ the move is ±z with probability 1/(1 + e^{∓z(Lᵀg)_j}),
// and θ′ = θ + LΔζ. The linear map's Jacobian cancels in the ratio, so
// q(θ, θ′) ∝ Π_j σ(Δζ_j(Lᵀg(θ))_j) with Δζ = L⁻¹(θ′ − θ). For a diagonal
// metric Δζ_j(Lᵀg)_j = (θ′_j − θ_j)g_j: only the increments' scales change.
type PoissonBarker struct {
	// Scale is h, the standard deviation of the Barker increments (0: 0.1).
	Scale float64
	// LambdaScale, Lambda, Range, MaxBatch and TrustBound are as in
	// PoissonMH. A falling-back chain is the full-batch Barker chain, its
	// gradient and ratio from all N data.
	LambdaScale, Lambda float64
	Range               *EnergyRange
	MaxBatch            float64
	TrustBound          bool
	// Metric is M⁻¹ (zero value: the identity). Warmup replaces it with
	// one estimated from the warmup draws unless Settings.Metric is
	// MetricUnit (or NoAdapt), as for MALA.
	Metric Metric

	// Test hook (export_test.go), nil in every real kernel: the log
	// proposal ratio (nil: poissonGradChain.logProposalRatio).
	proposalRatio func(c *poissonGradChain, theta, next, gRev []float64, scale float64) float64
}

// Name returns "Poisson-Barker".
func (PoissonBarker) Name() string { return "Poisson-Barker" }

// Exact returns true.
func (PoissonBarker) Exact() bool { return true }

// DefaultTargetAccept returns 0.5, between random-walk Metropolis's 0.234
// and MALA's 0.574 (the auxiliary-variable paper tunes Barker-type kernels
// to 0.55); TestTargetAcceptSweep (go test -run TestTargetAcceptSweep -sweep
// Poisson-Barker -v .) measures bulk ESS per datum evaluation across target
// rates.
func (PoissonBarker) DefaultTargetAccept() float64 { return 0.5 }

// Start builds the counts and the gradient scratch.
func (k PoissonBarker) Start(t *Target, theta0 []float64) (Chain, error) {
	return startMetricAux[*poissonCounts, *poissonCounts](poissonGradScheme{name: k.Name(), barker: true,
		lambda: k.Lambda, lambdaScale: k.LambdaScale, maxBatch: k.MaxBatch, energyRange: k.Range, metric: k.Metric,
		proposalRatio: k.proposalRatio}, k.Scale, t, theta0, k.TrustBound)
}

// PoissonMALA is Algorithm 5 of the auxiliary-variable paper with a
// Langevin proposal: with the same Poisson-count gradient estimate g as
// PoissonBarker and the Metric M⁻¹,
//
//	θ′ = θ + (σ²/2)M⁻¹g(θ) + σξ,  ξ ~ N(0, M⁻¹),
//
// and the reverse density, N(θ; θ′ + (σ²/2)M⁻¹g(θ′), σ²M⁻¹), uses g(θ′)
// from the same counts: log q(θ′, θ) − log q(θ, θ′) =
// (‖θ′ − θ − (σ²/2)M⁻¹g(θ)‖²_M − ‖θ − θ′ − (σ²/2)M⁻¹g(θ′)‖²_M)/(2σ²), the
// norms ‖r‖²_M = rᵀMr (Metric.MassNorm). Scale is σ, as for MALA (the
// paper's code writes θ + h²g + √2hξ with M⁻¹ = I: h = σ/√2). It is exact.
type PoissonMALA struct {
	// Scale is σ, the noise standard deviation (0: 0.1).
	Scale float64
	// LambdaScale, Lambda, Range, MaxBatch and TrustBound are as in
	// PoissonMH. A falling-back chain is full-batch MALA.
	LambdaScale, Lambda float64
	Range               *EnergyRange
	MaxBatch            float64
	TrustBound          bool
	// Metric is M⁻¹ (zero value: the identity), adapted by warmup as for
	// MALA.
	Metric Metric

	// Test hooks (export_test.go), nil in every real kernel: the gradient
	// the reverse proposal is evaluated with, from those at θ and θ′ (nil:
	// the one at θ′), and the log proposal ratio (nil:
	// poissonGradChain.logProposalRatio).
	reverse       func(g, gNew []float64) []float64
	proposalRatio func(c *poissonGradChain, theta, next, gRev []float64, scale float64) float64
}

// Name returns "Poisson-MALA".
func (PoissonMALA) Name() string { return "Poisson-MALA" }

// Exact returns true.
func (PoissonMALA) Exact() bool { return true }

// DefaultTargetAccept returns 0.574, MALA's optimal rate (Roberts and
// Rosenthal 1998); TestTargetAcceptSweep (go test -run TestTargetAcceptSweep
// -sweep Poisson-MALA -v .) measures bulk ESS per datum evaluation across
// target rates.
func (PoissonMALA) DefaultTargetAccept() float64 { return 0.574 }

// Start builds the counts and the gradient scratch.
func (k PoissonMALA) Start(t *Target, theta0 []float64) (Chain, error) {
	return startMetricAux[*poissonCounts, *poissonCounts](poissonGradScheme{name: k.Name(),
		lambda: k.Lambda, lambdaScale: k.LambdaScale, maxBatch: k.MaxBatch, energyRange: k.Range, metric: k.Metric,
		reverse: k.reverse, proposalRatio: k.proposalRatio}, k.Scale, t, theta0, k.TrustBound)
}

// metricAux is the driver's view of a framework chain whose scheme is
// preconditioned by a Metric (Poisson-Barker, Poisson-MALA, TunaMH-SGLD):
// the auxChain, with the scheme's MetricAdapter passed on, so that warmup
// adapts the metric and checkpoints save it as for MALA.
type metricAux[W1, W2 any] struct {
	*auxChain[W1, W2]
	ma MetricAdapter // the scheme's chain
}

// Metric returns the scheme's inverse mass matrix.
func (c *metricAux[W1, W2]) Metric() Metric { return c.ma.Metric() }

// SetMetric replaces it (warmup's metric adaptation, LoadCheckpoint).
func (c *metricAux[W1, W2]) SetMetric(m Metric) error { return c.ma.SetMetric(m) }

// startMetricAux is startAux for a scheme whose chain is a MetricAdapter.
func startMetricAux[W1, W2 any](s AuxScheme[W1, W2], scale float64, t *Target, theta0 []float64, trust bool) (Chain, error) {
	ch, err := startAux(s, scale, AcceptMetropolis, t, theta0)
	if err != nil {
		return nil, err
	}
	ac := ch.(*auxChain[W1, W2])
	// The bound audit every minibatch kernel's Start makes (audit.go), with
	// the scheme's check and the framework chain's walk for the points.
	if a, ok := ac.scheme.(auditor); ok {
		key, check := a.auditCheck()
		if err := ac.walk.audit(trust, key, check); err != nil {
			return nil, err
		}
	}
	return &metricAux[W1, W2]{auxChain: ac, ma: ac.scheme.(MetricAdapter)}, nil
}

// auditor is a framework chain whose bound the Start audit checks.
type auditor interface {
	// auditCheck returns the check and its key for walk.audit.
	auditCheck() (string, auditCheck)
}

// auditCheck checks the counts' range (PoissonMH's check).
func (c *poissonGradChain) auditCheck() (string, auditCheck) {
	return c.counts.auditKey(), perPoint(c.counts.audit)
}

// poissonGradScheme is the AuxScheme behind PoissonBarker and PoissonMALA:
// ω1 = ω2 = the Poisson counts at θ.
type poissonGradScheme struct {
	name                          string
	barker                        bool
	lambda, lambdaScale, maxBatch float64
	energyRange                   *EnergyRange
	metric                        Metric
	// The test hooks of PoissonBarker and PoissonMALA (nil: the real ones).
	proposalRatio func(c *poissonGradChain, theta, next, gRev []float64, scale float64) float64
	reverse       func(g, gNew []float64) []float64
}

func (s poissonGradScheme) Name() string { return s.name }

func (s poissonGradScheme) Start(t *Target, theta0 []float64) (AuxChain[*poissonCounts, *poissonCounts], error) {
	if err := t.requireGradient(); err != nil {
		return nil, fmt.Errorf("%s %w", s.name, err)
	}
	d := t.Dim()
	if err := s.metric.check(d); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	counts, err := newPoissonCounts(s.name, t, s.energyRange, s.lambda, s.lambdaScale, s.maxBatch, nil, nil)
	if err != nil {
		return nil, err
	}
	c := &poissonGradChain{s: s, t: t, counts: counts, metric: s.metric, g: make([]float64, d), gNew: make([]float64, d),
		drift: make([]float64, d), r1: make([]float64, d), r2: make([]float64, d), r3: make([]float64, d),
		proposalRatio: s.proposalRatio, reverse: s.reverse}
	if c.proposalRatio == nil {
		c.proposalRatio = (*poissonGradChain).logProposalRatio
	}
	if c.reverse == nil {
		c.reverse = func(_, gNew []float64) []float64 { return gNew }
	}
	return c, nil
}

type poissonGradChain struct {
	noState
	s             poissonGradScheme
	t             *Target
	counts        *poissonCounts
	metric        Metric
	g, gNew       []float64 // the count gradient at θ and at θ′
	drift         []float64 // M⁻¹g (Langevin)
	r1, r2, r3    []float64 // scratch: residuals, whitened increments and gradients
	energy        float64   // βΣU_i(θ) in a fallback step
	proposalRatio func(c *poissonGradChain, theta, next, gRev []float64, scale float64) float64
	reverse       func(g, gNew []float64) []float64
}

func (c *poissonGradChain) Params() map[string]float64 { return c.counts.params() }

// fullMemo is the memo of the fallback steps, saved with checkpoints.
func (c *poissonGradChain) fullMemo() *fullEnergies { return &c.counts.full }

// Metric returns the chain's inverse mass matrix.
func (c *poissonGradChain) Metric() Metric { return c.metric }

// SetMetric replaces the inverse mass matrix (warmup's metric adaptation).
func (c *poissonGradChain) SetMetric(m Metric) error {
	if err := m.check(c.t.Dim()); err != nil {
		return fmt.Errorf("%s: %w", c.s.name, err)
	}
	c.metric = m
	return nil
}

// gradient sets g = ∇log prior(θ) + Σ_kept ∇φ_i(θ)/(a_i + φ_i(θ)).
func (c *poissonGradChain) gradient(g, theta, phi []float64) error {
	clear(g)
	if err := c.counts.addGradient(g, theta, phi); err != nil {
		return err
	}
	return c.t.AddLogPriorGradient(g, theta)
}

// fullGradient sets g = ∇log π(θ) from all N data and returns βΣU_i(θ),
// for a falling-back chain (one read of the data).
func (c *poissonGradChain) fullGradient(g, theta []float64) (float64, error) {
	clear(g)
	u, err := c.t.TotalEnergyAndGradient(g, theta)
	if err != nil {
		return 0, err
	}
	for j := range g {
		g[j] = -g[j]
	}
	return u, c.t.AddLogPriorGradient(g, theta)
}

// DrawOmega1 draws the counts at θ and their gradient estimate there (in a
// falling-back chain: the full gradient).
func (c *poissonGradChain) DrawOmega1(rng *rand.Rand, theta []float64) (*poissonCounts, error) {
	if c.counts.fallback {
		n := c.t.N()
		c.counts.batch, c.counts.seen.Count = n, n
		var err error
		c.energy, err = c.fullGradient(c.g, theta)
		return c.counts, err
	}
	if err := c.counts.draw(rng, theta); err != nil {
		return nil, err
	}
	return c.counts, c.gradient(c.g, theta, c.counts.phiOld)
}

// Propose draws the Barker or Langevin move from g(θ).
// Its ratio needs the gradient estimate at θ′, so LogRatio includes it.
func (c *poissonGradChain) Propose(rng *rand.Rand, next, theta []float64, _ *poissonCounts, scale float64) (float64, error) {
	if c.s.barker {
		// In ζ = L⁻¹θ: Δζ_j = ±z with the Barker probabilities from
		// (Lᵀg)_j, then θ′ = θ + LΔζ.
		gz, dz := c.r1, c.r2
		c.metric.mulCholT(gz, c.g)
		for j := range theta {
			z := scale * rng.NormFloat64()
			if rng.Float64() >= logit.Sigmoid(z*gz[j]) {
				z = -z
			}
			dz[j] = z
		}
		c.metric.mulChol(c.r3, dz)
		for j := range theta {
			next[j] = theta[j] + c.r3[j]
		}
		return 0, nil
	}
	h := scale * scale / 2
	c.metric.MulInvMass(c.drift, c.g)
	c.metric.DrawNoise(rng, c.r1)
	for j := range theta {
		next[j] = theta[j] + h*c.drift[j] + scale*c.r1[j]
	}
	return 0, nil
}

// DrawOmega2 reuses the counts (Case 2).
func (c *poissonGradChain) DrawOmega2(_ *rand.Rand, _, _ []float64, w1 *poissonCounts) (*poissonCounts, error) {
	return w1, nil
}

// LogRatio evaluates the counts at θ′ for PoissonMH's ratio and the reverse
// proposal's gradient (in a falling-back chain: the exact likelihood ratio
// and the full gradient at θ′).
func (c *poissonGradChain) LogRatio(theta, next []float64, counts, _ *poissonCounts, scale float64) (float64, error) {
	if counts.fallback {
		u, err := c.fullGradient(c.gNew, next)
		if err != nil {
			return 0, err
		}
		return c.energy - u + c.proposalRatio(c, theta, next, c.reverse(c.g, c.gNew), scale), nil
	}
	if err := counts.evalAt(next); err != nil {
		return 0, err
	}
	if err := c.gradient(c.gNew, next, counts.phiNew); err != nil {
		return 0, err
	}
	return counts.logRatio() + c.proposalRatio(c, theta, next, c.reverse(c.g, c.gNew), scale), nil
}

// logProposalRatio returns log q(θ′, θ) − log q(θ, θ′) with the chain's
// metric.
func (c *poissonGradChain) logProposalRatio(theta, next, gRev []float64, scale float64) float64 {
	return c.proposalRatioWith(c.metric, theta, next, gRev, scale)
}

// proposalRatioWith returns log q(θ′, θ) − log q(θ, θ′) for the proposal
// preconditioned by m, from the gradients g(θ) (c.g) and gRev = g(θ′).
func (c *poissonGradChain) proposalRatioWith(m Metric, theta, next, gRev []float64, scale float64) float64 {
	var r float64
	if c.s.barker {
		// q(θ, θ′) ∝ Π_j σ(Δζ_j(Lᵀg(θ))_j), q(θ′, θ) ∝ Π_j σ(−Δζ_j(Lᵀg(θ′))_j),
		// Δζ = L⁻¹(θ′ − θ): log σ(x) = −softplus(−x), never overflowing.
		dz, gz, gzRev := c.r1, c.r2, c.r3
		for j := range theta {
			dz[j] = next[j] - theta[j]
		}
		m.solveChol(dz, dz)
		m.mulCholT(gz, c.g)
		m.mulCholT(gzRev, gRev)
		for j := range theta {
			r += logit.Softplus(-dz[j]*gz[j]) - logit.Softplus(dz[j]*gzRev[j])
		}
		return r
	}
	// The Gaussian densities N(θ′; θ + hM⁻¹g(θ), σ²M⁻¹) and
	// N(θ; θ′ + hM⁻¹g(θ′), σ²M⁻¹), h = σ²/2, in the mass norm.
	h := scale * scale / 2
	f, b := c.r1, c.r2
	m.MulInvMass(c.drift, c.g)
	for j := range theta {
		f[j] = next[j] - theta[j] - h*c.drift[j]
	}
	m.MulInvMass(c.drift, gRev)
	for j := range theta {
		b[j] = theta[j] - next[j] - h*c.drift[j]
	}
	return (m.MassNorm(f) - m.MassNorm(b)) / (2 * scale * scale)
}

// Report gives the Poisson count and the distinct data (N and Fallback for
// a full-batch step).
func (c *poissonGradChain) Report(info Info) Info {
	info.Batch, info.Distinct, info.Fallback = c.counts.batch, c.counts.seen.Count, c.counts.fallback
	return info
}

// A Poisson-Barker or Poisson-MALA transition changes the chain only
// once decided (its gradients and energy at θ are recomputed each step).
func (c *poissonGradChain) interruptible() bool { return true }
func (c *poissonGradChain) abandonStep()        { c.counts.batch, c.counts.seen.Count = 0, 0 }

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_    stepInterrupter                          = (*poissonGradChain)(nil)
	_, _ Kernel                                   = PoissonBarker{}, PoissonMALA{}
	_, _ AcceptTarget                             = PoissonBarker{}, PoissonMALA{}
	_    AuxChain[*poissonCounts, *poissonCounts] = (*poissonGradChain)(nil)
	_    schemeChain                              = (*poissonGradChain)(nil)
	_    fullMemoer                               = (*poissonGradChain)(nil)
	_    driverChain                              = (*metricAux[*poissonCounts, *poissonCounts])(nil)
	_    MetricAdapter                            = (*metricAux[*poissonCounts, *poissonCounts])(nil)
)

// The contracts (contracts.go) this file's kernels satisfy; their chains
// are the auxiliary-variable framework's (auxmcmc.go) over
// poissonGradScheme, with its MetricAdapter passed on (startMetricAux).
var (
	_ Kernel       = PoissonBarker{}
	_ Kernel       = PoissonMALA{}
	_ AcceptTarget = PoissonBarker{}
	_ AcceptTarget = PoissonMALA{}
)

// The capabilities PoissonBarker declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k PoissonBarker) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k PoissonBarker) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// WithLambda returns k with Lambda v (λ).
func (k PoissonBarker) WithLambda(v float64) Kernel {
	k.Lambda = v
	return k
}

// The capabilities PoissonMALA declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k PoissonMALA) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k PoissonMALA) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// WithLambda returns k with Lambda v (λ).
func (k PoissonMALA) WithLambda(v float64) Kernel {
	k.Lambda = v
	return k
}

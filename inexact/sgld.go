// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// SGLD is stochastic-gradient Langevin dynamics (Welling and Teh 2011)
// with a fixed step and no Metropolis–Hastings correction:
//
//	θ′ = θ + (ε²/2)·(−(N/m)·Σ_{i∈B}∇βU_i(θ) + ∇log prior(θ)) + ε·ξ,  ξ ~ N(0, I),
//
// B a minibatch of m data drawn uniformly without replacement at every
// step. It is INEXACT, twice over: the Euler discretisation of the Langevin
// diffusion inflates the stationary variance by O(ε²) (on a Gaussian
// posterior of precision λ by the factor 1/(1 − ε²λ/4)), and the minibatch
// gradient's noise adds (ε⁴/4)·Var(gradient estimate) per step on top of
// the injected ε²; on a Gaussian-mean posterior the stationary law is
// Gaussian with exactly these variances (sgld_test.go checks them). The
// bias is a property of the fixed step, not of the run's length: running
// longer shrinks the Monte Carlo error, never the bias (the decreasing-step
// schedule of Welling and Teh removes it only in the limit, at a vanishing
// rate of exploration). It is here so that its cost and bias can be
// measured against the exact kernels.
//
// Every move is accepted (Info.AcceptProb 1, Info.Batch m) except one
// outside the prior's support, which is rejected (AcceptProb 0): the only
// rejection SGLD makes. With no acceptance rate to
// adapt to, warmup changes nothing — it is burn-in — and the step stays
// Scale: SGLD's chains are not Tunable, so ChainResult.Scale is NaN;
// Params reports the step as "step" and the batch as "m".
type SGLD struct {
	// Scale is the step ε, the standard deviation of the injected noise
	// (0: 0.1). It is never adapted.
	Scale float64
	// BatchSize is m, the data whose gradients estimate the full one each
	// step (0: 100; capped at N, where SGLD is the unadjusted Langevin
	// algorithm).
	BatchSize int
}

// Name returns "SGLD".
func (SGLD) Name() string { return "SGLD" }

// Exact returns false: without an MH correction SGLD's stationary law is
// not the posterior.
func (SGLD) Exact() bool { return false }

// Start checks the step and batch size and that the target has gradients.
func (k SGLD) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	// The Walk checks θ0 and the scale, and holds θ and θ′.
	w, err := exactmh.NewWalk("SGLD", t, nil, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	if err := requireGradient(t); err != nil {
		return nil, fmt.Errorf("SGLD %w", err)
	}
	m := k.BatchSize
	if m == 0 {
		m = 100
	}
	if m < 1 {
		return nil, fmt.Errorf("SGLD: BatchSize = %d, want ≥ 1 (0: 100)", k.BatchSize)
	}
	n := t.N()
	m = min(m, n)
	return &sgldChain{t: t, theta: w.Position(), next: w.Next(), scale: w.StepScale(), m: m, perm: identity(n), g: make([]float64, t.Dim())}, nil
}

// sgldChain does not embed the Walk: it must not be Tunable.
type sgldChain struct {
	t     *exactmh.Target
	theta []float64
	next  []float64
	scale float64
	m     int
	perm  []int     // the data, partially shuffled for each minibatch
	g     []float64 // the drift's gradient
}

// Position returns θ.
func (c *sgldChain) Position() []float64 { return c.theta }

// Params reports the step ε and the batch size m.
func (c *sgldChain) Params() map[string]float64 {
	return map[string]float64{"step": c.scale, "m": float64(c.m)}
}

// Step makes one SGLD move.
func (c *sgldChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	shuffleRange(rng, c.perm, 0, c.m)
	clear(c.g)
	batch := c.perm[:c.m]
	if err := c.t.AddGradient(c.g, c.theta, batch, nil); err != nil {
		return exactmh.Info{}, err
	}
	w := -float64(c.t.N()) / float64(c.m)
	for j := range c.g {
		c.g[j] *= w
	}
	if err := c.t.AddLogPriorGradient(c.g, c.theta); err != nil {
		return exactmh.Info{}, err
	}
	eps := c.scale
	h := eps * eps / 2
	for j, v := range c.theta {
		c.next[j] = v + h*c.g[j] + eps*rng.NormFloat64()
	}
	info := exactmh.Info{AcceptProb: 0, LogDensity: math.NaN(), Batch: c.m, Distinct: c.m}
	if math.IsInf(c.t.LogPrior(c.next), -1) {
		return info, nil
	}
	for _, v := range c.next {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return exactmh.Info{}, fmt.Errorf("SGLD: the move from θ = %v is not finite (step %v too large?)", c.theta, eps)
		}
	}
	copy(c.theta, c.next)
	info.AcceptProb, info.Accepted = 1, true
	return info, nil
}

// MarshalState saves the permutation the next minibatch is drawn from
// (its order decides which data the chain's random stream picks).
func (c *sgldChain) MarshalState() ([]byte, error) { return chainstate.Encode(c.perm) }

// UnmarshalState restores it, refusing anything but a permutation of the
// data.
func (c *sgldChain) UnmarshalState(b []byte) error {
	var perm []int
	if err := chainstate.Decode(b, &perm); err != nil {
		return err
	}
	if err := chainstate.CheckPerm("permutation", perm, len(c.perm)); err != nil {
		return err
	}
	copy(c.perm, perm)
	return nil
}

// The contracts this file's kernel and chain satisfy.
var (
	_ exactmh.Kernel = SGLD{}
	// Deliberately not Tunable: SGLD has no acceptance to adapt to.
	_ interface {
		exactmh.Chain
		exactmh.Checkpointer
		exactmh.ParamReporter
	} = (*sgldChain)(nil)
)

// The capabilities SGLD declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k SGLD) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k SGLD) WithScale(s float64) exactmh.Kernel {
	k.Scale = s
	return k
}

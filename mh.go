// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MH is full-batch Metropolis–Hastings, the reference every minibatch kernel
// is measured against. It caches the energy of the current state, so a step
// costs N datum evaluations (a proposal outside the prior's support costs
// none). It is exact.
type MH struct {
	// Proposal draws θ' (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
}

// Name returns "MH".
func (MH) Name() string { return "MH" }

// Exact returns true.
func (MH) Exact() bool { return true }

// Start evaluates the energy at θ0 and returns the chain.
func (k MH) Start(t *Target, theta0 []float64) (Chain, error) {
	prop, scale, err := proposalSetup("MH", k.Proposal, k.Scale, t.Dim())
	if err != nil {
		return nil, err
	}
	if err := checkStart(t, theta0); err != nil {
		return nil, err
	}
	c := &mhChain{t: t, prop: prop, scale: scale}
	c.theta = append([]float64(nil), theta0...)
	c.prop1 = make([]float64, t.Dim())
	c.logPrior = t.LogPrior(theta0)
	u, err := t.TotalEnergy(theta0)
	if err != nil {
		return nil, err
	}
	c.energy = u
	return c, nil
}

type mhChain struct {
	t        *Target
	prop     Proposal
	scale    float64
	theta    []float64
	prop1    []float64 // θ'
	logPrior float64   // log p(θ)
	energy   float64   // βΣU_i(θ)
}

func (c *mhChain) Position() []float64    { return c.theta }
func (c *mhChain) StepScale() float64     { return c.scale }
func (c *mhChain) SetStepScale(s float64) { c.scale = s }
func (c *mhChain) logDensity() float64    { return c.logPrior - c.energy }
func (c *mhChain) info(acc bool, p float64) Info {
	return Info{Accepted: acc, AcceptProb: p, LogDensity: c.logDensity(), Batch: c.t.N()}
}

// Step makes one Metropolis–Hastings transition.
func (c *mhChain) Step(rng *rand.Rand) (Info, error) {
	// 1. Propose θ' and its log proposal ratio log q(θ|θ') − log q(θ'|θ).
	logQ := c.prop.Propose(rng, c.prop1, c.theta, c.scale)
	// The prior is exact; outside its support, reject before touching data.
	lp := c.t.LogPrior(c.prop1)
	if math.IsInf(lp, -1) {
		return Info{AcceptProb: 0, LogDensity: c.logDensity()}, nil
	}
	// 2–3. The "auxiliary minibatch" is all N data: the exact energy at θ'.
	u, err := c.t.TotalEnergy(c.prop1)
	if err != nil {
		return Info{}, err
	}
	// 4. Accept with probability min(1, π(θ')q(θ|θ') / (π(θ)q(θ'|θ))).
	logA := (lp - u) - c.logDensity() + logQ
	if math.IsNaN(logA) {
		return Info{}, fmt.Errorf("MH: log acceptance ratio is NaN at θ = %v, θ' = %v (log prior %v, proposal ratio %v)", c.theta, c.prop1, lp, logQ)
	}
	p := math.Exp(min(logA, 0))
	if logA >= 0 || rng.Float64() < p {
		copy(c.theta, c.prop1)
		c.logPrior, c.energy = lp, u
		return c.info(true, p), nil
	}
	return c.info(false, p), nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "math/rand/v2"

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

// DefaultTargetAccept returns 0.234, the optimal acceptance rate of
// random-walk Metropolis in high dimension (Roberts, Gelman and Gilks 1997);
// TestTargetAcceptSweep (go test -run TestTargetAcceptSweep -sweep MH -v .)
// measures bulk ESS per datum evaluation across target rates.
func (MH) DefaultTargetAccept() float64 { return 0.234 }

// Start evaluates the energy at θ0 and returns the chain.
func (k MH) Start(t *Target, theta0 []float64) (Chain, error) {
	w, err := newWalk("MH", t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	c := &mhChain{walk: w, logPrior: t.LogPrior(theta0)}
	if c.energy, err = t.TotalEnergy(theta0); err != nil {
		return nil, err
	}
	return c, nil
}

type mhChain struct {
	walk
	noState
	logPrior float64 // log p(θ)
	energy   float64 // βΣU_i(θ)
}

func (c *mhChain) logDensity() float64 { return c.logPrior - c.energy }

// Step makes one Metropolis–Hastings transition.
func (c *mhChain) Step(rng *rand.Rand) (Info, error) {
	info := Info{LogDensity: c.logDensity(), Batch: c.t.N()}
	// 1. Propose θ′; outside the prior's support, reject before reading data.
	if _, ok := c.propose(rng); !ok {
		return Info{AcceptProb: 0, LogDensity: c.logDensity()}, nil
	}
	// 2–3. The "auxiliary minibatch" is all N data: the exact energy at θ′.
	u, err := c.t.TotalEnergy(c.next)
	if err != nil {
		return Info{}, err
	}
	// 4. Accept with probability min(1, π(θ′)q(θ|θ′) / (π(θ)q(θ′|θ))).
	lp := c.logPriorNext
	info, err = c.accept(rng, (lp-u)-c.logDensity()+c.logQ, info)
	if info.Accepted {
		c.logPrior, c.energy = lp, u
		info.LogDensity = c.logDensity()
	}
	return info, err
}

// An MH transition changes the chain only after its one pass over the data.
func (c *mhChain) interruptible() bool { return true }
func (c *mhChain) abandonStep()        {}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel       = MH{}
	_ AcceptTarget = MH{}
	_ driverChain  = (*mhChain)(nil)

	_ stepInterrupter = (*mhChain)(nil)
)

// The capabilities MH declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k MH) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k MH) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k MH) Proposer() Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k MH) WithProposal(p Proposal) Kernel {
	k.Proposal = p
	return k
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

// walker is a kernel written outside exactmh: random-walk Metropolis with
// a pluggable proposal, as a user would write it against exactmh.Kernel.
// bug, when set, makes it deliberately wrong in one way — the mutants its
// checks must catch.
type walker struct {
	prop  exactmh.Proposal // nil: the isotropic Gaussian random walk
	scale float64          // initial step scale (0: 0.1)
	bug   string
}

func (walker) Name() string { return "walker" }
func (walker) Exact() bool  { return true }

// Start checks nothing the driver does not, and allocates the chain's
// scratch memory: a step allocates nothing.
func (k walker) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	c := &walkerChain{k: k, t: t, prop: k.prop, scale: k.scale, theta: slices.Clone(theta0), next: make([]float64, len(theta0))}
	if c.prop == nil {
		c.prop = exactmh.RandomWalk{}
	}
	if c.scale == 0 {
		c.scale = 0.1
	}
	c.logPrior = t.LogPrior(theta0)
	u, err := t.TotalEnergy(theta0)
	c.energy = u
	return c, err
}

type walkerChain struct {
	k                walker
	t                *exactmh.Target
	prop             exactmh.Proposal
	scale            float64
	theta, next      []float64
	logPrior, energy float64 // log p(θ) and βΣU_i(θ)
	steps            int     // transitions made (the "hidden state" bug uses it)
}

func (c *walkerChain) Position() []float64    { return c.theta }
func (c *walkerChain) StepScale() float64     { return c.scale }
func (c *walkerChain) SetStepScale(s float64) { c.scale = s }

// MarshalState and UnmarshalState: the chain's state is its position,
// which the driver saves, and what Start recomputes from it.
func (c *walkerChain) MarshalState() ([]byte, error) { return nil, nil }
func (c *walkerChain) UnmarshalState([]byte) error   { return nil }

func (c *walkerChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	c.steps++
	scale := c.scale
	if c.k.bug == "hidden state" && c.steps%2 == 1 {
		scale *= 2 // state that MarshalState does not save
	}
	logQ := c.prop.Propose(rng, c.next, c.theta, scale)
	if c.k.bug == "shifts the posterior" {
		return c.shiftedStep(rng, logQ)
	}
	lp := c.t.LogPrior(c.next)
	if math.IsInf(lp, -1) && c.k.bug != "ignores the support" {
		return exactmh.Info{AcceptProb: 0, LogDensity: c.logPrior - c.energy}, nil
	}
	u, err := c.t.TotalEnergy(c.next)
	if err != nil {
		return exactmh.Info{}, err
	}
	logA := (lp - u) - (c.logPrior - c.energy) + logQ
	switch c.k.bug {
	case "drops the prior ratio":
		logA -= lp - c.logPrior
	case "ignores the proposal ratio":
		logA -= logQ
	case "sharpens the likelihood":
		logA -= 3 * (u - c.energy) // the likelihood to the power 4
	case "ignores the support":
		if math.IsInf(lp, -1) {
			logA, lp = 0, c.logPrior
		}
	case "allocates":
		c.theta = slices.Clone(c.theta)
	}
	info := exactmh.Info{AcceptProb: math.Exp(min(logA, 0)), Batch: c.t.N()}
	if logA >= 0 || rng.Float64() < info.AcceptProb {
		copy(c.theta, c.next)
		c.logPrior, c.energy = lp, u
		info.Accepted = true
	}
	info.LogDensity = c.logPrior - c.energy
	if c.k.bug == "misreports the density" {
		info.LogDensity = -c.energy
	}
	return info, nil
}

// shiftedStep is a step of the bug "shifts the posterior": Metropolis–
// Hastings on π(θ − δ), δ = 0.25 in the first coordinate (about one
// posterior sd of the kit's SBC Gaussian model).
func (c *walkerChain) shiftedStep(rng *rand.Rand, logQ float64) (exactmh.Info, error) {
	const delta = 0.25
	logPi := func(theta []float64) (float64, error) {
		theta[0] -= delta
		defer func() { theta[0] += delta }()
		lp := c.t.LogPrior(theta)
		if math.IsInf(lp, -1) {
			return lp, nil
		}
		u, err := c.t.TotalEnergy(theta)
		return lp - u, err
	}
	lNew, err := logPi(c.next)
	if err != nil {
		return exactmh.Info{}, err
	}
	lOld, err := logPi(c.theta)
	if err != nil {
		return exactmh.Info{}, err
	}
	logA := lNew - lOld + logQ
	info := exactmh.Info{AcceptProb: math.Exp(min(logA, 0)), LogDensity: math.NaN()}
	if logA >= 0 || rng.Float64() < info.AcceptProb {
		copy(c.theta, c.next)
		info.Accepted = true
	}
	return info, nil
}

// To prove a kernel of your own exact, describe it in a Case — how to build
// it around the kit's proposal and scale, and deliberately wrong variants of
// it — and call mcmctest.Check(t, c) from a test:
//
//	func TestWalker(t *testing.T) { mcmctest.Check(t, walkerCase) }
//
// An example has no *testing.T, so this one runs the same checks with
// Verify, which returns their outcomes instead of running subtests.
func Example() {
	outcomes, err := mcmctest.Verify(mcmctest.Case{
		Name: "walker",
		Kernel: func(pb mcmctest.Problem) exactmh.Kernel {
			return walker{prop: pb.Proposal, scale: pb.Scale}
		},
		UsesProposal: true,
		Exact:        true,
		Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{
			"drops the prior ratio": func(pb mcmctest.Problem) exactmh.Kernel {
				return walker{prop: pb.Proposal, scale: pb.Scale, bug: "drops the prior ratio"}
			},
			"ignores the proposal ratio": func(pb mcmctest.Problem) exactmh.Kernel {
				return walker{prop: pb.Proposal, scale: pb.Scale, bug: "ignores the proposal ratio"}
			},
		},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range outcomes {
		status := "pass"
		if o.Failed {
			status = "FAIL"
		}
		fmt.Println(status, o.Check)
	}
	// Output:
	// pass allocs
	// pass info
	// pass checkpoint
	// pass workers
	// pass pairwise
	// pass moments
	// pass walk
	// pass sbc
	// pass mutant/drops the prior ratio
	// pass mutant/ignores the proposal ratio
}

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
// a pluggable proposal, as a user would write it against exactmh.Kernel on
// the package's shared loop, exactmh.Walk (the proposal, its step scale,
// the exact prior-and-proposal part of the log ratio, the accept step).
// bug, when set, makes it deliberately wrong in one way — the mutants its
// checks must catch.
type walker struct {
	prop  exactmh.Proposal // nil: the isotropic Gaussian random walk
	scale float64          // initial step scale (0: 0.1)
	bug   string
}

func (walker) Name() string { return "walker" }
func (walker) Exact() bool  { return true }

// Start starts the walk (which checks θ0, the scale and the proposal) and
// computes the energy at θ0: a step allocates nothing.
func (k walker) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	w, err := exactmh.NewWalk("walker", t, k.prop, k.scale, theta0)
	if err != nil {
		return nil, err
	}
	c := &walkerChain{Walk: w, k: k, t: t}
	c.energy, err = t.TotalEnergy(theta0)
	return c, err
}

type walkerChain struct {
	*exactmh.Walk // Position, StepScale, SetStepScale
	k             walker
	t             *exactmh.Target
	energy        float64 // βΣU_i(θ)
	steps         int     // transitions made (the "hidden state" bug uses it)
	sink          []float64
}

// MarshalState and UnmarshalState: the chain's state is its position,
// which the driver saves, and what Start recomputes from it.
func (c *walkerChain) MarshalState() ([]byte, error) { return nil, nil }
func (c *walkerChain) UnmarshalState([]byte) error   { return nil }

func (c *walkerChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	c.steps++
	scale := c.StepScale()
	if c.k.bug == "hidden state" && c.steps%2 == 1 {
		c.SetStepScale(2 * scale) // state that MarshalState does not save
	}
	logR, ok := c.Propose(rng)
	c.SetStepScale(scale)
	lpNext, lp, logQ := c.Parts()
	if c.k.bug == "shifts the posterior" {
		return c.shiftedStep(rng, logQ)
	}
	if !ok && c.k.bug != "ignores the support" {
		return exactmh.Info{AcceptProb: 0, LogDensity: lp - c.energy}, nil
	}
	u, err := c.t.TotalEnergy(c.Next())
	if err != nil {
		return exactmh.Info{}, err
	}
	logA := logR - (u - c.energy)
	switch c.k.bug {
	case "drops the prior ratio":
		logA -= lpNext - lp
	case "ignores the proposal ratio":
		logA -= logQ
	case "sharpens the likelihood":
		logA -= 3 * (u - c.energy) // the likelihood to the power 4
	case "ignores the support":
		if !ok {
			logA, lpNext = 0, lp
		}
	case "allocates":
		c.sink = slices.Clone(c.Position())
	}
	info, err := c.Accept(rng, logA, exactmh.Info{Batch: c.t.N()})
	if err != nil {
		return info, err
	}
	if info.Accepted {
		c.energy, lp = u, lpNext
	}
	info.LogDensity = lp - c.energy
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
	lNew, err := logPi(c.Next())
	if err != nil {
		return exactmh.Info{}, err
	}
	lOld, err := logPi(c.Position())
	if err != nil {
		return exactmh.Info{}, err
	}
	return c.Accept(rng, lNew-lOld+logQ, exactmh.Info{LogDensity: math.NaN()})
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

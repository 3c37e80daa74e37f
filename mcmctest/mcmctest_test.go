// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
	"gonum.org/v1/gonum/mat"
)

// The kit's own tests do not call t.Parallel: Verify counts allocations.

var checkNames = []string{"pairwise", "moments", "walk", "sbc", "allocs", "checkpoint", "workers", "info"}

// only returns a Case.Skip that skips every check but check.
func only(check string) map[string]string {
	skip := map[string]string{}
	for _, name := range checkNames {
		if name != check {
			skip[name] = "not under test"
		}
	}
	return skip
}

func outcome(t *testing.T, out []mcmctest.Outcome, check string) mcmctest.Outcome {
	t.Helper()
	i := slices.IndexFunc(out, func(o mcmctest.Outcome) bool { return o.Check == check })
	if i < 0 {
		t.Fatalf("no outcome for %q in %v", check, out)
	}
	return out[i]
}

// sharedWalker is the walker whose chains share a counter that changes
// their step scale: each chain is still π-invariant, but its draws depend
// on how the chains' steps interleave.
type sharedWalker struct {
	walker
	shared *atomic.Int64
}

func (k sharedWalker) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	ch, err := k.walker.Start(t, theta0)
	if err != nil {
		return nil, err
	}
	return &sharedChain{walkerChain: ch.(*walkerChain), shared: k.shared}, nil
}

type sharedChain struct {
	*walkerChain
	shared *atomic.Int64
}

func (c *sharedChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	s := c.StepScale()
	if c.shared.Add(1)%3 == 0 {
		c.SetStepScale(2 * s)
	}
	info, err := c.walkerChain.Step(rng)
	c.SetStepScale(s)
	return info, err
}

// Every check fails a kernel that is wrong in the way it looks for, run
// alone (the other checks skipped).
func TestEachCheckFailsAWrongKernel(t *testing.T) {
	for _, c := range []struct {
		check, bug string
		kernel     func(pb mcmctest.Problem) exactmh.Kernel
	}{
		{check: "allocs", bug: "allocates"},
		{check: "info", bug: "misreports the density"},
		{check: "checkpoint", bug: "hidden state"},
		{check: "workers", bug: "shares state between chains", kernel: func(pb mcmctest.Problem) exactmh.Kernel {
			return sharedWalker{walker: walker{prop: pb.Proposal, scale: pb.Scale}, shared: new(atomic.Int64)}
		}},
		{check: "pairwise", bug: "drops the prior ratio"},
		{check: "pairwise", bug: "ignores the proposal ratio"},
		{check: "moments", bug: "drops the prior ratio"},
		{check: "walk", bug: "ignores the support"},
		{check: "sbc", bug: "sharpens the likelihood"},
		{check: "sbc", bug: "shifts the posterior"},
	} {
		t.Run(c.check+"/"+c.bug, func(t *testing.T) {
			kernel := c.kernel
			if kernel == nil {
				kernel = func(pb mcmctest.Problem) exactmh.Kernel {
					return walker{prop: pb.Proposal, scale: pb.Scale, bug: c.bug}
				}
			}
			out, err := mcmctest.Verify(mcmctest.Case{Name: c.bug, Kernel: kernel, UsesProposal: true, Exact: true, Skip: only(c.check)})
			if err != nil {
				t.Fatal(err)
			}
			o := outcome(t, out, c.check)
			if !o.Failed {
				t.Errorf("the %s check passes a kernel that %s: %v", c.check, c.bug, o)
			} else {
				t.Logf("%v", o)
			}
			for _, other := range out {
				if other.Check != c.check && !other.Skipped {
					t.Errorf("%s ran, not skipped: %v", other.Check, other)
				}
			}
		})
	}
}

// A "mutant" that is in fact exact passes every check, so the case fails:
// the kit does not take a mutant's wrongness on trust.
func TestExactMutantFails(t *testing.T) {
	out, err := mcmctest.Verify(mcmctest.Case{
		Name:         "walker",
		Kernel:       func(pb mcmctest.Problem) exactmh.Kernel { return walker{prop: pb.Proposal, scale: pb.Scale} },
		UsesProposal: true,
		Exact:        true,
		Skip:         map[string]string{"allocs": "not under test", "info": "not under test", "checkpoint": "not under test", "workers": "not under test"},
		Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{
			"a correct copy": func(pb mcmctest.Problem) exactmh.Kernel { return walker{prop: pb.Proposal, scale: pb.Scale} },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		switch {
		case o.Check == "mutant/a correct copy":
			if !o.Failed || !strings.Contains(o.Errors[0], "passes every check") {
				t.Errorf("an exact mutant is reported caught: %v", o)
			} else {
				t.Logf("%v", o)
			}
		case o.Failed:
			t.Errorf("the exact kernel fails: %v", o)
		}
	}
}

// An inexact kernel runs the structural checks only.
func TestInexactStructuralOnly(t *testing.T) {
	out, err := mcmctest.Verify(mcmctest.Case{
		Name: "AustereMH",
		Kernel: func(pb mcmctest.Problem) exactmh.Kernel {
			return inexact.AustereMH{Proposal: pb.Proposal, Scale: pb.Scale}
		},
		UsesProposal: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range out {
		got = append(got, o.Check)
		if o.Failed || o.Skipped {
			t.Errorf("%v", o)
		}
	}
	if want := []string{"allocs", "info", "checkpoint", "workers"}; !slices.Equal(got, want) {
		t.Errorf("checks %v, want %v", got, want)
	}
}

func TestCaseErrors(t *testing.T) {
	good := func(pb mcmctest.Problem) exactmh.Kernel { return walker{prop: pb.Proposal} }
	for name, c := range map[string]mcmctest.Case{
		"no name":            {Kernel: good, Exact: true},
		"no kernel":          {Name: "x", Exact: true},
		"inexact mutants":    {Name: "x", Kernel: good, Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{"m": good}},
		"unknown skip":       {Name: "x", Kernel: good, Exact: true, Skip: map[string]string{"moment": "typo"}},
		"skip without cause": {Name: "x", Kernel: good, Exact: true, Skip: map[string]string{"sbc": ""}},
		"exactness differs":  {Name: "x", Kernel: good},
		"nil mutant":         {Name: "x", Kernel: good, Exact: true, Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{"m": nil}},
	} {
		if _, err := mcmctest.Verify(c); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	g, err := mcmctest.ConjugateGaussian(20, []float64{0}, mat.NewSymDense(1, []float64{1}), []float64{0}, []float64{1}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcmctest.AllocsPerStep(walker{}, g.Posterior, g.Mean, 0); err == nil {
		t.Error("AllocsPerStep with 0 steps: no error")
	}
	if err := mcmctest.CheckCheckpoint(g.Posterior, walker{}, exactmh.Settings{Warmup: 1, Draws: 10}); err == nil {
		t.Error("CheckCheckpoint with 1 warmup transition: no error")
	}
	if err := mcmctest.CheckInfo(g.Posterior, walker{}, exactmh.Settings{}, false); err == nil {
		t.Error("CheckInfo without Init: no error")
	}
	if _, err := mcmctest.SBC(mcmctest.GaussianModel{N: 5, Sigma: mat.NewSymDense(1, []float64{1}), PriorMean: []float64{0}, PriorSD: []float64{1}},
		func(pb mcmctest.Problem) exactmh.Kernel { return walker{} }, &mcmctest.SBCOptions{Draws: 10, Bins: 4}); err == nil {
		t.Error("SBC with bins that do not divide the ranks: no error")
	}
}

// The models draw θ inside the prior's support and return a usable
// problem: a mode inside the support where the log posterior is at least
// that at θ (the MAP, for the logistic model), and positive SDs.
func TestModels(t *testing.T) {
	sigma := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2})
	rng := rand.New(rand.NewPCG(1, 1))
	for name, m := range map[string]mcmctest.Model{
		"gaussian":          mcmctest.GaussianModel{N: 10, Sigma: sigma, PriorMean: []float64{0, 0}, PriorSD: []float64{0.5, 0.5}},
		"box":               mcmctest.BoxModel{N: 10, Sigma: sigma, Lo: []float64{-1, -1}, Hi: []float64{1, 1}},
		"logistic":          mcmctest.LogisticModel{N: 100, Dim: 2, PriorSD: 1},
		"logistic on a box": mcmctest.LogisticModel{N: 100, Dim: 2, Box: 1},
	} {
		for range 5 {
			theta, pb, err := m.Draw(rng)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			lt, err := pb.Posterior.LogDensity(theta)
			if err != nil || math.IsInf(lt, -1) {
				t.Fatalf("%s: θ = %v: log density %v, %v", name, theta, lt, err)
			}
			lm, err := pb.Posterior.LogDensity(pb.Mode)
			if err != nil || math.IsInf(lm, -1) {
				t.Fatalf("%s: mode %v: log density %v, %v", name, pb.Mode, lm, err)
			}
			if name != "box" && lm < lt-1e-9*(1+math.Abs(lt)) {
				t.Errorf("%s: log density %v at the mode %v, %v at θ = %v", name, lm, pb.Mode, lt, theta)
			}
			for _, sd := range pb.SD {
				if !(sd > 0) {
					t.Errorf("%s: SD %v", name, pb.SD)
				}
			}
		}
	}
}

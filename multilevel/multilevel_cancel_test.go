// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupStartHonoursCancel starts GroupGibbs and GroupSMH with their
// default centre (Center nil: the Laplace-EM centre, a phase of whole-data
// passes in Start, which at 10⁶ levels takes minutes) under a run whose
// context is cancelled: the centre watches the run's context, so Sample
// returns the cancellation from Start rather than finishing the centre
// on a context of its own and sampling; the centre itself, computed as
// Start does under a cancelled run, stops with the interruption (on a
// context of its own it completed).
func TestGroupStartHonoursCancel(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 300, Groups: 12}.Draw(rand.New(rand.NewPCG(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := multilevel.DefaultCenterUnder(ctx, pb.Posterior); err == nil {
		t.Errorf("the default centre under a cancelled run: %d coordinates and no error; want it to stop", len(c))
	} else if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("the default centre under a cancelled run: error %v, want the interruption", err)
	}
	if _, err := multilevel.DefaultCenterUnder(context.Background(), pb.Posterior); err != nil {
		t.Fatalf("the default centre: %v", err)
	}
	for _, k := range []exactmh.Kernel{multilevel.GroupGibbs{}, multilevel.GroupSMH{}} {
		res, err := exactmh.Sample(ctx, pb.Posterior, k, &exactmh.Settings{Chains: 2, Warmup: 10, Draws: 10, Seed: 1})
		if !errors.Is(err, context.Canceled) {
			status := "none"
			if res != nil {
				status = res.Status.String()
			}
			t.Errorf("%s, cancelled before Start: result %s, error %v; want context.Canceled from Start", k.Name(), status, err)
		}
	}
}

// TestMultilevelDefaultStart runs GroupSMH and GroupGibbs without an Init:
// each chain starts from the Laplace-EM centre the kernel is built on, not
// the origin, where every effect is exactly 0 and a log scale's
// conditional is improper (GroupSMH's log-τ updates walked a chain to
// log τ ≈ −354, where it stayed: mcmctest.MultilevelModel{N: 60, Groups:
// 12}, 4 chains of 200 warmup and 200 draws). No log scale goes below −10.
func TestMultilevelDefaultStart(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 60, Groups: 12}.Draw(rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	p := pb.Posterior
	center, err := multilevel.DefaultCenterUnder(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var logTau []int
	for j, n := range p.Names {
		if strings.HasPrefix(n, "log_tau") {
			logTau = append(logTau, j)
		}
	}
	if len(logTau) == 0 {
		t.Fatalf("no log scale among %q", p.Names)
	}
	for _, k := range []exactmh.Kernel{multilevel.GroupSMH{}, multilevel.GroupGibbs{}} {
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 200, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for c := range res.Chains {
			for _, j := range logTau {
				lo := math.Inf(1)
				for i := range res.Chains[c].Len() {
					lo = math.Min(lo, res.Draw(c, i)[j])
				}
				if !(lo > -10) {
					t.Errorf("%s, chain %d: %s down to %v (the centre has %v)", k.Name(), c, p.Names[j], lo, center[j])
				}
			}
		}
	}
}

// TestMultilevelOriginInit starts GroupSMH and GroupGibbs (on a logistic
// model, and GroupGibbs on a Gaussian one with σ unknown, its sweep by
// sufficient statistics, and on a negative binomial one) from an explicit
// Init at the origin — every effect exactly 0, where a log scale's
// conditional, τ^(1−G)·p(τ) in log τ, is improper — and checks that no
// log scale walks off: GroupSMH's prior-only updates of the free log
// scales wait until the term's effects have moved off 0 (issue 44 item 2:
// without that, chain 2 of 4 went to log τ ≈ −354.7 and stayed; the
// setting of TestMultilevelDefaultStart).
func TestMultilevelOriginInit(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 60, Groups: 12}.Draw(rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	_, gb, err := gaussKit{n: 120, groups: 6, slope: true}.Draw(rand.New(rand.NewPCG(2, 0)))
	if err != nil {
		t.Fatal(err)
	}
	_, nb, err := mlNegBin{n: 200, groups: 5}.Draw(rand.New(rand.NewPCG(3, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		p    *exactmh.Posterior
		k    exactmh.Kernel
	}{
		{"logistic", pb.Posterior, multilevel.GroupSMH{}},
		{"logistic", pb.Posterior, multilevel.GroupGibbs{}},
		{"gaussian, σ unknown", gb.Posterior, multilevel.GroupGibbs{}},
		{"negative binomial", nb.Posterior, multilevel.GroupGibbs{}},
	} {
		p, k := c.p, c.k
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 200, Seed: 1, Init: make([]float64, p.Dim())})
		if err != nil {
			t.Fatalf("%s on the %s model from the origin: %v", k.Name(), c.what, err)
		}
		for ch := range res.Chains {
			for j, n := range p.Names {
				if !strings.HasPrefix(n, "log_tau") {
					continue
				}
				lo := math.Inf(1)
				for i := range res.Chains[ch].Len() {
					lo = math.Min(lo, res.Draw(ch, i)[j])
				}
				if !(lo > -10) {
					t.Errorf("%s on the %s model from the origin, chain %d: %s down to %v", k.Name(), c.what, ch, n, lo)
				}
			}
		}
	}
}

// countedCtx is a context whose Err turns to context.Canceled from its
// (after+1)-th call: a cancellation at a fixed point of a computation that
// polls Err, with no goroutine or clock (its Done is the parent's).
type countedCtx struct {
	context.Context
	calls atomic.Int64
	after int64
}

func (c *countedCtx) Err() error {
	if c.calls.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// TestLaplaceCentreStopsMidway cancels the default Laplace-EM centre
// halfway through the polls it makes of the run's context (one a Newton
// step): it returns the cancellation, having polled once more at most,
// where TestGroupStartHonoursCancel's context is cancelled before Start
// (issue 44 item 5: at 10⁶ levels the centre is minutes of whole-data
// passes; by hand, a SIGINT in it exits after one Newton step). Without
// the Newton step's poll the centre polls nothing and runs to the end.
func TestLaplaceCentreStopsMidway(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 300, Groups: 12}.Draw(rand.New(rand.NewPCG(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	whole := &countedCtx{Context: context.Background(), after: math.MaxInt64}
	if _, err := multilevel.DefaultCenterUnder(whole, pb.Posterior); err != nil {
		t.Fatal(err)
	}
	n := whole.calls.Load()
	if n < 4 {
		t.Fatalf("the centre polled its context %d times, want ≥ 4 (once a Newton step)", n)
	}
	half := &countedCtx{Context: context.Background(), after: n / 2}
	c, err := multilevel.DefaultCenterUnder(half, pb.Posterior)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled at poll %d of %d: %d coordinates, error %v; want context.Canceled", n/2+1, n, len(c), err)
	}
	if got := half.calls.Load(); got > n/2+2 {
		t.Errorf("cancelled at poll %d of %d: it polled %d times", n/2+1, n, got)
	}
	t.Logf("the centre polls %d times; cancelled at poll %d: %v", n, n/2+1, err)
}

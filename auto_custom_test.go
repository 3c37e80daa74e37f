// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh/internal/pilotrace"
	"github.com/exactmh/exactmh/internal/testgen"
)

// customMultilevel is testgen.CustomMultilevel, a multilevel logistic
// regression written as a user would write it (EnergyDiffs, a gradient, a
// dense Hessian), with its DiffBound.
type customMultilevel struct{ *testgen.CustomMultilevel }

// DiffBound bounds a datum's energy difference by ‖(x_i, 1)‖·‖θ − θ′‖
// (testgen.CustomMultilevel.DiffC).
func (e customMultilevel) DiffBound(Prior) (*DiffBound, error) {
	return &DiffBound{C: e.DiffC()}, nil
}

// customMultilevelPosterior returns the custom energy on n data, p fixed
// effects and g groups (testgen.NewCustomMultilevel) under an isotropic
// Gaussian prior of sd 3.
func customMultilevelPosterior(t *testing.T, n, p, g int) *Posterior {
	t.Helper()
	prior, err := NewIsoGaussian(p+g, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &Posterior{Energy: customMultilevel{testgen.NewCustomMultilevel(n, p, g)}, Prior: prior}
}

// TestAutoUnfinishedPilotScored is issue 43's regression on a user's own
// multilevel energy (EnergyDiffs, gradient, Hessian, DiffBound; there
// N = 10⁵ and d = 505, here N = 6000 and d = 105, with the pilots' sampling
// budget cut to three MH-CN transitions to put them in that problem's
// regime, where the MH-CN and TunaMH pilots make fewer than 20 draws):
// pilots that make too few draws to measure are scored on the draws they
// made, with the others, so the choice is one of them, not full-batch
// NUTS, several passes a transition. Under the mutant that scores them 0
// (pilotNoPartial: their "0 ESS/s" of before), NUTS wins, as it did. At
// the full budgets MH-CN is chosen.
func TestAutoUnfinishedPilotScored(t *testing.T) {
	if testing.Short() {
		t.Skip("three choices on N = 6000, d = 105")
	}
	p := customMultilevelPosterior(t, 6000, 5, 100)
	ctx := context.Background()
	choose := func(what string) *Choice {
		c, err := Choose(ctx, p, &Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v", what, c)
		return c
	}
	full := choose("full budgets")
	if full.Name != "MH-CN" {
		t.Errorf("full budgets: chose %s, want MH-CN", full.Name)
	}
	// Sampling budget: three transitions of MH-CN (a pass, and its dense
	// proposal).
	step := float64(p.Len()) + 2.5*105*105/datumMadds(p)
	pilotBudgetScale[1] = 3 * step / max(autoPilotSampleCost, autoPilotSamplePasses*float64(p.Len()))
	defer func() { pilotBudgetScale = [2]float64{1, 1} }()
	cut := choose("sampling budget of three MH-CN transitions")
	if strings.HasPrefix(cut.Name, "NUTS") {
		t.Errorf("cut budget: chose %s", cut.Name)
	}
	for _, m := range cut.Candidates {
		if m.Name == cut.Name && !(m.Partial > 0) {
			t.Errorf("cut budget: the winner %+v was not scored on partial draws", m)
		}
	}
	pilotNoPartial = true
	defer func() { pilotNoPartial = false }()
	if mut := choose("mutant: unfinished pilots scored 0"); !strings.HasPrefix(mut.Name, "NUTS") {
		t.Errorf("mutant pilotNoPartial: chose %s, want NUTS (the regression): the test does not reach the regime", mut.Name)
	}
}

// TestAutoPlainBoundFloor: on the custom multilevel energy (no control
// variates; its DiffBound ‖(x_i, 1)‖·‖θ − θ′‖ has C·M of order N at a
// Laplace-sized step) plain TunaMH would read more than a full pass a
// transition, and the choice lists it not piloted, with the numbers, as
// it does the control-variate kernels past their floor (cvBatchFloor);
// the other pilots' choice stands (MH-CN). Under the mutant plainFloorOff
// it is piloted, as it was (228 of the choice's passes at N = 10⁵).
func TestAutoPlainBoundFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("two choices on N = 6000, d = 105")
	}
	p := customMultilevelPosterior(t, 6000, 5, 100)
	pilotBudgetScale[1] = 0.25
	defer func() { pilotBudgetScale = [2]float64{1, 1} }()
	choose := func() (*Choice, Candidate) {
		c, err := Choose(context.Background(), p, &Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Candidates {
			if m.Name == "TunaMH" {
				return c, m
			}
		}
		t.Fatalf("no TunaMH candidate: %v", c)
		return nil, Candidate{}
	}
	c, tuna := choose()
	t.Logf("%v", c)
	if !strings.HasPrefix(tuna.Err, "not piloted: its bound's C·M") || tuna.Cost != 0 {
		t.Errorf("TunaMH piloted past its floor: %+v", tuna)
	}
	if c.Name != "MH-CN" {
		t.Errorf("chose %s, want MH-CN", c.Name)
	}
	plainFloorOff = true
	defer func() { plainFloorOff = false }()
	if _, mut := choose(); mut.Err != "" || !(mut.Cost > 0) {
		t.Errorf("mutant plainFloorOff: TunaMH not piloted (%+v): the test does not reach the regime", mut)
	}
}

// TestAutoDeterministicUnderLoad: Sample's automatic default with the same
// seed gives the same choice and the same draws, bit for bit, alone and
// with two goroutines spinning beside it (on a 2-core machine, as much
// load again as the run itself) and its pilots stalled now and then.
// Nothing in the choice reads a clock, so this holds by construction; the
// test does not depend on how much the load slows the run.
func TestAutoDeterministicUnderLoad(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 3000, 3, 1)
	run := func(load bool) *Result {
		if load {
			stop := make(chan struct{})
			defer close(stop)
			for range 2 {
				go func() {
					x := 0
					for {
						select {
						case <-stop:
							return
						default:
							x++
						}
					}
				}()
			}
			pilotStallHook = func() func(*Event) {
				return func(e *Event) {
					if e.Iteration%700 == 3 {
						time.Sleep(time.Millisecond)
					}
				}
			}
			defer func() { pilotStallHook = nil }()
		}
		res, err := Sample(context.Background(), p, nil, &Settings{Chains: 2, Warmup: 200, Draws: 200, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	calm, loaded := run(false), run(true)
	if a, b := calm.Choice.String(), loaded.Choice.String(); a != b {
		t.Fatalf("the choice changed under load:\n%s\n%s", a, b)
	}
	for c := range calm.Chains {
		if !slices.Equal(calm.Chains[c].Draws, loaded.Chains[c].Draws) {
			t.Fatalf("chain %d's draws differ under load (choice %s)", c, calm.Choice.Name)
		}
	}
	t.Logf("chose %s under load as alone: %v", calm.Choice.Name, calm.Choice)
}

// TestPilotCutMidTransition: a racing pilot whose score can only be its
// bound, two effective draws a transition, is ended within the transition
// at whose end the race would drop it (pilotGuard.arm), and only there.
// Full-batch NUTS on the custom multilevel energy from θ = 0 (warmup
// transitions of tens of leapfrogs, each a pass), advanced as the race
// advances it, checkpoint after checkpoint with a beat (pilotrace.Beater):
// run whole (the mutant pilotNoCut), its bound first falls below the beat
// at a pause after transition s; with the cut it ends by itself within
// transition s, its bound there at most the beat and at least the whole
// run's, for less cost. Under the mutant the cut run runs whole and the
// test fails.
func TestPilotCutMidTransition(t *testing.T) {
	if testing.Short() {
		t.Skip("full-batch NUTS pilots on N = 6000, d = 105")
	}
	p := customMultilevelPosterior(t, 6000, 5, 100)
	init := make([]float64, p.Dim())
	const beat = 5.0
	first := autoRaceFirst * max(autoPilotSampleCost, autoPilotSamplePasses*float64(p.Len()))
	run := func() (*racer, pilotrace.Score) {
		r := newRacer(context.Background(), "NUTS", autoCand{name: "NUTS", post: p, k: NUTS{}}, NUTS{}, init, 1, &Choice{})
		defer r.Stop()
		for k := 0; k < 200; k++ {
			r.SetBeat(beat)
			s := r.Advance(first * math.Pow(autoRaceGrowth, float64(k)))
			if s.Done || s.Upper < beat {
				return r, s
			}
		}
		t.Fatal("the pilot's bound never fell below the beat")
		return nil, pilotrace.Score{}
	}
	pilotNoCut = true
	whole, ws := run()
	pilotNoCut = false
	cut, cs := run()
	t.Logf("whole: %d transitions, cost %.4g, bound %.4g (done %v); cut: %v, cost %.4g, bound %.4g", whole.guard.steps, whole.guard.cost, ws.Upper, ws.Done, cut.err, cut.guard.cost, cs.Upper)
	if ws.Done {
		t.Fatalf("the whole pilot ended by itself (%v) before the beat dropped it: the test does not reach the regime", whole.err)
	}
	if !cs.Done || cut.err == nil || !strings.Contains(cut.err.Error(), "stopped within transition") {
		t.Fatalf("with the cut the pilot was not stopped within a transition: %+v, %v", cs, cut.err)
	}
	if cut.guard.steps+1 != whole.guard.steps {
		t.Errorf("cut within transition %d, the whole run dropped after transition %d", cut.guard.steps+1, whole.guard.steps)
	}
	if !(cs.Upper <= beat*(1+1e-12) && cs.Upper >= ws.Upper && cut.guard.cost < whole.guard.cost) {
		t.Errorf("cut: bound %g at cost %g; whole: bound %g at cost %g; want the cut's bound in [whole's, beat %g] for less cost", cs.Upper, cut.guard.cost, ws.Upper, whole.guard.cost, beat)
	}
}

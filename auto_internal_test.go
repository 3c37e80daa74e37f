// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPilotGuard: the pilot guard prices transitions by their counts, stops
// a pilot whose bound (two draws per transition at its cost so far) cannot
// reach the best pilot's rate once pilotGuardSteps transitions and a third
// of the warmup budget show it, and not before; it ends a warmup past its
// budget and a sampling past its own, each after a whole transition, ends
// after pilotGuardSteps a warmup whose budget holds fewer than the
// 2·autoPartialMin transitions an estimate needs at its cost so far (under
// the mutant pilotNoShortStop it runs on to its budget: caught), and
// scores the latter half of the draws it kept (partialScore).
func TestPilotGuard(t *testing.T) {
	ev := func(it int, warmup bool, evals, grads int) *Event {
		return &Event{Iteration: it, Warmup: warmup, Theta: []float64{float64(it)}, Info: Info{Evals: evals, GradEvals: grads}}
	}
	// 10⁵ units a transition (costGrad prices the gradients): two draws
	// per transition are 20 ESS per 10⁶.
	g := &pilotGuard{price: pricing{step: 0}, beat: 30, warmup: 100, warmupBudget: 6e6, sampleBudget: 1e9, keep: 1}
	per := func() (int, int) { return 5e4, int(5e4 / costGrad) }
	e, gr := per()
	for it := range 19 {
		if err := g.Record(ev(it, true, e, gr)); err != nil {
			t.Fatalf("stopped after %d transitions (%.3g units), before a third of the budget: %v", it+1, g.warmCost, err)
		}
	}
	if err := g.Record(ev(19, true, e, gr)); !errors.Is(err, errPilotStop) || g.stopped != 20 || g.steps != 20 {
		t.Fatalf("not stopped at 20 ESS per 10⁶ at most: %v, bound %v after %d", err, g.stopped, g.steps)
	}
	// Transitions of a fifth of the budget each (a NUTS pilot of long
	// trees on a large model): from a third of the budget the guard counts
	// pilotGuardSteps transitions it has not made yet, a bound their costs
	// can only lower, and stops where even that cannot beat, without
	// paying for the transitions up to pilotGuardSteps.
	earlyStop := func(beat float64, at int, bound float64) (fault string) {
		g := &pilotGuard{warmup: 100, warmupBudget: 1e7, sampleBudget: 1e9, keep: 1, beat: beat}
		for it := range 100 {
			if err := g.Record(ev(it, true, 2e6, 0)); err != nil {
				if it+1 != at || !errors.Is(err, errPilotStop) || g.stopped-bound > 1e-12 || bound-g.stopped > 1e-12 {
					return fmt.Sprintf("beat %v: stopped after %d transitions (bound %v, overBudget %v, short %v): %v; want after %d at %v", beat, it+1, g.stopped, g.overBudget, g.short, err, at, bound)
				}
				return ""
			}
		}
		return fmt.Sprintf("beat %v: not stopped in 100 transitions", beat)
	}
	// 2·5 draws over 4·10⁶ units (2.5 per 10⁶) cannot beat 10: stopped at
	// the second; 2.5 may beat 2, and 2·5 over 6·10⁶ (1.67) cannot.
	for _, c := range []struct {
		beat, bound float64
		at          int
	}{{10, 2.5, 2}, {2, 10.0 / 6, 3}} {
		if f := earlyStop(c.beat, c.at, c.bound); f != "" {
			t.Error(f)
		}
	}
	pilotLateBeatStop = true
	if f := earlyStop(10, 2, 2.5); f == "" {
		t.Error("mutant pilotLateBeatStop: not caught")
	} else {
		t.Logf("mutant pilotLateBeatStop caught: %s", f)
	}
	pilotLateBeatStop = false
	free := &pilotGuard{warmup: 100, warmupBudget: 6e6, sampleBudget: 1e9, keep: 1}
	for it := range 40 {
		if err := free.Record(ev(it, true, e, gr)); err != nil {
			t.Fatalf("a first pilot (nothing to beat) was stopped at %d: %v", it, err)
		}
	}
	// A warmup past its budget ends; so does a sampling.
	g = &pilotGuard{warmup: 100, warmupBudget: 1e6, sampleBudget: 1e6, keep: 1}
	for it := range 100 {
		err := g.Record(ev(it, true, 2e4, 0))
		if (it == 49) != (err != nil) || err != nil && (!g.overBudget || g.short) {
			t.Fatalf("warmup transition %d (%.3g units of a budget of 10⁶): %v", it, g.warmCost, err)
		}
		if err != nil {
			break
		}
	}
	// A budget of 10 transitions at their cost so far ends the warmup
	// after pilotGuardSteps: it could not make 2·autoPartialMin.
	shortStop := func() (fault string) {
		g := &pilotGuard{warmup: 100, warmupBudget: 1e6, sampleBudget: 1e6, keep: 1}
		for it := range 100 {
			if err := g.Record(ev(it, true, 1e5, 0)); err != nil {
				if it != pilotGuardSteps-1 || !g.short || !g.overBudget {
					return fmt.Sprintf("a warmup of 10 transitions' budget ended at transition %d (short %v): %v", it, g.short, err)
				}
				return ""
			}
		}
		return "a warmup of 10 transitions' budget ran 100"
	}
	if f := shortStop(); f != "" {
		t.Error(f)
	}
	pilotNoShortStop = true
	if f := shortStop(); f == "" {
		t.Error("mutant pilotNoShortStop: not caught")
	} else {
		t.Logf("mutant pilotNoShortStop caught: %s", f)
	}
	pilotNoShortStop = false
	g = &pilotGuard{price: pricing{step: 10}, warmup: 2, warmupBudget: 1e6, sampleBudget: 1e3, keep: 1}
	g.Record(ev(0, true, 1, 0))
	g.Record(ev(1, true, 1, 0))
	for it := 2; ; it++ {
		if err := g.Record(ev(it, false, 90, 0)); err != nil {
			if !g.sampled || g.sampleCost != 1000 {
				t.Fatalf("sampling ended at %v units, sampled %v: %v", g.sampleCost, g.sampled, err)
			}
			break
		}
	}
	// partialScore: iid draws score about their number per their cost.
	rng := rand.New(rand.NewPCG(1, 2))
	g = &pilotGuard{warmup: 1000, warmupBudget: 1e12, sampleBudget: 1e12, keep: 1}
	for it := range 200 {
		e := ev(it, true, 1000, 0)
		e.Theta[0] = rng.NormFloat64()
		g.Record(e)
	}
	rate, _, m := g.partialScore()
	if m != 100 || !(rate > 0.5*100/1e5*costPerRate && rate < 2*100/1e5*costPerRate) {
		t.Errorf("partial score %v from %d draws, want about %v from 100", rate, m, 100/1e5*costPerRate)
	}
	// A chain that never moved in the latter half: no ESS is defined, and
	// it scores 0 on its 100 draws.
	g = &pilotGuard{warmup: 1000, warmupBudget: 1e12, sampleBudget: 1e12, keep: 1}
	for it := range 200 {
		e := ev(it, true, 1000, 0)
		e.Theta[0] = float64(min(it, 90))
		g.Record(e)
	}
	if rate, _, m := g.partialScore(); m != 100 || rate != 0 {
		t.Errorf("a chain that never moved: rate %v from %d draws, want 0 from 100", rate, m)
	}
	if _, _, m := (&pilotGuard{keep: 1, kept: make([]float64, 30), keptCosts: make([]float64, 30)}).partialScore(); m != 0 {
		t.Errorf("scored %d draws, fewer than autoPartialMin", m)
	}
}

// TestCVBatchFloor checks the floor on the control-variate kernels' batch
// that lets the automatic default skip their pilots: far below N on a tall
// near-Gaussian logistic regression, at or above N/minibatchDatumCost on a
// nearly separable one (labels the sign of a strong linear predictor plus
// a little noise, as examples/fashion's nearly are), where Choose lists
// the -CV-CN candidates as not piloted and says why.
func TestCVBatchFloor(t *testing.T) {
	_, cv, la := cvProblem(t, "logistic", 20000, 5, 1)
	floor, ok := cvBatchFloor(cv, la, 1)
	if !ok || !(floor > 0 && floor < 20000/20) {
		t.Fatalf("near-Gaussian N = 20000, d = 5: floor %v (ok %v), want in (0, N/20)", floor, ok)
	}

	const n, d = 3000, 10
	rng := rand.New(rand.NewPCG(3, 3))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += 3 * x[i*d+j]
		}
		if z+0.5*rng.NormFloat64() > 0 {
			y[i] = 1
		}
	}
	e, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 10)
	if err != nil {
		t.Fatal(err)
	}
	p := &Posterior{Energy: e, Prior: prior}
	la, err = FindLaplace(context.Background(), p, make([]float64, d), &MAPSettings{Tol: AutoMAPTol})
	if err != nil {
		t.Fatal(err)
	}
	cv, err = ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	floor, ok = cvBatchFloor(cv, la, 1)
	if !ok || !(minibatchDatumCost*floor >= n) {
		t.Fatalf("nearly separable N = %d, d = %d: floor %v (ok %v), want ≥ N/%d", n, d, floor, ok, minibatchDatumCost)
	}
	if testing.Short() {
		t.Skip("Choose's pilots take seconds")
	}
	c, err := Choose(context.Background(), p, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var skipped int
	for _, cand := range c.Candidates {
		if strings.HasSuffix(cand.Name, "-CV-CN") {
			if !strings.HasPrefix(cand.Err, "not piloted: the control-variate bound's C·M") {
				t.Errorf("%s: %q, want not piloted for its C·M", cand.Name, cand.Err)
			}
			skipped++
		}
	}
	if skipped == 0 || strings.Contains(c.Name, "-CV") {
		t.Fatalf("chose %s with %d -CV-CN candidates skipped: %s", c.Name, skipped, c)
	}
}

// Choice.Phases counts the choice's passes over the data: the MAP and
// Laplace approximation's own count first, one for the control variates,
// then each piloted candidate's counted cost over N, and "other" last
// with no passes; Passes sums them, String carries them (no CPU time, so
// equal seeds give equal strings) and PhasesText adds the CPU seconds.
func TestChoicePhasesCounted(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 4000, 3, 1)
	c, err := Choose(context.Background(), p, &Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Phases) < 3 || c.Laplace == nil {
		t.Fatalf("phases %+v, Laplace %v: want the MAP, the control variates, pilots and other", c.Phases, c.Laplace)
	}
	if ph := c.Phases[0]; ph.Name != "MAP and Laplace approximation" || ph.Passes != float64(c.Laplace.Passes) {
		t.Errorf("first phase %+v, want the MAP and Laplace approximation's %d passes", ph, c.Laplace.Passes)
	}
	if ph := c.Phases[1]; ph.Name != "control variates" || ph.Passes != 1 {
		t.Errorf("second phase %+v, want the control variates' one pass", ph)
	}
	if ph := c.Phases[len(c.Phases)-1]; ph.Name != choiceOther || ph.Passes != 0 {
		t.Errorf("last phase %+v, want %q with no passes", ph, choiceOther)
	}
	sum, pilots := 0.0, 0
	for _, ph := range c.Phases {
		sum += ph.Passes
		if strings.HasPrefix(ph.Name, "pilot ") {
			pilots++
			var cost float64
			for _, k := range c.Candidates {
				if "pilot "+k.Name == ph.Name {
					cost = k.Cost
				}
			}
			if want := cost / float64(p.Len()); ph.Passes != want || !(want > 0) {
				t.Errorf("%s: %v passes, want its counted cost over N, %v", ph.Name, ph.Passes, want)
			}
		}
	}
	if pilots == 0 {
		t.Errorf("no pilot phase in %+v", c.Phases)
	}
	if c.Passes() != sum {
		t.Errorf("Passes() = %v, want the phases' sum %v", c.Passes(), sum)
	}
	if s := c.String(); !strings.Contains(s, fmt.Sprintf("the choice read %.3g passes over the data", sum)) || strings.Contains(s, "CPU") {
		t.Errorf("String %q: want the passes and no CPU time", s)
	}
	if s := c.PhasesText(); !strings.Contains(s, "CPU-s") || !strings.Contains(s, "MAP and Laplace approximation") {
		t.Errorf("PhasesText %q: want each phase with its CPU seconds", s)
	}
}

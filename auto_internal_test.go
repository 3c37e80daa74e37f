// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// A pilot whose pace cannot reach the best pilot's ESS per second is
// stopped once pilotGuardSteps transitions show it, and not before.
func TestPilotGuard(t *testing.T) {
	canceled := false
	g := &pilotGuard{beat: 100, cancel: func() { canceled = true }}
	ev := &Event{Warmup: true, Iteration: pilotGuardSteps - 2, Elapsed: time.Second}
	g.Record(ev) // too early to judge
	if canceled {
		t.Fatal("stopped before pilotGuardSteps transitions")
	}
	ev.Iteration, ev.Elapsed = 9, 100*time.Millisecond // 20 ESS/s at most, but too soon to judge
	g.Record(ev)
	if canceled {
		t.Fatal("stopped before pilotGuardTime")
	}
	ev.Iteration, ev.Elapsed = 99, time.Second // 2·100/1 s = 200 ESS/s at most: may beat 100
	g.Record(ev)
	if canceled {
		t.Fatal("stopped a pilot that could still win")
	}
	ev.Iteration = 9 // 2·10/1 s = 20 ESS/s at most
	g.Record(ev)
	if !canceled || g.stopped != 20 || g.steps != 10 {
		t.Fatalf("not stopped at 20 ESS/s at most: canceled %v, bound %v after %d", canceled, g.stopped, g.steps)
	}
	free := &pilotGuard{cancel: func() { t.Fatal("a first pilot (nothing to beat) was stopped") }}
	free.Record(ev)
	// By its clock, a warmup past the time limit is ended, and the start
	// of sampling noted.
	clock := time.Duration(0)
	canceled = false
	g = &pilotGuard{cancel: func() { canceled = true }, now: func() time.Duration { return clock }, timeout: time.Second}
	ev.Iteration, ev.Elapsed = 99, time.Hour // wall time is not the clock
	clock = 900 * time.Millisecond
	g.Record(ev)
	if canceled {
		t.Fatal("ended a warmup within its limit by the clock")
	}
	clock = 1100 * time.Millisecond
	g.Record(ev)
	if !canceled || !g.timedOut {
		t.Fatalf("did not end a warmup past its limit: canceled %v, timedOut %v", canceled, g.timedOut)
	}
	ev.Warmup = false
	g.Record(ev)
	if !g.sampling || g.samplingStart != clock {
		t.Errorf("sampling %v from %v, want from %v", g.sampling, g.samplingStart, clock)
	}
}

// TestPassTime: the automatic default times a pass over the data on at most
// autoPassSample of them, scaled to N — not a whole pass of its own on tall
// data — and reports a non-finite energy there as an error.
func TestPassTime(t *testing.T) {
	for _, n := range []int{1000, autoPassSample + 5000} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = 1, float64(i%2)
		}
		lr, err := NewLogisticRegression(x, y, 1)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := NewTarget(&Posterior{Energy: lr})
		if err != nil {
			t.Fatal(err)
		}
		pass, err := passTime(tg, []float64{0.5})
		if err != nil || !(pass > 0) {
			t.Fatalf("N = %d: %v, %v", n, pass, err)
		}
		if want := int64(min(n, autoPassSample)); tg.Evals() != want {
			t.Errorf("N = %d: %d evaluations, want %d", n, tg.Evals(), want)
		}
		if _, err := passTime(tg, []float64{math.NaN()}); err == nil {
			t.Errorf("N = %d: no error for a NaN energy", n)
		}
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

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAutoChoiceCostMeasure measures the automatic default's choice — the
// process's CPU time at each step it reports (Settings.ChoiceProgress), so
// CPU per phase — on a tall logistic regression (N = 10⁶, d = 20) and on
// issue 43's custom multilevel energy (N = 10⁵, 5 fixed effects, 500
// groups: d = 505). It only logs; run with EXACTMH_MEASURE=1 and -v
// (figures/bench/auto_choice.txt).
func TestAutoChoiceCostMeasure(t *testing.T) {
	if os.Getenv("EXACTMH_MEASURE") == "" {
		t.Skip("a measurement: set EXACTMH_MEASURE=1")
	}
	rows := []struct {
		name string
		p    func() *Posterior
	}{
		{"logistic N=1e6 d=20", func() *Posterior { p, _, _ := cvProblem(t, "logistic", 1000000, 20, 1); return p }},
		{"custom multilevel N=1e5 d=505", func() *Posterior { return customMultilevelPosterior(t, 100000, 5, 500) }},
		{"wide logistic N=1e5 d=200", func() *Posterior { return wideLogistic(t, 100000, 200) }},
	}
	for _, r := range rows {
		if w := os.Getenv("EXACTMH_MEASURE_ROW"); w != "" && !strings.HasPrefix(r.name, w) {
			continue
		}
		p := r.p()
		last, _ := cpuTime()
		start := last
		report := func(step string) {
			now, _ := cpuTime()
			t.Logf("  %s: +%.2f CPU-s: %s", r.name, (now - last).Seconds(), step)
			last = now
		}
		c, err := Choose(context.Background(), p, &Settings{Seed: 1, ChoiceProgress: report})
		if err != nil {
			t.Fatal(err)
		}
		end, _ := cpuTime()
		var passes int
		if c.Laplace != nil {
			passes = c.Laplace.Passes
		}
		t.Logf("%s: chose %s in %.2f CPU-s (%v wall); MAP and Laplace %d passes\n  %v\n  %s", r.name, c.Name, (end - start).Seconds(), c.Time.Round(time.Millisecond), passes, c, c.PhasesText())
	}
}

// wideLogistic is examples/tall's wide logistic regression: x_i ~
// N(0, I_d/d), θ* ~ N(0, I_d), flat prior.
func wideLogistic(t *testing.T, n, d int) *Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64() / math.Sqrt(float64(d))
			z += x[i*d+j] * w[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return &Posterior{Energy: e}
}

// TestWarmupStopWideMeasure measures the warmup that stops at the
// Crank–Nicolson independence limit (chainRunner.independenceLimit) on the
// wide logistic row (N = 10⁵, d = 200): full-batch MH-CN from the Laplace
// approximation, 2 chains × (1000 warmup + 500 draws), uncapped (warmup
// stops) and with MaxScale 10³⁰⁰ (the same moves, as no scale reaches it,
// but a cap, so warmup runs to its end). It only logs; run with
// EXACTMH_MEASURE=1 and -v (figures/bench/default_rows.txt).
func TestWarmupStopWideMeasure(t *testing.T) {
	if os.Getenv("EXACTMH_MEASURE") == "" {
		t.Skip("a measurement: set EXACTMH_MEASURE=1")
	}
	p := wideLogistic(t, 100000, 200)
	la, err := FindLaplace(context.Background(), p, make([]float64, 200), &MAPSettings{Tol: AutoMAPTol})
	if err != nil {
		t.Fatal(err)
	}
	for _, maxScale := range []float64{0, 1e300} {
		cn, err := la.CrankNicolson()
		if err != nil {
			t.Fatal(err)
		}
		cn.MaxScale = maxScale
		cpu0, _ := cpuTime()
		res, err := Sample(context.Background(), p, MH{Proposal: cn}, &Settings{Chains: 2, Warmup: 1000, Draws: 500, Seed: 1, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		cpu1, _ := cpuTime()
		s := res.Summary()
		var warm, samp int64
		for _, ch := range res.Chains {
			warm += ch.Warmup.Evals
			samp += ch.Sampling.Evals
		}
		t.Logf("MaxScale %g: %.1f CPU-s; warmup %.4g passes, sampling %.4g passes; min bulk ESS %.0f; chain 0 scale %.3g, acceptance %.3f; stop: %q",
			maxScale, (cpu1 - cpu0).Seconds(), float64(warm)/1e5, float64(samp)/1e5, s.MinESSBulk(), res.Chains[0].Scale, res.Chains[0].Sampling.AcceptRate(), res.Chains[0].WarmupStop)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// isoGaussian is the d-dimensional standard normal as a posterior: one
// datum at the origin with identity covariance and a flat prior, so that
// a gradient evaluation is one datum gradient.
func isoGaussian(t testing.TB, d int) *exactmh.Posterior {
	eye := mat.NewSymDense(d, nil)
	for j := range d {
		eye.SetSym(j, j, 1)
	}
	e, err := model.NewGaussianMean(make([]float64, d), d, eye)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e}
}

func TestNUTSErrors(t *testing.T) {
	g := conjugate(t, 100)
	tg, _ := exactmh.NewTarget(g.Posterior)
	noGrad, _ := exactmh.NewTarget(&exactmh.Posterior{Energy: &statementOne{x: []float64{1, -1}}})
	for name, k := range map[string]exactmh.NUTS{
		"negative depth": {MaxDepth: -1},
		"huge depth":     {MaxDepth: 31},
		"bad delta":      {MaxDeltaH: -1},
		"NaN delta":      {MaxDeltaH: math.NaN()},
		"bad scale":      {Scale: -0.1},
		"metric dim":     {Metric: mustDiag(t, 1, 2, 3)},
	} {
		if _, err := k.Start(tg, g.Mean); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := (exactmh.NUTS{}).Start(noGrad, []float64{0}); err == nil {
		t.Error("no gradient: no error")
	}
}

// Each transition's tree is consistent: a tree of depth j integrated
// 2^j − 1 leapfrog steps, plus up to 2^j more for a discarded subtree; each
// step reads the N data once for the energy and the gradient together;
// the depth never exceeds MaxDepth; the acceptance statistic is in [0, 1].
func TestNUTSTree(t *testing.T) {
	g := conjugate(t, 100)
	for _, k := range []exactmh.NUTS{{}, {MaxDepth: 3}, {MaxDepth: 1}} {
		res, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{
			Chains: 2, Warmup: 300, Draws: 300, Seed: 5, Init: g.Mean})
		if err != nil {
			t.Fatal(err)
		}
		maxDepth := k.MaxDepth
		if maxDepth == 0 {
			maxDepth = 10
		}
		depths := make(map[int]int)
		for _, ch := range res.Chains {
			for _, in := range ch.Infos {
				lf := in.GradEvals / res.N
				depths[in.TreeDepth]++
				switch {
				case in.GradEvals%res.N != 0 || in.Evals != in.GradEvals:
					t.Fatalf("MaxDepth %d: %d energy and %d gradient evaluations: not whole leapfrog steps of one read each", maxDepth, in.Evals, in.GradEvals)
				case in.TreeDepth > maxDepth:
					t.Fatalf("tree depth %d > MaxDepth %d", in.TreeDepth, maxDepth)
				case lf < 1<<in.TreeDepth-1 || lf > 1<<(in.TreeDepth+1)-1:
					t.Fatalf("depth %d with %d leapfrog steps", in.TreeDepth, lf)
				case !(in.AcceptProb >= 0 && in.AcceptProb <= 1):
					t.Fatalf("acceptance statistic %v", in.AcceptProb)
				}
			}
		}
		t.Logf("MaxDepth %d: step %.3g, tree depths %v, accept stat target %.2f", maxDepth, res.Chains[0].Scale, depths, res.Settings.TargetAccept)
		if p := res.Chains[0].Params; p["max_depth"] != float64(maxDepth) || p["max_delta_h"] != 1000 {
			t.Errorf("Params %v", p)
		}
	}
}

// A step far too long for the target makes every trajectory diverge: the
// transitions say so, the totals count them, and the chain stays put.
func TestNUTSDivergence(t *testing.T) {
	g := conjugate(t, 100)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.NUTS{Scale: 50}, &exactmh.Settings{
		Chains: 1, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: 50, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Sampling()
	if tot.Divergent != 50 || tot.Accepted != 0 {
		t.Errorf("%d divergent transitions and %d moves of 50, want 50 and 0", tot.Divergent, tot.Accepted)
	}
	for _, in := range res.Chains[0].Infos {
		if !in.Divergent || in.TreeDepth != 0 || in.GradEvals != res.N {
			t.Fatalf("Info %+v: want a divergent single leapfrog step", in)
		}
	}
	if w := strings.Join(res.Summary().Warnings, "\n"); !strings.Contains(w, "50 of 50 transitions after warmup diverged") {
		t.Errorf("Summary warnings %q do not report the divergences", w)
	}
}

// On the 100-dimensional standard normal NUTS with Stan's settings and
// warmup (diagonal metric, adapt_delta 0.8, maximum depth 10) must be as
// efficient as Stan is there: a step near 0.3–0.4 (the optimal step of
// Hamiltonian integrators shrinks like d^{−1/4}), trees of depth 3–4 (7 to
// 15 leapfrog steps), and antithetic draws of the means — bulk ESS above
// the number of draws — for a bulk ESS per gradient evaluation around
// 0.1. The test accepts 0.03 to 0.5 and reports the figures.
func TestNUTSGaussian100(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const d = 100
	p := isoGaussian(t, d)
	res, err := exactmh.Sample(context.Background(), p, exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Sampling()
	minESS, minESSSq, meanESS := math.Inf(1), math.Inf(1), 0.0
	for j := range d {
		x := res.Samples(j)
		e := diagnostics.ESSBulk(x)
		minESS = math.Min(minESS, e)
		meanESS += e / d
		sq := make([][]float64, len(x))
		for c := range x {
			sq[c] = make([]float64, len(x[c]))
			for i, v := range x[c] {
				sq[c][i] = v * v
			}
		}
		minESSSq = math.Min(minESSSq, diagnostics.ESSBulk(sq))
	}
	var depth float64
	for _, ch := range res.Chains {
		for _, in := range ch.Infos {
			depth += float64(in.TreeDepth) / float64(tot.Steps)
		}
	}
	grads := float64(tot.GradEvals)
	t.Logf("d = %d, %d draws: step %.3f, mean tree depth %.2f, %.1f leapfrog steps per draw, accept stat target %.2f, %d divergent",
		d, tot.Steps, res.Chains[0].Scale, depth, grads/float64(tot.Steps), res.Settings.TargetAccept, tot.Divergent)
	t.Logf("bulk ESS of θ_j: min %.0f, mean %.0f (%.3f and %.3f per gradient); of θ_j²: min %.0f (%.4f per gradient)",
		minESS, meanESS, minESS/grads, meanESS/grads, minESSSq, minESSSq/grads)
	if r := minESS / grads; !(r > 0.03 && r < 0.5) {
		t.Errorf("min bulk ESS per gradient %.3f, want 0.03–0.5", r)
	}
	if s := res.Chains[0].Scale; !(s > 0.2 && s < 0.6) {
		t.Errorf("step %.3f, want 0.2–0.6", s)
	}
	if tot.Divergent > 0 {
		t.Errorf("%d divergent transitions on a Gaussian", tot.Divergent)
	}
}

// On the logistic posterior of the benchmarks (N = 1000, d = 50) NUTS
// beats MH by orders of magnitude per datum evaluation and per second:
// MH's random walk needs about d² steps per independent draw, NUTS a few
// leapfrog steps of N gradient reads each.
func TestNUTSLogisticVersusMH(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	p := mnistLikeGauss(t)
	mp, err := exactmh.FindMAP(context.Background(), p, make([]float64, p.Dim()), nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ess, perEval, perSec float64
	}
	rows := make(map[string]row)
	for _, k := range []exactmh.Kernel{exactmh.MH{}, exactmh.NUTS{}} {
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Seed: 2, Init: mp.Theta, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary()
		minESS := math.Inf(1)
		for _, q := range s.Params {
			minESS = math.Min(minESS, q.ESSBulk)
		}
		tot := res.Sampling()
		r := row{ess: minESS, perEval: minESS / float64(tot.Evals+tot.GradEvals), perSec: minESS / tot.Time.Seconds()}
		rows[k.Name()] = r
		t.Logf("%-4s: min bulk ESS %6.0f of %d draws, %8.0f datum evaluations per draw, ESS per 10⁶ evaluations %8.3f, ESS/s %8.1f (%v sampling, one worker)",
			k.Name(), r.ess, tot.Steps, float64(tot.Evals+tot.GradEvals)/float64(tot.Steps), 1e6*r.perEval, r.perSec, tot.Time.Round(1e6))
	}
	if nuts, mh := rows["NUTS"], rows["MH"]; !(nuts.perEval > 10*mh.perEval) {
		t.Errorf("NUTS %.3g ESS per datum evaluation, MH %.3g: want NUTS ahead by 10×", nuts.perEval, mh.perEval)
	}
}

// BenchmarkNUTSStepLogistic times NUTS transitions on the logistic
// posterior of the other benchmarks (N = 1000, d = 50) with the step and
// diagonal metric a warmup of 500 transitions adapted, from the posterior
// mean: a transition costs its leapfrog steps (reported as
// "leapfrog/step"), each N energy and gradient evaluations in one read.
func BenchmarkNUTSStepLogistic(b *testing.B) {
	p := mnistLikeGauss(b)
	res, err := exactmh.Sample(context.Background(), p, exactmh.NUTS{}, &exactmh.Settings{Chains: 1, Warmup: 500, Draws: 100, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	k := exactmh.NUTS{Scale: res.Chains[0].Scale, Metric: res.Chains[0].Metric}
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := k.Start(tgt, res.Mean())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	g0 := tgt.GradEvals()
	for b.Loop() {
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tgt.GradEvals()-g0)/float64(b.N)/float64(p.Len()), "leapfrog/step")
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// poissonGaussian returns a Poisson regression (log link) of n data with an
// intercept and d − 1 features x ~ N(0, 0.5²), θ* = (1, 0.5, −0.5, …), under
// the Gaussian prior N(0, 5²): no Box or Ball, so f‴ = e^z is unbounded on
// the support.
func poissonGaussian(t *testing.T, n, d int) *exactmh.Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		row := x[i*d : (i+1)*d]
		row[0] = 1
		z := 1.0
		for j := 1; j < d; j++ {
			row[j] = 0.5 * rng.NormFloat64()
			z += row[j] * 0.5 * float64(1-2*(j%2))
		}
		// Poisson(e^z) by inversion.
		lam, k, p := math.Exp(z), 0.0, math.Exp(-math.Exp(z))
		u, cdf := rng.Float64(), p
		for u > cdf {
			k++
			p *= lam / k
			cdf += p
		}
		y[i] = k
	}
	e, err := model.NewGLM(x, y, d, model.PoissonFamily{})
	if err != nil {
		t.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 5)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// TestPoissonGaussianPriorCV: a Poisson regression under a Gaussian prior
// gets control variates through LossGrowther's pair-wise bound
// (growthDistance), which CheckBound finds valid on pairs tens of
// posterior sds from θ̂; TFMH on the rewrite keeps detailed balance on a
// pair of points 8 sds either side of θ̂ (mcmctest.Pairwise); and the
// mutant bound without the growth factor e^{s·max(a, b)} is caught by
// CheckBound (about 27 sds out, where TFMH's factorised acceptance is too
// small for a pairwise test to measure).
func TestPoissonGaussianPriorCV(t *testing.T) {
	p := poissonGaussian(t, 3000, 3)
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(p, la)
	if err != nil {
		t.Fatalf("ControlVariates of a Poisson regression under a Gaussian prior: %v", err)
	}
	b, err := cv.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	sd := la.SD()
	spread := 10 * math.Max(sd[0], math.Max(sd[1], sd[2]))
	if v, err := exactmh.CheckBound(cv, b, &exactmh.CheckOptions{Points: 300, Center: la.Mean, Spread: spread, Seed: 3}); err != nil || !(v.Ratio > 0.1) {
		t.Fatalf("the pair-wise bound fails: %v", err)
	} else {
		t.Logf("worst |ΔR_i|/(c_i·M) = %.3g", v.Ratio)
	}
	// The pair: θ̂ + 8 sds along the last coordinate, where the growth
	// factor matters, and the point on the other side of θ̂ with about the
	// same density (bisection), so that both moves are often accepted.
	a, bb := append([]float64(nil), la.Mean...), append([]float64(nil), la.Mean...)
	a[2] += 8 * sd[2]
	la0, err := p.LogDensity(a)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 40.0
	for range 60 {
		mid := (lo + hi) / 2
		bb[2] = la.Mean[2] - mid*sd[2]
		if l, _ := p.LogDensity(bb); l > la0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	bb[2] = la.Mean[2] - (lo+0.05)*sd[2] // a ratio of some tenths of a nat
	tfmh := func(bound *exactmh.DiffBound) func(exactmh.Proposal) exactmh.Kernel {
		return func(q exactmh.Proposal) exactmh.Kernel {
			return exactmh.TFMH{Proposal: q, Bound: bound, KeepMinibatch: true, TrustBound: bound != nil}
		}
	}
	r, err := mcmctest.Pairwise(cv, tfmh(nil), a, bb, 0, 40000, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("θ̂ %.4g, sds %.3g; TFMH on the rewrite: %v", la.Mean, sd, r)
	if math.Abs(r.Z) > 4 {
		t.Errorf("TFMH on the rewrite breaks detailed balance: %v", r)
	}
	// The mutant: the same c_i with M(θ, θ′) without e^{s·max(a, b)}.
	plain := &exactmh.DiffBound{C: b.C, Metric: func(x, y []float64) float64 {
		return b.Metric(x, y) / exactmh.CVGrowthFactor(cv, x, y)
	}}
	var viol *exactmh.BoundViolation
	if v, err := exactmh.CheckBound(cv, plain, &exactmh.CheckOptions{Points: 300, Center: la.Mean, Spread: spread, Seed: 3}); !errors.As(err, &viol) {
		t.Errorf("the bound without the growth factor is not caught (worst ratio %.3g, %v)", v.Ratio, err)
	} else {
		t.Logf("mutant bound caught: %v", err)
	}
}

// The automatic default samples a Poisson regression under a Gaussian
// prior with a control-variate kernel (pair-wise bound, LossGrowther)
// where it had only full-batch candidates: a -CV- choice reading far less
// than N data per transition.
func TestAutoPoissonGaussianPrior(t *testing.T) {
	if testing.Short() {
		t.Skip("pilots take seconds")
	}
	p := poissonGaussian(t, 100000, 5)
	res, err := exactmh.Sample(context.Background(), p, nil, &exactmh.Settings{Chains: 2, Warmup: 300, Draws: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Choice)
	s := res.Summary()
	if !strings.Contains(res.Choice.Name, "-CV") {
		t.Errorf("chose %s, want a control-variate kernel", res.Choice.Name)
	}
	if frac := s.EvalsPerStep / float64(p.Len()); frac > 0.01 {
		t.Errorf("%.4g data per transition, %.2g%% of N: want at most 1%%", s.EvalsPerStep, 100*frac)
	}
	t.Logf("%.4g data per transition, min bulk ESS %.0f, R-hat %.3f", s.EvalsPerStep, s.MinESSBulk(), s.MaxRHat())
}

// Far from θ̂ the pair-wise bound's factor e^{s·max(a, b)} overflows to
// +Inf: TFMH and TunaMH on the rewrite then take full-batch steps (or
// reject), never hang or crash, and report no bound violation.
func TestPoissonGrowthFarSteps(t *testing.T) {
	p := poissonGaussian(t, 2000, 3)
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []exactmh.Kernel{
		exactmh.TFMH{Proposal: exactmh.RandomWalk{}, Scale: 50, KeepMinibatch: true},
		exactmh.TunaMH{Proposal: exactmh.RandomWalk{}, Scale: 50, Chi: 1e-3},
	} {
		res, err := exactmh.Sample(context.Background(), cv, k, &exactmh.Settings{Chains: 1, Warmup: 0, NoAdapt: true, Draws: 200, Seed: 4, Init: la.Mean})
		if err != nil {
			t.Fatalf("%T with steps of 50: %v", k, err)
		}
		tot := res.Sampling()
		t.Logf("%s: acceptance %.3f, %.4g data per step, %d full steps of %d", res.Kernel, tot.AcceptRate(), tot.EvalsPerStep(), tot.Fallbacks, tot.Steps)
		if tot.Fallbacks == 0 {
			t.Errorf("%s with steps of 50 posterior-scale units: no full-batch step", res.Kernel)
		}
	}
}

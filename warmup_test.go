// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// The metric windows are Stan's: for 1000 warmup transitions, an initial
// buffer of 75, windows of 25, 50, 100, 200 and a last one stretched to
// 500, a terminal buffer of 50; shorter warmups get 15%/75%/10%, and none
// below 20.
func TestMetricWindows(t *testing.T) {
	for _, c := range []struct {
		warmup int
		ends   []int
	}{
		{1000, []int{99, 149, 249, 449, 949}},
		{2000, []int{99, 149, 249, 449, 849, 1949}},
		{150, []int{99}},
		{300, []int{99, 149, 249}},
		{100, []int{89}},
		{20, []int{17}},
		{19, nil},
	} {
		if got := exactmh.MetricWindowEnds(c.warmup); !slices.Equal(got, c.ends) {
			t.Errorf("warmup %d: windows end at %v, want %v", c.warmup, got, c.ends)
		}
	}
}

// Warmup estimates the posterior covariance of a correlated Gaussian: its
// diagonal with Settings.Metric "diag", the whole matrix with "dense"; with
// "unit" (or NoAdapt) the kernel's metric stays.
func TestMetricAdaptation(t *testing.T) {
	g := conjugate(t, 300)
	sd := g.SD()
	for _, kind := range []exactmh.MetricKind{exactmh.MetricDiag, exactmh.MetricDense, exactmh.MetricUnit} {
		for _, k := range []exactmh.Kernel{exactmh.MALA{}, exactmh.HMC{Steps: 5}} {
			res, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{
				Chains: 2, Warmup: 1000, Draws: 10, Seed: 3, Init: g.Mean, Metric: kind, TargetAccept: 0.6})
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range res.Chains {
				m := ch.Metric
				if want := kind; m.Kind() != want {
					t.Fatalf("%s, Settings.Metric %q: the chain's metric is %q", k.Name(), kind, m.Kind())
				}
				if kind == exactmh.MetricUnit {
					continue
				}
				// The last window holds 500 draws of an autocorrelated
				// chain: a variance within 35% is a fair estimate.
				v := m.InvMassDiag()
				for j := range v {
					if r := v[j] / (sd[j] * sd[j]); !(r > 0.65 && r < 1.35) {
						t.Errorf("%s %s chain %d: M⁻¹[%d][%d] = %.4g, posterior variance %.4g", k.Name(), kind, ch.Chain, j, j, v[j], sd[j]*sd[j])
					}
				}
				if kind == exactmh.MetricDense {
					c := m.InvMass()
					rho := c.At(0, 1) / math.Sqrt(c.At(0, 0)*c.At(1, 1))
					want := g.Cov.At(0, 1) / (sd[0] * sd[1])
					if math.Abs(rho-want) > 0.15 {
						t.Errorf("%s chain %d: estimated correlation %.3f, posterior %.3f", k.Name(), ch.Chain, rho, want)
					}
				}
			}
		}
	}
	// A kernel's own metric is the starting point; "unit" keeps it.
	own, _ := exactmh.NewDenseMetric(mat.NewSymDense(2, []float64{1, 0.5, 0.5, 1}))
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MALA{Metric: own}, &exactmh.Settings{
		Chains: 1, Warmup: 100, Draws: 10, Init: g.Mean, Metric: exactmh.MetricUnit})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(res.Chains[0].Metric.InvMass(), own.InvMass()) {
		t.Errorf("Settings.Metric unit changed the kernel's metric to %v", mat.Formatted(res.Chains[0].Metric.InvMass()))
	}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MALA{}, &exactmh.Settings{Metric: "full"}); err == nil {
		t.Error(`Settings.Metric "full": no error`)
	}
}

// TestMetricAuto: the default metric (MetricAuto) is dense on a ridge,
// where a diagonal one would cap a gradient kernel's step (ρ = −0.96: the
// diagonally whitened posterior has condition number 49), and on a mildly
// correlated posterior (ρ = 0.42) it is MetricDiag's, draw for draw.
func TestMetricAuto(t *testing.T) {
	ridge, err := mcmctest.ConjugateGaussian(300, []float64{1, -1}, mat.NewSymDense(2, []float64{1, -0.96, -0.96, 1}),
		[]float64{0, 0}, []float64{3, 3}, 1, 17)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []exactmh.Kernel{exactmh.MALA{}, exactmh.NUTS{}} {
		res, err := exactmh.Sample(context.Background(), ridge.Posterior, k, &exactmh.Settings{
			Chains: 2, Warmup: 1000, Draws: 10, Seed: 3, Init: ridge.Mean})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range res.Chains {
			if ch.Metric.Kind() != exactmh.MetricDense {
				t.Errorf("%s on the ridge, chain %d: default metric %q, want dense", k.Name(), ch.Chain, ch.Metric.Kind())
				continue
			}
			c := ch.Metric.InvMass()
			if rho := c.At(0, 1) / math.Sqrt(c.At(0, 0)*c.At(1, 1)); math.Abs(rho+0.96) > 0.05 {
				t.Errorf("%s chain %d: estimated correlation %.3f, posterior −0.96", k.Name(), ch.Chain, rho)
			}
		}
	}
	g := conjugate(t, 300)
	var runs [2]*exactmh.Result
	for i, kind := range []exactmh.MetricKind{"", exactmh.MetricDiag} {
		runs[i], err = exactmh.Sample(context.Background(), g.Posterior, exactmh.MALA{}, &exactmh.Settings{
			Chains: 2, Warmup: 1000, Draws: 200, Seed: 3, Init: g.Mean, Metric: kind})
		if err != nil {
			t.Fatal(err)
		}
	}
	for c, ch := range runs[0].Chains {
		if ch.Metric.Kind() != exactmh.MetricDiag || !slices.Equal(ch.Metric.InvMassDiag(), runs[1].Chains[c].Metric.InvMassDiag()) {
			t.Errorf("chain %d: default metric %q %v, MetricDiag's %v", c, ch.Metric.Kind(), ch.Metric.InvMassDiag(), runs[1].Chains[c].Metric.InvMassDiag())
		}
	}
	for c := range runs[0].Chains {
		if !slices.Equal(runs[0].Chains[c].Draws, runs[1].Chains[c].Draws) {
			t.Errorf("chain %d: the default metric's draws differ from MetricDiag's on a mildly correlated posterior", c)
		}
	}
}

// An uncapped Crank–Nicolson proposal whose warmup drives its scale past
// the independence limit stops its warmup there (ChainResult.WarmupStop),
// and the draws of the fixed kernel that follows have the posterior's
// moments: a conjugate Gaussian posterior in d = 3, MH with the
// Crank–Nicolson proposal around a Gaussian with the posterior's
// covariance inflated by 1.5 and its mean shifted by half a standard
// deviation (acceptance about 0.7, above MH's target, so the scale runs
// off), 4 chains × 4000 draws, means and variances within 4 Monte Carlo
// standard errors. The same proposal capped (MaxScale 1.5) stops at its
// cap, its draws held to the same moments. Three mutants of the stop
// (exactmh.WarmupStopMutant) must each show: "early", a stop from the
// first transition at step scale 1, before the limit and inside Stan's
// initial buffer of 75; "never", warmup adapting on past the limit; and
// "uncapped only", a capped chain running its whole warmup at its cap.
func TestWarmupStopsAtIndependenceLimit(t *testing.T) {
	for _, f := range warmupStopFaults(t) {
		t.Error(f)
	}
	// Mutants: a stop long before the limit (at scale 1), and none (warmup
	// adapting on past the limit); each must show.
	for _, m := range []string{"early", "never", "uncapped only"} {
		restore := exactmh.WarmupStopMutant(m)
		faults := warmupStopFaults(t)
		restore()
		if len(faults) == 0 {
			t.Errorf("mutant %q: not caught", m)
		} else {
			t.Logf("mutant %q caught: %s (%d faults)", m, faults[0], len(faults))
		}
	}
}

// warmupStopFaults runs TestWarmupStopsAtIndependenceLimit's chains
// uncapped and capped and returns what is wrong with their warmup stops
// and moments.
func warmupStopFaults(t *testing.T) (faults []string) {
	t.Helper()
	fault := func(format string, a ...any) { faults = append(faults, fmt.Sprintf(format, a...)) }
	sigma := mat.NewSymDense(3, []float64{1, 0.3, 0, 0.3, 1, 0.2, 0, 0.2, 1})
	g, err := mcmctest.ConjugateGaussian(200, []float64{1, -2, 0.5}, sigma, []float64{0, 0, 0}, []float64{3, 3, 3}, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	sd := g.SD()
	mean := slices.Clone(g.Mean)
	for j := range mean {
		mean[j] += 0.5 * sd[j]
	}
	var cov mat.SymDense
	cov.ScaleSym(1.5, g.Cov)
	const warmup = 1000
	for _, maxScale := range []float64{0, 1.5} {
		cn, err := exactmh.NewCrankNicolson(mean, &cov)
		if err != nil {
			t.Fatal(err)
		}
		cn.MaxScale = maxScale
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 4, Warmup: warmup, Draws: 4000, Seed: 7, Init: g.Mean})
		if err != nil {
			t.Fatal(err)
		}
		for c, ch := range res.Chains {
			stopped := ch.WarmupStop != ""
			if !stopped {
				fault("MaxScale %v, chain %d: no WarmupStop after %d warmup transitions, want it stopped at the limit or the cap", maxScale, c, ch.Warmup.Steps)
			}
			limit := 40.0 // the independence limit
			if maxScale > 0 {
				limit = maxScale
			}
			switch {
			case stopped && !(ch.Warmup.Steps >= 75 && ch.Warmup.Steps < warmup && ch.Scale >= limit && (maxScale == 0 || ch.Scale == maxScale)):
				fault("MaxScale %v, chain %d stopped its warmup (%s) after %d of %d warmup transitions (want 75, Stan's initial buffer, to %[5]d) at scale %v (want ≥ %v, the independence limit or the cap, and within the cap)", maxScale, c, ch.WarmupStop, ch.Warmup.Steps, warmup, ch.Scale, limit)
			case !stopped && ch.Warmup.Steps != warmup:
				fault("MaxScale %v, chain %d: %d warmup transitions, want %d", maxScale, c, ch.Warmup.Steps, warmup)
			}
			if ch.Len() != 4000 {
				fault("MaxScale %v, chain %d: %d draws, want 4000", maxScale, c, ch.Len())
			}
		}
		t.Logf("MaxScale %v: chain 0 %s; acceptance %.3f", maxScale, res.Chains[0].WarmupStop, res.Chains[0].Sampling.AcceptRate())
		if err := mcmctest.CheckMoments(res, g.Mean, sd, 4); err != nil {
			fault("MaxScale %v: %v", maxScale, err)
		}
	}
	return faults
}

// TestWarmupEarlyDecision: a TunaMH chain whose uncapped Crank–Nicolson
// proposal reaches its independence limit in the first half of warmup
// makes its mid-warmup decision there (χ chosen, Params chi_tuned) and
// stops its warmup (WarmupStop says so) after at least Stan's initial
// buffer of 75 and before Warmup/2: TunaMH-CV-CN on a logistic regression
// like ExampleControlVariates' (N = 20,000, d = 3), 4 chains × (1000 + 2000). Runs
// cancelled before the decision and after the stop, checkpointed to bytes
// and loaded (LoadCheckpoint) then resumed, give the uninterrupted run's
// draws bit for bit. With the early decision off (exactmh.EarlyMidOff)
// the same chains decide at Warmup/2 and run past it; both runs are exact,
// and their means agree within 4 combined Monte Carlo standard errors.
func TestWarmupEarlyDecision(t *testing.T) {
	const d = 3
	x, y := simulateLogistic(20000, []float64{-1, 0, 1}, 1)
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: e}
	la, err := exactmh.FindLaplace(context.Background(), post, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(post, la)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := la.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	k := exactmh.TunaMH{Proposal: cn}
	const warmup = 1000
	base := exactmh.Settings{Chains: 4, Warmup: warmup, Draws: 2000, Seed: 7, Init: la.Mean}
	whole, err := exactmh.Sample(context.Background(), cv, k, &base)
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range whole.Chains {
		if !strings.Contains(ch.WarmupStop, "mid-warmup decision was made there") || ch.Warmup.Steps < 75 || ch.Warmup.Steps > warmup/2 || ch.Params["chi_tuned"] != 1 {
			t.Errorf("chain %d: %d warmup transitions, χ tuned %v, stop %q: want the decision and the stop at the limit, 75 … %d transitions",
				c, ch.Warmup.Steps, ch.Params["chi_tuned"], ch.WarmupStop, warmup/2)
		}
	}
	t.Logf("chain 0: %s; acceptance %.3f, data a step %.1f", whole.Chains[0].WarmupStop, whole.Chains[0].Sampling.AcceptRate(), whole.Sampling().EvalsPerStep())
	for _, cut := range []int64{100, 2000} { // before any chain's decision (at ≥ 75 each), and after every stop
		ctx, cancel := context.WithCancel(context.Background())
		set := base
		set.Recorder = &cancelAt{n: cut, cancel: cancel}
		part, err := exactmh.Sample(ctx, cv, k, &set)
		cancel()
		if part.Status != exactmh.Canceled || err == nil {
			t.Fatalf("cut at %d: status %v, err %v", cut, part.Status, err)
		}
		var buf bytes.Buffer
		if err := part.Checkpoint(&buf); err != nil {
			t.Fatal(err)
		}
		loaded, err := exactmh.LoadCheckpoint(&buf, cv, k, nil)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		res, err := exactmh.Resume(context.Background(), loaded, 0)
		if err != nil {
			t.Fatal(err)
		}
		sameDraws(t, fmt.Sprintf("TunaMH cut at %d", cut), whole, res)
	}
	restore := exactmh.EarlyMidOff()
	late, err := exactmh.Sample(context.Background(), cv, k, &base)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	for c, ch := range late.Chains {
		if ch.Warmup.Steps <= warmup/2 {
			t.Errorf("early decision off, chain %d: %d warmup transitions (%s), want more than %d", c, ch.Warmup.Steps, ch.WarmupStop, warmup/2)
		}
	}
	t.Logf("early decision off, chain 0: %d warmup transitions", late.Chains[0].Warmup.Steps)
	for j := range d {
		a, b := whole.Samples(j), late.Samples(j)
		z := (mean2(a) - mean2(b)) / math.Hypot(diagnostics.MCSEMean(a), diagnostics.MCSEMean(b))
		if math.Abs(z) > 4 {
			t.Errorf("θ%d: means of the early and the late decision differ by z = %.2f", j, z)
		}
	}
}

// mean2 is the mean over every chain's draws.
func mean2(x [][]float64) float64 {
	var s float64
	var n int
	for _, ch := range x {
		for _, v := range ch {
			s += v
		}
		n += len(ch)
	}
	return s / float64(n)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// tgmRidgeCov is the covariance of the tempered Gaussian mixture's
// posterior (examples/tall's tgm, on a 241² grid): a straight ridge along
// θ1 + θ2/2 = x̄, correlation −0.96, with modes (0, 1) and (1, −1) on it
// and a barrier of only 0.34 nats between them.
var tgmRidgeCov = []float64{0.3011, -0.5564, -0.5564, 1.1128}

// On a ridge a diagonal metric leaves the whitened posterior with a narrow
// direction of sd s = √(1 − |ρ|) (0.197 here), and MALA's drift, an
// explicit Euler step of the Langevin diffusion, overshoots across it once
// σ > 2s: the acceptance, 0.5 at σ = 2s, then falls roughly like (s/σ)³ (a
// random walk's like s/σ), so MALA's mean squared jump peaks near σ = 2s
// and its step along the ridge is capped there, while a random walk's
// jump keeps growing with σ toward the ridge's length. Whitening the ridge
// (a dense metric) lifts the cap. This is why MALA with the diagonal metric
// mixed no better per transition than MH on the mixture
// (TestMALATemperedMixture).
func TestMALADiagonalMetricOnRidge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: acceptance and jumps measured along a ridge; runs without -short")
	}
	const n = 200
	sigma := mat.NewSymDense(2, nil)
	for i := range 2 {
		for j := range 2 {
			sigma.SetSym(i, j, n*tgmRidgeCov[i*2+j])
		}
	}
	g, err := mcmctest.ConjugateGaussian(n, []float64{0.5, 0}, sigma, []float64{0, 0}, []float64{100, 100}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	v0, v1, c := g.Cov.At(0, 0), g.Cov.At(1, 1), g.Cov.At(0, 1)
	rho := c / math.Sqrt(v0*v1)
	s := math.Sqrt(1 - math.Abs(rho)) // the narrow whitened sd under the diagonal metric
	tr, det := v0+v1, v0*v1-c*c
	narrow := math.Sqrt(tr/2 - math.Sqrt(tr*tr/4-det)) // its sd in θ
	diag, err := exactmh.NewDiagMetric([]float64{v0, v1})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := exactmh.NewDenseMetric(g.Cov)
	if err != nil {
		t.Fatal(err)
	}
	// jump returns the acceptance rate and the mean squared jump ‖θ′ − θ‖²
	// per transition, in units of the narrow sd in θ.
	jump := func(k exactmh.Kernel) (acc, esjd float64) {
		t.Helper()
		res, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{
			Chains: 2, Warmup: exactmh.NoWarmup, Draws: 4000, Seed: 5, Init: g.Mean, NoAdapt: true, Metric: exactmh.MetricUnit})
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		var m int
		for _, ch := range res.Chains {
			for i := 1; i < ch.Len(); i++ {
				a, b := res.Draw(ch.Chain, i-1), res.Draw(ch.Chain, i)
				for j := range a {
					sum += (b[j] - a[j]) * (b[j] - a[j])
				}
				m++
			}
		}
		return res.Sampling().AcceptRate(), sum / float64(m) / (narrow * narrow)
	}
	var mala, walk, white [3][2]float64
	for i, f := range []float64{2, 4, 8} {
		mala[i][0], mala[i][1] = jump(exactmh.MALA{Scale: f * s, Metric: diag})
		white[i][0], white[i][1] = jump(exactmh.MALA{Scale: f * s, Metric: dense})
		walk[i][0], walk[i][1] = jump(exactmh.MH{Scale: f * narrow})
		t.Logf("σ = %.0f× the narrow sd: acceptance, squared jump: MALA diagonal metric %.3f, %5.2f; MALA dense metric %.3f, %5.2f; MH %.3f, %5.2f",
			f, mala[i][0], mala[i][1], white[i][0], white[i][1], walk[i][0], walk[i][1])
	}
	t.Logf("ρ = %.3f, narrow whitened sd s = %.3f, in θ %.3f", rho, s, narrow)
	if !(mala[0][1] > 2*mala[1][1] && mala[0][1] > 2*mala[2][1]) {
		t.Errorf("MALA, diagonal metric: squared jumps %.2f, %.2f, %.2f at σ = 2s, 4s, 8s: want the first ≥ 2× the others (the drift's cap)", mala[0][1], mala[1][1], mala[2][1])
	}
	if !(walk[2][1] > 1.8*walk[0][1]) {
		t.Errorf("MH: squared jumps %.2f at 2× the narrow sd, %.2f at 8×: want the second ≥ 1.8× the first", walk[0][1], walk[2][1])
	}
	if walk[2][1] < mala[0][1] {
		t.Errorf("MH's squared jump %.2f at 8× the narrow sd, MALA's best (σ = 2s) %.2f: want MH's ≥ MALA's", walk[2][1], mala[0][1])
	}
	if !(white[1][0] > 0.8 && white[2][1] > 10*mala[0][1]) {
		t.Errorf("MALA, dense metric: acceptance %.3f at σ = 4s, squared jump %.2f at 8s: want ≥ 0.8 and ≥ 10× the diagonal metric's best %.2f", white[1][0], white[2][1], mala[0][1])
	}
}

// tgmPosterior is the TunaMH paper's tempered mixture as examples/tall
// builds it (½N(θ1, 2) + ½N(θ1 + θ2, 2) on [−3, 3]², β = 100/N), with n
// data drawn from ½N(0, 2) + ½N(1, 2).
func tgmPosterior(t testing.TB, n int, seed uint64) *exactmh.Posterior {
	return boxedMixture(t, rand.New(rand.NewPCG(seed, 0)), n, 100/float64(n))
}

// boxedMixture is the TunaMH paper's truncated Gaussian mixture (App. J.2:
// x_i ~ ½N(θ1, σ²) + ½N(θ1 + θ2, σ²), θ = (0, 1), σ² = 2, on [−3, 3]²)
// with n data drawn from rng, tempered by beta (0: untempered).
func boxedMixture(t testing.TB, rng *rand.Rand, n int, beta float64) *exactmh.Posterior {
	t.Helper()
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sqrt2 * rng.NormFloat64()
		if rng.IntN(2) == 1 {
			x[i]++
		}
	}
	e, err := model.NewGaussianMixture(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	box, err := model.NewCube(2, -3, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: box, Beta: beta}
}

// mixing returns the smallest bulk ESS per transition over the
// coordinates and the switches between the mixture's modes (θ2 > 0.3 and
// θ2 < −0.3) per 1000 transitions.
func mixing(res *exactmh.Result) (essPerStep, switches float64) {
	ess := math.Inf(1)
	for j := range res.Dim {
		ess = math.Min(ess, diagnostics.ESSBulk(res.Samples(j)))
	}
	var sw, steps int
	for _, c := range res.Chains {
		mode := 0
		for i := range c.Len() {
			th := res.Draw(c.Chain, i)
			m := mode
			switch {
			case th[1] > 0.3:
				m = 1
			case th[1] < -0.3:
				m = -1
			}
			if mode != 0 && m != mode {
				sw++
			}
			mode = m
		}
		steps += c.Len()
	}
	return ess / float64(steps), 1000 * float64(sw) / float64(steps)
}

// On the tempered mixture (examples/tall's tgm row) MALA with the default
// diagonal metric mixes worse per transition than MH (here MH 0.015, MALA
// 0.005 effective draws per transition, mode switches 18 and 10 per 1000;
// and a MALA step costs 1.6 MH steps, the mixture reading the data twice
// for an energy and a gradient); with a dense metric, which whitens the
// ridge, it makes 0.20 and switches 144 times per 1000 — several times
// better than both. The mechanism is TestMALADiagonalMetricOnRidge's.
// (Warmup 500 as in examples/tall.)
func TestMALATemperedMixture(t *testing.T) {
	draws := 3000
	if testing.Short() {
		draws = 1500
	}
	p := tgmPosterior(t, 1000, 1)
	run := func(k exactmh.Kernel, metric exactmh.MetricKind, warmup int) (float64, float64, *exactmh.Result) {
		t.Helper()
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{
			Chains: 2, Warmup: warmup, Draws: draws, Seed: 1, Init: []float64{0.5, 0.5}, Metric: metric})
		if err != nil {
			t.Fatal(err)
		}
		e, s := mixing(res)
		return e, s, res
	}
	mhESS, mhSw, _ := run(exactmh.MH{}, "", 1000)
	diagESS, diagSw, _ := run(exactmh.MALA{}, exactmh.MetricDiag, 500)
	denseESS, denseSw, res := run(exactmh.MALA{}, exactmh.MetricDense, 500)
	t.Logf("ESS per transition (mode switches per 1000): MH %.4f (%.1f), MALA diagonal metric %.4f (%.1f), MALA dense metric %.4f (%.1f); dense M⁻¹ %v",
		mhESS, mhSw, diagESS, diagSw, denseESS, denseSw, mat.Formatted(res.Chains[0].Metric.InvMass(), mat.Squeeze()))
	if denseESS < 4*diagESS {
		t.Errorf("MALA: ESS per transition %.4f with a dense metric, %.4f with a diagonal one: want ≥ 4×", denseESS, diagESS)
	}
	if denseESS < 2*mhESS {
		t.Errorf("MALA with a dense metric: ESS per transition %.4f, MH %.4f: want ≥ 2×", denseESS, mhESS)
	}
	if denseSw < 2*mhSw {
		t.Errorf("mode switches per 1000 transitions: MALA dense metric %.1f, MH %.1f: want ≥ 2×", denseSw, mhSw)
	}
}

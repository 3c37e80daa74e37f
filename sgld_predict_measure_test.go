// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/poisson"
)

var sgldPredict = flag.Bool("sgldpredict", false, "run TestTunaMHSGLDPredictionMeasure, which compares TunaMH-SGLD's predicted acceptance with the measured one")

// sgldTargets are TunaMH-SGLD's measurement targets: the control-variate
// logistic regression of TestTunaMHSGLDChiChosen (N = 20000, d = 3) and
// the tempered logistic regression on a ball of TestTargetAcceptSweep
// (N = 1000, d = 3, β = 0.01, radius 3), each with a starting point.
func sgldTargets(t *testing.T) []struct {
	name string
	p    *Posterior
	init []float64
} {
	_, cv, la := cvProblem(t, "logistic", 20000, 3, 1)
	rng := rand.New(rand.NewPCG(5, 1000))
	const n, d = 1000, 3
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j, b := range []float64{1, -1, 0.5} {
			x[i*d+j] = rng.NormFloat64()
			z += b * x[i*d+j]
		}
		if rng.Float64() < sigmoid(z) {
			y[i] = 1
		}
	}
	e, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	ball, err := NewBall(d, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	tempered := &Posterior{Energy: e, Prior: ball, Beta: 0.01}
	m, err := FindMAP(context.Background(), tempered, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		p    *Posterior
		init []float64
	}{{"CV logistic N=20000", cv, la.Mean}, {"tempered logistic on a ball", tempered, m.Theta}}
}

// sgldAcceptAt returns, at θ with the chain's χ, scale and metric, the
// search's predicted acceptance and the chain's own mean acceptance
// probability over steps transitions from θ (θ reset after each).
func sgldAcceptAt(t *testing.T, tg *Target, theta []float64, chi, scale float64, m Metric, steps int, rng *rand.Rand) (pred, got float64) {
	t.Helper()
	ch, err := TunaMHSGLD{Chi: chi, Scale: scale, Metric: m}.Start(tg, theta)
	if err != nil {
		t.Fatal(err)
	}
	ac := ch.(*metricAux[[]int, *tunaOmega2]).auxChain
	c := ac.scheme.(*tunaSGLDChain)
	s := newChiSearch(len(theta))
	s.src.Seed(rng.Uint64(), rng.Uint64()) // probes independent across calls
	if err := s.probe(c.batch, theta, scale, c.searchProposer(theta)); err != nil {
		t.Fatal(err)
	}
	pred = s.at(c.batch, AcceptMetropolis, chi, 1).accept
	mc := probesMonteCarlo(s, chi, rng)
	var out, unres int
	for _, p := range s.pr {
		if p.out {
			out++
		}
		if p.unresolved {
			unres++
		}
	}
	t.Logf("      normal %.3f, compound Poisson %.3f, out %d unresolved %d", pred, mc, out, unres)
	for range steps {
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		if info.AcceptProb >= 0 {
			got += info.AcceptProb
		}
		copy(ac.theta, theta)
	}
	return pred, got / float64(steps)
}

// probesMonteCarlo returns the mean acceptance of the search's probes at χ
// with TunaMH's estimate simulated on each probe's sample (as
// TestTunaMoments) instead of its normal approximation.
func probesMonteCarlo(s *chiSearch, chi float64, rng *rand.Rand) float64 {
	var sum float64
	const reps = 2000
	for _, p := range s.pr {
		if p.out || p.unresolved {
			continue
		}
		a := chi * p.cm
		lambda := chi*p.cm*p.cm + p.cm
		var acc float64
		for range reps {
			l := p.rest
			for range poisson.Draw(rng, lambda) {
				keep, term := tunaTerm(p.u[rng.IntN(len(p.u))], 1, a)
				if rng.Float64() < keep {
					l += term
				}
			}
			acc += math.Exp(min(l, 0))
		}
		sum += acc / reps
	}
	return sum / float64(len(s.pr))
}

// TestTunaMHSGLDPredictionMeasure runs TunaMH-SGLD with χ chosen (Chi = 0)
// on sgldTargets and prints, per chain, the χ chosen, the acceptance the
// search predicted there (chi_accept), the final scale, the acceptance
// measured in sampling and the min bulk ESS per second; then, at 40 of the
// chain's draws with its final χ, scale and metric, the search's
// prediction against the chain's own mean acceptance probability over 400
// transitions from each. It is a measurement, not a test:
//
//	go test -run TestTunaMHSGLDPredictionMeasure -sgldpredict -v .
func TestTunaMHSGLDPredictionMeasure(t *testing.T) {
	if !*sgldPredict {
		t.Skip("run with -sgldpredict")
	}
	for _, tc := range sgldTargets(t) {
		set := &Settings{Chains: 4, Warmup: 1000, Draws: 4000, Seed: 7, Init: tc.init}
		res, err := Sample(context.Background(), tc.p, TunaMHSGLD{}, set)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: min bulk ESS %.0f, %.0f per second of sampling", tc.name, res.Summary().MinESSBulk(), res.Summary().MinESSPerSecond())
		tg := mustTarget(t, tc.p)
		rng := rand.New(rand.NewPCG(1, 2))
		for _, c := range res.Chains {
			t.Logf("  chain %d: χ %.3g chi_accept %.3f as_mh %v, scale %.4g, sampling accept %.3f",
				c.Chain, c.Params["chi"], c.Params["chi_accept"], c.Params["as_mh"], c.Scale, c.Sampling.AcceptRate())
			var sp, sg, sd float64
			const pts = 40
			for k := range pts {
				theta := c.Draws[(k*c.Len()/pts)*res.Dim : (k*c.Len()/pts+1)*res.Dim]
				p, g := sgldAcceptAt(t, tg, theta, c.Params["chi"], c.Scale, c.Metric, 400, rng)
				sp, sg, sd = sp+p, sg+g, sd+(p-g)*(p-g)
			}
			t.Logf("    at %d draws: predicted %.3f, chain's %.3f, rms difference %.3f", pts, sp/pts, sg/pts, math.Sqrt(sd/pts))
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlFixedTau is a multilevel logistic regression with a categorical
// factor of fixed scale (model.Factor.FixedTau) for GroupGibbs's kit: an
// intercept and a covariate x with β ~ N(0, 1), factor "g" (g levels, a
// random slope on x and no random intercept, τ ~ half-normal(1), log τ
// sampled) and factor "c" (k levels of fixed scale sd: effects b ~ N(0,
// sd²)), each datum's levels drawn at random. θ = (β_0, β_x, u_g_x[1…g],
// b_c[1…k], log τ). GroupGibbs pairs the intercept with c's effects and
// β_x with g's slopes for its location moves: the intercept's only
// partner is the fixed-scale term, whose prior alone identifies the
// intercept against c's mean.
type mlFixedTau struct {
	n, g, k int
	sd      float64
}

func (m mlFixedTau) dim() int { return 2 + m.g + m.k + 1 }

// build returns the posterior for data drawn at θ.
func (m mlFixedTau) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	x := make([]float64, m.n)
	ml := &model.Multilevel{
		Family: model.LogisticFamily{}, Y: make([]float64, m.n), Intercept: true,
		Fixed:   []model.Covariate{{Name: "x", Values: x}},
		FixedSD: []float64{1, 1},
		Factors: []model.Factor{
			{Name: "g", Index: make([]int32, m.n), NoIntercept: true, Slopes: []model.Covariate{{Name: "x", Values: x}}, Tau: model.HalfNormal(1)},
			{Name: "c", Index: make([]int32, m.n), FixedTau: m.sd},
		},
	}
	for i := range m.n {
		x[i] = rng.NormFloat64()
		g, c := rng.IntN(m.g), rng.IntN(m.k)
		if i < m.g { // every level has data
			g = i
		}
		if i < m.k {
			c = i
		}
		ml.Factors[0].Index[i], ml.Factors[1].Index[i] = int32(g), int32(c)
		z := theta[0] + (theta[1]+theta[2+g])*x[i] + theta[2+m.g+c]
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			ml.Y[i] = 1
		}
	}
	return model.NewMultilevel(ml)
}

// Draw implements mcmctest.Model: θ from the prior, data, and the
// problem with a short NUTS pilot's mean and sd as Mode and SD.
func (m mlFixedTau) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	tau := math.Abs(rng.NormFloat64())
	theta[d-1] = math.Log(tau)
	for g := range m.g {
		theta[2+g] = tau * rng.NormFloat64()
	}
	for c := range m.k {
		theta[2+m.g+c] = m.sd * rng.NormFloat64()
	}
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// TestGroupGibbsFixedTauLocation checks mlFixedTau's parameters (the
// layout its Draw and build assume) and that GroupGibbs makes and accepts
// location moves on it; TestGroupGibbsFixedTauMoments's mutants check
// which columns the moves pair.
func TestGroupGibbsFixedTauLocation(t *testing.T) {
	m := mlFixedTau{n: 200, g: 3, k: 4, sd: 0.5}
	rng := rand.New(rand.NewPCG(1, 2))
	theta := make([]float64, m.dim())
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"(Intercept)", "x", "u_g_x[1]", "u_g_x[2]", "u_g_x[3]", "b_c[1]", "b_c[2]", "b_c[3]", "b_c[4]", "log_tau_g_x"}
	if len(p.Names) != len(want) {
		t.Fatalf("names %q, want %q", p.Names, want)
	}
	for j := range want {
		if p.Names[j] != want[j] {
			t.Fatalf("names %q, want %q", p.Names, want)
		}
	}
	res, err := exactmh.Sample(context.Background(), p, multilevel.GroupGibbs{Center: theta},
		&exactmh.Settings{Chains: 1, Warmup: 20, Draws: 50, Seed: 3, Init: theta})
	if err != nil {
		t.Fatal(err)
	}
	ps := res.Chains[0].Params
	if !(ps["location_accept"] > 0) {
		t.Errorf("Params %v: want location moves accepted", ps)
	}
}

// TestGroupGibbsFixedTauMoments compares GroupGibbs's posterior means and
// standard deviations with full-batch NUTS's on mlFixedTau (N = 1500, a
// random slope of 5 levels with τ unknown, a categorical of 6 levels of
// fixed scale 0.5): every mean within 4.5 combined Monte Carlo standard
// errors, every SD ratio in [0.85, 1.18] ([0.7, 1.4] for the log scale);
// and that each mutant of the location move that pairs the intercept with
// the fixed-scale effects is caught (some |z| > 6 or SD ratio outside
// [0.7, 1.4]): the fixed-scale effects' prior dropped from the move's
// ratio, taken at twice their scale, and the moves paired with the wrong
// column.
func TestGroupGibbsFixedTauMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and GroupGibbs runs of 4 chains")
	}
	m := mlFixedTau{n: 1500, g: 5, k: 6, sd: 0.5}
	rng := rand.New(rand.NewPCG(31, 32))
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1] = -0.3, 0.8
	for j := 2; j < 2+m.g; j++ {
		theta[j] = 0.4 * rng.NormFloat64()
	}
	for j := 2 + m.g; j < d-1; j++ {
		theta[j] = m.sd * rng.NormFloat64()
	}
	theta[d-1] = math.Log(0.4)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, sd := nutsReference(t, p)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, gibbsKernel(pb, 0), rs, mode, 3000)
	t.Logf("GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f, %v",
		z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	for _, mu := range []struct {
		name string
		k    multilevel.GroupGibbs
	}{
		{"fixed-scale prior dropped from the location ratio", multilevel.GroupGibbsLocationScale(gibbsKernel(pb, 0), math.Inf(1))},
		{"fixed-scale prior at twice its scale in the location ratio", multilevel.GroupGibbsLocationScale(gibbsKernel(pb, 0), 2)},
		{"location move wrong column", multilevel.GroupGibbsWrongLocation(gibbsKernel(pb, 0))},
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, mu.k, rs, mode, 2000)
		if math.Abs(z) > 6 || lr > math.Log(1.4) {
			t.Logf("mutant %q caught: z = %.1f (%s), sd ratio e^±%.3f (%s)", mu.name, z, zn, lr, ln)
		} else {
			t.Errorf("mutant %q passes: z = %.2f (%s), sd ratio e^±%.3f (%s)", mu.name, z, zn, lr, ln)
		}
	}
}

// TestGroupGibbsFixedTauSBC runs simulation-based calibration with τ
// unknown on mlFixedTau (N = 300, a random slope of 3 levels, a
// categorical of 4 levels of fixed scale 0.5), every coordinate — the
// intercept and the fixed-scale effects, which the location moves pair,
// among them — with ExactBelow −1: each block's data thinned unless
// thinning would draw more than the block holds.
func TestGroupGibbsFixedTauSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBC(t, mlFixedTau{n: 300, g: 3, k: 4, sd: 0.5}, -1, 6)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlNestedPois is mlNested's design with a Poisson likelihood, y_i ~
// Poisson(e^{z_i}), z_i its linear predictor: a family under the growth
// bound, whose scale moves GroupGibbs makes only where every block is
// small (ExactBelow), reading the term's data exactly.
type mlNestedPois struct{ mlNested }

// build returns the posterior for Poisson data drawn at θ (x ~ N(0, ¼),
// lecturer j's w = j mod 3 − 1, the rate's log capped at 6).
func (m mlNestedPois) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	wl := make([]float64, m.l)
	for j := range wl {
		wl[j] = float64(j%3) - 1
	}
	return m.buildData(rng, theta, model.PoissonFamily{}, 0.5, wl, func(z float64) float64 {
		return float64(poissonCount(rng, math.Exp(math.Min(z, 6))))
	})
}

// Draw implements mcmctest.Model: θ from the prior (its coefficients
// halved, so that counts stay moderate), data, and the problem with a
// short NUTS pilot's mean and sd as Mode and SD.
func (m mlNestedPois) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.drawTheta(rng)
	for j := range 3 {
		theta[j] /= 2
	}
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// exactKernel is GroupGibbs with every block small (ExactBelow above N).
func exactKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: pb.Mode, ExactBelow: pb.Posterior.Len() + 1}
}

// TestGroupGibbsPoissonScaleExact checks that on a Poisson model (the
// growth bound) GroupGibbs makes scale moves where, and only where, every
// block is small, that its sweep then allocates nothing, and compares its
// posterior means and standard deviations with non-centred NUTS's on
// mlNestedPois (N = 300, 3 departments, 300 lecturers of one datum each,
// as grouseticks' chicks: the expansion's remainders are largest there;
// NUTS 4 × 3000, GroupGibbs 4 × 3000, its mutants 4 × 6000):
// every mean within 4.5 combined Monte Carlo standard errors, every SD
// ratio in [0.85, 1.18] ([0.7, 1.4] for the log scales); and that the
// mutants are caught (some |z| > 6 or SD ratio outside [0.7, 1.4]): the
// scale moves without their Jacobian, and the exact read that ignores
// every block's remainders (the expansion's ratio alone).
func TestGroupGibbsPoissonScaleExact(t *testing.T) {
	m := mlNestedPois{mlNested{n: 300, k: 3, l: 300, sdD: 0.5}}
	rng := rand.New(rand.NewPCG(43, 44))
	theta := m.at(rng, [3]float64{0.3, 0.5, -0.3}, 0.3, 0.9)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	init := slices.Clone(theta)
	for _, tc := range []struct {
		k    multilevel.GroupGibbs
		want bool
	}{
		{multilevel.GroupGibbs{Center: init}, false},
		{multilevel.GroupGibbs{Center: init, ExactBelow: 8}, false},
		{multilevel.GroupGibbs{Center: init, ExactBelow: p.Len() + 1}, true},
	} {
		res, err := exactmh.Sample(context.Background(), p, tc.k, &exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, Draws: 20, Seed: 3, Init: init})
		if err != nil {
			t.Fatal(err)
		}
		acc, has := res.Chains[0].Params["scale_accept"]
		nested := res.Chains[0].Params["nested_scales"]
		// Without plain scale moves the nested one is the only scale move.
		plain := has && (nested == 0 || acc > 0) && tc.k.ExactBelow > p.Len()
		if plain != tc.want || nested != 1 {
			t.Errorf("ExactBelow %d: plain scale moves %t (scale_accept %v), nested_scales %v; want %t and 1", tc.k.ExactBelow, plain, acc, nested, tc.want)
		}
	}
	checkStructural(t, "GroupGibbs, every block small, Poisson", exactKernel(mcmctest.Problem{Posterior: p, Mode: init}), p, init, 30)
	if testing.Short() {
		t.Skip("the moments: a NUTS reference and GroupGibbs runs of 4 chains")
	}
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 3000)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, exactKernel(pb), rs, mode, 3000)
	t.Logf("GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
		z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	for name, k := range map[string]exactmh.Kernel{
		"scale move without its Jacobian":                  multilevel.GroupGibbsScaleNoJacobian(exactKernel(pb)),
		"exact scale move ignoring its blocks' remainders": multilevel.GroupGibbsScaleExactSkip(exactKernel(pb)),
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, k, rs, mode, 6000)
		reportMutant(t, "Poisson nested", name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	}
}

// TestGroupGibbsPoissonScaleExactSBC runs simulation-based calibration
// with τ unknown on mlNestedPois (N = 150, 3 departments of 2 lecturers
// each, τ_d ~ half-normal(0.3)), every coordinate, with every block small:
// the scale moves read their term's data exactly.
func TestGroupGibbsPoissonScaleExactSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlNestedPois{mlNested{n: 150, k: 3, l: 6, sdD: 0.3}}, func(pb mcmctest.Problem) exactmh.Kernel { return exactKernel(pb) }, 13)
}

// TestChooseSmallNested checks the automatic default below AutoSmallN: on
// a Poisson model with lecturers of few data nested in departments (NUTS
// would be non-centred, and the probe finds a nested scale move) it
// chooses GroupGibbs with every block small and the data-free moves
// repeated, and says why; on one factor alone (no nesting; a logistic
// model with its Logit hidden, noLogit, which would otherwise go to the
// Pólya–Gamma sweep) it keeps non-centred NUTS.
func TestChooseSmallNested(t *testing.T) {
	m := mlNestedPois{mlNested{n: 400, k: 4, l: 160, sdD: 0.5}}
	rng := rand.New(rand.NewPCG(45, 46))
	theta := m.at(rng, [3]float64{0.2, 0, 0}, 0.4, 0.5)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(context.Background(), p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := c.Kernel.(multilevel.GroupGibbs)
	if !ok || k.ExactBelow <= p.Len() || k.FreeRepeats < 2 || !strings.Contains(c.Reason, "nest") {
		t.Errorf("nested: choice %s (%T): %s; want GroupGibbs reading every datum exactly, saying why", c.Name, c.Kernel, c.Reason)
	} else {
		t.Logf("nested: %s: %s", c.Name, c.Reason)
	}
	c2, err := exactmh.Choose(context.Background(), p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Name != c.Name || c2.Reason != c.Reason {
		t.Errorf("the choice is not a function of the seed: %s (%s), then %s (%s)", c.Name, c.Reason, c2.Name, c2.Reason)
	}
	_, pb, err := mcmctest.MultilevelModel{N: 120, Groups: 12}.Draw(rand.New(rand.NewPCG(37, 0)))
	if err != nil {
		t.Fatal(err)
	}
	pb.Posterior.Energy = noLogit{pb.Posterior.Energy.(*model.SparseGLM[float64])} // not the Pólya–Gamma sweep
	c, err = exactmh.Choose(context.Background(), pb.Posterior, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if nk, ok := c.Kernel.(exactmh.NUTS); !ok || !nk.NonCentred {
		t.Errorf("one factor: choice %s (%T): %s; want NUTS-NC", c.Name, c.Kernel, c.Reason)
	}
}

// noLogit hides a logistic energy's Logit (multilevel.LogitGLM), so that
// the automatic default takes the route a multilevel model without the
// Pólya–Gamma sweep has.
type noLogit struct{ *model.SparseGLM[float64] }

func (noLogit) Logit() bool { return false }

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlShear is a multilevel logistic regression whose covariate is
// confounded with a factor's effects: an intercept and x with β ~ N(0, 1),
// factor "a" (ga levels, random intercepts) and factor "b" (gb levels,
// crossed, random intercepts), τ ~ half-normal(1), log τ sampled; x_i =
// c_a(i) + 0.3·ε_i with level means c_a ~ N(0, 1), so x varies within
// every level of both factors and its level means are far from 0 — the
// design the shear moves are for. Level 0 of factor a has x constant (its
// data are the shear's w_i = 0, unread).
type mlShear struct{ n, ga, gb int }

func (m mlShear) dim() int { return 2 + m.ga + m.gb + 2 }

// build returns the posterior for data drawn at θ.
func (m mlShear) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{
		Family: model.LogisticFamily{}, Y: make([]float64, m.n), Intercept: true,
		Fixed:   []model.Covariate{{Name: "x", Values: make([]float64, m.n)}},
		FixedSD: []float64{1, 1},
		Factors: []model.Factor{
			{Name: "a", Index: make([]int32, m.n), Tau: model.HalfNormal(1)},
			{Name: "b", Index: make([]int32, m.n), Tau: model.HalfNormal(1)},
		},
	}
	x := ml.Fixed[0].Values
	c := make([]float64, m.ga)
	for g := range c {
		c[g] = 1 + rng.NormFloat64()
	}
	for i := range m.n {
		a, b := int32(i%m.ga), int32(rng.IntN(m.gb))
		if i < m.gb {
			b = int32(i)
		}
		x[i] = c[a]
		if a != 0 {
			x[i] += 0.3 * rng.NormFloat64()
		}
		ml.Factors[0].Index[i], ml.Factors[1].Index[i] = a, b
		z := theta[0] + theta[1]*x[i] + theta[2+a] + theta[2+m.ga+int(b)]
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			ml.Y[i] = 1
		}
	}
	return model.NewMultilevel(ml)
}

// posteriorAt returns the posterior for data drawn (seeds 5, 6) at β =
// (0.2, 1), the effects of a and b at scales tauA and tauB.
func (m mlShear) posteriorAt(t *testing.T, tauA, tauB float64) *exactmh.Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1] = 0.2, 1
	for g := range m.ga {
		theta[2+g] = tauA * rng.NormFloat64()
	}
	for g := range m.gb {
		theta[2+m.ga+g] = tauB * rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(tauA), math.Log(tauB)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Draw implements mcmctest.Model: θ from the prior, data, and the
// problem with a short NUTS pilot's mean and sd as Mode and SD.
func (m mlShear) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	ta, tb := math.Abs(rng.NormFloat64()), math.Abs(rng.NormFloat64())
	for g := range m.ga {
		theta[2+g] = ta * rng.NormFloat64()
	}
	for g := range m.gb {
		theta[2+m.ga+g] = tb * rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(ta), math.Log(tb)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// shearKernel is GroupGibbs around the problem's mode with the shear moves.
func shearKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: pb.Mode, ExactBelow: -1, Shear: 1}
}

// shearProblem is the kit's shear design, mode and sd from a short NUTS
// pilot.
func shearProblem(t *testing.T) mcmctest.Problem {
	t.Helper()
	p := mlShear{n: 300, ga: 8, gb: 4}.posteriorAt(t, 0.5, 0.3)
	pb, err := pilotProblem(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// TestGroupGibbsShearStructural runs the kit's structural checks on
// GroupGibbs with the shear moves, every sweep and one sweep in three: no
// allocation per sweep, Info's counts, checkpoint and resume, results
// independent of the workers; and that the moves are found (x against
// both factors) and made.
func TestGroupGibbsShearStructural(t *testing.T) {
	pb := shearProblem(t)
	every := shearKernel(pb)
	every.ShearEvery = 3
	for _, k := range []multilevel.GroupGibbs{shearKernel(pb), every} {
		checkStructural(t, fmt.Sprintf("every %d: GroupGibbs with the shear moves", k.ShearEvery), k, pb.Posterior, pb.Mode, 500)
	}
	res, err := exactmh.Sample(t.Context(), pb.Posterior, shearKernel(pb), &exactmh.Settings{Chains: 1, Warmup: 50, Draws: 100, Seed: 3, Init: pb.Mode})
	if err != nil {
		t.Fatal(err)
	}
	ps := res.Chains[0].Params
	if ps["shears"] != 2 || !(ps["shear_accept"] > 0.5) {
		t.Errorf("shears %v (want 2: x against a and against b), accepted %.3f (want above 0.5)", ps["shears"], ps["shear_accept"])
	}
	// The design without Shear has none of these rates.
	res, err = exactmh.Sample(t.Context(), pb.Posterior, multilevel.GroupGibbs{Center: pb.Mode}, &exactmh.Settings{Chains: 1, Warmup: 0, Draws: 3, Seed: 3, Init: pb.Mode})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Chains[0].Params["shears"]; ok {
		t.Error("GroupGibbs without Shear reports shears")
	}
}

// TestGroupGibbsShearMoments compares GroupGibbs with the shear moves
// against non-centred NUTS on the shear design (a covariate whose level
// means are far from 0, varying within every level of two crossed
// factors), and requires its mutants to be caught: the shear with wrong
// level means (x̄ + 1 in the effects' shift: a move that changes the
// between-level part of every linear predictor and charges only the
// within-level part) and the shear's ratio without the effects' N(0, τ²)
// terms (a prior term dropped).
func TestGroupGibbsShearMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and GroupGibbs runs of 4 chains")
	}
	p := mlShear{n: 600, ga: 12, gb: 5}.posteriorAt(t, 0.8, 0.3)
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 2000)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, shearKernel(pb), rs, mode, 2000)
	t.Logf("shear: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
		z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("GroupGibbs with the shear moves disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	if acc := res.Chains[0].Params["shear_accept"]; !(acc > 0.5) {
		t.Errorf("the shear moves accepted %.3f, want above 0.5", acc)
	}
	z, zn, lr, ln, res = gibbsMoments(t, p, multilevel.GroupGibbs{Center: mode, ExactBelow: -1}, rs, mode, 2000)
	t.Logf("without the shear moves: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); min bulk ESS %.0f", z, zn, lr, ln, minESS(res.Summary()))
	// The mutants at ten rounds a sweep, so that the shears' law
	// dominates the blocks' (the kernel passes at one round above).
	ten := shearKernel(pb)
	ten.Shear = 10
	z, zn, lr, ln, res = gibbsMoments(t, p, ten, rs, mode, 2000)
	t.Logf("shear, ten rounds a sweep: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); min bulk ESS %.0f", z, zn, lr, ln, minESS(res.Summary()))
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("GroupGibbs with ten rounds of shear moves disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	for _, mt := range []struct {
		name string
		k    multilevel.GroupGibbs
	}{
		{"shear with wrong level means", multilevel.GroupGibbsShearWrongMean(ten, 1)},
		{"shear without the effects' prior terms", multilevel.GroupGibbsShearNoEffectPrior(ten)},
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, mt.k, rs, mode, 2000)
		reportMutant(t, "shear design", mt.name, math.Abs(z) > 4.5 || lr > math.Log(1.18), z, zn, lr, ln)
	}
}

// TestGroupGibbsShearSBC runs simulation-based calibration with τ unknown
// on the shear design (N = 240, 6 × 3 levels, every coordinate) with the
// shear moves.
func TestGroupGibbsShearSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlShear{n: 240, ga: 6, gb: 3}, func(pb mcmctest.Problem) exactmh.Kernel { return shearKernel(pb) }, 11)
}

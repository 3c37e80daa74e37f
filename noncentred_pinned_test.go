// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

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

// pinnedGroupModel is a random-intercept logistic regression whose group
// 0 holds big data and each of the other small: β ~ N(0, 1) (intercept,
// slope on x_i ~ N(0, 1)), u_g ~ N(0, τ²), τ ~ half-normal(1), log τ
// sampled, drawn from the model at a θ from rng. Group 0's data pin u_0,
// so its non-centred z_0 = u_0/τ lies on the curve z_0·τ ≈ û_0 across the
// wide range of τ the small groups leave.
func pinnedGroupModel(t *testing.T, big, groups, small int, rng *rand.Rand) *exactmh.Posterior {
	t.Helper()
	n := big + (groups-1)*small
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
		Fixed: []model.Covariate{{Name: "x", Values: make([]float64, n)}}, FixedSD: []float64{1, 1},
		Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}}}
	tau := math.Abs(rng.NormFloat64())
	b0, b1 := rng.NormFloat64(), rng.NormFloat64()
	u := make([]float64, groups)
	for g := range u {
		u[g] = tau * rng.NormFloat64()
	}
	for i := range n {
		g := 0
		if i >= big {
			g = 1 + (i-big)/small
		}
		x := rng.NormFloat64()
		ml.Fixed[0].Values[i], ml.Factors[0].Index[i] = x, int32(g)
		if rng.Float64() < 1/(1+math.Exp(-(b0+b1*x+u[g]))) {
			ml.Y[i] = 1
		}
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNonCentredPinnedExplore(t *testing.T) {
	p := pinnedGroupModel(t, 2200, 10, 3, rand.New(rand.NewPCG(41, 0)))
	center, csd, err := model.MultilevelCenter(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("centre %.3f sd %.3f", center, csd)
	ref := runFunnel(t, p, multilevel.GroupGibbs{Center: center}, center, 4000)
	for _, r := range []struct {
		name string
		k    exactmh.Kernel
		ta   float64
	}{
		{"NUTS-NC", exactmh.NUTS{NonCentred: true}, 0},
		{"NUTS partial", exactmh.NUTS{NonCentred: true, CentredEffects: []int{2}}, 0},
		{"HMC-NC", exactmh.HMC{NonCentred: true}, 0},
		{"HMC partial", exactmh.HMC{NonCentred: true, CentredEffects: []int{2}}, 0},
	} {
		res, err := exactmh.Sample(context.Background(), p, r.k, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 1000, Seed: 3, Init: center, TargetAccept: r.ta})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary()
		var worst float64
		var wn string
		for j, ps := range s.Params {
			rp := ref.sum.Params[j]
			// variance ratio's z: log(var ratio)/sqrt(2/ess_a + 2/ess_b)
			z := math.Log(ps.SD*ps.SD/(rp.SD*rp.SD)) / math.Sqrt(2/ps.ESSBulk+2/rp.ESSBulk)
			if math.Abs(z) > math.Abs(worst) {
				worst, wn = z, ps.Name
			}
		}
		z, name := maxZ(s, ref.sum)
		t.Logf("%s: divergent %d, mean max |z| %.2f (%s), variance z %.2f (%s), warnings %q", r.name, res.Sampling().Divergent, z, name, worst, wn, s.Warnings)
	}
}

// TestNonCentredPartialConformance runs the partly non-centred NUTS
// (NUTS.CentredEffects) through the conformance kit on its multilevel
// funnel (mcmctest.MultilevelModel: group 0 holds half the data, θ[2] its
// effect, kept centred; the others non-centred), with the mutant whose
// Jacobian counts the kept effect's log τ as if it were scaled. Not
// -short: TestConformance's "NUTS non-centred" row holds the
// parametrisation's machinery there.
func TestNonCentredPartialConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance kit's statistical checks on a multilevel row")
	}
	keep := []int{2}
	mcmctest.Check(t, mcmctest.Case{Name: "NUTS partly non-centred", NeedsMultilevel: true, NeedsGradient: true, Exact: true,
		Kernel: func(pb mcmctest.Problem) exactmh.Kernel {
			return exactmh.NUTS{Scale: pb.Scale, NonCentred: true, CentredEffects: keep}
		},
		Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{"kept effect counted in the Jacobian": func(pb mcmctest.Problem) exactmh.Kernel {
			return exactmh.NUTSKeptJacobian(exactmh.NUTS{Scale: pb.Scale, CentredEffects: keep})
		}}})
}

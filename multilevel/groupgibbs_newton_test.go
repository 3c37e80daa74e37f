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

// newtonKernel is GroupGibbs around the problem's mode with its fixed
// blocks updated by the Newton proposal (FixedNewton).
func newtonKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: pb.Mode, ExactBelow: -1, FixedNewton: true}
}

// TestGroupGibbsNewtonStructural runs the kit's structural checks on
// GroupGibbs with the Newton proposal, alone and with the marginal joint
// move, and as the automatic default uses it (NewtonEvery, FreeRepeats):
// no allocation per sweep, Info's counts, checkpoint and resume, results
// independent of the workers.
func TestGroupGibbsNewtonStructural(t *testing.T) {
	pb := kitProblem(t)
	withJoint := newtonKernel(pb)
	withJoint.Joint, withJoint.JointRho, withJoint.JointFixed = 1, 0.5, true
	asDefault := newtonKernel(pb) // the automatic default's re-pilot
	asDefault.NewtonEvery, asDefault.FreeRepeats = multilevel.DefaultNewtonEvery, multilevel.DefaultFreeRepeats
	for _, k := range []multilevel.GroupGibbs{newtonKernel(pb), withJoint, asDefault} {
		checkStructural(t, fmt.Sprintf("joint %d, every %d: GroupGibbs with the Newton proposal", k.Joint, k.NewtonEvery), k, pb.Posterior, pb.Mode, 500)
	}
}

// TestGroupGibbsNewtonMoments compares GroupGibbs with the Newton
// proposal against non-centred NUTS on 30 small groups (about 13 data
// each, a strong covariate whose slope varies by group) and on two crossed
// factors, and requires its mutant to be caught on the small groups: the
// proposal with its log q ratio dropped (the chain then targets π·q in the
// fixed effects, too narrow), its updates decided by a full pass over the
// data (GroupGibbsNewtonThinOff): with the thinned test, whose factorised
// acceptance changes how the chain mixes the mutant's error into the
// groups', this design shows it at |z| ≈ 3 only. TestGroupGibbsNewtonMutants
// catches the Newton mutants, the thinned test's among them, on a design
// built for them.
func TestGroupGibbsNewtonMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and GroupGibbs runs of 4 chains")
	}
	type problem struct {
		name string
		p    *exactmh.Posterior
	}
	var probs []problem
	{
		kit := mlKit{n: 400, groups: 30}
		rng := rand.New(rand.NewPCG(17, 18))
		d := 2 + 2*kit.groups + 2
		theta := make([]float64, d)
		theta[0], theta[1] = 0.5, 1
		for g := range kit.groups {
			theta[2+2*g], theta[3+2*g] = 1.5*rng.NormFloat64(), 0.7*rng.NormFloat64()
		}
		theta[d-2], theta[d-1] = math.Log(1.5), math.Log(0.7)
		p, err := kit.build(rng, theta)
		if err != nil {
			t.Fatal(err)
		}
		probs = append(probs, problem{"small groups", p})
	}
	probs = append(probs, problem{"crossed", mlCrossed{n: 1500, ga: 8, gb: 6}.posteriorAt(t, -0.8, 0.5, [3]float64{0.5, 0.3, 0.5})})
	for _, pr := range probs {
		rs, mode, sd := nutsReferenceNonCentred(t, pr.p, 500, 2000)
		pb := mcmctest.Problem{Posterior: pr.p, Mode: mode, SD: sd}
		withJoint := newtonKernel(pb)
		withJoint.Joint, withJoint.JointRho, withJoint.JointFixed = 1, 0.9, true
		for _, row := range []struct {
			name string
			k    exactmh.Kernel
		}{
			{"Newton", newtonKernel(pb)},
			{"Newton and the marginal joint move", withJoint},
		} {
			z, zn, lr, ln, res := gibbsMoments(t, pr.p, row.k, rs, mode, 3000)
			t.Logf("%s, %s: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
				pr.name, row.name, z, zn, lr, ln, res.Sampling().MeanBatch(), pr.p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
			// (On the small groups NUTS's SDs of the slopes' scale are not
			// a reference (TestGroupGibbsMoments): only means there.)
			if math.Abs(z) > 4.5 || lr > math.Log(1.18) && pr.name != "small groups" {
				t.Errorf("%s, %s: GroupGibbs with the Newton proposal disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", pr.name, row.name, z, zn, lr, ln)
			}
			if acc := res.Chains[0].Params["fixed_newton_accept"]; !(acc > 0.5) {
				t.Errorf("%s, %s: the Newton proposal accepted %.3f, want above 0.5", pr.name, row.name, acc)
			}
		}
		// A mutant is caught where the thresholds the kernel passes above
		// reject it, at the same length. (On the crossed design the fixed
		// effects move mostly with the factors' effects, by the exact
		// location moves, and the mutant's narrower conditional shows
		// little in their marginals: TestGroupGibbsNewtonMutants.)
		if pr.name == "crossed" {
			continue
		}
		z, zn, lr, ln, _ := gibbsMoments(t, pr.p, multilevel.GroupGibbsNewtonNoQ(multilevel.GroupGibbsNewtonThinOff(newtonKernel(pb))), rs, mode, 3000)
		caught := math.Abs(z) > 4.5
		reportMutant(t, pr.name, "Newton proposal without its log q ratio", caught, z, zn, lr, ln)
	}
}

// newtonSeparated is a logistic multilevel model built for the Newton
// proposal's mutants: N = 24 in 4 groups with a random intercept (τ ~
// half-normal(1)), a fixed intercept and a covariate x = ±1 within each
// group, its outcomes completely separated (y = 1 exactly where x = 1),
// the intercept's prior N(0, 1), the covariate's N(0, 5²): the
// covariate's conditional is skewed, bounded on the left by the data and
// on the right only by its wide prior, where f″ vanishes; and the
// fixed effects are not confounded with the groups' (x is balanced in
// each group), so an error in their update shows undiluted in their
// marginals.
func newtonSeparated(t *testing.T) *exactmh.Posterior {
	t.Helper()
	const n, groups = 24, 4
	ml := &model.Multilevel{
		Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
		Fixed:   []model.Covariate{{Name: "x", Values: make([]float64, n)}},
		FixedSD: []float64{1, 5},
		Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}},
	}
	x := ml.Fixed[0].Values
	for i := range n {
		ml.Factors[0].Index[i] = int32(i % groups)
		x[i] = float64(2*((i/groups)%2) - 1)
		if x[i] > 0 {
			ml.Y[i] = 1
		}
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGroupGibbsNewtonMutants requires the Newton proposal's mutants to
// be caught against non-centred NUTS (4 × 10,000 draws each)
// on newtonSeparated, where the kernel itself passes the same thresholds
// (|z| < 4.5 on every mean, sd ratios within e^±log 1.18): the proposal
// without its log q ratio (the chain targets π·q in β: the covariate's sd
// e^−0.35 of NUTS's, z −51), and the Newton step started at the current β
// (its mean and curvature then depend on β — on this skewed conditional,
// strongly: a step from the right tail, where f″ vanishes, proposes from
// nearly the prior — while the ratio treats the proposal as independent:
// z −11 on the covariate's mean), and the thinned test without the data's
// Taylor remainders (newtonNoRem; every update thinned, newtonThinAll, as
// the kernel itself is run once more here: the chain then targets the
// quadratic expansion in β, z −127 on the covariate's mean).
func TestGroupGibbsNewtonMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS reference and five GroupGibbs runs of 4 × 10,000 draws")
	}
	p := newtonSeparated(t)
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 10000)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	bad := func(z, lr float64) bool { return math.Abs(z) > 4.5 || lr > math.Log(1.18) }
	z, zn, lr, ln, res := gibbsMoments(t, p, newtonKernel(pb), rs, mode, 10000)
	t.Logf("Newton: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); accept %.3f, thinned %.3f (%.3g data each)", z, zn, lr, ln, res.Chains[0].Params["fixed_newton_accept"], res.Chains[0].Params["newton_thinned"], res.Chains[0].Params["newton_thin_reads"])
	if bad(z, lr) {
		t.Errorf("GroupGibbs with the Newton proposal disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	z, zn, lr, ln, res = gibbsMoments(t, p, multilevel.GroupGibbsNewtonThinAll(newtonKernel(pb)), rs, mode, 10000)
	t.Logf("Newton, every update thinned: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); accept %.3f, thinned %.3f (%.3g data each)", z, zn, lr, ln, res.Chains[0].Params["fixed_newton_accept"], res.Chains[0].Params["newton_thinned"], res.Chains[0].Params["newton_thin_reads"])
	if bad(z, lr) {
		t.Errorf("GroupGibbs with the Newton proposal, every update thinned, disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
	for _, mut := range []struct {
		name string
		k    multilevel.GroupGibbs
	}{
		{"Newton proposal without its log q ratio", multilevel.GroupGibbsNewtonNoQ(newtonKernel(pb))},
		{"Newton step from the current fixed effects", multilevel.GroupGibbsNewtonFromState(newtonKernel(pb))},
		{"Newton thinned test without the remainders", multilevel.GroupGibbsNewtonNoRem(multilevel.GroupGibbsNewtonThinAll(newtonKernel(pb)))},
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, mut.k, rs, mode, 10000)
		reportMutant(t, "separated", mut.name, bad(z, lr), z, zn, lr, ln)
	}
}

// TestGroupGibbsNewtonSBC runs simulation-based calibration with τ unknown
// on the crossed multilevel logistic regression (N = 300, 4 × 3 levels,
// every coordinate) with the Newton proposal.
func TestGroupGibbsNewtonSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlCrossed{n: 300, ga: 4, gb: 3}, func(pb mcmctest.Problem) exactmh.Kernel { return newtonKernel(pb) }, 7)
}

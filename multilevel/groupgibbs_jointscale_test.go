// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// jointScaleKernel is movesKernel with reps joint rescaling moves a sweep.
func jointScaleKernel(pb mcmctest.Problem, reps int) multilevel.GroupGibbs {
	k := movesKernel(pb)
	k.JointScale = reps
	return k
}

// jointScaleProblem is a probit mlNested with 2 nested terms (4
// departments, 30 lecturers of about 10 data each) and its non-centred
// NUTS reference (4 × 1500 draws).
func jointScaleProblem(t *testing.T) (*exactmh.Posterior, *exactmh.Summary, mcmctest.Problem) {
	t.Helper()
	m := mlNested{n: 300, k: 4, l: 30, sdD: 1, probit: true}
	rng := rand.New(rand.NewPCG(53, 54))
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1], theta[2] = 0.3, 0.8, -0.5
	for j := range m.k {
		theta[3+j] = 0.5 * rng.NormFloat64()
	}
	for j := range m.l {
		theta[3+m.k+j] = 1.2 * rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(0.5), math.Log(1.2)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 1500)
	return p, rs, mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
}

// jointScalePow sets k's JointScalePow.
func jointScalePow(k multilevel.GroupGibbs, a float64) multilevel.GroupGibbs {
	k.JointScalePow = a
	return k
}

// TestGroupGibbsJointScaleStructural checks the sweep with the joint
// rescaling move allocates nothing, reports its Info and survives
// checkpoints and any number of workers.
func TestGroupGibbsJointScaleStructural(t *testing.T) {
	pb := kitProblem(t)
	checkStructural(t, "GroupGibbs with joint rescaling moves", jointScaleKernel(pb, 2), pb.Posterior, pb.Mode, 300)
}

// TestGroupGibbsJointScaleMoments compares GroupGibbs with the joint
// rescaling move in its sweep (1 a sweep, 5, and 3 with the fixed effects
// scaled by c^0.7) against non-centred NUTS
// on the probit jointScaleProblem — every mean within 4.5 combined Monte
// Carlo standard errors, every sd ratio in [0.85, 1.18]; and 5 a sweep
// with the scale moves that keep u/τ as the log scales' only other
// update (GroupGibbsJointScaleOnly) — and requires each mutant to be
// caught (|z| > 6 or an sd ratio outside [0.7, 1.4]): the move without
// its Jacobian e^{λ(a|F| + |U|)} and the log scales left where the ratio took them
// scaled with the effects, both where no centred update of τ repairs
// u/τ; the intercept left where the energy and prior took it scaled, 25
// moves a sweep in the full sweep (whose block updates of the fixed
// effects otherwise repair it).
func TestGroupGibbsJointScaleMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and GroupGibbs runs of 4 chains")
	}
	p, rs, pb := jointScaleProblem(t)
	alone := multilevel.GroupGibbsJointScaleOnly(jointScaleKernel(pb, 5))
	for name, k := range map[string]multilevel.GroupGibbs{
		"1 a sweep":                      jointScaleKernel(pb, 1),
		"5 a sweep":                      jointScaleKernel(pb, 5),
		"3 a sweep, a = 0.7":             jointScalePow(jointScaleKernel(pb, 3), 0.7),
		"5 a sweep, no centred τ update": alone,
	} {
		z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, pb.Mode, 3000)
		t.Logf("%s: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
			name, z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
		if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
			t.Errorf("%s: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", name, z, zn, lr, ln)
		}
	}
	for name, m := range map[string]exactmh.Kernel{
		"joint rescaling without its Jacobian":        multilevel.GroupGibbsJointScaleNoJacobian(alone),
		"joint rescaling with the log scales kept":    multilevel.GroupGibbsJointScaleTauKept(alone),
		"joint rescaling with the intercept unscaled": multilevel.GroupGibbsJointScaleInterceptKept(jointScaleKernel(pb, 25)),
	} {
		z, zn, lr, ln, _ := gibbsMoments(t, p, m, rs, pb.Mode, 2000)
		reportMutant(t, "probit mlNested, 30 lecturers", name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	}
}

// TestGroupGibbsJointScaleSBC runs simulation-based calibration with τ
// unknown on a probit mlNested with the joint rescaling move 3 times a
// sweep, every coordinate.
func TestGroupGibbsJointScaleSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlNested{n: 200, k: 3, l: 6, sdD: 0.5, probit: true}, func(pb mcmctest.Problem) exactmh.Kernel {
		return jointScaleKernel(pb, 3)
	}, 17)
}

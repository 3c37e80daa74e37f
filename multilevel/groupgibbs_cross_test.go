// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupGibbsCrossed checks GroupGibbs with the group partners of a
// group block taken by class (groupgibbs_cross.go, forced at the kit's N)
// on two crossed factors (N = 1500, 8 × 6 levels, a random slope on the
// first): fewer pairs than one per partner and as many records; every
// posterior mean within 4.5 combined Monte Carlo standard errors of
// non-centred NUTS's and every SD ratio in [0.85, 1.18] ([0.7, 1.4] for
// the log scales), with the classes' own factors and with them 8 times
// looser; and the thinning correction left out (a datum drawn at its
// class's factor, 32 times looser to make the error plain, tested against
// its own partner's) caught: some |z| > 6 or SD ratio outside [0.7, 1.4].
func TestGroupGibbsCrossed(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and GroupGibbs runs of 4 chains")
	}
	p := mlCrossed{n: 1500, ga: 8, gb: 6}.posteriorAt(t, -0.8, 0.5, [3]float64{0.5, 0.3, 0.5})
	rs, mode, sd := nutsReferenceNonCentred(t, p, 300, 750)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	pairs0, rec0, err := multilevel.GibbsPairs(p, mode, false)
	if err != nil {
		t.Fatal(err)
	}
	pairs1, rec1, err := multilevel.GibbsPairs(p, mode, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pairs: %d by partner, %d by class; records %d, %d", pairs0, pairs1, rec0, rec1)
	if pairs1 >= pairs0 || rec1 != rec0 {
		t.Errorf("by class: %d pairs, %d records; want fewer than %d pairs and %d records", pairs1, rec1, pairs0, rec0)
	}
	for _, inflate := range []float64{1, 8} {
		k := multilevel.GroupGibbsCrossed(gibbsKernel(pb, 0), inflate)
		z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, mode, 3000)
		t.Logf("classes ×%g: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f, %v",
			inflate, z, zn, lr, ln, res.Sampling().MeanBatch(), res.Chains[0].Params)
		if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
			t.Errorf("classes ×%g: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", inflate, z, zn, lr, ln)
		}
	}
	mutants := map[string]exactmh.Kernel{
		"thinning correction left out": multilevel.GroupGibbsCrossNoCorrection(multilevel.GroupGibbsCrossed(gibbsKernel(pb, 0), 32)),
	}
	for name, k := range mutants {
		z, zn, lr, ln, _ := gibbsMoments(t, p, k, rs, mode, 2000)
		reportMutant(t, "crossed", name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	}
}

// TestGroupGibbsCrossedSBC runs TestGroupGibbsSBC's simulation-based
// calibration (the crossed model, N = 300, 4 × 3 levels, every
// coordinate) with the group partners taken by class.
func TestGroupGibbsCrossedSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlCrossed{n: 300, ga: 4, gb: 3}, func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.GroupGibbsCrossed(gibbsKernel(pb, -1), 1)
	}, 4)
}

// TestGroupGibbsCrossedStructural runs TestGroupGibbsStructural's checks —
// no allocation per sweep, Info's counts, checkpoint and resume, results
// independent of the number of workers — on the crossed kit model with
// the group partners taken by class (their coded records and the
// classes' max-trees).
func TestGroupGibbsCrossedStructural(t *testing.T) {
	p := mlCrossed{n: 1500, ga: 8, gb: 6}.posteriorAt(t, -0.8, 0.5, [3]float64{0.5, 0.3, 0.5})
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	k := multilevel.GroupGibbsCrossed(multilevel.GroupGibbs{Center: center}, 1)
	checkStructural(t, "GroupGibbs with classes", k, p, center, 500)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
)

// TestBackfitCenter checks the backfitting Laplace-EM centre (the one the
// automatic default takes on large crossed factors) on mlCrossed (two
// crossed factors, one with a random slope: 2×2 blocks) with the level
// threshold lowered to the model's: the effects are the mode given its
// scales (every effect's gradient of −log π below 10⁻² of its conditional
// precision's square root, i.e. a step of < 0.01 sd), its log scales are
// within 0.1 of the sparse-Newton centre's (the conditional variances
// stand in for the marginal ones), its cost is passes over the rows
// (fewer than 3 a round and 50 rounds), and a single factor, or factors
// below the threshold, are not planned as crossed.
func TestBackfitCenter(t *testing.T) {
	cr := mlCrossed{n: 6000, ga: 20, gb: 15}
	rng := rand.New(rand.NewPCG(11, 12))
	d := cr.dim()
	theta := make([]float64, d)
	tau := []float64{0.6, 0.3, 0.5}
	for j := 2; j < d-3; j++ {
		k := 2
		if j < 2+2*cr.ga {
			k = j % 2
		}
		theta[j] = tau[k] * rng.NormFloat64()
	}
	p, err := cr.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	c, sd, passes, crossed, err := multilevel.BackfitCenterOf(p, 10)
	if err != nil || !crossed {
		t.Fatalf("crossed %v, err %v", crossed, err)
	}
	exact, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if passes > 3*100 {
		t.Errorf("%d passes over the rows", passes)
	}
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, d)
	if _, err := tg.TotalEnergyAndGradient(grad, c); err != nil {
		t.Fatal(err)
	}
	pg := make([]float64, d)
	if err := tg.AddLogPriorGradient(pg, c); err != nil {
		t.Fatal(err)
	}
	var worst float64
	for j := range d - 3 {
		// a Newton step of |∇_j|·sd_j² is |∇_j|·sd_j in sd
		if z := math.Abs(grad[j]-pg[j]) * sd[j]; z > worst {
			worst = z
		}
	}
	if worst > 1e-2 {
		t.Errorf("not the mode given the scales: an effect's gradient × sd is %.3g", worst)
	}
	for k := range 3 {
		j := d - 3 + k
		if math.Abs(c[j]-exact[j]) > 0.1 {
			t.Errorf("%s: backfitting %.4f, sparse Newton %.4f", p.Names[j], c[j], exact[j])
		} else {
			t.Logf("%s: backfitting %.4f, sparse Newton %.4f, truth %.4f", p.Names[j], c[j], exact[j], math.Log(tau[k]))
		}
	}
	t.Logf("%d passes over the rows; largest gradient × sd %.2g", passes, worst)
	if _, _, _, crossed, _ := multilevel.BackfitCenterOf(p, 21); crossed {
		t.Error("factors of 20 and 15 levels planned as crossed at a threshold of 21")
	}
	kit := mlKit{n: 3000, groups: 12}
	rng = rand.New(rand.NewPCG(9, 10))
	p, err = kit.build(rng, kit.truth(rng, -0.5, 1, 0.7, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, crossed, _ := multilevel.BackfitCenterOf(p, 1); crossed {
		t.Error("one factor planned as crossed")
	}
}

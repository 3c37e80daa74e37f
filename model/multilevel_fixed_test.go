// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestMultilevelFixedTau checks a factor of fixed scale (Factor.FixedTau,
// a high-cardinality categorical as a fixed effect with a normal prior):
// its effects are named b_…, have a block per level and no log scale,
// their prior is N(0, FixedTau²) (against gonum's density, with the
// gradient and Hessian against central differences), and a FixedTau that
// is not positive, or set with Tau, is an error.
func TestMultilevelFixedTau(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	m := smallMultilevel(rng, 60, LogisticFamily{}, false)
	m.Factors[1].Tau, m.Factors[1].FixedTau = ScalePrior{}, 0.7
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Intercept", "x1", "x2",
		"u_school[A]", "u_school_x1[A]", "u_school[B]", "u_school_x1[B]",
		"u_school[C]", "u_school_x1[C]", "u_school[D]", "u_school_x1[D]",
		"b_rater[1]", "b_rater[2]", "b_rater[3]",
		"log_tau_school", "log_tau_school_x1"}
	if !slices.Equal(post.Names, want) {
		t.Fatalf("names\n%q\nwant\n%q", post.Names, want)
	}
	p := post.Prior.(*MultilevelPrior)
	if p.NumTerms() != 2 {
		t.Errorf("NumTerms() = %d, want 2 (the rater's scale is fixed)", p.NumTerms())
	}
	if b := p.Blocks(); !slices.Equal(b, []int32{0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, -1, -1}) {
		t.Errorf("Blocks() = %v", b)
	}
	d := post.Energy.Dim()
	th0 := randomTheta(rng, d)
	ref := func(th []float64) float64 {
		s := refLogPrior(m, p, th)
		for j := 11; j < 14; j++ {
			s += distuv.Normal{Sigma: 0.7}.LogProb(th[j])
		}
		return s
	}
	for range 5 {
		th := randomTheta(rng, d)
		if got, want := p.LogPrior(th)-p.LogPrior(th0), ref(th)-ref(th0); !near(got, want, 1e-12) {
			t.Fatalf("log p(θ) − log p(θ₀) = %v, gonum's densities %v", got, want)
		}
	}
	checkPriorDerivs(t, post, th0)

	for _, c := range []struct {
		tau   ScalePrior
		fixed float64
		want  string
	}{
		{HalfNormal(1), 0.7, "both Tau"},
		{ScalePrior{}, -1, "FixedTau = -1"},
		{ScalePrior{}, math.Inf(1), "FixedTau = +Inf"},
		{ScalePrior{}, 0, "no prior on τ"},
	} {
		m.Factors[1].Tau, m.Factors[1].FixedTau = c.tau, c.fixed
		if _, err := NewMultilevel(m); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `factor 1 ("rater")`) {
			t.Errorf("Tau %v, FixedTau %v: %v, want %q", c.tau, c.fixed, err, c.want)
		}
	}
}

// TestMultilevelFixedTauSample samples a random-intercept logistic model
// with a 30-level categorical of fixed scale through the automatic
// default, which takes GroupGibbs (a block per level of both factors),
// and checks that the categorical's contrasts are recovered within 4
// posterior sds, with R-hat ≤ 1.05 for the other parameters.
func TestMultilevelFixedTauSample(t *testing.T) {
	if testing.Short() {
		t.Skip("a GroupGibbs run of 4 × 400 draws")
	}
	rng := rand.New(rand.NewPCG(6, 6))
	const n, groups, cats = 20000, 20, 30
	u := make([]float64, groups)
	for g := range u {
		u[g] = 0.5 * rng.NormFloat64()
	}
	b := make([]float64, cats)
	for c := range b {
		b[c] = rng.NormFloat64()
	}
	m := &Multilevel{
		Family: LogisticFamily{}, Y: make([]float64, n), Intercept: true, FixedSD: []float64{5, 5},
		Fixed: []Covariate{{"x", make([]float64, n)}},
		Factors: []Factor{
			{Name: "g", Index: make([]int32, n), Tau: HalfNormal(1)},
			{Name: "cat", Index: make([]int32, n), FixedTau: 1},
		},
	}
	for i := range n {
		x, g, c := rng.NormFloat64(), rng.IntN(groups), rng.IntN(cats)
		m.Fixed[0].Values[i], m.Factors[0].Index[i], m.Factors[1].Index[i] = x, int32(g), int32(c)
		if rng.Float64() < 1/(1+math.Exp(-(-0.5+0.8*x+u[g]+b[c]))) {
			m.Y[i] = 1
		}
	}
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), post, nil, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 400, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if k := res.Choice.Kernel.Name(); k != "GroupGibbs" {
		t.Errorf("the automatic default chose %s, want GroupGibbs (%s)", k, res.Choice)
	}
	// The intercept and the mean of the categorical's effects are
	// identified through the prior alone; GroupGibbs moves along that
	// direction by its location moves, which pair the intercept with the
	// fixed-scale term as with the random one, so every coordinate mixes
	// (without them the intercept's bulk ESS was 26 of 1,600, R-hat 1.11).
	// The effects are compared with the truth through their contrasts with
	// the first level's, which the data identify.
	sum := res.Summary()
	var seen int
	for _, ps := range sum.Params {
		if strings.HasPrefix(ps.Name, "b_cat[") || ps.Name == "Intercept" {
			seen++
		}
		if ps.RHat > 1.05 || ps.ESSBulk < 100 {
			t.Errorf("%s: R-hat %.3f, bulk ESS %.0f: want ≤ 1.05 and ≥ 100", ps.Name, ps.RHat, ps.ESSBulk)
		}
	}
	if seen != cats+1 {
		t.Fatalf("%d parameters b_cat[…] and Intercept, want %d", seen, cats+1)
	}
	flat := func(j int) []float64 { return slices.Concat(res.Samples(j)...) }
	base := 2 + groups // b_cat[1]
	first := flat(base)
	for c := 1; c < cats; c++ {
		dr := flat(base + c)
		var mean, ss float64
		for k := range dr {
			mean += dr[k] - first[k]
		}
		mean /= float64(len(dr))
		for k := range dr {
			v := dr[k] - first[k] - mean
			ss += v * v
		}
		sd := math.Sqrt(ss / float64(len(dr)-1))
		if z := (mean - (b[c] - b[0])) / sd; math.Abs(z) > 4 {
			t.Errorf("%s − b_cat[1]: posterior mean %.3f (sd %.3f), true %.3f: %.1f sd away", post.Names[base+c], mean, sd, b[c]-b[0], z)
		}
	}
}

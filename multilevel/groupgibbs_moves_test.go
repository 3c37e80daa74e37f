// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlNested is a multilevel logistic regression with nested factors and a
// group-level covariate for GroupGibbs's moves: an intercept, a datum's
// covariate x and a lecturer-level covariate w (constant within each
// lecturer), β ~ N(0, 1); factor "d" (k departments, a random intercept,
// τ_d ~ half-normal(sdD)) and factor "l" (l lecturers, lecturer j in
// department j mod k, a random intercept, τ_l ~ half-normal(1)), each
// datum's lecturer drawn at random. θ = (β_0, β_x, β_w, u_d[1…k],
// u_l[1…l], log τ_d, log τ_l). Its shifts: the intercept against d's and
// against l's effects, β_w against l's (weights w_j), and each
// department against its lecturers.
type mlNested struct {
	n, k, l int
	sdD     float64
	probit  bool // a probit model (else logistic)
}

func (m mlNested) dim() int { return 3 + m.k + m.l + 2 }

// build returns the posterior for logistic (probit) data drawn at θ, the
// lecturer-level covariate w taking −1, 0 and values in [0.5, 1.5].
func (m mlNested) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	wl := make([]float64, m.l)
	for j := range wl {
		wl[j] = float64(j%3) - 1 // −1, 0, 1: some lecturers hold w = 0
		if j%3 == 2 {
			wl[j] = 0.5 + float64(j%5)/4
		}
	}
	var fam model.GLMFamily = model.LogisticFamily{}
	if m.probit {
		fam = model.ProbitFamily{}
	}
	return m.buildData(rng, theta, fam, 1, wl, func(z float64) float64 {
		pr := 1 / (1 + math.Exp(-z))
		if m.probit {
			pr = 0.5 * math.Erfc(-z/math.Sqrt2)
		}
		if rng.Float64() < pr {
			return 1
		}
		return 0
	})
}

// buildData returns the posterior of family fam for data drawn at θ: x ~
// N(0, xsd²), lecturer j's covariate wl[j], each datum's lecturer drawn
// at random (datum i < l in lecturer i), its response y(z) at linear
// predictor z.
func (m mlNested) buildData(rng *rand.Rand, theta []float64, fam model.GLMFamily, xsd float64, wl []float64,
	y func(z float64) float64) (*exactmh.Posterior, error) {
	x, w := make([]float64, m.n), make([]float64, m.n)
	ml := &model.Multilevel{
		Family: fam, Y: make([]float64, m.n), Intercept: true,
		Fixed:   []model.Covariate{{Name: "x", Values: x}, {Name: "w", Values: w}},
		FixedSD: []float64{1, 1, 1},
		Factors: []model.Factor{
			{Name: "d", Index: make([]int32, m.n), Tau: model.HalfNormal(m.sdD)},
			{Name: "l", Index: make([]int32, m.n), Tau: model.HalfNormal(1)},
		},
	}
	for i := range m.n {
		x[i] = xsd * rng.NormFloat64()
		l := rng.IntN(m.l)
		if i < m.l {
			l = i
		}
		d := l % m.k
		w[i] = wl[l]
		ml.Factors[0].Index[i], ml.Factors[1].Index[i] = int32(d), int32(l)
		ml.Y[i] = y(theta[0] + theta[1]*x[i] + theta[2]*w[i] + theta[3+d] + theta[3+m.k+l])
	}
	return model.NewMultilevel(ml)
}

// drawTheta draws θ from the prior.
func (m mlNested) drawTheta(rng *rand.Rand) []float64 {
	beta := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	td, tl := m.sdD*math.Abs(rng.NormFloat64()), math.Abs(rng.NormFloat64())
	return m.at(rng, beta, td, tl)
}

// at returns θ with fixed effects beta, scales τ_d = td and τ_l = tl, and
// the departments' and lecturers' effects drawn from N(0, τ²).
func (m mlNested) at(rng *rand.Rand, beta [3]float64, td, tl float64) []float64 {
	d := m.dim()
	theta := make([]float64, d)
	copy(theta, beta[:])
	theta[d-2], theta[d-1] = math.Log(td), math.Log(tl)
	for j := range m.k {
		theta[3+j] = td * rng.NormFloat64()
	}
	for j := range m.l {
		theta[3+m.k+j] = tl * rng.NormFloat64()
	}
	return theta
}

// Draw implements mcmctest.Model: θ from the prior, data, and the
// problem with a short NUTS pilot's mean and sd as Mode and SD.
func (m mlNested) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.drawTheta(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// TestGroupGibbsShiftsFound checks the shifts GroupGibbs finds on
// mlNested and mlCrossed against the designs' structure — the intercept
// against each factor, the group-level covariate against its factor with
// its values as weights, each department against its lecturers, the
// fixed slope against the random slope, and nothing else — and that each
// leaves every linear predictor unchanged (Xv = 0 on every row), as the
// mutant GroupGibbsShiftBreak's do not.
func TestGroupGibbsShiftsFound(t *testing.T) {
	m := mlNested{n: 300, k: 3, l: 9, sdD: 0.5}
	rng := rand.New(rand.NewPCG(3, 4))
	theta := m.drawTheta(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	idx, w, err := multilevel.GibbsShifts(p, multilevel.GroupGibbs{Center: theta})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for s := range idx {
		got = append(got, p.Names[idx[s][0]])
	}
	ic := p.Names[0] // the intercept's name
	want := []string{ic, ic, "w", "u_d[1]", "u_d[2]", "u_d[3]"}
	if !slices.Equal(got, want) {
		t.Fatalf("shifts of %q, want %q", got, want)
	}
	if n := len(idx[0]); n != 1+m.k {
		t.Errorf("intercept against d: %d coordinates, want %d", n, 1+m.k)
	}
	if n := len(idx[1]); n != 1+m.l {
		t.Errorf("intercept against l: %d coordinates, want %d", n, 1+m.l)
	}
	// w against l: the lecturers with w ≠ 0, weighted by −w.
	for q, j := range idx[2][1:] {
		lj := int(j) - 3 - m.k
		if lj < 0 || lj >= m.l || lj%3 == 1 {
			t.Errorf("w's shift holds %s", p.Names[j])
		}
		if w[2][q+1] == 0 {
			t.Errorf("w's shift: weight 0 on %s", p.Names[j])
		}
	}
	for s := 3; s < len(idx); s++ {
		if n := len(idx[s]); n != 1+m.l/m.k {
			t.Errorf("department %d: %d coordinates, want %d", s-3, n, 1+m.l/m.k)
		}
	}
	checkShiftsInvariant(t, p, idx, w, true)
	// The mutant's shifts change some linear predictor.
	bi, bw, err := multilevel.GibbsShifts(p, multilevel.GroupGibbsShiftBreak(multilevel.GroupGibbs{Center: theta}))
	if err != nil {
		t.Fatal(err)
	}
	checkShiftsInvariant(t, p, bi, bw, false)

	c := mlCrossed{n: 300, ga: 4, gb: 3}
	pc := c.posteriorAt(t, 0.5, 0.5, [3]float64{0.5, 0.3, 0.5})
	th := make([]float64, c.dim())
	idx, w, err = multilevel.GibbsShifts(pc, multilevel.GroupGibbs{Center: th})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for s := range idx {
		got = append(got, pc.Names[idx[s][0]]+"/"+pc.Names[idx[s][len(idx[s])-1]])
	}
	want = []string{ic + "/u_a[4]", "x/u_a_x[4]", ic + "/u_b[3]"}
	if !slices.Equal(got, want) {
		t.Errorf("crossed: shifts %q, want %q", got, want)
	}
	checkShiftsInvariant(t, pc, idx, w, true)
}

// checkShiftsInvariant checks that every shift v has x_iᵀv = 0 on every
// row (want true) or that some shift changes some row's (want false).
func checkShiftsInvariant(t *testing.T, p *exactmh.Posterior, idx [][]int32, w [][]float64, want bool) {
	t.Helper()
	e := p.Energy.(multilevel.SparseRowGLM)
	d := p.Energy.Dim()
	v := make([]float64, d)
	var cols []int32
	var vals []float64
	changed := false
	for s := range idx {
		clear(v)
		for q, j := range idx[s] {
			v[j] = w[s][q]
		}
		for i := range e.Len() {
			cols, vals = e.SparseRow(i, cols[:0], vals[:0])
			var z float64
			for q, c := range cols {
				z += vals[q] * v[c]
			}
			if z != 0 {
				changed = true
				if want {
					t.Errorf("shift %d (%s) changes row %d's linear predictor by %v per unit", s, p.Names[idx[s][0]], i, z)
					return
				}
			}
		}
	}
	if !want && !changed {
		t.Errorf("no shift changes a linear predictor")
	}
}

// movesKernel is GroupGibbs centred at the problem's Mode, every block's
// data thinned unless thinning would draw more than it holds.
func movesKernel(pb mcmctest.Problem) multilevel.GroupGibbs {
	return multilevel.GroupGibbs{Center: pb.Mode, ExactBelow: -1}
}

// TestGroupGibbsMovesMoments compares GroupGibbs's posterior means and
// standard deviations (its shifts and scale moves on) with full-batch
// non-centred NUTS's (4 × 1500 draws: the centred funnel's lower tails of
// log τ are NUTS's weak spot) on two mlNested designs with τ unknown —
// departments of moderate spread (N = 800, 3 departments, 12 lecturers)
// and a departments' scale near zero (τ_d = 0.02 in the data, prior
// half-normal(0.5)) — every mean within 4.5 combined
// Monte Carlo standard errors, every SD ratio in [0.85, 1.18] ([0.7, 1.4]
// for the log scales); and that each mutant is caught (some |z| > 6 or SD
// ratio outside [0.7, 1.4], [0.5, 2] for the log scales): shifts that
// change a linear predictor, scale moves without their Jacobian, nested
// scale moves without theirs. (Scale
// moves without their proposal ratio — σ varies with the effects — passed
// at this size, |z| 1.5, and are not claimed caught.)
func TestGroupGibbsMovesMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and GroupGibbs runs of 4 chains")
	}
	for _, pr := range []struct {
		name string
		tauD float64
	}{
		{"nested", 0.6},
		{"nested, τ_d near 0", 0.02},
	} {
		m := mlNested{n: 800, k: 3, l: 12, sdD: 0.5}
		rng := rand.New(rand.NewPCG(41, 42))
		theta := m.at(rng, [3]float64{0.4, 0.8, -0.6}, pr.tauD, 0.5)
		p, err := m.build(rng, theta)
		if err != nil {
			t.Fatal(err)
		}
		rs, mode, sd := nutsReferenceNonCentred(t, p, 500, 1500)
		pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
		z, zn, lr, ln, res := gibbsMoments(t, p, movesKernel(pb), rs, mode, 3000)
		t.Logf("%s: GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f (NUTS %.0f), %v",
			pr.name, z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()), minESS(rs), res.Chains[0].Params)
		if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
			t.Errorf("%s: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", pr.name, z, zn, lr, ln)
		}
		mutants := map[string]exactmh.Kernel{
			"shift changes a linear predictor":       multilevel.GroupGibbsShiftBreak(movesKernel(pb)),
			"scale move without its Jacobian":        multilevel.GroupGibbsScaleNoJacobian(movesKernel(pb)),
			"nested scale move without its Jacobian": multilevel.GroupGibbsNestedNoJacobian(movesKernel(pb)),
		}
		for name, k := range mutants {
			z, zn, lr, ln, _ := gibbsMoments(t, p, k, rs, mode, 2000)
			reportMutant(t, pr.name, name, math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
		}
	}
}

// TestGroupGibbsMovesSBC runs simulation-based calibration with τ
// unknown on mlNested (N = 200, 3 departments of 2 lecturers each, τ_d ~
// half-normal(0.3): the departments' scale often near zero), every
// coordinate, with the shifts and scale moves on and every block's data
// thinned unless thinning would draw more than it holds.
func TestGroupGibbsMovesSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBCOf(t, mlNested{n: 200, k: 3, l: 6, sdD: 0.3}, func(pb mcmctest.Problem) exactmh.Kernel { return movesKernel(pb) }, 11)
}

// nutsReferenceNonCentred is nutsReferenceLong with non-centred NUTS
// (u = τ·z), whose reach into a funnel's neck the centred form lacks.
func nutsReferenceNonCentred(t *testing.T, p *exactmh.Posterior, warmup, draws int) (*exactmh.Summary, []float64, []float64) {
	t.Helper()
	d := p.Energy.Dim()
	ref, err := exactmh.Sample(context.Background(), p, &exactmh.NUTS{NonCentred: true},
		&exactmh.Settings{Chains: 4, Warmup: warmup, Draws: draws, Seed: 1, Init: make([]float64, d)})
	if err != nil {
		t.Fatal(err)
	}
	rs := ref.Summary()
	mode, sd := make([]float64, d), make([]float64, d)
	for j, ps := range rs.Params {
		mode[j], sd[j] = ps.Mean, ps.SD
	}
	return rs, mode, sd
}

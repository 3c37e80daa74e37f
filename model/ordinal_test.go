// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// ordinalDraw returns y = 1 + #{k : c_k < η + ε}, ε standard logistic:
// P(y ≤ k) = F(c_k − η).
func ordinalDraw(rng *rand.Rand, eta float64, cut []float64) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	z := eta + math.Log(u/(1-u))
	y := 1.0
	for _, c := range cut {
		if c < z {
			y++
		}
	}
	return y
}

// ordinalData returns n rows of d N(0, 1) covariates (no intercept) and
// cumulative logit responses at β and the cutpoints cut.
func ordinalData(rng *rand.Rand, n int, beta, cut []float64) (x, y []float64) {
	d := len(beta)
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		var eta float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			eta += x[i*d+j] * beta[j]
		}
		y[i] = ordinalDraw(rng, eta, cut)
	}
	return x, y
}

// rawCut returns the coordinates (c_1, log(c_2 − c_1), …) of ordered
// cutpoints.
func rawCut(cut []float64) []float64 {
	raw := []float64{cut[0]}
	for k := 1; k < len(cut); k++ {
		raw = append(raw, math.Log(cut[k]-cut[k-1]))
	}
	return raw
}

func logisticCDF(t float64) float64 { return 1 / (1 + math.Exp(-t)) }

// TestOrdinalEnergy checks U_i against −log(F(c_y − η) − F(c_{y−1} − η))
// formed directly, EnergyDiffs against Energies, the gradient of the
// energy and of WithCutpoints against central differences (including a
// far point where a category's probability is below 10⁻¹²), the
// Jacobian's presence, and zero allocations on the step paths.
func TestOrdinalEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	const n, d, K = 60, 2, 4
	x, y := ordinalData(rng, n, []float64{0.7, -0.4}, []float64{-1, 0.2, 1.4})
	e, err := model.NewOrdinalRegression(x, y, d, K)
	if err != nil {
		t.Fatal(err)
	}
	prior := &model.WithCutpoints{K: K, Cut: model.DefaultCutpointPrior}
	idx, w := make([]int, n), make([]float64, n)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	neglogpost := func(th []float64) float64 {
		dst := make([]float64, n)
		e.Energies(dst, th, idx)
		var s float64
		for _, v := range dst {
			s += v
		}
		return s - prior.LogPrior(th)
	}
	for _, th := range [][]float64{
		append([]float64{0.7, -0.4}, rawCut([]float64{-1, 0.2, 1.4})...),
		{-2, 3, 0.5, math.Log(0.01), math.Log(4)},
		{9, -8, -3, 1, -2},
	} {
		dst := make([]float64, n)
		e.Energies(dst, th, idx)
		cut := model.Cutpoints(make([]float64, K-1), th[d:])
		if th[2] == 0.5 { // moderate: the direct form is accurate
			for i := range n {
				eta := x[i*d]*th[0] + x[i*d+1]*th[1]
				yi := int(y[i])
				hi, lo := 1.0, 0.0
				if yi < K {
					hi = logisticCDF(cut[yi-1] - eta)
				}
				if yi > 1 {
					lo = logisticCDF(cut[yi-2] - eta)
				}
				if want := -math.Log(hi - lo); math.Abs(dst[i]-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("θ %v datum %d (y %d): U = %v, want %v", th, i, yi, dst[i], want)
				}
			}
		}
		th2 := slices.Clone(th)
		th2[0] += 0.3
		th2[3] -= 0.2
		dst2, diffs := make([]float64, n), make([]float64, n)
		e.Energies(dst2, th2, idx)
		e.EnergyDiffs(diffs, th, th2, idx)
		for i := range n {
			if want := dst[i] - dst2[i]; math.Abs(diffs[i]-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("θ %v datum %d: EnergyDiffs %v, want %v", th, i, diffs[i], want)
			}
		}
		grad := make([]float64, len(th))
		u := make([]float64, n)
		e.EnergiesAndGradient(u, grad, th, idx, w)
		for j := range grad {
			grad[j] = -grad[j]
		}
		prior.AddLogPriorGradient(grad, th)
		for j := range th {
			h := 1e-6 * (1 + math.Abs(th[j]))
			tp, tm := slices.Clone(th), slices.Clone(th)
			tp[j] += h
			tm[j] -= h
			fd := -(neglogpost(tp) - neglogpost(tm)) / (2 * h)
			if math.Abs(fd-grad[j]) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("θ %v: ∂log π/∂θ%d = %v, central difference %v", th, j, grad[j], fd)
			}
		}
	}
	// The Jacobian: Σ_{k≥2} ℓ_k, here ℓ_2 + ℓ_3 = log 2 + log 3.
	th := []float64{0, 0, 0, math.Log(2), math.Log(3)}
	mut := &model.WithCutpoints{K: K, Cut: model.DefaultCutpointPrior}
	mut.MutateNoJacobian()
	if got := prior.LogPrior(th) - mut.LogPrior(th); math.Abs(got-math.Log(6)) > 1e-12 {
		t.Errorf("Jacobian term %v, want log 6", got)
	}
	th2 := slices.Clone(th)
	th2[0] = 0.1
	grad, dst := make([]float64, len(th)), make([]float64, n)
	if a := testing.AllocsPerRun(20, func() {
		e.EnergyDiffs(dst, th, th2, idx)
		e.EnergiesAndGradient(dst, grad, th, idx, w)
		prior.AddLogPriorGradient(grad, th)
		_ = prior.LogPrior(th)
	}); a != 0 {
		t.Errorf("%v allocations per step, want 0", a)
	}
	for _, bad := range [][]float64{{0}, {5}, {1.5}, {math.NaN()}} {
		if _, err := model.NewOrdinalRegression([]float64{1}, bad, 1, K); err == nil {
			t.Errorf("y = %v accepted with K = %d", bad, K)
		}
	}
	if _, err := model.NewOrdinalRegression([]float64{1}, []float64{1}, 1, 1); err == nil {
		t.Errorf("K = 1 accepted")
	}
}

// ordinalPosterior returns the cumulative logit posterior of the kit's
// data: N(0, 5²) on β, brms's student_t(3, 0, 2.5) on the cutpoints.
func ordinalPosterior(t *testing.T, x, y []float64, d, k int, mut model.OrdinalMutant, noJacobian bool) *exactmh.Posterior {
	t.Helper()
	e, err := model.NewOrdinalRegression(x, y, d, k)
	if err != nil {
		t.Fatal(err)
	}
	e.Mutate(mut)
	base, err := model.NewIsoGaussian(d, 5)
	if err != nil {
		t.Fatal(err)
	}
	prior := &model.WithCutpoints{Base: base, K: k, Cut: model.DefaultCutpointPrior}
	if noJacobian {
		prior.MutateNoJacobian()
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// TestOrdinalMoments samples a cumulative logit regression (N = 2500, two
// covariates, K = 4, one category rare so that its increment's prior and
// Jacobian matter) with the kernel the automatic default chooses and
// compares its means and variances with full-batch NUTS's: two-sample
// |z| < 4.5 on every coordinate. Mutants, each caught: the Jacobian of
// the ordered transform dropped, the data of category 2 reading the
// cutpoints of category 3, and the sign convention of η flipped.
func TestOrdinalMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: the default's choice and NUTS")
	}
	rng := rand.New(rand.NewPCG(73, 74))
	const d, K = 2, 4
	x, y := ordinalData(rng, 2500, []float64{0.8, -0.5}, []float64{-1.2, -1.05, 1})
	ctx := context.Background()
	p := ordinalPosterior(t, x, y, d, K, model.OrdinalMutant{}, false)
	ref, err := exactmh.Sample(ctx, p, &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 2500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p *exactmh.Posterior) (*exactmh.Result, string) {
		c, err := exactmh.Choose(ctx, p, &exactmh.Settings{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		set := &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 2500, Seed: 2}
		if c.Laplace != nil {
			set.Init = c.Laplace.Mean
		}
		r, err := exactmh.Sample(ctx, c.Posterior, c.Kernel, set)
		if err != nil {
			t.Fatal(err)
		}
		return r, c.Name
	}
	r, name := run(p)
	z, j := compareZ(r, ref)
	t.Logf("the automatic default %s: largest two-sample |z| %.2f (θ%d) against NUTS", name, z, j)
	if !(math.Abs(z) < 4.5) {
		t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", name, z, j)
	}
	for _, m := range []struct {
		name  string
		mut   model.OrdinalMutant
		noJac bool
	}{
		{"Jacobian of the ordered transform dropped", model.OrdinalMutant{}, true},
		{"category 2 reads category 3's cutpoints", model.OrdinalMutant{OffByOne: true}, false},
		{"sign of η flipped", model.OrdinalMutant{SignFlip: true}, false},
	} {
		r, _ := run(ordinalPosterior(t, x, y, d, K, m.mut, m.noJac))
		if z, j := compareZ(r, ref); math.Abs(z) < 4.5 {
			t.Errorf("mutant %q passes: z = %.2f (θ%d)", m.name, z, j)
		} else {
			t.Logf("mutant %q caught: z = %.1f (θ%d)", m.name, z, j)
		}
	}
}

// ordinalSBCModel draws β ~ N(0, 1)², the K − 1 = 3 cutpoints as three
// student_t(3, 0, 2.5) draws sorted (the prior WithCutpoints puts on
// them: independent densities restricted to their order), N = 100
// responses, and poses the posterior with every parameter unknown.
type ordinalSBCModel struct{}

func (ordinalSBCModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	const d, K = 2, 4
	beta := []float64{rng.NormFloat64(), rng.NormFloat64()}
	cut := make([]float64, K-1)
	for k := range cut {
		cut[k] = studentTDraw(rng, 3) * 2.5
	}
	slices.Sort(cut)
	x, y := ordinalData(rng, 100, beta, cut)
	e, err := model.NewOrdinalRegression(x, y, d, K)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	base, err := model.NewIsoGaussian(d, 1)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	p := &exactmh.Posterior{Energy: e, Prior: &model.WithCutpoints{Base: base, K: K, Cut: model.DefaultCutpointPrior}}
	theta := append(beta, rawCut(cut)...)
	return theta, mcmctest.Problem{Posterior: p, Mode: slices.Clone(theta), SD: []float64{0.2, 0.2, 0.3, 0.3, 0.3}}, nil
}

// studentTDraw draws t(ν) as z/√(χ²_ν/ν), χ²_ν a sum of ν squares (ν an
// integer).
func studentTDraw(rng *rand.Rand, nu int) float64 {
	var s float64
	for range nu {
		v := rng.NormFloat64()
		s += v * v
	}
	return rng.NormFloat64() / math.Sqrt(s/float64(nu))
}

// TestOrdinalSBC is simulation-based calibration of NUTS on the
// cumulative logit regression with β and the cutpoints unknown (200
// replicates): ranks uniform at Bonferroni level 0.01.
func TestOrdinalSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	r, err := mcmctest.SBC(ordinalSBCModel{}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
}

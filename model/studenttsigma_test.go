// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/stat/distuv"
)

// tData returns n rows of an intercept and a N(0, 1) covariate and
// responses x_iᵀβ + σ·t_ν.
func tData(rng *rand.Rand, n int, beta []float64, sigma, nu float64) (x, y []float64) {
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu, Src: rand.NewPCG(rng.Uint64(), 2)}
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := range n {
		x[2*i], x[2*i+1] = 1, rng.NormFloat64()
		y[i] = beta[0] + beta[1]*x[2*i+1] + sigma*st.Rand()
	}
	return x, y
}

// TestStudentTScaleEnergy checks U_i against the Student-t log density
// (−log p = U_i + const) and the gradient against central differences.
func TestStudentTScaleEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	x, y := tData(rng, 30, []float64{1, 2}, 1.5, 4)
	e, err := model.NewStudentTScaleRegression(x, y, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	idx, w := make([]int, 30), make([]float64, 30)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	total := func(th []float64) float64 {
		dst := make([]float64, 30)
		e.Energies(dst, th, idx)
		var s float64
		for _, v := range dst {
			s += v
		}
		return s
	}
	th, th2 := []float64{0.8, 2.1, math.Log(1.2)}, []float64{1.1, 1.7, math.Log(2)}
	var want float64
	for i := range 30 {
		for c, p := range [][]float64{th, th2} {
			lp := distuv.StudentsT{Mu: p[0] + p[1]*x[2*i+1], Sigma: math.Exp(p[2]), Nu: 4}.LogProb(y[i])
			want += float64(1-2*c) * -lp // U(θ) − U(θ′)
		}
	}
	if got := total(th) - total(th2); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
		t.Errorf("ΣU(θ) − U(θ′) = %v, from the log density %v", got, want)
	}
	grad := make([]float64, 3)
	e.AddGradient(grad, th, idx, w)
	for j := range 3 {
		tp, tm := append([]float64{}, th...), append([]float64{}, th...)
		tp[j] += 1e-6
		tm[j] -= 1e-6
		if fd := (total(tp) - total(tm)) / 2e-6; math.Abs(fd-grad[j]) > 1e-5*(1+math.Abs(fd)) {
			t.Errorf("∂U/∂θ%d = %v, central difference %v", j, grad[j], fd)
		}
	}
}

// TestStudentTScaleMoments compares the automatic default's kernel on a
// Student-t regression with σ unknown (N = 2500, ν = 4, σ = 1.5) with
// full-batch NUTS: two-sample |z| < 4.5; the mutant weighing the log term
// by ν/2 instead of (ν+1)/2 must be caught there. The Jacobian of log σ
// moves log σ by about its variance, a tenth of its sd at N = 40: the
// mutant dropping it is run there, NUTS against NUTS, 4 × 10,000 draws.
func TestStudentTScaleMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: the default's choice and NUTS")
	}
	ctx := context.Background()
	post := func(x, y []float64, mutNu, mutJac bool) *exactmh.Posterior {
		e, err := model.NewStudentTScaleRegression(x, y, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		if mutNu {
			model.MutateTNu(e)
		}
		pr := &model.WithScale{Scale: model.HalfStudentT(3, 2.5)}
		if mutJac {
			model.MutateNoJacobian(pr)
		}
		return &exactmh.Posterior{Energy: e, Prior: pr}
	}
	report := func(name string, mutant bool, z float64, j int) {
		switch {
		case !mutant && !(math.Abs(z) < 4.5):
			t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", name, z, j)
		case !mutant:
			t.Logf("%s: largest two-sample |z| %.2f (θ%d) against NUTS", name, z, j)
		case math.Abs(z) < 4.5:
			t.Errorf("mutant %q passes: z = %.2f (θ%d)", name, z, j)
		default:
			t.Logf("mutant %q caught: z = %.1f (θ%d)", name, z, j)
		}
	}
	rng := rand.New(rand.NewPCG(53, 54))
	x, y := tData(rng, 2500, []float64{1, 2}, 1.5, 4)
	ref, err := exactmh.Sample(ctx, post(x, y, false, false), &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 5000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, mut := range []bool{false, true} {
		p := post(x, y, mut, false)
		c, err := exactmh.Choose(ctx, p, &exactmh.Settings{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		set := &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 5000, Seed: 2}
		if c.Laplace != nil {
			set.Init = c.Laplace.Mean
		}
		r, err := exactmh.Sample(ctx, c.Posterior, c.Kernel, set)
		if err != nil {
			t.Fatal(err)
		}
		z, j := compareZ(r, ref)
		name := c.Name
		if mut {
			name = "(ν+1)/2 → ν/2"
		}
		report(name, mut, z, j)
	}
	x, y = tData(rng, 40, []float64{1, 2}, 1.5, 4)
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 10000, Seed: 3}
	ref, err = exactmh.Sample(ctx, post(x, y, false, false), &exactmh.NUTS{}, set)
	if err != nil {
		t.Fatal(err)
	}
	set.Seed = 4
	r, err := exactmh.Sample(ctx, post(x, y, false, true), &exactmh.NUTS{}, set)
	if err != nil {
		t.Fatal(err)
	}
	z, j := compareZ(r, ref)
	report("Jacobian of log σ dropped", true, z, j)
}

// tSBCModel draws β ~ N(0, 1)², σ ~ half-normal(1) and N = 60 responses
// with ν = 4 noise, and poses the posterior with β and σ unknown.
type tSBCModel struct{}

func (tSBCModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	beta := []float64{rng.NormFloat64(), rng.NormFloat64()}
	sigma := math.Abs(rng.NormFloat64())
	x, y := tData(rng, 60, beta, sigma, 4)
	e, err := model.NewStudentTScaleRegression(x, y, 2, 4)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	base, err := model.NewIsoGaussian(2, 1)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	theta := []float64{beta[0], beta[1], math.Log(sigma)}
	p := &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: base, Scale: model.HalfNormal(1)}}
	return theta, mcmctest.Problem{Posterior: p, Mode: append([]float64{}, theta...), SD: []float64{0.2, 0.2, 0.2}}, nil
}

// TestStudentTScaleSBC is simulation-based calibration of NUTS on the
// Student-t regression with β and σ unknown (200 replicates): ranks
// uniform at Bonferroni level 0.01.
func TestStudentTScaleSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	r, err := mcmctest.SBC(tSBCModel{}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 200, Seed: 17})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
}

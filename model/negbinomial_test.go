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

// nbData returns n rows of an intercept and a N(0, 0.5²) covariate,
// offsets log(exposure) with exposure uniform on [0.5, 2], and NB2
// counts of mean e^{x_iᵀβ + o_i} and shape phi (a Gamma(φ, φ/μ) rate,
// then a Poisson count).
func nbData(rng *rand.Rand, n int, beta []float64, phi float64) (x, y, off []float64) {
	d := len(beta)
	x, y, off = make([]float64, n*d), make([]float64, n), make([]float64, n)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	for i := range n {
		x[i*d] = 1
		for j := 1; j < d; j++ {
			x[i*d+j] = 0.5 * rng.NormFloat64()
		}
		off[i] = math.Log(0.5 + 1.5*rng.Float64())
		eta := off[i]
		for j := range d {
			eta += x[i*d+j] * beta[j]
		}
		mu := math.Exp(eta)
		lam := distuv.Gamma{Alpha: phi, Beta: phi / mu, Src: src}.Rand()
		if lam > 0 {
			y[i] = distuv.Poisson{Lambda: lam, Src: src}.Rand()
		}
	}
	return x, y, off
}

// TestNegBinomialEnergy checks U_i against the NB2 log pmf
// (−log p(y | μ, φ) = U_i + log y!) and its gradient against central
// differences, at random points including large counts and small shapes.
func TestNegBinomialEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	x, y, off := nbData(rng, 50, []float64{1.5, 0.7}, 0.8)
	y[0] = 400 // a large count
	e, err := model.NewNegBinomialRegression(x, y, off, 2)
	if err != nil {
		t.Fatal(err)
	}
	idx, w := make([]int, 50), make([]float64, 50)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	total := func(th []float64) float64 {
		dst := make([]float64, 50)
		e.Energies(dst, th, idx)
		var s float64
		for _, v := range dst {
			s += v
		}
		return s
	}
	for _, th := range [][]float64{{1.5, 0.7, math.Log(0.8)}, {-2, 3, math.Log(0.05)}, {4, -1, math.Log(50)}} {
		dst := make([]float64, 50)
		e.Energies(dst, th, idx)
		phi := math.Exp(th[2])
		for i := range 50 {
			mu := math.Exp(x[2*i]*th[0] + x[2*i+1]*th[1] + off[i])
			a, _ := math.Lgamma(y[i] + phi)
			b, _ := math.Lgamma(phi)
			c, _ := math.Lgamma(y[i] + 1)
			logp := a - b - c + phi*math.Log(phi/(phi+mu)) + y[i]*math.Log(mu/(phi+mu))
			if want := -logp - c; math.Abs(dst[i]-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("θ %v datum %d (y %v): U = %v, want %v", th, i, y[i], dst[i], want)
			}
		}
		grad := make([]float64, 3)
		e.AddGradient(grad, th, idx, w)
		for j := range 3 {
			h := 1e-6 * (1 + math.Abs(th[j]))
			tp, tm := append([]float64{}, th...), append([]float64{}, th...)
			tp[j] += h
			tm[j] -= h
			if fd := (total(tp) - total(tm)) / (2 * h); math.Abs(fd-grad[j]) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("θ %v: ∂U/∂θ%d = %v, central difference %v", th, j, grad[j], fd)
			}
		}
	}
}

// nbPosterior returns the NB2 posterior of the kit's data: N(0, 5²) on
// β, brms's Gamma(0.01, 0.01) on φ.
func nbPosterior(t *testing.T, x, y, off []float64, mutate func(*model.NegBinomialRegression, *model.WithScale)) *exactmh.Posterior {
	t.Helper()
	e, err := model.NewNegBinomialRegression(x, y, off, 2)
	if err != nil {
		t.Fatal(err)
	}
	base, err := model.NewIsoGaussian(2, 5)
	if err != nil {
		t.Fatal(err)
	}
	prior := &model.WithScale{Base: base, Scale: model.Gamma(0.01, 0.01)}
	if mutate != nil {
		mutate(e, prior)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// TestNegBinomialMoments samples an NB2 regression (N = 2500, an
// intercept and a covariate, offsets, φ = 8: overdispersion μ²/φ a
// fifth of the mean, so that log φ is loosely determined) with the kernel the
// automatic default chooses and compares its means and variances with
// full-batch NUTS's: two-sample |z| < 4.5 on β and log φ. Mutants,
// caught: the Jacobian of log φ dropped, the φ·log φ term dropped, and
// the offsets ignored.
func TestNegBinomialMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: the default's choice and NUTS")
	}
	rng := rand.New(rand.NewPCG(33, 34))
	x, y, off := nbData(rng, 2500, []float64{0.8, 0.6}, 8)
	ctx := context.Background()
	p := nbPosterior(t, x, y, off, nil)
	c, err := exactmh.Choose(ctx, p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the automatic default: %s (%s)", c.Name, c.Reason)
	ref, err := exactmh.Sample(ctx, p, &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 2500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p *exactmh.Posterior) *exactmh.Result {
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
		return r
	}
	r := run(p)
	z, j := compareZ(r, ref)
	t.Logf("%s: largest two-sample |z| %.2f (θ%d) against NUTS", c.Name, z, j)
	if !(math.Abs(z) < 4.5) {
		t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", c.Name, z, j)
	}
	for _, m := range []struct {
		name   string
		mutate func(*model.NegBinomialRegression, *model.WithScale)
		off    []float64
	}{
		{"Jacobian of log φ dropped", func(_ *model.NegBinomialRegression, p *model.WithScale) { model.MutateNoJacobian(p) }, off},
		{"φ·log φ dropped", func(e *model.NegBinomialRegression, _ *model.WithScale) { model.MutateNoShapeLog(e) }, off},
		{"offsets ignored", nil, nil},
	} {
		r := run(nbPosterior(t, x, y, m.off, m.mutate))
		if z, j := compareZ(r, ref); math.Abs(z) < 4.5 {
			t.Errorf("mutant %q passes: z = %.2f (θ%d)", m.name, z, j)
		} else {
			t.Logf("mutant %q caught: z = %.1f (θ%d)", m.name, z, j)
		}
	}
}

// nbSBCModel draws β ~ N(0, 1)², φ ~ Gamma(2, 0.5) and N = 120 counts,
// and poses the posterior with every parameter unknown.
type nbSBCModel struct{}

func (nbSBCModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	beta := []float64{rng.NormFloat64(), rng.NormFloat64()}
	phi := distuv.Gamma{Alpha: 2, Beta: 0.5, Src: rand.NewPCG(rng.Uint64(), 1)}.Rand()
	x, y, off := nbData(rng, 120, beta, phi)
	e, err := model.NewNegBinomialRegression(x, y, off, 2)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	base, err := model.NewIsoGaussian(2, 1)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	p := &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: base, Scale: model.Gamma(2, 0.5)}}
	theta := []float64{beta[0], beta[1], math.Log(phi)}
	return theta, mcmctest.Problem{Posterior: p, Mode: append([]float64{}, theta...), SD: []float64{0.1, 0.2, 0.3}}, nil
}

// TestNegBinomialSBC is simulation-based calibration of NUTS on the NB2
// regression with β and φ unknown (200 replicates): ranks uniform at
// Bonferroni level 0.01.
func TestNegBinomialSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	r, err := mcmctest.SBC(nbSBCModel{}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 200, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
}

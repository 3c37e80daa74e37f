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
)

// binomialData returns n rows of an intercept and d−1 normal covariates
// (sd 0.5), trials 1 + Poisson-like counts up to 20, and successes drawn
// with P = F(x_iᵀβ) for the link.
func binomialData(rng *rand.Rand, n int, beta []float64, link model.GLMFamily) (x, k, tr []float64) {
	d := len(beta)
	x, k, tr = make([]float64, n*d), make([]float64, n), make([]float64, n)
	for i := range n {
		x[i*d] = 1
		var z float64
		for j := range d {
			if j > 0 {
				x[i*d+j] = 0.5 * rng.NormFloat64()
			}
			z += x[i*d+j] * beta[j]
		}
		p := math.Exp(-link.Loss(1, z)) // F(z)
		tr[i] = float64(1 + rng.IntN(20))
		for range int(tr[i]) {
			if rng.Float64() < p {
				k[i]++
			}
		}
	}
	return x, k, tr
}

// TestBinomialRegressionExpanded checks the binomial energy, for both
// links, against the Bernoulli GLM of the same data expanded to one row
// per trial (k_i rows of 1, n_i − k_i of 0): equal energy differences and
// gradients at random points; and that every LossBound and LossBound4
// bounds the derivatives it claims to on a grid (central differences for
// f⁗).
func TestBinomialRegressionExpanded(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, link := range []model.GLMFamily{model.LogisticFamily{}, model.ProbitFamily{}} {
		const n, d = 40, 3
		x, k, tr := binomialData(rng, n, []float64{0.3, 1, -1}, link)
		e, err := model.NewBinomialRegression(x, k, tr, d, link)
		if err != nil {
			t.Fatal(err)
		}
		var xe, ye []float64
		for i := range n {
			for j := range int(tr[i]) {
				xe = append(xe, x[i*d:(i+1)*d]...)
				ye = append(ye, map[bool]float64{true: 1, false: 0}[j < int(k[i])])
			}
		}
		ex, err := model.NewGLM(xe, ye, d, link)
		if err != nil {
			t.Fatal(err)
		}
		all := func(m int) ([]int, []float64) {
			idx, w := make([]int, m), make([]float64, m)
			for i := range idx {
				idx[i], w[i] = i, 1
			}
			return idx, w
		}
		idx, w := all(n)
		idxE, wE := all(len(ye))
		for range 5 {
			th, th2 := make([]float64, d), make([]float64, d)
			for j := range th {
				th[j], th2[j] = rng.NormFloat64(), rng.NormFloat64()
			}
			sum := func(en exactmh.Energy, ix []int) float64 {
				dst := make([]float64, len(ix))
				en.(exactmh.EnergyDiffer).EnergyDiffs(dst, th, th2, ix)
				var s float64
				for _, v := range dst {
					s += v
				}
				return s
			}
			if a, b := sum(e, idx), sum(ex, idxE); math.Abs(a-b) > 1e-9*(1+math.Abs(b)) {
				t.Errorf("%T: ΣU(θ) − U(θ′) = %v, expanded %v", link, a, b)
			}
			g, gE := make([]float64, d), make([]float64, d)
			e.AddGradient(g, th, idx, w)
			ex.AddGradient(gE, th, idxE, wE)
			for j := range d {
				if math.Abs(g[j]-gE[j]) > 1e-9*(1+math.Abs(gE[j])) {
					t.Errorf("%T: gradient %v, expanded %v", link, g, gE)
					break
				}
			}
		}
		// The bounds, on [lo, hi] = [−2, 1.5], against the derivatives on a grid.
		const lo, hi, h = -2.0, 1.5, 1e-3
		for i := range n {
			b1, b2, b3 := e.LossBound(i, 1, lo, hi), e.LossBound(i, 2, lo, hi), e.LossBound(i, 3, lo, hi)
			b4 := e.LossBound4(i, lo, hi)
			for z := lo; z <= hi; z += 0.01 {
				f1, f2 := e.LossDerivs(i, z)
				f3 := e.LossDeriv3(i, z)
				_, f2p := e.LossDerivs(i, z+h)
				_, f2m := e.LossDerivs(i, z-h)
				if fd := (f2p - f2m) / (2 * h); math.Abs(fd-f3) > 1e-5*(1+math.Abs(f3)) {
					t.Fatalf("%T datum %d: f‴(%v) = %v, central difference of f″ %v", link, i, z, f3, fd)
				}
				f4 := (e.LossDeriv3(i, z+h) - e.LossDeriv3(i, z-h)) / (2 * h)
				for _, c := range []struct {
					k    int
					v, b float64
				}{{1, f1, b1}, {2, f2, b2}, {3, f3, b3}, {4, f4, b4}} {
					if math.Abs(c.v) > c.b*(1+1e-9)+1e-12 {
						t.Fatalf("%T datum %d (k %v of %v): |f^(%d)(%v)| = %v > bound %v", link, i, k[i], tr[i], c.k, z, math.Abs(c.v), c.b)
					}
				}
			}
		}
	}
}

// binomialKit returns the posterior of a logit binomial regression with
// N = 3000 rows of 1–20 trials, d = 3, a N(0, 5²) prior, and the mutant
// applied if mutate is set.
func binomialKit(t *testing.T, mutate func(*model.BinomialRegression)) *exactmh.Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	const n, d = 3000, 3
	x, k, tr := binomialData(rng, n, []float64{-0.5, 1, -0.7}, model.LogisticFamily{})
	e, err := model.NewBinomialRegression(x, k, tr, d, model.LogisticFamily{})
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(e)
	}
	prior, err := model.NewIsoGaussian(d, 5)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// TestBinomialMoments compares the minibatch route the automatic default
// pilots on a GLM — TunaMH and TFMH (SMH-2) with the Crank–Nicolson
// proposal on the control-variate rewrite around the Laplace
// approximation (ControlVariates takes the cubic expansion through
// LossDeriv3/LossBound4) — on a logit binomial regression (N = 3000
// rows, about 31,000 trials) with full-batch NUTS's means and variances:
// two-sample |z| < 4.5, both runs' Monte Carlo errors counted. Mutant: the trials ignored (each datum one
// trial with response k_i/n_i), caught against the true model's NUTS.
func TestBinomialMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference and two minibatch kernels")
	}
	p := binomialKit(t, nil)
	d := p.Dim()
	ctx := context.Background()
	ref, err := exactmh.Sample(ctx, p, &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 4000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p *exactmh.Posterior, kernel func(*exactmh.CrankNicolson) exactmh.Kernel) *exactmh.Result {
		la, err := exactmh.FindLaplace(ctx, p, make([]float64, d), nil)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := exactmh.ControlVariates(p, la)
		if err != nil {
			t.Fatal(err)
		}
		cn, err := la.CrankNicolson()
		if err != nil {
			t.Fatal(err)
		}
		r, err := exactmh.Sample(ctx, cv, kernel(cn), &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: 2, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kernels := []struct {
		name string
		k    func(*exactmh.CrankNicolson) exactmh.Kernel
	}{
		{"TunaMH-CV-CN", func(cn *exactmh.CrankNicolson) exactmh.Kernel { return &exactmh.TunaMH{Proposal: cn} }},
		{"TFMH-CV-CN", func(cn *exactmh.CrankNicolson) exactmh.Kernel { return &exactmh.TFMH{Proposal: cn} }},
	}
	for _, kc := range kernels {
		r := run(p, kc.k)
		z, j := compareZ(r, ref)
		t.Logf("%s: largest two-sample |z| %.2f (θ%d) against NUTS; mean batch %.2f of N = %d", kc.name, z, j, r.Summary().MeanBatch, p.Len())
		if !(math.Abs(z) < 4.5) {
			t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", kc.name, z, j)
		}
	}
	r := run(binomialKit(t, model.MutateIgnoreTrials), kernels[0].k)
	if z, j := compareZ(r, ref); math.Abs(z) < 4.5 {
		t.Errorf("mutant \"trials ignored\" passes: z = %.2f (θ%d)", z, j)
	} else {
		t.Logf("mutant \"trials ignored\" caught: z = %.1f (θ%d)", z, j)
	}
}

// binomialSBCModel draws β ~ N(0, 1)³ and N = 150 rows of 1–20 trials
// given it, and poses the posterior (prior N(0, 1)) with every
// coefficient unknown; mutate, if set, alters the energy.
type binomialSBCModel struct {
	link   model.GLMFamily
	mutate func(*model.BinomialRegression)
}

func (m binomialSBCModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	const n, d = 150, 3
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = rng.NormFloat64()
	}
	x, k, tr := binomialData(rng, n, beta, m.link)
	e, err := model.NewBinomialRegression(x, k, tr, d, m.link)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	if m.mutate != nil {
		m.mutate(e)
	}
	prior, err := model.NewIsoGaussian(d, 1)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	return beta, mcmctest.Problem{Posterior: p, Mode: append([]float64{}, beta...), SD: []float64{0.1, 0.2, 0.2}}, nil
}

// TestBinomialSBC is simulation-based calibration, with every
// coefficient unknown (200 replicates, 19 draws each), of NUTS and of
// full-batch random-walk MH on the binomial regression, logit and probit
// links: every coordinate's ranks uniform at Bonferroni level 0.01. The
// mutant with the trials ignored must be rejected.
func TestBinomialSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates per row")
	}
	nuts := func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} }
	mh := func(mcmctest.Problem) exactmh.Kernel { return &exactmh.MH{} }
	for _, c := range []struct {
		name   string
		link   model.GLMFamily
		kernel func(mcmctest.Problem) exactmh.Kernel
	}{
		{"logit, NUTS", model.LogisticFamily{}, nuts},
		{"logit, MH", model.LogisticFamily{}, mh},
		{"probit, NUTS", model.ProbitFamily{}, nuts},
	} {
		r, err := mcmctest.SBC(binomialSBCModel{link: c.link}, c.kernel, &mcmctest.SBCOptions{Replicates: 200, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: SBC p-values %.3g (thin %d)", c.name, r.P, r.Thin)
		if r.Reject(0.01) {
			t.Errorf("%s: SBC rejects uniformity: p = %.3g", c.name, r.P)
		}
	}
	mut, err := mcmctest.SBC(binomialSBCModel{link: model.LogisticFamily{}, mutate: model.MutateIgnoreTrials}, nuts,
		&mcmctest.SBCOptions{Replicates: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mutant trials ignored: SBC p-values %.3g", mut.P)
	if !mut.Reject(0.01) {
		t.Errorf("SBC misses the mutant with the trials ignored: p = %.3g", mut.P)
	}
}

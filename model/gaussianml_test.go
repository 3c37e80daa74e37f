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

// mlGaussKit is a one-factor Gaussian multilevel model with σ unknown:
// y_i = o_i + β_0 + β_1·x_i + u_g(i) + σ·ε_i, u_g ~ N(0, τ²), β ~ N(0, 1),
// τ and σ ~ half-normal(1); group 0 holds half the rows.
type mlGaussKit struct{ n, groups int }

func (m mlGaussKit) dim() int { return 2 + m.groups + 1 + 1 } // β, u, log τ, log σ

// build returns the Gaussian multilevel model of rows drawn at θ, with σ
// fixed at 1 (its rows, as NewMultilevel lays them out), and its
// sufficient-statistic posterior with σ unknown.
func (m mlGaussKit) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, *model.SparseGLM[float64], error) {
	ml := &model.Multilevel{
		Family:    model.GaussianFamily{Sigma: 1},
		Y:         make([]float64, m.n),
		Offset:    make([]float64, m.n),
		Intercept: true,
		Fixed:     []model.Covariate{{Name: "x", Values: make([]float64, m.n)}},
		FixedSD:   []float64{1, 1},
		Factors:   []model.Factor{{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1)}},
	}
	sigma := math.Exp(theta[len(theta)-1])
	for i := range m.n {
		x := rng.NormFloat64()
		g := i % m.groups
		if i >= m.n/2 {
			g = 0
		}
		ml.Fixed[0].Values[i], ml.Factors[0].Index[i] = x, int32(g)
		ml.Offset[i] = 0.3 * rng.NormFloat64()
		ml.Y[i] = ml.Offset[i] + theta[0] + theta[1]*x + theta[2+g] + sigma*rng.NormFloat64()
	}
	unit, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, nil, err
	}
	sg := unit.Energy.(*model.SparseGLM[float64])
	e, err := model.NewSparseGaussianRegression(sg)
	if err != nil {
		return nil, nil, err
	}
	return &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: unit.Prior, Scale: model.HalfNormal(1)}}, sg, nil
}

// truth draws θ from the prior.
func (m mlGaussKit) truth(rng *rand.Rand) []float64 {
	d := m.dim()
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	tau := math.Abs(rng.NormFloat64())
	for g := range m.groups {
		theta[2+g] = tau * rng.NormFloat64()
	}
	theta[d-2] = math.Log(tau)
	theta[d-1] = math.Log(math.Abs(rng.NormFloat64()))
	return theta
}

// Draw implements mcmctest.Model.
func (m mlGaussKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.truth(rng)
	p, _, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	sd := make([]float64, len(theta))
	for j := range sd {
		sd[j] = 0.2
	}
	return theta, mcmctest.Problem{Posterior: p, Mode: append([]float64{}, theta...), SD: sd}, nil
}

// perDatum is the Gaussian multilevel energy datum by datum, U_i =
// s + (y_i − η_i)²e^{−2s}/2 with η_i the SparseGLM's linear predictor
// (offset included): the reference the sufficient statistics must equal.
type perDatum struct{ g *model.SparseGLM[float64] }

func (p perDatum) Len() int { return p.g.Len() }
func (p perDatum) Dim() int { return p.g.Dim() + 1 }
func (p perDatum) Energies(dst, theta []float64, idx []int) {
	s := theta[p.g.Dim()]
	for k, i := range idx {
		r := p.g.Response(i) - p.g.Eta(i, theta[:p.g.Dim()])
		dst[k] = s + 0.5*r*r*math.Exp(-2*s)
	}
}
func (p perDatum) AddGradient(grad, theta []float64, idx []int, w []float64) {
	d := p.g.Dim()
	s := theta[d]
	c := math.Exp(-2 * s)
	var cols []int32
	var vals []float64
	for k, i := range idx {
		r := p.g.Response(i) - p.g.Eta(i, theta[:d])
		cols, vals = p.g.SparseRow(i, cols[:0], vals[:0])
		for j, col := range cols {
			grad[col] -= w[k] * c * r * vals[j]
		}
		grad[d] += w[k] * (1 - r*r*c)
	}
}

// TestSparseGaussianRegressionSum checks the sufficient-statistic energy
// of a Gaussian multilevel model (random intercept, offsets) against the
// sum of its per-datum energies, and its gradient against theirs, at
// random points.
func TestSparseGaussianRegressionSum(t *testing.T) {
	kit := mlGaussKit{n: 200, groups: 6}
	rng := rand.New(rand.NewPCG(41, 42))
	p, sg, err := kit.build(rng, kit.truth(rng))
	if err != nil {
		t.Fatal(err)
	}
	ref := perDatum{sg}
	idx, w := make([]int, kit.n), make([]float64, kit.n)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	for range 5 {
		th := make([]float64, kit.dim())
		for j := range th {
			th[j] = rng.NormFloat64()
		}
		var u [1]float64
		p.Energy.Energies(u[:], th, []int{0})
		dst := make([]float64, kit.n)
		ref.Energies(dst, th, idx)
		var want float64
		for _, v := range dst {
			want += v
		}
		if math.Abs(u[0]-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("U = %v, Σ_i U_i = %v", u[0], want)
		}
		g, gw := make([]float64, kit.dim()), make([]float64, kit.dim())
		p.Energy.(exactmh.Gradienter).AddGradient(g, th, []int{0}, []float64{1})
		ref.AddGradient(gw, th, idx, w)
		for j := range g {
			if math.Abs(g[j]-gw[j]) > 1e-9*(1+math.Abs(gw[j])) {
				t.Errorf("∂U/∂θ%d = %v, Σ_i %v", j, g[j], gw[j])
			}
		}
	}
}

// TestMultilevelGaussianMoments compares NUTS on the sufficient
// statistics of a Gaussian multilevel model with σ unknown (N = 60, 6
// groups, so that the Jacobian moves log σ by a tenth of its sd; the
// automatic default takes GroupGibbs there, TestGaussGibbsMoments) with NUTS on the per-datum
// energy: two-sample |z| < 4.5 on every coordinate (β, u, log τ, log σ).
// Mutants, caught: the Jacobian of log σ dropped, N·log σ counting N/2.
func TestMultilevelGaussianMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: two NUTS runs per row")
	}
	kit := mlGaussKit{n: 60, groups: 6}
	rng := rand.New(rand.NewPCG(43, 44))
	theta := kit.truth(rng)
	theta[kit.dim()-2], theta[kit.dim()-1] = math.Log(0.7), math.Log(1.3)
	ctx := context.Background()
	build := func() (*exactmh.Posterior, *model.SparseGLM[float64]) {
		p, sg, err := kit.build(rand.New(rand.NewPCG(45, 46)), theta)
		if err != nil {
			t.Fatal(err)
		}
		return p, sg
	}
	run := func(p *exactmh.Posterior, seed uint64) *exactmh.Result {
		r, err := exactmh.Sample(ctx, p, &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 10000, Seed: seed, Init: theta})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	p, sg := build()
	c, err := exactmh.Choose(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "GroupGibbs" {
		t.Errorf("the automatic default chose %s (%s), want GroupGibbs's Gaussian sweep on the sufficient statistics", c.Name, c.Reason)
	}
	ref := run(&exactmh.Posterior{Energy: perDatum{sg}, Prior: p.Prior}, 1)
	r := run(p, 2)
	z, j := compareZ(r, ref)
	t.Logf("sufficient statistics: largest two-sample |z| %.2f (θ%d) against the per-datum energy", z, j)
	if !(math.Abs(z) < 4.5) {
		t.Errorf("moments off the per-datum energy's: z = %.2f (θ%d)", z, j)
	}
	for _, m := range []struct {
		name   string
		mutate func(*exactmh.Posterior)
	}{
		{"Jacobian of log σ dropped", func(p *exactmh.Posterior) { model.MutateNoJacobian(p.Prior.(*model.WithScale)) }},
		{"N·log σ counting N/2", func(p *exactmh.Posterior) {
			model.MutateSparseGaussianN(p.Energy.(*model.SparseGaussianRegression), float64(kit.n/2))
		}},
	} {
		p, _ := build()
		m.mutate(p)
		if z, j := compareZ(run(p, 2), ref); math.Abs(z) < 4.5 {
			t.Errorf("mutant %q passes: z = %.2f (θ%d)", m.name, z, j)
		} else {
			t.Logf("mutant %q caught: z = %.1f (θ%d)", m.name, z, j)
		}
	}
}

// TestMultilevelGaussianSBC is simulation-based calibration of NUTS on
// the sufficient statistics of a Gaussian multilevel model with every
// parameter unknown (β, each group's effect, log τ, log σ; 100
// replicates of N = 100 rows in 5 groups): ranks uniform at Bonferroni
// level 10⁻³.
func TestMultilevelGaussianSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates")
	}
	r, err := mcmctest.SBC(mlGaussKit{n: 100, groups: 5}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 100, Seed: 13, MaxThin: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(1e-3) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
}

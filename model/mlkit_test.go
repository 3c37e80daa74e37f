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

// The multilevel kits of the families with an extra parameter (ordinal's
// cutpoints, Student-t's σ) share one design: a covariate x ~ N(0, 1)
// with β ~ N(0, 1), one factor g of G groups (datum i in group i mod G)
// with a random intercept u_g ~ N(0, τ²), τ ~ half-normal(1), and no
// fixed intercept. θ begins (β, u_0, …, u_{G−1}, log τ).

// mlGroupedTruth draws (β, u, log τ) from the prior.
func mlGroupedTruth(rng *rand.Rand, groups int) []float64 {
	th := []float64{rng.NormFloat64()}
	tau := math.Abs(rng.NormFloat64())
	for range groups {
		th = append(th, tau*rng.NormFloat64())
	}
	return append(th, math.Log(tau))
}

// mlGrouped returns the multilevel model of n data of the shared design
// at θ, y_i = draw(η_i) with η_i = β·x_i + u_{g(i)} (Family unset: the
// caller's constructor sets it).
func mlGrouped(rng *rand.Rand, n, groups int, theta []float64, draw func(eta float64) float64) *model.Multilevel {
	ml := &model.Multilevel{Y: make([]float64, n), FixedSD: []float64{1}}
	x := model.Covariate{Name: "x", Values: make([]float64, n)}
	f := model.Factor{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}
	for i := range n {
		g := i % groups
		f.Index[i] = int32(g)
		x.Values[i] = rng.NormFloat64()
		ml.Y[i] = draw(theta[0]*x.Values[i] + theta[1+g])
	}
	ml.Fixed, ml.Factors = []model.Covariate{x}, []model.Factor{f}
	return ml
}

// sampleDefault samples p with the kernel the automatic default chooses
// (4 chains, about its Laplace mean when it has one) and returns the
// draws and the kernel's name.
func sampleDefault(t *testing.T, p *exactmh.Posterior, seed uint64, warmup, draws int) (*exactmh.Result, string) {
	t.Helper()
	ctx := context.Background()
	c, err := exactmh.Choose(ctx, p, &exactmh.Settings{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	set := &exactmh.Settings{Chains: 4, Warmup: warmup, Draws: draws, Seed: seed}
	if c.Laplace != nil {
		set.Init = c.Laplace.Mean
	}
	r, err := exactmh.Sample(ctx, c.Posterior, c.Kernel, set)
	if err != nil {
		t.Fatal(err)
	}
	return r, c.Name
}

// checkMutant fails t unless the mutant's draws r are off the reference
// ref: two-sample |z| ≥ 4.5 on some coordinate's mean or variance.
func checkMutant(t *testing.T, name string, r, ref *exactmh.Result) {
	t.Helper()
	if z, j := compareZ(r, ref); math.Abs(z) < 4.5 {
		t.Errorf("mutant %q passes: z = %.2f (θ%d)", name, z, j)
	} else {
		t.Logf("mutant %q caught: z = %.1f (θ%d)", name, z, j)
	}
}

// truthProblem is the kits' mcmctest.Problem: p started at the truth th,
// its scale 0.3 on every coordinate.
func truthProblem(p *exactmh.Posterior, th []float64) mcmctest.Problem {
	sd := make([]float64, len(th))
	for j := range sd {
		sd[j] = 0.3
	}
	return mcmctest.Problem{Posterior: p, Mode: slices.Clone(th), SD: sd}
}

// checkGradient compares the gradient of log π at th — the energy's
// (Gradienter, every datum with weight 1) and the prior's
// (PriorGradienter) — with central differences of −Σ U_i + log prior.
func checkGradient(t *testing.T, p *exactmh.Posterior, th []float64) {
	t.Helper()
	n := p.Len()
	idx, w := make([]int, n), make([]float64, n)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	neg := func(x []float64) float64 {
		u := make([]float64, n)
		p.Energy.Energies(u, x, idx)
		var s float64
		for _, v := range u {
			s += v
		}
		return s - p.Prior.LogPrior(x)
	}
	grad := make([]float64, len(th))
	p.Energy.(exactmh.Gradienter).AddGradient(grad, th, idx, w)
	for j := range grad {
		grad[j] = -grad[j]
	}
	p.Prior.(exactmh.PriorGradienter).AddLogPriorGradient(grad, th)
	for j := range th {
		h := 1e-6 * (1 + math.Abs(th[j]))
		tp, tm := slices.Clone(th), slices.Clone(th)
		tp[j] += h
		tm[j] -= h
		if fd := -(neg(tp) - neg(tm)) / (2 * h); math.Abs(fd-grad[j]) > 1e-5*(1+math.Abs(fd)) {
			t.Errorf("∂log π/∂θ%d = %v, central difference %v", j, grad[j], fd)
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
)

// TestMultilevelCenter simulates a logistic random-intercept and
// random-slope model (N = 5000, 25 groups) and checks MultilevelCenter's
// centre: the gradient of the log posterior in (β, u) vanishes there
// (the conditional mode given τ), the fixed effects and scales lie within
// four of its standard deviations of the truth.
func TestMultilevelCenter(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const n, groups = 5000, 25
	beta := []float64{-0.3, 0.8}
	tau := []float64{0.6, 0.3}
	m := &Multilevel{
		Family:    LogisticFamily{},
		Y:         make([]float64, n),
		Intercept: true,
		Fixed:     []Covariate{{"x", make([]float64, n)}},
		Factors: []Factor{{Name: "g", Index: make([]int32, n), Slopes: []Covariate{{"x", nil}},
			Tau: HalfNormal(1)}},
	}
	x := m.Fixed[0].Values
	m.Factors[0].Slopes[0].Values = x
	u := make([][2]float64, groups)
	for g := range u {
		u[g] = [2]float64{tau[0] * rng.NormFloat64(), tau[1] * rng.NormFloat64()}
	}
	for i := range n {
		g := rng.IntN(groups)
		x[i] = rng.NormFloat64()
		m.Factors[0].Index[i] = int32(g)
		z := beta[0] + beta[1]*x[i] + u[g][0] + u[g][1]*x[i]
		if rng.Float64() < sigmoid(z) {
			m.Y[i] = 1
		}
	}
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	c, sd, err := MultilevelCenter(context.Background(), post, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := post.Energy.Dim()
	checkConditionalMode(t, post, c)
	truth := map[int]float64{0: beta[0], 1: beta[1], d - 2: math.Log(tau[0]), d - 1: math.Log(tau[1])}
	for j, v := range truth {
		if !(sd[j] > 0) || math.Abs(c[j]-v) > 4*sd[j] {
			t.Errorf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
		}
		t.Logf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
	}
}

// TestMultilevelCenterCrossed simulates a logistic model with two crossed
// random intercepts (N = 20000, 30 × 20 levels) and checks that the
// centre (the sparse factorisation) is the conditional mode given τ and
// that the fixed effect and both scales lie within four standard
// deviations of the truth.
func TestMultilevelCenterCrossed(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 20000
	levels := []int{30, 20}
	tau := []float64{0.7, 0.4}
	m := &Multilevel{Family: LogisticFamily{}, Y: make([]float64, n), Intercept: true,
		Fixed: []Covariate{{"x", make([]float64, n)}}}
	u := make([][]float64, 2)
	for k, g := range levels {
		m.Factors = append(m.Factors, Factor{Name: string(rune('a' + k)), Index: make([]int32, n), Tau: HalfNormal(1)})
		u[k] = make([]float64, g)
		for l := range u[k] {
			u[k][l] = tau[k] * rng.NormFloat64()
		}
	}
	x := m.Fixed[0].Values
	for i := range n {
		x[i] = rng.NormFloat64()
		z := -0.5 + 0.8*x[i]
		for k, g := range levels {
			l := rng.IntN(g)
			m.Factors[k].Index[i] = int32(l)
			z += u[k][l]
		}
		if rng.Float64() < sigmoid(z) {
			m.Y[i] = 1
		}
	}
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	c, sd, err := MultilevelCenter(context.Background(), post, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := post.Dim()
	checkConditionalMode(t, post, c)
	for j, v := range map[int]float64{1: 0.8, d - 2: math.Log(tau[0]), d - 1: math.Log(tau[1])} {
		if !(sd[j] > 0) || math.Abs(c[j]-v) > 4*sd[j] {
			t.Errorf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
		}
		t.Logf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
	}
}

// checkConditionalMode checks that the gradient of −log π in the effects
// (every coordinate but the log scales, the last NumTerms) vanishes at c.
func checkConditionalMode(t *testing.T, post *exactmh.Posterior, c []float64) {
	t.Helper()
	e := post.Energy.(*SparseGLM[float64])
	prior := post.Prior.(*MultilevelPrior)
	n, d := e.Len(), post.Dim()
	all, w := make([]int, n), make([]float64, n)
	for i := range all {
		all[i], w[i] = i, 1
	}
	grad := make([]float64, d)
	e.AddGradient(grad, c, all, w)
	pg := make([]float64, d)
	prior.AddLogPriorGradient(pg, c)
	for j := range d - prior.NumTerms() {
		if g := grad[j] - pg[j]; math.Abs(g) > 1e-5 {
			t.Errorf("∂(−log π)/∂%s = %v at the centre, want 0", post.Names[j], g)
		}
	}
}

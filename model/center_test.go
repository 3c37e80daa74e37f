// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestMultilevelCenter simulates a logistic random-intercept and
// random-slope model (N = 5000, 25 groups) and checks MultilevelCenter's
// centre: the gradient of the log posterior in (β, u) vanishes there
// (the conditional mode given τ), the fixed effects and scales lie within
// four of its standard deviations of the truth, and a model with two
// factors is an error.
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
	e := post.Energy.(*SparseGLM[float64])
	all, w := make([]int, n), make([]float64, n)
	for i := range all {
		all[i], w[i] = i, 1
	}
	grad := make([]float64, d)
	e.AddGradient(grad, c, all, w)
	pg := make([]float64, d)
	post.Prior.(*MultilevelPrior).AddLogPriorGradient(pg, c)
	for j := range d - 2 {
		if g := grad[j] - pg[j]; math.Abs(g) > 1e-5 {
			t.Errorf("∂(−log π)/∂%s = %v at the centre, want 0", post.Names[j], g)
		}
	}
	truth := map[int]float64{0: beta[0], 1: beta[1], d - 2: math.Log(tau[0]), d - 1: math.Log(tau[1])}
	for j, v := range truth {
		if !(sd[j] > 0) || math.Abs(c[j]-v) > 4*sd[j] {
			t.Errorf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
		}
		t.Logf("%s: centre %.3f (sd %.3f), true %.3f", post.Names[j], c[j], sd[j], v)
	}
	m.Factors = append(m.Factors, Factor{Name: "h", Index: make([]int32, n), Levels: []string{"a", "b"}, Tau: HalfNormal(1)})
	for i := range n {
		m.Factors[1].Index[i] = int32(i % 2)
	}
	post2, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := MultilevelCenter(context.Background(), post2, 0); err == nil || !strings.Contains(err.Error(), "more than one grouping factor") {
		t.Errorf("two factors: err = %v, want one naming the second factor", err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAddFullGradientIsAddGradient checks that FindMAP's whole-data
// gradient pass, addFullGradient, which needs no O(N) index array, is bit
// for bit AddGradient over the indices 0 … N−1 (what FindMAP called), and
// counts the same gradient evaluations: N not a multiple of the chunk, β
// not 1, float64 and float32 rows.
func TestAddFullGradientIsAddGradient(t *testing.T) {
	const n, d = 3*chunk + 77, 5
	rng := rand.New(rand.NewPCG(1, 5))
	x, x32, y := make([]float64, n*d), make([]float32, n*d), make([]float64, n)
	for i := range x {
		x32[i] = float32(rng.NormFloat64())
		x[i] = float64(x32[i])
	}
	for i := range y {
		y[i] = float64(rng.IntN(2))
	}
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	lr32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 2)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, -0.2, 0.1, 0.7, -1.1}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for _, e := range []Energy{lr, lr32} {
		p := &Posterior{Energy: e, Prior: prior, Beta: 0.37}
		ta, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		ga, gb := make([]float64, d), make([]float64, d)
		if err := ta.AddGradient(ga, theta, idx, nil); err != nil {
			t.Fatal(err)
		}
		if err := tb.addFullGradient(gb, theta); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(ga, gb, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Errorf("%T: addFullGradient %v, AddGradient over all data %v", e, gb, ga)
		}
		if ta.GradEvals() != tb.GradEvals() {
			t.Errorf("%T: %d gradient evaluations, AddGradient %d", e, tb.GradEvals(), ta.GradEvals())
		}
	}
}

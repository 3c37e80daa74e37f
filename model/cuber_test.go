// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
	"testing"
)

// TestLossCubers checks the third derivatives and fourth-derivative bounds
// that the third-order control variates of exactmh.ControlVariates use:
// LossDeriv3 against a central difference of LossDerivs' f″, and
// LossBound4 against the largest central difference of LossDeriv3 on a fine
// grid of z, which it must bound and nearly attain (within 1 %).
func TestLossCubers(t *testing.T) {
	type cuber interface {
		LossDerivs(i int, z float64) (f1, f2 float64)
		LossDeriv3(i int, z float64) float64
		LossBound4(i int, lo, hi float64) float64
	}
	ys := []float64{0, 1, -2.5, 7}
	lr, err := NewLogisticRegression(make([]float64, 2), []float64{0, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		g cuber
		n int
	}{"logistic": {lr, 2}}
	for name, fam := range map[string]GLMFamily{"sparse logistic": LogisticFamily{}, "sparse probit": ProbitFamily{}} {
		sp, err := NewSparseGLM(SparseRows[float64]{N: 2, D: 1, RowPtr: []int{0, 1, 2}, Col: []int32{0, 0}, Val: []float64{1, 1}},
			[]float64{0, 1}, nil, fam)
		if err != nil {
			t.Fatal(err)
		}
		cases[name] = struct {
			g cuber
			n int
		}{sp, 2}
	}
	for _, nu := range []float64{1, 4, 30} {
		st, err := NewStudentTRegression(make([]float64, len(ys)), ys, 1, nu)
		if err != nil {
			t.Fatal(err)
		}
		cases[fmt.Sprint("student-t ν=", nu)] = struct {
			g cuber
			n int
		}{st, len(ys)}
	}
	const h = 1e-4
	for name, c := range cases {
		for i := range c.n {
			k4 := c.g.LossBound4(i, math.Inf(-1), math.Inf(1))
			var worst float64
			for z := -40.0; z <= 40; z += 0.001 {
				_, lo := c.g.LossDerivs(i, z-h)
				_, hi := c.g.LossDerivs(i, z+h)
				f3 := c.g.LossDeriv3(i, z)
				if fd := (hi - lo) / (2 * h); math.Abs(fd-f3) > 1e-6*(1+math.Abs(f3)) {
					t.Fatalf("%s, datum %d, z = %v: f‴ = %v, difference of f″ %v", name, i, z, f3, fd)
				}
				f4 := (c.g.LossDeriv3(i, z+h) - c.g.LossDeriv3(i, z-h)) / (2 * h)
				worst = max(worst, math.Abs(f4))
			}
			if worst > k4*(1+1e-6) || worst < 0.99*k4 {
				t.Errorf("%s, datum %d: sup|f⁗| ≈ %v on the grid, LossBound4 %v", name, i, worst, k4)
			}
		}
	}
}

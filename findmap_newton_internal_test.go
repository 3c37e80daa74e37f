// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStridedGLM: the subsample view of FindMAP's presearch is datum
// i·stride of the GLM, through Energies, AddGradient, the contract and,
// for float32 rows, the rowConverter the Newton sweep reads; and its
// Newton sweep is the whole GLM's restricted to those data, weighted by
// the stride.
func TestStridedGLM(t *testing.T) {
	const n, d, stride = 103, 3, 5
	rng := rand.New(rand.NewPCG(7, 7))
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
	theta := []float64{0.3, -0.7, 1.1}
	for _, g := range []GLM{lr, lr32} {
		s := newStridedGLM(g, stride)
		var view GLM = s
		if s.conv != nil {
			view = stridedRows{s}
			if _, ok := view.(rowConverter); !ok {
				t.Fatal("the float32 subsample is not a rowConverter")
			}
		} else if _, ok := view.(rowConverter); ok {
			t.Fatal("the float64 subsample claims a rowConverter")
		}
		if s.Len() != 21 {
			t.Fatalf("%T: %d data in the subsample, want 21", g, s.Len())
		}
		idx := []int{0, 4, 20}
		w := []float64{1, 2, -1}
		got, want := make([]float64, 3), make([]float64, 3)
		view.Energies(got, theta, idx)
		g.Energies(want, theta, []int{0, 20, 100})
		grad, wantGrad := make([]float64, d), make([]float64, d)
		view.(Gradienter).AddGradient(grad, theta, idx, w)
		g.(Gradienter).AddGradient(wantGrad, theta, []int{0, 20, 100}, w)
		for k := range 3 {
			if math.Abs(got[k]-want[k]) > 1e-12 || math.Abs(grad[k]-wantGrad[k]) > 1e-12 {
				t.Errorf("%T: U %v, want %v; ∇ %v, want %v", g, got, want, grad, wantGrad)
				break
			}
		}
		// The sweep of the subsample tempered by the stride is the
		// stride-weighted sum over data 0, 5, …, 100.
		st, err := NewTarget(&Posterior{Energy: view, Beta: stride})
		if err != nil {
			t.Fatal(err)
		}
		h, gr := make([]float64, d*d), make([]float64, d)
		f, _, err := st.newtonSweep(st.hessianer(), h, gr, theta)
		if err != nil {
			t.Fatal(err)
		}
		var wantF float64
		wantG, wantH := make([]float64, d), make([]float64, d*d)
		for i := 0; i < n; i += stride {
			xi := g.Row(i)
			z := dot(xi, theta)
			f1, f2 := g.LossDerivs(i, z)
			wantF += stride * g.Loss(i, z)
			for a := range d {
				wantG[a] += stride * f1 * xi[a]
				for b := a; b < d; b++ {
					wantH[a*d+b] += stride * f2 * xi[a] * xi[b]
				}
			}
		}
		if math.Abs(f-wantF) > 1e-9*math.Abs(wantF) {
			t.Errorf("%T: sweep f = %v, want %v", g, f, wantF)
		}
		for a := range d {
			if math.Abs(gr[a]-wantG[a]) > 1e-9*(1+math.Abs(wantG[a])) {
				t.Errorf("%T: sweep ∇[%d] = %v, want %v", g, a, gr[a], wantG[a])
			}
			for b := a; b < d; b++ {
				if math.Abs(h[a*d+b]-wantH[a*d+b]) > 1e-9*(1+math.Abs(wantH[a*d+b])) {
					t.Errorf("%T: sweep H[%d][%d] = %v, want %v", g, a, b, h[a*d+b], wantH[a*d+b])
				}
			}
		}
	}
}

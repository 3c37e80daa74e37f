// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// The sparse Hessians of Flat and Gaussian are the negated dense ones
// (AddLogPriorHessian adds ∇²log p; SparseHessian is ∇²(−log p)).
func TestPriorSparseHessian(t *testing.T) {
	g, err := model.NewGaussian([]float64{1, -2, 0}, []float64{0.5, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, 0.1, -4}
	for name, p := range map[string]interface {
		exactmh.SparseHessianer
		exactmh.PriorHessianer
	}{"Flat": model.Flat{}, "Gaussian": g} {
		h, err := p.SparseHessian(theta)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Check(); err != nil || h.N != 3 {
			t.Fatalf("%s: %v, order %d", name, err, h.N)
		}
		dense := make([]float64, 9)
		p.AddLogPriorHessian(dense, theta)
		for j := range 3 {
			for k := j; k < 3; k++ { // the upper triangle, which AddLogPriorHessian fills
				if got, want := h.At(j, k), -dense[j*3+k]; got != want {
					t.Errorf("%s: H[%d][%d] = %v, want %v", name, j, k, got, want)
				}
			}
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import "github.com/exactmh/exactmh/sparse"

// SparseHessian returns the Hessian of the flat prior's −log p, the d×d
// zero matrix with no stored entry (d = len(θ)), so that a posterior
// whose energy has a sparse Hessian takes exactmh's sparse Laplace path
// under a flat prior (exactmh.SparseHessianer).
func (Flat) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	return &sparse.SymCSC{N: len(theta), ColPtr: make([]int, len(theta)+1), RowIdx: []int{}, Val: []float64{}}, nil
}

// SparseHessian returns the Hessian of the Gaussian prior's −log p, the
// diagonal matrix of 1/SD_j² (exactmh.SparseHessianer).
func (g *Gaussian) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	d := len(g.SD)
	a := &sparse.SymCSC{N: d, ColPtr: make([]int, d+1), RowIdx: make([]int, d), Val: make([]float64, d)}
	for j, s := range g.SD {
		a.ColPtr[j+1] = j + 1
		a.RowIdx[j] = j
		a.Val[j] = 1 / (s * s)
	}
	return a, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package sparse is the sparse symmetric linear algebra behind exactmh's
// Laplace approximations and proposals for models whose Hessian is sparse
// (multilevel GLMs: fixed effects coupled to every group's effects, each
// group's effects coupled only to themselves and to crossed factors' groups
// that share data). gonum has no sparse Cholesky factorisation.
package sparse

// SymCSC is a symmetric n×n matrix stored by its lower triangle, diagonal
// included, in compressed sparse column form: the entries of column j are
// Val[ColPtr[j]:ColPtr[j+1]] in rows RowIdx[ColPtr[j]:ColPtr[j+1]], which are
// strictly ascending and each at least j. The pattern is what is stored; a
// stored zero is part of it.
type SymCSC struct {
	N      int
	ColPtr []int
	RowIdx []int
	Val    []float64
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package testgen makes the synthetic data sets that the tests of package
// exactmh and package model share.
package testgen

import "math/rand/v2"

// BinaryRows draws n standard normal rows of d features (the float32 rows
// rounded first, so that both precisions hold the same numbers) and n
// binary responses.
func BinaryRows(rng *rand.Rand, n, d int) (x []float64, x32 []float32, y []float64) {
	x, x32, y = make([]float64, n*d), make([]float32, n*d), make([]float64, n)
	for i := range x {
		x32[i] = float32(rng.NormFloat64())
		x[i] = float64(x32[i])
	}
	for i := range y {
		y[i] = float64(rng.IntN(2))
	}
	return x, x32, y
}

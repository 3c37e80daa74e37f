// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package testgen makes the synthetic data sets that the tests of package
// exactmh and package model share.
package testgen

import (
	"math"
	"math/rand/v2"
)

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

// WideLogistic draws a logistic regression's data as examples/tall's wide
// rows (logreg_d200, logreg_d500) and examples/defaultrows have them:
// w ~ N(0, I) first, then n rows x_i ~ N(0, I/d) with y_i ~
// Bernoulli(σ(x_iᵀw)); x is n×d, row-major.
func WideLogistic(rng *rand.Rand, n, d int) (x, y []float64) {
	w := make([]float64, d)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	x, y = make([]float64, n*d), make([]float64, n)
	sd := 1 / math.Sqrt(float64(d))
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = sd * rng.NormFloat64()
			z += x[i*d+j] * w[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package sim simulates the examples' data sets, so that examples that
// share a setting (rlr and tall, tgm and tall) share its data.
package sim

import (
	"math"
	"math/rand/v2"
)

// RegressionData returns n rows of the robust-regression experiments (TunaMH
// paper, App. J.2): x_ij ~ N(0, 1) row-major n×d and y_i = Σ_j x_ij + ε_i,
// ε_i ~ N(0, 1), drawn from rng.
func RegressionData(rng *rand.Rand, n, d int) (x, y []float64) {
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		var s float64
		for j := range d {
			v := rng.NormFloat64()
			x[i*d+j] = v
			s += v
		}
		y[i] = s + rng.NormFloat64()
	}
	return x, y
}

// MixtureData returns n draws of ½N(0, 2) + ½N(1, 2), the data of the
// TunaMH paper's truncated Gaussian mixture (§5.2), from rng.
func MixtureData(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sqrt2 * rng.NormFloat64()
		if rng.IntN(2) == 1 {
			x[i]++
		}
	}
	return x
}

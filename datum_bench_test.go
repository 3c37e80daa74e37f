// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDatum measures the cost of one datum's energy work in a full
// pass over N = 10⁵ data (the rows do not fit in cache at d ≥ 50, as in
// real use), in ns per datum: energies, energy differences at two points,
// energies with the gradient. These loops are where full-batch kernels
// spend their time.
func BenchmarkDatum(b *testing.B) {
	const n = 100000
	for _, d := range []int{10, 50, 100} {
		rng := rand.New(rand.NewPCG(1, uint64(d)))
		x, y := make([]float64, n*d), make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = float64(rng.IntN(2))
		}
		logit, err := NewLogisticRegression(x, y, d)
		if err != nil {
			b.Fatal(err)
		}
		st, err := NewStudentTRegression(x, y, d, 4)
		if err != nil {
			b.Fatal(err)
		}
		theta, theta2 := make([]float64, d), make([]float64, d)
		for j := range theta {
			theta[j], theta2[j] = 0.1*rng.NormFloat64(), 0.1*rng.NormFloat64()
		}
		idx, w := make([]int, n), make([]float64, n)
		for i := range idx {
			idx[i], w[i] = i, 1
		}
		dst, grad := make([]float64, n), make([]float64, d)
		for _, e := range []struct {
			name string
			e    interface {
				Energy
				EnergyDiffer
				EnergyGradienter
			}
		}{{"logistic", logit}, {"studentt", st}} {
			run := func(op string, f func()) {
				b.Run(fmt.Sprintf("%s/%s/d=%d", e.name, op, d), func(b *testing.B) {
					for b.Loop() {
						f()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/datum")
				})
			}
			run("energies", func() { e.e.Energies(dst, theta, idx) })
			run("diffs", func() { e.e.EnergyDiffs(dst, theta, theta2, idx) })
			run("grad", func() { e.e.EnergiesAndGradient(dst, grad, theta, idx, w) })
		}
	}
}

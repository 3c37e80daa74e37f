// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkGatherWarmed measures the warmed gathers of every GLM with its
// own loops (float64 and float32 rows, logistic and a generic family):
// Energies and EnergyDiffs over a batch of rows drawn uniformly from
// N = 10⁵ rows of d = 50 (40 MB of float64 rows, out of cache), at a
// batch of 64 (about TunaMH's) and of 4096 (several warm blocks), in ns
// per datum.
func BenchmarkGatherWarmed(b *testing.B) {
	const n, d = 100000, 50
	rng := rand.New(rand.NewPCG(5, 6))
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
		b.Fatal(err)
	}
	lr32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		b.Fatal(err)
	}
	glm, err := NewGLM(x, y, d, GaussianFamily{Sigma: 1})
	if err != nil {
		b.Fatal(err)
	}
	glm32, err := NewGLM32(x32, y, d, GaussianFamily{Sigma: 1})
	if err != nil {
		b.Fatal(err)
	}
	theta, next := make([]float64, d), make([]float64, d)
	for j := range theta {
		theta[j], next[j] = 0.1*rng.NormFloat64(), 0.1*rng.NormFloat64()
	}
	for _, e := range []struct {
		name string
		e    interface {
			Energy
			EnergyDiffer
		}
	}{{"logistic", lr}, {"logistic32", lr32}, {"glm", glm}, {"glm32", glm32}} {
		for _, batch := range []int{64, 4096} {
			idx, dst := make([]int, batch), make([]float64, batch)
			for _, op := range []string{"energies", "diffs"} {
				b.Run(fmt.Sprintf("%s/%s/batch=%d", e.name, op, batch), func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 2))
					var sum float64
					for b.Loop() {
						for k := range idx {
							idx[k] = rng.IntN(n)
						}
						if op == "energies" {
							e.e.Energies(dst, theta, idx)
						} else {
							e.e.EnergyDiffs(dst, theta, next, idx)
						}
						sum += dst[0]
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/datum")
					if math.IsNaN(sum) {
						b.Fatal("NaN")
					}
				})
			}
		}
	}
}

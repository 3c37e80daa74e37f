// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
)

// BenchmarkGatherLogisticChunk is BenchmarkGatherLogistic with the data
// gathered as the batch kernels gather them: draw 64 data uniformly (about
// TunaMH's batch in BenchmarkTunaMHStepLogistic), then compute their
// energy differences in one call, which lets the energy overlap the rows'
// cache misses. It is the plain loop to hold the batch kernels' ns/datum
// against when the gather itself overlaps misses; BenchmarkGatherLogistic
// (one datum per call) is the one the 1.3× goal was stated against.
func BenchmarkGatherLogisticChunk(b *testing.B) {
	p := tallLogistic(b)
	e := p.Energy.(exactmh.EnergyDiffer)
	d, n := p.Dim(), p.Len()
	theta, next := make([]float64, d), make([]float64, d)
	for j := range next {
		next[j] = 0.01
	}
	const batch = 64
	gatherLoop(b, e, n, theta, next, batch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/datum")
}

// gatherLoop is the plain loop of the gather benchmarks: per iteration it
// draws batch data uniformly from n and computes their energy differences
// between theta and next in one EnergyDiffs call.
func gatherLoop(b *testing.B, e exactmh.EnergyDiffer, n int, theta, next []float64, batch int) {
	rng := rand.New(rand.NewPCG(1, 2))
	idx, dst := make([]int, batch), make([]float64, batch)
	var sum float64
	for b.Loop() {
		for j := range idx {
			idx[j] = rng.IntN(n)
		}
		e.EnergyDiffs(dst, theta, next, idx)
		for _, v := range dst {
			sum += v
		}
	}
	if math.IsNaN(sum) {
		b.Fatal("NaN")
	}
}

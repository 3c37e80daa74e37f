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

// BenchmarkGatherPrefetched measures the prefetching gathers of every GLM with its
// own loops (float64 and float32 rows, logistic and a generic family):
// Energies and EnergyDiffs over a batch of rows drawn uniformly from
// N = 10⁵ rows of d = 50 (40 MB of float64 rows, out of cache), at a
// batch of 64 (about TunaMH's) and of 4096 (several prefetch blocks), in ns
// per datum.
func BenchmarkGatherPrefetched(b *testing.B) {
	const n, d = 100000, 50
	es, theta, next := prefetchFixture(b, rand.New(rand.NewPCG(5, 6)), n, d)
	for _, e := range es {
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

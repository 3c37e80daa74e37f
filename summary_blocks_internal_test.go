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

// TestSummaryBlocksMatchSamples checks that Summary, which gathers the
// coordinates a block at a time from the row-major draws, gives every
// coordinate what SummarizeParam gives on Result.Samples: dimensions that
// leave a partial block, chains of unequal length (a cancelled run: cut to
// the shortest) and a chain without draws. Skipped with -short (the root
// package's short suite is at its budget).
func TestSummaryBlocksMatchSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("not in the short suite")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, dim := range []int{1, 7, 8, 9, 70, 203} {
		lens := []int{100, 97, 0, 100}
		r := &Result{Dim: dim, Status: Canceled}
		for c, n := range lens {
			ch := &ChainResult{Chain: c, Draws: make([]float64, n*dim), Infos: make([]Info, n)}
			for i := range ch.Draws {
				ch.Draws[i] = rng.NormFloat64() + float64(i%dim)
			}
			r.Chains = append(r.Chains, ch)
		}
		s := r.Summary()
		for j := range dim {
			var x [][]float64
			for _, c := range r.Samples(j) {
				if len(c) > 0 {
					x = append(x, c[:97])
				}
			}
			want := SummarizeParam(fmt.Sprintf("theta[%d]", j+1), x, s.SamplingTime.Seconds())
			got := s.Params[j]
			same := func(a, b float64) bool {
				return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
			}
			if got.Name != want.Name || !same(got.Mean, want.Mean) || !same(got.SD, want.SD) || !same(got.Q5, want.Q5) ||
				!same(got.Q50, want.Q50) || !same(got.Q95, want.Q95) || !same(got.MCSE, want.MCSE) ||
				!same(got.ESSBulk, want.ESSBulk) || !same(got.ESSTail, want.ESSTail) || !same(got.RHat, want.RHat) {
				t.Fatalf("dim %d, coordinate %d: Summary %+v, SummarizeParam on Samples %+v", dim, j, got, want)
			}
		}
	}
}

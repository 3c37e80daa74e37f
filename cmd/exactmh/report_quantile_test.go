// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
)

// TestReportQuantiles checks that the report's 5 %, 50 % and 95 %
// percentiles read from the Summary (summaryQuantile) equal quantile7 on
// the sorted pooled draws, bit for bit, so that reusing them changes no
// printed figure: random chains of odd and even lengths, with ties,
// rounded values, ±0, a constant chain, one chain and many.
func TestReportQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		m, n := 1+r.IntN(4), 1+r.IntN(300)
		x := make([][]float64, m)
		for c := range x {
			x[c] = make([]float64, n)
			for i := range x[c] {
				v := r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
				switch trial % 5 {
				case 1:
					v = math.Round(v * 4) // ties
				case 2:
					v = math.Copysign(0, v) // ±0 only
				case 3:
					v = 1.5 // constant
				}
				x[c][i] = v
			}
		}
		p := exactmh.SummarizeParam("x", x, 1)
		pool := slices.Concat(x...)
		slices.Sort(pool)
		for _, q := range []float64{5, 50, 95} {
			got, ok := summaryQuantile(p, true, q)
			if !ok {
				if p.NotAvailable {
					continue
				}
				t.Fatalf("trial %d: no summary quantile for %v", trial, q)
			}
			if want := quantile7(pool, q/100); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("trial %d (%d × %d): percentile %v from the Summary %v, quantile7 %v", trial, m, n, q, got, want)
			}
		}
		if _, ok := summaryQuantile(p, true, 97.5); ok {
			t.Fatal("97.5 % read from the Summary")
		}
		if _, ok := summaryQuantile(p, false, 50); ok {
			t.Fatal("a rescaled coordinate's percentile read from the Summary")
		}
	}
}

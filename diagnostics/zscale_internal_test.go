// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestZScaleMatchesSlow checks that zScale (a float sort, binary search
// for tie runs, a table of normal scores) gives bit for bit the scores of
// the comparison sort of (value, position) pairs it replaced (zScaleSlow),
// on continuous draws and draws with many ties (a chain that sticks,
// rounded values, ±0); and that foldSorted is the sorted fold.
func TestZScaleMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		chains, n := 1+trial%5, 1+rng.IntN(300)
		if trial%3 == 0 {
			n = 1000 // a run's chains: a table of S = 1000·chains
		}
		x := make([][]float64, chains)
		for j := range x {
			x[j] = make([]float64, n)
			v := rng.NormFloat64()
			for i := range x[j] {
				switch trial % 4 {
				case 0:
					v = rng.NormFloat64()
				case 1:
					if rng.Float64() < 0.3 { // a sticky chain
						v = rng.NormFloat64()
					}
				case 2:
					v = math.Round(3*rng.NormFloat64()) / 2
					if v == 0 && rng.IntN(2) == 0 {
						v = math.Copysign(0, -1)
					}
				case 3:
					v = 1e-300 * rng.NormFloat64()
				}
				x[j][i] = v
			}
		}
		sorted := pooled(x)
		slices.Sort(sorted)
		for _, med := range []float64{sortedQuantile(sorted, 0.5), sorted[0], sorted[len(sorted)-1], 0.25} {
			want := pooled(fold(x, med))
			slices.Sort(want)
			got := foldSorted(sorted, med)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("trial %d, fold about %v: foldSorted[%d] = %v, the sorted fold %v", trial, med, i, got[i], want[i])
				}
			}
		}
		got, want := zScale(x), zScaleSlow(x)
		for j := range x {
			for i := range x[j] {
				if math.Float64bits(got[j][i]) != math.Float64bits(want[j][i]) {
					t.Fatalf("trial %d, chain %d, draw %d (%v): zScale %v, the comparison sort %v", trial, j, i, x[j][i], got[j][i], want[j][i])
				}
			}
		}
	}
}

// zScaleSlow is zScale by a comparison sort of (value, position) pairs:
// the reference TestZScaleMatchesSlow checks zScale against.
func zScaleSlow(x [][]float64) [][]float64 {
	type item struct {
		v   float64
		pos int // chain·n + iteration
	}
	n := len(x[0])
	items := make([]item, 0, len(x)*n)
	for j, c := range x {
		for t, v := range c {
			items = append(items, item{v, j*n + t})
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	flat := make([]float64, len(items))
	s := float64(len(items))
	for i := 0; i < len(items); {
		k := i
		for k < len(items) && items[k].v == items[i].v {
			k++
		}
		rank := float64(i+1+k) / 2 // average of ranks i+1 … k
		z := -math.Sqrt2 * math.Erfcinv(2*(rank-0.375)/(s+0.25))
		for _, it := range items[i:k] {
			flat[it.pos] = z
		}
		i = k
	}
	out := make([][]float64, len(x))
	for j := range x {
		out[j] = flat[j*n : (j+1)*n : (j+1)*n]
	}
	return out
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// GroupSMHStale returns k with its control-variate sums g and H taken at
// Center shifted by shift in every coordinate while the per-datum
// expansions stay at Center: a stale expansion, which the kit must catch.
func GroupSMHStale(k GroupSMH, shift float64) GroupSMH {
	k.sumCenter = func(c []float64) []float64 {
		s := append([]float64(nil), c...)
		for j := range s {
			s[j] += shift
		}
		return s
	}
	return k
}

// GroupSMHFixedBlockOnly returns k with every datum bounded by its block 0
// (the fixed effects) alone — a bound that ignores the groups' blocks —
// thinning probabilities clipped to 1 and the bound check skipped, which
// the kit must catch.
func GroupSMHFixedBlockOnly(k GroupSMH) GroupSMH {
	k.blockMask = func(b int32) bool { return b == 0 }
	return k
}

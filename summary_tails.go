// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh/diagnostics"
)

// tailWarnings returns Summary's warnings on tails: a coordinate whose tail
// ESS is below diagnostics.TailRatioWarn times the smallest bulk ESS, and the longest
// stay of any chain when it exceeds diagnostics.StayWarn transitions.
func tailWarnings(r *Result, s *Summary) []string {
	var out []string
	minBulk := s.MinESSBulk()
	worst, name := math.Inf(1), ""
	for _, p := range s.Params {
		if p.ESSTail < worst {
			worst, name = p.ESSTail, p.Name
		}
	}
	if minBulk > 0 && worst < diagnostics.TailRatioWarn*minBulk {
		out = append(out, fmt.Sprintf("tail ESS of %s (%.0f) is below %.2g × the smallest bulk ESS (%.0f): a chain may stick in a tail its proposal reaches too rarely, and the 5%% and 95%% quantiles are less certain than the means",
			name, worst, diagnostics.TailRatioWarn, minBulk))
	}
	stay, chain := longestStay(r, s.Draws)
	if stay > diagnostics.StayWarn {
		out = append(out, fmt.Sprintf("chain %d stayed %d transitions at one point: the proposal rarely leaves part of the posterior (a tail heavier than the proposal's?)", chainNumber(r.Settings.FirstChain, chain), stay))
	}
	return out
}

// longestStay returns the most consecutive equal draws in any chain's
// first n draws, and that chain.
func longestStay(r *Result, n int) (stay, chain int) {
	for c, ch := range r.Chains {
		m := min(n, ch.Len())
		run := 0
		for k := range m {
			if k > 0 && equalDraws(r.Draw(c, k), r.Draw(c, k-1)) {
				run++
			} else {
				run = 1
			}
			if run > stay {
				stay, chain = run, c
			}
		}
	}
	return stay, chain
}

// equalDraws reports whether two draws are the same point.
func equalDraws(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return true
}

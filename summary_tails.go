// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh/diagnostics"
)

// ParamWarnings returns Summary's warnings on the figures of params from
// chains chains, each naming its coordinate by its Name: R-hat, bulk and
// tail ESS (diagnostics.RHatThreshold, MinESSPerChain, TailRatioWarn), draws
// constant or non-finite (none without chains). With params renamed it gives
// the same warnings under those names (exactmh summary's R spelling).
func ParamWarnings(params []ParamSummary, chains int) []string {
	var out []string
	var minBulk, minTail, maxRHat = math.Inf(1), math.Inf(1), math.Inf(-1)
	var worstBulk, worstTail, worstRHat string
	for _, p := range params {
		if p.ESSBulk < minBulk {
			minBulk, worstBulk = p.ESSBulk, p.Name
		}
		if p.ESSTail < minTail {
			minTail, worstTail = p.ESSTail, p.Name
		}
		if p.RHat > maxRHat {
			maxRHat, worstRHat = p.RHat, p.Name
		}
	}
	if maxRHat > diagnostics.RHatThreshold {
		out = append(out, fmt.Sprintf("R-hat up to %.3f (%s) > %.2f: the chains disagree; run longer or check the kernel", maxRHat, worstRHat, diagnostics.RHatThreshold))
	}
	limit := float64(diagnostics.MinESSPerChain * chains)
	if minBulk < limit {
		out = append(out, fmt.Sprintf("bulk ESS down to %.0f (%s) < %.0f (100 per chain): means and R-hat are unreliable", minBulk, worstBulk, limit))
	}
	if minTail < limit {
		out = append(out, fmt.Sprintf("tail ESS down to %.0f (%s) < %.0f (100 per chain): 5%% and 95%% quantiles are unreliable", minTail, worstTail, limit))
	}
	if mb := (&Summary{Params: params}).MinESSBulk(); mb > 0 && minTail < diagnostics.TailRatioWarn*mb {
		out = append(out, fmt.Sprintf("tail ESS of %s (%.0f) is below %.2g × the smallest bulk ESS (%.0f): a chain may stick in a tail its proposal reaches too rarely, and the 5%% and 95%% quantiles are less certain than the means",
			worstTail, minTail, diagnostics.TailRatioWarn, mb))
	}
	for _, p := range params {
		if p.NotAvailable && chains > 0 {
			out = append(out, fmt.Sprintf("%s: draws constant or non-finite, diagnostics not available (NaN)", p.Name))
		}
	}
	return out
}

// stayWarning returns Summary's warning on the longest stay of any chain
// when it exceeds diagnostics.StayWarn transitions.
func stayWarning(r *Result, s *Summary) []string {
	if stay, chain := longestStay(r, s.Draws); stay > diagnostics.StayWarn {
		return []string{fmt.Sprintf("chain %d stayed %d transitions at one point: the proposal rarely leaves part of the posterior (a tail heavier than the proposal's?)", chainNumber(r.Settings.FirstChain, chain), stay)}
	}
	return nil
}

// longestStay returns the most consecutive equal draws in any chain's
// first n draws, and that chain.
func longestStay(r *Result, n int) (stay, chain int) {
	for c, ch := range r.Chains {
		m := min(n, ch.Len())
		run := 0
		for k := range m {
			if k > 0 && slices.Equal(r.Draw(c, k), r.Draw(c, k-1)) {
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

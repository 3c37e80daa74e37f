// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"flag"
	"testing"
)

var tunaSeeds = flag.Int("tunaseeds", 0, "run TestTunaMHSeedSweep over seeds 1 to this (0: skip)")

// TestTunaMHSeedSweep runs TestTunaMHChiChosen's problem and settings
// (the control-variate logistic regression, N = 20000, d = 3; 2 chains,
// Warmup 400, Draws 2000) with TunaMH{} over seeds 1 … -tunaseeds and
// prints, per chain, its Params and sampling acceptance, counting the
// chains that are neither tuned nor switched or sample outside
// [0.1, 0.99] (figures/bench/tunamh_chi_seeds.txt). It is a measurement,
// not a test:
//
//	go test -run TestTunaMHSeedSweep -tunaseeds 16 -v .
func TestTunaMHSeedSweep(t *testing.T) {
	if *tunaSeeds == 0 {
		t.Skip("run with -tunaseeds N")
	}
	_, cv, la := cvProblem(t, "logistic", 20000, 3, 1)
	bad, n := 0, 0
	for seed := uint64(1); seed <= uint64(*tunaSeeds); seed++ {
		res, err := Sample(context.Background(), cv, TunaMH{}, &Settings{Chains: 2, Warmup: 400, Draws: 2000, Seed: seed, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		var warm int64
		for _, c := range res.Chains {
			warm += c.Warmup.Evals
		}
		t.Logf("seed %d: min bulk ESS %.0f, warmup data reads %d", seed, res.Summary().MinESSBulk(), warm)
		for _, c := range res.Chains {
			p, a := c.Params, c.Sampling.AcceptRate()
			ok := (p["chi_tuned"] == 1 || p["as_mh"] == 1) && a >= 0.1 && a <= 0.99
			if n++; !ok {
				bad++
			}
			t.Logf("  chain %d: accept %.3f ok %v %v", c.Chain, a, ok, p)
		}
	}
	t.Logf("%d of %d chains untuned, unswitched or sampling outside [0.1, 0.99]", bad, n)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
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
	chiSeedSweep(t, TunaMH{}, *tunaSeeds)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"strings"
	"testing"
)

// TestTunaMHRunsAsMH checks the mid-warmup comparison with full-batch MH:
// on an untempered logistic regression of 2·10⁴ data TunaMH with its
// chosen χ would mix ~100× slower than MH (C·M ~ √N); it must switch to MH
// in warmup, say so, and then mix like MH. With χ set by the user it must
// not switch.
func TestTunaMHRunsAsMH(t *testing.T) {
	t.Parallel()
	p, _, la := cvProblem(t, "logistic", 20000, 3, 1)
	p.Prior = nil
	set := &Settings{Chains: 2, Warmup: 600, Draws: 1500, Seed: 1, Init: la.Mean}
	res, err := Sample(context.Background(), p, TunaMH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Chains {
		if c.Params["as_mh"] != 1 || !(c.Params["mh_speedup"] > 2) {
			t.Errorf("chain %d did not switch to MH: %v", c.Chain, c.Params)
		}
	}
	s := res.Summary()
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "ran as full-batch MH") {
		t.Errorf("no warning of the switch: %q", s.Warnings)
	}
	if ess := s.MinESSBulk(); ess < 100 {
		t.Errorf("min bulk ESS %.0f of 3000 draws after the switch: not mixing like MH", ess)
	}
	fixed, err := Sample(context.Background(), p, TunaMH{Chi: res.Chains[0].Params["chi"]}, set)
	if err != nil {
		t.Fatal(err)
	}
	if fixed.Chains[0].Params["as_mh"] != 0 {
		t.Errorf("a user's χ was overridden: %v", fixed.Chains[0].Params)
	}
}

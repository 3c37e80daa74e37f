// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"testing"

	"github.com/exactmh/exactmh"
)

// TestChoicePilotShare: Choice.Pilot (a registered kernel's pilot, as the
// multilevel path's GroupGibbs pilot) makes, warmup included, at most an
// eighth of the transitions of the run its Choice decides — counted, so a
// seed fixes it — and at least 400 draws; a Choice that decides no run
// (made by hand) pilots the 4,000 draws every pilot may make. Full-batch
// MH on 200 data: its counted budget holds 10⁵ transitions, so the draw
// cap alone ends it.
func TestChoicePilotShare(t *testing.T) {
	g := boxed(t, 200, 1)
	for _, c := range []struct {
		run, want int
	}{{4 * (1000 + 1000), 8000/8 - 20}, {4 * (100 + 100), 400}, {0, 4000}, {10 * 8 * 5000, 4000}} {
		m, res, err := exactmh.ChoiceForRun(c.run).Pilot(context.Background(), g.Posterior, exactmh.MH{}, g.Mean, 3, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		ch := res.Chains[0]
		if ch.Warmup.Steps != 20 || ch.Sampling.Steps != c.want || ch.Len() != c.want || !(m.ESSPerCost > 0) {
			t.Errorf("run of %d transitions: the pilot made %d warmup and %d sampling transitions (%d draws, rate %v), want 20 and %d",
				c.run, ch.Warmup.Steps, ch.Sampling.Steps, ch.Len(), m.ESSPerCost, c.want)
		}
	}
}

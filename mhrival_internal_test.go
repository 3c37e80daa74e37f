// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"
	"testing"
)

// TestRivalSaturation counts the full passes of the mid-warmup comparison
// with MH (mhRival.against) for a Crank–Nicolson chain: MH is probed at
// the chain's scale, at longer scales (×4 each, up to eight) and at two
// shorter ones, but at one scale at or above the proposal's saturation
// at most (cnIndependentScale uncapped, MaxScale capped), from which
// every scale makes the same moves. Uncapped at scale 100 (past the
// independence limit) that is 3 probed scales, not 11; at scale 1, 6
// (1, 4, 16, 64, then the two shorter); capped at 2 from scale 1, 4. The
// probes read every datum twice per proposal, mhProbes proposals a scale.
func TestRivalSaturation(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 2000, 3, 1)
	cn, err := la.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	capped := *cn
	capped.MaxScale = 2
	tg := mustTarget(t, p)
	perScale := func() int64 {
		e0 := tg.Evals()
		if _, err := fullEnergyDiff(tg, la.Mean, la.Mean, &[batchChunk]int{}, &[batchChunk]float64{}); err != nil {
			t.Fatal(err)
		}
		return mhProbes * (tg.Evals() - e0)
	}()
	for _, c := range []struct {
		name   string
		prop   *CrankNicolson
		sat    float64
		scale  float64
		scales int64
	}{
		{"uncapped, at the independence limit", cn, saturation(cn), 100, 3},
		{"uncapped, no saturation", cn, math.Inf(1), 100, 11},
		{"uncapped, from scale 1", cn, saturation(cn), 1, 6},
		{"capped at 2, from scale 1", &capped, saturation(&capped), 1, 4},
	} {
		w := &walk{t: tg, prop: c.prop, theta: la.Mean, next: make([]float64, 3)}
		r := newMHRival(3)
		e0 := tg.Evals()
		if _, _, err := r.against(walkProposer(w), c.sat, tg, la.Mean, c.scale, 0, nil); err != nil {
			t.Fatal(err)
		}
		if got := (tg.Evals() - e0) / perScale; got != c.scales || (tg.Evals()-e0)%perScale != 0 {
			t.Errorf("%s: %d evaluations, %v scales' probes; want %d scales", c.name, tg.Evals()-e0, float64(tg.Evals()-e0)/float64(perScale), c.scales)
		}
	}
	if s := saturation(nil); !math.IsInf(s, 1) {
		t.Errorf("saturation of no proposal = %v, want +Inf", s)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
)

// TestAcceptance checks the acceptance functions: each satisfies
// a(t) = t·a(1/t) (the condition of footnote 1 and Prop. 10 that keeps
// the framework's chains reversible) over 40 orders of magnitude, stays
// in [0, 1] with the right limits at log r = ±Inf, and is NaN for NaN;
// and a Barker kernel says so in its Name and Params.
func TestAcceptance(t *testing.T) {
	for _, a := range []exactmh.Acceptance{exactmh.AcceptMetropolis, exactmh.AcceptBarker} {
		for l := -40.0; l <= 40; l += 0.37 {
			p, q := a.Prob(l), a.Prob(-l)
			if !(p >= 0 && p <= 1) {
				t.Fatalf("%v: a(e^%v) = %v outside [0, 1]", a, l, p)
			}
			// a(t) = t·a(1/t) in logs: log a(t) = log t + log a(1/t).
			if d := math.Log(p) - (l + math.Log(q)); math.Abs(d) > 1e-13*max(1, math.Abs(l)) {
				t.Errorf("%v: log a(t) − log t − log a(1/t) = %v at log t = %v", a, d, l)
			}
		}
		if a.Prob(math.Inf(1)) != 1 || a.Prob(math.Inf(-1)) != 0 || !math.IsNaN(a.Prob(math.NaN())) {
			t.Errorf("%v: a(∞) = %v, a(0) = %v, a(NaN) = %v", a, a.Prob(math.Inf(1)), a.Prob(math.Inf(-1)), a.Prob(math.NaN()))
		}
	}
	if got := exactmh.AcceptBarker.Prob(0); got != 0.5 {
		t.Errorf("Barker a(1) = %v, want 0.5", got)
	}
	if !math.IsNaN(exactmh.Acceptance(7).Prob(0)) || exactmh.Acceptance(7).String() != "Acceptance(7)" {
		t.Error("an unknown Acceptance is not NaN or is misnamed")
	}

	g := boxed(t, 50, 1)
	k := exactmh.TunaMH{Chi: 1e-2, Accept: exactmh.AcceptBarker}
	if k.Name() != "TunaMH (Barker)" || (exactmh.TunaMH{}).Name() != "TunaMH" {
		t.Errorf("names %q, %q", k.Name(), exactmh.TunaMH{}.Name())
	}
	res, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{Chains: 1, Warmup: 20, Draws: 20, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Chains[0].Params; p["barker"] != 1 {
		t.Errorf("Params = %v, want barker = 1", p)
	}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.PoissonMH{Accept: 9}, &exactmh.Settings{Chains: 1, Init: g.Mean}); err == nil {
		t.Error("PoissonMH started with an unknown Acceptance")
	}
}

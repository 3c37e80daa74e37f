// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestTunaMHUnjudgedRunsAsMH forces the mid-warmup χ search to judge no
// step — an untempered logistic regression of 2·10⁴ data without control
// variates (C·M ~ √N: the search's sample cannot resolve a proposal's
// log ratio) at steps of 4 and 400 times the posterior's sd — and checks
// that TunaMH and TunaMH-SGLD then switch to full-batch MH and say so
// (Params chi_unjudged beside as_mh, every step a full MH step) both
// where MH's probes move (from MH's best scale) and where they all reject
// (forced, from the shortest scale probed, the step /16), after a warmup
// that accepted half its proposals (TunaMH, which compared MH with that
// warmup's efficiency, kept its heuristic χ where MH's probes were few to
// accept); that TunaMH's switch survives a checkpoint, whose state
// claiming an unjudged χ without the switch is refused; and that a run
// so started warns in its Summary.
func TestTunaMHUnjudgedRunsAsMH(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 20000, 3, 1)
	p.Prior = nil
	warm := Totals{Steps: 100, Accepted: 50, Batch: 100}
	for _, c := range []struct {
		scale, mhScale float64 // the mid-warmup step, and MH's after the switch
	}{
		{0.1, 0.1 / 4}, // MH's probes move: MH's best scale
		{10, 10. / 16}, // they all reject: the shortest probed
	} {
		ch, err := TunaMH{}.Start(mustTarget(t, p), la.Mean)
		if err != nil {
			t.Fatal(err)
		}
		tc := ch.(*auxChain[struct{}, *tunaBatch]).scheme.(*tunaChain)
		tc.walk.scale = c.scale
		turn, err := tc.midWarmup(warm, true)
		if err != nil {
			t.Fatal(err)
		}
		pm := tc.Params()
		if pm["chi_unjudged"] != 1 || pm["as_mh"] != 1 || pm["chi_tuned"] != 0 || tc.maxBatch != -1 || math.Abs(turn.Scale-c.mhScale) > 1e-12 {
			t.Errorf("TunaMH at step %v: Params %v, max batch %v, restart at %v: want chi_unjudged and as_mh, max batch −1, restart at %v",
				c.scale, pm, tc.maxBatch, turn.Scale, c.mhScale)
		}
		b, err := tc.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		ch2, _ := TunaMH{}.Start(mustTarget(t, p), la.Mean)
		tc2 := ch2.(*auxChain[struct{}, *tunaBatch]).scheme.(*tunaChain)
		if err := tc2.UnmarshalState(b); err != nil {
			t.Fatal(err)
		}
		if pm := tc2.Params(); pm["chi_unjudged"] != 1 || pm["as_mh"] != 1 || tc2.maxBatch != -1 {
			t.Errorf("TunaMH at step %v after a round trip: Params %v, max batch %v", c.scale, pm, tc2.maxBatch)
		}
		tc.rival.asMH = false
		if b, err = tc.MarshalState(); err != nil {
			t.Fatal(err)
		}
		if err := tc2.UnmarshalState(b); err == nil || !strings.Contains(err.Error(), "judged at no step") {
			t.Errorf("a saved unjudged χ without the switch: err = %v", err)
		}

		sg, err := TunaMHSGLD{}.Start(mustTarget(t, p), la.Mean)
		if err != nil {
			t.Fatal(err)
		}
		sc := sg.(*metricAux[[]int, *tunaOmega2]).auxChain.scheme.(*tunaSGLDChain)
		sc.walk.scale = c.scale
		if _, err := sc.midWarmup(warm, true); err != nil {
			t.Fatal(err)
		}
		if pm := sc.Params(); pm["chi_unjudged"] != 1 || pm["as_mh"] != 1 || sc.batch.maxBatch != -1 {
			t.Errorf("TunaMH-SGLD at step %v: Params %v, max batch %v: want chi_unjudged and as_mh, max batch −1", c.scale, pm, sc.batch.maxBatch)
		}
	}

	// A proposal whose steps warmup cannot shorten: the search judges no
	// step, MH's probes all reject, and the switch is forced.
	draws := 100
	if testing.Short() {
		draws = 10 // every one a full-batch step of 2·10⁴ data: the switch is made in warmup
	}
	res, err := Sample(context.Background(), p, TunaMH{Proposal: wideWalk{}}, &Settings{Chains: 2, Warmup: 200, Draws: draws, Seed: 3, Init: la.Mean})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Chains {
		if c.Params["chi_unjudged"] != 1 || c.Params["as_mh"] != 1 || c.Sampling.Fallbacks != c.Sampling.Steps {
			t.Errorf("TunaMH with wideWalk, chain %d: %v, %d full MH steps of %d, want chi_unjudged and as_mh, every step MH",
				c.Chain, c.Params, c.Sampling.Fallbacks, c.Sampling.Steps)
		}
	}
	if w := strings.Join(res.Summary().Warnings, "\n"); !strings.Contains(w, "could not judge χ") || !strings.Contains(w, "ran as full-batch MH") {
		t.Errorf("Summary warnings %q: want the unjudged χ and the switch to MH", w)
	}
}

// wideWalk is the random walk θ′ = θ + 10·z, z ~ N(0, I), whatever the
// step scale: steps 400 times the posterior's sd that warmup cannot
// shorten.
type wideWalk struct{}

func (wideWalk) Propose(rng *rand.Rand, dst, theta []float64, _ float64) float64 {
	for j, v := range theta {
		dst[j] = v + 10*rng.NormFloat64()
	}
	return 0
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
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
	if testing.Short() {
		t.Skip("slow statistical check (warmups on N = 2·10⁴ data, then MH-like mixing): runs without -short")
	}
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

// TestTruncatedRunAsMH is the same comparison for TFMH and SMH (random
// walk, no control variates in TFMH's case): on the untempered logistic
// regression (d = 10; its steps must be ~70× shorter than the posterior's
// width, so it mixes far slower than MH although it reads 15 data a step) TFMH's steps must read data worth more than MH's pass buys, so
// every chain switches and says so; KeepMinibatch keeps the kernel; the
// switch survives a checkpoint. SMH-2 at the MAP, which reads a few data
// per step, does not switch.
func TestTruncatedRunAsMH(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow statistical check (warmups of TFMH and SMH on N = 2·10⁴ data in d = 10): runs without -short")
	}
	p, _, la := cvProblem(t, "logistic", 20000, 10, 1)
	p.Prior = nil
	set := &Settings{Chains: 2, Warmup: 400, Draws: 300, Seed: 1, Init: la.Mean}
	for _, k := range []struct {
		def, keep Kernel
	}{
		{TFMH{}, TFMH{KeepMinibatch: true}},
	} {
		res, err := Sample(context.Background(), p, k.def, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Chains {
			if c.Params["as_mh"] != 1 || !(c.Params["mh_speedup"] > 1) {
				t.Errorf("%s chain %d did not switch to MH: %v", res.Kernel, c.Chain, c.Params)
			}
		}
		if tot := res.Sampling(); tot.EvalsPerStep() != float64(p.Len()) {
			t.Errorf("%s as MH: %v data per step, want N = %d", res.Kernel, tot.EvalsPerStep(), p.Len())
		}
		if s := res.Summary(); !strings.Contains(strings.Join(s.Warnings, "\n"), "ran as full-batch MH") {
			t.Errorf("%s: no warning of the switch: %q", res.Kernel, s.Warnings)
		}
		var buf strings.Builder
		if err := res.Checkpoint(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := LoadCheckpoint(strings.NewReader(buf.String()), p, k.def, nil)
		if err != nil {
			t.Fatal(err)
		}
		if back.Chains[0].Params["as_mh"] != 1 {
			t.Errorf("%s: the switch did not survive a checkpoint: %v", res.Kernel, back.Chains[0].Params)
		}
		kept, err := Sample(context.Background(), p, k.keep, set)
		if err != nil {
			t.Fatal(err)
		}
		if kept.Chains[0].Params["as_mh"] != 0 || kept.Sampling().EvalsPerStep() >= float64(p.Len()) {
			t.Errorf("%s with KeepMinibatch switched: %v", kept.Kernel, kept.Chains[0].Params)
		}
	}
	// SMH-2 at the MAP reads a few data per step: it must stay itself.
	res, err := Sample(context.Background(), p, SMH{Order: 2, Center: la.Mean}, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Chains {
		if c.Params["as_mh"] != 0 {
			t.Errorf("SMH-2 chain %d switched to MH at %.1f data per step: %v", c.Chain, res.Sampling().EvalsPerStep(), c.Params)
		}
	}
}

// TestRivalSkipsProbes: TFMH on the control-variate rewrite with the
// Crank–Nicolson proposal reads a few data per step and moves as far as
// the posterior is wide, far beyond anything MH could do per datum, so its
// comparison with MH must not spend full passes on probes: its warmup
// reads fewer than N data in all.
func TestRivalSkipsProbes(t *testing.T) {
	t.Parallel()
	_, cv, la := cvProblem(t, "logistic", 20000, 3, 1)
	cn, err := la.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	set := &Settings{Chains: 1, Warmup: 400, Draws: 100, Seed: 1, Init: la.Mean}
	res, err := Sample(context.Background(), cv, TFMH{Proposal: cn, Scale: 0.5}, set)
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Chains[0]
	if ch.Params["as_mh"] != 0 {
		t.Fatalf("switched to MH: %v", ch.Params)
	}
	if ch.Warmup.Evals >= int64(cv.Len()) {
		t.Errorf("warmup read %d data (N = %d): the probes ran although the chain is clearly faster (%.1f data per step)",
			ch.Warmup.Evals, cv.Len(), ch.Warmup.EvalsPerStep())
	}
}

// TestPoissonMHRunsAsMH: PoissonMH with its default λ on a tempered
// logistic regression on a ball (β = 0.012, N = 2·10⁴), whose expected
// batch λ + L ≈ 8,700 is below N (so Start keeps the minibatch) but whose
// randomly drawn data cost more than MH's pass, compares itself with MH
// halfway through warmup like TunaMH and switches; with MaxBatch +Inf
// (never fall back) it does not.
func TestPoissonMHRunsAsMH(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow statistical check (warmups on N = 2·10⁴ data, then MH-like mixing): runs without -short")
	}
	p, _, la := cvProblem(t, "logistic", 20000, 3, 1)
	ball, err := NewBall(3, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Prior, p.Beta = ball, 0.014
	set := &Settings{Chains: 2, Warmup: 400, Draws: 200, Seed: 1, Init: la.Mean}
	res, err := Sample(context.Background(), p, PoissonMH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	prm := res.Chains[0].Params
	t.Logf("λ + L = %v, N = %d: %v, %.0f data per step", prm["lambda"]+prm["L"], p.Len(), prm, res.Sampling().EvalsPerStep())
	if !(prm["lambda"]+prm["L"] < float64(p.Len())) {
		t.Fatalf("λ + L = %v ≥ N: the chain falls back at Start, nothing to compare", prm["lambda"]+prm["L"])
	}
	switched := 0
	for _, c := range res.Chains {
		if c.Params["as_mh"] == 1 {
			switched++
		}
	}
	if switched == 0 {
		t.Errorf("no chain switched to MH")
	}
	never, err := Sample(context.Background(), p, PoissonMH{MaxBatch: math.Inf(1)}, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range never.Chains {
		if c.Params["as_mh"] != 0 {
			t.Errorf("MaxBatch +Inf, chain %d switched: %v", c.Chain, c.Params)
		}
	}
}

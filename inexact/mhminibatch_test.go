// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact_test

import (
	"context"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// skewedWalk is the App. J.1 walk on K = 200 states with more skewed
// data: 5900 at −1 and 100 at 59 (Σx_i = 0, so the target is uniform).
func skewedWalk(t *testing.T) *exactmh.Posterior {
	t.Helper()
	x := make([]float64, 6000)
	for i := range x {
		x[i] = -1
		if i >= 5900 {
			x[i] = 59
		}
	}
	box, err := model.NewCube(1, 0, 199)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: &mcmctest.Linear{X: x}, Prior: box}
}

// MHminibatch (m = 30, δ = 5, the TunaMH paper's Fig. 1 and Fig. 5
// setting) fails the pairwise detailed-balance check on a walk whose
// uniform target needs up and down moves accepted equally often: its
// Gaussian model of the minibatch mean is wrong for skewed l_i. On the
// App. J.1 walk itself (5000 data at −1, 1000 at 5) the skew, and so the
// bias, is small per step — log(α+/α−) ≈ −0.005, which only a few million
// decisions resolve (go test -run TestMHminibatchPairwiseBias -v without
// -short logs it) — but ν(k) ∝ (α+/α−)^k compounds it over K states: the
// TunaMH paper's point that the error grows with K.
func TestMHminibatchPairwiseBias(t *testing.T) {
	t.Parallel()
	mk := func(q exactmh.Proposal) exactmh.Kernel {
		return inexact.MHminibatch{Proposal: q, Scale: 1, BatchSize: 30, Delta: 5}
	}
	decisions := 200000
	if testing.Short() {
		decisions = 40000
	}
	res, err := mcmctest.Pairwise(skewedWalk(t), mk, []float64{100}, []float64{101}, 0, decisions, 7)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Z) < 6 {
		t.Errorf("MHminibatch passes the pairwise check on the skewed walk: %v", res)
	}
	up, down := float64(res.AccA)/float64(res.FromA), float64(res.AccB)/float64(res.FromB)
	t.Logf("skewed walk: %v\nα+ = %.4f, α− = %.4f: TV(ν, uniform) %.3f at K = 200", res, up, down, mcmctest.StationaryTV(up, down, 200))
	if (inexact.MHminibatch{}).Exact() {
		t.Error("MHminibatch claims to be exact")
	}
	if testing.Short() {
		return
	}
	p, _, err := mcmctest.RandomWalk(200)
	if err != nil {
		t.Fatal(err)
	}
	res, err = mcmctest.Pairwise(p, mk, []float64{100}, []float64{101}, 0, 4000000, 7)
	if err != nil {
		t.Fatal(err)
	}
	up, down = float64(res.AccA)/float64(res.FromA), float64(res.AccB)/float64(res.FromB)
	t.Logf("App. J.1 walk: %v\nα+ = %.4f, α− = %.4f: TV(ν, uniform) %.3f at K = 200, %.3f at K = 5000",
		res, up, down, mcmctest.StationaryTV(up, down, 200), mcmctest.StationaryTV(up, down, 5000))
}

// With all the data in one round (m = N) MHminibatch is Barker's exact
// test: it passes the pairwise check on the walk, where the minibatch
// version fails.
func TestMHminibatchFullBatchExact(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow statistical check (a pairwise check of 20,000 full-batch decisions): runs without -short")
	}
	p, _, err := mcmctest.RandomWalk(200)
	if err != nil {
		t.Fatal(err)
	}
	decisions := 20000
	res, err := mcmctest.Pairwise(p, func(q exactmh.Proposal) exactmh.Kernel {
		return inexact.MHminibatch{Proposal: q, Scale: 1, BatchSize: p.Len()}
	}, []float64{100}, []float64{101}, 0.7, decisions, 9)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Z) > 4 {
		t.Errorf("full-batch MHminibatch (Barker) fails the pairwise check: %v", res)
	}
	t.Logf("m = N: %v", res)
}

// MHminibatch refuses bad settings.
func TestMHminibatchErrors(t *testing.T) {
	p, _, err := mcmctest.RandomWalk(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []inexact.MHminibatch{{BatchSize: 1}, {BatchSize: -3}, {Delta: -1}, {Delta: math.NaN()}, {Scale: -1}} {
		if _, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Draws: 10, Init: []float64{3}}); err == nil {
			t.Errorf("%+v: no error", k)
		}
	}
}

func BenchmarkMHminibatchStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), inexact.MHminibatch{Scale: 0.02})
}

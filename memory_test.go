// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
)

// 8 bytes per coordinate, the Info and the time: the figure the docs quote.
func TestDrawBytes(t *testing.T) {
	if got := (&exactmh.Result{Dim: 100}).DrawBytes(); got != 896 {
		t.Errorf("DrawBytes(100) = %d, want 896 (θ 800, Info 88, time 8)", got)
	}
}

// A run whose draws do not fit is refused before any chain starts, with
// the figures; one that fits reserves every draw up front, so the slices
// never grow (no doubling on append).
func TestDrawsMustFit(t *testing.T) {
	g := boxed(t, 50, 1)
	restore := exactmh.SetAvailableMemory(1<<20, true)
	set := &exactmh.Settings{Chains: 2, Draws: 10000, Warmup: 10, Seed: 1, Init: g.Mean}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, set)
	restore()
	if err == nil || !strings.Contains(err.Error(), "DiscardDraws") || !strings.Contains(err.Error(), "1.0 MiB") {
		t.Fatalf("10,000 draws × 2 chains in 1 MiB: error %v, want one with the figures and the way out", err)
	}

	restore = exactmh.SetAvailableMemory(1<<30, true)
	defer restore()
	set.Draws = 3000
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range res.Chains {
		if cap(ch.Infos) != 3000 || cap(ch.Draws) != 3000*res.Dim {
			t.Errorf("chain %d: capacity %d infos, %d coordinates; want exactly the 3000 draws reserved", ch.Chain, cap(ch.Infos), cap(ch.Draws))
		}
	}
	// Resume checks the extended run too.
	exactmh.SetAvailableMemory(float64(4000*2*res.DrawBytes()), true)
	if _, err := exactmh.Resume(context.Background(), res, 100000); err == nil || !strings.Contains(err.Error(), "Resume") {
		t.Errorf("Resume past memory: error %v", err)
	}
}

// DiscardDraws needs somewhere for the draws to go.
func TestDiscardDrawsNeedsRecorder(t *testing.T) {
	g := boxed(t, 50, 1)
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{DiscardDraws: true})
	if err == nil || !strings.Contains(err.Error(), "Recorder") {
		t.Fatalf("DiscardDraws without a recorder: error %v", err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/exactmh/exactmh"
)

// TestSpoolSummary runs 3 chains of random-walk MH on a small multilevel
// posterior twice — the draws kept, and spooled to a file with
// Settings.DiscardDraws — and checks that the spooled run streamed every
// draw, that the spool's summary (a group of 5 coordinates at a time)
// agrees with Result.Summary on every coordinate — the mean and sd to
// float32's precision, the ESS and R-hat to 1 % (ranks of float32 draws)
// — and that Close leaves no file behind.
func TestSpoolSummary(t *testing.T) {
	d := simulate(2000, 8, 50, 500, 3, false)
	post, err := d.posterior(false)
	if err != nil {
		t.Fatal(err)
	}
	set := exactmh.Settings{Chains: 3, Warmup: 200, Draws: 300, Seed: 5}
	k := exactmh.MH{Proposal: exactmh.RandomWalk{}}
	want, err := exactmh.Sample(context.Background(), post, k, &set)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sp := newSpool(dir, nil)
	set.Recorder, set.DiscardDraws = sp, true
	got, err := exactmh.Sample(context.Background(), post, k, &set)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Chains[0]; c.Len() != 0 || c.Streamed != set.Draws {
		t.Fatalf("spooled run kept %d draws and streamed %d, want 0 and %d", c.Len(), c.Streamed, set.Draws)
	}
	s, err := sp.summaryIn(post.Names, set.Draws, 5*8*3*300)
	if err != nil {
		t.Fatal(err)
	}
	ws := want.Summary()
	if len(s.Params) != len(ws.Params) {
		t.Fatalf("%d coordinates summarised, want %d", len(s.Params), len(ws.Params))
	}
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }
	for j, p := range s.Params {
		w := ws.Params[j]
		if p.Name != w.Name || math.Abs(p.Mean-w.Mean) > 1e-6*(math.Abs(w.Mean)+w.SD) || rel(p.SD, w.SD) > 1e-5 ||
			rel(p.ESSBulk, w.ESSBulk) > 0.01 || rel(p.ESSTail, w.ESSTail) > 0.01 || rel(p.RHat, w.RHat) > 0.01 {
			t.Errorf("%s: spooled mean %.6g sd %.4g ESS %.1f / %.1f R-hat %.4f; kept %s: %.6g %.4g %.1f / %.1f %.4f",
				p.Name, p.Mean, p.SD, p.ESSBulk, p.ESSTail, p.RHat, w.Name, w.Mean, w.SD, w.ESSBulk, w.ESSTail, w.RHat)
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("spool left %d files", len(left))
	}
}

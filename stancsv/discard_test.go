// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// readChains reads prefix_1.csv … prefix_n.csv.
func readChains(t *testing.T, prefix string, n int) []*stancsv.File {
	t.Helper()
	out := make([]*stancsv.File, n)
	for c := range n {
		raw, err := os.ReadFile(fmt.Sprintf("%s_%d.csv", prefix, c+1))
		if err != nil {
			t.Fatal(err)
		}
		if out[c], err = stancsv.Read(bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// With Settings.DiscardDraws the files hold every draw and the Result none
// (it counts them); a cancelled run resumes in the same files, which end
// exactly as those of a run that kept its draws; a checkpoint of it is
// continued only by the recorder that holds the streamed draws.
func TestDiscardDrawsStreams(t *testing.T) {
	g := boxed(t, 200, 1)
	dir := t.TempDir()
	opt := &stancsv.Options{SigFigs: 17}
	set := exactmh.Settings{Chains: 2, Draws: 300, Warmup: 100, Seed: 9, Init: g.Mean,
		Recorder: stancsv.NewFiles(filepath.Join(dir, "kept"), opt)}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &set); err != nil {
		t.Fatal(err)
	}
	want := readChains(t, filepath.Join(dir, "kept"), 2)

	ctx, cancel := context.WithCancel(context.Background())
	set.DiscardDraws = true
	set.Recorder = &cancelAfter{Recorder: stancsv.NewFiles(filepath.Join(dir, "streamed"), opt), after: 150, cancel: cancel}
	res, err := exactmh.Sample(ctx, g.Posterior, exactmh.MH{}, &set)
	if res == nil || res.Status != exactmh.Canceled {
		t.Fatalf("cancelled run: %v, %v", res, err)
	}
	for _, ch := range res.Chains {
		if ch.Len() != 0 {
			t.Fatalf("chain %d: %d draws kept, want none", ch.Chain, ch.Len())
		}
	}
	if n := res.Chains[0].Streamed; n < 150 {
		t.Fatalf("chain 0 streamed %d draws before its 150th cancelled the run", n)
	}
	// Its checkpoint counts the streamed draws; a recorder without the
	// files that hold them cannot continue it.
	var buf bytes.Buffer
	if err := res.Checkpoint(&buf); err != nil {
		t.Fatalf("Checkpoint of a run without its draws: %v", err)
	}
	loaded, err := exactmh.LoadCheckpoint(&buf, g.Posterior, exactmh.MH{}, stancsv.NewFiles(filepath.Join(dir, "other"), opt))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.Resume(context.Background(), loaded, 0); err == nil || !strings.Contains(err.Error(), "streamed") {
		t.Errorf("Resume of a loaded run without its draws, by a recorder without their files: error %v", err)
	}
	if res, err = exactmh.Resume(context.Background(), res, 0); err != nil {
		t.Fatal(err)
	}
	for _, ch := range res.Chains {
		if ch.Streamed != 300 {
			t.Errorf("chain %d streamed %d draws, want 300", ch.Chain, ch.Streamed)
		}
	}
	if s := res.Summary(); len(s.Warnings) == 0 || !strings.Contains(strings.Join(s.Warnings, " "), "streamed") {
		t.Errorf("summary of a run without its draws does not say where they went: %v", s.Warnings)
	}
	got := readChains(t, filepath.Join(dir, "streamed"), 2)
	for c := range 2 {
		if len(got[c].Draws) != len(want[c].Draws) {
			t.Fatalf("chain %d: %d rows streamed, %d kept", c, len(got[c].Draws), len(want[c].Draws))
		}
		for i := range want[c].Draws {
			if fmt.Sprint(got[c].Draws[i]) != fmt.Sprint(want[c].Draws[i]) {
				t.Fatalf("chain %d row %d: streamed %v, kept %v", c, i, got[c].Draws[i], want[c].Draws[i])
			}
		}
	}
	// Once the files are closed, a streamed run cannot be extended.
	if _, err := exactmh.Resume(context.Background(), res, 10); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("extending a finished streamed run: error %v", err)
	}
}

// cancelAfter cancels the run after chain 0's after-th kept draw.
type cancelAfter struct {
	*stancsv.Recorder
	after  int
	cancel context.CancelFunc
}

func (r *cancelAfter) Record(e *exactmh.Event) error {
	if e.Chain == 0 && e.Draw == r.after {
		r.cancel()
	}
	return r.Recorder.Record(e)
}

// cancelInWarmup cancels the run when the first chain to get there
// records warmup transition at. Every chain polls the context before each
// transition and records synchronously, so no chain passes transition
// at+1 whatever the scheduling: keying on one chain's progress instead
// would let another chain finish its whole run first on a loaded machine.
type cancelInWarmup struct {
	*stancsv.Recorder
	at     int
	cancel context.CancelFunc
}

func (r *cancelInWarmup) Record(e *exactmh.Event) error {
	if e.Warmup && e.Iteration == r.at {
		r.cancel()
	}
	return r.Recorder.Record(e)
}

// TestRecorderHeaderAtInit checks that a run cancelled before its first
// kept draw leaves files that parse — configuration comments and header
// (lp__, the diagnostics, the parameters), no draws — and that the first
// draw of the resumed run replaces that provisional header: the files end
// as those of an uninterrupted run, with one header each.
func TestRecorderHeaderAtInit(t *testing.T) {
	g := boxed(t, 200, 1)
	dir := t.TempDir()
	opt := &stancsv.Options{SigFigs: 17}
	set := exactmh.Settings{Chains: 2, Draws: 50, Warmup: 100, Seed: 9, Init: g.Mean,
		Recorder: stancsv.NewFiles(filepath.Join(dir, "whole"), opt)}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.HMC{}, &set); err != nil {
		t.Fatal(err)
	}
	want := readChains(t, filepath.Join(dir, "whole"), 2)

	ctx, cancel := context.WithCancel(context.Background())
	set.Recorder = &cancelInWarmup{Recorder: stancsv.NewFiles(filepath.Join(dir, "cut"), opt), at: 10, cancel: cancel}
	res, err := exactmh.Sample(ctx, g.Posterior, exactmh.HMC{}, &set)
	if res == nil || res.Status != exactmh.Canceled {
		t.Fatalf("cancelled run: %v, %v", res, err)
	}
	cut := readChains(t, filepath.Join(dir, "cut"), 2)
	for c, f := range cut {
		if len(f.Draws) != 0 || len(f.Columns) != len(want[c].Columns) || f.Columns[0] != "lp__" {
			t.Fatalf("chain %d cancelled in warmup: %d draws, columns %q, want none and %q", c, len(f.Draws), f.Columns, want[c].Columns)
		}
		if v, _ := f.ConfigValue("num_samples"); v != "50" {
			t.Errorf("chain %d cancelled in warmup: num_samples = %q, want 50", c, v)
		}
	}
	if _, err := exactmh.Resume(context.Background(), res, 0); err != nil {
		t.Fatal(err)
	}
	got := readChains(t, filepath.Join(dir, "cut"), 2)
	for c := range 2 {
		if !slices.Equal(got[c].Columns, want[c].Columns) || len(got[c].Draws) != len(want[c].Draws) {
			t.Fatalf("chain %d resumed: columns %q and %d draws, want %q and %d", c, got[c].Columns, len(got[c].Draws), want[c].Columns, len(want[c].Draws))
		}
		for k := range want[c].Draws {
			if !slices.Equal(got[c].Draws[k], want[c].Draws[k]) {
				t.Fatalf("chain %d resumed: draw %d differs from the uninterrupted run's", c, k)
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("cut_%d.csv", c+1)))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(raw), "# exactmh_version"); n != 1 {
			t.Errorf("chain %d resumed: %d headers in the file, want 1", c, n)
		}
	}
}

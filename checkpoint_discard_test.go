// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/exactmh/exactmh"
)

// drawStore is a Recorder that keeps the draws it is given by chain and
// draw index (Event.Draw), as a program's own files would with
// Settings.DiscardDraws.
type drawStore struct {
	mu    sync.Mutex
	draws [][][]float64 // [chain][draw]
	cut   int64         // cancel after this many events (0: never)
	seen  int64
	stop  context.CancelFunc
}

func (s *drawStore) Init(run exactmh.RunInfo) error {
	if s.draws == nil {
		s.draws = make([][][]float64, run.Chains)
	}
	return nil
}

func (s *drawStore) Record(e *exactmh.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen++; s.seen == s.cut {
		s.stop()
	}
	if e.Draw >= 0 {
		d := &s.draws[e.Chain]
		for len(*d) <= e.Draw {
			*d = append(*d, nil)
		}
		(*d)[e.Draw] = slices.Clone(e.Theta)
	}
	return nil
}

// TestCheckpointDiscardDraws: a run that keeps no draws
// (Settings.DiscardDraws) is checkpointed with the count of draws each
// chain streamed, cut in warmup and in sampling; loaded (as in a new
// process) with a recorder holding the draws streamed before the cut,
// and resumed, its recorder ends with the draws of an uninterrupted run,
// bit for bit, at the same indices. Mutants of the checkpoint — a chain's
// random stream not its own, the step-scale adaptation or the scale
// changed, the streamed count wrong — must each change the draws or be
// refused.
func TestCheckpointDiscardDraws(t *testing.T) {
	g := boxed(t, 150, 1)
	set := exactmh.Settings{Chains: 2, Workers: 1, Warmup: 40, Draws: 30, Thin: 2, Seed: 7, Init: g.Mean, DiscardDraws: true}
	var want drawStore
	set.Recorder = &want
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &set); err != nil {
		t.Fatal(err)
	}
	mutants := map[string]func(*exactmh.CheckpointFile){
		"": func(*exactmh.CheckpointFile) {},
		"random stream": func(cp *exactmh.CheckpointFile) {
			cp.Chains[0].RNG = cp.Chains[1].RNG
		},
		"adaptation": func(cp *exactmh.CheckpointFile) {
			cp.Chains[0].Adapt.Hbar += 0.5
			cp.Chains[0].Scale *= 1.5
		},
		"streamed count": func(cp *exactmh.CheckpointFile) {
			cp.Chains[0].Result.Streamed++
		},
	}
	for _, cut := range []struct {
		name string
		at   int64
	}{{"warmup", 25}, {"sampling", 40 + 2*11 + 1}} {
		ctx, cancel := context.WithCancel(context.Background())
		first := drawStore{cut: cut.at, stop: cancel}
		set.Recorder = &first
		res, _ := exactmh.Sample(ctx, g.Posterior, exactmh.MH{}, &set)
		cancel()
		if res == nil || res.Status != exactmh.Canceled {
			t.Fatalf("cut in %s: not cancelled: %v", cut.name, res)
		}
		var buf bytes.Buffer
		if err := res.Checkpoint(&buf); err != nil {
			t.Fatalf("cut in %s: %v", cut.name, err)
		}
		if cut.name == "sampling" && res.Chains[0].Streamed == 0 {
			t.Fatalf("cut in sampling streamed no draw")
		}
		for name, edit := range mutants {
			b := exactmh.EditCheckpoint(buf.Bytes(), edit)
			again := drawStore{draws: make([][][]float64, 2)}
			for c := range first.draws { // what the first process's files hold
				again.draws[c] = slices.Clone(first.draws[c])
			}
			loaded, err := exactmh.LoadCheckpoint(bytes.NewReader(b), g.Posterior, exactmh.MH{}, &again)
			if err == nil {
				_, err = exactmh.Resume(context.Background(), loaded, 0)
			}
			same := err == nil && slices.EqualFunc(want.draws, again.draws, func(a, b [][]float64) bool {
				return slices.EqualFunc(a, b, slices.Equal[[]float64])
			})
			switch {
			case name == "" && !same:
				t.Errorf("cut in %s, resumed from a checkpoint: the draws differ from the uninterrupted run's (error %v)", cut.name, err)
			case name != "" && same:
				t.Errorf("cut in %s, mutant %q: not caught (the same draws)", cut.name, name)
			case name != "":
				t.Logf("cut in %s, mutant %q caught (error %v)", cut.name, name, err)
			}
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
)

// countRec counts what a Recorder is told; with resume it is a
// ResumeRecorder, with fail its Finish (and, at failRecord, its Record)
// returns an error.
type countRec struct {
	inits, resumes, finishes int
	events                   atomic.Int64
	failRecord               int64
	fail                     error
}

func (r *countRec) Init(exactmh.RunInfo) error { r.inits++; return nil }
func (r *countRec) Record(*exactmh.Event) error {
	if n := r.events.Add(1); r.failRecord > 0 && n >= r.failRecord {
		return r.fail
	}
	return nil
}
func (r *countRec) Finish(*exactmh.Result) error { r.finishes++; return r.fail }

type resumeRec struct{ countRec }

func (r *resumeRec) InitResume(exactmh.RunInfo, *exactmh.Result) error { r.resumes++; return nil }

// MultiRecorder tells each recorder what the driver would tell it alone:
// Init and every event on Sample; on a Resume in the same process
// InitResume to a ResumeRecorder and nothing to another; after
// LoadCheckpoint, InitResume or Init once; Finish to each at every run's
// end.
func TestMultiRecorder(t *testing.T) {
	p := logisticPosterior()
	plain, resumable := &countRec{}, &resumeRec{}
	set := &exactmh.Settings{Chains: 2, Warmup: 10, Draws: 10, Seed: 1,
		Recorder: exactmh.MultiRecorder(plain, nil, resumable)}
	res, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 2 * 20
	for _, r := range []*countRec{plain, &resumable.countRec} {
		if r.inits != 1 || r.events.Load() != steps || r.finishes != 1 {
			t.Errorf("after Sample: %d inits, %d events, %d finishes; want 1, %d, 1", r.inits, r.events.Load(), r.finishes, steps)
		}
	}
	if res, err = exactmh.Resume(context.Background(), res, 5); err != nil {
		t.Fatal(err)
	}
	if plain.inits != 1 || resumable.inits != 1 || resumable.resumes != 1 || plain.events.Load() != steps+10 || plain.finishes != 2 {
		t.Errorf("after Resume: plain %d inits, %d events, %d finishes; resumable %d inits, %d resumes; want 1, %d, 2; 1, 1",
			plain.inits, plain.events.Load(), plain.finishes, resumable.inits, resumable.resumes, steps+10)
	}

	var file bytes.Buffer
	if err := res.Checkpoint(&file); err != nil {
		t.Fatal(err)
	}
	plain2, resumable2 := &countRec{}, &resumeRec{}
	loaded, err := exactmh.LoadCheckpoint(&file, p, exactmh.MH{}, exactmh.MultiRecorder(plain2, resumable2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.Resume(context.Background(), loaded, 5); err != nil {
		t.Fatal(err)
	}
	if plain2.inits != 1 || resumable2.inits != 0 || resumable2.resumes != 1 || plain2.events.Load() != 10 {
		t.Errorf("after LoadCheckpoint and Resume: plain %d inits, %d events; resumable %d inits, %d resumes; want 1, 10; 0, 1",
			plain2.inits, plain2.events.Load(), resumable2.inits, resumable2.resumes)
	}
}

// A Record error stops the event there (the later recorders do not see
// it) and fails the run; every RunFinisher is still told the run ended,
// and their errors are joined.
func TestMultiRecorderErrors(t *testing.T) {
	errA, errB := errors.New("disk A full"), errors.New("disk B full")
	first := &countRec{failRecord: 3, fail: errA}
	second := &countRec{fail: errB}
	set := &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Seed: 1, Recorder: exactmh.MultiRecorder(first, second)}
	_, err := exactmh.Sample(context.Background(), logisticPosterior(), exactmh.MH{}, set)
	if !errors.Is(err, errA) || !errors.Is(err, errB) {
		t.Errorf("error %v, want both recorders' errors", err)
	}
	if second.events.Load() != 2 || first.finishes != 1 || second.finishes != 1 {
		t.Errorf("second recorder saw %d events, finishes %d and %d; want 2, 1, 1", second.events.Load(), first.finishes, second.finishes)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
)

// checkpointTicker is the recorder behind --checkpoint-every: at the first
// transition (warmup or kept) of any chain at least every after the last
// checkpoint, it cancels the run's segment, which stops every chain at a
// transition's boundary (a transition under way is rolled back); the
// command then writes the checkpoint and resumes the run in the same
// process (runSegments). Cancel and Resume give the draws of an
// uninterrupted run, bit for bit, so a process killed at any moment
// resumes from its last checkpoint to the same files
// (TestCheckpointEveryKill9).
type checkpointTicker struct {
	every time.Duration

	mu     sync.Mutex
	last   time.Time
	cancel context.CancelFunc // the segment's
	fired  bool
}

// arm starts a segment: the next checkpoint is due every from now.
func (t *checkpointTicker) arm(cancel context.CancelFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last, t.cancel, t.fired = time.Now(), cancel, false
}

// due reports whether the ticker ended the last segment, and disarms it.
func (t *checkpointTicker) due() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.fired
	t.fired, t.cancel = false, nil
	return f
}

// Init does nothing: the ticker is armed by runSegments.
func (t *checkpointTicker) Init(exactmh.RunInfo) error { return nil }

// InitResume does nothing: a resumed segment is armed by runSegments.
func (t *checkpointTicker) InitResume(exactmh.RunInfo, *exactmh.Result) error { return nil }

// Record ends the segment once a checkpoint is due.
func (t *checkpointTicker) Record(*exactmh.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil && !t.fired && time.Since(t.last) >= t.every {
		t.fired = true
		t.cancel()
	}
	return nil
}

// runSegments runs start (Sample, or Resume of a loaded checkpoint) under
// ctx and, while the ticker (nil: none) ends a segment and ctx is not
// cancelled, writes the checkpoint (save) and resumes the run.
func runSegments(ctx context.Context, tick *checkpointTicker, start func(context.Context) (*exactmh.Result, error),
	save func(*exactmh.Result) error) (*exactmh.Result, error) {
	if tick == nil {
		return start(ctx)
	}
	seg, cancel := context.WithCancel(ctx)
	tick.arm(cancel)
	res, err := start(seg)
	cancel()
	for tick.due() && res != nil && res.Status == exactmh.Canceled && ctx.Err() == nil {
		if err := save(res); err != nil {
			return res, err
		}
		seg, cancel = context.WithCancel(ctx)
		tick.arm(cancel)
		res, err = exactmh.Resume(seg, res, 0)
		cancel()
	}
	return res, err
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
)

// FuzzLoadCheckpoint feeds LoadCheckpoint arbitrary files, seeded with
// valid checkpoints of kernels with every kind of saved state (completed
// and cancelled runs) and truncated and bit-flipped copies of them. It must
// never panic; a file it loads must give a Result whose draws and summary
// can be read and that Resume continues, a few transitions, without panic
// or hang.
//
//	go test -run '^$' -fuzz FuzzLoadCheckpoint -fuzztime 10s .
func FuzzLoadCheckpoint(f *testing.F) {
	p, byName, init := checkpointKernels(f)
	names := []string{"MH", "TunaMH", "FlyMC", "MHBT", "MHBT-RSGLD", "AustereMH", "TunaMH-SGLD"}
	kernels := make([]exactmh.Kernel, len(names))
	for i, name := range names {
		kernels[i] = byName[name]
		for _, cut := range []int64{0, 30, 90} {
			file := savedRun(f, p, kernels[i], init, cut)
			f.Add(uint8(i), file)
			if cut == 0 {
				f.Add(uint8(i), file[:len(file)/2])
				flipped := bytes.Clone(file)
				flipped[len(flipped)*2/3] ^= 0x10
				f.Add(uint8(i), flipped)
			}
		}
	}
	f.Fuzz(func(t *testing.T, ki uint8, file []byte) {
		k := kernels[int(ki)%len(kernels)]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rec := &stoppingProgress{exactmh.NewProgress(io.Discard, time.Hour), &cancelAt{n: 20, cancel: cancel}}
		res, err := exactmh.LoadCheckpoint(bytes.NewReader(file), p, k, rec)
		if err != nil {
			return
		}
		for c, ch := range res.Chains {
			for i := range ch.Len() {
				_ = res.Draw(c, i)
			}
		}
		_ = res.Summary().String()
		done := make(chan struct{})
		go func() {
			defer close(done)
			exactmh.Resume(ctx, res, 1)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Resume of a loaded checkpoint hangs")
		}
		if ctx.Err() == context.DeadlineExceeded {
			t.Fatal("Resume of a loaded checkpoint ran 10 s for 20 transitions")
		}
	})
}

// stoppingProgress is a Progress (a ResumeRecorder: Resume initialises it
// from the run so far) that cancels the run after a few transitions.
type stoppingProgress struct {
	*exactmh.Progress
	stop *cancelAt
}

func (s *stoppingProgress) Record(e *exactmh.Event) error {
	s.stop.Record(e)
	return s.Progress.Record(e)
}

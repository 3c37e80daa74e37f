// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"io"
	"math"
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
		loadAndResume(t, p, kernels[int(ki)%len(kernels)], file)
	})
}

// loadAndResume loads file; if it loads, the draws and summary must be
// readable and Resume must run 20 transitions without panic or hang.
func loadAndResume(t *testing.T, p *exactmh.Posterior, k exactmh.Kernel, file []byte) {
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

// FuzzCheckpointFields edits one field of a valid checkpoint at a time —
// settings, counts, positions, scales, adaptation, kernel states — to
// arbitrary values, which random bytes rarely reach through gob. The
// checks of FuzzLoadCheckpoint apply.
//
//	go test -run '^$' -fuzz FuzzCheckpointFields -fuzztime 10s .
func FuzzCheckpointFields(f *testing.F) {
	p, byName, init := checkpointKernels(f)
	names := []string{"MH", "TunaMH", "FlyMC", "MHBT", "MHBT-RSGLD", "AustereMH", "TunaMH-SGLD"}
	kernels := make([]exactmh.Kernel, len(names))
	var files [][]byte
	for i, name := range names {
		kernels[i] = byName[name]
		for _, cut := range []int64{0, 30, 90} {
			files = append(files, savedRun(f, p, kernels[i], init, cut))
		}
	}
	for field := range uint8(24) {
		f.Add(uint8(3*field), field, int64(-1), 0.0)
		f.Add(uint8(3*field+1), field, int64(1), math.NaN())
	}
	f.Fuzz(func(t *testing.T, which, field uint8, v int64, x float64) {
		i := int(which) % len(files)
		k := kernels[i/3]
		n := int(v)
		file := exactmh.EditCheckpoint(files[i], func(cp *exactmh.CheckpointFile) {
			cc := &cp.Chains[int(uint64(v)%uint64(len(cp.Chains)))]
			r := &cc.Result
			switch field % 24 {
			case 0:
				cp.Settings.Workers = n
			case 1:
				cp.Settings.Chains = n
			case 2:
				cp.Settings.Warmup = n
			case 3:
				cp.Settings.Draws = n
			case 4:
				cp.Settings.Thin = n
			case 5:
				cp.Settings.TargetAccept = x
			case 6:
				cp.Settings.Duration = time.Duration(v)
			case 7:
				cp.Status = exactmh.Status(n)
			case 8:
				cc.Next = n
			case 9:
				cc.Next += n % 8
			case 10:
				r.Draws = r.Draws[:min(len(r.Draws), max(n, 0))]
			case 11:
				r.Infos = r.Infos[:min(len(r.Infos), max(n, 0))]
			case 12:
				cc.Theta[n&1] = x
			case 13:
				cc.Scale = x
			case 14:
				r.Scale = x
			case 15:
				cc.Adapt.LogAvg = x
			case 16:
				cc.Adapt.T = n
			case 17:
				r.Chain = n
			case 18:
				r.Warmup.Steps += n % 4
			case 19, 20, 21:
				if len(cc.State) > 0 { // a byte of the kernel's state
					cc.State[int(uint64(v)%uint64(len(cc.State)))] ^= byte(field)
				}
			case 22:
				cc.WarmupAware = !cc.WarmupAware
			case 23:
				cp.Settings.NoAdapt = !cp.Settings.NoAdapt
			}
		})
		loadAndResume(t, p, k, file)
	})
}

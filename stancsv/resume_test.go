// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// cancelAt cancels the run at its n-th recorded transition.
type cancelAt struct {
	n      int64
	seen   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAt) Init(exactmh.RunInfo) error { return nil }
func (c *cancelAt) Record(*exactmh.Event) error {
	if c.seen.Add(1) == c.n {
		c.cancel()
	}
	return nil
}

// body returns a file's lines from the header on, without the timing
// trailer (wall times differ between runs).
func body(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if i := strings.Index(s, "# \n#  Elapsed Time:"); i >= 0 {
		s = s[:i]
	}
	return s
}

// The streaming recorder keeps working after a restart: a run cancelled,
// checkpointed, "killed" (its files cut mid-row) and restored by
// LoadCheckpoint with a new Recorder on the same files, then resumed,
// leaves files identical to those of one uninterrupted run (timing aside).
// So does extending a finished run in the same process.
func TestRecorderAcrossCheckpoint(t *testing.T) {
	g := boxed(t, 200, 1)
	for _, k := range []exactmh.Kernel{exactmh.MH{}, exactmh.TunaMH{}} {
		t.Run(k.Name(), func(t *testing.T) {
			dir := t.TempDir()
			opt := &stancsv.Options{SigFigs: 17}
			set := exactmh.Settings{Chains: 2, Workers: 1, Warmup: 50, Draws: 60, Thin: 2, Seed: 4, Init: g.Mean}
			whole := set
			whole.Recorder = stancsv.NewFiles(filepath.Join(dir, "whole"), opt)
			if _, err := exactmh.Sample(context.Background(), g.Posterior, k, &whole); err != nil {
				t.Fatal(err)
			}

			// Cancelled mid-sampling in chain 0 (chain 1 never starts).
			ctx, cancel := context.WithCancel(context.Background())
			part := set
			part.Recorder = exactmh.MultiRecorder(stancsv.NewFiles(filepath.Join(dir, "part"), opt), &cancelAt{n: 101, cancel: cancel})
			res, err := exactmh.Sample(ctx, g.Posterior, k, &part)
			cancel()
			if res.Status != exactmh.Canceled || res.Chains[0].Len() != 25 {
				t.Fatalf("status %v, %d draws, err %v", res.Status, res.Chains[0].Len(), err)
			}
			var file bytes.Buffer
			if err := res.Checkpoint(&file); err != nil {
				t.Fatal(err)
			}
			// The process dies: chain 1's file cut mid-row, with rows past
			// the checkpoint.
			cut := filepath.Join(dir, "part_1.csv")
			raw, _ := os.ReadFile(cut)
			os.WriteFile(cut, append(raw, "0.5,0.1,1,1,3,0,0.123,-0.45"...), 0o644)

			loaded, err := exactmh.LoadCheckpoint(&file, g.Posterior, k, stancsv.NewFiles(filepath.Join(dir, "part"), opt))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exactmh.Resume(context.Background(), loaded, 0); err != nil {
				t.Fatal(err)
			}
			for c := 1; c <= 2; c++ {
				a, b := body(t, filepath.Join(dir, fmt.Sprintf("whole_%d.csv", c))), body(t, filepath.Join(dir, fmt.Sprintf("part_%d.csv", c)))
				if a != b {
					t.Fatalf("chain %d: resumed file differs from the uninterrupted one:\n%s\n---\n%s", c, b, a)
				}
				f, err := stancsv.Read(strings.NewReader(string(mustRead(t, filepath.Join(dir, fmt.Sprintf("part_%d.csv", c))))))
				if err != nil || len(f.Draws) != 60 {
					t.Fatalf("chain %d: %v, %d draws", c, err, len(f.Draws))
				}
			}

			// Extending the finished run in this process: its files were
			// closed by Finish; Resume reopens them.
			longer := set
			longer.Draws = 80
			longer.Recorder = stancsv.NewFiles(filepath.Join(dir, "longer"), opt)
			if _, err := exactmh.Sample(context.Background(), g.Posterior, k, &longer); err != nil {
				t.Fatal(err)
			}
			if _, err := exactmh.Resume(context.Background(), loaded, 20); err != nil {
				t.Fatal(err)
			}
			for c := 1; c <= 2; c++ {
				a, b := body(t, filepath.Join(dir, fmt.Sprintf("longer_%d.csv", c))), body(t, filepath.Join(dir, fmt.Sprintf("part_%d.csv", c)))
				if a != b {
					t.Fatalf("chain %d: extended file differs from the longer run's:\n%s\n---\n%s", c, b, a)
				}
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// disk is an in-memory file that fails every write while full is set, as
// a full disk does.
type disk struct {
	buf  bytes.Buffer
	full *atomic.Bool
}

func (d *disk) Write(p []byte) (int, error) {
	if d.full.Load() {
		return 0, errors.New("no space left on device")
	}
	return d.buf.Write(p)
}

// A full disk fails the run (Status Failed, a *RecorderError) — at the
// first flush of a draw, or, with a large FlushEvery, only at Finish, which
// then must not leave the run Completed — but the run stays resumable: once
// there is room, Resume(ctx, res, 0) rewrites the files whole.
func TestRecorderDiskFull(t *testing.T) {
	g := boxed(t, 100, 1)
	set := exactmh.Settings{Chains: 2, Warmup: 30, Draws: 40, Seed: 5, Init: g.Mean}
	ref := set
	var refFiles [2]*disk
	ref.Recorder = &stancsv.Recorder{Open: func(c int) (io.Writer, error) {
		refFiles[c] = &disk{full: new(atomic.Bool)}
		return refFiles[c], nil
	}}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &ref); err != nil {
		t.Fatal(err)
	}
	for _, flushEvery := range []int{1, 1 << 20} {
		full := new(atomic.Bool)
		full.Store(true)
		var files [2]*disk
		run := set
		run.Recorder = &stancsv.Recorder{FlushEvery: flushEvery, Open: func(c int) (io.Writer, error) {
			files[c] = &disk{full: full}
			return files[c], nil
		}}
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &run)
		var re *exactmh.RecorderError
		if res.Status != exactmh.Failed || !errors.As(err, &re) {
			t.Fatalf("FlushEvery %d, disk full: status %v, err %v; want Failed with a *RecorderError", flushEvery, res.Status, err)
		}
		if err := res.Checkpoint(io.Discard); err != nil {
			t.Errorf("FlushEvery %d: the run cannot be checkpointed: %v", flushEvery, err)
		}
		full.Store(false)
		if res, err = exactmh.Resume(context.Background(), res, 0); err != nil || res.Status != exactmh.Completed {
			t.Fatalf("FlushEvery %d: Resume once the disk has room: status %v, err %v", flushEvery, res.Status, err)
		}
		for c := range files {
			a, b := refFiles[c].buf.String(), files[c].buf.String()
			a, b = a[:strings.Index(a, "# \n#  Elapsed Time:")], b[:strings.Index(b, "# \n#  Elapsed Time:")]
			if a != b {
				t.Errorf("FlushEvery %d, chain %d: the rewritten file differs from an undisturbed run's", flushEvery, c)
			}
		}
	}
}

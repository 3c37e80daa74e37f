// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/multilevel"
)

// A run across processes (-checkpoint FILE with -store): the crossed model
// at N = 10⁸ takes longer than a process may live, so the run is cut into
// segments. FILE (runFile, gob) is written when the chains are about to
// start — the kernel chosen (the automatic default's Choice.Kernel: the
// Laplace-EM centre and the moves), the chains' starting points — so a
// resumed run never repeats the centre or the pilots; then after every
// -checkpoint-every transitions (or CPU time) and at the end, with every
// chain's state (Result.Checkpoint: position, kernel state, random stream,
// adaptation, next transition, the count of draws streamed) and each
// chain's spool file's mark (spoolMark: the draws written and their
// CRC-32C, the files synced first). A segment ends by cancelling the run,
// which stops every chain at a transition's boundary, and the next is
// Resume: the draws are an uninterrupted run's, bit for bit. -resume
// continues from FILE in a new process: from the checkpoint
// (LoadCheckpoint, the spool files checked against their marks and
// truncated back to them), or, killed before the first one, from the
// saved kernel and starting points. TestResumeNewProcess.

// resumeMutant, a test hook empty in every real run, breaks the resume
// on purpose (TestResumeNewProcess must catch each): "repeat choice" makes
// a run resumed before its first checkpoint choose again, "spool count"
// leaves the spool's per-chain counts at 0, "no spool check" skips the
// check of the spool files against the checkpoint's marks.
var resumeMutant string

// runFormat marks a runFile.
const runFormat = "exactmh-multilevel-run/1"

// runFile is the -checkpoint FILE.
type runFile struct {
	Format string
	Key    string         // the flags that make the run (runKey): a resume must give the same
	Kernel exactmh.Kernel // the kernel the run samples with (a registered type below)
	Choice string         // the automatic default's choice, said (Choice.String), or ""
	Init   []float64      // the run's Settings.Init and Inits (centerInits' draws)
	Inits  [][]float64
	Spool  []spoolMark // the chains' spool files when State was taken
	State  []byte      // Result.Checkpoint; nil before the first checkpoint
}

func init() {
	// The kernels a runFile can hold: GroupGibbs (the default's choice on
	// this model, -kernel gibbs) and full-batch NUTS (its fallback).
	gob.Register(multilevel.GroupGibbs{})
	gob.Register(exactmh.NUTS{})
}

// spoolNames returns the chains' spool files of the run checkpointed to
// path: in dir, named after path.
func spoolNames(dir, path string, chains int) []string {
	out := make([]string, chains)
	for c := range out {
		out[c] = filepath.Join(dir, fmt.Sprintf("%s.chain%d.f32", filepath.Base(path), c+1))
	}
	return out
}

// checkpointer is the recorder of a -checkpoint run, in front of the
// spool: it writes FILE when the chains start (Init), ends a segment every
// every transitions summed over the chains or every cpu of the process's
// CPU time (counts and clocks only decide when a checkpoint is taken,
// never a draw), and with killAfter (tests) exits the process at once
// after that many transitions, as a kill would.
type checkpointer struct {
	path      string
	key       string
	sp        *spool
	every     int
	cpu       time.Duration
	killAfter int

	mu     sync.Mutex
	head   runFile
	count  int           // transitions in this segment
	total  int           // in this process
	cpu0   time.Duration // the process's CPU time when the segment began
	cancel context.CancelFunc
	fired  bool
}

// parseEvery parses -checkpoint-every: a count of transitions, or a
// duration of CPU time.
func parseEvery(s string) (every int, cpu time.Duration, err error) {
	if s == "" {
		return 0, 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n, 0, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return 0, d, nil
	}
	return 0, 0, fmt.Errorf("-checkpoint-every %q: want a number of transitions (summed over the chains) or a duration of CPU time (30m)", s)
}

// Init saves the run's kernel and starting points (the choice is made,
// the chains are about to start) before passing the run on to the spool.
func (cp *checkpointer) Init(run exactmh.RunInfo) error {
	cp.mu.Lock()
	if cp.head.Kernel == nil { // a fresh run; a resumed one keeps its file's
		cp.head = runFile{Format: runFormat, Key: cp.key, Kernel: run.Config, Init: run.Settings.Init, Inits: run.Settings.Inits}
		if run.Choice != nil {
			cp.head.Choice = run.Choice.String()
		}
	}
	cp.head.Spool, cp.head.State = nil, nil
	err := writeRunFile(cp.path, &cp.head)
	cp.mu.Unlock()
	if err != nil {
		return fmt.Errorf("-checkpoint: %w", err)
	}
	return cp.sp.Init(run)
}

// InitResume passes a resumed run on to the spool.
func (cp *checkpointer) InitResume(run exactmh.RunInfo, res *exactmh.Result) error {
	return cp.sp.InitResume(run, res)
}

// Record passes e on to the spool, then ends the segment once a checkpoint
// is due.
func (cp *checkpointer) Record(e *exactmh.Event) error {
	if err := cp.sp.Record(e); err != nil {
		return err
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.count++
	cp.total++
	if cp.killAfter > 0 && cp.total >= cp.killAfter {
		os.Exit(3)
	}
	if cp.cancel != nil && !cp.fired && (cp.every > 0 && cp.count >= cp.every || cp.cpu > 0 && report.CPUTime()-cp.cpu0 >= cp.cpu) {
		cp.fired = true
		cp.cancel()
	}
	return nil
}

// Finish passes the end of a segment on to the spool.
func (cp *checkpointer) Finish(res *exactmh.Result) error { return cp.sp.Finish(res) }

// save writes FILE with res's state and the spool's marks, atomically.
func (cp *checkpointer) save(res *exactmh.Result) error {
	marks, err := cp.sp.marks()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := res.Checkpoint(&b); err != nil {
		return err
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.head.Spool, cp.head.State = marks, b.Bytes()
	if err := writeRunFile(cp.path, &cp.head); err != nil {
		return err
	}
	var at []int
	for _, c := range res.Chains {
		at = append(at, c.Warmup.Steps+c.Sampling.Steps)
	}
	fmt.Fprintf(os.Stderr, "multilevel: checkpoint %s written: the chains' transitions %v (%d draws spooled), the process's CPU %.1fs\n",
		cp.path, at, marks[0].Draws, report.CPUTime().Seconds())
	return nil
}

// run runs start (Sample, or Resume of a loaded run) in segments: while a
// segment ends because a checkpoint is due (and ctx is not cancelled), it
// saves the run and resumes it. The run is saved at its end too, and when
// ctx cancels it (a signal).
func (cp *checkpointer) run(ctx context.Context, start func(context.Context) (*exactmh.Result, error)) (*exactmh.Result, error) {
	for {
		seg, cancel := context.WithCancel(ctx)
		cp.mu.Lock()
		cp.cancel, cp.fired, cp.count, cp.cpu0 = cancel, false, 0, report.CPUTime()
		cp.mu.Unlock()
		res, err := start(seg)
		cancel()
		cp.mu.Lock()
		fired := cp.fired
		cp.cancel = nil
		cp.mu.Unlock()
		if res == nil {
			return nil, err
		}
		// Saved when it ended or was cut, not when it failed (a resume
		// refused by the spool's check leaves FILE as it was).
		if (err == nil || errors.Is(err, context.Canceled)) && (res.Status == exactmh.Completed || res.Status == exactmh.Canceled) {
			if serr := cp.save(res); serr != nil {
				return res, fmt.Errorf("-checkpoint: %w", serr)
			}
		}
		if !(fired && res.Status == exactmh.Canceled && ctx.Err() == nil) {
			return res, err
		}
		start = func(ctx context.Context) (*exactmh.Result, error) { return exactmh.Resume(ctx, res, 0) }
	}
}

// resume continues the run saved in FILE on post: from its checkpoint, or
// from its kernel and starting points when none was taken yet; set gives
// the run's settings (those of the original command, which key checks).
func (cp *checkpointer) resume(ctx context.Context, post *exactmh.Posterior, set exactmh.Settings) (*exactmh.Result, error) {
	head, err := readRunFile(cp.path)
	if err != nil {
		return nil, err
	}
	if head.Key != cp.key {
		return nil, fmt.Errorf("-resume: %s is of another run:\n  it has  %s\n  this is %s", cp.path, head.Key, cp.key)
	}
	cp.head = *head
	if head.State == nil {
		set.Recorder, set.Init, set.Inits = cp, head.Init, head.Inits
		k := head.Kernel
		if resumeMutant == "repeat choice" {
			k, set.Init, set.Inits = nil, nil, nil
		}
		return cp.run(ctx, func(ctx context.Context) (*exactmh.Result, error) {
			return exactmh.Sample(ctx, post, k, &set)
		})
	}
	if len(head.Spool) != len(cp.sp.names) {
		return nil, fmt.Errorf("-resume: %s marks %d spool files, the run has %d chains", cp.path, len(head.Spool), len(cp.sp.names))
	}
	for c, m := range head.Spool {
		if m.Path != cp.sp.names[c] {
			return nil, fmt.Errorf("-resume: %s: chain %d's draws are in %s, not %s (give the same -spool)", cp.path, c+1, m.Path, cp.sp.names[c])
		}
	}
	cp.sp.verify = head.Spool
	res, err := exactmh.LoadCheckpoint(bytes.NewReader(head.State), post, head.Kernel, cp)
	if err != nil {
		return nil, err
	}
	return cp.run(ctx, func(ctx context.Context) (*exactmh.Result, error) { return exactmh.Resume(ctx, res, 0) })
}

// writeRunFile writes f to path atomically (a temporary file, synced, then
// renamed over it).
func writeRunFile(path string, f *runFile) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	err = gob.NewEncoder(tmp).Encode(f)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// readRunFile reads a runFile.
func readRunFile(path string) (*runFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-resume: %w", err)
	}
	var f runFile
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return nil, fmt.Errorf("-resume: %s: not a checkpoint of this command (%w)", path, err)
	}
	if f.Format != runFormat || f.Kernel == nil {
		return nil, errors.New("-resume: " + path + ": not a checkpoint of this command")
	}
	return &f, nil
}

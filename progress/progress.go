// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package progress prints a run's progress: Printer is an
// exactmh.Recorder that writes one line per interval with each chain's
// phase, draws, acceptance and mean batch and the time left, as the
// exactmh command does on stderr. It sits beside package exactmh as
// stancsv does: a Recorder written on the driver's exported contract
// (RunInfo, Event, Result).
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exactmh/exactmh"
)

// Printer is an exactmh.Recorder that prints one line of progress to an
// io.Writer at most once per Every: for each chain its phase, draws made
// over the total, acceptance and mean batch so far; the elapsed time and
// an estimate of the time left; and, through Finish, a last line when the
// run ends. Each chain updates its own atomic counters, so recording
// costs a few nanoseconds per transition and the chains never wait for
// one another except to print. It never draws random numbers: observing a
// run does not change its draws.
//
// A Printer serves one run at a time; Init resets it. It is an
// exactmh.ResumeRecorder: exactmh.Resume, in this process or after
// exactmh.LoadCheckpoint, starts its counters from the run so far, so
// that acceptance, batch and draws continue where they were.
type Printer struct {
	W     io.Writer     // where lines go; nil discards them
	Every time.Duration // minimum time between lines; 0 means 1s

	run    exactmh.RunInfo
	chains []chainProgress
	last   atomic.Int64 // UnixNano of the last line
	mu     sync.Mutex   // serializes writes
}

type chainProgress struct {
	steps, accepted, batch atomic.Int64
	draws                  atomic.Int64
	sampleStart            atomic.Int64 // UnixNano of the first sampling transition
	start                  atomic.Int64 // UnixNano of the chain's first transition (0: queued)
	_                      [16]byte     // keep chains on separate cache lines
}

// New returns a Printer printing to w at most once per every.
func New(w io.Writer, every time.Duration) *Printer {
	return &Printer{W: w, Every: every}
}

// Init implements Recorder.
func (p *Printer) Init(run exactmh.RunInfo) error {
	p.run = run
	p.chains = make([]chainProgress, run.Chains)
	p.last.Store(run.StartTime.UnixNano())
	return nil
}

// InitResume implements ResumeRecorder: Init, then each chain's counters
// set from its totals so far.
func (p *Printer) InitResume(run exactmh.RunInfo, res *exactmh.Result) error {
	if err := p.Init(run); err != nil {
		return err
	}
	if len(res.Chains) != len(p.chains) {
		return fmt.Errorf("progress: the result has %d chains, the run %d", len(res.Chains), len(p.chains))
	}
	now := time.Now()
	for c, ch := range res.Chains {
		cp := &p.chains[c]
		cp.steps.Store(int64(ch.Warmup.Steps + ch.Sampling.Steps))
		cp.accepted.Store(int64(ch.Warmup.Accepted + ch.Sampling.Accepted))
		cp.batch.Store(ch.Warmup.Batch + ch.Sampling.Batch)
		cp.draws.Store(int64(ch.Len()))
		if ch.Sampling.Steps > 0 {
			cp.sampleStart.Store(now.Add(-ch.Sampling.Time).UnixNano())
		}
	}
	return nil
}

// Record implements Recorder.
func (p *Printer) Record(e *exactmh.Event) error {
	if e.Chain < 0 || e.Chain >= len(p.chains) {
		return fmt.Errorf("progress: event of chain %d, but Init was told of %d chains", p.run.Settings.FirstChain+e.Chain+1, len(p.chains))
	}
	cp := &p.chains[e.Chain]
	if cp.start.Load() == 0 {
		cp.start.CompareAndSwap(0, time.Now().UnixNano()-1) // the chain's first transition ends now
	}
	cp.steps.Store(int64(e.Iteration + 1))
	if e.Info.Accepted {
		cp.accepted.Add(1)
	}
	cp.batch.Add(int64(e.Info.Batch))
	if e.Draw >= 0 {
		cp.draws.Store(int64(e.Draw + 1))
	}
	if !e.Warmup && cp.sampleStart.Load() == 0 {
		cp.sampleStart.Store(time.Now().UnixNano())
	}
	every := p.Every
	if every <= 0 {
		every = time.Second
	}
	now := time.Now()
	prev := p.last.Load()
	if now.UnixNano()-prev < int64(every) || !p.last.CompareAndSwap(prev, now.UnixNano()) {
		return nil
	}
	return p.print(now, nil)
}

// Finish implements RunFinisher: the last line.
func (p *Printer) Finish(res *exactmh.Result) error {
	return p.print(time.Now(), res)
}

func (p *Printer) print(now time.Time, res *exactmh.Result) error {
	if p.W == nil {
		return nil
	}
	var b strings.Builder
	elapsed := now.Sub(p.run.StartTime)
	kernel := p.run.Kernel
	if p.run.Choice != nil && p.run.Choice.Name != "" {
		kernel = p.run.Choice.Name // the automatic default's name for it: TunaMH-CV-CN, not TunaMH
	}
	fmt.Fprintf(&b, "%s %s:", kernel, elapsed.Round(100*time.Millisecond))
	left := p.timeLeft(now)
	for c := range p.chains {
		cp := &p.chains[c]
		steps := cp.steps.Load()
		phase := "sampling"
		if steps < int64(p.run.Warmup) {
			phase = "warmup"
		}
		if c > 0 {
			b.WriteString(" |")
		}
		if steps == 0 && cp.start.Load() == 0 {
			phase = "queued"
		}
		// Chains are numbered from 1 as in the files' names and ids:
		// chain c of a run that starts at Settings.FirstChain is chain
		// FirstChain+c+1 of the whole.
		fmt.Fprintf(&b, " chain %d %s", p.run.Settings.FirstChain+c+1, phase)
		if phase == "queued" {
			continue
		}
		if phase == "warmup" {
			fmt.Fprintf(&b, " %d/%d", steps, p.run.Warmup)
		} else if p.run.Settings.Duration > 0 {
			fmt.Fprintf(&b, " %d draws", cp.draws.Load())
		} else {
			fmt.Fprintf(&b, " %d/%d", cp.draws.Load(), p.run.Draws)
		}
		if steps > 0 {
			fmt.Fprintf(&b, " acc %.3f batch %.4g", float64(cp.accepted.Load())/float64(steps), float64(cp.batch.Load())/float64(steps))
		}
	}
	if res != nil {
		fmt.Fprintf(&b, " — %s", res.Status)
	} else if left > 0 {
		fmt.Fprintf(&b, " — ~%s left", left.Round(time.Second))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintln(p.W, b.String())
	return err
}

// timeLeft estimates the time left in the run. Each started chain's pace
// (time per transition since its first) gives its own time left; the
// transitions still to make — the started chains' and those of chains
// queued for a worker — are shared among the chains running, so queued
// chains count from the start rather than appearing when they begin.
// With Settings.Duration, a chain's sampling lasts that long.
func (p *Printer) timeLeft(now time.Time) time.Duration {
	var own, work time.Duration // the longest started chain's time left; all work left
	var pace float64            // mean time per transition of the started chains
	running, started, queued := 0, 0, 0
	for c := range p.chains {
		cp := &p.chains[c]
		steps, st := cp.steps.Load(), cp.start.Load()
		if st == 0 || steps == 0 {
			queued++
			continue
		}
		started++
		rate := float64(now.UnixNano()-st) / float64(steps)
		pace += rate
		var left time.Duration
		if d := p.run.Settings.Duration; d > 0 {
			left = d
			if s := cp.sampleStart.Load(); s != 0 {
				left -= now.Sub(time.Unix(0, s))
			} else {
				left += time.Duration(rate * float64(int64(p.run.Warmup)-steps))
			}
			left = max(left, 0)
		} else {
			left = time.Duration(rate * float64(max(int64(p.run.Steps)-steps, 0)))
		}
		if left > 0 {
			running++
		}
		own = max(own, left)
		work += left
	}
	if started == 0 {
		return 0
	}
	pace /= float64(started)
	perChain := time.Duration(pace * float64(p.run.Steps))
	if d := p.run.Settings.Duration; d > 0 {
		perChain = d + time.Duration(pace*float64(p.run.Warmup))
	}
	work += time.Duration(queued) * perChain
	if queued == 0 {
		return own
	}
	return max(own, work/time.Duration(max(running, 1)))
}

// Printer satisfies the recorder contracts it claims.
var (
	_ exactmh.RunFinisher    = (*Printer)(nil)
	_ exactmh.ResumeRecorder = (*Printer)(nil)
)

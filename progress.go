package exactmh

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is a Recorder that prints one line of progress to an io.Writer
// at most once per Every: transitions done over all chains, the phase,
// acceptance so far, elapsed time and an estimate of the time left, and a
// last line when every chain has finished. Each chain updates its own
// atomic counters, so recording costs a few nanoseconds per transition and
// the chains never wait for one another except to print.
//
// A Progress serves one run at a time; Init resets it.
type Progress struct {
	W     io.Writer     // where lines go; nil discards them
	Every time.Duration // minimum time between lines; 0 means 1s

	run      RunInfo
	chains   []chainProgress
	last     atomic.Int64 // UnixNano of the last line
	finished atomic.Int64 // chains that made their last transition
	mu       sync.Mutex   // serializes writes
}

type chainProgress struct {
	steps, accepted atomic.Int64
	_               [48]byte // keep chains on separate cache lines
}

// NewProgress returns a Progress printing to w at most once per every.
func NewProgress(w io.Writer, every time.Duration) *Progress {
	return &Progress{W: w, Every: every}
}

// Init implements Recorder.
func (p *Progress) Init(run RunInfo) error {
	p.run = run
	p.chains = make([]chainProgress, run.Chains)
	p.last.Store(run.StartTime.UnixNano())
	p.finished.Store(0)
	return nil
}

// Record implements Recorder.
func (p *Progress) Record(e *Event) error {
	cp := &p.chains[e.Chain]
	cp.steps.Store(int64(e.Iteration + 1))
	if e.Info.Accepted {
		cp.accepted.Add(1)
	}
	last := e.Iteration+1 == p.run.Steps
	if last {
		if p.finished.Add(1) == int64(p.run.Chains) {
			return p.print(time.Now(), true)
		}
		return nil
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
	return p.print(now, false)
}

func (p *Progress) print(now time.Time, done bool) error {
	if p.W == nil {
		return nil
	}
	var steps, acc int64
	warm := false
	for i := range p.chains {
		s := p.chains[i].steps.Load()
		steps += s
		acc += p.chains[i].accepted.Load()
		if s < int64(p.run.Warmup) {
			warm = true
		}
	}
	total := int64(p.run.Steps) * int64(p.run.Chains)
	elapsed := now.Sub(p.run.StartTime)
	phase := "sampling"
	if warm {
		phase = "warmup"
	}
	line := fmt.Sprintf("%s: %d/%d transitions (%.0f%%, %s), accept %.3f, %s elapsed",
		p.run.Kernel, steps, total, 100*float64(steps)/float64(total), phase,
		float64(acc)/float64(max(steps, 1)), elapsed.Round(time.Millisecond))
	if done {
		line = fmt.Sprintf("%s: done, %d transitions in %s, accept %.3f",
			p.run.Kernel, steps, elapsed.Round(time.Millisecond), float64(acc)/float64(max(steps, 1)))
	} else if steps > 0 {
		left := time.Duration(float64(elapsed) * float64(total-steps) / float64(steps))
		line += fmt.Sprintf(", ~%s left", left.Round(time.Second))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := fmt.Fprintln(p.W, line)
	return err
}

package exactmh

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress is a Recorder that prints one line of progress to an io.Writer
// at most once per Every: for each chain its phase, draws made over the
// total, acceptance and mean batch so far; the elapsed time and an
// estimate of the time left; and, through Finish, a last line when the run
// ends. Each chain updates its own atomic counters, so recording costs a
// few nanoseconds per transition and the chains never wait for one another
// except to print. It never draws random numbers: observing a run does not
// change its draws.
//
// A Progress serves one run at a time; Init resets it. It is a
// ResumeRecorder: Resume, in this process or after LoadCheckpoint, starts
// its counters from the run so far, so that acceptance, batch and draws
// continue where they were.
type Progress struct {
	W     io.Writer     // where lines go; nil discards them
	Every time.Duration // minimum time between lines; 0 means 1s

	run    RunInfo
	chains []chainProgress
	last   atomic.Int64 // UnixNano of the last line
	mu     sync.Mutex   // serializes writes
}

type chainProgress struct {
	steps, accepted, batch atomic.Int64
	draws                  atomic.Int64
	sampleStart            atomic.Int64 // UnixNano of the first sampling transition
	_                      [24]byte     // keep chains on separate cache lines
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
	return nil
}

// InitResume implements ResumeRecorder: Init, then each chain's counters
// set from its totals so far.
func (p *Progress) InitResume(run RunInfo, res *Result) error {
	if err := p.Init(run); err != nil {
		return err
	}
	if len(res.Chains) != len(p.chains) {
		return fmt.Errorf("Progress: the result has %d chains, the run %d", len(res.Chains), len(p.chains))
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
func (p *Progress) Record(e *Event) error {
	if e.Chain < 0 || e.Chain >= len(p.chains) {
		return fmt.Errorf("Progress: event of chain %d, but Init was told of %d chains", e.Chain, len(p.chains))
	}
	cp := &p.chains[e.Chain]
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
func (p *Progress) Finish(res *Result) error {
	return p.print(time.Now(), res)
}

func (p *Progress) print(now time.Time, res *Result) error {
	if p.W == nil {
		return nil
	}
	var b strings.Builder
	elapsed := now.Sub(p.run.StartTime)
	fmt.Fprintf(&b, "%s %s:", p.run.Kernel, elapsed.Round(100*time.Millisecond))
	var left time.Duration
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
		fmt.Fprintf(&b, " chain %d %s", c+1, phase)
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
		left = max(left, p.timeLeft(cp, steps, now))
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

// timeLeft estimates a chain's remaining time: its sampling Duration less
// the time spent, or its steps left at its rate so far.
func (p *Progress) timeLeft(cp *chainProgress, steps int64, now time.Time) time.Duration {
	if steps == 0 {
		return 0
	}
	elapsed := now.Sub(p.run.StartTime)
	rate := float64(elapsed) / float64(steps) // per transition
	if d := p.run.Settings.Duration; d > 0 {
		left := d
		if s := cp.sampleStart.Load(); s != 0 {
			left -= now.Sub(time.Unix(0, s))
		} else {
			left += time.Duration(rate * float64(int64(p.run.Warmup)-steps))
		}
		return max(left, 0)
	}
	return time.Duration(rate * float64(int64(p.run.Steps)-steps))
}

var _ ResumeRecorder = (*Progress)(nil)

// Progress satisfies the recorder contracts it claims (contracts.go).
var (
	_ RunFinisher    = (*Progress)(nil)
	_ ResumeRecorder = (*Progress)(nil)
)

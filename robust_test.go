// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// normalData is the energy of N(θ, 1) data: U_i(θ) = ½Σ_j(θ_j − y_i)², one
// datum value y_i for every coordinate. panicAt, if positive, makes the
// panicAt-th call of Energies (over all chains) panic.
type normalData struct {
	y       []float64
	d       int
	calls   atomic.Int64
	panicAt int64
}

func (e *normalData) Len() int { return len(e.y) }
func (e *normalData) Dim() int { return e.d }
func (e *normalData) Energies(dst, theta []float64, idx []int) {
	if n := e.calls.Add(1); e.panicAt > 0 && n == e.panicAt {
		panic("normalData: the user's energy panics")
	}
	for k, i := range idx {
		var s float64
		for _, v := range theta {
			s += (v - e.y[i]) * (v - e.y[i])
		}
		dst[k] = s / 2
	}
}

func normalPosterior(n, d int) (*exactmh.Posterior, *normalData) {
	e := &normalData{y: make([]float64, n), d: d}
	for i := range e.y {
		e.y[i] = float64(i%7)/3 - 1
	}
	return &exactmh.Posterior{Energy: e}, e
}

// panickyWalk is a random walk whose Propose panics at its panicAt-th call.
type panickyWalk struct {
	calls   *atomic.Int64
	panicAt int64
}

func (w panickyWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if w.calls.Add(1) == w.panicAt {
		var m map[string]int
		m["boom"]++ // a nil map write: a runtime error
	}
	return exactmh.RandomWalk{}.Propose(rng, dst, theta, scale)
}

// hookRecorder is a Recorder whose Record is f.
type hookRecorder struct {
	f      func(e *exactmh.Event) error
	init   func() error
	finish func(*exactmh.Result) error
}

func (r *hookRecorder) Init(exactmh.RunInfo) error {
	if r.init != nil {
		return r.init()
	}
	return nil
}
func (r *hookRecorder) Record(e *exactmh.Event) error {
	if r.f != nil {
		return r.f(e)
	}
	return nil
}
func (r *hookRecorder) Finish(res *exactmh.Result) error {
	if r.finish != nil {
		return r.finish(res)
	}
	return nil
}

// panicStart is a kernel whose Start panics.
type panicStart struct{ exactmh.MH }

func (panicStart) Start(*exactmh.Target, []float64) (exactmh.Chain, error) {
	var c exactmh.Chain
	c.Position() // nil interface call
	return c, nil
}

// A panic in user code — the energy, the proposal, a recorder, Kernel.Start
// — is the run's error, a *PanicError naming the chain, the transition and
// the call, with the stack; the run is Failed, the draws made before it
// are kept, and it can be neither resumed nor checkpointed.
func TestPanicBecomesChainError(t *testing.T) {
	ctx := context.Background()
	const warmup, draws = 20, 50
	set := func(rec exactmh.Recorder) *exactmh.Settings {
		return &exactmh.Settings{Chains: 1, Warmup: warmup, Draws: draws, Recorder: rec}
	}
	var walkCalls atomic.Int64
	cases := []struct {
		name  string
		run   func() (*exactmh.Result, error)
		where string
		trans int
	}{
		{"Energy", func() (*exactmh.Result, error) {
			p, e := normalPosterior(30, 2)
			e.panicAt = warmup + 32 // transition it makes call it+2 (call 1 is Start's)
			return exactmh.Sample(ctx, p, exactmh.MH{}, set(nil))
		}, "Step", warmup + 30},
		{"Proposal", func() (*exactmh.Result, error) {
			p, _ := normalPosterior(30, 2)
			return exactmh.Sample(ctx, p, exactmh.MH{Proposal: panickyWalk{&walkCalls, warmup + 31}}, set(nil))
		}, "Step", warmup + 30},
		{"Recorder", func() (*exactmh.Result, error) {
			p, _ := normalPosterior(30, 2)
			rec := &hookRecorder{f: func(e *exactmh.Event) error {
				if e.Iteration == warmup+30 {
					panic(errors.New("recorder panics"))
				}
				return nil
			}}
			return exactmh.Sample(ctx, p, exactmh.MH{}, set(rec))
		}, "Recorder.Record", warmup + 30},
	}
	for _, c := range cases {
		res, err := c.run()
		var pe *exactmh.PanicError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: err = %v, want a *PanicError", c.name, err)
		}
		if pe.Chain != 0 || pe.Transition != c.trans || pe.Where != c.where || len(pe.Stack) == 0 {
			t.Errorf("%s: panic error chain %d, transition %d, in %q, %d bytes of stack; want chain 0, transition %d, in %q",
				c.name, pe.Chain, pe.Transition, pe.Where, len(pe.Stack), c.trans, c.where)
		}
		msg := err.Error()
		if !strings.Contains(msg, "chain 1,") || !strings.Contains(msg, "transition") || !strings.Contains(msg, "panic") {
			t.Errorf("%s: message %q does not say which chain and transition panicked", c.name, msg)
		}
		if res == nil || res.Status != exactmh.Failed {
			t.Fatalf("%s: result %v, want Status Failed", c.name, res)
		}
		if n := res.Chains[0].Len(); n < 30 || n > 31 {
			t.Errorf("%s: %d draws kept, want the 30 made before the panic (31 if it was in the recorder)", c.name, n)
		}
		if _, err := exactmh.Resume(ctx, res, 0); err == nil {
			t.Errorf("%s: a run stopped by a panic resumed", c.name)
		}
		if err := res.Checkpoint(&bytes.Buffer{}); err == nil {
			t.Errorf("%s: a run stopped by a panic was checkpointed", c.name)
		}
	}
	var rt interface{ RuntimeError() }
	if _, err := exactmh.Sample(ctx, func() *exactmh.Posterior { p, _ := normalPosterior(30, 2); return p }(),
		exactmh.MH{Proposal: panickyWalk{new(atomic.Int64), 5}}, set(nil)); !errors.As(err, &rt) {
		t.Errorf("a runtime error in the proposal: err = %v, want it to unwrap to the runtime.Error", err)
	}

	// Outside the transitions: Start, Init and Finish.
	p, _ := normalPosterior(30, 2)
	res, err := exactmh.Sample(ctx, p, panicStart{}, set(nil))
	var pe *exactmh.PanicError
	if res != nil || !errors.As(err, &pe) || pe.Where != "Kernel.Start" || pe.Chain != 0 {
		t.Errorf("Start panics: res %v, err %v; want no result and a *PanicError in Kernel.Start of chain 0", res, err)
	}
	res, err = exactmh.Sample(ctx, p, exactmh.MH{}, set(&hookRecorder{init: func() error { panic("init") }}))
	if res != nil || !errors.As(err, &pe) || pe.Where != "Recorder.Init" {
		t.Errorf("Init panics: res %v, err %v; want no result and a *PanicError in Recorder.Init", res, err)
	}
	res, err = exactmh.Sample(ctx, p, exactmh.MH{}, set(&hookRecorder{finish: func(*exactmh.Result) error { panic("finish") }}))
	if res == nil || res.Status != exactmh.Failed || !errors.As(err, &pe) || res.Chains[0].Len() != draws {
		t.Errorf("Finish panics: res %v, err %v; want a failed run with its %d draws and a *PanicError", res, err, draws)
	}
}

// A recorder that cannot write (a full disk) stops the run as Failed,
// with a *RecorderError, but the chains are intact: the run can be
// checkpointed and resumed, and ends as an uninterrupted run would. With a
// large FlushEvery the error only appears at Finish: Status is then Failed
// too, never Completed with an error.
func TestRecorderErrorKeepsRunResumable(t *testing.T) {
	ctx := context.Background()
	p, _ := normalPosterior(30, 2)
	const draws = 60
	ref, err := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 20, Draws: draws})
	if err != nil {
		t.Fatal(err)
	}

	full := errors.New("no space left on device")
	var failing atomic.Bool
	failing.Store(true)
	rec := &hookRecorder{f: func(e *exactmh.Event) error {
		if e.Draw == 25 && failing.Load() {
			return full
		}
		return nil
	}}
	res, err := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 20, Draws: draws, Recorder: rec})
	var re *exactmh.RecorderError
	if !errors.As(err, &re) || !errors.Is(err, full) || re.Op != "Record" || res.Status != exactmh.Failed {
		t.Fatalf("recorder fails: status %v, err %v; want Failed and a *RecorderError wrapping the write error", res.Status, err)
	}
	var file bytes.Buffer
	if err := res.Checkpoint(&file); err != nil {
		t.Fatalf("a run failed by its recorder cannot be checkpointed: %v", err)
	}
	loaded, err := exactmh.LoadCheckpoint(&file, p, exactmh.MH{}, nil)
	if err != nil {
		t.Fatalf("its checkpoint does not load: %v", err)
	}
	failing.Store(false) // the disk has room again
	if res, err = exactmh.Resume(ctx, res, 0); err != nil || res.Status != exactmh.Completed {
		t.Fatalf("Resume after the recorder recovered: status %v, err %v", res.Status, err)
	}
	sameDraws(t, "resumed after a recorder error", ref, res)
	if loaded, err = exactmh.Resume(ctx, loaded, 0); err != nil {
		t.Fatal(err)
	}
	sameDraws(t, "loaded and resumed after a recorder error", ref, loaded)

	// An error only at Finish (buffered output flushed at the end).
	flushErr := errors.New("flush: disk full")
	rec = &hookRecorder{finish: func(*exactmh.Result) error { return flushErr }}
	res, err = exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 20, Draws: draws, Recorder: rec})
	if !errors.Is(err, flushErr) || !errors.As(err, &re) || re.Op != "Finish" || res.Status != exactmh.Failed {
		t.Fatalf("Finish fails: status %v, err %v; want Failed with a *RecorderError of Finish", res.Status, err)
	}
	if err := res.Checkpoint(&bytes.Buffer{}); err != nil {
		t.Errorf("a run whose recorder's Finish failed cannot be checkpointed: %v", err)
	}
	rec.finish = nil
	if res, err = exactmh.Resume(ctx, res, 0); err != nil || res.Status != exactmh.Completed {
		t.Errorf("Resume(0) after Finish recovered: status %v, err %v; want Completed", res.Status, err)
	}
	sameDraws(t, "finished again", ref, res)
}

// Resume of a fixed-duration run whose duration every chain has used up
// cannot make more draws: an error, not a silent no-op. Raising
// Settings.Duration extends it.
func TestResumeFixedDuration(t *testing.T) {
	ctx := context.Background()
	p, _ := normalPosterior(30, 1)
	res, err := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 20, Duration: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	before := res.Chains[0].Len()
	lens := []int{res.Chains[0].Len(), res.Chains[1].Len()} // chains run at the machine's pace, each its own
	if _, err := exactmh.Resume(ctx, res, 100); err == nil || !strings.Contains(err.Error(), "Duration") {
		t.Fatalf("Resume(100) of a run that used up its Duration: err = %v, want an error about Duration", err)
	}
	if res.Chains[0].Len() != before {
		t.Fatalf("a refused Resume changed the draws")
	}
	// Raise Duration past the longest chain's sampling time so far (a
	// loaded machine can overshoot the first 20 ms by any amount): every
	// chain then has time left and must sample more.
	var longest time.Duration
	for _, c := range res.Chains {
		longest = max(longest, c.Sampling.Time)
	}
	res.Settings.Duration = longest + 20*time.Millisecond
	if res, err = exactmh.Resume(ctx, res, 0); err != nil {
		t.Fatal(err)
	}
	for k, c := range res.Chains {
		if c.Len() <= lens[k] || c.Sampling.Time < res.Settings.Duration {
			t.Errorf("chain %d after raising Duration: %d draws (had %d), sampled %v", c.Chain, c.Len(), lens[k], c.Sampling.Time)
		}
	}
}

// The summary of a run cancelled before some chains sampled is of the
// chains that have draws, and says which have none; a nil Result's
// summary says it is empty.
func TestSummaryLeavesOutEmptyChains(t *testing.T) {
	p, _ := normalPosterior(30, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// One worker: chain 0 runs first and is cancelled mid-sampling; chains
	// 1 and 2 never start.
	res, _ := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 3, Workers: 1, Warmup: 20, Draws: 500,
		Recorder: &cancelAt{n: 420, cancel: cancel}})
	if res.Status != exactmh.Canceled || res.Chains[0].Len() != 400 || res.Chains[1].Len() != 0 {
		t.Fatalf("status %v, draws %d, %d", res.Status, res.Chains[0].Len(), res.Chains[1].Len())
	}
	s := res.Summary()
	if s.Chains != 1 || s.Draws != 400 || len(s.NoDraws) != 2 || s.NoDraws[0] != 1 || s.NoDraws[1] != 2 {
		t.Errorf("summary of %d chains × %d draws, chains without draws %v; want 1 × 400, [1 2]", s.Chains, s.Draws, s.NoDraws)
	}
	for _, q := range s.Params {
		if q.NotAvailable || q.Mean != q.Mean || q.ESSBulk != q.ESSBulk {
			t.Errorf("%s: mean %v, ESS %v, not available %v: the chain with draws is not summarised", q.Name, q.Mean, q.ESSBulk, q.NotAvailable)
		}
	}
	text := s.String()
	if !strings.Contains(text, "chains 1, 2 have no draws") || strings.Contains(text, "constant or non-finite") {
		t.Errorf("the summary does not say which chains have no draws, or calls the draws constant:\n%s", text)
	}
	var nilRes *exactmh.Result
	if s := nilRes.Summary(); len(s.Warnings) == 0 || !strings.Contains(s.String(), "nil Result") {
		t.Errorf("nil Result's summary: %q", s.String())
	}
}

// Result.Samples and Result.Draw panic with a message naming the index
// and the range (Samples(Dim) used to read the next draw's first value).
func TestResultIndexPanics(t *testing.T) {
	p, _ := normalPosterior(30, 2)
	res, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 10, Draws: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"Samples(-1)", func() { res.Samples(-1) }, "Samples(-1): parameter index out of range [0, 2)"},
		{"Samples(2)", func() { res.Samples(2) }, "Samples(2): parameter index out of range [0, 2)"},
		{"Draw(2, 0)", func() { res.Draw(2, 0) }, "Draw(2, 0): out of range (2 chains"},
		{"Draw(0, 5)", func() { res.Draw(0, 5) }, "Draw(0, 5): out of range (2 chains; the chain has 5 draws)"},
	} {
		func() {
			defer func() {
				v := recover()
				if msg, _ := v.(string); !strings.Contains(msg, c.want) {
					t.Errorf("%s: panic %v, want a message with %q", c.name, v, c.want)
				}
			}()
			c.f()
		}()
	}
}

// Target's batch methods check their arguments once per call and return
// errors, not panics, for a bad index, a short dst or θ of the wrong
// length; the checks allocate nothing when the arguments are good.
func TestTargetChecksArguments(t *testing.T) {
	p, _ := normalPosterior(10, 2)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	th, dst := []float64{0.1, 0.2}, make([]float64, 3)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"Energies index", tgt.Energies(dst, th, []int{0, 10}), "idx[1] = 10, want a datum index in [0, N = 10)"},
		{"Energies negative index", tgt.Energies(dst, th, []int{-1}), "idx[0] = -1"},
		{"Energies short dst", tgt.Energies(dst[:1], th, []int{0, 1}), "len(dst) = 1 < len(idx) = 2"},
		{"Energies θ", tgt.Energies(dst, th[:1], []int{0}), "len(θ) = 1, want the dimension 2"},
		{"EnergyDiffs θ′", tgt.EnergyDiffs(dst, th, []float64{1, 2, 3}, []int{0}), "len(θ′) = 3"},
		{"EnergyDiffs index", tgt.EnergyDiffs(dst, th, th, []int{11}), "idx[0] = 11"},
		{"Gaps nil bound", tgt.Gaps(dst, th, []int{0}, nil), "nil FlyBound"},
		{"Gaps index", tgt.Gaps(dst, th, []int{12}, nil), "idx[0] = 12"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, c.err, c.want)
		}
	}
	if tgt.Evals() != 0 {
		t.Errorf("refused calls counted %d evaluations", tgt.Evals())
	}
	idx := []int{0, 3, 9}
	if a := testing.AllocsPerRun(100, func() {
		if err := tgt.Energies(dst, th, idx); err != nil {
			t.Fatal(err)
		}
		if err := tgt.EnergyDiffs(dst, th, th, idx); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("checked Energies and EnergyDiffs allocate %v times", a)
	}
}

// Constructors refuse what they cannot build: a dimension so large that
// allocating it would kill the process, data whose N·d overflows int, a
// Gaussian SD whose square underflows (a 0/0 gradient at the mean).
func TestConstructorsRefuseHugeAndDegenerate(t *testing.T) {
	const huge = 1 << 40
	_, e1 := model.NewCube(huge, 0, 1)
	_, e2 := model.NewIsoGaussian(huge, 1)
	_, e3 := model.NewIsoLaplace(huge, 1)
	_, e4 := model.NewBall(huge, 1, nil)
	// N·d = 4·2⁶² wraps to 0 = len(x).
	_, e5 := model.NewLogisticRegression(nil, make([]float64, 4), 1<<62)
	_, e6 := model.NewStudentTRegression(nil, make([]float64, 4), 1<<62, 3)
	_, e7 := model.NewGLM(nil, make([]float64, 4), 1<<62, model.GaussianFamily{Sigma: 1})
	_, e8 := model.NewGaussian([]float64{0}, []float64{1e-160})
	_, e9 := model.NewIsoGaussian(2, 1e-170)
	for i, c := range []struct {
		err  error
		want string
	}{
		{e1, "MaxDim"}, {e2, "MaxDim"}, {e3, "MaxDim"}, {e4, "MaxDim"},
		{e5, "MaxDim"}, {e6, "MaxDim"}, {e7, "MaxDim"},
		{e8, "1/sd² overflows"}, {e9, "1/sd² overflows"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("case %d: err = %v, want it to mention %q", i+1, c.err, c.want)
		}
	}
	g, err := model.NewGaussian([]float64{0}, []float64{1e-150})
	if err != nil {
		t.Fatalf("sd 1e-150 refused: %v", err)
	}
	grad := []float64{0}
	g.AddLogPriorGradient(grad, []float64{0})
	if grad[0] != 0 {
		t.Errorf("gradient at the mean with sd 1e-150: %v", grad[0])
	}
}

// A literal Ball{Radius: r} (nil Center: the origin) is a valid prior of
// the energy's dimension, normalised like NewBall's; a literal without a
// radius is refused with an error saying so.
func TestBallLiteral(t *testing.T) {
	p, _ := normalPosterior(20, 3)
	p.Prior = &model.Ball{Radius: 2}
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10}); err != nil {
		t.Fatalf("Ball{Radius: 2}: %v", err)
	}
	made, _ := model.NewBall(3, 2, nil)
	lit := &model.Ball{Radius: 2}
	if a, b := lit.LogPrior([]float64{0.5, 0, 0}), made.LogPrior([]float64{0.5, 0, 0}); a != b {
		t.Errorf("literal Ball log prior %v, NewBall's %v", a, b)
	}
	for _, c := range []struct {
		b    *model.Ball
		want string
	}{
		{&model.Ball{}, "Radius = 0"},
		{&model.Ball{Radius: 1, Center: []float64{0}}, "len(Center) = 1"},
	} {
		p.Prior = c.b
		if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", *c.b, err, c.want)
		}
	}
}

// Degenerate bounds and β say what is wrong in the bound's and β's terms,
// not the alias table's or χ's and λ's.
func TestBoundAndBetaErrors(t *testing.T) {
	g := boxed(t, 100, 1)
	set := &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: g.Mean}
	zero := &exactmh.DiffBound{C: make([]float64, 100)}
	// TrustBound: past the audit (which reports the violations), to the
	// table of the bound's constants.
	for _, k := range []exactmh.Kernel{exactmh.TunaMH{Bound: zero, TrustBound: true}, exactmh.TFMH{Bound: zero, TrustBound: true},
		exactmh.PoissonMH{Range: &exactmh.EnergyRange{Lo: make([]float64, 100), Width: make([]float64, 100)}, TrustBound: true}} {
		_, err := exactmh.Sample(context.Background(), g.Posterior, k, set)
		if err == nil || !strings.Contains(err.Error(), "are all 0") || strings.Contains(err.Error(), "alias") {
			t.Errorf("%s with an all-zero bound: err = %v", k.Name(), err)
		}
	}
	for _, beta := range []float64{1e-300, 1e300} {
		p := *g.Posterior
		p.Beta = beta
		for _, k := range []exactmh.Kernel{exactmh.TunaMH{}, exactmh.PoissonMH{}} {
			_, err := exactmh.Sample(context.Background(), &p, k, set)
			if err == nil || !strings.Contains(err.Error(), "β =") {
				t.Errorf("%s with β = %v: err = %v, want it to name β", k.Name(), beta, err)
			}
		}
	}
}

// A zero Aux is refused by Sample with an error, not a nil dereference.
func TestZeroAux(t *testing.T) {
	p, _ := normalPosterior(20, 1)
	_, err := exactmh.Sample(context.Background(), p, exactmh.Aux[struct{}, struct{}]{}, nil)
	if err == nil || !strings.Contains(err.Error(), "Aux.Scheme is nil") {
		t.Errorf("zero Aux: err = %v", err)
	}
}

// LoadCheckpoint on what is not a checkpoint says so, with the bytes read.
func TestLoadCheckpointGarbage(t *testing.T) {
	p, _ := normalPosterior(20, 1)
	for _, c := range []struct {
		in   string
		want string
	}{
		{"", "empty"},
		{"\x05", "ends after 1 bytes: not an exactmh checkpoint, or a truncated one"},
		{"garbage that is not gob at all, clearly", "not an exactmh checkpoint"},
	} {
		_, err := exactmh.LoadCheckpoint(strings.NewReader(c.in), p, exactmh.MH{}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

// normalGrad is normalData with its gradient, for the gradient kernels.
type normalGrad struct{ *normalData }

func (e normalGrad) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		for j, v := range theta {
			grad[j] += w[k] * (v - e.y[i])
		}
	}
}

// Sizes no run could allocate are errors before any work: more than
// MaxChains chains, a dense metric of more than MaxDim entries; so is a
// full pass over the data at a θ of the wrong length.
func TestSizeLimits(t *testing.T) {
	p, _ := normalPosterior(5, 1)
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, &exactmh.Settings{Chains: exactmh.MaxChains + 1}); err == nil || !strings.Contains(err.Error(), "MaxChains") {
		t.Errorf("Chains = MaxChains+1: err = %v", err)
	}
	_, e := normalPosterior(2, 1<<13+1)
	big := &exactmh.Posterior{Energy: normalGrad{e}}
	_, err := exactmh.Sample(context.Background(), big, exactmh.MALA{}, &exactmh.Settings{Chains: 1, Metric: exactmh.MetricDense})
	if err == nil || !strings.Contains(err.Error(), "dense") {
		t.Errorf("dense metric in dimension 2¹³+1: err = %v", err)
	}
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tgt.TotalEnergy([]float64{1, 2}); err == nil || !strings.Contains(err.Error(), "len(θ) = 2") {
		t.Errorf("TotalEnergy with len(θ) = 2 in dimension 1: err = %v", err)
	}
}

// panickyLogistic is a logistic regression whose LossDerivs panics at its
// datum 4321 (in a parallel pass of a large enough GLM: a block's panic).
type panickyLogistic struct{ *model.LogisticRegression }

// DenseRows returns no rows: panickyLogistic is no DenseGLM, so every
// datum goes through its LossDerivs (a DenseGLM's may be inlined).
func (panickyLogistic) DenseRows() exactmh.DenseRows { return exactmh.DenseRows{} }

func (e panickyLogistic) LossDerivs(i int, z float64) (float64, float64) {
	if i == 4321 {
		var s []int
		_ = s[i] // index out of range: a runtime.Error
	}
	return e.LogisticRegression.LossDerivs(i, z)
}

// TestPanicsOutsideSampleAreErrors: a panic in user code called by FindMAP,
// FindLaplace, ControlVariates, Posterior.Hessian or Choose is returned
// as an error wrapping a *PanicError (and the runtime.Error it carries),
// which names the entry point, instead of crashing the caller.
func TestPanicsOutsideSampleAreErrors(t *testing.T) {
	const n, d = 200_000, 3
	rng := rand.New(rand.NewPCG(5, 5))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range y {
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
		}
		y[i] = float64(rng.IntN(2))
	}
	lr, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoGaussian(d, 3)
	good := &exactmh.Posterior{Energy: lr, Prior: prior}
	bad := &exactmh.Posterior{Energy: panickyLogistic{lr}, Prior: prior}
	la, err := exactmh.FindLaplace(context.Background(), good, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"FindMAP": func() error {
			_, err := exactmh.FindMAP(ctx, bad, make([]float64, d), &exactmh.MAPSettings{Method: exactmh.MAPNewton})
			return err
		},
		"FindLaplace":       func() error { _, err := exactmh.FindLaplace(ctx, bad, make([]float64, d), nil); return err },
		"ControlVariates":   func() error { _, err := exactmh.ControlVariates(bad, la); return err },
		"Posterior.Hessian": func() error { _, err := bad.Hessian(la.Mean); return err },
		"Choose":            func() error { _, err := exactmh.Choose(ctx, bad, nil); return err },
	} {
		err := call()
		var pe *exactmh.PanicError
		var re runtime.Error
		if !errors.As(err, &pe) || !errors.As(err, &re) || !strings.Contains(err.Error(), "panic in") {
			t.Errorf("%s: %v, want an error wrapping a *PanicError and its runtime.Error", name, err)
		}
	}
}

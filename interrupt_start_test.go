// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/sparse"
)

// startTicks records the ticks counted when the run's recorder is
// initialised: after every chain's Start, before the first transition.
type startTicks struct {
	tk *ticker
	at int64
}

func (r *startTicks) Init(exactmh.RunInfo) error {
	r.at = r.tk.calls.Load()
	return nil
}
func (r *startTicks) Record(*exactmh.Event) error { return nil }

// TestInterruptStartAudit is issue 31 item 13 for the minibatch kernels'
// Start: the bound audit reads every datum at θ0 and at three proposals
// from it (PoissonMH's range, SMH's Taylor remainders, FlyMC's gaps,
// TunaMH's and TFMH's C·M), several passes over all N data before the
// first transition. A run cancelled halfway through them returns the
// context's error, no Result, having read at most a chunk more of them
// (one block: the audit is sequential below parallel.go's minBlockData);
// a run started afterwards on the same data gives the draws of a run
// never interrupted.
func TestInterruptStartAudit(t *testing.T) {
	const n = 40_000
	plain := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0) }
	ball := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0.05) }
	cases := []struct {
		k    exactmh.Kernel
		post func() (*ticker, *exactmh.Posterior)
	}{
		{exactmh.PoissonMH{}, ball},
		{exactmh.SMH{Order: 1, Center: []float64{1, -1, 0.5}}, plain},
		{exactmh.FlyMC{Q: 0.5}, plain},
		{exactmh.TunaMH{}, plain},
		{exactmh.TFMH{}, plain},
	}
	base := exactmh.Settings{Chains: 1, Warmup: 20, Draws: 20, Seed: 3}
	for _, c := range cases {
		name := c.k.Name()
		tk, p := c.post()
		rec := &startTicks{tk: tk}
		set := base
		set.Recorder = rec
		whole, err := exactmh.Sample(context.Background(), p, c.k, &set)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rec.at < 8 {
			t.Fatalf("%s: Start reads %d chunks, want ≥ 8 (the audit's passes)", name, rec.at)
		}

		tk, p = c.post()
		ctx, cancel := context.WithCancel(context.Background())
		tk.at, tk.cancel = rec.at/2, cancel
		set = base
		res, err := exactmh.Sample(ctx, p, c.k, &set)
		cancel()
		after := tk.calls.Load() - tk.at
		t.Logf("%s: Start reads %d chunks; cancelled at %d: %d read after: %v", name, rec.at, tk.at, after, err)
		if res != nil || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled in Start: result %v, err %v; want no result and context.Canceled", name, res != nil, err)
		}
		if after > 2 {
			t.Errorf("%s: %d chunks read after the cancellation (of %d left in Start): want at most 2", name, after, rec.at-tk.at)
		}

		_, p = c.post()
		set = base
		again, err := exactmh.Sample(context.Background(), p, c.k, &set)
		if err != nil {
			t.Fatalf("%s: after the cancelled Start: %v", name, err)
		}
		if a, b := whole.Chains[0], again.Chains[0]; !slices.Equal(a.Draws, b.Draws) {
			t.Errorf("%s: the run after the cancelled Start differs from the uninterrupted run", name)
		}
	}
}

// lossTickGLM is a logistic regression whose per-datum losses tick once
// armed: the range of the control-variate remainders, which the automatic
// default builds for its Poisson candidate, reads them.
type lossTickGLM struct {
	*model.LogisticRegression
	*stageTicker
}

func (e lossTickGLM) Loss(i int, z float64) float64 {
	e.tickArmed()
	return e.LogisticRegression.Loss(i, z)
}

// TestInterruptRange is issue 31 item 13 for the Poisson candidate of
// the automatic default: Choose builds the control-variate remainders'
// range over all N data (eight pieces a datum) before its pilots.
// Cancelled three quarters of the way through the losses read between
// the Laplace approximation and the first pilot — inside that range —
// it returns the context's error having read at most a chunk of data's
// losses more.
func TestInterruptRange(t *testing.T) {
	const n = 40_000
	x, y := simulateLogistic(n, []float64{1, -1, 0.5}, 9)
	e, err := model.NewLogisticRegression(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewBall(3, 3, nil) // a bounded support: the ranges are finite
	// Tempered so that λ + L stays below N: the candidate is built, not
	// ruled out by the estimate from a sample of the data.
	const beta = 0.01
	const stage = "MAP and Laplace approximation after"

	// The losses read from the Laplace approximation to the first pilot.
	st := &stageTicker{stage: stage}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var upTo int64 = -1
	progress := func(step string) {
		st.progress(step)
		if strings.HasPrefix(step, "pilot 1 of") && upTo < 0 {
			upTo = st.calls.Load()
			cancel()
		}
	}
	p := &exactmh.Posterior{Energy: lossTickGLM{e, st}, Prior: prior, Beta: beta}
	if _, err := exactmh.Choose(ctx, p, &exactmh.Settings{ChoiceProgress: progress}); !errors.Is(err, context.Canceled) || upTo < 0 {
		t.Fatalf("cancelled at the first pilot: %v (ticks %d)", err, upTo)
	}
	perDatum := float64(upTo) / n
	if perDatum < 4 {
		t.Fatalf("%d losses read before the first pilot (%.3g a datum): no range pass to cut", upTo, perDatum)
	}

	st = &stageTicker{stage: stage, ticker: ticker{at: upTo * 3 / 4}}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	st.cancel = cancel
	p = &exactmh.Posterior{Energy: lossTickGLM{e, st}, Prior: prior, Beta: beta}
	_, err = exactmh.Choose(ctx, p, &exactmh.Settings{ChoiceProgress: st.progress})
	after := st.calls.Load() - st.at
	chunk := int64(math.Ceil(512 * perDatum))
	t.Logf("range: %d losses before the first pilot (%.3g a datum); cancelled at %d: %d read after: %v", upTo, perDatum, st.at, after, err)
	if !errors.Is(err, context.Canceled) || after > chunk {
		t.Errorf("range: err %v, %d losses read after the cancellation (of %d left), want context.Canceled and at most a chunk's, %d", err, after, upTo-st.at, chunk)
	}
}

// hessTickGLM is a multilevel model's sparse-row GLM whose sparse Hessian
// ticks, once armed, at each of its polls (one per 512 entries read).
type hessTickGLM struct {
	*model.SparseGLM[float64]
	*stageTicker
}

func (e hessTickGLM) SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error) {
	return e.SparseGLM.SparseHessianStop(theta, func() bool {
		e.tickArmed()
		return stop != nil && stop()
	})
}

// TestInterruptSparseHessian is issue 31 item 13 for the sparse Hessians
// of a multilevel model, one pass over the data each, which the sparse
// Laplace approximation's Newton steps (FindLaplace's sparse path) and the
// automatic default's multilevel centre call: cancelled halfway through
// the second Hessian, each returns the context's error having read at
// most a chunk (one poll, 512 entries) more of it.
func TestInterruptSparseHessian(t *testing.T) {
	const n = 40_000
	mp := multilevelProblem(t, n, 10, 13).Posterior
	e := mp.Energy.(*model.SparseGLM[float64])
	var polls int64
	if _, err := e.SparseHessianStop(make([]float64, mp.Dim()), func() bool { polls++; return false }); err != nil {
		t.Fatal(err)
	}
	// One poll before the pass, then one per 512 of the rows' nnz(X)
	// entries read.
	nnz := int64(e.Rows().RowPtr[n])
	if want := 1 + nnz/512; polls != want {
		t.Fatalf("a sparse Hessian of %d data (%d entries) polls %d times, want %d", n, nnz, polls, want)
	}
	for _, c := range []struct {
		name, stage string
		run         func(ctx context.Context, p *exactmh.Posterior, st *stageTicker) error
	}{
		{"FindLaplace (sparse)", "", func(ctx context.Context, p *exactmh.Posterior, _ *stageTicker) error {
			_, err := exactmh.FindLaplace(ctx, p, make([]float64, mp.Dim()), nil)
			return err
		}},
		{"multilevel centre", "finding the multilevel centre", func(ctx context.Context, p *exactmh.Posterior, st *stageTicker) error {
			_, err := exactmh.Choose(ctx, p, &exactmh.Settings{ChoiceProgress: st.progress})
			return err
		}},
	} {
		st := &stageTicker{stage: c.stage, ticker: ticker{at: polls + polls/2}}
		st.armed.Store(c.stage == "")
		ctx, cancel := context.WithCancel(context.Background())
		st.cancel = cancel
		p := *mp
		p.Energy = hessTickGLM{e, st}
		err := c.run(ctx, &p, st)
		cancel()
		after := st.calls.Load() - st.at
		t.Logf("%s: %d polls a Hessian; cancelled at poll %d: %d after: %v", c.name, polls, st.at, after, err)
		if !errors.Is(err, context.Canceled) || after > 1 {
			t.Errorf("%s: err %v, %d polls (of 512 entries) after the cancellation, want context.Canceled and at most 1", c.name, err, after)
		}
	}
}

// TestInterruptWarmupDecision is issue 31 item 13 for the warmup
// decisions: the comparison with full-batch MH halfway through warmup
// (TunaMH, with its χ search, PoissonMH, SMH, TFMH, TunaMH-SGLD) and
// TunaMH-SGLD's check of the final step scale, tens of passes over the
// data each. Cancelled halfway through the reads of the transition a
// decision follows (the decision's, mostly), a run stops within a chunk,
// keeps the transitions before it, and resumes through a checkpoint to
// the uninterrupted run's draws, counts and parameters (checkCut): the
// transition and its decision are made again.
func TestInterruptWarmupDecision(t *testing.T) {
	if testing.Short() {
		t.Skip("five kernels, 200 warmup transitions each, run three times per cut")
	}
	const n = 8 * 512
	plain := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0) }
	ball := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0.05) }
	base := exactmh.Settings{Chains: 1, Warmup: 200, Draws: 20, Seed: 11}
	cases := []struct {
		k    exactmh.Kernel
		post func() (*ticker, *exactmh.Posterior)
		cuts []int
	}{
		{exactmh.TunaMH{}, plain, []int{100}},
		{exactmh.PoissonMH{}, ball, []int{100}},
		{exactmh.SMH{Order: 1, Center: []float64{1, -1, 0.5}}, plain, []int{100}},
		{exactmh.TFMH{}, plain, []int{100}},
		{exactmh.TunaMHSGLD{}, plain, []int{100, 199}},
	}
	for _, c := range cases {
		name := c.k.Name()
		tk, p := c.post()
		rec := &ticksAt{tk: tk}
		set := base
		set.Recorder = rec
		whole, err := exactmh.Sample(context.Background(), p, c.k, &set)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, it := range c.cuts {
			lo, hi := rec.ends[it-1], rec.ends[it]
			t.Logf("%s: transition %d and its decision read %d chunks (the one before %d)", name, it, hi-lo, lo-rec.ends[it-2])
			if hi-lo < 8 {
				t.Errorf("%s: transition %d and its decision read %d chunks, want ≥ 8", name, it, hi-lo)
				continue
			}
			checkCut(t, name, c.k, c.post, base, whole, it, lo+(hi-lo)/2, hi)

			// Resumed in this process: the chain is rebuilt from the
			// checkpoint before the cut decision.
			tk, p := c.post()
			ctx, cancel := context.WithCancel(context.Background())
			tk.at, tk.cancel = lo+(hi-lo)/2, cancel
			set := base
			part, err := exactmh.Sample(ctx, p, c.k, &set)
			cancel()
			if part == nil || part.Status != exactmh.Canceled || err == nil {
				t.Fatalf("%s: cut in transition %d: %v", name, it, err)
			}
			res, err := exactmh.Resume(context.Background(), part, 0)
			if err != nil {
				t.Fatalf("%s: resume in process: %v", name, err)
			}
			if a, b := whole.Chains[0], res.Chains[0]; !slices.Equal(a.Draws, b.Draws) || a.Scale != b.Scale {
				t.Errorf("%s: cut in transition %d, resumed in process: %d draws vs %d, or different values, scale %v vs %v", name, it, b.Len(), a.Len(), b.Scale, a.Scale)
			}
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// ticker counts the calls of a whole-data pass's chunks and cancels the
// run at its at'th, as cancelEnergy does.
type ticker struct {
	at     int64
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *ticker) tick() {
	if n := c.calls.Add(1); n == c.at && c.cancel != nil {
		c.cancel()
		// Leave context.AfterFunc's goroutine time to set the flag.
		time.Sleep(100 * time.Millisecond)
	}
}

// tickGLM is a logistic regression, with all its bounds and fast paths,
// whose chunked calls — the energies and differences of a full-batch
// step, the gradients, FlyMC's gaps — tick.
type tickGLM struct {
	*model.LogisticRegression
	*ticker
}

func (e tickGLM) Energies(dst, theta []float64, idx []int) {
	e.tick()
	e.LogisticRegression.Energies(dst, theta, idx)
}
func (e tickGLM) EnergyDiffs(dst, theta, next []float64, idx []int) {
	e.tick()
	e.LogisticRegression.EnergyDiffs(dst, theta, next, idx)
}
func (e tickGLM) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.tick()
	e.LogisticRegression.AddGradient(grad, theta, idx, w)
}
func (e tickGLM) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	e.tick()
	e.LogisticRegression.EnergiesAndGradient(dst, grad, theta, idx, w)
}
func (e tickGLM) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	b, err := e.LogisticRegression.FlyBound(at, prior)
	return tickBound{b, e.ticker}, err
}

type tickBound struct {
	exactmh.FlyBound
	*ticker
}

func (b tickBound) Gaps(dst, theta []float64, idx []int) {
	b.tick()
	b.FlyBound.Gaps(dst, theta, idx)
}

// tickPosterior is a logistic regression of n data (d = 3) under a
// Gaussian prior, or, with beta > 0, tempered on a ball (the Poisson
// kernels' bounded support).
func tickPosterior(t testing.TB, n int, beta float64) (*ticker, *exactmh.Posterior) {
	x, y := simulateLogistic(n, []float64{1, -1, 0.5}, 5)
	e, err := model.NewLogisticRegression(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	tk := &ticker{}
	p := &exactmh.Posterior{Energy: tickGLM{e, tk}}
	if beta > 0 {
		p.Prior, _ = model.NewBall(3, 3, nil)
		p.Beta = beta
	} else {
		p.Prior, _ = model.NewIsoGaussian(3, 10)
	}
	return tk, p
}

// ticksAt records the ticks counted at the end of each transition.
type ticksAt struct {
	tk   *ticker
	ends []int64
}

func (r *ticksAt) Init(exactmh.RunInfo) error { return nil }
func (r *ticksAt) Record(*exactmh.Event) error {
	r.ends = append(r.ends, r.tk.calls.Load())
	return nil
}

// checkInterruptResume runs k uninterrupted, then cancels it from inside
// each transition of cuts — 3 chunks into it, a transition reading more —
// checks that the transition was abandoned (it read less than half of its
// chunks after the cancellation), checkpoints the run, resumes it and
// compares the draws, the counts and the chain's parameters with the
// uninterrupted run's.
func checkInterruptResume(t *testing.T, name string, k exactmh.Kernel, post func() (*ticker, *exactmh.Posterior), base exactmh.Settings, cuts []int) {
	t.Helper()
	tk, p := post()
	rec := &ticksAt{tk: tk}
	set := base
	set.Recorder = rec
	whole, err := exactmh.Sample(context.Background(), p, k, &set)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, it := range cuts {
		if it < 1 || it >= len(rec.ends) {
			t.Fatalf("%s: no transition %d of %d", name, it, len(rec.ends))
		}
		for it+1 < len(rec.ends) && rec.ends[it]-rec.ends[it-1] < 8 {
			it++ // a proposal outside the support reads nothing
		}
		lo, hi := rec.ends[it-1], rec.ends[it]
		if hi-lo < 8 {
			t.Fatalf("%s: transition %d reads %d chunks, want ≥ 8 (a full-batch step)", name, it, hi-lo)
		}
		tk, p := post()
		ctx, cancel := context.WithCancel(context.Background())
		tk.at, tk.cancel = lo+3, cancel
		set := base
		part, err := exactmh.Sample(ctx, p, k, &set)
		cancel()
		if part == nil || part.Status != exactmh.Canceled || err == nil {
			t.Fatalf("%s: cut in transition %d: %v", name, it, err)
		}
		after := tk.calls.Load() - tk.at
		t.Logf("%s: cancelled 3 chunks into transition %d (of %d chunks): %d read after", name, it, hi-lo, after)
		if after >= (hi-lo)/2 {
			t.Errorf("%s: %d chunks read after the cancellation in transition %d (of %d): not abandoned", name, after, it, hi-lo)
		}
		if got := part.Chains[0].Len() + part.Warmup().Steps; got != it {
			t.Errorf("%s: cut in transition %d kept %d transitions", name, it, got)
		}
		var buf bytes.Buffer
		if err := part.Checkpoint(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, p2 := post()
		loaded, err := exactmh.LoadCheckpoint(&buf, p2, k, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := exactmh.Resume(context.Background(), loaded, 0)
		if err != nil {
			t.Fatalf("%s: resume: %v", name, err)
		}
		sameDraws(t, name, whole, res)
		if a, b := whole.Warmup(), res.Warmup(); a.Evals != b.Evals || a.Accepted != b.Accepted || a.Batch != b.Batch {
			t.Errorf("%s: cut in transition %d: warmup totals %+v vs %+v", name, it, b, a)
		}
		if a, b := whole.Sampling(), res.Sampling(); a.Evals != b.Evals || a.GradEvals != b.GradEvals || a.Batch != b.Batch {
			t.Errorf("%s: cut in transition %d: sampling totals %+v vs %+v", name, it, b, a)
		}
		if a, b := whole.Chains[0].Params, res.Chains[0].Params; !maps.Equal(a, b) {
			t.Errorf("%s: cut in transition %d: parameters %v vs %v", name, it, b, a)
		}
	}
}

// TestInterruptFullBatchFallback is issue 31 item 13 for the minibatch
// kernels: a run cancelled inside a transition that reads all N data —
// a full-batch MH step that TunaMH, PoissonMH, Poisson-Barker,
// Poisson-MALA, TunaMH-SGLD, TFMH and SMH fall back to (a MaxBatch or
// MaxRate of 1 makes every step one), or FlyMC's z-step and θ-step over
// its bright data (untuned bounds: most of them) — stops within a chunk
// of data, and resumes through a checkpoint to the uninterrupted run's
// draws, counts and chain parameters. TunaMH's cuts include the
// transition at whose start warmup re-chooses χ (its 50th), which
// abandonStep takes back.
func TestInterruptFullBatchFallback(t *testing.T) {
	const n = 8 * 512
	plain := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0) }
	ball := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0.05) }
	base := exactmh.Settings{Chains: 1, Warmup: 120, Draws: 40, Seed: 7}
	cases := []struct {
		k    exactmh.Kernel
		post func() (*ticker, *exactmh.Posterior)
	}{
		{exactmh.TunaMH{MaxBatch: 1}, plain},
		{exactmh.TunaMHSGLD{Chi: 1e-4, MaxBatch: 1}, plain},
		{exactmh.TFMH{MaxRate: 1}, plain},
		{exactmh.SMH{Order: 1, Center: []float64{1, -1, 0.5}, MaxRate: 1}, plain},
		{exactmh.FlyMC{Q: 0.5}, plain},
		{exactmh.PoissonMH{MaxBatch: 1}, ball},
		{exactmh.PoissonBarker{MaxBatch: 1}, ball},
		{exactmh.PoissonMALA{MaxBatch: 1}, ball},
	}
	for _, c := range cases {
		checkInterruptResume(t, c.k.Name(), c.k, c.post, base, []int{49, 100, 140})
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// cancelEnergy is a logistic regression that cancels the run at its
// calls'th chunk of data (counted over Energies, AddGradient and
// EnergiesAndGradient), inside a transition, and counts the chunks read
// after that.
type cancelEnergy struct {
	e *model.LogisticRegression
	ticker
}

func (c *cancelEnergy) Len() int { return c.e.Len() }
func (c *cancelEnergy) Dim() int { return c.e.Dim() }
func (c *cancelEnergy) Energies(dst, theta []float64, idx []int) {
	c.tick()
	c.e.Energies(dst, theta, idx)
}
func (c *cancelEnergy) AddGradient(grad, theta []float64, idx []int, w []float64) {
	c.tick()
	c.e.AddGradient(grad, theta, idx, w)
}
func (c *cancelEnergy) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	c.tick()
	c.e.EnergiesAndGradient(dst, grad, theta, idx, w)
}

func interruptPosterior(t testing.TB, n int) (*cancelEnergy, *exactmh.Posterior) {
	x, y := simulateLogistic(n, []float64{1, -1, 0.5}, 5)
	e, err := model.NewLogisticRegression(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoGaussian(3, 10)
	ce := &cancelEnergy{e: e}
	return ce, &exactmh.Posterior{Energy: ce, Prior: prior}
}

// TestInterruptMidTransition is issue 31 item 13: a run cancelled in the
// middle of a transition (a whole-data pass of MH, MALA, HMC's leapfrog
// steps, a NUTS tree) stops within a chunk of data, leaves the chain and
// its random stream as they were before that transition, and resumes —
// through a checkpoint — to the draws of an uninterrupted run, bit for
// bit. The cancellation comes from inside the energy at a chunk that is
// not a transition's first, so the transition in progress is abandoned;
// the chunks read after it show that it was (a finished transition would
// read hundreds more).
func TestInterruptMidTransition(t *testing.T) {
	const n = 4 * 512 // 4 chunks a pass
	kernels := map[string]struct {
		k         exactmh.Kernel
		perStep   int64 // chunks a transition reads, at least
		mustAbort bool
	}{
		"MH":   {exactmh.MH{}, 4, false},
		"MALA": {exactmh.MALA{}, 4, false},
		"HMC":  {exactmh.HMC{Steps: 40}, 160, true},
		"NUTS": {exactmh.NUTS{}, 4, false},
	}
	for name, kc := range kernels {
		ce, p := interruptPosterior(t, n)
		base := exactmh.Settings{Chains: 1, Warmup: 30, Draws: 30, Seed: 3}
		whole, err := exactmh.Sample(context.Background(), p, kc.k, &base)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total := ce.calls.Load()
		// mid-warmup and mid-sampling, 3 chunks into a pass
		for _, cut := range []int64{total*3/10 + 3, total*3/4 + 3} {
			ce, p := interruptPosterior(t, n)
			ctx, cancel := context.WithCancel(context.Background())
			ce.at, ce.cancel = cut, cancel
			set := base
			part, err := exactmh.Sample(ctx, p, kc.k, &set)
			cancel()
			if part == nil || part.Status != exactmh.Canceled || err == nil {
				t.Fatalf("%s: cut at chunk %d: %v", name, cut, err)
			}
			after := ce.calls.Load() - cut
			t.Logf("%s: cancelled at chunk %d of %d: %d chunks read after, %d transitions done", name, cut, total, after, part.Chains[0].Len())
			if kc.mustAbort && after >= kc.perStep/2 {
				t.Errorf("%s: %d chunks read after the cancellation: the transition (%d chunks) was not abandoned", name, after, kc.perStep)
			}
			var buf bytes.Buffer
			if err := part.Checkpoint(&buf); err != nil {
				t.Fatal(err)
			}
			ce2, p2 := interruptPosterior(t, n)
			_ = ce2
			loaded, err := exactmh.LoadCheckpoint(&buf, p2, kc.k, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			res, err := exactmh.Resume(context.Background(), loaded, 0)
			if err != nil {
				t.Fatalf("%s: resume: %v", name, err)
			}
			sameDraws(t, name, whole, res)
			if a, b := whole.Sampling().Evals, res.Sampling().Evals; a != b {
				t.Errorf("%s: %d sampling evaluations vs %d", name, b, a)
			}
		}
	}
}

// TestInterruptLongTransition: an HMC transition that would take
// minutes (a million leapfrog steps over 50,000 data) stops within a
// second of the cancellation, with no draw and the chain where it started.
func TestInterruptLongTransition(t *testing.T) {
	_, p := interruptPosterior(t, 50_000)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	time.AfterFunc(300*time.Millisecond, func() {
		cancelled = time.Now()
		cancel()
	})
	res, err := exactmh.Sample(ctx, p, exactmh.HMC{Steps: 1_000_000}, &exactmh.Settings{Chains: 1, Warmup: 0, Draws: 5, NoAdapt: true, Seed: 1})
	took := time.Since(cancelled)
	if res == nil || res.Status != exactmh.Canceled || err == nil {
		t.Fatalf("status %v, err %v", res.Status, err)
	}
	t.Logf("stopped %v after the cancellation", took)
	if took > time.Second {
		t.Errorf("stopped %v after the cancellation, more than 1 s", took)
	}
	if res.Chains[0].Len() != 0 {
		t.Errorf("%d draws from a transition that could not finish", res.Chains[0].Len())
	}
}

// slowEnergy is U_i(θ) = (θ − 1)²/2 for N data, each chunk of evaluations
// taking a millisecond: a pass over its data takes N/512 ms.
type slowEnergy struct{ n int }

func (s slowEnergy) Len() int { return s.n }
func (s slowEnergy) Dim() int { return 1 }
func (s slowEnergy) Energies(dst, theta []float64, idx []int) {
	time.Sleep(time.Millisecond)
	for k := range idx {
		dst[k] = (theta[0] - 1) * (theta[0] - 1) / 2
	}
}
func (s slowEnergy) AddGradient(grad, theta []float64, idx []int, w []float64) {
	time.Sleep(time.Millisecond)
	for k := range idx {
		wk := 1.0
		if w != nil {
			wk = w[k]
		}
		grad[0] += wk * (theta[0] - 1)
	}
}

// TestFindMAPInterrupted: FindMAP on data whose every pass takes seconds
// stops within a second of the cancellation, inside the pass, with the
// context's error.
func TestFindMAPInterrupted(t *testing.T) {
	p := &exactmh.Posterior{Energy: slowEnergy{n: 512 * 5000}, Prior: model.Flat{}}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled atomic.Int64
	time.AfterFunc(300*time.Millisecond, func() {
		cancelled.Store(time.Now().UnixNano())
		cancel()
	})
	_, err := exactmh.FindMAP(ctx, p, []float64{0}, nil)
	took := time.Duration(time.Now().UnixNano() - cancelled.Load())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the context's", err)
	}
	t.Logf("stopped %v after the cancellation: %v", took, err)
	if took > time.Second {
		t.Errorf("stopped %v after the cancellation (a pass takes 5 s)", took)
	}
}

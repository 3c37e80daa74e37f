package exactmh_test

import (
	"bytes"
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
)

// cancelAt is a Recorder that cancels the run once the given number of
// transitions (over all chains) has been recorded.
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

// resumeKernels are kernels with state beyond θ: TunaMH's χ adapts in
// warmup, FlyMC carries brightness, MHBT its batch and cached mean.
func resumeKernels(t *testing.T) (*exactmh.Posterior, map[string]exactmh.Kernel, []float64) {
	g := boxed(t, 300, 1)
	b, err := exactmh.NewRangeFlyBound(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	return g.Posterior, map[string]exactmh.Kernel{
		"MH":     exactmh.MH{},
		"TunaMH": exactmh.TunaMH{},
		"FlyMC":  exactmh.FlyMC{Bound: b, Q: 0.1},
		"MHBT":   inexact.MHBT{BatchSize: 50},
	}, g.Mean
}

func sameDraws(t *testing.T, name string, a, b *exactmh.Result) {
	t.Helper()
	for c := range a.Chains {
		if a.Chains[c].Len() != b.Chains[c].Len() || !slices.Equal(a.Chains[c].Draws, b.Chains[c].Draws) {
			t.Fatalf("%s chain %d: %d draws vs %d, or different values", name, c, a.Chains[c].Len(), b.Chains[c].Len())
		}
		if a.Chains[c].Scale != b.Chains[c].Scale {
			t.Fatalf("%s chain %d: final scale %v vs %v", name, c, a.Chains[c].Scale, b.Chains[c].Scale)
		}
	}
}

// A run cancelled mid-warmup or mid-sampling and resumed gives the draws
// of an uninterrupted run, bit for bit; so does extending a finished run.
func TestResumeBitIdentical(t *testing.T) {
	p, kernels, init := resumeKernels(t)
	for name, k := range kernels {
		base := exactmh.Settings{Chains: 3, Warmup: 300, Draws: 400, Thin: 2, Seed: 11, Init: init}
		whole, err := exactmh.Sample(context.Background(), p, k, &base)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int64{200, 1500} { // mid-warmup, mid-sampling (over 3 chains)
			ctx, cancel := context.WithCancel(context.Background())
			set := base
			set.Recorder = &cancelAt{n: cut, cancel: cancel}
			part, err := exactmh.Sample(ctx, p, k, &set)
			cancel()
			if part.Status != exactmh.Canceled || err == nil {
				t.Fatalf("%s: cut at %d: status %v, err %v", name, cut, part.Status, err)
			}
			res, err := exactmh.Resume(context.Background(), part, 0)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != exactmh.Completed {
				t.Fatalf("%s: resumed status %v", name, res.Status)
			}
			sameDraws(t, name, whole, res)
			if a, b := whole.Sampling().Steps, res.Sampling().Steps; a != b {
				t.Errorf("%s: %d sampling steps vs %d", name, b, a)
			}
		}
		// Extending: 400 + 250 draws equals one run of 650.
		longer := base
		longer.Draws = 650
		long, err := exactmh.Sample(context.Background(), p, k, &longer)
		if err != nil {
			t.Fatal(err)
		}
		ext, err := exactmh.Resume(context.Background(), whole, 250)
		if err != nil {
			t.Fatal(err)
		}
		sameDraws(t, name, long, ext)
	}
}

func TestResumeErrors(t *testing.T) {
	if _, err := exactmh.Resume(context.Background(), &exactmh.Result{}, 10); err == nil {
		t.Error("a result without state resumed")
	}
	g := boxed(t, 100, 1)
	res, _ := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Draws: 10, Init: g.Mean})
	if _, err := exactmh.Resume(context.Background(), res, -1); err == nil {
		t.Error("negative more: no error")
	}
}

func TestCheckpointErrors(t *testing.T) {
	p, kernels, init := resumeKernels(t)
	res, err := exactmh.Sample(context.Background(), p, kernels["MH"], &exactmh.Settings{Chains: 1, Draws: 20, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := res.Checkpoint(&file); err != nil {
		t.Fatal(err)
	}
	saved := file.Bytes()
	if _, err := exactmh.LoadCheckpoint(bytes.NewReader(saved), p, exactmh.TunaMH{}, nil); err == nil {
		t.Error("loaded with another kernel")
	}
	other := boxed(t, 50, 1)
	if _, err := exactmh.LoadCheckpoint(bytes.NewReader(saved), other.Posterior, exactmh.MH{}, nil); err == nil {
		t.Error("loaded on other data")
	}
	if _, err := exactmh.LoadCheckpoint(bytes.NewReader(saved[:len(saved)/2]), p, exactmh.MH{}, nil); err == nil {
		t.Error("loaded a truncated file")
	}
	if err := (&exactmh.Result{}).Checkpoint(&file); err == nil {
		t.Error("checkpointed a result without state")
	}
}

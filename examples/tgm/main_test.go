package main

import (
	"context"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
)

// TunaMH's mean batch size (the Poisson count) on this experiment must be
// within 3% of the paper's Table 1 value, 86.45 ± 0.04.
func TestTunaMHBatchMatchesPaper(t *testing.T) {
	post, _, err := problem(1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), post, exactmh.TunaMH{Scale: 0.1, Chi: 1e-4},
		&exactmh.Settings{Chains: 2, Warmup: 2000, NoAdapt: true, Draws: 10000, Init: []float64{0.5, 0}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Sampling()
	const paper = 86.45
	if b := tot.MeanBatch(); math.Abs(b/paper-1) > 0.03 {
		t.Errorf("TunaMH mean batch %.2f, paper %.2f: off by %.1f%%", b, paper, 100*(b/paper-1))
	} else {
		t.Logf("TunaMH mean batch %.2f (paper %.2f), acceptance %.3f", b, paper, tot.AcceptRate())
	}
}

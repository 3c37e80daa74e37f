package main

import (
	"context"
	"math"
	"testing"
	"time"

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

// TFMH's mean batch (data evaluated before the first rejection) and
// FlyMC's mean number of bright data against Table 1: TFMH 13.91 ± 0.016
// (within 3%), FlyMC 811.52 ± 234.16 (within two standard errors).
func TestBaselineBatchesMatchPaper(t *testing.T) {
	if testing.Short() {
		t.Skip("FlyMC reads 10⁴ data per step")
	}
	post, _, err := problem(1)
	if err != nil {
		t.Fatal(err)
	}
	set := &exactmh.Settings{Chains: 2, Warmup: 2000, NoAdapt: true, Draws: 10000, Init: []float64{0.5, 0}, Seed: 3}
	res, err := exactmh.Sample(context.Background(), post, exactmh.TFMH{Scale: 2.2e-2}, set)
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Sampling().MeanBatch(); math.Abs(b/13.91-1) > 0.03 {
		t.Errorf("TFMH mean batch %.2f, paper 13.91", b)
	} else {
		t.Logf("TFMH mean batch %.2f (paper 13.91), acceptance %.3f", b, res.Sampling().AcceptRate())
	}
	set.Warmup, set.Draws = 200, 300
	res, err = exactmh.Sample(context.Background(), post, exactmh.FlyMC{Scale: 1e-2, Q: 0.01}, set)
	if err != nil {
		t.Fatal(err)
	}
	if b := res.Sampling().MeanBatch(); math.Abs(b-811.52) > 2*234.16 {
		t.Errorf("FlyMC mean bright %.1f, paper 811.52 ± 234.16", b)
	} else {
		t.Logf("FlyMC mean bright %.1f (paper 811.52 ± 234.16), acceptance %.3f", b, res.Sampling().AcceptRate())
	}
}

// The budget clock starts at the first transition, not before: its timer
// exists only after the first Record, and it then cancels the run.
func TestBudgetClockStartsAtFirstTransition(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &budgetClock{budget: time.Millisecond, cancel: cancel}
	if err := b.Init(exactmh.RunInfo{}); err != nil {
		t.Fatal(err)
	}
	if b.timer != nil || ctx.Err() != nil {
		t.Fatal("the clock started before the first transition")
	}
	if err := b.Record(&exactmh.Event{}); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done() // the budget ends the run
	b.stop()
}

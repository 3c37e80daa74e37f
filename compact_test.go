// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// compactKitProblem is the kit's logistic regression (mcmctest's
// NeedsGLM target: N = 200, d = 2, prior sd 3) and its Laplace
// approximation at the mode.
func compactKitProblem(t *testing.T) (mcmctest.Problem, *exactmh.LaplaceApprox) {
	t.Helper()
	_, pb, err := mcmctest.LogisticModel{N: 200, Dim: 2, PriorSD: 3}.Draw(rand.New(rand.NewPCG(31, 0)))
	if err != nil {
		t.Fatal(err)
	}
	la, err := exactmh.LaplaceAt(pb.Posterior, pb.Mode)
	if err != nil {
		t.Fatal(err)
	}
	return pb, la
}

// TestCompactBoundHolds checks the compact c_i against the data with
// CheckBound (every datum, 400 pairs about the mode): rounded up to the
// grid they remain a bound, no more than 2^−8 looser than the float64
// state's, and the worst ratio is logged (how tight the bound is decides
// whether a bound too small by a factor shows: TestCompactRoundedDownCaught).
func TestCompactBoundHolds(t *testing.T) {
	pb, la := compactKitProblem(t)
	plain, err := exactmh.ControlVariatesOrder(pb.Posterior, la, 2)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariatesCompact(pb.Posterior, la, 2)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := plain.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	bc, err := cv.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range bp.C {
		if q := bc.C[i]; !(q >= c && q <= c*(1+1.0/256)) {
			t.Fatalf("datum %d: compact c_i %v, float64 %v: want in [c_i, c_i·(1 + 2^−8)]", i, q, c)
		}
	}
	worst, err := exactmh.CheckBound(cv, bc, &exactmh.CheckOptions{Points: 400, Center: pb.Mode, Spread: 2 * pb.SD[0], Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worst |ΔR_i|/(c_i·M) over 400 pairs: %.3g (datum %d)", worst.Ratio, worst.Datum)
}

// TestCompactRoundedDownCaught runs TFMH and TunaMH on the kit's
// logistic regression with the mutant "codes rounded down" (each c_i
// coded a quarter or less of itself): the bound fails, and the kernels'
// checks — Start's audit, then every datum a step evaluates — must report
// a *BoundViolation rather than sample. A bound that is too small but
// holds wherever it is evaluated leaves the kernels exact (TFMH's and
// TunaMH's law needs |ΔU_i| ≤ c_i·M only at the pairs they evaluate), so
// the error is the only way such a mutant can show, and it must always
// show.
func TestCompactRoundedDownCaught(t *testing.T) {
	pb, la := compactKitProblem(t)
	cv, err := exactmh.ControlVariatesCompactMutant(pb.Posterior, la, 2, "codes rounded down")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []exactmh.Kernel{exactmh.TFMH{KeepMinibatch: true}, exactmh.TunaMH{}} {
		for _, trust := range []bool{false, true} {
			switch kk := k.(type) {
			case exactmh.TFMH:
				kk.TrustBound = trust
				k = kk
			case exactmh.TunaMH:
				kk.TrustBound = trust
				k = kk
			}
			_, err := exactmh.Sample(context.Background(), cv, k, &exactmh.Settings{Chains: 1, Warmup: 200, Draws: 2000, Seed: 5, Init: pb.Mode})
			var bv *exactmh.BoundViolation
			if !errors.As(err, &bv) {
				t.Errorf("%s (TrustBound %v) on codes rounded down: error %v, want a *BoundViolation", k.Name(), trust, err)
				continue
			}
			t.Logf("%s (TrustBound %v): caught: %v", k.Name(), trust, err)
		}
	}
}

// compactGLM is a logistic regression of n rows of d float32 features
// drawn as BenchmarkStepAcrossN's (acrossNData), and its posterior under
// an isotropic Gaussian prior of sd 10 tempered by beta, with the Laplace
// approximation at the coefficients the labels were drawn from.
func compactGLM(tb testing.TB, n, d int, beta float64) (*exactmh.Posterior, *exactmh.LaplaceApprox) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	x, y := make([]float32, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			v := float32(rng.NormFloat64() / 3)
			x[i*d+j] = v
			z += float64(v) * 0.5
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression32(x, y, d)
	if err != nil {
		tb.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 10)
	if err != nil {
		tb.Fatal(err)
	}
	p := &exactmh.Posterior{Energy: e, Prior: prior, Beta: beta}
	truth := make([]float64, d)
	for j := range truth {
		truth[j] = 0.5
	}
	la, err := exactmh.LaplaceAt(p, truth)
	if err != nil {
		tb.Fatal(err)
	}
	return p, la
}

// liveHeap returns the bytes of live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestCompactStateBytes measures the per-datum state the control-variate
// kernels keep beyond the rows, at N = 2·10⁶ (d = 10, float32 rows) with
// the compact state's threshold lowered to reach it: the live heap that
// ControlVariates and a started TFMH chain (whose Start builds the sampler)
// add, over N, with the compact state and with the float64 state. The
// compact state must hold at most 4 bytes a datum (issue 45); the float64
// state's figure, about 24 (c_i and an alias column), shows what the
// measurement measures. The structural count (the codes and the blocks'
// records, exactmh.CVCompact) and the expected rejection trials a draw are
// logged beside it. Not with -short: it builds 80 MB of rows.
func TestCompactStateBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds 2·10⁶ rows")
	}
	const n, d = 2_000_000, 10
	p, la := compactGLM(t, n, d, 1)
	measure := func(limit int) (perDatum float64, cv *exactmh.Posterior) {
		restore := exactmh.SetCVCompactLimit(limit)
		defer restore()
		before := liveHeap()
		cv, err := exactmh.ControlVariates(p, la)
		if err != nil {
			t.Fatal(err)
		}
		tgt, err := exactmh.NewTarget(cv)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := exactmh.TFMH{TrustBound: true}.Start(tgt, la.Mean)
		if err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		runtime.KeepAlive(ch)
		return (float64(after) - float64(before)) / n, cv
	}
	compact, cvc := measure(1 << 20)
	plain, cvp := measure(1 << 40)
	isCompact, structural, trials, err := exactmh.CVCompact(cvc)
	if err != nil {
		t.Fatal(err)
	}
	isPlain, structuralPlain, _, _ := exactmh.CVCompact(cvp)
	t.Logf("N = %d, d = %d: compact state %.2f bytes a datum live (structural %.3f: codes and block records; %.2f trials a draw), float64 state %.2f live (structural %.0f)",
		n, d, compact, structural, trials, plain, structuralPlain)
	switch {
	case !isCompact || isPlain:
		t.Fatalf("compact %v at the lowered limit, %v at the default: want true, false", isCompact, isPlain)
	case compact > 4:
		t.Errorf("compact state: %.2f bytes a datum, want ≤ 4", compact)
	case plain < 20:
		t.Errorf("float64 state: %.2f bytes a datum, want about 24 (c_i and an alias column): is the measurement measuring?", plain)
	}
}

// BenchmarkCVCompactStep times a step of the control-variate kernels with
// the float64 state and the compact state (c_i coded in 16 bits, drawn
// through alias.Blocked) at N = 10⁶ and 10⁷ (-short: 10⁶): logistic
// regression, d = 10, float32 rows, the Crank–Nicolson proposal about
// the Laplace approximation at scale 1, β·N = 1000 so that the batch is
// the same at every N (as BenchmarkStepAcrossN's), the order of the
// expansion ControlVariates chooses.
//
//	go test -run '^$' -bench CVCompactStep -benchtime 100000x .
func BenchmarkCVCompactStep(b *testing.B) {
	const d = 10
	sizes := []int{1_000_000, 10_000_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		p, la := compactGLM(b, n, d, 1000/float64(n))
		for _, state := range []string{"float64", "compact"} {
			limit := 1 << 40
			if state == "compact" {
				limit = 0
			}
			restore := exactmh.SetCVCompactLimit(limit)
			cv, err := exactmh.ControlVariates(p, la)
			restore()
			if err != nil {
				b.Fatal(err)
			}
			cn, err := la.CrankNicolson()
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range []exactmh.Kernel{
				exactmh.TFMH{Proposal: cn, Scale: 1, KeepMinibatch: true, TrustBound: true},
				exactmh.TunaMH{Proposal: cn, Scale: 1, Chi: 1e-3, NoChiSearch: true, TrustBound: true},
			} {
				b.Run(fmt.Sprintf("%s/N=%d/%s", k.Name(), n, state), func(b *testing.B) {
					compactStepLoop(b, cv, k, la.Mean)
				})
			}
		}
	}
}

// compactStepLoop is benchmarkKernelAt with the thread's CPU time per step
// beside the wall time (on Linux: getrusage(RUSAGE_THREAD) around the loop,
// the goroutine locked to its thread), which leaves out the time other
// jobs held the core on a shared machine.
func compactStepLoop(b *testing.B, p *exactmh.Posterior, k exactmh.Kernel, theta0 []float64) {
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := k.Start(tgt, theta0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	e0 := tgt.Evals()
	cpu0, cpuOK := threadCPU()
	var batch float64
	for b.Loop() {
		info, err := ch.Step(rng)
		if err != nil {
			b.Fatal(err)
		}
		batch += float64(info.Batch)
	}
	if cpu1, ok := threadCPU(); cpuOK && ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(float64(tgt.Evals()-e0)/float64(b.N), "evals/step")
	b.ReportMetric(batch/float64(b.N), "batch/step")
}

// threadCPU returns the calling thread's user and system CPU time in
// nanoseconds, on Linux (RUSAGE_THREAD); ok is false elsewhere.
func threadCPU() (ns int64, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/exactmh/exactmh/internal/testgen"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// tripGLM is a logistic regression whose chunked calls (energies,
// differences, gradients, FlyMC's gaps) set flag at the at'th, so that
// the Target's next poll abandons the transition in progress.
type tripGLM struct {
	ReadyGLM
	trip *tripper
}

type tripper struct {
	flag      atomic.Bool
	calls, at int
}

func (r *tripper) tick() {
	if r.calls++; r.calls == r.at {
		r.flag.Store(true)
	}
}

func (e tripGLM) Energies(dst, theta []float64, idx []int) {
	e.trip.tick()
	e.ReadyGLM.Energies(dst, theta, idx)
}
func (e tripGLM) EnergyDiffs(dst, theta, next []float64, idx []int) {
	e.trip.tick()
	e.ReadyGLM.EnergyDiffs(dst, theta, next, idx)
}
func (e tripGLM) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.trip.tick()
	e.ReadyGLM.AddGradient(grad, theta, idx, w)
}
func (e tripGLM) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	e.trip.tick()
	e.ReadyGLM.EnergiesAndGradient(dst, grad, theta, idx, w)
}
func (e tripGLM) FlyBound(at []float64, prior Prior) (FlyBound, error) {
	b, err := e.ReadyGLM.FlyBound(at, prior)
	return tripBound{b, e.trip}, err
}

type tripBound struct {
	FlyBound
	trip *tripper
}

func (b tripBound) Gaps(dst, theta []float64, idx []int) {
	b.trip.tick()
	b.FlyBound.Gaps(dst, theta, idx)
}

// chainState is what a checkpoint saves of a chain, and its position.
func chainState(t *testing.T, ch Chain) []byte {
	t.Helper()
	var b []byte
	if k, ok := ch.(Checkpointer); ok {
		s, err := k.MarshalState()
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, s...)
	}
	if m, ok := ch.(fullMemoer); ok && m.fullMemo().save() != nil {
		s, err := chainstate.Encode(m.fullMemo().save())
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, s...)
	}
	s, err := chainstate.Encode(ch.Position())
	if err != nil {
		t.Fatal(err)
	}
	return append(b, s...)
}

// TestAbandonStepRestoresState: every interruptible chain, stopped two
// chunks, or up to 41, into each of its transitions in turn (warmup's and
// sampling's),
// returns errInterrupted and, after abandonStep, has the state a
// checkpoint saves (its Checkpointer's, its full-batch memo's) and the
// position it had before the transition, bit for bit; the transition,
// made again from the same random stream, then goes on as it would have.
// It holds the rollback to what the state is, where
// TestInterruptFullBatchFallback holds it to the draws: TunaMH's warmup
// count of steps between its choices of χ changes no draw where every
// step falls back.
func TestAbandonStepRestoresState(t *testing.T) {
	const n, d = 6 * 512, 3
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(5, 5)), n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	gauss, _ := NewIsoGaussian(d, 10)
	ball, _ := NewBall(d, 3, nil)
	kernels := []struct {
		k     Kernel
		prior Prior
		beta  float64
	}{
		{MH{}, gauss, 1},
		{MALA{}, gauss, 1},
		{HMC{Steps: 5}, gauss, 1},
		{NUTS{}, gauss, 1},
		{TunaMH{MaxBatch: 1}, gauss, 1},
		{TunaMH{MaxBatch: 50}, gauss, 1},
		{TunaMHSGLD{Chi: 1e-4, MaxBatch: 1}, gauss, 1},
		{TFMH{MaxRate: 1}, gauss, 1},
		{SMH{Order: 2, Center: make([]float64, d), MaxRate: 1}, gauss, 1},
		{FlyMC{Q: 0.5}, gauss, 1},
		{PoissonMH{MaxBatch: 1}, ball, 0.05},
		{PoissonMH{Lambda: 2000}, ball, 0.05}, // minibatches of about 2,000 data
		{PoissonBarker{MaxBatch: 1}, ball, 0.05},
		{PoissonMALA{MaxBatch: 1}, ball, 0.05},
	}
	for _, kc := range kernels {
		name := kc.k.Name()
		trip := &tripper{at: -1}
		p := &Posterior{Energy: tripGLM{lr, trip}, Prior: kc.prior, Beta: kc.beta}
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := kc.k.Start(tg, make([]float64, d))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		si, ok := ch.(stepInterrupter)
		if !ok || !si.interruptible() {
			t.Fatalf("%s: chain %T is not interruptible", name, ch)
		}
		tg.interrupt = &trip.flag
		if tu, ok := ch.(Tunable); ok {
			tu.SetStepScale(0.02) // about the posterior's sd: moves, and NUTS's trees grow
		}
		wa, _ := ch.(WarmupAware)
		src := rand.NewPCG(1, 2)
		rng := rand.New(src)
		abandoned := 0
		for s := range 160 {
			if wa != nil && (s == 0 || s == 100) {
				wa.SetWarmup(s == 0)
			}
			before, src0 := chainState(t, ch), *src
			// Two chunks in, or, every other transition, further on (in a
			// later doubling of NUTS's tree, a later leapfrog step).
			trip.at, trip.calls = 2, 0
			if s%2 == 1 {
				trip.at += s / 2 % 40
			}
			_, err := ch.Step(rng)
			if err == nil {
				continue // a transition of fewer than two chunks
			}
			if !errors.Is(err, errInterrupted) {
				t.Fatalf("%s: transition %d: %v", name, s, err)
			}
			abandoned++
			si.abandonStep()
			if after := chainState(t, ch); !bytes.Equal(before, after) {
				t.Fatalf("%s: transition %d abandoned: the chain's state changed", name, s)
			}
			*src = src0
			trip.flag.Store(false)
			trip.at = -1
			if _, err := ch.Step(rng); err != nil {
				t.Fatalf("%s: transition %d made again: %v", name, s, err)
			}
		}
		t.Logf("%s: %d of 160 transitions abandoned and made again", name, abandoned)
		if abandoned < 20 {
			t.Errorf("%s: %d of 160 transitions abandoned, want at least 20", name, abandoned)
		}
	}
}

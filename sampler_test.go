// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

func conjugate(t *testing.T, n int) *mcmctest.Gaussian {
	t.Helper()
	sigma := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2})
	g, err := mcmctest.ConjugateGaussian(n, []float64{1, -1}, sigma, []float64{0, 0}, []float64{3, 3}, 1, 17)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Warmup adapts MH's scale to the target acceptance rate, and a step in
// the support reads N data. (Exactness: the conformance table.)
func TestMHAdaptation(t *testing.T) {
	g := conjugate(t, 100)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 1000, Seed: 2, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Sampling().AcceptRate(); math.Abs(r-0.234) > 0.08 {
		t.Errorf("acceptance after adaptation = %.3f, want ≈ 0.234 (MH's default target)", r)
	}
	if e := res.Sampling().EvalsPerStep(); e > 100 || e < 50 {
		t.Errorf("evaluations per step = %v, want ≤ N = 100 (N per in-support proposal)", e)
	}
}

func mnistLike(t testing.TB, n, d int) *exactmh.Posterior {
	rng := rand.New(rand.NewPCG(8, 9))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * 0.3
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e}
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	p := mnistLike(t, 200, 3)
	run := func(workers int, rec exactmh.Recorder) *exactmh.Result {
		res, err := exactmh.Sample(context.Background(), p, exactmh.MH{},
			&exactmh.Settings{Chains: 4, Workers: workers, Warmup: 200, Draws: 300, Thin: 2, Seed: 42, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	one, four := run(1, nil), run(4, nil)
	var calls atomic.Int64
	rec := run(3, recorderFunc(func(e *exactmh.Event) error { calls.Add(1); return nil }))
	for c := range one.Chains {
		if !slices.Equal(one.Chains[c].Draws, four.Chains[c].Draws) {
			t.Errorf("chain %d: draws differ between 1 and 4 workers", c)
		}
		if !slices.Equal(one.Chains[c].Draws, rec.Chains[c].Draws) {
			t.Errorf("chain %d: a recorder changed the draws", c)
		}
	}
	if got := calls.Load(); got != 4*(200+600) {
		t.Errorf("recorder saw %d transitions, want %d", got, 4*800)
	}
	if len(one.Chains[0].Draws) != 300*3 || len(one.Chains[0].Times) != 300 {
		t.Errorf("kept %d values and %d times, want 900 and 300", len(one.Chains[0].Draws), len(one.Chains[0].Times))
	}
	if slices.Equal(one.Chains[0].Draws, one.Chains[1].Draws) {
		t.Error("chains 0 and 1 are identical: streams not independent")
	}
}

type recorderFunc func(e *exactmh.Event) error

func (recorderFunc) Init(exactmh.RunInfo) error      { return nil }
func (f recorderFunc) Record(e *exactmh.Event) error { return f(e) }

func TestCancellationKeepsDraws(t *testing.T) {
	p := mnistLike(t, 100, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := recorderFunc(func(e *exactmh.Event) error {
		if e.Chain == 0 && e.Draw == 99 {
			cancel()
		}
		return nil
	})
	res, err := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 2, Workers: 1, Warmup: 50, Draws: 100000, Recorder: rec})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res == nil || res.Status != exactmh.Canceled {
		t.Fatalf("result %v, want Status Canceled", res)
	}
	if n := res.Chains[0].Len(); n != 100 {
		t.Errorf("chain 0 kept %d draws, want the 100 made before cancellation", n)
	}
	if n := len(res.Chains[0].Draws); n != 200 {
		t.Errorf("chain 0 has %d values, want 200", n)
	}
}

// nanEnergy returns NaN for datum 3 when θ_0 > 1.
type nanEnergy struct{}

func (nanEnergy) Len() int { return 10 }
func (nanEnergy) Dim() int { return 1 }
func (nanEnergy) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = theta[0] * theta[0]
		if i == 3 && theta[0] > 1 {
			dst[k] = math.NaN()
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	good := mnistLike(t, 20, 2)
	box, _ := model.NewCube(2, 1, 2)
	cases := []struct {
		name string
		p    *exactmh.Posterior
		k    exactmh.Kernel
		s    *exactmh.Settings
		want string
	}{
		{"nil posterior", nil, exactmh.MH{}, nil, "nil Posterior"},
		{"nil energy", &exactmh.Posterior{}, exactmh.MH{}, nil, "Energy is nil"},
		{"negative draws", good, exactmh.MH{}, &exactmh.Settings{Draws: -1}, "Draws = -1"},
		{"negative thin", good, exactmh.MH{}, &exactmh.Settings{Thin: -2}, "Thin = -2"},
		{"negative chains", good, exactmh.MH{}, &exactmh.Settings{Chains: -1}, "Chains = -1"},
		{"bad warmup", good, exactmh.MH{}, &exactmh.Settings{Warmup: -5}, "Warmup = -5"},
		{"bad target", good, exactmh.MH{}, &exactmh.Settings{TargetAccept: 1.5}, "TargetAccept = 1.5"},
		{"init dim", good, exactmh.MH{}, &exactmh.Settings{Init: []float64{1}}, "Init has length 1"},
		{"inits count", good, exactmh.MH{}, &exactmh.Settings{Chains: 2, Inits: [][]float64{{0, 0}}}, "one per chain"},
		{"init NaN", good, exactmh.MH{}, &exactmh.Settings{Init: []float64{0, math.NaN()}}, "not finite"},
		{"init outside", &exactmh.Posterior{Energy: good.Energy, Prior: box}, exactmh.MH{}, &exactmh.Settings{Init: []float64{0, 0}}, "outside the prior's support"},
		{"scale", good, exactmh.MH{Scale: -1}, nil, "step scale -1"},
		{"sigma", good, exactmh.MH{Proposal: exactmh.RandomWalk{Sigma: []float64{1}}}, nil, "Sigma has length 1"},
		{"NaN at start", &exactmh.Posterior{Energy: nanEnergy{}}, exactmh.MH{}, &exactmh.Settings{Init: []float64{2}}, "datum 3"},
	}
	for _, c := range cases {
		_, err := exactmh.Sample(ctx, c.p, c.k, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// A NaN met mid-run stops the chain with an EnergyError and keeps the draws.
	res, err := exactmh.Sample(ctx, &exactmh.Posterior{Energy: nanEnergy{}}, exactmh.MH{Scale: 3},
		&exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: 1000, Init: []float64{0.5}})
	var ee *exactmh.EnergyError
	if !errors.As(err, &ee) || ee.Datum != 3 || res == nil || res.Status != exactmh.Failed {
		t.Fatalf("NaN energy mid-run: err = %v, result %v; want an EnergyError for datum 3 and Status Failed", err, res)
	}
}

func BenchmarkMHStepLogistic(b *testing.B) {
	p := mnistLike(b, 1000, 50)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := exactmh.MH{Scale: 0.01}.Start(tgt, make([]float64, 50))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	e0 := tgt.Evals()
	for b.Loop() {
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tgt.Evals()-e0)/float64(b.N), "evals/step")
}

// Settings.Duration ends sampling by time, not count, and the run still
// completes.
func TestSettingsDuration(t *testing.T) {
	g := conjugate(t, 100)
	const budget = 80 * time.Millisecond
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{},
		&exactmh.Settings{Chains: 2, Warmup: 200, Duration: budget, Seed: 1, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != exactmh.Completed {
		t.Errorf("status %v, want Completed", res.Status)
	}
	for _, c := range res.Chains {
		if c.Sampling.Time < budget || c.Len() < 10 || c.Warmup.Steps != 200 {
			t.Errorf("chain %d: sampling time %v, %d draws, %d warmup steps", c.Chain, c.Sampling.Time, c.Len(), c.Warmup.Steps)
		}
	}
	// Draws still caps the run.
	res, err = exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{},
		&exactmh.Settings{Chains: 1, Draws: 5, Duration: time.Hour, Init: g.Mean})
	if err != nil || res.Chains[0].Len() != 5 {
		t.Errorf("Draws 5 with a long Duration: %v draws, err %v", res.Chains[0].Len(), err)
	}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Duration: -1}); err == nil {
		t.Error("negative Duration: no error")
	}
}

// TestDefaultInitInsideSupport: with no Init, a chain on a Box or Ball
// prior that does not hold the origin starts at the support's centre (a
// uniform prior on [1, 2]² needs no Init), and the automatic default's MAP
// search does too.
func TestDefaultInitInsideSupport(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	n, d := 3000, 2
	y := make([]float64, n*d)
	for i := range y {
		y[i] = 1.5 + 0.3*rng.NormFloat64()
	}
	e, err := model.NewGaussianMean(y, d, mat.NewSymDense(d, []float64{1, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	box, err := model.NewBox([]float64{1, 1}, []float64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	ball, err := model.NewBall(d, 0.5, []float64{1.5, 1.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, prior := range []exactmh.Prior{box, ball} {
		post := &exactmh.Posterior{Energy: e, Prior: prior}
		res, err := exactmh.Sample(context.Background(), post, exactmh.MH{},
			&exactmh.Settings{Chains: 1, Warmup: 100, Draws: 100, Seed: 1})
		if err != nil {
			t.Fatalf("%T: Sample with no Init: %v", prior, err)
		}
		for j, v := range res.Chains[0].Draws[:d] {
			if math.Abs(v-1.5) > 0.5 {
				t.Errorf("%T: first draw's θ_%d = %v, want within the support about 1.5", prior, j, v)
			}
		}
		c, err := exactmh.Choose(context.Background(), post, &exactmh.Settings{Seed: 1})
		if err != nil {
			t.Fatalf("%T: Choose with no Init: %v", prior, err)
		}
		if c.Laplace == nil || math.Abs(c.Laplace.Mean[0]-1.5) > 0.1 {
			t.Errorf("%T: Choose's MAP %v, want ≈ 1.5", prior, c.Laplace)
		}
	}
}

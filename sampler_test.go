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
	"gonum.org/v1/gonum/mat"
)

// naiveMH is a deliberately wrong kernel: Metropolis–Hastings whose log
// ratio uses an unbiased minibatch estimate (N/m)Σ_batch ΔU_i of the energy
// difference. Plugging a noisy estimate into min(1, e^x) biases the chain;
// the harness must see it.
type naiveMH struct {
	prop  exactmh.Proposal // nil: the isotropic RandomWalk
	scale float64          // 0: 0.1
	batch int
}

func (naiveMH) Name() string { return "naiveMH" }
func (naiveMH) Exact() bool  { return false }
func (k naiveMH) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	return &naiveChain{k: k, t: t, theta: slices.Clone(theta0), next: make([]float64, len(theta0)),
		idx: make([]int, k.batch), diff: make([]float64, k.batch)}, nil
}

type naiveChain struct {
	k           naiveMH
	t           *exactmh.Target
	theta, next []float64
	idx         []int
	diff        []float64
}

func (c *naiveChain) Position() []float64 { return c.theta }
func (c *naiveChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	prop, scale := c.k.prop, c.k.scale
	if prop == nil {
		prop = exactmh.RandomWalk{}
	}
	if scale == 0 {
		scale = 0.1
	}
	logQ := prop.Propose(rng, c.next, c.theta, scale)
	lp := c.t.LogPrior(c.next)
	if math.IsInf(lp, -1) {
		return exactmh.Info{}, nil
	}
	for k := range c.idx {
		c.idx[k] = rng.IntN(c.t.N())
	}
	if err := c.t.EnergyDiffs(c.diff, c.theta, c.next, c.idx); err != nil {
		return exactmh.Info{}, err
	}
	var s float64
	for _, v := range c.diff {
		s += v
	}
	logA := lp - c.t.LogPrior(c.theta) + logQ + s*float64(c.t.N())/float64(len(c.idx))
	if math.Log(rng.Float64()) < logA {
		copy(c.theta, c.next)
		return exactmh.Info{Accepted: true, AcceptProb: math.NaN()}, nil
	}
	return exactmh.Info{AcceptProb: math.NaN()}, nil
}

// upDownTV measures α+ = a(k → k+1) and α− = a(k+1 → k) on the App. J.1 walk
// by the pairwise harness and returns the TV to uniform of the implied
// stationary law on K states.
func upDownTV(t *testing.T, newKernel func(exactmh.Proposal) exactmh.Kernel, k int, steps int) (tv float64, r mcmctest.PairResult) {
	t.Helper()
	p, _, err := mcmctest.RandomWalk(k)
	if err != nil {
		t.Fatal(err)
	}
	mid := float64(k / 2)
	r, err = mcmctest.Pairwise(p, newKernel, []float64{mid}, []float64{mid + 1}, 0, steps, 11)
	if err != nil {
		t.Fatal(err)
	}
	up := float64(r.AccA) / float64(r.FromA)
	down := float64(r.AccB) / float64(r.FromB)
	return mcmctest.StationaryTV(up, down, k), r
}

func TestMHRandomWalkExact(t *testing.T) {
	mh := func(q exactmh.Proposal) exactmh.Kernel { return exactmh.MH{Proposal: q, Scale: 1} }
	naive := func(q exactmh.Proposal) exactmh.Kernel { return naiveMH{prop: q, batch: 10} }
	const k = 200
	tvMH, r := upDownTV(t, mh, k, 4000)
	if tvMH > 0.02 {
		t.Errorf("MH on the App. J.1 walk: TV of the stationary law to uniform = %.4f, want < 0.02 (%v)", tvMH, r)
	}
	tvNaive, r := upDownTV(t, naive, k, 200000)
	if tvNaive < 0.1 || r.Z < 5 {
		t.Errorf("minibatch-estimate MH (wrong ratio): TV = %.4f, want > 0.1: the harness cannot see a biased kernel (%v)", tvNaive, r)
	}
	t.Logf("K = %d: TV(MH) = %.4f, TV(naive minibatch MH) = %.4f", k, tvMH, tvNaive)

	// A simulated chain's histogram on K = 20 states.
	const small = 20
	p, _, err := mcmctest.RandomWalk(small)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: mcmctest.LatticeProposal{}, Scale: 1},
		&exactmh.Settings{Chains: 4, Draws: 20000, Warmup: exactmh.NoWarmup, NoAdapt: true, Init: []float64{10}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if tv := mcmctest.HistogramTV(res.Samples(0), small); tv > 0.06 {
		t.Errorf("MH chain histogram on K = %d: TV = %.4f, want < 0.06", small, tv)
	}
}

func TestMHPairwiseDetailedBalance(t *testing.T) {
	g := conjugate(t, 50)
	a := slices.Clone(g.Mean)
	b := slices.Clone(g.Mean)
	sd := g.SD()
	b[0] += 0.8 * sd[0]
	b[1] -= 0.5 * sd[1]
	mh := func(q exactmh.Proposal) exactmh.Kernel { return exactmh.MH{Proposal: q, Scale: 1} }
	for _, logQ := range []float64{0, 0.7, -1.3} {
		r, err := mcmctest.Pairwise(g.Posterior, mh, a, b, logQ, 40000, 3)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Z) > 4 {
			t.Errorf("MH, log q ratio %v: %v", logQ, r)
		}
		// Mutation: a kernel that applies the proposal ratio with the wrong
		// sign is MH fed the reversed ratio; the check must fail it.
		if logQ != 0 {
			w, err := mcmctest.Pairwise(g.Posterior, func(q exactmh.Proposal) exactmh.Kernel {
				return exactmh.MH{Proposal: flipRatio{q}, Scale: 1}
			}, a, b, logQ, 40000, 3)
			if err != nil {
				t.Fatal(err)
			}
			w.Want = r.Want // the true target ratio
			if z := (w.Got - w.Want) / w.SE; math.Abs(z) < 6 {
				t.Errorf("reversed proposal ratio not detected: %v", w)
			}
		}
	}
}

// flipRatio reports the negated log proposal ratio: a deliberately wrong proposal correction.
type flipRatio struct{ q exactmh.Proposal }

func (f flipRatio) Propose(rng *rand.Rand, dst, theta []float64, s float64) float64 {
	if f.q == nil {
		return -exactmh.RandomWalk{}.Propose(rng, dst, theta, s)
	}
	return -f.q.Propose(rng, dst, theta, s)
}

func conjugate(t *testing.T, n int) *mcmctest.Gaussian {
	t.Helper()
	sigma := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2})
	g, err := mcmctest.ConjugateGaussian(n, []float64{1, -1}, sigma, []float64{0, 0}, []float64{3, 3}, 1, 17)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestMHConjugateGaussian(t *testing.T) {
	g := conjugate(t, 100)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 2, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
		t.Error(err)
	}
	if r := res.Sampling().AcceptRate(); math.Abs(r-0.25) > 0.08 {
		t.Errorf("acceptance after adaptation = %.3f, want ≈ 0.25", r)
	}
	if e := res.Sampling().EvalsPerStep(); e > 100 || e < 50 {
		t.Errorf("evaluations per step = %v, want ≤ N = 100 (N per in-support proposal)", e)
	}
	// Mutation: the minibatch-estimate kernel misses the posterior.
	requireBias(t, g, naiveMH{prop: exactmh.RandomWalk{Sigma: g.SD()}, batch: 5},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 2, Init: g.Mean})
}

// requireBias runs a deliberately wrong kernel on the Gaussian target and
// fails the test unless the moment check shows bias (not merely too few
// effective draws).
func requireBias(t *testing.T, g *mcmctest.Gaussian, k exactmh.Kernel, set *exactmh.Settings) {
	t.Helper()
	bad, err := exactmh.Sample(context.Background(), g.Posterior, k, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmctest.CheckMoments(bad, g.Mean, g.SD(), 4); !mcmctest.ShowsBias(err) {
		t.Errorf("the moment check does not show the bias of the mutant %s (%v)", bad.Kernel, err)
	} else {
		t.Logf("mutant %s: %v", bad.Kernel, err)
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
	e, err := exactmh.NewLogisticRegression(x, y, d)
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
	box, _ := exactmh.NewCube(2, 1, 2)
	cases := []struct {
		name string
		p    *exactmh.Posterior
		k    exactmh.Kernel
		s    *exactmh.Settings
		want string
	}{
		{"nil posterior", nil, exactmh.MH{}, nil, "nil Posterior"},
		{"nil energy", &exactmh.Posterior{}, exactmh.MH{}, nil, "Energy is nil"},
		{"nil kernel", good, nil, nil, "nil Kernel"},
		{"negative draws", good, exactmh.MH{}, &exactmh.Settings{Draws: -1}, "Draws = -1"},
		{"negative thin", good, exactmh.MH{}, &exactmh.Settings{Thin: -2}, "Thin = -2"},
		{"negative chains", good, exactmh.MH{}, &exactmh.Settings{Chains: -1}, "Chains = -1"},
		{"bad warmup", good, exactmh.MH{}, &exactmh.Settings{Warmup: -5}, "Warmup = -5"},
		{"bad target", good, exactmh.MH{}, &exactmh.Settings{TargetAccept: 1.5}, "TargetAccept = 1.5"},
		{"init dim", good, exactmh.MH{}, &exactmh.Settings{Init: []float64{1}}, "Init has length 1"},
		{"inits count", good, exactmh.MH{}, &exactmh.Settings{Chains: 2, Inits: [][]float64{{0, 0}}}, "one per chain"},
		{"init NaN", good, exactmh.MH{}, &exactmh.Settings{Init: []float64{0, math.NaN()}}, "not finite"},
		{"init outside", &exactmh.Posterior{Energy: good.Energy, Prior: box}, exactmh.MH{}, nil, "outside the prior's support"},
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

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

func TestPoissonMHPairwise(t *testing.T) {
	// β = 0.01 keeps L = ΣM_i small enough for a fast test.
	g := boxed(t, 100, 0.01)
	a, b := pairAB(g)
	good := func(q exactmh.Proposal) exactmh.Kernel { return exactmh.PoissonMH{Proposal: q} }
	bad := func(q exactmh.Proposal) exactmh.Kernel {
		return exactmh.PoissonMHFlippedThinning(exactmh.PoissonMH{Proposal: q})
	}
	checkPairwise(t, g.Posterior, a, b, good, bad, 40000)
}

func TestPoissonMHRandomWalk(t *testing.T) {
	const k = 200
	good := func(q exactmh.Proposal) exactmh.Kernel { return exactmh.PoissonMH{Proposal: q, Scale: 1} }
	tv, r := upDownTV(t, good, k, 20000)
	if tv > 0.05 {
		t.Errorf("PoissonMH on the App. J.1 walk: TV to uniform = %.4f (%v)", tv, r)
	}
	// As for TunaMH: both kinds of data carry equal total width, so only a
	// mutant that breaks that balance is visible on this walk.
	bad := func(q exactmh.Proposal) exactmh.Kernel {
		return exactmh.PoissonMHUniformDraws(exactmh.PoissonMH{Proposal: q, Scale: 1})
	}
	tvBad, rb := upDownTV(t, bad, k, 10000)
	if tvBad < 0.2 {
		t.Errorf("mutant PoissonMH: TV = %.4f, want large (%v)", tvBad, rb)
	}
	t.Logf("K = %d: TV(PoissonMH) = %.4f, TV(mutant) = %.4f", k, tv, tvBad)
}

func TestPoissonMHConjugateMoments(t *testing.T) {
	g := boxed(t, 100, 0.01)
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 2, Init: g.Mean}
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.PoissonMH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
		t.Error(err)
	}
	tot := res.Sampling()
	t.Logf("PoissonMH: accept %.3f, mean batch %.1f, evals/step %.1f, λ = %.3g, L = %.3g",
		tot.AcceptRate(), tot.MeanBatch(), tot.EvalsPerStep(), res.Chains[0].Params["lambda"], res.Chains[0].Params["L"])
	requireBias(t, g, exactmh.PoissonMHFlippedThinning(exactmh.PoissonMH{}), set)
}

// The mean Poisson count is λ + L, and a step evaluates each draw at θ
// and each kept draw at θ′.
func TestPoissonMHBatchMean(t *testing.T) {
	g := boxed(t, 100, 0.01)
	r, err := g.Posterior.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	var l float64
	for _, w := range r.Width {
		l += w
	}
	const scale = 0.05
	tgt, _ := exactmh.NewTarget(g.Posterior)
	ch, err := exactmh.PoissonMH{LambdaScale: scale}.Start(tgt, g.Mean)
	if err != nil {
		t.Fatal(err)
	}
	want := scale*l*l + l
	rng := rand.New(rand.NewPCG(4, 4))
	const steps = 20000
	var sum float64
	for range steps {
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		sum += float64(info.Batch)
	}
	got := sum / steps
	if se := math.Sqrt(want / steps); math.Abs(got-want) > 5*se {
		t.Errorf("mean batch %.3f, want λ + L = %.3f (se %.3f)", got, want, se)
	}
	if ev := float64(tgt.Evals()) / steps; ev < got || ev > 2*got {
		t.Errorf("evaluations per step %.2f, want between B and 2B (B = %.2f)", ev, got)
	}
	t.Logf("mean batch %.2f (λ + L = %.2f), evaluations per step %.2f", got, want, float64(tgt.Evals())/steps)
}

func TestPoissonMHErrors(t *testing.T) {
	g := boxed(t, 50, 0.01)
	r, _ := g.Posterior.EnergyRange()
	narrow := &exactmh.EnergyRange{Lo: r.Lo, Width: make([]float64, len(r.Width))}
	for i, w := range r.Width {
		narrow.Width[i] = w / 50
	}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.PoissonMH{Range: narrow},
		&exactmh.Settings{Chains: 1, Warmup: 100, Draws: 100, Init: g.Mean})
	var v *exactmh.BoundViolation
	if !errors.As(err, &v) || v.Theta == nil {
		t.Errorf("range violated: err = %v, want a BoundViolation", err)
	}
	for name, k := range map[string]exactmh.PoissonMH{
		"negative lambda": {Lambda: -1},
		"NaN scale":       {LambdaScale: math.NaN()},
		"short range":     {Range: &exactmh.EnergyRange{Lo: []float64{0}, Width: []float64{1}}},
		"huge lambda":     {Lambda: 1e300},
	} {
		if _, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{Init: g.Mean}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkPoissonMHStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.PoissonMH{Scale: 0.02})
}

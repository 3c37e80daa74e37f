package exactmh_test

import (
	"context"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

func TestPoissonGradConjugateMoments(t *testing.T) {
	g := boxed(t, 100, 0.01)
	for _, c := range []struct {
		good, bad   exactmh.Kernel
		mutantScale float64 // relative to the good kernel's adapted scale
	}{
		{exactmh.PoissonBarker{}, exactmh.PoissonBarkerFlipped(exactmh.PoissonBarker{}), 1},
		{exactmh.PoissonMALA{}, exactmh.PoissonMALAStaleReverse(exactmh.PoissonMALA{}), 0.6},
	} {
		set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: 2, Init: g.Mean, TargetAccept: 0.55}
		res, err := exactmh.Sample(context.Background(), g.Posterior, c.good, set)
		if err != nil {
			t.Fatal(err)
		}
		if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
			t.Errorf("%s: %v", res.Kernel, err)
		}
		tot := res.Sampling()
		t.Logf("%s: accept %.3f, scale %.3g, mean batch %.1f, evals/step %.1f, grads/step %.1f", res.Kernel,
			tot.AcceptRate(), res.Chains[0].Scale, tot.MeanBatch(), tot.EvalsPerStep(), float64(tot.GradEvals)/float64(tot.Steps))
		// The mutant at the good kernel's adapted scale.
		fixed := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: 2, Init: g.Mean, NoAdapt: true}
		switch k := c.bad.(type) {
		case exactmh.PoissonBarker:
			k.Scale = c.mutantScale * res.Chains[0].Scale
			c.bad = k
		case exactmh.PoissonMALA:
			k.Scale = c.mutantScale * res.Chains[0].Scale
			c.bad = k
		}
		requireBias(t, g, c.bad, fixed)
	}
}

func BenchmarkPoissonBarkerStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.PoissonBarker{Scale: 0.02})
}

func BenchmarkPoissonMALAStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.PoissonMALA{Scale: 0.02})
}

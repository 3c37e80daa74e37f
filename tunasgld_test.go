package exactmh_test

import (
	"context"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

func TestTunaMHSGLDConjugateMoments(t *testing.T) {
	// Few data, weakly weighted: the SGLD drift is informative and the
	// chain mixes in seconds.
	g := boxed(t, 200, 0.01)
	for _, clip := range []float64{0, 0.05} {
		k := exactmh.TunaMHSGLD{Chi: 1e-3, GradBatch: 40, Clip: clip}
		set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 2, Init: g.Mean, TargetAccept: 0.5}
		res, err := exactmh.Sample(context.Background(), g.Posterior, k, set)
		if err != nil {
			t.Fatal(err)
		}
		if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
			t.Errorf("clip %v: %v", clip, err)
		}
		tot := res.Sampling()
		t.Logf("clip %v: accept %.3f, ε %.3g, mean batch %.1f, grads/step %.1f", clip, tot.AcceptRate(), res.Chains[0].Scale,
			tot.MeanBatch(), float64(tot.GradEvals)/float64(tot.Steps))
		if gs := float64(tot.GradEvals) / float64(tot.Steps); gs > 80 {
			t.Errorf("%.1f gradient evaluations per step, want at most 2K = 80", gs)
		}
		if clip > 0 {
			continue
		}
		k.Scale = res.Chains[0].Scale
		fixed := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 2, Init: g.Mean, NoAdapt: true}
		requireBias(t, g, exactmh.TunaMHSGLDStaleReverse(k), fixed)
	}
}

func TestTunaMHSGLDErrors(t *testing.T) {
	g := boxed(t, 50, 1)
	tg, _ := exactmh.NewTarget(g.Posterior)
	for name, k := range map[string]exactmh.TunaMHSGLD{
		"no chi":      {},
		"big K":       {Chi: 1, GradBatch: 51},
		"neg clip":    {Chi: 1, Clip: -1},
		"neg batch":   {Chi: 1, MaxBatch: -1},
		"bad scale":   {Chi: 1, Scale: -1},
		"short bound": {Chi: 1, Bound: &exactmh.DiffBound{C: []float64{1}}},
	} {
		if _, err := k.Start(tg, g.Mean); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkTunaMHSGLDStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.TunaMHSGLD{Scale: 0.02, Chi: 1e-5, GradBatch: 20, Clip: 2})
}

package exactmh_test

import (
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
)

// A step evaluates the minibatch gradient at θ and at θ′: at most 2K datum
// gradients, whatever the clip. (Exactness: the conformance table.)
func TestTunaMHSGLDGradCost(t *testing.T) {
	g := boxed(t, 200, 0.01)
	for _, clip := range []float64{0, 0.05} {
		tg, err := exactmh.NewTarget(g.Posterior)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := exactmh.TunaMHSGLD{Chi: 1e-3, GradBatch: 40, Clip: clip, Scale: 0.5}.Start(tg, g.Mean)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		const steps = 2000
		for s := range steps {
			g0 := tg.GradEvals()
			if _, err := ch.Step(rng); err != nil {
				t.Fatal(err)
			}
			if n := tg.GradEvals() - g0; n > 80 || n <= 0 {
				t.Fatalf("clip %v, step %d: %d gradient evaluations, want 1 to 2K = 80", clip, s, n)
			}
		}
		t.Logf("clip %v: %.1f gradient evaluations per step", clip, float64(tg.GradEvals())/steps)
	}
}

func TestTunaMHSGLDErrors(t *testing.T) {
	g := boxed(t, 50, 1)
	tg, _ := exactmh.NewTarget(g.Posterior)
	for name, k := range map[string]exactmh.TunaMHSGLD{
		"neg chi":     {Chi: -1},
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

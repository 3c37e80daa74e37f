package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
)

// The mean Poisson count is λ + L, and a step evaluates each draw at θ
// and each kept draw at θ′.
func TestPoissonMHBatchMean(t *testing.T) {
	t.Parallel()
	g := boxed(t, 100, 0.01)
	r, err := g.Posterior.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	var l float64 // L = Σβ·Width_i: the range is untempered, the kernel applies β
	for _, w := range r.Width {
		l += g.Posterior.Beta * w
	}
	const scale = 0.05
	tgt, _ := exactmh.NewTarget(g.Posterior)
	ch, err := exactmh.PoissonMH{LambdaScale: scale}.Start(tgt, g.Mean)
	if err != nil {
		t.Fatal(err)
	}
	want := scale*l*l + l
	rng := rand.New(rand.NewPCG(4, 4))
	steps := 20000
	if testing.Short() {
		steps = 5000
	}
	var sum float64
	for range steps {
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		sum += float64(info.Batch)
	}
	got := sum / float64(steps)
	if se := math.Sqrt(want / float64(steps)); math.Abs(got-want) > 5*se {
		t.Errorf("mean batch %.3f, want λ + L = %.3f (se %.3f)", got, want, se)
	}
	if ev := float64(tgt.Evals()) / float64(steps); ev < got || ev > 2*got {
		t.Errorf("evaluations per step %.2f, want between B and 2B (B = %.2f)", ev, got)
	}
	t.Logf("mean batch %.2f (λ + L = %.2f), evaluations per step %.2f", got, want, float64(tgt.Evals())/float64(steps))
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

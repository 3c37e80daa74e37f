package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
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
	ch, err := exactmh.PoissonMH{LambdaScale: scale, MaxBatch: math.Inf(1)}.Start(tgt, g.Mean) // λ + L > N
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

// untemperedLogistic is a logistic regression with N = 10⁵, d = 5 on a
// ball of radius 5, untempered: λ + L ≈ 10¹⁰ ≫ N (issue 14).
func untemperedLogistic(t testing.TB) *exactmh.Posterior {
	x, y := simulateLogistic(100000, []float64{1, -1, 0.5, 0, 2}, 14)
	e, err := model.NewLogisticRegression(x, y, 5)
	if err != nil {
		t.Fatal(err)
	}
	ball, err := model.NewBall(5, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: ball}
}

// untemperedMixture is the TunaMH paper's truncated Gaussian mixture
// (App. J.2: x_i ~ ½N(θ1, σ²) + ½N(θ1 + θ2, σ²), θ = (0, 1), σ² = 2, on
// [−3, 3]²) with N = 10⁵ data, untempered.
func untemperedMixture(t testing.TB) *exactmh.Posterior {
	return boxedMixture(t, rand.New(rand.NewPCG(14, 2)), 100000, 0)
}

// On ordinary untempered posteriors λ + L ≫ N. Start used to reserve
// buffers of λ + L (out of memory) or a step drew them all (minutes, deaf
// to the context). Now the Poisson kernels fall back to full-batch steps
// by default, reserving nothing, and return promptly; told never to fall
// back, Start refuses with an error that names the expected batch.
func TestPoissonUntemperedFallback(t *testing.T) {
	for _, tc := range []struct {
		name string
		post *exactmh.Posterior
		init []float64
		ks   []exactmh.Kernel
		inf  []exactmh.Kernel
	}{
		{"logistic", untemperedLogistic(t), []float64{0.9, -0.9, 0.4, 0, 1.8},
			[]exactmh.Kernel{exactmh.PoissonMH{}, exactmh.PoissonBarker{}, exactmh.PoissonMALA{}},
			[]exactmh.Kernel{exactmh.PoissonMH{MaxBatch: math.Inf(1)}, exactmh.PoissonBarker{MaxBatch: math.Inf(1)}, exactmh.PoissonMALA{MaxBatch: math.Inf(1)}}},
		{"mixture", untemperedMixture(t), []float64{0, 1},
			[]exactmh.Kernel{exactmh.PoissonMH{Lambda: 3e9}, exactmh.PoissonBarker{Lambda: 3e9}, exactmh.PoissonMALA{Lambda: 3e9}},
			[]exactmh.Kernel{exactmh.PoissonMH{Lambda: 3e9, MaxBatch: math.Inf(1)}, exactmh.PoissonMALA{Lambda: 3e9, MaxBatch: math.Inf(1)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range tc.ks {
				tgt, err := exactmh.NewTarget(tc.post)
				if err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ch, err := k.Start(tgt, tc.init)
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatalf("%s: %v", k.Name(), err)
				}
				fallback, room := exactmh.PoissonBuffers(ch)
				alloc := after.TotalAlloc - before.TotalAlloc
				if !fallback || room != 0 || alloc > 8<<20 {
					t.Errorf("%s: fallback %v, room for %d kept draws, Start allocated %d bytes; want a fallback, no room, < 8 MiB",
						k.Name(), fallback, room, alloc)
				}
				start := time.Now()
				set := exactmh.Settings{Chains: 1, Warmup: 20, Draws: 20, Seed: 3, Init: tc.init}
				if testing.Short() {
					// Every step falls back: a few show it (each reads N = 10⁵).
					set.Warmup, set.Draws = 2, 3
				}
				res, err := exactmh.Sample(context.Background(), tc.post, k, &set)
				if err != nil {
					t.Fatalf("%s: %v", k.Name(), err)
				}
				tot := res.Sampling()
				if tot.Fallbacks != tot.Steps {
					t.Errorf("%s: %d fallbacks in %d steps, want all", k.Name(), tot.Fallbacks, tot.Steps)
				}
				if !strings.Contains(strings.Join(res.Summary().Warnings, "\n"), "fell back to full-batch MH in 100%") {
					t.Errorf("%s: no fallback warning in %q", k.Name(), res.Summary().Warnings)
				}
				t.Logf("%s: λ = %.3g, L = %.3g (N = %d): Start allocated %d kB, %d full-batch transitions in %v",
					k.Name(), res.Chains[0].Params["lambda"], res.Chains[0].Params["L"], res.N, alloc>>10, set.Warmup+set.Draws, time.Since(start).Round(time.Millisecond))
			}
			for _, k := range tc.inf {
				tgt, err := exactmh.NewTarget(tc.post)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err = k.Start(tgt, tc.init)
				if err == nil || !strings.Contains(err.Error(), "expected batch λ + L") {
					t.Errorf("%s with MaxBatch +Inf: err = %v, want the expected batch refused", k.Name(), err)
				}
				t.Logf("%s, MaxBatch +Inf: refused in %v: %v", k.Name(), time.Since(start).Round(time.Millisecond), err)
			}
		})
	}
}

// Start reserves room for a moderate batch only; larger batches grow the
// buffers once, amortised, and later steps allocate nothing.
func TestPoissonBuffersGrow(t *testing.T) {
	g := boxed(t, 100, 0.01) // L ≈ 99: λ + L ≈ 8000 ≤ 100·N
	tgt, err := exactmh.NewTarget(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := exactmh.PoissonMALA{Lambda: 7900, MaxBatch: math.Inf(1)}.Start(tgt, g.Mean)
	if err != nil {
		t.Fatal(err)
	}
	fallback, room := exactmh.PoissonBuffers(ch)
	if fallback || room > 1<<12 {
		t.Fatalf("fallback %v, room %d at Start: want no fallback, room ≤ 4096", fallback, room)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	step := func() {
		if _, err := ch.Step(rng); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		step()
	}
	_, grown := exactmh.PoissonBuffers(ch)
	if a := testing.AllocsPerRun(50, step); a != 0 {
		t.Errorf("%.2f allocations per step after growth, want 0", a)
	}
	if grown <= room {
		t.Errorf("room %d after steps with batches of about 8000, %d at Start: the buffers did not grow", grown, room)
	}
	t.Logf("room %d at Start, %d after 20 steps", room, grown)
}

// A MaxBatch that is negative or NaN is an error.
func TestPoissonMaxBatchErrors(t *testing.T) {
	g := boxed(t, 50, 0.01)
	for _, mb := range []float64{-1, math.NaN()} {
		for _, k := range []exactmh.Kernel{exactmh.PoissonMH{MaxBatch: mb}, exactmh.PoissonBarker{MaxBatch: mb}, exactmh.PoissonMALA{MaxBatch: mb}} {
			if _, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{Init: g.Mean}); err == nil || !strings.Contains(err.Error(), "MaxBatch") {
				t.Errorf("%s, MaxBatch %v: err = %v", k.Name(), mb, err)
			}
		}
	}
}

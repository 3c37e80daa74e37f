package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
)

// quadMoments integrates the 2-d posterior on a grid: E θ, E θθᵀ and, for
// each datum, the stationary bright probability E[1 − B_i/L_i] =
// E[1 − exp(−gap_i)] of FlyMC.
func quadMoments(t *testing.T, p *exactmh.Posterior, b exactmh.FlyBound, half float64, grid int) []float64 {
	t.Helper()
	n := p.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	gaps := make([]float64, n)
	beta := p.Beta
	if beta == 0 {
		beta = 1
	}
	var w, m0, m1, s00, s01, s11 float64
	bright := make([]float64, n)
	h := 2 * half / float64(grid)
	// Log densities first, to normalise stably.
	lp := make([]float64, grid*grid)
	top := math.Inf(-1)
	for a := range grid {
		for c := range grid {
			th := []float64{-half + (float64(a)+0.5)*h, -half + (float64(c)+0.5)*h}
			v, err := p.LogDensity(th)
			if err != nil {
				t.Fatal(err)
			}
			lp[a*grid+c] = v
			top = math.Max(top, v)
		}
	}
	for a := range grid {
		for c := range grid {
			th := []float64{-half + (float64(a)+0.5)*h, -half + (float64(c)+0.5)*h}
			pw := math.Exp(lp[a*grid+c] - top)
			w += pw
			m0 += pw * th[0]
			m1 += pw * th[1]
			s00 += pw * th[0] * th[0]
			s01 += pw * th[0] * th[1]
			s11 += pw * th[1] * th[1]
			b.Gaps(gaps, th, idx)
			for i, g := range gaps {
				bright[i] += pw * -math.Expm1(-beta*g)
			}
		}
	}
	out := []float64{m0 / w, m1 / w, s00 / w, s01 / w, s01 / w, s11 / w}
	for _, v := range bright {
		out = append(out, v/w)
	}
	return out
}

// flyMoments runs one FlyMC chain by hand and returns the same moment
// vector from its draws and brightness.
func flyMoments(t *testing.T, p *exactmh.Posterior, k exactmh.FlyMC, steps int, seed uint64) []float64 {
	t.Helper()
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := k.Start(tg, []float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	n := p.Len()
	out := make([]float64, 6+n)
	for s := range steps {
		if _, err := ch.Step(rng); err != nil {
			t.Fatal(err)
		}
		if s < steps/10 {
			continue
		}
		th := ch.Position()
		out[0] += th[0]
		out[1] += th[1]
		out[2] += th[0] * th[0]
		out[3] += th[0] * th[1]
		out[4] += th[0] * th[1]
		out[5] += th[1] * th[1]
		for i := range n {
			if exactmh.FlyMCBright(ch, i) {
				out[6+i]++
			}
		}
	}
	for j := range out {
		out[j] /= float64(steps - steps/10)
	}
	return out
}

// hipsLogistic is the logistic toy problem of the HIPS FlyMC tests
// (reference-implementations.md §8): three data, N(0, 1.2²) prior, bound
// tight at |s| = 2.
func hipsLogistic(t *testing.T) (*exactmh.Posterior, exactmh.FlyBound) {
	t.Helper()
	e, err := exactmh.NewLogisticRegression([]float64{2.2, 1.7, -1.5, 2.9, 1.4, -1.2}, []float64{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := exactmh.NewIsoGaussian(2, 1.2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.FlyBoundXi(2)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}, b
}

func TestFlyMCHIPSLogistic(t *testing.T) {
	p, b := hipsLogistic(t)
	want := []float64{1.323, -0.374, 2.439, -0.460, -0.460, 0.749, 0.152, 0.227, 0.088}
	quad := quadMoments(t, p, b, 8, 400)
	for j := range want {
		if math.Abs(quad[j]-want[j]) > 2e-3 {
			t.Errorf("quadrature moment %d = %.4f, HIPS reference %.3f", j, quad[j], want[j])
		}
	}
	got := flyMoments(t, p, exactmh.FlyMC{Bound: b, Q: 0.5, Scale: 1}, 200000, 1)
	for j := range want {
		if math.Abs(got[j]-quad[j]) > 0.05 {
			t.Errorf("FlyMC moment %d = %.4f, quadrature %.4f", j, got[j], quad[j])
		}
	}
	t.Logf("FlyMC %.3f\nquad  %.3f", got, quad)
	_ = context.Background
}

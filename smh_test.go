package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// The remainder bounds hold: |U_i(θ) − Û_i(θ)| ≤ b_i‖θ − θ̂‖₁^{k+1}/(k+1)!
// at random points, for every energy and order offered.
func TestTaylorBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n, d = 200, 3
	x, y, yr := make([]float64, n*d), make([]float64, n), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j]
		}
		y[i] = float64(rng.IntN(2))
		yr[i] = z + rng.NormFloat64()
	}
	lr, _ := model.NewLogisticRegression(x, y, d)
	st, _ := model.NewStudentTRegression(x, yr, d, 4)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 2 * rng.NormFloat64()
	}
	gm, _ := model.NewGaussianMixture(xs, 2)
	box, _ := model.NewCube(2, -3, 3)
	g := boxed(t, n, 1)
	cases := []struct {
		name  string
		e     exactmh.Energy
		prior exactmh.Prior
		order int
	}{
		{"logistic", lr, nil, 1}, {"logistic", lr, nil, 2},
		{"student-t", st, nil, 1}, {"student-t", st, nil, 2},
		{"mixture", gm, box, 1}, {"gaussian", g.Energy, g.Posterior.Prior, 1},
	}
	for _, c := range cases {
		b, err := c.e.(exactmh.TaylorBounder).TaylorBound(c.order, c.prior)
		if err != nil {
			t.Fatal(err)
		}
		dim := c.e.Dim()
		worst := 0.0
		for range 200 {
			center, th := make([]float64, dim), make([]float64, dim)
			for j := range dim {
				center[j] = 2*rng.Float64() - 1
				th[j] = center[j] + 0.5*rng.NormFloat64()
			}
			if c.prior != nil {
				if b, ok := c.prior.(*model.Box); ok {
					for j := range dim {
						center[j] = b.Lo[j] + (b.Hi[j]-b.Lo[j])*rng.Float64()
						th[j] = b.Lo[j] + (b.Hi[j]-b.Lo[j])*rng.Float64()
					}
				}
			}
			var l1 float64
			for j := range dim {
				l1 += math.Abs(th[j] - center[j])
			}
			fact := 2.0
			if c.order == 2 {
				fact = 6
			}
			for i := range c.e.Len() {
				r := taylorRemainder(c.e, i, center, th, c.order)
				bound := b[i] * math.Pow(l1, float64(c.order+1)) / fact
				worst = math.Max(worst, math.Abs(r)/bound)
			}
		}
		if worst > 1+1e-6 {
			t.Errorf("%s, order %d: remainder reaches %.3f × its bound", c.name, c.order, worst)
		}
		t.Logf("%s, order %d: largest remainder/bound %.3f", c.name, c.order, worst)
	}
}

// taylorRemainder returns U_i(θ) − [U_i(θ̂) + ∇U_iᵀ(θ−θ̂) (+ ½(θ−θ̂)ᵀ∇²U_i(θ−θ̂))]
// with the derivatives by central differences (the gradient analytic).
func taylorRemainder(e exactmh.Energy, i int, center, th []float64, order int) float64 {
	dim := len(th)
	u := func(v []float64) float64 {
		out := []float64{0}
		e.Energies(out, v, []int{i})
		return out[0]
	}
	grad := func(v []float64) []float64 {
		g := make([]float64, dim)
		e.(exactmh.Gradienter).AddGradient(g, v, []int{i}, []float64{1})
		return g
	}
	delta := make([]float64, dim)
	for j := range dim {
		delta[j] = th[j] - center[j]
	}
	g0 := grad(center)
	r := u(th) - u(center)
	for j := range dim {
		r -= g0[j] * delta[j]
	}
	if order == 2 {
		// ½δᵀHδ = ½ d/ds [∇U(θ̂ + sδ)·δ] at s = 0.
		const h = 1e-5
		up, dn := make([]float64, dim), make([]float64, dim)
		for j := range dim {
			up[j], dn[j] = center[j]+h*delta[j], center[j]-h*delta[j]
		}
		gu, gd := grad(up), grad(dn)
		var q float64
		for j := range dim {
			q += (gu[j] - gd[j]) / (2 * h) * delta[j]
		}
		r -= q / 2
	}
	return r
}

func TestSMHFallbackAndErrors(t *testing.T) {
	g := boxed(t, 300, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.SMH{Order: 1, Center: g.Mean, MaxRate: 1e-12},
		&exactmh.Settings{Chains: 4, Warmup: 300, Draws: 3000, Seed: 4, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sampling().Fallbacks == 0 {
		t.Error("no fallback")
	}
	if err := mcmctest.CheckMoments(res, g.Mean, g.SD(), 4); err != nil {
		t.Error(err)
	}
	tg, _ := exactmh.NewTarget(g.Posterior)
	far := []float64{1e9, 1e9}
	for name, k := range map[string]exactmh.SMH{
		"order 3":       {Order: 3, Center: g.Mean},
		"short centre":  {Order: 1, Center: []float64{0}},
		"outside":       {Order: 1, Center: far},
		"order 2 gauss": {Order: 2, Center: g.Mean},
		"neg rate":      {Order: 1, Center: g.Mean, MaxRate: -1},
	} {
		if _, err := k.Start(tg, g.Mean); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func BenchmarkSMH1StepLogistic(b *testing.B) { benchmarkSMH(b, 1) }
func BenchmarkSMH2StepLogistic(b *testing.B) { benchmarkSMH(b, 2) }

func benchmarkSMH(b *testing.B, order int) {
	p := tallLogistic(b)
	m, err := exactmh.FindMAP(context.Background(), p, make([]float64, p.Dim()), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkKernelAt(b, p, exactmh.SMH{Order: order, Center: m.Theta, Scale: 0.005}, m.Theta)
}

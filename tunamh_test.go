package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// boxed is a 2-d Gaussian-mean target with a bounded (box) support, so that
// TunaMH's DiffBound and PoissonMH's EnergyRange exist.
func boxed(t testing.TB, n int, beta float64) *mcmctest.Gaussian {
	t.Helper()
	sigma := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2})
	g, err := mcmctest.BoxedGaussian(n, []float64{1, -1}, sigma, beta, 6, 23)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// pairAB is a pair of points about one posterior sd apart.
func pairAB(g *mcmctest.Gaussian) (a, b []float64) {
	sd := g.SD()
	a, b = slices.Clone(g.Mean), slices.Clone(g.Mean)
	a[0] -= 0.4 * sd[0]
	b[0] += 0.5 * sd[0]
	b[1] -= 0.6 * sd[1]
	return a, b
}

// checkPairwise runs the pairwise detailed-balance check of the kernel with
// log proposal ratios 0 and 0.7.
func checkPairwise(t *testing.T, p *exactmh.Posterior, a, b []float64, good func(exactmh.Proposal) exactmh.Kernel, steps int) {
	t.Helper()
	for _, logQ := range []float64{0, 0.7} {
		r, err := mcmctest.Pairwise(p, good, a, b, logQ, steps, 3)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Z) > 4 {
			t.Errorf("log q ratio %v: %v", logQ, r)
		} else {
			t.Logf("log q ratio %v: %v", logQ, r)
		}
	}
}

func TestTunaMHFallbackExact(t *testing.T) {
	g := boxed(t, 200, 1)
	a, b := pairAB(g)
	// MaxBatch 1: every step falls back to full MH.
	fb := func(q exactmh.Proposal) exactmh.Kernel { return exactmh.TunaMH{Proposal: q, Chi: 1e-3, MaxBatch: 1} }
	checkPairwise(t, g.Posterior, a, b, fb, 20000)

	tgt, _ := exactmh.NewTarget(g.Posterior)
	ch, err := exactmh.TunaMH{Proposal: mcmctest.SwapProposal{A: a, B: b}, Chi: 1e-3, MaxBatch: 1}.Start(tgt, a)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ch.Step(rand.New(rand.NewPCG(1, 1)))
	if err != nil || !info.Fallback || info.Batch != 200 || tgt.Evals() != 200 {
		t.Errorf("fallback step: %+v, %d evaluations, err %v; want Fallback, Batch = N = 200, 200 fused evaluations", info, tgt.Evals(), err)
	}
}

// The mean Poisson count is χC²M² + CM for a fixed pair.
func TestTunaMHBatchMean(t *testing.T) {
	g := boxed(t, 200, 1)
	a, b := pairAB(g)
	bound, err := g.Posterior.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	const chi = 2e-3
	cm := bound.Sum() * bound.M(a, b)
	want := chi*cm*cm + cm
	tgt, _ := exactmh.NewTarget(g.Posterior)
	ch, err := exactmh.TunaMH{Proposal: mcmctest.SwapProposal{A: a, B: b}, Chi: chi}.Start(tgt, a)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	const steps = 20000
	var sum, distinct float64
	for range steps {
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		sum += float64(info.Batch)
		distinct += float64(info.Distinct)
		if info.Distinct > info.Batch || info.Fallback {
			t.Fatalf("info %+v", info)
		}
	}
	got := sum / steps
	if se := math.Sqrt(want / steps); math.Abs(got-want) > 5*se {
		t.Errorf("mean batch %.3f, want χC²M² + CM = %.3f (se %.3f)", got, want, se)
	}
	if ev := float64(tgt.Evals()) / steps; math.Abs(ev-got) > 1e-9 {
		t.Errorf("evaluations per step %.3f, want one fused difference per draw (%.3f)", ev, got)
	}
	t.Logf("mean batch %.2f (expected %.2f), mean distinct %.2f", got, want, distinct/steps)
}

func TestTunaMHBoundViolation(t *testing.T) {
	g := boxed(t, 200, 1)
	bound, _ := g.Posterior.DiffBound()
	for i := range bound.C {
		bound.C[i] /= 20
	}
	_, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{Bound: bound, Chi: 1e-3},
		&exactmh.Settings{Chains: 1, Warmup: 100, Draws: 100, Init: g.Mean})
	var v *exactmh.BoundViolation
	if !errors.As(err, &v) || v.Ratio <= 1 || v.Theta == nil || v.ThetaNew == nil {
		t.Fatalf("err = %v, want a BoundViolation naming the datum and pair", err)
	}
	t.Log(err)
}

func TestChiRules(t *testing.T) {
	// κ = 0.5: Prop. 6's χ = 1/(2(log 2 − 1/e)); κ = 0.9: Theorem 2
	// solved exactly (App. F), below eq. 2's 4/((1 − κ) log(1/κ)).
	l9 := math.Log(0.9)
	for _, c := range []struct{ kappa, want float64 }{
		{0.5, 1 / (2 * (math.Ln2 - 1/math.E))},
		{0.9, (2*math.Ln2 - l9 + 2*math.Sqrt(math.Ln2*(math.Ln2-l9))) / (l9 * l9)},
	} {
		got := exactmh.TunaMH{}.ChiForKappa(c.kappa)
		if math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("ChiForKappa(%v) = %v, want %v", c.kappa, got, c.want)
		}
		if eq2 := 4 / ((1 - c.kappa) * math.Log(1/c.kappa)); got > eq2 {
			t.Errorf("ChiForKappa(%v) = %v above eq. 2's %v", c.kappa, got, eq2)
		}
	}
	// ChiForKappa inverts TunaMHGapBound.
	for _, kappa := range []float64{1e-3, 0.1, 0.5, 0.67, 0.68, 0.69, 0.7, 0.9, 0.999} {
		if got := (exactmh.TunaMH{}).GapBound((exactmh.TunaMH{}).ChiForKappa(kappa)); math.Abs(got-kappa) > 1e-9*kappa {
			t.Errorf("TunaMHGapBound(ChiForKappa(%v)) = %v", kappa, got)
		}
	}
	if !math.IsNaN((exactmh.TunaMH{}).ChiForKappa(1)) || !math.IsNaN((exactmh.TunaMH{}).ChiForKappa(0)) {
		t.Error("ChiForKappa outside (0, 1) is not NaN")
	}
	// Heuristic: with an isotropic random walk of scale s in d dimensions,
	// M² = s²·χ²_d, so χ ≈ 1/(C² s² q90(χ²_d)) after warmup.
	g := boxed(t, 200, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{NoChiSearch: true},
		&exactmh.Settings{Chains: 2, Warmup: 300, Draws: 10, Init: g.Mean, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	q90 := distuv.ChiSquared{K: 2}.Quantile(0.9)
	for _, ch := range res.Chains {
		chi, c := ch.Params["chi"], ch.Params["C"]
		if x := chi * c * c * ch.Scale * ch.Scale * q90; math.Abs(x-1) > 0.25 {
			t.Errorf("χC²s²q90 = %.3f, want ≈ 1 (χ = %g)", x, chi)
		}
	}
	// Optimal rule: χ = √(E[M]/(C·E[M²])) with E[M] = s√(π/2), E[M²] = 2s² in 2-d.
	res, err = exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{ChiRule: exactmh.ChiOptimal, NoChiSearch: true},
		&exactmh.Settings{Chains: 1, Warmup: 300, Draws: 10, Init: g.Mean, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Chains[0]
	s, c := ch.Scale, ch.Params["C"]
	want := math.Sqrt(s * math.Sqrt(math.Pi/2) / (c * 2 * s * s))
	if got := ch.Params["chi"]; math.Abs(got/want-1) > 0.15 {
		t.Errorf("ChiOptimal χ = %g, want ≈ %g", got, want)
	}
}

func TestTunaMHErrors(t *testing.T) {
	g := boxed(t, 50, 1)
	flat := conjugate(t, 50) // Gaussian prior: unbounded support, no DiffBound
	for name, c := range map[string]struct {
		p *exactmh.Posterior
		k exactmh.TunaMH
	}{
		"negative chi":   {g.Posterior, exactmh.TunaMH{Chi: -1}},
		"NaN chi":        {g.Posterior, exactmh.TunaMH{Chi: math.NaN()}},
		"bad rule":       {g.Posterior, exactmh.TunaMH{ChiRule: 7}},
		"max batch":      {g.Posterior, exactmh.TunaMH{MaxBatch: -1}},
		"short bound":    {g.Posterior, exactmh.TunaMH{Bound: &exactmh.DiffBound{C: []float64{1}}}},
		"zero bound":     {g.Posterior, exactmh.TunaMH{Bound: &exactmh.DiffBound{C: make([]float64, 50)}}},
		"no bound":       {flat.Posterior, exactmh.TunaMH{}},
		"negative scale": {g.Posterior, exactmh.TunaMH{Scale: -0.1}},
	} {
		if _, err := exactmh.Sample(context.Background(), c.p, c.k, &exactmh.Settings{Init: g.Mean}); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// tallLogistic is logistic regression with N = 10^5, d = 50 and the
// tempering and ball prior that make both TunaMH and PoissonMH practical.
func tallLogistic(b *testing.B) *exactmh.Posterior {
	p := mnistLike(b, 100000, 50)
	ball, err := model.NewBall(50, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	p.Prior, p.Beta = ball, 1e-3
	return p
}

func benchmarkKernel(b *testing.B, p *exactmh.Posterior, k exactmh.Kernel) {
	benchmarkKernelAt(b, p, k, make([]float64, p.Dim()))
}

// benchmarkKernelAt starts the chain at theta0 (the MAP for SMH).
func benchmarkKernelAt(b *testing.B, p *exactmh.Posterior, k exactmh.Kernel, theta0 []float64) {
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := k.Start(tgt, theta0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 { // reach steady state before timing
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	e0 := tgt.Evals()
	var batch, acc float64
	for b.Loop() {
		info, err := ch.Step(rng)
		if err != nil {
			b.Fatal(err)
		}
		batch += float64(info.Batch)
		if info.Accepted {
			acc++
		}
	}
	b.ReportMetric(float64(tgt.Evals()-e0)/float64(b.N), "evals/step")
	b.ReportMetric(batch/float64(b.N), "batch/step")
	if batch > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/batch, "ns/datum")
	}
	b.ReportMetric(acc/float64(b.N), "accept")
}

func BenchmarkTunaMHStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.TunaMH{Scale: 0.02})
}

// BenchmarkGatherLogistic is the plain loop a minibatch step's per-datum
// cost is measured against (ns/datum beside BenchmarkTunaMHStepLogistic's
// and the other step benchmarks' ns per datum drawn): draw a datum
// uniformly, read its row, compute its energy difference — nothing else.
func BenchmarkGatherLogistic(b *testing.B) {
	p := tallLogistic(b)
	e := p.Energy.(exactmh.EnergyDiffer)
	d, n := p.Dim(), p.Len()
	theta, next := make([]float64, d), make([]float64, d)
	for j := range next {
		next[j] = 0.01
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var idx [1]int
	var dst [1]float64
	var sum float64
	const batch = 100
	for b.Loop() {
		for range batch {
			idx[0] = rng.IntN(n)
			e.EnergyDiffs(dst[:], theta, next, idx[:])
			sum += dst[0]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/datum")
	if math.IsNaN(sum) {
		b.Fatal("NaN")
	}
}

func BenchmarkMHStepTallLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.MH{Scale: 0.02})
}

// TestTunaMHTheorem3Params checks the batch record TunaMH's Params carry
// beside Theorem 3's scale: mean_B, the mean batch since warmup, against
// mean_C2M2_CM, the mean C²M² + CM of the same steps. TunaMH's expected
// batch is χC²M² + CM, within max(χ, 1) of C²M² + CM.
func TestTunaMHTheorem3Params(t *testing.T) {
	if testing.Short() {
		t.Skip("slow statistical check (mean batch against Theorem 3's scale over three χ on N = 1000): runs without -short")
	}
	g := boxed(t, 1000, 1e-3)
	for _, chi := range []float64{0, 1e-2, 3} {
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{Chi: chi, MaxBatch: math.Inf(1)},
			&exactmh.Settings{Chains: 2, Warmup: 300, Draws: 2000, Init: g.Mean, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		for c, ch := range res.Chains {
			p := ch.Params
			b, scale := p["mean_B"], p["mean_C2M2_CM"]
			t.Logf("χ = %.3g, chain %d: mean batch %.2f, mean C²M² + CM %.2f (ratio %.3f); Totals mean batch %.2f",
				p["chi"], c, b, scale, b/scale, res.Sampling().MeanBatch())
			if !(b > 0 && scale > 0) || b > 1.1*max(p["chi"], 1)*scale {
				t.Errorf("χ = %v, chain %d: mean_B = %v, mean_C2M2_CM = %v", p["chi"], c, b, scale)
			}
		}
	}
}

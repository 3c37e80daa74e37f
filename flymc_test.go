package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
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
	// Log densities first, to normalise stably (one Target for all: each
	// Posterior.LogDensity call would build its own).
	tg, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	lp := make([]float64, grid*grid)
	top := math.Inf(-1)
	for a := range grid {
		for c := range grid {
			th := []float64{-half + (float64(a)+0.5)*h, -half + (float64(c)+0.5)*h}
			u, err := tg.TotalEnergy(th)
			if err != nil {
				t.Fatal(err)
			}
			v := tg.LogPrior(th) - u
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
// vector from its draws and brightness (the first tenth discarded), with
// the Monte Carlo standard error of each entry.
func flyMoments(t *testing.T, p *exactmh.Posterior, k exactmh.FlyMC, steps int, seed uint64) (mean, se []float64) {
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
	burn := steps / 10
	trace := make([][]float64, 6+n)
	for j := range trace {
		trace[j] = make([]float64, 0, steps-burn)
	}
	for s := range steps {
		if _, err := ch.Step(rng); err != nil {
			t.Fatal(err)
		}
		if s < burn {
			continue
		}
		th := ch.Position()
		for j, v := range []float64{th[0], th[1], th[0] * th[0], th[0] * th[1], th[0] * th[1], th[1] * th[1]} {
			trace[j] = append(trace[j], v)
		}
		for i := range n {
			v := 0.0
			if exactmh.FlyMCBright(ch, i) {
				v = 1
			}
			trace[6+i] = append(trace[6+i], v)
		}
	}
	mean, se = make([]float64, len(trace)), make([]float64, len(trace))
	for j, x := range trace {
		for _, v := range x {
			mean[j] += v / float64(len(x))
		}
		se[j] = diagnostics.MCSEMean([][]float64{x})
	}
	return mean, se
}

// checkFlyMoments compares the chain's moments with the quadrature's: each
// within 4 Monte Carlo standard errors plus the quadrature's own 2·10⁻³
// agreement with the reference.
func checkFlyMoments(t *testing.T, got, se, quad []float64) {
	t.Helper()
	for j := range quad {
		if math.Abs(got[j]-quad[j]) > 4*se[j]+2e-3 {
			t.Errorf("FlyMC moment %d = %.4f ± %.4f, quadrature %.4f", j, got[j], se[j], quad[j])
		}
	}
	t.Logf("FlyMC %.3f\nse    %.3f\nquad  %.3f", got, se, quad)
}

// flySteps is the length of the HIPS chains: full, or a fifth with -short
// (the tolerances are in Monte Carlo standard errors).
func flySteps(full int) int {
	if testing.Short() {
		return full / 5
	}
	return full
}

// hipsLogistic is the logistic toy problem of the HIPS FlyMC tests
// (reference-implementations.md §8): three data, N(0, 1.2²) prior, bound
// tight at |s| = 2.
func hipsLogistic(t *testing.T) (*exactmh.Posterior, exactmh.FlyBound) {
	t.Helper()
	e, err := model.NewLogisticRegression([]float64{2.2, 1.7, -1.5, 2.9, 1.4, -1.2}, []float64{1, 0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(2, 1.2)
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
	t.Parallel()
	p, b := hipsLogistic(t)
	want := []float64{1.323, -0.374, 2.439, -0.460, -0.460, 0.749, 0.152, 0.227, 0.088}
	quad := quadMoments(t, p, b, 8, 400)
	for j := range want {
		if math.Abs(quad[j]-want[j]) > 2e-3 {
			t.Errorf("quadrature moment %d = %.4f, HIPS reference %.3f", j, quad[j], want[j])
		}
	}
	got, se := flyMoments(t, p, exactmh.FlyMC{Bound: b, Q: 0.5, Scale: 1}, flySteps(200000), 1)
	checkFlyMoments(t, got, se, quad)
	// Wrong ratios move the θ moments far beyond the exact chain's error
	// (the yardstick: a mutant that runs off to infinity has no error of
	// its own to speak of).
	for name, bad := range map[string]exactmh.FlyMC{
		"no bound ratio": exactmh.FlyMCNoBoundTerm(exactmh.FlyMC{Bound: b, Q: 0.5, Scale: 1}),
		"darken always":  exactmh.FlyMCDarkenAlways(exactmh.FlyMC{Bound: b, Q: 0.5, Scale: 1}),
	} {
		m, _ := flyMoments(t, p, bad, flySteps(200000), 1)
		worst := 0.0
		for j := range 6 {
			worst = math.Max(worst, math.Abs(m[j]-quad[j])/(se[j]+2e-3/4))
		}
		if worst < 6 {
			t.Errorf("mutant %q: θ moments within %.1f standard errors of the truth", name, worst)
		}
		t.Logf("mutant %q: worst θ-moment error %.3g standard errors", name, worst)
	}
}

// The bounds hold (gaps ≥ 0, LogBoundSum equal to the per-datum sum) and
// the tuned ones are tight at their tuning point.
func TestFlyBounds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	const n, d = 300, 3
	x, y, yr := make([]float64, n*d), make([]float64, n), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
		yr[i] = z + rng.NormFloat64()
	}
	lr, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	st, err := model.NewStudentTRegression(x, yr, d, 4)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Sqrt2*rng.NormFloat64() + float64(rng.IntN(2))
	}
	gm, err := model.NewGaussianMixture(xs, 2)
	if err != nil {
		t.Fatal(err)
	}
	box, err := model.NewCube(2, -3, 3)
	if err != nil {
		t.Fatal(err)
	}
	at := []float64{0.3, -0.7, 1.1}
	cases := []struct {
		name string
		p    *exactmh.Posterior
		at   []float64 // nil: untuned
	}{
		{"logistic untuned", &exactmh.Posterior{Energy: lr}, nil},
		{"logistic tuned", &exactmh.Posterior{Energy: lr}, at},
		{"student-t untuned", &exactmh.Posterior{Energy: st}, nil},
		{"student-t tuned", &exactmh.Posterior{Energy: st}, at},
		{"mixture at 0", &exactmh.Posterior{Energy: gm, Prior: box}, nil},
		{"mixture tuned", &exactmh.Posterior{Energy: gm, Prior: box}, []float64{0.4, 0.9}},
	}
	for _, c := range cases {
		b, err := c.p.Energy.(exactmh.FlyBounder).FlyBound(c.at, c.p.Prior)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		spread := 2.0
		if c.p.Prior != nil {
			spread = 1.5
		}
		v, err := exactmh.CheckFlyBound(c.p, b, &exactmh.CheckOptions{Points: 100, Spread: spread, Seed: 7})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		minGap := v.Gap
		// Tight at the tuning point (the mixture's untuned point is 0).
		tight := c.at
		if tight == nil && c.p.Prior != nil {
			tight = []float64{0, 0}
		}
		if tight == nil {
			t.Logf("%s: smallest gap %.3g", c.name, minGap)
			continue
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		gaps := make([]float64, n)
		b.Gaps(gaps, tight, idx)
		worst := 0.0
		for _, g := range gaps {
			worst = math.Max(worst, math.Abs(g-1e-6))
		}
		if worst > 1e-9 {
			t.Errorf("%s: gaps at the tuning point differ from the 1e-6 margin by up to %.3g", c.name, worst)
		}
		t.Logf("%s: smallest gap %.3g, tight at %v to %.1e", c.name, minGap, tight, worst)
	}
	// The untuned logistic bound is tight where |x_iᵀθ| = 1.5.
	b, _ := lr.FlyBoundXi(1.5)
	row := lr.Row(0)
	theta := make([]float64, d)
	for j := range theta {
		theta[j] = 1.5 * row[j] / (row[0]*row[0] + row[1]*row[1] + row[2]*row[2])
	}
	g := []float64{0}
	b.Gaps(g, theta, []int{0})
	if math.Abs(g[0]-1e-6) > 1e-9 {
		t.Errorf("Jaakkola–Jordan bound at |s| = ξ: gap %v, want the 1e-6 margin", g[0])
	}
	// Tuning at ξ = 0 uses the limit −1/8 (no 0/0).
	zero, _ := lr.FlyBound(make([]float64, d), nil)
	if _, err := exactmh.CheckFlyBound(&exactmh.Posterior{Energy: lr}, zero, &exactmh.CheckOptions{Points: 20, Seed: 1}); err != nil {
		t.Errorf("bound tight at θ = 0: %v", err)
	}
	// A bound above the likelihood is caught.
	if _, err := exactmh.CheckFlyBound(&exactmh.Posterior{Energy: lr}, shifted{b, -0.1}, nil); err == nil {
		t.Error("CheckFlyBound accepted a bound above the likelihood")
	}
	// A LogBoundSum that does not match the per-datum bounds is caught.
	if _, err := exactmh.CheckFlyBound(&exactmh.Posterior{Energy: lr}, offsetSum{b}, nil); err == nil {
		t.Error("CheckFlyBound accepted an inconsistent LogBoundSum")
	}
	if _, err := gm.FlyBound(nil, nil); err == nil {
		t.Error("mixture bound without a box prior: no error")
	}
}

// shifted moves every gap by delta (a negative delta puts B_i above L_i).
type shifted struct {
	exactmh.FlyBound
	delta float64
}

func (s shifted) Gaps(dst, theta []float64, idx []int) {
	s.FlyBound.Gaps(dst, theta, idx)
	for k := range idx {
		dst[k] += s.delta
	}
}

func (s shifted) LogBoundSum(theta []float64) float64 { return s.FlyBound.LogBoundSum(theta) }

// offsetSum adds a θ-dependent error to LogBoundSum.
type offsetSum struct{ exactmh.FlyBound }

func (o offsetSum) LogBoundSum(theta []float64) float64 {
	return o.FlyBound.LogBoundSum(theta) + 0.01*theta[0]
}

// Info splits the evaluations: θ-step = bright data, z-step ≈ q·N_dark.
func TestFlyMCInfo(t *testing.T) {
	t.Parallel()
	g := boxed(t, 2000, 1)
	b, err := exactmh.NewRangeFlyBound(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := exactmh.NewTarget(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	const q = 0.05
	ch, err := exactmh.FlyMC{Bound: b, Q: q}.Start(tg, g.Mean)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	var aux, want float64
	for s := range 3000 {
		bright0 := 0
		for i := range 2000 {
			if exactmh.FlyMCBright(ch, i) {
				bright0++
			}
		}
		e0 := tg.Evals()
		info, err := ch.Step(rng)
		if err != nil {
			t.Fatal(err)
		}
		bright := 0
		for i := range 2000 {
			if exactmh.FlyMCBright(ch, i) {
				bright++
			}
		}
		if info.Batch != bright {
			t.Fatalf("step %d: Info.Batch = %d, %d data bright", s, info.Batch, bright)
		}
		// Proposals outside the box are rejected before any datum is read.
		if got := int(tg.Evals()-e0) - info.AuxEvals; got != bright && (got != 0 || info.Accepted) {
			t.Fatalf("step %d: θ-step evaluations %d, want the %d bright data", s, got, bright)
		}
		aux += float64(info.AuxEvals)
		want += q * float64(2000-bright0)
	}
	if math.Abs(aux-want) > 4*math.Sqrt(want) {
		t.Errorf("z-step evaluations %.0f, want q·N_dark summed = %.0f", aux, want)
	}
}

func TestFlyMCErrors(t *testing.T) {
	g := boxed(t, 100, 1)
	tg, err := exactmh.NewTarget(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	b, err := exactmh.NewRangeFlyBound(g.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]exactmh.FlyMC{
		"q > 1":    {Bound: b, Q: 1.5},
		"q < 0":    {Bound: b, Q: -0.1},
		"no bound": {},
	} {
		if _, err := k.Start(tg, g.Mean); err == nil {
			t.Errorf("%s: Start gave no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// A bound above the likelihood stops the chain with a
	// LowerBoundViolation.
	_, err = exactmh.Sample(context.Background(), g.Posterior, exactmh.FlyMC{Bound: shifted{b, -1e3}, Q: 0.5},
		&exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: g.Mean})
	var v *exactmh.LowerBoundViolation
	if !errors.As(err, &v) || v.Gap >= 0 || v.Theta == nil {
		t.Fatalf("err = %v, want a LowerBoundViolation", err)
	}
	t.Log(err)
}

func BenchmarkFlyMCStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), exactmh.FlyMC{Scale: 0.02, Q: 0.1})
}

// The robust-regression toy of the HIPS FlyMC tests: three data, ν = 4,
// Laplace prior of scale 2.2, tangent bounds at |r| = 0.5.
func TestFlyMCHIPSRobust(t *testing.T) {
	t.Parallel()
	e, err := model.NewStudentTRegression([]float64{-0.7, -0.8, -1.1, 1.5, -0.2, -0.2}, []float64{0.5, 1.6, -3}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := model.NewIsoLaplace(2, 2.2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.FlyBoundR0(0.5)
	if err != nil {
		t.Fatal(err)
	}
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	want := []float64{-0.559, 0.474, 1.181, 0.010, 0.010, 0.775, 0.102, 0.113, 0.893}
	quad := quadMoments(t, p, b, 25, 700)
	for j := range want {
		if math.Abs(quad[j]-want[j]) > 2e-3 {
			t.Errorf("quadrature moment %d = %.4f, HIPS reference %.3f", j, quad[j], want[j])
		}
	}
	got, se := flyMoments(t, p, exactmh.FlyMC{Bound: b, Q: 0.5, Scale: 1.5}, flySteps(300000), 2)
	checkFlyMoments(t, got, se, quad)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// float32Data returns simulateLogistic's data with the features rounded to
// float32, in both storages, and Poisson counts from the same features.
func float32Data(n int, w []float64, seed uint64) (x64 []float64, x32 []float32, y, counts []float64) {
	x64, y = simulateLogistic(n, w, seed)
	x32 = make([]float32, len(x64))
	for k, v := range x64 {
		x32[k] = float32(v)
		x64[k] = float64(x32[k])
	}
	d := len(w)
	rng := rand.New(rand.NewPCG(seed, 1))
	counts = make([]float64, n)
	for i := range counts {
		var z float64
		for j := range d {
			z += 0.2 * x64[i*d+j] * w[j]
		}
		// A Poisson draw by inversion (small means).
		lam, p, k := math.Exp(z), math.Exp(-math.Exp(z)), 0.0
		u, c := rng.Float64(), math.Exp(-lam)
		for u > c && k < 50 {
			k++
			p *= lam / k
			c += p
		}
		counts[i] = k
	}
	return x64, x32, y, counts
}

// agree reports a mismatch of got and want: bit for bit if exact, else to
// tol relative to 1 + |want| (the energies are O(1), and differences of
// them such as the FlyMC gaps carry the rounding of the energies).
func agree(t *testing.T, what string, got, want []float64, exact bool, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	for k := range got {
		if exact && math.Float64bits(got[k]) != math.Float64bits(want[k]) ||
			!exact && math.Abs(got[k]-want[k]) > tol*(1+math.Abs(want[k])) {
			t.Fatalf("%s[%d] = %v, float64 twin %v (exact %v)", what, k, got[k], want[k], exact)
		}
	}
}

// compareGLMs checks every datum method and bound of a float32 energy
// against its float64 twin on the same (float32-representable) data.
func compareGLMs(t *testing.T, name string, e32, e64 exactmh.GLM, prior exactmh.Prior, tol float64) {
	t.Helper()
	n, d := e64.Len(), e64.Dim()
	if e32.Len() != n || e32.Dim() != d {
		t.Fatalf("%s: %d×%d, twin %d×%d", name, e32.Len(), e32.Dim(), n, d)
	}
	exact := d < 16 // below shortVec the inner products are the same loop
	rng := rand.New(rand.NewPCG(3, 4))
	idx := make([]int, 64)
	for k := range idx {
		idx[k] = rng.IntN(n)
	}
	theta, theta2, w := make([]float64, d), make([]float64, d), make([]float64, len(idx))
	for j := range theta {
		theta[j], theta2[j] = 0.3*rng.NormFloat64(), 0.3*rng.NormFloat64()
	}
	for k := range w {
		w[k] = rng.Float64()
	}
	for i := range 3 {
		agree(t, name+": Row", e32.Row(i), e64.Row(i), true, 0)
	}
	a, b := make([]float64, len(idx)), make([]float64, len(idx))
	e32.Energies(a, theta, idx)
	e64.Energies(b, theta, idx)
	agree(t, name+": Energies", a, b, exact, tol)
	e32.(exactmh.EnergyDiffer).EnergyDiffs(a, theta, theta2, idx)
	e64.(exactmh.EnergyDiffer).EnergyDiffs(b, theta, theta2, idx)
	agree(t, name+": EnergyDiffs", a, b, exact, tol)
	ga, gb := make([]float64, d), make([]float64, d)
	e32.(exactmh.EnergyGradienter).EnergiesAndGradient(a, ga, theta, idx, w)
	e64.(exactmh.EnergyGradienter).EnergiesAndGradient(b, gb, theta, idx, w)
	agree(t, name+": EnergiesAndGradient", a, b, exact, tol)
	agree(t, name+": EnergiesAndGradient gradient", ga, gb, exact, tol)
	clear(ga)
	clear(gb)
	e32.(exactmh.Gradienter).AddGradient(ga, theta, idx, w)
	e64.(exactmh.Gradienter).AddGradient(gb, theta, idx, w)
	agree(t, name+": AddGradient", ga, gb, exact, tol)

	// Bounds come from set-up passes over converted rows: bit for bit.
	db32, err := e32.(exactmh.DiffBounder).DiffBound(prior)
	if err != nil {
		t.Fatal(err)
	}
	db64, _ := e64.(exactmh.DiffBounder).DiffBound(prior)
	agree(t, name+": DiffBound", db32.C, db64.C, true, 0)
	r32, err := e32.(exactmh.EnergyRanger).EnergyRange(prior)
	if err != nil {
		t.Fatal(err)
	}
	r64, _ := e64.(exactmh.EnergyRanger).EnergyRange(prior)
	agree(t, name+": EnergyRange.Lo", r32.Lo, r64.Lo, true, 0)
	agree(t, name+": EnergyRange.Width", r32.Width, r64.Width, true, 0)
	for order := 1; order <= 2; order++ {
		t32, err := e32.(exactmh.TaylorBounder).TaylorBound(order, prior)
		if err != nil {
			t.Fatal(err)
		}
		t64, _ := e64.(exactmh.TaylorBounder).TaylorBound(order, prior)
		agree(t, name+": TaylorBound", t32, t64, true, 0)
	}
	for _, at := range [][]float64{nil, theta2} {
		f32, err := e32.(exactmh.FlyBounder).FlyBound(at, prior)
		if err != nil {
			t.Fatal(err)
		}
		f64, _ := e64.(exactmh.FlyBounder).FlyBound(at, prior)
		if s32, s64 := f32.LogBoundSum(theta), f64.LogBoundSum(theta); s32 != s64 {
			t.Errorf("%s: FlyBound(%v).LogBoundSum = %v, twin %v", name, at, s32, s64)
		}
		f32.Gaps(a, theta, idx)
		f64.Gaps(b, theta, idx)
		agree(t, name+": FlyBound.Gaps", a, b, exact, tol)
	}
}

func TestGLM32MatchesFloat64(t *testing.T) {
	for _, d := range []int{3, 20} {
		w := make([]float64, d)
		for j := range w {
			w[j] = 1 / float64(j+1)
		}
		x64, x32, y, counts := float32Data(500, w, 11)
		box, _ := model.NewBox(filled(d, -2), filled(d, 2))

		l64, err := model.NewLogisticRegression(x64, y, d)
		if err != nil {
			t.Fatal(err)
		}
		l32, err := model.NewLogisticRegression32(x32, y, d)
		if err != nil {
			t.Fatal(err)
		}
		compareGLMs(t, "logistic", l32, l64, box, 1e-12)
		if l32.Label(7) != y[7] {
			t.Error("Label")
		}

		for _, fam := range []model.GLMFamily{model.PoissonFamily{}, model.GaussianFamily{Sigma: 0.7}} {
			resp := counts
			if _, ok := fam.(model.GaussianFamily); ok {
				resp = y
			}
			g64, err := model.NewGLM(x64, resp, d, fam)
			if err != nil {
				t.Fatal(err)
			}
			g32, err := model.NewGLM32(x32, resp, d, fam)
			if err != nil {
				t.Fatal(err)
			}
			compareGLMs(t, "GLM", g32, g64, box, 1e-12)
			if g32.Family() != fam || g32.Response(3) != resp[3] {
				t.Error("Family or Response")
			}
		}
	}
}

func filled(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestGLM32Errors(t *testing.T) {
	x := []float32{1, 2, 3, float32(math.NaN())}
	for _, c := range []struct {
		err  error
		want string
	}{
		{errOf(model.NewLogisticRegression32(x, []float64{0, 1}, 2)), "X[3] (row 1, column 1) = NaN"},
		{errOf(model.NewLogisticRegression32(x[:2], []float64{0, 2}, 1)), "label y[1] = 2"},
		{errOf(model.NewLogisticRegression32(x[:3], []float64{0, 1}, 2)), "len(X) = 3, want N·d = 2·2 = 4"},
		{errOf(model.NewGLM32(x[:2], []float64{0, 1}, 1, nil)), "nil family"},
		{errOf(model.NewGLM32(x[:2], []float64{0, math.Inf(1)}, 1, model.GaussianFamily{Sigma: 1})), "y[1] = +Inf"},
		{errOf(model.NewGLM32(x[:2], []float64{0, -1}, 1, model.PoissonFamily{})), "PoissonFamily"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one with %q", c.err, c.want)
		}
	}
	l, _ := model.NewLogisticRegression32(x[:2], []float64{0, 1}, 1)
	if _, err := l.TaylorBound(3, nil); err == nil {
		t.Error("TaylorBound(3): no error")
	}
	if _, err := l.FlyBound([]float64{1, 2}, nil); err == nil {
		t.Error("FlyBound of the wrong length: no error")
	}
	if _, err := l.FlyBoundXi(math.NaN()); err == nil {
		t.Error("FlyBoundXi(NaN): no error")
	}
}

func errOf[T any](_ T, err error) error { return err }

// TestGLM32Draws runs TFMH, TunaMH and, on the control variates, TunaMH
// with the Crank–Nicolson proposal on the float32 energy and its float64

// logisticTwins returns a logistic regression on 2000 simulated rows of
// d = 3 covariates, in float64 and float32 storage.
func logisticTwins(t *testing.T, seed uint64) (*model.LogisticRegression, *model.LogisticRegression32) {
	t.Helper()
	const d = 3
	x64, x32, y, _ := float32Data(2000, []float64{1, -1, 0.5}, seed)
	l64, err := model.NewLogisticRegression(x64, y, d)
	if err != nil {
		t.Fatal(err)
	}
	l32, err := model.NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return l64, l32
}

// twin: the draws agree bit for bit (d < 16).
func TestGLM32Draws(t *testing.T) {
	const d = 3
	l64, l32 := logisticTwins(t, 12)
	prior, _ := model.NewIsoGaussian(d, 10)
	p64 := &exactmh.Posterior{Energy: l64, Prior: prior}
	p32 := &exactmh.Posterior{Energy: l32, Prior: prior}
	ctx := context.Background()
	la64, err := exactmh.FindLaplace(ctx, p64, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	la32, err := exactmh.FindLaplace(ctx, p32, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	agree(t, "Laplace mean", la32.Mean, la64.Mean, true, 0)
	cv64, err := exactmh.ControlVariates(p64, la64)
	if err != nil {
		t.Fatal(err)
	}
	cv32, err := exactmh.ControlVariates(p32, la32)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := la64.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	set := func() *exactmh.Settings {
		return &exactmh.Settings{Chains: 1, Warmup: 200, Draws: 300, Seed: 5, Init: la64.Mean}
	}
	for _, c := range []struct {
		name     string
		p64, p32 *exactmh.Posterior
		k        exactmh.Kernel
	}{
		{"TFMH", p64, p32, exactmh.TFMH{}},
		{"TunaMH", p64, p32, exactmh.TunaMH{}},
		{"TunaMH-CV-CN", cv64, cv32, exactmh.TunaMH{Proposal: cn, Scale: 1}},
	} {
		r64, err := exactmh.Sample(ctx, c.p64, c.k, set())
		if err != nil {
			t.Fatalf("%s float64: %v", c.name, err)
		}
		r32, err := exactmh.Sample(ctx, c.p32, c.k, set())
		if err != nil {
			t.Fatalf("%s float32: %v", c.name, err)
		}
		if r64.Chains[0].Len() != r32.Chains[0].Len() {
			t.Fatalf("%s: %d draws, twin %d", c.name, r32.Chains[0].Len(), r64.Chains[0].Len())
		}
		for k := range r64.Chains[0].Len() {
			agree(t, c.name+" draw", r32.Draw(0, k), r64.Draw(0, k), true, 0)
		}
	}
}

// TestGLM32StepsAllocateNothing: the datum loops of the float32 energies,
// and of the control variates built on them, allocate nothing.
func TestGLM32StepsAllocateNothing(t *testing.T) {
	const d = 20
	x64, x32, y, _ := float32Data(300, filled(d, 0.1), 13)
	_ = x64
	l32, _ := model.NewLogisticRegression32(x32, y, d)
	prior, _ := model.NewIsoGaussian(d, 10)
	p := &exactmh.Posterior{Energy: l32, Prior: prior}
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := l32.FlyBound(la.Mean, nil)
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{0, 5, 17, 299, 42}
	dst, grad, w := make([]float64, len(idx)), make([]float64, d), filled(len(idx), 1)
	theta, theta2 := filled(d, 0.01), filled(d, -0.02)
	for name, f := range map[string]func(){
		"EnergyDiffs":         func() { l32.EnergyDiffs(dst, theta, theta2, idx) },
		"Energies":            func() { l32.Energies(dst, theta, idx) },
		"EnergiesAndGradient": func() { l32.EnergiesAndGradient(dst, grad, theta, idx, w) },
		"AddGradient":         func() { l32.AddGradient(grad, theta, idx, w) },
		"CV EnergyDiffs":      func() { cv.Energy.(exactmh.EnergyDiffer).EnergyDiffs(dst, theta, theta2, idx) },
		"CV Energies":         func() { cv.Energy.Energies(dst, theta, idx) },
		"FlyBound Gaps":       func() { fb.Gaps(dst, theta, idx) },
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
}

// TestControlVariatesRecomputed: beyond cvRecordLimit the control variates
// recompute ẑ_i, f_i′ and f_i″ from the row instead of storing them; the
// draws of every kernel on them, in float64 and float32 rows and under a
// bounded prior (per-datum K_i, and the Poisson kernels' energy ranges),
// must be the same bit for bit.
func TestControlVariatesRecomputed(t *testing.T) {
	const d = 3
	l64, l32 := logisticTwins(t, 13)
	gauss, _ := model.NewIsoGaussian(d, 10)
	box, _ := model.NewBox([]float64{-3, -3, -3}, []float64{3, 3, 3})
	// A box about the posterior (θ = (1, −1, 0.5), sds about 0.06), where
	// the remainders' ranges are small enough for the Poisson kernels.
	tight, _ := model.NewBox([]float64{0.6, -1.4, 0.1}, []float64{1.4, -0.6, 0.9})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    *exactmh.Posterior
		k    exactmh.Kernel
	}{
		{"TFMH-CV float64", &exactmh.Posterior{Energy: l64, Prior: gauss}, exactmh.TFMH{}},
		{"TunaMH-CV float32", &exactmh.Posterior{Energy: l32, Prior: gauss}, exactmh.TunaMH{}},
		{"TFMH-CV box", &exactmh.Posterior{Energy: l64, Prior: box}, exactmh.TFMH{}},
		{"PoissonMH-CV box", &exactmh.Posterior{Energy: l64, Prior: tight}, exactmh.PoissonMH{MaxBatch: math.Inf(1)}},
		{"Poisson-MALA-CV float32 box", &exactmh.Posterior{Energy: l32, Prior: tight}, exactmh.PoissonMALA{MaxBatch: math.Inf(1)}},
	} {
		la, err := exactmh.FindLaplace(ctx, c.p, []float64{1, -1, 0.5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		draws := func(limit int) *exactmh.Result {
			defer exactmh.SetCVRecordLimit(limit)()
			cv, err := exactmh.ControlVariates(c.p, la)
			if err != nil {
				t.Fatal(err)
			}
			res, err := exactmh.Sample(ctx, cv, c.k, &exactmh.Settings{Chains: 1, Warmup: 200, Draws: 300, Seed: 5, Init: la.Mean})
			if err != nil {
				t.Fatalf("%s (limit %d): %v", c.name, limit, err)
			}
			return res
		}
		stored, recomputed := draws(1<<30), draws(0)
		if stored.Chains[0].Len() != recomputed.Chains[0].Len() {
			t.Fatalf("%s: %d draws stored, %d recomputed", c.name, stored.Chains[0].Len(), recomputed.Chains[0].Len())
		}
		moved := false
		for k := range stored.Chains[0].Len() {
			agree(t, c.name+" draw", recomputed.Draw(0, k), stored.Draw(0, k), true, 0)
			moved = moved || stored.Draw(0, k)[0] != stored.Draw(0, 0)[0]
		}
		if !moved {
			t.Errorf("%s: the chain never moved, so the comparison shows nothing", c.name)
		}
	}
}

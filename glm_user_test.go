// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// This file is what a user writes for a model the package does not offer:
// the complementary log-log GLM, P(y = 1) = 1 − exp(−e^z), written only
// against the exported contract — once as a GLMFamily for NewGLM and once as
// a type implementing GLM directly, with no fast paths and no bounds of its
// own.

// cloglogFamily is f(1, z) = −log(1 − e^{−u}), f(0, z) = u, u = e^z.
type cloglogFamily struct{}

func (cloglogFamily) Loss(y, z float64) float64 {
	u := math.Exp(z)
	if y == 0 {
		return u
	}
	return -math.Log(-math.Expm1(-u))
}

// LossDerivs: for y = 1, f′ = −u e^{−u}/(1 − e^{−u}) and
// f″ = u e^{−u}(u − 1 + e^{−u})/(1 − e^{−u})²; for y = 0 both are u.
func (cloglogFamily) LossDerivs(y, z float64) (f1, f2 float64) {
	u := math.Exp(z)
	if y == 0 {
		return u, u
	}
	em, d := math.Exp(-u), -math.Expm1(-u)
	return -u * em / d, u * em * (u + math.Expm1(-u)) / (d * d)
}

// LossBound: for y = 0 every derivative is e^z, increasing, so e^hi; for
// y = 1 the global suprema of |f′|, |f″|, |f‴| are 1, 0.41253 and 0.42605
// (found on a grid of step 10⁻⁵ in z), rounded up.
func (cloglogFamily) LossBound(y float64, k int, lo, hi float64) float64 {
	if k < 1 || k > 3 {
		return math.Inf(1)
	}
	if y == 0 {
		return math.Exp(hi)
	}
	return [...]float64{1, 0.42, 0.43}[k-1]
}

// cloglogGLM implements GLM and nothing else: Energy (Len, Dim, Energies),
// Row, Loss, LossDerivs, LossBound.
type cloglogGLM struct {
	x, y []float64
	d    int
}

var _ exactmh.GLM = (*cloglogGLM)(nil)

func (e *cloglogGLM) Len() int                      { return len(e.y) }
func (e *cloglogGLM) Dim() int                      { return e.d }
func (e *cloglogGLM) Row(i int) []float64           { return e.x[i*e.d : (i+1)*e.d] }
func (e *cloglogGLM) Loss(i int, z float64) float64 { return cloglogFamily{}.Loss(e.y[i], z) }
func (e *cloglogGLM) LossDerivs(i int, z float64) (float64, float64) {
	return cloglogFamily{}.LossDerivs(e.y[i], z)
}
func (e *cloglogGLM) LossBound(i, k int, lo, hi float64) float64 {
	return cloglogFamily{}.LossBound(e.y[i], k, lo, hi)
}
func (e *cloglogGLM) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		var z float64
		for j, v := range e.Row(i) {
			z += v * theta[j]
		}
		dst[k] = e.Loss(i, z)
	}
}

// The exported contract is enough: FindMAP, SMH-2, FlyMC with the generic
// quadratic bound and TunaMH with the generic DiffBound, and PoissonMH's
// generic range (checked; at N = 300 untempered its batches are too large to
// run here) all run on the bare cloglogGLM and agree with MH; and the
// family through NewGLM gives the same chains bit for bit.
func TestUserGLM(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow statistical check (five kernels on a user's GLM against MH): runs without -short")
	}
	ctx := context.Background()
	c := simGLM("cloglog", 300, 11)
	raw := &cloglogGLM{x: c.x, y: c.y, d: 2}
	var e exactmh.Energy = raw
	for name, ok := range map[string]bool{
		"EnergyDiffer":  is[exactmh.EnergyDiffer](e),
		"Gradienter":    is[exactmh.Gradienter](e),
		"DiffBounder":   is[exactmh.DiffBounder](e),
		"EnergyRanger":  is[exactmh.EnergyRanger](e),
		"TaylorBounder": is[exactmh.TaylorBounder](e),
		"FlyBounder":    is[exactmh.FlyBounder](e),
	} {
		if ok {
			t.Fatalf("the bare GLM implements %s", name)
		}
	}
	fam := c.energy(t)
	ball, _ := model.NewBall(2, 3, nil)
	p := &exactmh.Posterior{Energy: raw, Prior: ball}
	pf := &exactmh.Posterior{Energy: fam, Prior: ball}
	m, err := exactmh.FindMAP(ctx, p, []float64{0, 0}, nil)
	if err != nil {
		t.Fatalf("FindMAP on the bare GLM: %v", err)
	}
	mf, err := exactmh.FindMAP(ctx, pf, []float64{0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.Theta[0]-mf.Theta[0]) > 1e-9 || math.Abs(m.Theta[1]-mf.Theta[1]) > 1e-9 {
		t.Errorf("MAP of the bare GLM %v, of NewGLM's %v", m.Theta, mf.Theta)
	}
	// The generic bounds hold.
	db, err := p.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	opt := &exactmh.CheckOptions{Points: 100, Spread: 2, Seed: 4}
	if _, err := exactmh.CheckBound(p, db, opt); err != nil {
		t.Error(err)
	}
	r, err := p.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.CheckRange(p, r, opt); err != nil {
		t.Error(err)
	}
	fb, err := exactmh.GLMFlyBound(raw, m.Theta, ball)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.CheckFlyBound(p, fb, opt); err != nil {
		t.Error(err)
	}

	set := func(draws int, seed uint64) *exactmh.Settings {
		return &exactmh.Settings{Chains: 4, Warmup: 500, Draws: draws, Seed: seed, Init: m.Theta}
	}
	mh, err := exactmh.Sample(ctx, p, exactmh.MH{}, set(8000, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []struct {
		k     exactmh.Kernel
		draws int
	}{
		{exactmh.SMH{Order: 2, Center: m.Theta}, 4000},
		{exactmh.FlyMC{TightAt: m.Theta, Q: 0.1}, 16000}, // the brightness variables slow its mixing
		{exactmh.TunaMH{}, 4000},
	} {
		k := run.k
		res, err := exactmh.Sample(ctx, p, k, set(run.draws, 2))
		if err != nil {
			t.Fatalf("%s on the bare GLM: %v", k.Name(), err)
		}
		postMeanCheck(t, "cloglog", res, mh, 4)
		tot := res.Sampling()
		t.Logf("%s: accept %.3f, batch %.2f, evals/step %.2f", k.Name(), tot.AcceptRate(), tot.MeanBatch(), tot.EvalsPerStep())
		// NewGLM's energy with the same family makes the same chain.
		resf, err := exactmh.Sample(ctx, pf, k, set(run.draws, 2))
		if err != nil {
			t.Fatal(err)
		}
		for ch := range res.Chains {
			for i := range res.Chains[ch].Len() {
				a, b := res.Draw(ch, i), resf.Draw(ch, i)
				if a[0] != b[0] || a[1] != b[1] {
					t.Fatalf("%s: draw %d of chain %d is %v on the bare GLM, %v through NewGLM", k.Name(), i, ch, a, b)
				}
			}
		}
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// userLogistic is a user's own logistic regression: the GLM contract plus
// the fast-path contract (exactmh.DenseGLM), written with nothing from the
// package but its exported interfaces.
type userLogistic struct {
	x, y []float64
	d    int
}

func (u *userLogistic) Len() int            { return len(u.y) }
func (u *userLogistic) Dim() int            { return u.d }
func (u *userLogistic) Row(i int) []float64 { return u.x[i*u.d : (i+1)*u.d] }
func (u *userLogistic) softplus(z float64) float64 {
	return max(z, 0) + math.Log1p(math.Exp(-math.Abs(z)))
}

func (u *userLogistic) Loss(i int, z float64) float64 { return u.softplus(z) - u.y[i]*z }

func (u *userLogistic) sigmoid(z float64) float64 {
	if z < 0 {
		e := math.Exp(z)
		return e / (1 + e)
	}
	return 1 / (1 + math.Exp(-z))
}

func (u *userLogistic) LossDerivs(i int, z float64) (f1, f2 float64) {
	s := u.sigmoid(z)
	return s - u.y[i], s * (1 - s)
}

// LossDeriv3 and LossBound4 let ControlVariates expand to third order, as
// it does LogisticRegression: f‴ = σ(1 − σ)(1 − 2σ), |f⁗| ≤ 1/8.
func (u *userLogistic) LossDeriv3(_ int, z float64) float64 {
	s := u.sigmoid(z)
	return s * (1 - s) * (1 - 2*s)
}

func (u *userLogistic) LossBound4(int, float64, float64) float64 { return 0.125 }

func (u *userLogistic) LossBound(_, k int, _, _ float64) float64 {
	if k < 1 || k > 3 {
		return math.Inf(1)
	}
	return [...]float64{1, 0.25, 1 / (6 * math.Sqrt(3))}[k-1] // |σ(1−σ)(1−2σ)| ≤ 1/(6√3)
}

func (u *userLogistic) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		var z float64
		for j, v := range u.Row(i) {
			z += v * theta[j]
		}
		dst[k] = u.Loss(i, z)
	}
}

func (u *userLogistic) DenseRows() exactmh.DenseRows {
	return exactmh.DenseRows{X: u.x, Y: u.y, Logistic: true}
}

// userGLMPair returns the same logistic data as the package's
// LogisticRegression and as userLogistic, each in a posterior with the
// prior N(0, 2.5²), and the Laplace approximation of the first.
func userGLMPair(tb testing.TB, n, d int) (pkg, user *exactmh.Posterior, la *exactmh.LaplaceApprox) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range y {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += 0.3 * x[i*d+j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	lr, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		tb.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 2.5)
	if err != nil {
		tb.Fatal(err)
	}
	pkg = &exactmh.Posterior{Energy: lr, Prior: prior}
	user = &exactmh.Posterior{Energy: &userLogistic{x: x, y: y, d: d}, Prior: prior}
	la, err = exactmh.FindLaplace(context.Background(), pkg, make([]float64, d), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return pkg, user, la
}

// TestUserDenseGLMAsLogisticRegression checks that a user's logistic
// DenseGLM takes the package's fast paths: TFMH-CV-CN and SMH-2-CN draw
// from it what they draw from LogisticRegression on the same data, bit for
// bit, at the same seed (the inlined loss is the package's expression).
func TestUserDenseGLMAsLogisticRegression(t *testing.T) {
	pkg, user, la := userGLMPair(t, 4000, 5)
	for _, k := range []exactmh.Kernel{exactmh.TFMH{}, exactmh.SMH{Order: 2, Center: la.Mean}} {
		var draws [2][]float64
		for j, p := range []*exactmh.Posterior{pkg, user} {
			kk, pp, name, err := exactmh.WithLaplace(p, la, k, true, true)
			if err != nil {
				t.Fatal(err)
			}
			res, err := exactmh.Sample(context.Background(), pp, kk, &exactmh.Settings{Chains: 1, Warmup: 100, Draws: 200, Seed: 3, Init: la.Mean})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			draws[j] = res.Chains[0].Draws
		}
		if len(draws[0]) == 0 || len(draws[0]) != len(draws[1]) {
			t.Fatalf("%T: %d and %d draws", k, len(draws[0]), len(draws[1]))
		}
		for j := range draws[0] {
			if draws[0][j] != draws[1][j] {
				t.Fatalf("%T: draw %d, θ[%d]: LogisticRegression %v, user's DenseGLM %v", k, j/5, j%5, draws[0][j], draws[1][j])
			}
		}
	}
}

// BenchmarkUserGLM times TFMH-CV-CN's step on LogisticRegression and on a
// user's logistic DenseGLM over the same data (N = 10⁵, d = 20), at the
// MAP with the step scale 1: the per-datum cost must be the same.
func BenchmarkUserGLM(b *testing.B) {
	pkg, user, la := userGLMPair(b, 100_000, 20)
	for _, c := range []struct {
		name string
		p    *exactmh.Posterior
	}{{"LogisticRegression", pkg}, {"user", user}} {
		b.Run(c.name, func(b *testing.B) {
			k, p, _, err := exactmh.WithLaplace(c.p, la, exactmh.TFMH{KeepMinibatch: true}, true, true)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkKernelAt(b, p, k, la.Mean)
		})
	}
}

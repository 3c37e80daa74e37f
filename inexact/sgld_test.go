// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/model"
)

// sgldGaussian is a 1-D conjugate Gaussian: N = 1000 data y_i ~ N(0.5, 1),
// U_i(θ) = (θ − y_i)²/2, prior N(0, 10²). It returns the posterior, its
// mean and variance 1/λ (λ = N + 1/100), and the stationary mean and
// variance of SGLD with step eps and batch m, which on this target is the
// AR(1) process θ′ − μ = a(θ − μ) + (ε²/2)·N(ȳ_B − ȳ) + εξ, a = 1 − ε²λ/2:
// variance (ε² + (ε⁴/4)·N²·Var(ȳ_B))/(1 − a²), Var(ȳ_B) = (S²/m)(N − m)/(N − 1)
// for a batch drawn without replacement (S² the data's variance, divisor N).
func sgldGaussian(t *testing.T, eps float64, m int) (p *exactmh.Posterior, mean, postVar, sgldVar float64) {
	t.Helper()
	const n = 1000
	rng := rand.New(rand.NewPCG(17, 17))
	y := make([]float64, n)
	var sum float64
	for i := range y {
		y[i] = 0.5 + rng.NormFloat64()
		sum += y[i]
	}
	ybar := sum / n
	var s2 float64
	for _, v := range y {
		s2 += (v - ybar) * (v - ybar) / n
	}
	e, err := model.NewGaussianMean(y, 1, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		t.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(1, 10)
	if err != nil {
		t.Fatal(err)
	}
	lambda := n + 1.0/100
	a := 1 - eps*eps*lambda/2
	varBatch := s2 / float64(m) * float64(n-m) / float64(n-1)
	sgldVar = (eps*eps + math.Pow(eps, 4)/4*n*n*varBatch) / (1 - a*a)
	return &exactmh.Posterior{Energy: e, Prior: prior}, sum / lambda, 1 / lambda, sgldVar
}

// SGLD's stationary variance on a conjugate Gaussian is the inflated one
// its documentation gives — the discretisation's 1/(1 − ε²λ/4) and the
// minibatch gradient's noise — not the posterior's, and its mean (the
// drift is linear) is the posterior's.
func TestSGLDGaussianBias(t *testing.T) {
	t.Parallel()
	const eps, m = 0.01414, 100 // ε²λ/2 ≈ 0.1
	p, mean, postVar, want := sgldGaussian(t, eps, m)
	draws := 20000
	if testing.Short() {
		draws = 10000
	}
	set := &exactmh.Settings{Chains: 4, Warmup: 200, Draws: draws, Seed: 3, Init: []float64{mean}}
	res, err := exactmh.Sample(context.Background(), p, inexact.SGLD{Scale: eps, BatchSize: m}, set)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exact {
		t.Error("SGLD claims to be exact")
	}
	if s := res.Chains[0].Params["step"]; s != eps {
		t.Errorf("step %v after warmup, want %v unchanged", s, eps)
	}
	mu, mse, v, vse := pooledMoments(res, 0)
	if !(math.Abs(mu-mean) <= 4*mse) {
		t.Errorf("mean %.5f ± %.5f, want the posterior's %.5f", mu, mse, mean)
	}
	if !(math.Abs(v-want) <= 4*vse) {
		t.Errorf("variance %.4g ± %.2g, want SGLD's stationary %.4g", v, vse, want)
	}
	if math.Abs(v-postVar) < 6*vse {
		t.Errorf("variance %.4g ± %.2g is within 6 se of the posterior's %.4g: no bias shown", v, vse, postVar)
	}
	tot := res.Sampling()
	if tot.MeanBatch() != m || tot.AcceptRate() != 1 {
		t.Errorf("mean batch %v, accept %v; want %d, 1", tot.MeanBatch(), tot.AcceptRate(), m)
	}
	t.Logf("SGLD ε = %v, m = %d: variance %.4g ± %.2g (stationary %.4g), posterior %.4g: %.0f%% too wide",
		eps, m, v, vse, want, postVar, 100*(v/postVar-1))
}

// SGLD's bias does not shrink with longer runs: at the same step, a run 8
// times longer has a quarter of the Monte Carlo error or less and the same
// error in the variance.
func TestSGLDBiasPersists(t *testing.T) {
	t.Parallel()
	const eps, m = 0.01414, 100
	p, mean, postVar, want := sgldGaussian(t, eps, m)
	short := 2500
	if testing.Short() {
		short = 1500
	}
	var errs, ses [2]float64
	for r, draws := range []int{short, 8 * short} {
		set := &exactmh.Settings{Chains: 4, Warmup: 200, Draws: draws, Seed: 5, Init: []float64{mean}}
		res, err := exactmh.Sample(context.Background(), p, inexact.SGLD{Scale: eps, BatchSize: m}, set)
		if err != nil {
			t.Fatal(err)
		}
		_, _, v, vse := pooledMoments(res, 0)
		errs[r], ses[r] = v-postVar, vse
		if !(errs[r] >= 4*vse) {
			t.Errorf("%d draws per chain: variance %.4g ± %.2g, not clearly above the posterior's %.4g", draws, v, vse, postVar)
		}
		t.Logf("%6d draws per chain: variance error %.3g ± %.2g (the stationary law's %.3g)", draws, errs[r], vse, want-postVar)
	}
	if !(ses[1] <= ses[0]/2) {
		t.Errorf("MCSE %.2g with 8 times the draws, %.2g before: should halve at least", ses[1], ses[0])
	}
	if d := math.Abs(errs[1] - errs[0]); !(d <= 4*math.Hypot(ses[0], ses[1])) {
		t.Errorf("the variance error moved from %.3g to %.3g with a longer run: the bias should stay put", errs[0], errs[1])
	}
	if errs[1] < errs[0]/2 {
		t.Errorf("the variance error shrank from %.3g to %.3g", errs[0], errs[1])
	}
}

// SGLD refuses a target without gradients and bad settings.
func TestSGLDErrors(t *testing.T) {
	p, mean, _, _ := sgldGaussian(t, 0.01, 10)
	for _, k := range []inexact.SGLD{{BatchSize: -1}, {Scale: -1}, {Scale: math.Inf(1)}} {
		if _, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Draws: 10, Init: []float64{mean}}); err == nil {
			t.Errorf("%+v: no error", k)
		}
	}
	noGrad := &exactmh.Posterior{Energy: hiddenGradient{p.Energy}, Prior: p.Prior}
	_, err := exactmh.Sample(context.Background(), noGrad, inexact.SGLD{}, &exactmh.Settings{Draws: 10, Init: []float64{mean}})
	if !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("without gradients: %v, want ErrNoGradient", err)
	}
}

func BenchmarkSGLDStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), inexact.SGLD{Scale: 1e-3})
}

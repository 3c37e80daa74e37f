// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/model"
)

// AustereMH, the approximate sequential test, is INEXACT: its chain
// converges to a distribution that differs from the posterior, the more so
// the larger the test level Epsilon and the smaller the increment
// BatchSize. It is there to measure cost and bias against the exact
// kernels; Result.Exact says so, and Summary prints "INEXACT".
func ExampleAustereMH() {
	post := logisticPosterior() // as in exactmh's ExampleMH
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: 1}
	res, err := exactmh.Sample(context.Background(), post, inexact.AustereMH{Epsilon: 0.05, BatchSize: 10}, set)
	if err != nil {
		panic(err)
	}
	// The exact posterior, from MH with the same settings.
	ref, err := exactmh.Sample(context.Background(), post, exactmh.MH{}, set)
	if err != nil {
		panic(err)
	}
	post1, aust1 := ref.Summary().Params[0], res.Summary().Params[0]
	fmt.Printf("%s (exact %v): mean batch below N/2: %v\n", res.Kernel, res.Exact, res.Sampling().MeanBatch() < float64(res.N)/2)
	fmt.Println("its mean of θ1 over half a posterior sd too high:", aust1.Mean > post1.Mean+post1.SD/2)
	fmt.Println("its sd of θ1 over twice the posterior's:", aust1.SD > 2*post1.SD)
	// Output:
	// AustereMH (exact false): mean batch below N/2: true
	// its mean of θ1 over half a posterior sd too high: true
	// its sd of θ1 over twice the posterior's: true
}

// MHBT, MH with batch tempering, is INEXACT by design: its chain targets
// approximately the posterior raised to the power 1/T, T = N/c_n. For a
// Gaussian mean with a flat prior that is N(ȳ, I/c_n): the draws spread
// √T times wider than the posterior, whatever N.
func ExampleMHBT() {
	const n, cn = 1000, 4.0
	y := simulateGaussian(n, []float64{1, -1}, 1, 2)
	e, err := model.NewGaussianMean(y, 2, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil {
		panic(err)
	}
	post := &exactmh.Posterior{Energy: e} // flat prior: N(ȳ, I/N)
	// m = 100 data per step; the MHBT paper keeps c_n below √m.
	k := inexact.MHBT{BatchSize: 100, Cn: cn}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 1, Init: []float64{1, -1}, TargetAccept: 0.3}
	res, err := exactmh.Sample(context.Background(), post, k, set)
	if err != nil {
		panic(err)
	}
	s := res.Summary("theta1", "theta2")
	fmt.Printf("%s (exact %v): T = N/c_n = %.0f, batch %.0f\n", res.Kernel, res.Exact, res.Chains[0].Params["T"], s.MeanBatch)
	fmt.Printf("posterior sd 1/√N = %.2f, tempered 1/√c_n = %.2f\n", 1/math.Sqrt(n), 1/math.Sqrt(cn))
	for _, p := range s.Params {
		fmt.Printf("%s: sd of the draws within 20%% of 0.5: %v\n", p.Name, math.Abs(p.SD/0.5-1) < 0.2)
	}
	// Output:
	// MHBT (exact false): T = N/c_n = 250, batch 100
	// posterior sd 1/√N = 0.03, tempered 1/√c_n = 0.50
	// theta1: sd of the draws within 20% of 0.5: true
	// theta2: sd of the draws within 20% of 0.5: true
}

// The root package's example helpers (its example_kernels_test.go).

// simulateLogistic returns n data of a logistic regression with
// coefficients w: features x_ij ~ N(0, 1) (row-major) and labels y_i ∈ {0, 1}
// with P(y_i = 1) = σ(x_iᵀw).
func simulateLogistic(n int, w []float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	d := len(w)
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * w[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y
}

// simulateGaussian returns n points y_i ~ N(mu, sd²·I) (row-major), shifted
// so that their sample mean is exactly mu.
func simulateGaussian(n int, mu []float64, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := len(mu)
	y := make([]float64, n*d)
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			y[i*d+j] = mu[j] + sd*rng.NormFloat64()
			mean[j] += y[i*d+j] / float64(n)
		}
	}
	for i := range n {
		for j := range d {
			y[i*d+j] += mu[j] - mean[j]
		}
	}
	return y
}

// logisticPosterior returns the logistic-regression posterior of the
// examples.
func logisticPosterior() *exactmh.Posterior {
	x, y := simulateLogistic(400, []float64{1, -1}, 41)
	e, err := model.NewLogisticRegression(x, y, 2)
	if err != nil {
		panic(err)
	}
	prior, _ := model.NewIsoGaussian(2, 10)
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

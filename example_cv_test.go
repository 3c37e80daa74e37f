// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// ExampleControlVariates samples a logistic regression of 20,000 data with
// TunaMH on the control-variate rewrite of the posterior: each step reads a
// handful of data, not 20,000.
func ExampleControlVariates() {
	const n, d = 20000, 3
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * float64(j-1)
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, _ := model.NewLogisticRegression(x, y, d)
	post := &exactmh.Posterior{Energy: e}
	ctx := context.Background()
	la, err := exactmh.FindLaplace(ctx, post, make([]float64, d), nil)
	if err != nil {
		panic(err)
	}
	cv, err := exactmh.ControlVariates(post, la) // the same target, rewritten
	if err != nil {
		panic(err)
	}
	cn, _ := la.CrankNicolson()
	res, err := exactmh.Sample(ctx, cv, exactmh.TunaMH{Proposal: cn, Scale: 1},
		&exactmh.Settings{Chains: 2, Warmup: 500, Draws: 5000, Seed: 1, Init: la.Mean})
	if err != nil {
		panic(err)
	}
	fmt.Printf("data read per step < 20: %v\n", res.Sampling().EvalsPerStep() < 20)
	m, close := res.Mean(), true
	for j := range m {
		close = close && math.Abs(m[j]-la.Mean[j]) < 0.2*math.Sqrt(la.Covariance().At(j, j))
	}
	fmt.Printf("posterior mean within 0.2 sd of the Laplace mean: %v\n", close)
	// Output:
	// data read per step < 20: true
	// posterior mean within 0.2 sd of the Laplace mean: true
}

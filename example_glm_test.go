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

// Poisson regression through NewGLM: the family supplies the loss, its
// derivatives and bounds, and every kernel runs on the result. Here FindMAP
// gives SMH-2 its centre, and SMH-2 samples the posterior reading a few
// data per step instead of all 2000.
func ExampleNewGLM() {
	// 2000 counts with log-rate 0.5·x_i1 − 0.3·x_i2, x_ij ~ N(0, 1).
	rng := rand.New(rand.NewPCG(1, 1))
	const n, d = 2000, 2
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		x[i*d], x[i*d+1] = rng.NormFloat64(), rng.NormFloat64()
		rate := math.Exp(0.5*x[i*d] - 0.3*x[i*d+1])
		for p := rng.Float64(); p > math.Exp(-rate); p *= rng.Float64() {
			y[i]++ // Knuth's Poisson sampler
		}
	}
	e, err := model.NewGLM(x, y, d, model.PoissonFamily{})
	if err != nil {
		panic(err)
	}
	// The Poisson loss's derivatives are unbounded on ℝᵈ: its bounds need a
	// bounded support.
	ball, _ := model.NewBall(d, 2, nil)
	post := &exactmh.Posterior{Energy: e, Prior: ball}

	ctx := context.Background()
	m, err := exactmh.FindMAP(ctx, post, make([]float64, d), nil)
	if err != nil {
		panic(err)
	}
	res, err := exactmh.Sample(ctx, post, exactmh.SMH{Order: 2, Center: m.Theta},
		&exactmh.Settings{Draws: 2000, Seed: 3, Init: m.Theta})
	if err != nil {
		panic(err)
	}
	s := res.Summary("b1", "b2")
	fmt.Printf("MAP (%.1f, %.1f)\n", m.Theta[0], m.Theta[1])
	// How many data a step reads depends here on the chains' random
	// streams: on this small posterior (N = 2000, a ball of radius 2) the
	// remainders' bound is loose enough that a chain's warmup may find
	// full-batch MH faster and switch to it (Result.Summary says so).
	fmt.Printf("posterior mean (%.1f, %.1f)\n", s.Params[0].Mean, s.Params[1].Mean)
	// Output:
	// MAP (0.5, -0.3)
	// posterior mean (0.5, -0.3)
}

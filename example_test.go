package exactmh_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// Sample a logistic-regression posterior with full-batch MH and read the
// Summary's figures.
func ExampleSample() {
	// 500 data points, 2 features, true coefficients (1, −2).
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 500, 2
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		x[i*d], x[i*d+1] = rng.NormFloat64(), rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-(x[i*d]-2*x[i*d+1]))) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		panic(err)
	}
	prior, _ := model.NewIsoGaussian(d, 10)
	post := &exactmh.Posterior{Energy: e, Prior: prior}

	res, err := exactmh.Sample(context.Background(), post, exactmh.MH{}, &exactmh.Settings{Draws: 4000, Seed: 7})
	if err != nil {
		panic(err)
	}
	s := res.Summary("w1", "w2")
	fmt.Printf("%s: %d chains × %d draws, %.0f evaluations per step\n", s.Kernel, s.Chains, s.Draws, s.EvalsPerStep)
	fmt.Printf("posterior means near the truth: %v\n",
		math.Abs(s.Params[0].Mean-1) < 0.3 && math.Abs(s.Params[1].Mean+2) < 0.3)
	fmt.Printf("converged (R-hat < 1.01, ESS > 400): %v\n", s.MaxRHat() < 1.01 && s.MinESSBulk() > 400)
	// Output:
	// MH: 4 chains × 4000 draws, 500 evaluations per step
	// posterior means near the truth: true
	// converged (R-hat < 1.01, ESS > 400): true
}

// CheckBound searches for pairs (θ, θ′) that violate a difference bound:
// here a logistic-regression bound with constants 10× too small.
func ExampleCheckBound() {
	x := []float64{1, 2, -1, 0.5, 3, -2}
	y := []float64{1, 0, 1}
	e, _ := model.NewLogisticRegression(x, y, 2)
	post := &exactmh.Posterior{Energy: e}
	b, _ := post.DiffBound()
	for i := range b.C {
		b.C[i] /= 10
	}
	v, err := exactmh.CheckBound(post, b, nil)
	var violation *exactmh.BoundViolation
	fmt.Println(errors.As(err, &violation), v.Ratio > 1)
	// Output: true true
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// With ε → 0 or m = N the sequential test reads all the data and makes the
// exact MH decision, l̄ > μ0, for every (θ, θ′, u).
func TestAustereExactLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 500
	y := make([]float64, 2*n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	e, err := model.NewGaussianMean(y, 2, mat.NewSymDense(2, []float64{1, 0.2, 0.2, 1}))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := exactmh.NewTarget(&exactmh.Posterior{Energy: e, Beta: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []AustereMH{{Epsilon: 1e-300, BatchSize: 30}, {BatchSize: n}} {
		ch, err := k.Start(tg, []float64{0, 0})
		if err != nil {
			t.Fatal(err)
		}
		c := ch.(*austereChain)
		disagree, used := 0, 0
		for range 2000 {
			for j := range c.next {
				c.next[j] = c.theta[j] + 0.05*rng.NormFloat64()
			}
			logU := math.Log(rng.Float64())
			u0, _ := tg.TotalEnergy(c.theta)
			u1, _ := tg.TotalEnergy(c.next)
			exact := u0-u1 > logU // Σl_i > N·μ0
			got, m, err := c.test(rng, logU)
			if err != nil {
				t.Fatal(err)
			}
			used += m
			if got != exact {
				disagree++
			}
		}
		if disagree > 0 {
			t.Errorf("ε = %v, m = %d: %d of 2000 decisions differ from MH's", k.Epsilon, k.BatchSize, disagree)
		}
		t.Logf("ε = %v, m = %d: all decisions equal MH's, mean data used %.0f of %d", k.Epsilon, k.BatchSize, float64(used)/2000, n)
	}
}

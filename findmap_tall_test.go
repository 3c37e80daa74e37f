// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
)

// simTallLogistic simulates a logistic regression with n data in d
// dimensions: an intercept column and d − 1 standard normal covariates,
// true coefficients drawn from N(0, 0.5²).
func simTallLogistic(t testing.TB, n, d int, seed uint64) *exactmh.LogisticRegression {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = 0.5 * rng.NormFloat64()
	}
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		row := x[i*d : (i+1)*d]
		row[0] = 1
		var z float64
		for j := range row {
			if j > 0 {
				row[j] = rng.NormFloat64()
			}
			z += row[j] * beta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := exactmh.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFindMAPTallTiming measures FindMAP on simulated tall logistic
// regressions (N = 10⁶, d = 15 and N = 10⁵, d = 50): passes over the data
// and wall time. It allocates about 150 MB and runs for seconds, so it runs
// only with EXACTMH_MAPBENCH=1:
//
//	EXACTMH_MAPBENCH=1 go test -run TestFindMAPTallTiming -v .
func TestFindMAPTallTiming(t *testing.T) {
	if os.Getenv("EXACTMH_MAPBENCH") == "" {
		t.Skip("set EXACTMH_MAPBENCH=1 to run")
	}
	for _, c := range []struct{ n, d int }{{1000000, 15}, {100000, 50}} {
		e := simTallLogistic(t, c.n, c.d, 1)
		p := &exactmh.Posterior{Energy: e}
		start := time.Now()
		m, err := exactmh.FindMAP(context.Background(), p, make([]float64, c.d), nil)
		wall := time.Since(start)
		if err != nil {
			t.Errorf("N = %d, d = %d: %v", c.n, c.d, err)
		}
		if m == nil {
			continue
		}
		n := float64(c.n)
		t.Logf("N = %d, d = %d: %v, %d iterations, energy passes %.0f, gradient passes %.0f, ‖∇‖ = %.3g, log π = %.6f",
			c.n, c.d, wall.Round(time.Millisecond), m.Iterations, float64(m.Evals)/n, float64(m.GradEvals)/n, m.GradNorm, m.LogDensity)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// simTallLogistic simulates a logistic regression with n data in d
// dimensions: an intercept column and d − 1 standard normal covariates,
// true coefficients drawn from N(0, 0.5²). With skew, covariate j is
// instead 10^{3(j−1)/(d−2)}·(u_j + 0.7u_0), u standard normal — scales from
// 1 to 1000 and correlations of 1/3, as raw covariates (miles, minutes,
// counts) have — and its coefficient is divided by its scale.
func simTallLogistic(t testing.TB, n, d int, seed uint64, skew bool) *model.LogisticRegression {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	beta, scale := make([]float64, d), make([]float64, d)
	for j := range beta {
		scale[j] = 1
		if skew && j > 0 {
			scale[j] = math.Pow(10, 3*float64(j-1)/float64(d-2))
		}
		beta[j] = 0.5 * rng.NormFloat64() / scale[j]
	}
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		row := x[i*d : (i+1)*d]
		row[0] = 1
		var z float64
		u0 := rng.NormFloat64()
		for j := range row {
			if j > 0 {
				row[j] = rng.NormFloat64()
				if skew {
					row[j] = scale[j] * (row[j] + 0.7*u0)
				}
			}
			z += row[j] * beta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestFindMAPTallTiming measures FindMAP on simulated tall logistic
// regressions (N = 10⁶, d = 15 and N = 10⁵, d = 50, with standard normal
// covariates and with badly scaled, correlated ones), by Newton and by
// L-BFGS: passes over the data and wall time (the best of three runs, the
// machine being shared; one run for L-BFGS on the badly scaled data, where
// it needs hundreds of passes or fails). It allocates about 150 MB and runs
// for minutes, so it runs only with EXACTMH_MAPBENCH=1 (=newton: Newton
// alone, in seconds — docs/go-api.md's Newton column):
//
//	EXACTMH_MAPBENCH=1 go test -run TestFindMAPTallTiming -v .
func TestFindMAPTallTiming(t *testing.T) {
	if os.Getenv("EXACTMH_MAPBENCH") == "" {
		t.Skip("set EXACTMH_MAPBENCH=1 to run")
	}
	for _, c := range []struct {
		n, d int
		skew bool
	}{{1000000, 15, false}, {100000, 50, false}, {1000000, 15, true}, {100000, 50, true}} {
		e := simTallLogistic(t, c.n, c.d, 1, c.skew)
		p := &exactmh.Posterior{Energy: e}
		var thetas [][]float64
		methods := []exactmh.MAPMethod{exactmh.MAPNewton, exactmh.MAPLBFGS}
		if os.Getenv("EXACTMH_MAPBENCH") == "newton" {
			methods = methods[:1] // docs/go-api.md's Newton column alone
		}
		for _, method := range methods {
			var m *exactmh.MAP
			var err error
			wall := time.Duration(math.MaxInt64)
			reps := 3
			if c.skew && method == exactmh.MAPLBFGS {
				reps = 1 // hundreds of passes
			}
			for range reps {
				start := time.Now()
				m, err = exactmh.FindMAP(context.Background(), p, make([]float64, c.d), &exactmh.MAPSettings{Method: method})
				wall = min(wall, time.Since(start))
			}
			name := fmt.Sprintf("N = %d, d = %d, skewed %v, %v", c.n, c.d, c.skew, method)
			switch {
			case err != nil && method == exactmh.MAPNewton:
				t.Errorf("%s: %v", name, err)
			case err != nil:
				t.Logf("%s: %v", name, err)
			}
			if m == nil {
				continue
			}
			thetas = append(thetas, m.Theta)
			t.Logf("%s: %v, %d iterations, %d passes (energy %d, gradient %d, Hessian %d), ‖∇‖ = %.3g, decrement %.3g, log π = %.6f",
				name, wall.Round(time.Millisecond), m.Iterations, m.Passes,
				m.Evals/int64(c.n), m.GradEvals/int64(c.n), m.HessEvals/int64(c.n), m.GradNorm, m.Decrement, m.LogDensity)
		}
		if len(thetas) == 2 {
			var rel float64
			for j := range thetas[0] {
				rel = math.Max(rel, math.Abs(thetas[0][j]-thetas[1][j])/math.Abs(thetas[0][j]))
			}
			t.Logf("N = %d, d = %d, skewed %v: Newton and L-BFGS modes differ by %.2g relative", c.n, c.d, c.skew, rel)
		}
	}
}

// TestFindLaplacePresearch checks FindMAP's first phase on a tall GLM (N =
// 6·10⁵, d = 16, badly scaled covariates, and a rare binary feature set on
// 5 data, which a subsample of every fourth datum may miss or separate):
// Newton on the subsample, then few passes over all the data, to a
// decrement at the rounding floor, and the exact Hessian there for the
// approximation.
func TestFindLaplacePresearch(t *testing.T) {
	if testing.Short() {
		t.Skip("N = 6·10⁵")
	}
	const n, d = 600000, 16
	e := simTallLogistic(t, n, d, 2, true)
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		copy(x[i*d:(i+1)*d], e.Row(i))
		y[i] = e.Label(i)
		x[i*d+d-1] = 0
		if i%100000 == 1 { // the rare feature: 1 on 6 data, all late
			x[i*d+d-1], y[i] = 1, 1
		}
	}
	rare, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoGaussian(d, 2.5)
	p := &exactmh.Posterior{Energy: rare, Prior: prior}
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	at, err := exactmh.LaplaceAt(p, la.Mean)
	if err != nil {
		t.Fatal(err)
	}
	for a := range d {
		for b := range d {
			got, want := la.Precision.At(a, b), at.Precision.At(a, b)
			if math.Abs(got-want) > 1e-9*math.Abs(at.Precision.At(a, a)) {
				t.Errorf("H[%d][%d] = %v, exact %v", a, b, got, want)
			}
		}
	}
	// The presearch counts 1 pass (a quarter of the data, rounded up) and
	// its check 1 (the search's first pass is the other half of it); 10
	// passes in all (14 when Newton instead summed the
	// Hessian of a subsample while far from the mode).
	if la.Passes > 10 || !(la.MAP.Decrement <= 1e-6) {
		t.Errorf("%d passes, decrement %v", la.Passes, la.MAP.Decrement)
	}
	t.Logf("%d passes, %d iterations, decrement %.3g", la.Passes, la.MAP.Iterations, la.MAP.Decrement)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
)

var (
	cvPoisson      = flag.Bool("cvpoisson", false, "run TestPoissonMHControlVariatesMeasure, which compares PoissonMH with and without control variates")
	cvPoissonBalls = flag.String("cvpoisson-balls", "wide,1,0.2,0.1", "the supports TestPoissonMHControlVariatesMeasure runs on: wide (radius 5 about 0) or radii of balls about the MAP")
)

// TestPoissonMHControlVariatesMeasure compares PoissonMH on a logistic
// regression (N = 10⁵, d = 10, x_i ~ N(0, I/d), θ* = (1, −1, 1, …)) with
// a Ball prior, on the posterior itself (the logistic loss's exact range)
// and on its control-variate rewrite (the remainders' range), and
// full-batch MH beside them: the energy-range total L, the default λ =
// 0.01·L², and for the default kernel (MaxBatch N, with its mid-warmup
// comparison with MH) and, where λ + L ≤ N, for the kernel kept Poisson
// (MaxBatch +Inf; beyond N a step reads more than MH's), the mean batch
// per step, acceptance and the
// smallest bulk ESS per second of sampling (chain time, chains summed). It
// is a measurement, not a test: run it with
//
//	go test -run TestPoissonMHControlVariatesMeasure -cvpoisson -v -timeout 2h .
//
// (-cvpoisson-balls 0.2,0.1 for some supports only).
// The balls: radius 5 about the origin (a weakly informative support
// holding θ*), and radius 1, 0.2 and 0.1 about the MAP of the first (about
// 45, 9 and 4.5 posterior sds: supports fitted to the posterior, which
// uses the data twice and is only a device to see how the range of the
// support sets the Poisson kernels' cost).
//
// Measured (2 chains, 1000 warmup and 4000 draws each, on 2 cores shared
// with other jobs, so the ESS/s are ±50%; "plain" is the posterior itself,
// "CV" its rewrite, PoissonMH with its defaults):
//
//	support        L plain  L CV     PoissonMH plain          PoissonMH CV                    MH
//	r=5 about 0    4.9e5    1.2e5    full batch, 1.3 ESS/s    full batch, 0.9 ESS/s           5.6 ESS/s
//	r=1 about θ̂   8.1e4    2207     full batch, 1.6 ESS/s    batch 50,901, 0.6 ESS/s         2.4 ESS/s
//	r=0.2 about θ̂ 1.6e4    18.5     full batch, 0.9 ESS/s    batch 21.8, acc. 0.234, 1352    1.8 ESS/s
//	r=0.1 about θ̂ 7991     2.31     full batch, 2.3 ESS/s    batch 1.7, acc. 0.212, 13036    2.9 ESS/s
//
// (at r = 0.1 a third of the proposals leave the ball and read nothing, so
// the full-batch chains read 0.69·N a step on average).
// The remainders' range pays where the support is within about 20
// posterior sds of θ̂ (r ≲ 0.5 here); on the wide ball their total width is
// a quarter of the loss's, still 1400·N after λ, and PoissonMH runs as MH
// (its fallback reads θ and θ′ each step, slower than MH itself).
func TestPoissonMHControlVariatesMeasure(t *testing.T) {
	if !*cvPoisson {
		t.Skip("run with -cvpoisson")
	}
	const n, d = 100_000, 10
	rng := rand.New(rand.NewPCG(2026, 13))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			v := rng.NormFloat64() / math.Sqrt(d)
			x[i*d+j] = v
			z += v * float64(1-2*(j%2))
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wide, _ := model.NewBall(d, 5, nil)
	la0, err := exactmh.FindLaplace(ctx, &exactmh.Posterior{Energy: e, Prior: wide}, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(la0.CovChol.At(0, 0) * la0.CovChol.At(0, 0))
	t.Logf("MAP %.3f, posterior sd of θ_0 %.4f", la0.Mean, sd)
	type support struct {
		name  string
		prior exactmh.Prior
	}
	var supports []support
	for _, name := range strings.Split(*cvPoissonBalls, ",") {
		if name == "wide" {
			supports = append(supports, support{"ball r=5 about 0", wide})
			continue
		}
		r, err := strconv.ParseFloat(name, 64)
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.NewBall(d, r, la0.Mean)
		if err != nil {
			t.Fatal(err)
		}
		supports = append(supports, support{fmt.Sprintf("ball r=%v about the MAP", r), b})
	}
	set := exactmh.Settings{Chains: 2, Warmup: 1000, Draws: 4000, Seed: 3}
	for _, s := range supports {
		p := &exactmh.Posterior{Energy: e, Prior: s.prior}
		la, err := exactmh.FindLaplace(ctx, p, la0.Mean, nil)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := exactmh.ControlVariates(p, la)
		if err != nil {
			t.Fatal(err)
		}
		set.Init = la.Mean
		run := func(what string, post *exactmh.Posterior, k exactmh.Kernel) {
			res, err := exactmh.Sample(ctx, post, k, &set)
			if err != nil {
				t.Errorf("%s, %s: %v", s.name, what, err)
				return
			}
			ess := math.Inf(1)
			for j := range d {
				ess = math.Min(ess, diagnostics.ESSBulk(res.Samples(j)))
			}
			tot := res.Sampling()
			t.Logf("%-24s %-34s batch/step %9.1f  evals/step %9.1f  fallback %5.3f  accept %.3f  min bulk ESS %6.0f  %7.1f ESS/s  (params %v)",
				s.name, what, tot.MeanBatch(), tot.EvalsPerStep(), float64(tot.Fallbacks)/float64(tot.Steps), tot.AcceptRate(),
				ess, ess/tot.Time.Seconds(), res.Chains[0].Params)
		}
		for _, c := range []struct {
			name string
			post *exactmh.Posterior
		}{{"plain", p}, {"control variates", cv}} {
			r, err := c.post.EnergyRange()
			if err != nil {
				t.Fatal(err)
			}
			var L, wmax float64
			for _, w := range r.Width {
				L += w
				wmax = math.Max(wmax, w)
			}
			lambda := 0.01 * L * L
			t.Logf("%-24s %-17s L = %.4g (mean width %.3g, max %.3g), λ = %.4g, λ + L = %.4g = %.3g·N",
				s.name, c.name, L, L/n, wmax, lambda, lambda+L, (lambda+L)/n)
			run("PoissonMH "+c.name, c.post, exactmh.PoissonMH{})
			if lambda+L <= n {
				run("PoissonMH MaxBatch=Inf "+c.name, c.post, exactmh.PoissonMH{MaxBatch: math.Inf(1)})
			}
		}
		run("MH", p, exactmh.MH{})
	}
}

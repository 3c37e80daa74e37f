// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/stancsv"
)

// nbData is the negative binomial row's synthetic data (-negbin): N rows,
// G groups of equal expected size, a random intercept and a correlated
// random slope on x1,
//
//	η = log e + 0.5 + 0.4·x1 − 0.3·x2 + u_g0 + u_g1·x1,  y ~ NB2(e^η, φ = 2),
//	e ~ U(0.5, 2),  x1, x2 ~ N(0, 1),  u_g ~ N(0, Σ), τ = (0.5, 0.3), ρ = 0.4,
//
// y drawn as Poisson(e^η·λ), λ ~ Gamma(φ, 1/φ).
type nbData struct {
	y, x1, x2, offs []float64
	g               []int32
}

func makeNegBin(n, groups int, seed uint64) nbData {
	rng := rand.New(rand.NewPCG(seed, 43))
	const tau0, tau1, rho, phi = 0.5, 0.3, 0.4, 2.0
	u0, u1 := make([]float64, groups), make([]float64, groups)
	for g := range groups {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		u0[g] = tau0 * a
		u1[g] = tau1 * (rho*a + math.Sqrt(1-rho*rho)*b)
	}
	d := nbData{y: make([]float64, n), x1: make([]float64, n), x2: make([]float64, n), offs: make([]float64, n), g: make([]int32, n)}
	for i := range n {
		g := rng.IntN(groups)
		x1, x2 := rng.NormFloat64(), rng.NormFloat64()
		o := math.Log(0.5 + 1.5*rng.Float64())
		eta := o + 0.5 + 0.4*x1 - 0.3*x2 + u0[g] + u1[g]*x1
		lam := gammaDraw(rng, phi) / phi
		d.y[i] = float64(poissonDraw(rng, math.Exp(eta)*lam))
		d.x1[i], d.x2[i], d.offs[i], d.g[i] = x1, x2, o, int32(g)
	}
	return d
}

// gammaDraw draws Gamma(a, 1), a ≥ 1 (Marsaglia and Tsang 2000).
func gammaDraw(rng *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < x*x/2+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// poissonDraw draws Poisson(m): by inversion for m < 30, else by a sum
// of Poisson(m/k) draws of small means.
func poissonDraw(rng *rand.Rand, m float64) int {
	if m >= 30 {
		k := int(m/20) + 1
		s := 0
		for range k {
			s += poissonDraw(rng, m/float64(k))
		}
		return s
	}
	l, p, k := math.Exp(-m), 1.0, 0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// negBinPosterior is the row's posterior: model.NewNegBinomialMultilevel
// with the priors of stan/negbin_ml.stan (β flat, τ ~ half-normal(1),
// Ω ~ LKJ(1), φ ~ gamma(0.01, 0.01)).
func negBinPosterior(d nbData) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{
		Y: d.y, Offset: d.offs, Intercept: true,
		Fixed: []model.Covariate{{Name: "x1", Values: d.x1}, {Name: "x2", Values: d.x2}},
		Factors: []model.Factor{{Name: "g", Index: d.g, Tau: model.HalfNormal(1), Correlated: true,
			Slopes: []model.Covariate{{Name: "x1", Values: d.x1}}}},
	}
	return model.NewNegBinomialMultilevel(ml, model.Gamma(0.01, 0.01))
}

// gradCost, if positive, makes runNegBin time that many full-batch
// gradients instead of sampling (main's -gradcost).
var gradCost int

// runNegBin is main's -negbin: the row of the negative binomial model.
func runNegBin(cf *report.Common, n, groups, warmup int, nuts bool, export string) error {
	d := makeNegBin(n, groups, cf.Seed)
	if export != "" {
		return writeNegBinCSV(export, d)
	}
	cpu0 := cpuTime()
	p, err := negBinPosterior(d)
	if err != nil {
		return err
	}
	if n := gradCost; n > 0 {
		// The cost of one full-batch gradient of this posterior (exactmh's,
		// what every NUTS leapfrog step pays at least): n timed.
		t, err := exactmh.NewTarget(p)
		if err != nil {
			return err
		}
		th := make([]float64, p.Dim())
		g := make([]float64, p.Dim())
		c0 := cpuTime()
		for range n {
			clear(g)
			if _, err := t.TotalEnergyAndGradient(g, th); err != nil {
				return err
			}
		}
		fmt.Printf("one full-batch gradient: %.4g CPU-s (%d timed)\n", (cpuTime()-c0).Seconds()/float64(n), n)
		return nil
	}
	var k exactmh.Kernel // nil: the automatic default
	if nuts {
		k = exactmh.NUTS{}
	}
	r, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: cf.Chains, Warmup: warmup, Draws: cf.Draws, Seed: cf.Seed, Recorder: cf.Progress()})
	if err != nil {
		return err
	}
	cpu := cpuTime() - cpu0
	if err := cf.SaveStanCSV(r, "negbin_ml", stancsv.SafeNames(p.Names)); err != nil {
		return err
	}
	s := r.Summary()
	if cf.JSON {
		return report.Write(os.Stdout, report.RowOf(r, s, map[string]any{"model": "negbin_ml", "n": n, "groups": groups, "cpu_seconds": cpu.Seconds()}))
	}
	minBulk, minTail, maxRhat, at := math.Inf(1), math.Inf(1), 0.0, ""
	for _, q := range s.Params {
		if q.ESSBulk < minBulk {
			minBulk, at = q.ESSBulk, q.Name
		}
		minTail = math.Min(minTail, q.ESSTail)
		maxRhat = math.Max(maxRhat, q.RHat)
	}
	fmt.Printf("N = %d, %d groups, d = %d; %d chains × (%d warmup + %d draws)\n", n, groups, p.Dim(), cf.Chains, warmup, cf.Draws)
	if r.Choice != nil {
		fmt.Printf("choice: %s (%s)\n", r.Choice.Name, r.Choice.Reason)
	}
	fmt.Printf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f\n", minBulk, at, minTail, maxRhat)
	fmt.Printf("CPU all in %.2f s; data read while sampling: %d\n", cpu.Seconds(), r.Sampling().Evals+r.Warmup().Evals)
	fmt.Printf("min bulk ESS per CPU-second: %.2f\n", minBulk/cpu.Seconds())
	// The natural-scale summaries Stan reports: alpha, beta, tau, rho, phi.
	D := p.Dim()
	show := func(name string, j int, f func(float64) float64) {
		var m, m2, k float64
		for _, ch := range r.Samples(j) {
			for _, v := range ch {
				m, m2, k = m+f(v), m2+f(v)*f(v), k+1
			}
		}
		m /= k
		fmt.Printf("  %-8s mean %8.4f sd %.4f\n", name, m, math.Sqrt(m2/k-m*m))
	}
	id := func(v float64) float64 { return v }
	show("alpha", 0, id)
	show("beta[1]", 1, id)
	show("beta[2]", 2, id)
	show("tau[1]", D-4, math.Exp)
	show("tau[2]", D-3, math.Exp)
	show("rho", D-2, math.Tanh)
	show("phi", D-1, math.Exp)
	return nil
}

// writeNegBinCSV writes dir/negbin_ml.csv: y, x1, x2, offs and the group
// (1 … G), reals in hexadecimal (R reads them exactly).
func writeNegBinCSV(dir string, d nbData) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "negbin_ml.csv"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "y,x1,x2,offs,g")
	for i := range d.y {
		fmt.Fprintf(w, "%d,%x,%x,%x,%d\n", int(d.y[i]), d.x1[i], d.x2[i], d.offs[i], d.g[i]+1)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

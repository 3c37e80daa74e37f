// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/stancsv"
)

// corrModel selects issue 42's rows with a correlated random slope
// (runCorr) instead of the random-intercept Gaussian row.
var corrModel = flag.String("corr", "", `a row with a random intercept and a correlated random slope on x1, (1 + x1 | g): "gaussian" (σ estimated) or "binomial" (successes of 1 … 10 trials, logit link)`)

var corrSlopeSD = flag.Float64("slope-sd", 0.5, "with -corr: the random slope's sd in the data (0: none, lme4's singular fit)")

// The correlated rows' truth: (u_0g, u_1g) ~ N(0, Σ), sds τ = (0.8,
// -slope-sd, default 0.5), correlation ρ = 0.4.
const (
	corrTau0, corrRho = 0.8, 0.4
)

// runCorr measures the automatic default on the rows with a correlated
// random slope:
//
//	gaussian:  y = 1 + 2·x1 − 0.5·x2 + u_0g + u_1g·x1 + 1.3·ε,
//	binomial:  k ~ Binomial(n, logit⁻¹(0.5 + x1 − 0.5·x2 + u_0g + u_1g·x1)), n uniform on 1 … 10,
//
// x1, x2, ε ~ N(0, 1), with priors β flat, τ_k ~ half-normal(1), Ω ~
// LKJ(1), σ ~ half-normal(2): those of stan/gaussian_corr.stan and
// stan/binomial_corr.stan (brms's non-centred form, the same posterior).
// With export set it writes DIR/gaussian_corr.csv (y, x1, x2, g) or
// DIR/binomial_corr.csv (k, n, x1, x2, g) for stan/run_corr.R and returns.
func runCorr(cf *report.Common, kind string, n, groups, warmup int, nuts bool, export string) error {
	if kind != "gaussian" && kind != "binomial" {
		return fmt.Errorf(`-corr %q: want "gaussian" or "binomial"`, kind)
	}
	name := kind + "_corr"
	rng := rand.New(rand.NewPCG(cf.Seed, 43))
	u0, u1 := make([]float64, groups), make([]float64, groups)
	for g := range groups {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		u0[g] = corrTau0 * z0
		u1[g] = *corrSlopeSD * (corrRho*z0 + math.Sqrt(1-corrRho*corrRho)*z1)
	}
	y, x1, x2 := make([]float64, n), make([]float64, n), make([]float64, n)
	var k, trials []float64
	if kind == "binomial" {
		k, trials = make([]float64, n), make([]float64, n)
	}
	idx := make([]int32, n)
	for i := range n {
		g := rng.IntN(groups)
		x1[i], x2[i], idx[i] = rng.NormFloat64(), rng.NormFloat64(), int32(g)
		if kind == "gaussian" {
			y[i] = 1 + 2*x1[i] - 0.5*x2[i] + u0[g] + u1[g]*x1[i] + 1.3*rng.NormFloat64()
			continue
		}
		p := 1 / (1 + math.Exp(-(0.5 + x1[i] - 0.5*x2[i] + u0[g] + u1[g]*x1[i])))
		trials[i] = float64(1 + rng.IntN(10))
		for range int(trials[i]) {
			if rng.Float64() < p {
				k[i]++
			}
		}
		y[i] = k[i] / trials[i]
	}
	if export != "" {
		if kind == "gaussian" {
			return report.ExportCSV(export, name, []string{"y", "x1", "x2", "g"}, n, func(b []byte, i int) []byte {
				b = report.HexFloat(b, y[i])
				b = report.HexFloat(append(b, ','), x1[i])
				b = report.HexFloat(append(b, ','), x2[i])
				return fmt.Appendf(b, ",%d", idx[i]+1)
			})
		}
		return report.ExportCSV(export, name, []string{"k", "n", "x1", "x2", "g"}, n, func(b []byte, i int) []byte {
			b = fmt.Appendf(b, "%d,%d,", int(k[i]), int(trials[i]))
			b = report.HexFloat(b, x1[i])
			b = report.HexFloat(append(b, ','), x2[i])
			return fmt.Appendf(b, ",%d", idx[i]+1)
		})
	}

	cpu0 := report.CPUTime()
	ml := &model.Multilevel{
		Family: model.GaussianFamily{Sigma: 1}, Y: y, Intercept: true,
		Fixed: []model.Covariate{{Name: "x1", Values: x1}, {Name: "x2", Values: x2}},
		Factors: []model.Factor{{Name: "g", Index: idx, Tau: model.HalfNormal(1),
			Slopes: []model.Covariate{{Name: "x1", Values: x1}}, Correlated: true}},
	}
	if kind == "binomial" {
		ml.Family, ml.Weights = model.BinomialFamily{Link: model.LogisticFamily{}}, trials
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		return err
	}
	if kind == "gaussian" {
		e, err := model.NewSparseGaussianRegression(p.Energy.(*model.SparseGLM[float64]))
		if err != nil {
			return err
		}
		p = &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: p.Prior, Scale: model.HalfNormal(2)},
			Names: append(p.Names, "log_sigma")}
	}
	cpuBuild := report.CPUTime() - cpu0
	var kern exactmh.Kernel // nil: the automatic default
	if nuts {
		kern = exactmh.NUTS{}
	}
	r, err := exactmh.Sample(context.Background(), p, kern, &exactmh.Settings{Chains: cf.Chains, Warmup: warmup, Draws: cf.Draws, Seed: cf.Seed, Recorder: cf.Progress()})
	if err != nil {
		return err
	}
	cpu := report.CPUTime() - cpu0
	if err := cf.SaveStanCSV(r, name, stancsv.SafeNames(p.Names)); err != nil {
		return err
	}
	s := r.Summary()
	if cf.JSON {
		return report.Write(os.Stdout, report.RowOf(r, s, map[string]any{"model": name, "n": n, "groups": groups, "cpu_seconds": cpu.Seconds()}))
	}
	minBulk, minTail, maxRhat, at := math.Inf(1), math.Inf(1), 0.0, ""
	for _, q := range s.Params {
		if q.ESSBulk < minBulk {
			minBulk, at = q.ESSBulk, q.Name
		}
		minTail = math.Min(minTail, q.ESSTail)
		maxRhat = math.Max(maxRhat, q.RHat)
	}
	fmt.Printf("%s: N = %d, %d groups, d = %d; %d chains × (%d warmup + %d draws)\n", name, n, groups, p.Dim(), cf.Chains, warmup, cf.Draws)
	if r.Choice != nil {
		fmt.Printf("choice: %s (%s)\n", r.Choice.Name, r.Choice.Reason)
	}
	fmt.Printf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f\n", minBulk, at, minTail, maxRhat)
	fmt.Printf("CPU all in %.2f s (the model %.2f s); data read while sampling: %d\n", cpu.Seconds(), cpuBuild.Seconds(), r.Sampling().Evals+r.Warmup().Evals)
	fmt.Printf("min bulk ESS per CPU-second: %.1f\n", minBulk/cpu.Seconds())
	// The population parameters on Stan's scale: sds, the correlation, σ.
	for j, pn := range p.Names {
		f := func(v float64) float64 { return v }
		switch {
		case strings.HasPrefix(pn, "u_"):
			continue
		case strings.HasPrefix(pn, "log_"):
			f, pn = math.Exp, pn[4:]
		case strings.HasPrefix(pn, "atanh_cpc_"):
			f, pn = math.Tanh, "cor_"+pn[len("atanh_cpc_"):]
		}
		var m, m2, c float64
		for _, ch := range r.Samples(j) {
			for _, v := range ch {
				m, m2, c = m+f(v), m2+f(v)*f(v), c+1
			}
		}
		m /= c
		fmt.Printf("  %-24s mean %8.4f sd %.4f\n", pn, m, math.Sqrt(m2/c-m*m))
	}
	return nil
}

// runCorrFlag runs runCorr if -corr is set and reports whether it did.
func runCorrFlag(cf *report.Common, n, groups, warmup int, nuts bool, export string) bool {
	if *corrModel == "" {
		return false
	}
	if err := runCorr(cf, *corrModel, n, groups, warmup, nuts, export); err != nil {
		log.Fatal(err)
	}
	return true
}

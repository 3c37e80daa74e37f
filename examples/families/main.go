// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command families measures the automatic default on the synthetic tall
// multilevel data of issue 42 — N rows, G groups of equal expected size,
// a random intercept — for the Gaussian family with σ estimated:
//
//	y = 1 + 2·x1 − 0.5·x2 + u_g + 1.3·ε,  x1, x2, ε ~ N(0, 1),  u_g ~ N(0, 0.8²),
//
// with priors β flat, τ ~ half-normal(1), σ ~ half-normal(2) (those of
// stan/gaussian_ml.stan). It prints the default's choice, the minimum bulk
// ESS over every parameter and the process's CPU seconds "all in" (the
// sufficient statistics from the rows, the choice, warmup and draws; the
// rows' generation is not counted), and with -export writes the data for
// stan/run.R instead; -quick is N = 10⁴ with 200 + 200 sweeps.
// figures/bench/families_ml.txt has the measurements.
//
//	go run ./examples/families -n 1000000 -groups 1000 -seed 7
//	go run ./examples/families -n 10000 -groups 1000 -seed 7 -export /tmp/fam
//	Rscript examples/families/stan/run.R /tmp/fam /tmp/fam/out 4
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
	_ "github.com/exactmh/exactmh/multilevel" // the automatic default's multilevel path
	"github.com/exactmh/exactmh/stancsv"
)

func main() {
	cf := report.RegisterCommon(4, 1000)
	n := flag.Int("n", 1000000, "data")
	groups := flag.Int("groups", 1000, "groups")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	nuts := flag.Bool("nuts", false, "sample with exactmh's NUTS on the sufficient statistics instead of the automatic default (a check of the posterior)")
	export := flag.String("export", "", "write the data to this directory (gaussian_ml.csv: y, x1, x2, g) and exit")
	negbin := flag.Bool("negbin", false, "the negative binomial row (negbin.go; -export writes negbin_ml.csv)")
	flag.IntVar(&gradCost, "gradcost", 0, "with -negbin: time this many full-batch gradients of the posterior and exit")
	flag.Parse()
	if prof := os.Getenv("EXACTMH_CPUPROFILE"); prof != "" { // a profile of the run, for tuning
		f, err := os.Create(prof)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if cf.Quick {
		*n, *warmup, cf.Draws = 10000, 200, 200
	}
	if *negbin {
		if err := runNegBin(cf, *n, *groups, *warmup, *nuts, *export); err != nil {
			log.Fatal(err)
		}
		return
	}
	if runCorrFlag(cf, *n, *groups, *warmup, *nuts, *export) {
		return
	}
	chains, draws, seed := &cf.Chains, &cf.Draws, &cf.Seed

	rng := rand.New(rand.NewPCG(*seed, 42))
	u := make([]float64, *groups)
	for g := range u {
		u[g] = 0.8 * rng.NormFloat64()
	}
	y, x1, x2 := make([]float64, *n), make([]float64, *n), make([]float64, *n)
	idx := make([]int32, *n)
	for i := range *n {
		g := rng.IntN(*groups)
		x1[i], x2[i], idx[i] = rng.NormFloat64(), rng.NormFloat64(), int32(g)
		y[i] = 1 + 2*x1[i] - 0.5*x2[i] + u[g] + 1.3*rng.NormFloat64()
	}
	if *export != "" {
		if err := writeCSV(*export, y, x1, x2, idx); err != nil {
			log.Fatal(err)
		}
		return
	}

	cpu0 := cpuTime()
	ml := &model.Multilevel{
		Family: model.GaussianFamily{Sigma: 1}, Y: y, Intercept: true,
		Fixed:   []model.Covariate{{Name: "x1", Values: x1}, {Name: "x2", Values: x2}},
		Factors: []model.Factor{{Name: "g", Index: idx, Tau: model.HalfNormal(1)}},
	}
	unit, err := model.NewMultilevel(ml)
	if err != nil {
		log.Fatal(err)
	}
	e, err := model.NewSparseGaussianRegression(unit.Energy.(*model.SparseGLM[float64]))
	if err != nil {
		log.Fatal(err)
	}
	p := &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: unit.Prior, Scale: model.HalfNormal(2)},
		Names: append(unit.Names, "log_sigma")}
	cpuBuild := cpuTime() - cpu0
	var k exactmh.Kernel // nil: the automatic default
	if *nuts {
		k = exactmh.NUTS{}
	}
	r, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: *chains, Warmup: *warmup, Draws: *draws, Seed: *seed, Recorder: cf.Progress()})
	if err != nil {
		log.Fatal(err)
	}
	cpu := cpuTime() - cpu0
	if err := cf.SaveStanCSV(r, "gaussian_ml", stancsv.SafeNames(p.Names)); err != nil {
		log.Fatal(err)
	}
	s := r.Summary()
	if cf.JSON {
		if err := report.Write(os.Stdout, report.RowOf(r, s, map[string]any{"model": "gaussian_ml", "n": *n, "groups": *groups, "cpu_seconds": cpu.Seconds()})); err != nil {
			log.Fatal(err)
		}
		return
	}
	minBulk, minTail, maxRhat, at := math.Inf(1), math.Inf(1), 0.0, ""
	for _, q := range s.Params {
		if q.ESSBulk < minBulk {
			minBulk, at = q.ESSBulk, q.Name
		}
		minTail = math.Min(minTail, q.ESSTail)
		maxRhat = math.Max(maxRhat, q.RHat)
	}
	fmt.Printf("N = %d, %d groups, d = %d; %d chains × (%d warmup + %d draws)\n", *n, *groups, p.Dim(), *chains, *warmup, *draws)
	if r.Choice != nil {
		fmt.Printf("choice: %s (%s)\n", r.Choice.Name, r.Choice.Reason)
	}
	fmt.Printf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.4f\n", minBulk, at, minTail, maxRhat)
	fmt.Printf("CPU all in %.2f s (the statistics %.2f s); data read while sampling: %d\n", cpu.Seconds(), cpuBuild.Seconds(), r.Sampling().Evals+r.Warmup().Evals)
	fmt.Printf("min bulk ESS per CPU-second: %.1f\n", minBulk/cpu.Seconds())
	for j, name := range p.Names {
		if j >= 3 && name != "log_tau_g" && name != "log_sigma" {
			continue
		}
		f := func(v float64) float64 { return v }
		if j >= 3 { // tau and sigma on their natural scale, as Stan reports them
			f, name = math.Exp, name[4:]
		}
		var m, m2, k float64
		for _, ch := range r.Samples(j) {
			for _, v := range ch {
				m, m2, k = m+f(v), m2+f(v)*f(v), k+1
			}
		}
		m /= k
		fmt.Printf("  %-10s mean %8.4f sd %.4f\n", name, m, math.Sqrt(m2/k-m*m))
	}
}

// cpuTime returns the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeCSV writes dir/gaussian_ml.csv: y, x1, x2 and the group (1 … G),
// reals in hexadecimal (R reads them exactly).
func writeCSV(dir string, y, x1, x2 []float64, g []int32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "gaussian_ml.csv"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "y,x1,x2,g")
	for i := range y {
		fmt.Fprintf(w, "%x,%x,%x,%d\n", y[i], x1[i], x2[i], g[i]+1)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

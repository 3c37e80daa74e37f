// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command defaultrows runs the automatic default on the rows of issue 43's
// hidden-style table that no other example holds, one core, everything
// counted, and writes their data for rstan's NUTS (defaultrows/stan):
//
//	custom  a multilevel logistic regression written as a user writes
//	        one: an Energy with EnergyDiffs, a gradient, a dense Hessian
//	        and a DiffBound, no GLM contract and no multilevel prior
//	        (N = 10⁵ rows, 5 fixed effects, 500 groups of 200 rows: d =
//	        505; prior N(0, 3²) on every coordinate): testgen.CustomMultilevel,
//	        the energy and data of the root's TestAutoUnfinishedPilotScored.
//	logreg_d200, logreg_d500  examples/tall's wide rows (N = 10⁵, flat prior).
//	probit  a probit regression, N = 10⁵ (-n), an intercept −0.5 and 9
//	        standard normal features with coefficients 0.5·(−1)^j, prior
//	        N(0, 2.5²) (model.ProbitFamily).
//
// The other rows are examples/rare, examples/poisson, examples/tall's
// logreg_d200 and logreg_d500, and examples/flights.
//
//	go run ./examples/defaultrows -rows custom            # 4 chains × (1000 + 1000)
//	go run ./examples/defaultrows -choose -rows logreg_d200   # the choice alone
//	go run ./examples/defaultrows -export DIR -rows custom,probit
//	Rscript examples/defaultrows/stan/run.R DIR OUTDIR custom
//
// -table regenerates examples/README.md's table of the rows (exactmh's
// default against rstan's NUTS per CPU-second, all in) from
// figures/bench/default_table.txt.
//
// For each row it prints the choice (String and PhasesText: the passes
// over the data and the CPU seconds of each phase), the run's gradient and
// energy passes and warmup transitions, min bulk and tail ESS,
// the CPU seconds of the whole run after the data are in memory (choice,
// warmup, draws) and min bulk ESS per CPU-second.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/localgibbs"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(4, 1000)
	rows := flag.String("rows", "custom,probit", "rows to run: custom, probit, logreg_d200, logreg_d500")
	n := flag.Int("n", 0, "data of the row (0: its default, 10⁵)")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	kernel := flag.String("kernel", "auto", "auto (the automatic default); NUTS (full batch, Stan's adaptation, from θ = 0: the library's NUTS, for comparison); MH-CN (full-batch MH with the Crank–Nicolson proposal around the Laplace approximation, as the default builds it, from its draws; the MAP counted in the CPU); LocalGibbs (package localgibbs on the same Laplace approximation, from its draws; the MAP counted)")
	chooseOnly := flag.Bool("choose", false, "only make the automatic choice and print it, with its passes and CPU per phase")
	exportTo := flag.String("export", "", "only write the rows' data as CSV (hexadecimal reals) to this directory, for defaultrows/stan")
	table := flag.Bool("table", false, "only regenerate examples/README.md's table from figures/bench/default_table.txt (run from the repository root)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the rows' runs to this file")
	flag.Parse()
	defer report.StartCPUProfile(*cpuprofile)()
	if *table {
		if err := writeTable("examples/README.md", "figures/bench/default_table.txt"); err != nil {
			log.Fatal(err)
		}
		return
	}
	groups := 500
	if cf.Quick {
		*n, *warmup, cf.Draws, groups = 4000, 100, 100, 40
	}
	for _, name := range strings.Split(*rows, ",") {
		var r *row
		switch name {
		case "custom":
			r = customRow(pick(*n, 100000), 5, groups)
		case "probit":
			r = probitRow(pick(*n, 100000), 10, uint64(cf.Seed))
		case "logreg_d200", "logreg_d500":
			r = wideRow(name, pick(*n, 100000), uint64(cf.Seed))
		default:
			log.Fatalf("no row %q", name)
		}
		if *exportTo != "" {
			if err := r.export(*exportTo); err != nil {
				log.Fatal(err)
			}
			continue
		}
		cpu0 := report.CPUTime()
		if *chooseOnly {
			c, err := exactmh.Choose(context.Background(), r.post, &exactmh.Settings{Seed: uint64(cf.Seed)})
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			fmt.Printf("%s (N = %d, d = %d): %.2f CPU-s: %s\n  %s\n", name, r.post.Len(), r.post.Dim(), (report.CPUTime() - cpu0).Seconds(), c, c.PhasesText())
			continue
		}
		set := &exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Seed: uint64(cf.Seed)}
		if !cf.Quiet {
			set.Recorder = cf.Progress()
		}
		var k exactmh.Kernel // nil: the automatic default
		switch *kernel {
		case "auto":
		case "NUTS":
			k = exactmh.NUTS{}
		case "MH-CN":
			la, err := exactmh.FindLaplace(context.Background(), r.post, make([]float64, r.post.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			cn, err := la.CrankNicolson()
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			k, set = exactmh.MH{Proposal: cn}, exactmh.LaplaceInits(set, la, r.post)
		case "LocalGibbs":
			la, err := exactmh.FindLaplace(context.Background(), r.post, make([]float64, r.post.Dim()), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			k, set = localgibbs.Kernel{Laplace: la}, exactmh.LaplaceInits(set, la, r.post)
		default:
			log.Fatalf("-kernel %q: auto, NUTS, MH-CN or LocalGibbs", *kernel)
		}
		res, err := exactmh.Sample(context.Background(), r.post, k, set)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		cpu := (report.CPUTime() - cpu0).Seconds()
		s := res.Summary()
		bulk, tail := s.MinESSBulk(), math.Inf(1)
		for _, v := range s.Params {
			tail = math.Min(tail, v.ESSTail)
		}
		var grads, evals, warm int64
		for _, ch := range res.Chains {
			grads += ch.Warmup.GradEvals + ch.Sampling.GradEvals
			evals += ch.Warmup.Evals + ch.Sampling.Evals
			warm += int64(ch.Warmup.Steps)
		}
		passes := fmt.Sprintf("%.4g gradient passes, %.4g energy passes, %d warmup transitions in all", float64(grads)/float64(r.post.Len()), float64(evals)/float64(r.post.Len()), warm)
		if res.Choice == nil {
			fmt.Printf("%s (N = %d, d = %d, GOMAXPROCS %d): %s; %s\n", name, r.post.Len(), r.post.Dim(), runtime.GOMAXPROCS(0), res.Kernel, passes)
		} else {
			fmt.Printf("%s (N = %d, d = %d, GOMAXPROCS %d): %s\n  %s\n  the run (after the choice): %s\n", name, r.post.Len(), r.post.Dim(), runtime.GOMAXPROCS(0), res.Choice, res.Choice.PhasesText(), passes)
		}
		fmt.Printf("  %d chains × (%d + %d): min bulk ESS %.0f, min tail ESS %.0f; %.2f CPU-s all in: %.4g min bulk ESS per CPU-s\n",
			cf.Chains, *warmup, cf.Draws, bulk, tail, cpu, bulk/cpu)
		if err := cf.SaveStanCSV(res, "defaultrows_"+name, r.post.Names); err != nil {
			log.Fatal(err)
		}
	}
}

func pick(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// row is a posterior and how to write its data for Stan.
type row struct {
	name   string
	post   *exactmh.Posterior
	export func(dir string) error
}

// customMultilevel is testgen.CustomMultilevel with its DiffBound, as
// the root's TestAutoUnfinishedPilotScored samples it.
type customMultilevel struct{ *testgen.CustomMultilevel }

// DiffBound bounds a datum's energy difference by ‖(x_i, 1)‖·‖θ − θ′‖
// (testgen.CustomMultilevel.DiffC).
func (e customMultilevel) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	return &exactmh.DiffBound{C: e.DiffC()}, nil
}

// customRow is customMultilevelPosterior's posterior: n data, p fixed
// effects, g groups, prior N(0, 3²).
func customRow(n, p, g int) *row {
	e := testgen.NewCustomMultilevel(n, p, g)
	prior, err := model.NewIsoGaussian(p+g, 3)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, p+g)
	for j := range p {
		names[j] = fmt.Sprintf("beta.%d", j+1)
	}
	for j := range g {
		names[p+j] = fmt.Sprintf("u.%d", j+1)
	}
	r := &row{name: "custom", post: &exactmh.Posterior{Energy: customMultilevel{e}, Prior: prior, Names: names}}
	r.export = func(dir string) error {
		cols := []string{"y", "g"}
		for j := range p {
			cols = append(cols, fmt.Sprintf("x%d", j+1))
		}
		return report.ExportCSV(dir, "custom", cols, n, func(b []byte, i int) []byte {
			b = strconv.AppendFloat(b, e.Y[i], 'g', -1, 64)
			b = strconv.AppendInt(append(b, ','), int64(e.Grp[i]+1), 10)
			for _, v := range e.X[i*p : (i+1)*p] {
				b = report.HexFloat(append(b, ','), v)
			}
			return b
		}, "p", strconv.Itoa(p), "groups", strconv.Itoa(g), "sigma", "3")
	}
	return r
}

// probitRow is the probit row: n data, an intercept −0.5 and d−1 standard
// normal features with coefficients 0.5·(−1)^j, prior N(0, 2.5²).
func probitRow(n, d int, seed uint64) *row {
	rng := rand.New(rand.NewPCG(seed, 0x70726f62))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		x[i*d] = 1
		z := -0.5
		for j := 1; j < d; j++ {
			v := rng.NormFloat64()
			x[i*d+j] = v
			z += 0.5 * math.Pow(-1, float64(j)) * v
		}
		if rng.NormFloat64() < z {
			y[i] = 1
		}
	}
	e, err := model.NewGLM(x, y, d, model.ProbitFamily{})
	if err != nil {
		log.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 2.5)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, d)
	names[0] = "intercept"
	for j := 1; j < d; j++ {
		names[j] = fmt.Sprintf("x%d", j)
	}
	r := &row{name: "probit", post: &exactmh.Posterior{Energy: e, Prior: prior, Names: names}}
	r.export = func(dir string) error { return report.ExportRegression(dir, "probit", x, y, d, "sigma", "2.5") }
	return r
}

// wideRow is examples/tall's logreg_d200 or logreg_d500 (the same data for
// the same seed): x_i ~ N(0, I_d/d), θ* ~ N(0, I_d), flat prior; its data
// for Stan are examples/tall's -export.
func wideRow(name string, n int, seed uint64) *row {
	d := 200
	if name == "logreg_d500" {
		d = 500
	}
	x, y := testgen.WideLogistic(rand.New(rand.NewPCG(seed, uint64(len(name)))), n, d)
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		log.Fatal(err)
	}
	return &row{name: name, post: &exactmh.Posterior{Energy: e}, export: func(string) error {
		return fmt.Errorf("%s: go run ./examples/tall -export DIR -posteriors %s writes its data", name, name)
	}}
}

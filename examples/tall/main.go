// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command tall measures every applicable kernel on the everyday tall-data
// posteriors, the comparison a user switching from Stan's NUTS cares about:
// minimum bulk ESS per second of sampling (chains run in parallel, one per
// core), the same including warmup and the MAP/Laplace search, datum
// evaluations per effective draw, and the error of the posterior mean
// against a reference run of the fastest exact kernel on other random
// streams, in posterior standard deviations.
//
// The posteriors, all simulated so that anyone can rerun them (N = 10⁵
// unless -n says otherwise, untempered, flat prior):
//
//	rlr_d10, rlr_d100  Student-t regression (ν = 4), x_i ~ N(0, I_d),
//	                   y_i = Σ_j x_ij + ε_i, ε_i ~ N(0, 1) (examples/rlr's data)
//	logreg_d50         logistic regression, x_i ~ N(0, I_d/d), θ* ~ N(0, I_d)
//	logreg_d200        the same with d = 200 (not run unless named in
//	                   -posteriors)
//	logreg_d500        the same with d = 500, the wide row (not run unless
//	                   named in -posteriors)
//	tgm                the TunaMH paper's tempered Gaussian mixture, N = 10⁶
//
// Then, for the best kernel at d = 10, datum evaluations per effective draw
// as N grows from 10⁴ to 10⁷ (-scaling).
//
// Kernels: MH, MALA, HMC and NUTS (full batch, the gradient kernels with
// Stan's windowed diagonal metric adaptation), TunaMH, FlyMC at the MAP and SMH-2,
// with their default random walk and with the Crank–Nicolson proposal
// around the Laplace approximation N(θ̂, H⁻¹) ("-CN"), and TFMH and TunaMH on
// the posterior rewritten with control variates (exactmh.ControlVariates,
// "-CV"). Rows carry posterior,
// kernel, exact, auto (the automatic default's row, with chose: what it
// picked), ess_per_sec,
// ess_per_sec_total, evals_per_ess, mean_abs_err and the usual fields.
//
//	go run ./examples/tall                  # the whole study (about 16 minutes on 2 cores)
//	go run ./examples/tall -json -out DIR   # JSON rows, Stan CSV and PNG figures
//
// With -export DIR it only writes the selected posteriors' data, exactly
// the float64s its kernels sample, and exits: DIR/NAME.csv holds a header
// and one row per datum (y,x1,…,xd for the regressions, x for tgm) and
// DIR/NAME_constants.csv the constants as key,value rows (n, d, and ν as
// nu; tgm's sigma2, beta and box lo, hi). Real numbers are written in
// hexadecimal ("-0x1.5fe3p-02", strconv's 'x' format), which R's read.csv
// and as.numeric and Python's float.fromhex read exactly; R's decimal
// parser is not correctly rounded (it missed by an ulp on 43 of the 1.1
// million numbers of rlr_d10 written as shortest decimals).
// examples/tall/stan runs Stan's NUTS on them (see its README.md).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/examples/internal/sim"
	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 0)
	budget := flag.Duration("budget", 8*time.Second, "sampling time per kernel run")
	n := flag.Int("n", 100000, "data per GLM posterior")
	which := flag.String("posteriors", "rlr_d10,logreg_d50,rlr_d100,tgm", "posteriors to run")
	kernels := flag.String("kernels", "", "comma-separated kernel names to run (empty: all)")
	scaling := flag.Bool("scaling", true, "measure the best d = 10 kernel for N = 10⁴ … 10⁷")
	maxN := flag.Int("maxn", 10000000, "largest N of the scaling study")
	plotFrom := flag.String("plot", "", "only draw the figures (into -out) from this file of -json rows")
	exportTo := flag.String("export", "", "only write each selected posterior's data as CSV to this directory")
	reference := flag.Bool("reference", true, "run the reference (TFMH-CV-CN, or TunaMH on tgm) for the posterior-mean error; off for logreg_d500, where TFMH-CV-CN reads most of the data a step")
	flag.Parse()
	if *plotFrom != "" {
		if err := replot(*plotFrom, cf.Out); err != nil {
			log.Fatal(err)
		}
		return
	}
	if cf.Quick {
		*budget, *n, *maxN = time.Second, 5000, 100000
	}
	if *exportTo != "" {
		for _, name := range strings.Split(*which, ",") {
			if err := export(*exportTo, name, *n, cf.Seed, cf.Quick); err != nil {
				log.Fatal(err)
			}
		}
		return
	}
	st := &study{cf: cf, budget: *budget, want: set(*kernels), reference: *reference}
	var rows []map[string]any
	for _, name := range strings.Split(*which, ",") {
		p, err := newPosterior(name, *n, cf.Seed, cf.Quick)
		if err != nil {
			log.Fatal(err)
		}
		rs, err := st.posterior(p)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		rows = append(rows, rs...)
	}
	if *scaling {
		rs, err := st.scaling(*maxN)
		if err != nil {
			log.Fatalf("scaling: %v", err)
		}
		rows = append(rows, rs...)
	}
	if cf.Out != "" {
		if err := figures(cf.Out, rows); err != nil {
			log.Fatal(err)
		}
	}
}

// study holds the settings shared by every run.
type study struct {
	cf        *report.Common
	budget    time.Duration
	want      map[string]bool
	reference bool // run the reference for mean_abs_err
}

// posterior is one target with what its kernels need.
type posterior struct {
	name   string
	post   *exactmh.Posterior
	glm    bool      // SMH-2, FlyMC at the MAP and the Laplace approximation apply
	init   []float64 // where chains start
	n, d   int
	mode   []float64 // the MAP (GLMs)
	cov    *mat.SymDense
	search time.Duration      // MAP and Laplace approximation
	passes float64            // of the search over the data
	cv     *exactmh.Posterior // rewritten with control variates at the MAP (GLMs)
	cvTime time.Duration      // building cv
}

// kernel is one row of the study.
type kernel struct {
	name   string
	build  func(p *posterior) exactmh.Kernel
	glm    bool // needs the GLM pieces (MAP, Laplace, Taylor bounds)
	cv     bool // runs on the posterior with control variates
	auto   bool // the automatic default (Sample with a nil Kernel)
	warmup int  // warmup transitions
}

func kernelsFor(p *posterior) []kernel {
	cn := func(p *posterior) exactmh.Proposal {
		c, err := exactmh.NewCrankNicolson(p.mode, p.cov)
		if err != nil {
			log.Fatal(err)
		}
		return c
	}
	ks := []kernel{
		// The automatic default: MAP, Laplace approximation, control
		// variates and pilots included in its total.
		{name: "auto", auto: true, warmup: 1000},
		{name: "MH", warmup: 1000, build: func(*posterior) exactmh.Kernel { return exactmh.MH{} }},
		{name: "MH-CN", glm: true, warmup: 300, build: func(p *posterior) exactmh.Kernel { return exactmh.MH{Proposal: cn(p), Scale: 1} }},
		{name: "MALA", warmup: 500, build: func(*posterior) exactmh.Kernel { return exactmh.MALA{} }},
		{name: "HMC", warmup: 200, build: func(*posterior) exactmh.Kernel { return exactmh.HMC{Jitter: 0.5} }},
		{name: "NUTS", warmup: 500, build: func(*posterior) exactmh.Kernel { return exactmh.NUTS{} }},
		{name: "TunaMH", warmup: 2000, build: func(*posterior) exactmh.Kernel { return exactmh.TunaMH{} }},
		{name: "TunaMH-CN", glm: true, warmup: 2000, build: func(p *posterior) exactmh.Kernel {
			return exactmh.TunaMH{Proposal: cn(p), Scale: 1}
		}},
		{name: "FlyMC-MAP-CN", glm: true, warmup: 300, build: func(p *posterior) exactmh.Kernel {
			return exactmh.FlyMC{TightAt: p.mode, Q: 0.01, Proposal: cn(p), Scale: 1}
		}},
		{name: "SMH-2", glm: true, warmup: 2000, build: func(p *posterior) exactmh.Kernel {
			return exactmh.SMH{Order: 2, Center: p.mode}
		}},
		{name: "SMH-2-CN", glm: true, warmup: 2000, build: func(p *posterior) exactmh.Kernel {
			return exactmh.SMH{Order: 2, Center: p.mode, Proposal: cn(p), Scale: 1}
		}},
		// On the remainders of exactmh.ControlVariates: TFMH there is
		// SMH-2 with Euclidean bounds in the Laplace approximation's
		// shape; TunaMH there is TunaMH with control variates.
		{name: "TFMH-CV-CN", glm: true, cv: true, warmup: 2000, build: func(p *posterior) exactmh.Kernel {
			return exactmh.TFMH{Proposal: cn(p), Scale: 1}
		}},
		{name: "TunaMH-CV-CN", glm: true, cv: true, warmup: 2000, build: func(p *posterior) exactmh.Kernel {
			return exactmh.TunaMH{Proposal: cn(p), Scale: 1}
		}},
	}
	var out []kernel
	for _, k := range ks {
		if k.glm && !p.glm {
			continue
		}
		// On the mixture's box NUTS's trajectories leave the support
		// (divergences) and its warmup builds deep trees of full-batch
		// gradients over 10⁶ data: it ran for minutes per transition.
		if k.name == "NUTS" && p.name == "tgm" {
			continue
		}
		out = append(out, k)
	}
	return out
}

// posterior runs every applicable kernel on p, and a long reference run
// for the posterior-mean error.
func (st *study) posterior(p *posterior) ([]map[string]any, error) {
	if !st.cf.Quiet {
		log.Printf("%s: N = %d, d = %d; MAP and Laplace approximation in %.2fs (%.0f passes over the data)", p.name, p.n, p.d, p.search.Seconds(), p.passes)
	}
	ks := kernelsFor(p)
	// The reference: the fastest exact kernel for the target (control
	// variates for the GLMs, up to 100× the ESS/s of MH-CN there; TunaMH for
	// the mixture), run for two budgets (three on the mixture) on its own
	// random streams, so that its own row's error is against an independent
	// run, not a prefix of itself.
	refName, refBudgets := "TFMH-CV-CN", 2
	if !p.glm {
		refName, refBudgets = "TunaMH", 3
	}
	var refMean, refSD []float64
	for _, k := range ks {
		if k.name != refName || !st.reference {
			continue
		}
		res, err := st.runSeed(p, k, time.Duration(refBudgets)*st.budget, st.cf.Seed+referenceSeed)
		if err != nil {
			return nil, fmt.Errorf("reference %s: %w", k.name, err)
		}
		refMean, refSD = moments(res)
	}
	var rows []map[string]any
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if !st.cf.JSON {
		fmt.Fprintf(tw, "%s\tkernel\texact\taccept\tevals/step\tmin ESS\tESS/s\tESS/s total\tevals/ESS\tmean err (sd)\t\n", p.name)
	}
	for _, k := range ks {
		if len(st.want) > 0 && !st.want[k.name] {
			continue
		}
		res, err := st.run(p, k, st.budget)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		row := st.row(p, k, res, refMean, refSD)
		rows = append(rows, row)
		if st.cf.JSON {
			if err := report.Write(os.Stdout, row); err != nil {
				return nil, err
			}
			continue
		}
		name := k.name
		if res.Choice != nil {
			name += " → " + res.Choice.Name
		}
		fmt.Fprintf(tw, "\t%s\t%v\t%.3f\t%.4g\t%.0f\t%.4g\t%.4g\t%.4g\t%.3f\t\n", name, res.Exact,
			res.Sampling().AcceptRate(), res.Sampling().EvalsPerStep(), number(row["ess_bulk_min"]), number(row["ess_per_sec"]),
			number(row["ess_per_sec_total"]), number(row["evals_per_ess"]), number(row["mean_abs_err"]))
	}
	if !st.cf.JSON {
		tw.Flush()
		fmt.Println()
	}
	return rows, nil
}

// run samples p with kernel k: chains in parallel, the warmup by transition
// count, then budget of sampling.
func (st *study) run(p *posterior, k kernel, budget time.Duration) (*exactmh.Result, error) {
	return st.runSeed(p, k, budget, st.cf.Seed)
}

// referenceSeed offsets the reference run's seed from the rows' seed.
const referenceSeed = 1 << 20

// runSeed is run with the chains' random streams from seed.
func (st *study) runSeed(p *posterior, k kernel, budget time.Duration, seed uint64) (*exactmh.Result, error) {
	warmup := k.warmup
	if st.cf.Quick {
		warmup = min(warmup, 200)
	}
	set := &exactmh.Settings{Chains: st.cf.Chains, Warmup: warmup, Duration: budget, Seed: seed,
		Init: p.init, Recorder: st.cf.Progress()}
	if st.cf.Draws > 0 {
		set.Draws = st.cf.Draws
	}
	post := p.post
	if k.cv {
		post = p.cv
	}
	var kern exactmh.Kernel
	if !k.auto {
		kern = k.build(p)
	}
	res, err := exactmh.Sample(context.Background(), post, kern, set)
	if err != nil {
		return res, err
	}
	return res, st.cf.SaveStanCSV(res, p.name+"_"+k.name, nil)
}

// row measures a run: ESS per wall second of sampling (chains run in
// parallel), the same including warmup and the MAP/Laplace search, datum
// evaluations per effective draw and the mean's error in reference sds.
func (st *study) row(p *posterior, k kernel, res *exactmh.Result, refMean, refSD []float64) map[string]any {
	sum := res.Summary()
	ess := sum.MinESSBulk()
	var sampling, warmup time.Duration
	for _, c := range res.Chains {
		sampling = max(sampling, c.Sampling.Time)
		warmup = max(warmup, c.Warmup.Time)
	}
	total := sampling + warmup
	if k.glm {
		total += p.search
	}
	if k.cv {
		total += p.cvTime
	}
	chose, reason := "", ""
	if res.Choice != nil {
		total += res.Choice.Time
		chose, reason = res.Choice.Name, res.Choice.Reason
	}
	keptSteps, keptEvals := keptCost(res)
	errSD := math.NaN()
	if refMean != nil {
		m := res.Mean()
		errSD = 0
		for j := range m {
			errSD += math.Abs(m[j]-refMean[j]) / refSD[j] / float64(len(m))
		}
	}
	return report.RowOf(res, sum, map[string]any{
		"kernel":            k.name,
		"posterior":         p.name,
		"n":                 p.n,
		"d":                 p.d,
		"auto":              k.auto,
		"chose":             chose,
		"choice_reason":     reason,
		"ess_per_sec":       report.OrNull(ess / sampling.Seconds()),
		"ess_per_sec_total": report.OrNull(ess / total.Seconds()),
		"evals_per_ess":     report.OrNull(keptEvals / ess),
		"ess_per_step":      report.OrNull(ess / keptSteps),
		"ess_tail_min":      report.OrNull(minTailESS(sum)),
		"mean_abs_err":      report.OrNull(errSD),
		"warmup_seconds":    warmup.Seconds(),
		"search_seconds":    p.search.Seconds(),
	})
}

// minTailESS returns the smallest tail ESS over sum's coordinates: a
// Crank–Nicolson chain with ρ < 0 (CrankNicolson.Antithetic) raises bulk
// ESS of means above the number of draws but not tail ESS, so the rows
// report both.
func minTailESS(sum *exactmh.Summary) float64 {
	m := math.Inf(1)
	for _, p := range sum.Params {
		m = math.Min(m, p.ESSTail)
	}
	return m
}

// scaling measures the best d = 10 kernel (SMH-2 with the Crank–Nicolson
// proposal) as N grows: datum evaluations per effective draw and time per
// step.
func (st *study) scaling(maxN int) ([]map[string]any, error) {
	var rows []map[string]any
	if !st.cf.JSON {
		fmt.Println("scaling, rlr d = 10, SMH-2-CN: N, evals/step, evals/ESS, µs/step, ESS/s")
	}
	for n := 10000; n <= maxN; n *= 10 {
		p, err := newPosterior("rlr_d10", n, st.cf.Seed, false)
		if err != nil {
			return nil, err
		}
		var k kernel
		for _, kk := range kernelsFor(p) {
			if kk.name == "SMH-2-CN" {
				k = kk
			}
		}
		res, err := st.run(p, k, st.budget)
		if err != nil {
			return nil, err
		}
		row := st.row(p, k, res, nil, nil)
		row["posterior"] = "rlr_d10_scaling"
		tot := res.Sampling()
		row["us_per_step"] = tot.Time.Seconds() / float64(tot.Steps) * 1e6
		rows = append(rows, row)
		if st.cf.JSON {
			if err := report.Write(os.Stdout, row); err != nil {
				return nil, err
			}
			continue
		}
		fmt.Printf("%9d  %8.2f  %9.3g  %8.2f  %9.4g\n", n, tot.EvalsPerStep(), number(row["evals_per_ess"]), number(row["us_per_step"]), number(row["ess_per_sec"]))
	}
	return rows, nil
}

// newPosterior builds a posterior of the study by name with its MAP and
// Laplace approximation (GLMs).
func newPosterior(name string, n int, seed uint64, quick bool) (*posterior, error) {
	if name == "tgm" {
		return tgm(seed, quick)
	}
	e, d, err := simulate(name, n, seed)
	if err != nil {
		return nil, err
	}
	p := &posterior{name: name, post: &exactmh.Posterior{Energy: e}, glm: true, n: n, d: d}
	start := time.Now()
	la, err := exactmh.FindLaplace(context.Background(), p.post, make([]float64, d), nil)
	if err != nil {
		return nil, err
	}
	p.search = time.Since(start)
	p.mode, p.init, p.cov = la.Mean, la.Mean, la.Covariance()
	p.passes = float64(la.Passes)
	start = time.Now()
	if p.cv, err = exactmh.ControlVariates(p.post, la); err != nil {
		return nil, err
	}
	p.cvTime = time.Since(start)
	return p, nil
}

// simulate returns the energy of the GLM posterior name, with N = n data
// simulated from seed, and its dimension.
func simulate(name string, n int, seed uint64) (exactmh.Energy, int, error) {
	var d int
	var e exactmh.Energy
	rng := rand.New(rand.NewPCG(seed, uint64(len(name))))
	switch name {
	case "rlr_d10", "rlr_d100":
		d = 10
		if name == "rlr_d100" {
			d = 100
		}
		x, y := sim.RegressionData(rng, n, d)
		t, err := model.NewStudentTRegression(x, y, d, 4)
		if err != nil {
			return nil, 0, err
		}
		e = t
	case "logreg_d50", "logreg_d200", "logreg_d500":
		d = 50
		switch name {
		case "logreg_d200":
			d = 200
		case "logreg_d500":
			d = 500
		}
		x, y := testgen.WideLogistic(rng, n, d)
		l, err := model.NewLogisticRegression(x, y, d)
		if err != nil {
			return nil, 0, err
		}
		e = l
	default:
		return nil, 0, fmt.Errorf("unknown posterior %q", name)
	}
	return e, d, nil
}

// export writes the data of the posterior name, read back from the energy
// its kernels sample, to dir: name.csv, a header and one row per datum (y,
// x1, …, xd for the regressions; x for tgm), and name_constants.csv, rows
// "key,value" (n, d, and nu, or tgm's sigma2, beta and its box lo, hi).
// Every float64 is written in hexadecimal (strconv's 'x' format), exact.
func export(dir, name string, n int, seed uint64, quick bool) error {
	var cols []string
	var row func(b []byte, i int) []byte
	var consts []string
	num := report.HexFloat
	hex := func(v float64) string { return string(num(nil, v)) }
	if name == "tgm" {
		p, err := tgm(seed, quick)
		if err != nil {
			return err
		}
		g, box := p.post.Energy.(*model.GaussianMixture), p.post.Prior.(*model.Box)
		n, cols = g.Len(), []string{"x"}
		row = func(b []byte, i int) []byte { return num(b, g.X(i)) }
		consts = []string{"sigma2", hex(g.Sigma2()), "beta", hex(p.post.Beta), "lo", hex(box.Lo[0]), "hi", hex(box.Hi[0])}
	} else {
		e, d, err := simulate(name, n, seed)
		if err != nil {
			return err
		}
		var resp func(int) float64
		switch e := e.(type) {
		case *model.StudentTRegression:
			resp = e.Response
			consts = []string{"nu", hex(e.Nu())}
		case *model.LogisticRegression:
			resp = e.Label
		}
		x := e.(interface{ Row(int) []float64 })
		cols = []string{"y"}
		for j := range d {
			cols = append(cols, fmt.Sprintf("x%d", j+1))
		}
		row = func(b []byte, i int) []byte {
			b = num(b, resp(i))
			for _, v := range x.Row(i) {
				b = num(append(b, ','), v)
			}
			return b
		}
		consts = append([]string{"d", fmt.Sprint(d)}, consts...)
	}
	return report.ExportCSV(dir, name, cols, n, row, consts...)
}

// tgm is the TunaMH paper's tempered Gaussian mixture (examples/tgm): N =
// 10⁶ draws of ½N(0, 2) + ½N(1, 2), θ ∈ [−3, 3]², β = 10⁻⁴ (with -quick,
// N = 10⁴ and β = 10⁻²: the same posterior width).
func tgm(seed uint64, quick bool) (*posterior, error) {
	const sigma2, lo, hi = 2.0, -3.0, 3.0
	n := 1000000
	if quick {
		n = 10000
	}
	x := sim.MixtureData(rand.New(rand.NewPCG(seed, 0)), n)
	e, err := model.NewGaussianMixture(x, sigma2)
	if err != nil {
		return nil, err
	}
	box, err := model.NewCube(2, lo, hi)
	if err != nil {
		return nil, err
	}
	return &posterior{name: "tgm", post: &exactmh.Posterior{Energy: e, Prior: box, Beta: 100 / float64(n)},
		init: []float64{0.5, 0.5}, n: n, d: 2}, nil
}

// keptDraws returns the draws per chain that the diagnostics use: chains
// bounded by time end at different lengths and are cut to the shortest.
func keptDraws(res *exactmh.Result) int {
	short := math.MaxInt
	for _, c := range res.Chains {
		short = min(short, c.Len())
	}
	return short
}

// keptCost returns the transitions and datum evaluations (energies and
// gradients) behind the kept draws: each chain's sampling evaluations per
// draw times the draws kept of it. Counting every transition of the longer
// chains against the ESS of the cut ones would overstate the cost per
// effective draw (by 1.6× on rlr_d100 with 165 and 60 draws).
func keptCost(res *exactmh.Result) (steps, evals float64) {
	short := float64(keptDraws(res))
	for _, c := range res.Chains {
		if c.Len() == 0 {
			continue
		}
		perDraw := short / float64(c.Len())
		steps += float64(c.Sampling.Steps) * perDraw
		evals += float64(c.Sampling.Evals+c.Sampling.GradEvals) * perDraw
	}
	return steps, evals
}

// moments returns the pooled mean and standard deviation of every
// coordinate.
func moments(res *exactmh.Result) (mean, sd []float64) {
	mean = res.Mean()
	sd = make([]float64, res.Dim)
	var k int
	for _, c := range res.Chains {
		for i := range c.Len() {
			for j := range sd {
				v := res.Draw(c.Chain, i)[j] - mean[j]
				sd[j] += v * v
			}
			k++
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(k-1))
	}
	return mean, sd
}

// figures writes ESS/s per kernel and posterior, and the scaling study.
func figures(dir string, rows []map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	posts := []string{"rlr_d10", "logreg_d50", "rlr_d100", "tgm"}
	byKernel := map[string]*figure.Series{}
	var order []string
	var scaleX, scaleY []float64
	for _, r := range rows {
		v, ok := r["ess_per_sec"].(float64)
		if !ok {
			continue
		}
		name := r["posterior"].(string)
		if name == "rlr_d10_scaling" {
			scaleX = append(scaleX, number(r["n"]))
			scaleY = append(scaleY, number(r["evals_per_ess"]))
			continue
		}
		k := r["kernel"].(string)
		if byKernel[k] == nil {
			byKernel[k] = &figure.Series{Name: k}
			order = append(order, k)
		}
		s := byKernel[k]
		s.X = append(s.X, float64(slices.Index(posts, name)+1))
		s.Y = append(s.Y, v)
	}
	var series []figure.Series
	for _, k := range order {
		series = append(series, *byKernel[k])
	}
	if len(series) > 0 {
		err := figure.Lines(filepath.Join(dir, "tall_ess_per_sec.png"), figure.Layout{
			Title: "min bulk ESS/s: 1 rlr d=10, 2 logreg d=50, 3 rlr d=100, 4 tgm", XLabel: "posterior",
			YLabel: "ESS per second", LogY: true, Width: 7 * 72, Height: 4.5 * 72}, series)
		if err != nil {
			return err
		}
	}
	if len(scaleX) > 1 {
		return figure.Lines(filepath.Join(dir, "tall_scaling.png"), figure.Layout{Title: "SMH-2-CN, rlr d = 10",
			XLabel: "N", YLabel: "datum evaluations per effective draw", LogX: true, LogY: true},
			[]figure.Series{{Name: "evals/ESS", X: scaleX, Y: scaleY}})
	}
	return nil
}

// replot draws the figures from a file of -json rows.
func replot(path, dir string) error {
	if dir == "" {
		return fmt.Errorf("-plot needs -out")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []map[string]any
	dec := json.NewDecoder(f)
	for {
		var r map[string]any
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if report.IsHeader(r) {
			continue
		}
		rows = append(rows, r)
	}
	return figures(dir, rows)
}

// number reads a row's numeric field, an int when the row was made here
// and a float64 when it was read back from JSON; NaN for null (a missing
// or non-finite value), so the text table prints NaN.
func number(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Split(s, ",") {
		if k != "" {
			m[k] = true
		}
	}
	return m
}

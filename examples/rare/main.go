// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command rare measures the automatic default on a rare-event logistic
// regression, the posterior on which an independence-like proposal from
// the Laplace approximation sticks: binary features present in 0.05–0.2 %
// of the rows make their coefficients' posteriors skewed, with one tail
// far heavier than the Laplace approximation's.
//
// The data (simulated from -seed so that anyone can rerun them): N rows
// (-n, 10⁶ by default), an intercept, -cont standard normal features and
// -rare binary features with prevalences spread evenly over
// [-prevlo, -prevhi]; y_i ~ Bernoulli(logistic(x_iᵀθ*)) with intercept
// -intercept (−5), continuous coefficients 0.5·(−1)^j and rare coefficients
// alternately +1 and −1. Prior N(0, 2.5²) on every coefficient.
//
// For each run it prints the choice, the longest stay of any chain (the
// most transitions a chain spent at one point), min bulk and tail ESS,
// and for each rare coefficient its posterior mean, 5 % and 95 %
// quantiles, bulk and tail ESS; the time of the choice, warmup and
// sampling; and min bulk ESS per second including everything.
//
//	go run ./examples/rare                        # N = 10⁶, 4 chains × (1000 warmup + 10000 draws)
//	go run ./examples/rare -kernel TFMH-CV-CN -nu 0   # the Gaussian Crank–Nicolson proposal for comparison
//	go run ./examples/rare -export DIR            # only write the data for examples/rare/stan
//
// -check FILE compares the run with a reference summary that -save FILE
// wrote (examples/rare/reference.txt: a long run of TFMH with the random
// walk shaped by the Laplace approximation, -kernel TFMH-CV-RW, which has
// no Crank–Nicolson move to stick with) by issue 33's rare-event
// criteria: min tail ESS at least half the min bulk ESS, no chain staying
// more than 50 transitions, and each rare coefficient's mean, 5 % and 95 %
// quantiles within 0.1 reference sd of the reference's. It prints each
// comparison and exits with status 1 if any fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 10000)
	n := flag.Int("n", 1000000, "rows")
	nCont := flag.Int("cont", 14, "continuous features")
	nRare := flag.Int("rare", 5, "rare binary features")
	prevLo := flag.Float64("prevlo", 0.0005, "lowest prevalence of a rare feature")
	prevHi := flag.Float64("prevhi", 0.002, "highest prevalence of a rare feature")
	intercept := flag.Float64("intercept", -5, "the true intercept (−5: 0.7 % positive labels)")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	kernel := flag.String("kernel", "auto", "auto (the automatic default), a -CN kernel on the Laplace approximation (MH-CN, TFMH-CV-CN, TunaMH-CV-CN), or TFMH-CV-RW (TFMH with the random walk shaped by it: the reference)")
	thin := flag.Int("thin", 1, "keep every thin-th draw")
	save := flag.String("save", "", "write the run's summary to this file, as a reference for -check")
	check := flag.String("check", "", "compare the run with the reference summary in this file (written by -save); exit status 1 if issue 33's rare-event criteria fail")
	nu := flag.Float64("nu", 0, "with -kernel other than auto: the Crank–Nicolson proposal's Student-t degrees of freedom (0: Gaussian)")
	walk := flag.Float64("walk", 0.1, "with -kernel other than auto: the Crank–Nicolson proposal's random-walk fraction")
	scale := flag.Float64("scale", 1, "with -kernel other than auto: the initial step scale (ρ = e^{−scale})")
	maxScale := flag.Float64("maxscale", 0, "with -kernel other than auto: the Crank–Nicolson proposal's cap on the step scale (ρ ≥ e^{−maxscale}; 0: none)")
	noAdapt := flag.Bool("noadapt", false, "with -kernel other than auto: keep -scale through warmup")
	fit := flag.Bool("fit", false, "with -kernel other than auto: centre the Crank–Nicolson proposal on the mean and covariance of a pilot run's draws instead of the Laplace approximation")
	exportTo := flag.String("export", "", "only write the data as CSV (hexadecimal reals) to this directory, for examples/rare/stan")
	flag.Parse()
	if cf.Quick {
		*n, *warmup, cf.Draws = 20000, 200, 500
	}
	d := 1 + *nCont + *nRare
	rng := rand.New(rand.NewPCG(uint64(cf.Seed), 0x72617265))
	x, y, prev := simulate(rng, *n, *nCont, *nRare, *prevLo, *prevHi, *intercept)
	if *exportTo != "" {
		// DIR/rare.csv (y,x1,…,xd, reals in hexadecimal, which R reads
		// exactly) and DIR/rare_constants.csv (n, d).
		if err := report.ExportRegression(*exportTo, "rare", x, y, d); err != nil {
			log.Fatal(err)
		}
		return
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 2.5)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, d)
	names[0] = "intercept"
	for j := range *nCont {
		names[1+j] = fmt.Sprintf("x%d", j+1)
	}
	for j := range *nRare {
		names[1+*nCont+j] = fmt.Sprintf("rare%d", j+1)
	}
	post := &exactmh.Posterior{Energy: e, Prior: prior, Names: names}
	ctx := context.Background()
	cpu0 := report.CPUTime() // after the simulation: MAP, Laplace, pilots, warmup and sampling count
	set := &exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Thin: *thin, Seed: uint64(cf.Seed)}
	if !cf.Quiet {
		set.Recorder = cf.Progress()
	}
	var res *exactmh.Result
	var choiceTime time.Duration
	var chose string
	if *kernel == "auto" {
		res, err = exactmh.Sample(ctx, post, nil, set)
		if err != nil {
			log.Fatal(err)
		}
		choiceTime, chose = res.Choice.Time, res.Choice.String()
	} else {
		t0 := time.Now()
		la, err := exactmh.FindLaplace(ctx, post, make([]float64, d), &exactmh.MAPSettings{Tol: exactmh.AutoMAPTol})
		if err != nil {
			log.Fatal(err)
		}
		cn, err := la.CrankNicolson()
		if err != nil {
			log.Fatal(err)
		}
		cn.Nu, cn.Walk, cn.MaxScale = *nu, *walk, *maxScale
		if *fit {
			pres, err := exactmh.Sample(ctx, post, exactmh.MH{Proposal: cn, Scale: 1}, exactmh.LaplaceInits(&exactmh.Settings{Chains: 2, Warmup: 300, Draws: 1000, Seed: uint64(cf.Seed) + 100}, la, post))
			if err != nil {
				log.Fatal(err)
			}
			mean, cov := moments(pres)
			if cn, err = exactmh.NewCrankNicolson(mean, cov); err != nil {
				log.Fatal(err)
			}
			cn.Nu, cn.Walk, cn.MaxScale = *nu, *walk, *maxScale
		}
		var k exactmh.Kernel
		p := post
		switch *kernel {
		case "TFMH-CV-RW":
			if p, err = exactmh.ControlVariates(post, la); err != nil {
				log.Fatal(err)
			}
			gw, err := la.GaussianWalk()
			if err != nil {
				log.Fatal(err)
			}
			k = exactmh.TFMH{Proposal: gw, Scale: 2.38 / math.Sqrt(float64(d))}
		case "MH-CN":
			k = exactmh.MH{Proposal: cn, Scale: *scale}
		case "TFMH-CV-CN", "TunaMH-CV-CN":
			if p, err = exactmh.ControlVariates(post, la); err != nil {
				log.Fatal(err)
			}
			if *kernel == "TFMH-CV-CN" {
				k = exactmh.TFMH{Proposal: cn, Scale: *scale}
			} else {
				k = exactmh.TunaMH{Proposal: cn, Scale: *scale}
			}
		default:
			log.Fatalf("unknown -kernel %q", *kernel)
		}
		set = exactmh.LaplaceInits(set, la, post)
		set.NoAdapt = *noAdapt
		fmt.Printf("Laplace sds %.3g\n", la.SD())
		choiceTime = time.Since(t0)
		chose = fmt.Sprintf("%s with %v", *kernel, cn)
		if *kernel == "TFMH-CV-RW" {
			chose = "TFMH-CV-RW: TFMH on the control variates with the random walk shaped by the Laplace approximation (GaussianWalk)"
		}
		if res, err = exactmh.Sample(ctx, p, k, set); err != nil {
			log.Fatal(err)
		}
	}
	cpu := report.CPUTime() - cpu0
	s := res.Summary()
	fmt.Printf("N = %d, d = %d, rare prevalences %v, %d chains × (%d + %d)\n", *n, d, prev, cf.Chains, *warmup, cf.Draws)
	fmt.Printf("chose: %s\n", chose)
	stays := longestStays(res)
	minTail := math.Inf(1)
	for _, p := range s.Params {
		minTail = math.Min(minTail, p.ESSTail)
	}
	total := choiceTime + res.Elapsed
	fmt.Printf("longest stay per chain %v; min bulk ESS %.0f, min tail ESS %.0f; acceptance %.3f, %.1f data per step\n",
		stays, s.MinESSBulk(), minTail, s.AcceptRate, s.EvalsPerStep)
	fmt.Printf("choice %.2fs, run %.2fs (wall, %d chains on %d cores); min bulk ESS per second of sampling (chain-seconds) %.4g, including everything (wall) %.4g\n",
		choiceTime.Seconds(), res.Elapsed.Seconds(), cf.Chains, runtime.GOMAXPROCS(0), s.MinESSPerSecond(), s.MinESSBulk()/total.Seconds())
	var scales []string
	for _, ch := range res.Chains {
		scales = append(scales, fmt.Sprintf("%.3g", ch.Scale))
	}
	fmt.Printf("CPU time after the simulation %.2fs (MAP, Laplace, pilots, warmup, sampling): min bulk ESS per CPU-second %.4g\n", cpu.Seconds(), s.MinESSBulk()/cpu.Seconds())
	fmt.Printf("step scales %s\n", strings.Join(scales, " "))
	for _, w := range s.Warnings {
		fmt.Printf("warning: %s\n", w)
	}
	fmt.Printf("%-10s %9s %9s %9s %9s %8s %8s\n", "", "mean", "sd", "q5", "q95", "bulk", "tail")
	for j, p := range s.Params {
		if j != 0 && j <= *nCont && j != 1 {
			continue
		}
		fmt.Printf("%-10s %9.4f %9.4f %9.4f %9.4f %8.0f %8.0f\n", p.Name, p.Mean, p.SD, p.Q5, p.Q95, p.ESSBulk, p.ESSTail)
	}
	if *save != "" {
		if err := saveSummary(*save, s); err != nil {
			log.Fatal(err)
		}
	}
	if *check != "" {
		ok, err := checkReference(*check, s, stays, names[1+*nCont:])
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			defer os.Exit(1)
		}
	}
	if cf.Out != "" {
		if err := cf.SaveStanCSV(res, "rare", names); err != nil {
			log.Fatal(err)
		}
	}
}

// simulate returns the design (row-major, N×d), the labels and the rare
// features' prevalences.
func simulate(rng *rand.Rand, n, nCont, nRare int, lo, hi, intercept float64) (x, y, prev []float64) {
	d := 1 + nCont + nRare
	theta := make([]float64, d)
	theta[0] = intercept
	for j := range nCont {
		theta[1+j] = 0.5 * float64(1-2*(j%2))
	}
	prev = make([]float64, nRare)
	for j := range nRare {
		theta[1+nCont+j] = float64(1 - 2*(j%2))
		prev[j] = lo
		if nRare > 1 {
			prev[j] = lo + (hi-lo)*float64(j)/float64(nRare-1)
		}
	}
	x = make([]float64, n*d)
	y = make([]float64, n)
	for i := range n {
		row := x[i*d : (i+1)*d]
		row[0] = 1
		for j := range nCont {
			row[1+j] = rng.NormFloat64()
		}
		for j := range nRare {
			if rng.Float64() < prev[j] {
				row[1+nCont+j] = 1
			}
		}
		var z float64
		for j, v := range row {
			z += v * theta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y, prev
}

// moments returns the mean and covariance of a run's draws.
func moments(res *exactmh.Result) ([]float64, *mat.SymDense) {
	d := res.Dim
	var rows []float64
	m := 0
	for c, ch := range res.Chains {
		for k := range ch.Len() {
			rows = append(rows, res.Draw(c, k)...)
			m++
		}
	}
	x := mat.NewDense(m, d, rows)
	cov := mat.NewSymDense(d, nil)
	stat.CovarianceMatrix(cov, x, nil)
	mean := make([]float64, d)
	for j := range d {
		mean[j] = stat.Mean(mat.Col(nil, j, x), nil)
	}
	return mean, cov
}

// longestStays returns, per chain, the most consecutive draws at one point.
func longestStays(res *exactmh.Result) []int {
	out := make([]int, len(res.Chains))
	for c, ch := range res.Chains {
		stay := 0
		for k := range ch.Len() {
			if k > 0 && sameDraw(res.Draw(c, k), res.Draw(c, k-1)) {
				stay++
			} else {
				stay = 1
			}
			out[c] = max(out[c], stay)
		}
	}
	return out
}

func sameDraw(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return true
}

// saveSummary writes the summary's mean, sd, 5 % and 95 % quantiles, bulk
// and tail ESS per coordinate, one line each after a comment with the
// command line, for checkReference.
func saveSummary(path string, s *exactmh.Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n# name mean sd q5 q95 ess_bulk ess_tail\n", strings.Join(os.Args[1:], " "))
	for _, p := range s.Params {
		fmt.Fprintf(&b, "%s %.6g %.6g %.6g %.6g %.0f %.0f\n", p.Name, p.Mean, p.SD, p.Q5, p.Q95, p.ESSBulk, p.ESSTail)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// refRow is one coordinate of a reference summary.
type refRow struct{ mean, sd, q5, q95 float64 }

// checkReference prints issue 33's rare-event criteria for the run and
// reports whether all hold: min tail ESS ≥ ½ min bulk ESS, no stay over
// diagnostics' 50 transitions, and the rare coefficients' means, 5 % and
// 95 % quantiles within 0.1 reference sd of the reference's.
func checkReference(path string, s *exactmh.Summary, stays []int, rare []string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	ref := map[string]refRow{}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 5 {
			return false, fmt.Errorf("%s:%d: want name mean sd q5 q95, got %q", path, i+1, line)
		}
		var v [4]float64
		for j := range v {
			if v[j], err = strconv.ParseFloat(f[1+j], 64); err != nil {
				return false, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
		}
		ref[f[0]] = refRow{v[0], v[1], v[2], v[3]}
	}
	ok := true
	minTail := math.Inf(1)
	for _, p := range s.Params {
		minTail = math.Min(minTail, p.ESSTail)
	}
	pass := func(b bool) string {
		if b {
			return "pass"
		}
		ok = false
		return "FAIL"
	}
	fmt.Printf("check: min tail ESS %.0f ≥ ½ min bulk ESS %.0f: %s\n", minTail, s.MinESSBulk(), pass(minTail >= s.MinESSBulk()/2))
	longest := slices.Max(stays)
	fmt.Printf("check: longest stay %d ≤ 50: %s\n", longest, pass(longest <= 50))
	for _, p := range s.Params {
		if !slices.Contains(rare, p.Name) {
			continue
		}
		r, found := ref[p.Name]
		if !found {
			return false, fmt.Errorf("%s has no row for %s", path, p.Name)
		}
		dm, d5, d95 := (p.Mean-r.mean)/r.sd, (p.Q5-r.q5)/r.sd, (p.Q95-r.q95)/r.sd
		worst := math.Max(math.Abs(dm), math.Max(math.Abs(d5), math.Abs(d95)))
		fmt.Printf("check: %s: mean, q5, q95 off the reference's by %+.3f, %+.3f, %+.3f sd (≤ 0.1): %s\n", p.Name, dm, d5, d95, pass(worst <= 0.1))
	}
	return ok, nil
}

// Robust linear regression of the TunaMH paper (§5.1, App. J.2).
//
// Data x_i ~ N(0, I_d), y_i = Σ_j x_ij + ε_i with ε_i ~ N(0, 1); the model
// has Student-t noise with ν = 4 and a flat prior, no tempering. For every
// d and N the program runs, one chain each for a fixed wall-clock budget,
//
//   - without the MAP, from θ = 0 after a burn-in of the same budget:
//     MH, TFMH, FlyMC and TunaMH;
//   - with the MAP (found by exactmh.FindMAP, Newton), started there with no
//     burn-in: MH-MAP, SMH-1 and SMH-2 (control variates at the MAP),
//     FlyMC-MAP (bounds tight at the MAP) and TunaMH-MAP;
//
// and prints the acceptance rate, the mean batch (Info.Batch: N for MH, the
// Poisson count for TunaMH, the data evaluated before the first rejection
// for TFMH/SMH, the bright data for FlyMC), datum evaluations per step and
// ESS per second (the smallest bulk ESS over the d coordinates, per second
// of sampling).
//
// Step sizes default to the paper's Tables 2 and 3 (tuned there to
// acceptance 0.25 for d = 100); for d ≠ 100, or with -tune, each kernel's
// step is instead adapted to acceptance 0.25 during a warmup of -warmup
// transitions. χ = 10⁻⁵ for N ≤ 20000 and 10⁻⁴ above, FlyMC's q = 0.01, as in
// the paper. The paper reports, at d = 10 and N = 10⁵, ESS/s of TFMH 0.02,
// FlyMC 0.75, TunaMH 1.7, SMH-1 174.7, SMH-2 5969.5, FlyMC-MAP 730.8 and
// TunaMH-MAP 730.1; absolute figures depend on the machine, the ratios are
// what to compare.
//
// With -setting aux (or both, the default) it also runs the
// auxiliary-variable paper's §5.2 setting: d ∈ {10, 50}, N = 10⁵, β = 10⁻⁴,
// a flat prior on the ball ‖θ‖ ≤ 15, λ = 0.01·L²; MH, MALA, HMC (10 leapfrog
// steps, 5 for d = 50), PoissonMH, Poisson-Barker and Poisson-MALA, each
// adapted to the target acceptances of -accept, from θ0 ~ N(0, I). It prints
// ESS/s (min, median, max over coordinates) and the MSE of the chain's mean
// against the data-generating θ* = (1, …, 1). Paper Table 2 (d = 10, best
// acceptance): Poisson-MALA (340.2, 353.0, 361.2), Poisson-Barker (197.4,
// 204.3, 207.7), PoissonMH (73.7, 76.7, 79.5), MALA (3.8, 4.1, 4.3), MH (1.3,
// 1.6, 1.8), HMC (0.7, 0.8, 0.8).
//
//	go run ./examples/rlr                 # d ∈ {10, 100}, N ∈ {5000, 20000, 50000, 100000}
//	go run ./examples/rlr -d 10 -n 100000 -budget 10s
//	go run ./examples/rlr -setting aux -accept 0.55
//	go run ./examples/rlr -quick -json
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/examples/internal/sim"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/plot/vg"
)

const nu = 4

func main() {
	cf := report.RegisterCommon(1, 0)
	dims := flag.String("d", "10,100", "comma-separated dimensions")
	sizes := flag.String("n", "5000,20000,50000,100000", "comma-separated data sizes N")
	budget := flag.Duration("budget", 3*time.Second, "sampling wall time per kernel (burn-in takes as long again)")
	tune := flag.Bool("tune", false, "adapt every step size to acceptance 0.25 instead of the paper's tables")
	warmup := flag.Int("warmup", 1000, "warmup transitions when adapting step sizes")
	only := flag.String("kernels", "", "comma-separated kernel names to run (default: all)")
	setting := flag.String("setting", "both", "tunamh (TunaMH paper §5.1), aux (auxiliary-variable paper §5.2) or both")
	auxDims := flag.String("auxd", "10,50", "dimensions of the aux setting")
	accepts := flag.String("accept", "0.25,0.4,0.55", "target acceptance rates of the aux setting")
	flag.Parse()
	quick := &cf.Quick
	log.SetFlags(0)
	log.SetPrefix("rlr: ")
	if *quick {
		*dims, *sizes, *budget, *warmup, *auxDims, *accepts = "10", "5000", 300*time.Millisecond, 300, "10", "0.4"
	}
	if *setting != "tunamh" && *setting != "aux" && *setting != "both" {
		log.Fatalf("-setting %q: want tunamh, aux or both", *setting)
	}
	ds, err := ints(*dims)
	if err != nil {
		log.Fatalf("-d: %v", err)
	}
	ns, err := ints(*sizes)
	if err != nil {
		log.Fatalf("-n: %v", err)
	}
	want := map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		if k != "" {
			want[k] = true
		}
	}

	if *setting != "aux" {
		tunaSetting(ds, ns, want, *budget, *warmup, *tune, cf)
	}
	if *setting != "tunamh" {
		ad, err := ints(*auxDims)
		if err != nil {
			log.Fatalf("-auxd: %v", err)
		}
		acc, err := floats(*accepts)
		if err != nil {
			log.Fatalf("-accept: %v", err)
		}
		n := 100000
		if *quick {
			n = 10000
		}
		auxSetting(ad, n, acc, want, *budget, *warmup, cf)
	}
}

// tunaSetting runs the TunaMH paper's comparison for every d and N.
func tunaSetting(ds, ns []int, want map[string]bool, budget time.Duration, warmup int, tune bool, cf *report.Common) {
	seed, asJSON := cf.Seed, cf.JSON
	for _, d := range ds {
		curves := map[string]*figure.Series{}
		var order []string
		for _, n := range ns {
			post, err := problem(n, d, seed)
			if err != nil {
				log.Fatal(err)
			}
			start := time.Now()
			mapRes, err := exactmh.FindMAP(context.Background(), post, make([]float64, d), nil)
			if err != nil {
				log.Fatalf("d = %d, N = %d: MAP: %v", d, n, err)
			}
			if !asJSON {
				fmt.Printf("\nrobust linear regression, d = %d, N = %d, ν = %d: MAP in %.2fs (%d iterations, ‖∇‖ = %.1e)\n",
					d, n, nu, time.Since(start).Seconds(), mapRes.Iterations, mapRes.GradNorm)
				fmt.Printf("%-11s %9s %7s %11s %11s %9s %9s\n", "kernel", "step", "accept", "mean batch", "evals/step", "ESS/s", "steps")
			}
			for _, r := range runs(d, n, mapRes.Theta, tune) {
				if len(want) > 0 && !want[r.name] {
					continue
				}
				res, step, err := execute(r, post, budget, warmup, 0.25, cf)
				if err != nil {
					log.Fatalf("d = %d, N = %d, %s: %v", d, n, r.name, err)
				}
				if err := cf.SaveStanCSV(res, fmt.Sprintf("rlr_d%d_n%d_%s", d, n, r.name), nil); err != nil {
					log.Fatal(err)
				}
				s := res.Summary()
				if curves[r.name] == nil {
					curves[r.name] = &figure.Series{Name: r.name}
					order = append(order, r.name)
				}
				curves[r.name].X = append(curves[r.name].X, float64(n))
				curves[r.name].Y = append(curves[r.name].Y, s.MinESSPerSecond())
				if asJSON {
					report.Write(os.Stdout, report.Row(res, map[string]any{
						"setting": "tunamh", "kernel": r.name, "d": d, "n": n, "step": step, "map": r.atMAP, "tuned": r.tune,
					}))
					continue
				}
				fmt.Printf("%-11s %9.2g %7.3f %11.1f %11.1f %9.2f %9d\n", r.name, step, s.AcceptRate,
					s.MeanBatch, s.EvalsPerStep, s.MinESSPerSecond(), res.Sampling().Steps)
			}
		}
		if cf.Out != "" && len(ns) > 1 {
			var series []figure.Series
			for _, name := range order {
				series = append(series, *curves[name])
			}
			path := filepath.Join(cf.Out, fmt.Sprintf("rlr_d%d_ess.png", d))
			if err := figure.Lines(path, figure.Layout{Title: fmt.Sprintf("robust linear regression, d = %d: ESS/s (min over coordinates)", d),
				XLabel: "N", YLabel: "ESS per second", LogX: true, LogY: true, LegendTop: true, Width: 6 * vg.Inch, Height: 4 * vg.Inch}, series); err != nil {
				log.Fatal(err)
			}
		}
	}
}

// run is one kernel of the comparison.
type run struct {
	name   string
	kernel func(step float64) exactmh.Kernel
	step   float64 // the paper's step (0: none given, tune)
	atMAP  bool    // start at the MAP, no burn-in
	init   []float64
	tune   bool
}

// Paper step sizes for d = 100 (Tables 2 and 3), by N.
var (
	table2 = map[int][4]float64{ // MH, TFMH, FlyMC, TunaMH
		5000: {4e-3, 1e-4, 2.7e-3, 8e-4}, 20000: {2e-3, 3e-5, 1.5e-3, 3e-4},
		50000: {1.3e-3, 1.2e-5, 9e-4, 2e-4}, 100000: {9e-4, 6e-6, 7e-4, 1.7e-4},
	}
	table3 = map[int][5]float64{ // MH-MAP, SMH-1, SMH-2, FlyMC-MAP, TunaMH-MAP
		5000: {4e-3, 4e-3, 4e-3, 6e-3, 8e-4}, 20000: {2e-3, 2e-3, 2e-3, 3.5e-3, 3e-4},
		50000: {1.2e-3, 1.2e-3, 1.2e-3, 2.5e-3, 1.2e-4}, 100000: {9e-4, 5.9e-4, 8e-4, 1.7e-3, 7e-5},
	}
)

// runs lists the nine kernels for one problem.
func runs(d, n int, theMAP []float64, tune bool) []run {
	chi := 1e-5
	if n > 20000 {
		chi = 1e-4
	}
	var s2 [4]float64
	var s3 [5]float64
	if d == 100 && !tune {
		s2, s3 = table2[n], table3[n]
	}
	zero := make([]float64, d)
	rs := []run{
		{name: "MH", step: s2[0], init: zero, kernel: func(h float64) exactmh.Kernel { return exactmh.MH{Scale: h} }},
		{name: "TFMH", step: s2[1], init: zero, kernel: func(h float64) exactmh.Kernel { return exactmh.TFMH{Scale: h} }},
		{name: "FlyMC", step: s2[2], init: zero, kernel: func(h float64) exactmh.Kernel { return exactmh.FlyMC{Scale: h, Q: 0.01} }},
		{name: "TunaMH", step: s2[3], init: zero, kernel: func(h float64) exactmh.Kernel { return exactmh.TunaMH{Scale: h, Chi: chi} }},
		{name: "MH-MAP", step: s3[0], atMAP: true, kernel: func(h float64) exactmh.Kernel { return exactmh.MH{Scale: h} }},
		{name: "SMH-1", step: s3[1], atMAP: true, kernel: func(h float64) exactmh.Kernel {
			return exactmh.SMH{Order: 1, Center: theMAP, Scale: h}
		}},
		{name: "SMH-2", step: s3[2], atMAP: true, kernel: func(h float64) exactmh.Kernel {
			return exactmh.SMH{Order: 2, Center: theMAP, Scale: h}
		}},
		{name: "FlyMC-MAP", step: s3[3], atMAP: true, kernel: func(h float64) exactmh.Kernel {
			return exactmh.FlyMC{Scale: h, Q: 0.01, TightAt: theMAP}
		}},
		{name: "TunaMH-MAP", step: s3[4], atMAP: true, kernel: func(h float64) exactmh.Kernel { return exactmh.TunaMH{Scale: h, Chi: chi} }},
	}
	for k := range rs {
		if rs[k].atMAP {
			rs[k].init = theMAP
		}
		rs[k].tune = rs[k].step == 0
	}
	return rs
}

// execute runs one kernel: for a chain not started at the MAP, a burn-in
// of budget; with r.tune, a warmup adapting the step near the posterior;
// then sampling for budget, thinned to keep at most about 20000 draws.
func execute(r run, post *exactmh.Posterior, budget time.Duration, warmup int, accept float64, cf *report.Common) (*exactmh.Result, float64, error) {
	seed := cf.Seed
	step, init := r.step, r.init
	if r.tune {
		step = 0.1 / math.Sqrt(float64(len(init)))
	}
	progress := cf.Progress()
	// phase runs the kernel from init and returns the result, the step it
	// ended with, its last draw and its transitions per second.
	phase := func(set exactmh.Settings) (*exactmh.Result, error) {
		set.Chains, set.Init, set.TargetAccept, set.Recorder = 1, init, accept, progress
		res, err := exactmh.Sample(context.Background(), post, r.kernel(step), &set)
		if err != nil {
			return nil, err
		}
		ch := res.Chains[0]
		if r.tune && !set.NoAdapt {
			step = ch.Scale
		}
		if ch.Len() > 0 {
			init = res.Draw(0, ch.Len()-1)
		}
		return res, nil
	}
	var rate float64 // transitions per second at the final step
	if !r.atMAP {
		res, err := phase(exactmh.Settings{Seed: seed + 1, Warmup: warmup, NoAdapt: !r.tune, Duration: budget})
		if err != nil {
			return nil, 0, err
		}
		rate = float64(res.Sampling().Steps) / res.Sampling().Time.Seconds()
	}
	if r.tune {
		// Adapt (again) where the chain now is: near the posterior.
		if _, err := phase(exactmh.Settings{Seed: seed + 2, Warmup: warmup, Draws: 1}); err != nil {
			return nil, 0, err
		}
	}
	if r.atMAP {
		init = r.init
		res, err := phase(exactmh.Settings{Seed: seed + 3, Warmup: exactmh.NoWarmup, NoAdapt: true, Duration: budget / 10})
		if err != nil {
			return nil, 0, err
		}
		init = r.init // the pilot only measured the rate
		rate = float64(res.Sampling().Steps) / res.Sampling().Time.Seconds()
	}
	thin := max(1, int(rate*budget.Seconds()/20000))
	set := exactmh.Settings{Chains: cf.Chains, Draws: cf.Draws, Seed: seed, Init: init, TargetAccept: accept,
		Recorder: progress, Warmup: exactmh.NoWarmup, NoAdapt: true, Duration: budget, Thin: thin}
	res, err := exactmh.Sample(context.Background(), post, r.kernel(step), &set)
	if err != nil {
		return nil, 0, err
	}
	return res, step, nil
}

// auxSetting runs the auxiliary-variable paper's comparison.
func auxSetting(ds []int, n int, accepts []float64, want map[string]bool, budget time.Duration, warmup int, cf *report.Common) {
	seed, asJSON := cf.Seed, cf.JSON
	const beta, radius, lambdaScale = 1e-4, 15.0, 0.01
	for _, d := range ds {
		post, err := problem(n, d, seed)
		if err != nil {
			log.Fatal(err)
		}
		ball, err := model.NewBall(d, radius, nil)
		if err != nil {
			log.Fatal(err)
		}
		post.Prior, post.Beta = ball, beta
		rng := rand.New(rand.NewPCG(seed, 5))
		init := make([]float64, d)
		for j := range init {
			init[j] = rng.NormFloat64()
		}
		leapfrog := 10
		if d >= 50 {
			leapfrog = 5
		}
		kernels := []exactmh.Kernel{
			exactmh.MH{}, exactmh.MALA{}, exactmh.HMC{Steps: leapfrog},
			exactmh.PoissonMH{LambdaScale: lambdaScale}, exactmh.PoissonBarker{LambdaScale: lambdaScale},
			exactmh.PoissonMALA{LambdaScale: lambdaScale},
		}
		if !asJSON {
			fmt.Printf("\nrobust linear regression (auxiliary-variable paper), d = %d, N = %d, β = %g, ball R = %g, λ = %g·L²\n",
				d, n, beta, radius, lambdaScale)
			fmt.Printf("%-15s %6s %7s %8s %11s %29s %10s\n", "kernel", "target", "accept", "step", "mean batch",
				"ESS/s (min, median, max)", "MSE(θ*)")
		}
		for _, acc := range accepts {
			for _, k := range kernels {
				if len(want) > 0 && !want[k.Name()] {
					continue
				}
				set := &exactmh.Settings{Chains: cf.Chains, Draws: cf.Draws, Seed: seed, Init: init, Warmup: warmup,
					TargetAccept: acc, Duration: budget, Recorder: cf.Progress()}
				res, err := exactmh.Sample(context.Background(), post, k, set)
				if err != nil {
					log.Fatalf("d = %d, %s: %v", d, k.Name(), err)
				}
				if err := cf.SaveStanCSV(res, fmt.Sprintf("rlr_aux_d%d_%s_acc%g", d, k.Name(), acc), nil); err != nil {
					log.Fatal(err)
				}
				lo, med, hi := report.ESSPerSecond(res)
				var mse float64
				for _, m := range res.Mean() {
					mse += (m - 1) * (m - 1) / float64(d)
				}
				s := res.Summary()
				if asJSON {
					report.Write(os.Stdout, report.Row(res, map[string]any{
						"setting": "aux", "d": d, "n": n, "target_accept": acc, "step": res.Chains[0].Scale,
						"ess_per_sec_min": lo, "ess_per_sec_median": med, "ess_per_sec_max": hi, "mse": mse,
					}))
					continue
				}
				fmt.Printf("%-15s %6.2f %7.3f %8.3g %11.0f %9.2f, %8.2f, %8.2f %10.2e\n", res.Kernel, acc, s.AcceptRate,
					res.Chains[0].Scale, s.MeanBatch, lo, med, hi, mse)
			}
		}
	}
}

// floats parses a comma-separated list of numbers in (0, 1).
func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0 && v < 1) {
			return nil, fmt.Errorf("%q is not in (0, 1)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// problem simulates the data and returns the posterior.
func problem(n, d int, seed uint64) (*exactmh.Posterior, error) {
	x, y := sim.RegressionData(rand.New(rand.NewPCG(seed, uint64(n*1000+d))), n, d)
	e, err := model.NewStudentTRegression(x, y, d, nu)
	if err != nil {
		return nil, err
	}
	return &exactmh.Posterior{Energy: e}, nil
}

// ints parses a comma-separated list of positive integers.
func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

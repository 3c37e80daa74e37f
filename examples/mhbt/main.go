// MH with batch tempering (MHBT) against full-batch MH: the experiments of
// the MHBT paper's §3.1.
//
// MHBT is inexact by design: its chain targets the posterior raised to
// 1/T, T = n/c_n. The first experiment shows it. For d ∈ {2, 5}, n = 10⁵
// data x ~ N(θ*, I) with θ*_j = 2, prior N(0, I), m = 1000 and c_n = 20
// (T = 5000), it prints the mean variance over coordinates of MHBT's draws,
// the tempered posterior's T/(n+1) it should match and the posterior's
// 1/(n+1) it does not, and the same for full-batch MH, which matches the
// posterior.
//
// The second experiment is the Gaussian mixture of Welling and Teh: n = 10⁵
// data from ½N(0, 2) + ½N(θ2, 2) for θ2 ∈ {0.5, 2, 4}, the model
// ½N(θ1, 2) + ½N(θ1 + θ2, 2), prior N(0, diag(10, 1)). The posterior has
// two modes, (0, θ2) and (θ2, −θ2). For each θ2 the program runs MHBT and
// full-batch MH for the same wall-clock budget from the first mode and
// counts how often each chain switches mode: the tempered MHBT chain hops
// between them while MH stays put once θ2 separates them. With -out DIR it
// writes the θ1 traces (mhbt_mixture_θ2.png).
//
//	go run ./examples/mhbt
//	go run ./examples/mhbt -out figures -json
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
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot/vg"
)

const (
	m  = 1000
	cn = 20.0
)

func main() {
	cf := report.RegisterCommon(1, 0)
	n := flag.Int("n", 100000, "number of data")
	budget := flag.Duration("budget", 3*time.Second, "sampling wall time per kernel and setting")
	flag.Parse()
	seed, asJSON, quick, quiet, out := &cf.Seed, &cf.JSON, &cf.Quick, &cf.Quiet, &cf.Out
	log.SetFlags(0)
	log.SetPrefix("mhbt: ")
	if *quick {
		*n, *budget = 10000, 300*time.Millisecond
	}
	run := func(post *exactmh.Posterior, k exactmh.Kernel, init []float64, warmup int, name string) *exactmh.Result {
		set := &exactmh.Settings{Chains: cf.Chains, Draws: cf.Draws, Seed: *seed, Init: init, Warmup: warmup,
			TargetAccept: 0.3, Duration: *budget, Recorder: cf.Progress()}
		res, err := exactmh.Sample(context.Background(), post, k, set)
		if err != nil {
			log.Fatalf("%s: %v", k.Name(), err)
		}
		if err := cf.SaveStanCSV(res, name, nil); err != nil {
			log.Fatal(err)
		}
		return res
	}

	// 1. The tempered Gaussian.
	temp := float64(*n) / cn
	if !*asJSON {
		fmt.Printf("Gaussian mean, n = %d, m = %d, c_n = %g: T = n/c_n = %g\n", *n, m, cn, temp)
		fmt.Printf("%-6s %3s %7s %12s %14s %14s\n", "kernel", "d", "accept", "variance", "T/(n+1)", "1/(n+1)")
	}
	for _, d := range []int{2, 5} {
		post, xbar := gaussian(d, *n, *seed)
		for _, k := range []exactmh.Kernel{exactmh.MHBT{BatchSize: m, Cn: cn}, exactmh.MH{}} {
			init := make([]float64, d)
			for j := range init {
				init[j] = float64(*n) * xbar[j] / float64(*n+1)
			}
			res := run(post, k, init, 500, fmt.Sprintf("mhbt_gaussian_d%d_%s", d, k.Name()))
			var v float64
			for j := range d {
				v += variance(res.Samples(j)[0]) / float64(d)
			}
			s := res.Summary()
			if *asJSON {
				report.Write(os.Stdout, report.Row(res, map[string]any{"experiment": "gaussian", "d": d, "n": *n,
					"variance": v, "tempered_variance": temp / float64(*n+1), "posterior_variance": 1 / float64(*n+1)}))
				continue
			}
			fmt.Printf("%-6s %3d %7.3f %12.4g %14.4g %14.4g\n", res.Kernel, d, s.AcceptRate, v, temp/float64(*n+1), 1/float64(*n+1))
		}
	}

	// 2. The Gaussian mixture: mode hopping.
	if !*asJSON {
		fmt.Printf("\nGaussian mixture, n = %d, prior N(0, diag(10, 1)), modes (0, θ2) and (θ2, −θ2), %v per chain\n", *n, *budget)
		fmt.Printf("%-6s %5s %7s %9s %9s %14s\n", "kernel", "θ2", "accept", "steps", "switches", "share in (0,θ2)")
	}
	for _, theta2 := range []float64{0.5, 2, 4} {
		post := mixture(*n, theta2, *seed)
		var series []figure.Series
		for _, k := range []exactmh.Kernel{exactmh.MHBT{BatchSize: m, Cn: cn}, exactmh.MH{}} {
			res := run(post, k, []float64{0, theta2}, 500, fmt.Sprintf("mhbt_mixture_%g_%s", theta2, k.Name()))
			ch := res.Chains[0]
			switches, share := modes(res, theta2)
			s := res.Summary()
			if *asJSON {
				report.Write(os.Stdout, report.Row(res, map[string]any{"experiment": "mixture", "theta2": theta2, "n": *n,
					"switches": switches, "share_first_mode": share}))
			} else {
				fmt.Printf("%-6s %5.1f %7.3f %9d %9d %14.3f\n", res.Kernel, theta2, s.AcceptRate, ch.Sampling.Steps, switches, share)
			}
			series = append(series, trace(res))
		}
		if *out != "" {
			path := filepath.Join(*out, fmt.Sprintf("mhbt_mixture_%g.png", theta2))
			if err := figure.Lines(path, figure.Layout{Title: fmt.Sprintf("θ1 traces, θ2 = %g: modes at θ1 = 0 and θ1 = %g", theta2, theta2),
				XLabel: "seconds of sampling", YLabel: "θ1", Width: 7 * vg.Inch, Height: 3.5 * vg.Inch, LegendTop: true}, series); err != nil {
				log.Fatal(err)
			}
			if !*quiet {
				log.Printf("wrote %s", path)
			}
		}
	}
}

// gaussian returns the §3.1 Gaussian-mean posterior and x̄.
func gaussian(d, n int, seed uint64) (*exactmh.Posterior, []float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(d)))
	x := make([]float64, n*d)
	xbar := make([]float64, d)
	for i := range n {
		for j := range d {
			x[i*d+j] = 2 + rng.NormFloat64()
			xbar[j] += x[i*d+j] / float64(n)
		}
	}
	id := mat.NewSymDense(d, nil)
	for j := range d {
		id.SetSym(j, j, 1)
	}
	e, err := exactmh.NewGaussianMean(x, d, id)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := exactmh.NewIsoGaussian(d, 1)
	if err != nil {
		log.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}, xbar
}

// mixture returns the Welling–Teh mixture posterior for data with θ1 = 0
// and the given θ2.
func mixture(n int, theta2 float64, seed uint64) *exactmh.Posterior {
	rng := rand.New(rand.NewPCG(seed, 77))
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sqrt2 * rng.NormFloat64()
		if rng.IntN(2) == 1 {
			x[i] += theta2
		}
	}
	e, err := exactmh.NewGaussianMixture(x, 2)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := exactmh.NewGaussian([]float64{0, 0}, []float64{math.Sqrt(10), 1})
	if err != nil {
		log.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// modes returns how often the chain switches between the modes (0, θ2)
// and (θ2, −θ2) — counting a switch only when the draw is nearer the other
// mode by half their distance, so noise at the midpoint is not counted —
// and the share of draws nearer the first.
func modes(res *exactmh.Result, theta2 float64) (switches int, share float64) {
	ch := res.Chains[0]
	current, first := 0, 0
	for k := range ch.Len() {
		t1, t2 := ch.Draws[2*k], ch.Draws[2*k+1]
		da := math.Hypot(t1, t2-theta2)
		db := math.Hypot(t1-theta2, t2+theta2)
		if da < db {
			first++
		}
		gap := math.Hypot(theta2, 2*theta2) / 2
		switch {
		case current == 0 && db+gap < da:
			current, switches = 1, switches+1
		case current == 1 && da+gap < db:
			current, switches = 0, switches+1
		}
	}
	if ch.Len() == 0 {
		return 0, math.NaN()
	}
	return switches, float64(first) / float64(ch.Len())
}

// trace is θ1 against sampling time (warmup excluded), at most 2000 points.
func trace(res *exactmh.Result) figure.Series {
	ch := res.Chains[0]
	s := figure.Series{Name: res.Kernel}
	if ch.Len() == 0 {
		return s
	}
	stride := max(1, ch.Len()/2000)
	for k := 0; k < ch.Len(); k += stride {
		s.X = append(s.X, (ch.Times[k] - ch.Times[0]).Seconds())
		s.Y = append(s.Y, ch.Draws[2*k])
	}
	return s
}

// variance is the sample variance (divisor n).
func variance(x []float64) float64 {
	var m, v float64
	for _, xi := range x {
		m += xi
	}
	m /= float64(len(x))
	for _, xi := range x {
		v += (xi - m) * (xi - m)
	}
	return v / float64(len(x))
}

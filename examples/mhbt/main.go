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
// between them while MH stays put once θ2 separates them. Beside MHBT it
// runs MHBT-refresh (MHBT{RefreshOnReject: true}: a rejection moves to the
// new batch and re-evaluates θ on it, as the paper's reference code does)
// and it prints the tempered target π^{c_n/n} computed on a grid: its share
// of mass nearer the first mode and the height of the pass between the
// modes. At θ2 = 4 that pass is about 10 nats (tempering by c_n/n leaves
// c_n times the per-datum barrier, whatever n), which is why Algorithm 1's
// chain makes no switch in a few seconds where the paper's Fig. 2f shows
// both modes: the reference code's rule crosses it occasionally (see
// examples/README.md, mhbt). With -out DIR it writes the θ1 traces
// (mhbt_mixture_θ2.png).
//
// With -fig1 it runs the paper's Fig. 1(a) study instead (fig1.go).
//
//	go run ./examples/mhbt
//	go run ./examples/mhbt -out figures -json
//	go run ./examples/mhbt -mixtureonly -theta2 4 -budget 20s
//	go run ./examples/mhbt -fig1
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/model"
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
	doFig1 := flag.Bool("fig1", false, "run the paper's Fig. 1(a) study (largest ε with acceptance ≥ 0.5 / 0.1, SGLD vs RSGLD proposals, d = 1 … 1000) instead")
	theta2s := flag.String("theta2", "0.5,2,4", "comma-separated θ2 values of the mixture experiment")
	skipGauss := flag.Bool("mixtureonly", false, "run only the mixture experiment")
	fig1Iters := flag.Int("fig1iters", 2000, "iterations per ε in the Fig. 1 study (the paper's 2000)")
	fig1Full := flag.Bool("fig1full", false, "Fig. 1 study with each datum's full log density (its θ-free ½‖x_i‖² term included)")
	flag.Parse()
	seed, asJSON, quick, quiet, out := &cf.Seed, &cf.JSON, &cf.Quick, &cf.Quiet, &cf.Out
	log.SetFlags(0)
	log.SetPrefix("mhbt: ")
	if *doFig1 {
		ds := []int{1, 10, 100, 1000}
		if *quick {
			ds, *fig1Iters = []int{1, 10}, 200
		}
		fig1(ds, *fig1Iters, *seed, *fig1Full, *asJSON, *quiet)
		return
	}
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
	if !*asJSON && !*skipGauss {
		fmt.Printf("Gaussian mean, n = %d, m = %d, c_n = %g: T = n/c_n = %g\n", *n, m, cn, temp)
		fmt.Printf("%-13s %3s %7s %12s %14s %14s\n", "kernel", "d", "accept", "variance", "T/(n+1)", "1/(n+1)")
	}
	for _, d := range []int{2, 5} {
		if *skipGauss {
			break
		}
		post, xbar := gaussian(d, *n, *seed)
		for _, k := range []exactmh.Kernel{inexact.MHBT{BatchSize: m, Cn: cn}, exactmh.MH{}} {
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
			fmt.Printf("%-13s %3d %7.3f %12.4g %14.4g %14.4g\n", res.Kernel, d, s.AcceptRate, v, temp/float64(*n+1), 1/float64(*n+1))
		}
	}

	// 2. The Gaussian mixture: mode hopping.
	if !*asJSON {
		fmt.Printf("\nGaussian mixture, n = %d, prior N(0, diag(10, 1)), modes (0, θ2) and (θ2, −θ2), %v per chain\n", *n, *budget)
		fmt.Printf("MHBT-refresh: re-evaluates θ on the new batch after a rejection (the reference code's rule); tempered: π^(c_n/n) on a grid\n")
		fmt.Printf("%-13s %5s %7s %9s %9s %14s\n", "kernel", "θ2", "accept", "steps", "switches", "share in (0,θ2)")
	}
	var t2 []float64
	for _, f := range strings.Split(*theta2s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) {
			log.Fatalf("-theta2: %q is not a positive number", f)
		}
		t2 = append(t2, v)
	}
	for _, theta2 := range t2 {
		post, x := mixture(*n, theta2, *seed)
		share, barrier := temperedShare(post, x, theta2)
		if *asJSON {
			report.Write(os.Stdout, map[string]any{"experiment": "mixture", "kernel": "tempered target", "exact": true,
				"theta2": theta2, "n": *n, "share_first_mode": share, "log_barrier": barrier})
		} else {
			fmt.Printf("%-13s %5.1f %7s %9s %9s %14.3f   (log density drop from the lower mode to the pass: %.2f)\n",
				"tempered", theta2, "–", "–", "–", share, barrier)
		}
		var series []figure.Series
		for _, k := range []exactmh.Kernel{inexact.MHBT{BatchSize: m, Cn: cn}, inexact.MHBT{BatchSize: m, Cn: cn, RefreshOnReject: true}, exactmh.MH{}} {
			res := run(post, k, []float64{0, theta2}, 500, fmt.Sprintf("mhbt_mixture_%g_%s", theta2, k.Name()))
			ch := res.Chains[0]
			switches, share := modes(res, theta2)
			s := res.Summary()
			if *asJSON {
				report.Write(os.Stdout, report.Row(res, map[string]any{"experiment": "mixture", "theta2": theta2, "n": *n,
					"switches": switches, "share_first_mode": share}))
			} else {
				fmt.Printf("%-13s %5.1f %7.3f %9d %9d %14.3f\n", res.Kernel, theta2, s.AcceptRate, ch.Sampling.Steps, switches, share)
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
	e, err := model.NewGaussianMean(x, d, id)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := model.NewIsoGaussian(d, 1)
	if err != nil {
		log.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}, xbar
}

// mixture returns the Welling–Teh mixture posterior for data with θ1 = 0
// and the given θ2.
func mixture(n int, theta2 float64, seed uint64) (*exactmh.Posterior, []float64) {
	rng := rand.New(rand.NewPCG(seed, 77))
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Sqrt2 * rng.NormFloat64()
		if rng.IntN(2) == 1 {
			x[i] += theta2
		}
	}
	e, err := model.NewGaussianMixture(x, 2)
	if err != nil {
		log.Fatal(err)
	}
	prior, err := model.NewGaussian([]float64{0, 0}, []float64{math.Sqrt(10), 1})
	if err != nil {
		log.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}, x
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

// temperedShare returns, for MHBT's target π^{c_n/n} (likelihood and
// prior tempered alike), the share of its mass nearer the first mode
// (0, θ2) than the second (the rule modes uses for draws), and the
// height of the pass between the modes: the log density at the lower
// mode's peak minus the largest, over paths between the modes, of the
// lowest log density along the path (computed on the grid as a minimax
// path). It evaluates the log posterior on a 161 × 161 grid over
// [−2, θ2 + 2] × [−θ2 − 2, θ2 + 2], the energy summed over 4000
// equal-width bins of the data at their means (as examples/tgm does; the
// error is far below the differences shown).
func temperedShare(post *exactmh.Posterior, x []float64, theta2 float64) (share, barrier float64) {
	const g, nb = 161, 4000
	lo, hi := slices.Min(x), slices.Max(x)
	cnt := make([]float64, nb)
	sum := make([]float64, nb)
	for _, v := range x {
		b := min(int((v-lo)/(hi-lo)*nb), nb-1)
		cnt[b]++
		sum[b] += v
	}
	n := float64(len(x))
	energy := func(t1, t2 float64) float64 { // Σ_i U_i(θ), σ² = 2
		var u float64
		for b, c := range cnt {
			if c == 0 {
				continue
			}
			xb := sum[b] / c
			a, d := xb-t1, xb-t1-t2
			u -= c * math.Log(0.5*math.Exp(-a*a/4)+0.5*math.Exp(-d*d/4))
		}
		return u + n*0.5*math.Log(4*math.Pi)
	}
	x0, x1 := -2.0, theta2+2
	y0, y1 := -theta2-2, theta2+2
	lp := make([]float64, g*g)
	theta := make([]float64, 2)
	mx := math.Inf(-1)
	for i := range g {
		for j := range g {
			theta[0] = x0 + (x1-x0)*float64(i)/(g-1)
			theta[1] = y0 + (y1-y0)*float64(j)/(g-1)
			v := cn / n * (-energy(theta[0], theta[1]) + post.Prior.LogPrior(theta))
			lp[i*g+j] = v
			mx = math.Max(mx, v)
		}
	}
	var z, first float64
	peakA, peakB := math.Inf(-1), math.Inf(-1)
	for i := range g {
		for j := range g {
			t1 := x0 + (x1-x0)*float64(i)/(g-1)
			t2 := y0 + (y1-y0)*float64(j)/(g-1)
			w := math.Exp(lp[i*g+j] - mx)
			z += w
			if math.Hypot(t1, t2-theta2) < math.Hypot(t1-theta2, t2+theta2) {
				first += w
				peakA = math.Max(peakA, lp[i*g+j])
			} else {
				peakB = math.Max(peakB, lp[i*g+j])
			}
		}
	}
	// The pass: the highest level at which the two peaks' cells connect
	// (cells added in decreasing log density, union–find).
	ia, ib := argmaxIn(lp, g, x0, x1, y0, y1, theta2, true), argmaxIn(lp, g, x0, x1, y0, y1, theta2, false)
	order := make([]int, g*g)
	for k := range order {
		order[k] = k
	}
	sortByDesc(order, lp)
	parent := make([]int, g*g)
	for k := range parent {
		parent[k] = -1
	}
	var find func(int) int
	find = func(a int) int {
		for parent[a] != a {
			parent[a] = parent[parent[a]]
			a = parent[a]
		}
		return a
	}
	pass := math.NaN()
	for _, k := range order {
		parent[k] = k
		i, j := k/g, k%g
		for _, nb := range [][2]int{{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}} {
			if nb[0] < 0 || nb[0] >= g || nb[1] < 0 || nb[1] >= g {
				continue
			}
			q := nb[0]*g + nb[1]
			if parent[q] >= 0 {
				parent[find(q)] = find(k)
			}
		}
		if parent[ia] >= 0 && parent[ib] >= 0 && find(ia) == find(ib) {
			pass = lp[k]
			break
		}
	}
	return first / z, math.Min(peakA, peakB) - pass
}

// argmaxIn returns the grid cell of highest log density nearer the first
// mode (first) or the second.
func argmaxIn(lp []float64, g int, x0, x1, y0, y1, theta2 float64, first bool) int {
	best, arg := math.Inf(-1), 0
	for i := range g {
		for j := range g {
			t1 := x0 + (x1-x0)*float64(i)/float64(g-1)
			t2 := y0 + (y1-y0)*float64(j)/float64(g-1)
			if (math.Hypot(t1, t2-theta2) < math.Hypot(t1-theta2, t2+theta2)) == first && lp[i*g+j] > best {
				best, arg = lp[i*g+j], i*g+j
			}
		}
	}
	return arg
}

// sortByDesc sorts the indices by decreasing v.
func sortByDesc(idx []int, v []float64) {
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(v[b], v[a]) })
}

// Truncated Gaussian mixture of the TunaMH paper (§5.2, App. J.3).
//
// N = 10^6 data x_i ~ ½N(0, 2) + ½N(1, 2); the model is the mixture
// ½N(θ1, 2) + ½N(θ1 + θ2, 2) with a flat prior on θ ∈ [−3, 3]² and the
// likelihood tempered by β = 10^-4, so the posterior has two modes, near
// (0, 1) and (1, −1). For each kernel the program runs one chain for a
// fixed wall-clock budget and prints its acceptance, its mean batch size
// (Info.Batch: the Poisson count for TunaMH and PoissonMH, the data
// evaluated before the first rejection for TFMH, the bright data for FlyMC;
// the paper's Table 1 reports TunaMH 86.45, TFMH 13.91, FlyMC 811.52 ± 234
// and PoissonMH 3969.67, which here is a calibration: see below) and the
// symmetric KL divergence between the
// running 2-D histogram of its draws and the true posterior after 1, 2, 5
// and 10 seconds.
//
// The true posterior is computed on the histogram's grid (99 × 99 bins on
// the box, 2 × 2 points per bin). Its log density −βΣU_i(θ) is summed over
// 4000 equal-width bins of the data at their means: for a bin of width w
// the error is at most β·N·w²/24·max|∂²U/∂x²| < 3·10^-4 in log density.
//
// Step sizes are the paper's: MH 0.3, TunaMH 0.1 with χ = 10^-4, TFMH
// 2.2·10^-2, FlyMC and FlyMC-MAP 10^-2 with q_{d→b} = 0.01 (FlyMC's Taylor
// bounds tight at θ⁰ = 0, FlyMC-MAP's at the MAP found by FindMAP), SMH-1
// 0.1 with its control variates at the MAP. The paper
// does not give PoissonMH's; it is tuned during a 300-step warmup to the
// paper's target acceptance 0.6, and it does not give λ either: λ is set
// so that the expected batch λ + L equals the paper's 3969.67
// (L = βΣM_i ≈ 546 here, so λ ≈ 3424 ≈ 0.0115·L²). PoissonMH's mean batch
// therefore matches Table 1 by construction: a calibration, not a
// reproduction. Each kernel's clock starts at its first transition, after
// Start's precomputation (FlyMC's, TFMH's and SMH's bounds over the 10⁶
// data), which on a loaded machine can take longer than -quick's whole
// budget. PoissonMH's tuning warmup stands in for the offline tuning behind
// the paper's step sizes (which the other kernels use as given), so it runs
// before PoissonMH's clock starts: every kernel gets the whole budget for
// sampling, and the symmetric-KL times count from the first draw's chain
// start. A kernel that makes no draw within its budget is reported as
// failed (its row says so; -json rows get status "failed") and the program
// exits with status 1.
//
// With -out DIR it also writes DIR/tgm_density.png (the true posterior
// beside each kernel's histogram at the end of its budget),
// DIR/tgm_symkl.png (symmetric KL against time, log–log) and each run's
// draws as Stan CSV (tgm_<kernel>_<chain>.csv). With -chains c each kernel
// runs c chains in parallel and the histograms pool them.
//
//	go run ./examples/tgm
//	go run ./examples/tgm -json
//	go run ./examples/tgm -out figures
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
	"runtime"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/examples/internal/figure"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/examples/internal/sim"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/plot/vg"
)

const (
	n      = 1_000_000
	beta   = 1e-4
	sigma2 = 2.0
	bins   = 99
	lo, hi = -3.0, 3.0
)

func main() {
	cf := report.RegisterCommon(1, 0)
	budget := flag.Duration("budget", 10*time.Second, "wall-clock time per kernel, from its first transition")
	flag.Parse()
	seed, asJSON, quick, quiet, out := &cf.Seed, &cf.JSON, &cf.Quick, &cf.Quiet, &cf.Out
	if *quick {
		*budget = time.Second
	}
	log.SetFlags(0)
	log.SetPrefix("tgm: ")

	post, x, err := problem(*seed)
	if err != nil {
		log.Fatal(err)
	}
	rng, err := post.EnergyRange()
	if err != nil {
		log.Fatal(err)
	}
	var sumM float64 // PoissonMH's L = Σβ·Width_i: the range is untempered, the kernel applies β
	for _, w := range rng.Width {
		sumM += beta * w
	}
	if !*quiet {
		log.Print("computing the true posterior on the grid")
	}
	truth := trueHistogram(x)
	// The MAP-based kernels: FlyMC's bounds tight at the MAP, SMH's control
	// variates centred there (all chains still start at (0.5, 0)).
	start := time.Now()
	theMAP, err := exactmh.FindMAP(context.Background(), post, []float64{0.5, 0}, nil)
	if err != nil {
		log.Fatal(err)
	}
	if !*quiet {
		log.Printf("MAP %.4f in %.1fs", theMAP.Theta, time.Since(start).Seconds())
	}

	checkpoints := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}
	if *quick {
		checkpoints = []time.Duration{250 * time.Millisecond, time.Second}
	}
	poisson := func(scale float64) exactmh.Kernel {
		return exactmh.PoissonMH{Scale: scale, Lambda: paperPoissonBatch - sumM}
	}
	runs := []struct {
		k      exactmh.Kernel
		warmup int
		tuned  func(scale float64) exactmh.Kernel // the kernel at the step its warmup found
	}{
		{exactmh.MH{Scale: 0.3}, exactmh.NoWarmup, nil},
		{exactmh.TunaMH{Scale: 0.1, Chi: 1e-4}, exactmh.NoWarmup, nil},
		{poisson(0.1), 300, poisson},
		{exactmh.TFMH{Scale: 2.2e-2}, exactmh.NoWarmup, nil},
		{exactmh.FlyMC{Scale: 1e-2, Q: 0.01}, exactmh.NoWarmup, nil},
		{exactmh.FlyMC{Scale: 1e-2, Q: 0.01, TightAt: theMAP.Theta}, exactmh.NoWarmup, nil},
		{exactmh.SMH{Order: 1, Center: theMAP.Theta, Scale: 0.1}, exactmh.NoWarmup, nil},
	}
	failed := 0
	if !*asJSON {
		fmt.Printf("truncated Gaussian mixture: N = %d, β = %g, θ ∈ [%g, %g]², %v per kernel\n\n", n, beta, lo, hi, *budget)
		fmt.Printf("%-10s %7s %10s %10s %8s", "kernel", "accept", "mean batch", "evals/step", "ESS/s")
		for _, c := range checkpoints {
			fmt.Printf(" %12s", "symKL@"+c.String())
		}
		fmt.Println()
	}
	panels := []figure.Grid{grid("truth", truth)}
	var curves []figure.Series
	for _, r := range runs {
		draws := cf.Draws
		if draws == 0 {
			// The budget decides; this cap (2·10⁶ draws per second,
			// above the fastest kernel's rate) only keeps the reserved
			// memory finite.
			draws = int(budget.Seconds()*2e6) + 1000
		}
		k := r.k
		set := &exactmh.Settings{Chains: cf.Chains, Warmup: exactmh.NoWarmup, Draws: draws, Seed: *seed,
			Init: []float64{0.5, 0}, NoAdapt: true, Recorder: cf.Progress()}
		start := time.Now()
		if r.warmup != exactmh.NoWarmup {
			// The tuning warmup, off the clock (see the package comment).
			k, set.Inits = tune(post, r.k, r.tuned, r.warmup, cf.Chains, *seed)
			set.Init = nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		clock := &budgetClock{inner: set.Recorder, budget: *budget, cancel: cancel}
		set.Recorder = clock
		res, err := exactmh.Sample(ctx, post, k, set)
		clock.stop()
		cancel()
		if res == nil || (err != nil && res.Status != exactmh.Canceled) {
			log.Fatalf("%s: %v", r.k.Name(), err)
		}
		noDraws := res.Sampling().Steps == 0
		var kls []float64
		for _, c := range checkpoints {
			kls = append(kls, symKL(res.Chains, c, res.Dim, truth))
		}
		if *out != "" {
			panels = append(panels, grid(res.Kernel, histogram(res.Chains, *budget, res.Dim)))
			curves = append(curves, klCurve(res.Kernel, res.Chains, res.Dim, truth))
			if err := cf.SaveStanCSV(res, "tgm_"+res.Kernel, []string{"theta1", "theta2"}); err != nil {
				log.Fatal(err)
			}
		}
		last := kls[len(kls)-1]
		if noDraws || math.IsNaN(last) {
			failed++
		}
		if *asJSON {
			row := report.Row(res, map[string]any{
				"seconds": time.Since(start).Seconds(), "sym_kl": report.OrNull(last),
				"sym_kl_at": checkpointMap(checkpoints, kls),
			})
			if noDraws || math.IsNaN(last) {
				row["status"] = "failed"
			}
			report.Write(os.Stdout, row)
			continue
		}
		if noDraws {
			fmt.Printf("%-10s FAILED: no draws within %v\n", res.Kernel, *budget)
			continue
		}
		s := res.Summary()
		fmt.Printf("%-10s %7.3f %10.2f %10.1f %8.1f", res.Kernel, s.AcceptRate, s.MeanBatch, s.EvalsPerStep, s.MinESSPerSecond())
		for _, kl := range kls {
			fmt.Printf(" %12.4f", kl)
		}
		if math.IsNaN(last) {
			fmt.Print("  FAILED: no draws by the last checkpoint")
		}
		fmt.Println()
	}
	if !*asJSON {
		fmt.Printf("\nPoissonMH's λ = %.0f is set so that λ + L = %.2f, Table 1's mean batch: its batch matches the paper by\n"+
			"construction (a calibration, not a reproduction). Its %d-step tuning warmup ran before its clock started.\n",
			paperPoissonBatch-sumM, paperPoissonBatch, runs[2].warmup)
	}
	if *out != "" {
		if err := writeFigures(*out, panels, curves); err != nil {
			log.Fatal(err)
		}
		if !*quiet {
			log.Printf("wrote %s and %s", filepath.Join(*out, "tgm_density.png"), filepath.Join(*out, "tgm_symkl.png"))
		}
	}
	if failed > 0 {
		log.Printf("%d kernel(s) made no draws within the budget", failed)
		os.Exit(1)
	}
}

// tune runs the warmup of k (adapting its step to acceptance 0.6, the
// paper's target) and returns the kernel at the adapted step (the first
// chain's) and each chain's final position, for the timed run to start
// from.
func tune(post *exactmh.Posterior, k exactmh.Kernel, tuned func(float64) exactmh.Kernel, warmup, chains int, seed uint64) (exactmh.Kernel, [][]float64) {
	res, err := exactmh.Sample(context.Background(), post, k, &exactmh.Settings{Chains: chains, Warmup: warmup, Draws: 1,
		Seed: seed + 1000, Init: []float64{0.5, 0}, TargetAccept: 0.6})
	if err != nil {
		log.Fatalf("%s warmup: %v", k.Name(), err)
	}
	inits := make([][]float64, len(res.Chains))
	for c, ch := range res.Chains {
		inits[c] = append([]float64(nil), ch.Draws[len(ch.Draws)-res.Dim:]...)
	}
	return tuned(res.Chains[0].Scale), inits
}

// paperPoissonBatch is PoissonMH's mean batch in the paper's Table 1.
const paperPoissonBatch = 3969.67

// problem returns the posterior of the experiment and its data.
func problem(seed uint64) (*exactmh.Posterior, []float64, error) {
	x := sim.MixtureData(rand.New(rand.NewPCG(seed, 0)), n)
	energy, err := model.NewGaussianMixture(x, sigma2)
	if err != nil {
		return nil, nil, err
	}
	box, err := model.NewCube(2, lo, hi)
	if err != nil {
		return nil, nil, err
	}
	return &exactmh.Posterior{Energy: energy, Prior: box, Beta: beta}, x, nil
}

func checkpointMap(cs []time.Duration, v []float64) map[string]any {
	m := map[string]any{}
	for i, c := range cs {
		m[c.String()] = report.OrNull(v[i])
	}
	return m
}

// cell returns the histogram bin of θ.
func cell(t0, t1 float64) int {
	w := (hi - lo) / bins
	i := min(int((t0-lo)/w), bins-1)
	j := min(int((t1-lo)/w), bins-1)
	return i*bins + j
}

// symKL is the symmetric KL between the histogram of the draws made
// before time t (all chains pooled) and the truth (NaN with no draws yet).
func symKL(chains []*exactmh.ChainResult, t time.Duration, d int, truth []float64) float64 {
	h := histogram(chains, t, d)
	if h == nil {
		return math.NaN()
	}
	return diagnostics.SymmetricKL(h, truth, 1e-13)
}

// histogram counts the draws of every chain made by time t on the grid
// (nil if none).
func histogram(chains []*exactmh.ChainResult, t time.Duration, d int) []float64 {
	h := make([]float64, bins*bins)
	count := 0
	for _, ch := range chains {
		for k, tk := range ch.Times {
			if tk > t {
				break
			}
			h[cell(ch.Draws[k*d], ch.Draws[k*d+1])]++
			count++
		}
	}
	if count == 0 {
		return nil
	}
	return h
}

// klCurve is the symmetric KL at 24 times spaced evenly in log time over
// the run.
func klCurve(name string, chains []*exactmh.ChainResult, d int, truth []float64) figure.Series {
	s := figure.Series{Name: name}
	var first, end float64
	first = math.Inf(1)
	for _, ch := range chains {
		if len(ch.Times) > 0 {
			first = math.Min(first, ch.Times[0].Seconds())
			end = math.Max(end, ch.Times[len(ch.Times)-1].Seconds())
		}
	}
	if end == 0 {
		return s
	}
	first = math.Max(first, end/1000)
	const points = 24
	for k := range points {
		t := first * math.Pow(end/first, float64(k)/(points-1))
		s.X = append(s.X, t)
		s.Y = append(s.Y, symKL(chains, time.Duration(t*float64(time.Second)), d, truth))
	}
	return s
}

// grid wraps a histogram for plotting (an empty one if h is nil).
func grid(title string, h []float64) figure.Grid {
	if h == nil {
		h = make([]float64, bins*bins)
	}
	return figure.Grid{Title: title, NX: bins, NY: bins, X0: lo, X1: hi, Y0: lo, Y1: hi, Values: h}
}

// writeFigures writes the density panels and the KL curves under dir.
func writeFigures(dir string, panels []figure.Grid, curves []figure.Series) error {
	if err := figure.Heatmaps(filepath.Join(dir, "tgm_density.png"), "θ1", "θ2", 3*vg.Inch, panels); err != nil {
		return err
	}
	return figure.Lines(filepath.Join(dir, "tgm_symkl.png"), figure.Layout{Title: "symmetric KL to the true posterior",
		XLabel: "seconds", YLabel: "symmetric KL", LogX: true, LogY: true, LegendLeft: true}, curves)
}

// trueHistogram integrates the posterior over every bin (2 × 2 midpoints),
// with the data summarised by 4000 equal-width bins at their means.
func trueHistogram(x []float64) []float64 {
	const xbins = 4000
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		xlo, xhi = math.Min(xlo, v), math.Max(xhi, v)
	}
	width := (xhi - xlo) / xbins
	cnt := make([]float64, xbins)
	sum := make([]float64, xbins)
	for _, v := range x {
		b := min(int((v-xlo)/width), xbins-1)
		cnt[b]++
		sum[b] += v
	}
	var xs, ws []float64
	for b := range cnt {
		if cnt[b] > 0 {
			xs = append(xs, sum[b]/cnt[b])
			ws = append(ws, cnt[b])
		}
	}
	logC := math.Log(2 * math.Sqrt(2*math.Pi*sigma2))
	energy := func(t0, t1 float64) float64 {
		var u float64
		for k, v := range xs {
			a, b := -(v-t0)*(v-t0)/(2*sigma2), -(v-t0-t1)*(v-t0-t1)/(2*sigma2)
			m := math.Max(a, b)
			u += ws[k] * (logC - m - math.Log1p(math.Exp(-math.Abs(a-b))))
		}
		return beta * u
	}
	const sub = 2
	w := (hi - lo) / bins
	logp := make([]float64, bins*bins*sub*sub)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := g; c < bins*bins; c += workers {
				i, j := c/bins, c%bins
				for s := range sub * sub {
					t0 := lo + (float64(i)+(float64(s/sub)+0.5)/sub)*w
					t1 := lo + (float64(j)+(float64(s%sub)+0.5)/sub)*w
					logp[c*sub*sub+s] = -energy(t0, t1)
				}
			}
		}()
	}
	wg.Wait()
	top := math.Inf(-1)
	for _, v := range logp {
		top = math.Max(top, v)
	}
	h := make([]float64, bins*bins)
	for c := range h {
		for s := range sub * sub {
			h[c] += math.Exp(logp[c*sub*sub+s] - top)
		}
	}
	return h
}

// budgetClock is a Recorder that cancels the run budget after its first
// transition, forwarding everything to inner (which may be nil).
type budgetClock struct {
	inner  exactmh.Recorder
	budget time.Duration
	cancel context.CancelFunc
	once   sync.Once
	mu     sync.Mutex
	timer  *time.Timer
}

// Init forwards to inner.
func (b *budgetClock) Init(run exactmh.RunInfo) error {
	if b.inner == nil {
		return nil
	}
	return b.inner.Init(run)
}

// Record starts the clock at the first transition and forwards to inner.
func (b *budgetClock) Record(e *exactmh.Event) error {
	b.once.Do(func() {
		b.mu.Lock()
		b.timer = time.AfterFunc(b.budget, b.cancel)
		b.mu.Unlock()
	})
	if b.inner == nil {
		return nil
	}
	return b.inner.Record(e)
}

// Finish forwards to inner if it is a RunFinisher.
func (b *budgetClock) Finish(res *exactmh.Result) error {
	if f, ok := b.inner.(exactmh.RunFinisher); ok {
		return f.Finish(res)
	}
	return nil
}

// stop stops the timer if it was started.
func (b *budgetClock) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
	}
}

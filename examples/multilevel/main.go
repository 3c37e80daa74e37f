// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command multilevel samples a synthetic multilevel logistic regression on
// tall data exactly from minibatches — by default with the automatic
// default (exactmh.Sample with a nil Kernel, which chooses
// multilevel.GroupGibbs) — and reports min bulk ESS per CPU-second including
// everything (data, centre, pilots, warmup, draws).
//
// The model (issue 30's synthetic row): N = 10⁶ data in 1,000 groups whose
// sizes follow a rank-size (Zipf-like) law from 10 to 10⁴,
// 10 fixed effects (an intercept and x1 … x9 ~ N(0, 1)), a random
// intercept and a random slope on x1 per group, τ unknown:
//
//	y_i ~ Bernoulli(σ(x_iᵀβ + u_{g(i)} + v_{g(i)}·x1_i)),
//	u_g ~ N(0, τ_u²), v_g ~ N(0, τ_v²), τ ~ half-normal(1), β ~ N(0, 5²).
//
// -family poisson makes it a multilevel Poisson regression with an offset
// (the same design and effects; y_i ~ Poisson(e^{o_i + η_i}), o_i the log
// of an exposure ~ U(0.5, 2)), which GroupGibbs samples with its
// pair-wise bound; -kernel nuts runs full-batch NUTS from the centre for
// comparison (-noncentred for NUTS.NonCentred).
//
// -kernel gibbs runs GroupGibbs around model.MultilevelCenter's centre
// (Laplace-EM: the joint posterior has no mode) with -exact-below;
// -kernel groupsmh runs GroupSMH there with the Crank–Nicolson proposal
// around N(θ̂, H⁻¹) (-proposal cn, dense) or a random walk (-proposal
// rw), and -kernel mh full-batch MH with it: the joint proposals that do
// not mix in d ≈ 2,000.
//
//	go run ./examples/multilevel                 # N = 10⁶, 1,000 groups
//	go run ./examples/multilevel -quick          # N = 2·10⁴, 50 groups
//	go run ./examples/multilevel -export DIR     # the data for stan/run.R
//
// -export writes DIR/multilevel.csv (y, g (1-based), x1 … x9, reals in
// hexadecimal as examples/tall writes them) and exits; stan/ holds the
// non-centred Stan program and the R script that runs rstan's NUTS on it.
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
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	store "github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/memstat"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
	"github.com/exactmh/exactmh/sparse"
	"github.com/exactmh/exactmh/stancsv"
)

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 1000)
	n := flag.Int("n", 1000000, "data")
	groups := flag.Int("groups", 1000, "groups")
	minSize := flag.Int("min", 10, "size of the smallest group")
	maxSize := flag.Int("max", 10000, "size of the largest group")
	proposal := flag.String("proposal", "cn", "cn (Crank–Nicolson around the Laplace approximation) or rw (random walk)")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	thin := flag.Int("thin", 1, "transitions per kept draw")
	accept := flag.Float64("accept", 0, "target acceptance rate of warmup (0: the kernel's default)")
	f32 := flag.Bool("float32", false, "store the rows in float32")
	exactBelow := flag.Int("exact-below", 0, "groups with fewer data are read exactly (GroupGibbs.ExactBelow, GroupSMH.ExactBelow; 0: none)")
	kernel := flag.String("kernel", "auto", "auto (the automatic default, exactmh.Sample with a nil Kernel), gibbs (multilevel.GroupGibbs), groupsmh, mh (full-batch MH with the CN proposal, for comparison) or nuts (full-batch NUTS from the centre)")
	family := flag.String("family", "logistic", "logistic, or poisson: counts y ~ Poisson(e^{o_i + η_i}), o_i the log of an exposure ~ U(0.5, 2)")
	nonCentred := flag.Bool("noncentred", false, "with -kernel nuts: NUTS.NonCentred")
	free := flag.Bool("free", true, "prior-only updates of the log scales after every step (GroupSMH.Free)")
	export := flag.String("export", "", "write the data to this directory and exit")
	stanCSV := flag.String("stan", "", "rstan's sample file of stan/run.R on the same data (comma-separated for several chains): compare the posteriors")
	storeDir := flag.String("store", "", "the scale mode: write the data once to a mapped sparse store in this directory (reused when present), sample the posterior over the mapped rows (model.NewMultilevelRows) and report the memory against the file's size")
	memProfile := flag.String("memprofile", "", "with -store: write a heap profile (the memory in use when sampling begins, by allocation site) to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	spoolDir := flag.String("spool", os.TempDir(), "with -store: keep the draws in a temporary float32 file in this directory (Settings.DiscardDraws; spool.go), not in memory, and summarise them from it (\"\": keep them in the Result)")
	crossedFlag := flag.String("crossed", "", "with -store: G1,G2 — the crossed model instead (crossed.go): users × items, G1 and G2 levels, a random intercept each, logistic")
	ckptPath := flag.String("checkpoint", "", "with -store and -spool: the run's checkpoint file (resume.go), written when the chains start (the kernel chosen: a resumed run repeats no pilot), every -checkpoint-every and at the end (or on SIGINT/SIGTERM); chain c's draws go to -spool DIR/<base of FILE>.chain<c>.f32")
	everyFlag := flag.String("checkpoint-every", "", "with -checkpoint: also checkpoint after this many transitions (summed over the chains) or this much CPU time of the process (30m)")
	resumeFlag := flag.Bool("resume", false, "continue the run saved in -checkpoint FILE (the same command with -resume added)")
	killAfter := flag.Int("kill-after", 0, "testing: exit at once (status 3, nothing more written) after this many transitions of this process, as a kill would")
	flag.Float64Var(&gibbsFixedRho, "fixed-rho", 0, "with -kernel gibbs: GroupGibbs.FixedRho, the fixed blocks' updates Crank–Nicolson about their conditional under the expansion (0: independence proposals)")
	flag.IntVar(&gibbsFixedRepeats, "fixed-repeats", 0, "with -kernel gibbs: GroupGibbs.FixedRepeats, the fixed blocks' updates a sweep (0: the kernel's 3)")
	flag.IntVar(&gibbsNewtonEvery, "newton-every", 0, "with -kernel gibbs: the fixed blocks by the Newton proposal (GroupGibbs.FixedNewton) in one sweep in this many, with the automatic default's FreeRepeats (0: off)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("multilevel: ")
	if *family != "logistic" && *family != "poisson" {
		log.Fatalf("-family %q: want logistic or poisson", *family)
	}
	poisson := *family == "poisson"
	if *kernel == "gibbs" || *kernel == "nuts" {
		*proposal = *kernel // no proposal of their own to name
	}
	if poisson && (*storeDir != "" || *export != "" || *stanCSV != "") {
		log.Fatal("-family poisson: not with -store, -export or -stan (their files and Stan program are the logistic model's)")
	}
	every, everyCPU, err := parseEvery(*everyFlag)
	if err != nil {
		log.Fatal(err)
	}
	if *ckptPath != "" && (*storeDir == "" || *spoolDir == "") {
		log.Fatal("-checkpoint: only with -store and a -spool directory (the draws are kept in its files)")
	}
	if (*resumeFlag || every > 0 || everyCPU > 0) && *ckptPath == "" {
		log.Fatal("-resume and -checkpoint-every need -checkpoint FILE")
	}
	defer report.StartCPUProfile(*cpuProfile)()
	var g1, g2 int
	if *crossedFlag != "" {
		var err error
		if g1, g2, err = parseCrossed(*crossedFlag); err != nil {
			log.Fatal(err)
		}
		if *storeDir == "" || poisson {
			log.Fatal("-crossed: only with -store and -family logistic")
		}
	}
	if cf.Quick {
		*n, *groups, *maxSize, *warmup = 20000, 50, 2000, 300
		if cf.Draws > 300 {
			cf.Draws = 300
		}
	}
	start := time.Now()
	cpu0 := report.CPUTime()
	say := func(format string, a ...any) {
		if !cf.Quiet {
			fmt.Fprintf(os.Stderr, format+"\n", a...)
		}
	}
	var d *data
	var ct *crossedTruth
	var post *exactmh.Posterior
	rec := cf.Progress()
	var adv *memstat.Adviser
	var sp *spool // -store: the draws are kept in a file
	var cp *checkpointer
	ctx := context.Background()
	run := func(ctx context.Context, p *exactmh.Posterior, k exactmh.Kernel, set *exactmh.Settings) (*exactmh.Result, error) {
		if cp == nil {
			return exactmh.Sample(ctx, p, k, set)
		}
		return cp.run(ctx, func(ctx context.Context) (*exactmh.Result, error) { return exactmh.Sample(ctx, p, k, set) })
	}
	if *storeDir != "" {
		var st *store.SparseStore
		var stopDrops func()
		if g1 > 0 {
			ct, post, st, stopDrops, err = crossedFromStore(*storeDir, *n, g1, g2, cf.Seed, *f32, say)
		} else {
			d, post, st, stopDrops, err = fromStore(*storeDir, *n, *groups, *minSize, *maxSize, cf.Seed, *f32, say)
		}
		if err != nil {
			log.Fatal(err)
		}
		defer st.Close()
		var heap runtime.MemStats
		defer stopDrops()
		// The heap is mostly GroupGibbs's alias records, live for the
		// whole run: a smaller GC target keeps the garbage of sampling
		// from doubling the resident heap (GOGC=100's headroom).
		debug.SetGCPercent(25)
		adv = &memstat.Adviser{Inner: rec, Do: func() error {
			// The kernel's tables are built: what the heap holds now is
			// what sampling needs.
			stopDrops()
			runtime.GC()
			runtime.ReadMemStats(&heap)
			if *memProfile != "" {
				writeHeapProfile(*memProfile)
			}
			return st.EndFullPasses()
		}}
		rec = adv
		defer memReport(st, adv, &heap)
		if *spoolDir != "" {
			sp = newSpool(*spoolDir, rec)
			defer sp.Close()
			rec = sp
		}
		if *ckptPath != "" {
			sp.names = spoolNames(*spoolDir, *ckptPath, cf.Chains)
			cp = &checkpointer{path: *ckptPath, sp: sp, every: every, cpu: everyCPU, killAfter: *killAfter,
				key: runKey(*n, *groups, *minSize, *maxSize, *crossedFlag, *f32, *kernel, *proposal, *exactBelow, *free, *warmup, *thin, *accept, cf)}
			rec = cp
		}
	} else {
		d = simulate(*n, *groups, *minSize, *maxSize, cf.Seed, poisson)
		if *export != "" {
			if err := d.export(*export); err != nil {
				log.Fatal(err)
			}
			return
		}
		if post, err = d.posterior(*f32); err != nil {
			log.Fatal(err)
		}
	}
	dim := post.Energy.Dim()
	if ct != nil {
		say("N = %d, crossed: %d users (sizes %d … %d) × %d items, d = %d; data built in %.1fs", *n, g1, ct.sizes1[len(ct.sizes1)-1], ct.sizes1[0], g2, dim, time.Since(start).Seconds())
	} else {
		say("N = %d, %d groups (sizes %d … %d), d = %d; data built in %.1fs", *n, *groups, d.sizes[len(d.sizes)-1], d.sizes[0], dim, time.Since(start).Seconds())
	}

	if cp != nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM) // a checkpoint, then exit 4
		defer stop()
	}
	var res *exactmh.Result
	var kern exactmh.Kernel
	set := exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Thin: *thin, Seed: cf.Seed, Recorder: rec, TargetAccept: *accept, DiscardDraws: sp != nil,
		ChoiceProgress: func(s string) { say("choice: %s", s) }}
	switch {
	case *resumeFlag:
		if res, err = cp.resume(ctx, post, set); err != nil && res == nil {
			log.Fatal(err)
		}
		kern = res.Config
		if *kernel == "auto" {
			*proposal = "auto"
			fmt.Printf("automatic default (chosen in the run -resume continues): %s\n", cp.head.Choice)
		}
	case *kernel == "auto":
		// The automatic default: Choose finds the centre and pilots.
		*proposal = "auto"
		if res, err = run(ctx, post, nil, &set); err != nil && res == nil {
			log.Fatal(err)
		}
		kern = res.Config
		fmt.Printf("automatic default: %s\n", res.Choice)
	default:
		res, kern, err = sampleWith(ctx, run, post, d, cf, rec, sp != nil, *kernel, *proposal, *exactBelow, *free, *nonCentred, *warmup, *thin, *accept, say)
	}
	if err != nil && cp != nil && ctx.Err() != nil && res.Status == exactmh.Canceled {
		fmt.Fprintf(os.Stderr, "multilevel: interrupted: checkpoint written to %s; run the same command with -resume to continue\n", *ckptPath)
		os.Exit(4)
	}
	if err != nil {
		log.Fatal(err)
	}
	wall := time.Since(start)
	cpu := report.CPUTime() - cpu0
	if *storeDir != "" {
		// The summary's scratch (a few arrays of each coordinate's draws,
		// d = 2·10⁴ coordinates at 10⁴ groups) is garbage that GOGC=25
		// lets grow to a quarter of the live heap, GroupGibbs's tables:
		// collect more often while it is made.
		debug.SetGCPercent(5)
	}
	s := res.Summary()
	if sp != nil {
		kept := cf.Draws
		for _, c := range res.Chains {
			kept = min(kept, c.Len()+c.Streamed)
		}
		if s, err = sp.summary(post.Names, kept); err != nil {
			log.Fatal(err)
		}
	}
	minBulk, minTail, maxRhat := math.Inf(1), math.Inf(1), 0.0
	var worst string
	for _, p := range s.Params {
		if p.ESSBulk < minBulk {
			worst = p.Name
		}
		minBulk, minTail, maxRhat = math.Min(minBulk, p.ESSBulk), math.Min(minTail, p.ESSTail), math.Max(maxRhat, p.RHat)
	}
	tot := res.Sampling()
	fmt.Printf("%s (%s): %d chains × %d draws (thin %d), accept %.3f, mean batch %.1f of N = %d, evals/step %.1f\n",
		kern.Name(), *proposal, cf.Chains, cf.Draws, *thin, tot.AcceptRate(), tot.MeanBatch(), *n, tot.EvalsPerStep())
	fmt.Printf("min bulk ESS %.0f (%s), min tail ESS %.0f, max R-hat %.3f, step scales %.3g, chain 0: %v\n", minBulk, worst, minTail, maxRhat, scales(res), res.Chains[0].Params)
	fmt.Printf("wall %.1fs, CPU %.1fs (everything: data, centre, proposal, warmup, draws): min bulk ESS per CPU-second %.2f\n",
		wall.Seconds(), cpu.Seconds(), minBulk/cpu.Seconds())
	var show map[string]float64
	if ct != nil {
		show = ct.show()
	} else {
		show = map[string]float64{"Intercept": d.beta[0], "x1": d.beta[1], "x9": d.beta[9],
			"log_tau_g": math.Log(d.tau[0]), "log_tau_g_x1": math.Log(d.tau[1])}
		for _, g := range []int{0, *groups / 2, *groups - 1} {
			show[fmt.Sprintf("u_g[%d]", g+1)] = d.u[g][0]
		}
	}
	fmt.Printf("%-14s %8s %8s %8s %7s %7s %6s\n", "parameter", "true", "mean", "sd", "bulk", "tail", "R-hat")
	for _, p := range s.Params {
		if v, ok := show[p.Name]; ok {
			fmt.Printf("%-14s %8.3f %8.3f %8.4f %7.0f %7.0f %6.3f\n", p.Name, v, p.Mean, p.SD, p.ESSBulk, p.ESSTail, p.RHat)
		}
	}
	if *stanCSV != "" {
		if err := compareStan(s, strings.Split(*stanCSV, ","), *groups); err != nil {
			log.Fatal(err)
		}
	}
	if sp != nil && cf.Out != "" {
		fmt.Fprintln(os.Stderr, "multilevel: -out: not with -store (the draws were spooled, not kept)")
	} else if err := cf.SaveStanCSV(res, "multilevel_"+kern.Name(), post.Names); err != nil {
		log.Fatal(err)
	}
}

// sampleFunc runs a kernel as exactmh.Sample does (in segments with
// -checkpoint).
type sampleFunc func(context.Context, *exactmh.Posterior, exactmh.Kernel, *exactmh.Settings) (*exactmh.Result, error)

// sampleWith runs the kernel named by kernel around model.MultilevelCenter's
// centre, with run.
func sampleWith(ctx context.Context, run sampleFunc, post *exactmh.Posterior, d *data, cf *report.Common, rec exactmh.Recorder, discard bool, kernel, proposal string, exactBelow int, free, nonCentred bool, warmup, thin int, accept float64, say func(string, ...any)) (*exactmh.Result, exactmh.Kernel, error) {
	dim := post.Energy.Dim()
	t0 := time.Now()
	center, sd, err := model.MultilevelCenter(ctx, post, 0)
	if err != nil {
		log.Fatal(err)
	}
	if d != nil {
		say("centre (Laplace-EM) in %.1fs: τ_u = %.3f (true %.3f), τ_v = %.3f (true %.3f)", time.Since(t0).Seconds(),
			math.Exp(center[dim-2]), d.tau[0], math.Exp(center[dim-1]), d.tau[1])
	} else {
		say("centre (Laplace-EM) in %.1fs: last two scales %.3f, %.3f", time.Since(t0).Seconds(), math.Exp(center[dim-2]), math.Exp(center[dim-1]))
	}

	t0 = time.Now()
	prior := post.Prior.(*model.MultilevelPrior)
	var q exactmh.Proposal = exactmh.RandomWalk{Sigma: sd}
	if kernel == "gibbs" || kernel == "nuts" {
		proposal = kernel
	} else if proposal == "cn" {
		cn, err := laplaceCN(post, center, prior.NumTerms())
		if err != nil {
			log.Fatal(err)
		}
		q = cn
	}
	say("proposal %s in %.1fs", proposal, time.Since(t0).Seconds())
	k := multilevel.GroupSMH{Center: center, Blocks: prior.Blocks(), Proposal: q, ExactBelow: exactBelow}
	if free {
		k.Free = sd
	}
	var kern exactmh.Kernel = k
	switch kernel {
	case "mh":
		kern = exactmh.MH{Proposal: q}
	case "gibbs":
		gg := multilevel.GroupGibbs{Center: center, ExactBelow: exactBelow, FixedRho: gibbsFixedRho, FixedRepeats: gibbsFixedRepeats}
		if gibbsNewtonEvery > 0 {
			gg.FixedNewton, gg.NewtonEvery, gg.FreeRepeats = true, gibbsNewtonEvery, multilevel.DefaultFreeRepeats
		}
		kern = gg
	case "nuts":
		kern = exactmh.NUTS{NonCentred: nonCentred}
	}
	res, err := run(ctx, post, kern, &exactmh.Settings{
		Chains: cf.Chains, Warmup: warmup, Draws: cf.Draws, Thin: thin, Seed: cf.Seed, Init: center, Recorder: rec, TargetAccept: accept, DiscardDraws: discard})
	if err != nil && res == nil {
		log.Fatal(err)
	}
	return res, kern, err
}

// The -kernel gibbs options of the fixed blocks' updates (-fixed-rho,
// -fixed-repeats, -newton-every).
var (
	gibbsFixedRho                       float64
	gibbsFixedRepeats, gibbsNewtonEvery int
)

// runKey says what makes a run, for -resume to refuse another: the data
// set, the model, the kernel and the run's settings.
func runKey(n, groups, lo, hi int, crossed string, f32 bool, kernel, proposal string, exactBelow int, free bool, warmup, thin int, accept float64, cf *report.Common) string {
	return fmt.Sprintf("n %d groups %d sizes %d-%d crossed %q float32 %v kernel %s proposal %s exact-below %d free %v chains %d warmup %d draws %d thin %d accept %g seed %d",
		n, groups, lo, hi, crossed, f32, kernel, proposal, exactBelow, free, cf.Chains, warmup, cf.Draws, thin, accept, cf.Seed) +
		fmt.Sprintf(" fixed-rho %g fixed-repeats %d newton-every %d", gibbsFixedRho, gibbsFixedRepeats, gibbsNewtonEvery)
}

// compareStan compares the summary s with rstan's draws in files (the
// non-centred stan/multilevel.stan: alpha, beta, u, v, log_tau_u,
// log_tau_v) on every fixed effect, both log scales and 50 random
// intercepts and slopes (25 each, evenly spaced over the groups): the
// difference of means in Stan's posterior sds, and the ratio of sds.
func compareStan(s *exactmh.Summary, files []string, groups int) error {
	var cols []string
	var draws [][]float64
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		sf, err := stancsv.Read(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cols = sf.Columns
		draws = append(draws, sf.Draws...)
	}
	col := map[string]int{}
	for j, c := range cols {
		col[c] = j
	}
	pairs := [][2]string{{"Intercept", "alpha"}, {"log_tau_g", "log_tau_u"}, {"log_tau_g_x1", "log_tau_v"}}
	for j := 1; j <= 9; j++ {
		pairs = append(pairs, [2]string{fmt.Sprintf("x%d", j), fmt.Sprintf("beta.%d", j)})
	}
	for q := range 25 {
		g := 1 + q*(groups-1)/24
		pairs = append(pairs, [2]string{fmt.Sprintf("u_g[%d]", g), fmt.Sprintf("u.%d", g)},
			[2]string{fmt.Sprintf("u_g_x1[%d]", g), fmt.Sprintf("v.%d", g)})
	}
	ours := map[string]exactmh.ParamSummary{}
	for _, p := range s.Params {
		ours[p.Name] = p
	}
	var maxZ, minR, maxR float64 = 0, math.Inf(1), 0
	var worstZ string
	fmt.Printf("against rstan's NUTS (%d draws): %-14s %9s %9s %9s %9s %7s %6s\n", len(draws), "parameter", "mean", "Stan", "sd", "Stan sd", "Δ/sd", "sd ×")
	for _, pr := range pairs {
		o, ok := ours[pr[0]]
		j, ok2 := col[pr[1]]
		if !ok || !ok2 {
			return fmt.Errorf("compare: no %s or Stan column %s", pr[0], pr[1])
		}
		var m, v float64
		for _, r := range draws {
			m += r[j]
		}
		m /= float64(len(draws))
		for _, r := range draws {
			v += (r[j] - m) * (r[j] - m)
		}
		sd := math.Sqrt(v / float64(len(draws)-1))
		z, ratio := (o.Mean-m)/sd, o.SD/sd
		if math.Abs(z) > maxZ {
			maxZ, worstZ = math.Abs(z), pr[0]
		}
		minR, maxR = math.Min(minR, ratio), math.Max(maxR, ratio)
		if !strings.HasPrefix(pr[0], "u_g") || pr[0] == "u_g[1]" {
			fmt.Printf("%-14s %9.4f %9.4f %9.4f %9.4f %7.3f %6.3f\n", pr[0], o.Mean, m, o.SD, sd, z, ratio)
		}
	}
	fmt.Printf("%d parameters (10 fixed, 2 log scales, 50 group effects): max |Δmean|/sd %.3f (%s), sd ratios in [%.3f, %.3f]\n",
		len(pairs), maxZ, worstZ, minR, maxR)
	return nil
}

// scales returns the chains' adapted step scales.
func scales(res *exactmh.Result) []float64 {
	var s []float64
	for _, c := range res.Chains {
		s = append(s, c.Scale)
	}
	return s
}

// data is the simulated data set and its truth.
type data struct {
	y       []float64
	offset  []float64 // -family poisson: log exposures
	poisson bool
	x       [][]float64 // x1 … x9
	g       []int32
	sizes   []int // group sizes, largest first
	beta    []float64
	tau     [2]float64
	u       [][2]float64
}

// groupSizes returns sizes n_g = 10^{log10(max) − (log10(max) −
// log10(min))·(g/(G−1))^a} for g = 0 … G−1, a rank-size law from max to
// min, with a found by bisection so that they sum to n (the largest group
// absorbs the rounding).
func groupSizes(n, groups, lo, hi int) []int {
	sizes := make([]int, groups)
	fill := func(a float64) int {
		var s int
		for g := range sizes {
			r := 0.0
			if groups > 1 {
				r = float64(g) / float64(groups-1)
			}
			sizes[g] = int(math.Round(math.Pow(10, math.Log10(float64(hi))-math.Log10(float64(hi)/float64(lo))*math.Pow(r, a))))
			s += sizes[g]
		}
		return s
	}
	alo, ahi := 0.01, 100.0
	for range 100 {
		a := math.Sqrt(alo * ahi)
		if fill(a) > n { // a larger a keeps more groups near max
			ahi = a
		} else {
			alo = a
		}
	}
	s := fill(math.Sqrt(alo * ahi))
	sizes[0] = max(1, sizes[0]+n-s)
	return sizes
}

// simulate returns the data set of n data in groups groups of sizes from
// lo to hi, held in memory.
func simulate(n, groups, lo, hi int, seed uint64, poisson bool) *data {
	d := &data{poisson: poisson}
	d.x = make([][]float64, 9)
	simulateRows(d, n, groups, lo, hi, seed, func(g int32, x []float64, y, off float64) error {
		d.y, d.g = append(d.y, y), append(d.g, g)
		if poisson {
			d.offset = append(d.offset, off)
		}
		for j, v := range x {
			d.x[j] = append(d.x[j], v)
		}
		return nil
	})
	return d
}

// simulateRows draws the truth into d (sizes, β, τ, u) and then the data,
// group by group, handing each datum's group, x1 … x9 (a buffer reused
// for the next), label (count, with d.poisson) and offset (0 but with
// d.poisson) to row: the rows of any N are drawn without being held.
func simulateRows(d *data, n, groups, lo, hi int, seed uint64, row func(g int32, x []float64, y, off float64) error) error {
	rng := d.truth(n, groups, lo, hi, seed)
	x := make([]float64, 9)
	for g, s := range d.sizes {
		for range s {
			z := d.beta[0]
			for j := range x {
				x[j] = rng.NormFloat64()
				z += d.beta[j+1] * x[j]
			}
			z += d.u[g][0] + d.u[g][1]*x[0]
			var y, off float64
			if d.poisson {
				off = math.Log(0.5 + 1.5*rng.Float64())
				y = poissonCount(rng, math.Exp(off+z))
			} else if rng.Float64() < 1/(1+math.Exp(-z)) {
				y = 1
			}
			if err := row(int32(g), x, y, off); err != nil {
				return err
			}
		}
	}
	return nil
}

// truth draws the group sizes, β, τ and the effects u into d and
// returns the random stream the data are drawn from next.
func (d *data) truth(n, groups, lo, hi int, seed uint64) *rand.Rand {
	rng := rand.New(rand.NewPCG(seed, 30))
	d.sizes, d.tau = groupSizes(n, groups, lo, hi), [2]float64{0.5, 0.25}
	d.beta = make([]float64, 10)
	d.beta[0] = -1
	for j := 1; j < 10; j++ {
		d.beta[j] = 0.3 * rng.NormFloat64()
	}
	d.u = make([][2]float64, groups)
	for g := range d.u {
		d.u[g] = [2]float64{d.tau[0] * rng.NormFloat64(), d.tau[1] * rng.NormFloat64()}
	}
	return rng
}

// poissonCount draws a Poisson(mu) count: by inversion for mu ≤ 30, else
// rounded from the normal approximation (the simulated means stay small).
func poissonCount(rng *rand.Rand, mu float64) float64 {
	if mu > 30 {
		return math.Max(0, math.Round(mu+math.Sqrt(mu)*rng.NormFloat64()))
	}
	u, k, p := rng.Float64(), 0, math.Exp(-mu)
	for s := p; u > s && k < 1000; s += p {
		k++
		p *= mu / float64(k)
	}
	return float64(k)
}

// spec returns the model without its data: logistic, an intercept and
// β ~ N(0, 5²) on the 10 fixed effects, a random intercept and slope on
// x1 per group g with τ ~ half-normal(1).
func spec() *model.Multilevel {
	m := &model.Multilevel{
		Family:    model.LogisticFamily{},
		Intercept: true,
		FixedSD:   make([]float64, 10),
		Factors: []model.Factor{{Name: "g", Slopes: []model.Covariate{{Name: "x1"}},
			Tau: model.HalfNormal(1)}},
	}
	for j := range m.FixedSD {
		m.FixedSD[j] = 5
	}
	return m
}

func (d *data) posterior(f32 bool) (*exactmh.Posterior, error) {
	m := spec()
	m.Y, m.Float32 = d.y, f32
	if d.poisson {
		m.Family, m.Offset = model.PoissonFamily{}, d.offset
	}
	m.Factors[0].Index, m.Factors[0].Slopes[0].Values = d.g, d.x[0]
	for j := range 9 {
		m.Fixed = append(m.Fixed, model.Covariate{Name: fmt.Sprintf("x%d", j+1), Values: d.x[j]})
	}
	return model.NewMultilevel(m)
}

// laplaceCN returns the Crank–Nicolson proposal around N(θ̂, H⁻¹) on the
// effects (β, u), H the Hessian of −log π in them at the centre given τ̂,
// which leaves the log scales, the last free coordinates of θ, where they
// are: GroupSMH's Free updates move those given the effects. A proposal
// that moved them with the effects from a fixed Gaussian would be
// rejected (the funnel: the scales and the spread of the small groups'
// effects move together). Any Gaussian leaves the kernel exact; this one
// sets its efficiency. It is dense: O(m²) memory and per step, O(m³) to
// build, m = d − free.
func laplaceCN(post *exactmh.Posterior, center []float64, free int) (exactmh.Proposal, error) {
	m := len(center) - free
	he, err := post.Energy.(interface {
		SparseHessian([]float64) (*sparse.SymCSC, error)
	}).SparseHessian(center)
	if err != nil {
		return nil, err
	}
	hp, err := post.Prior.(*model.MultilevelPrior).SparseHessian(center)
	if err != nil {
		return nil, err
	}
	h := mat.NewSymDense(m, nil)
	for _, s := range []*sparse.SymCSC{he, hp} {
		for j := range min(s.N, m) {
			for q := s.ColPtr[j]; q < s.ColPtr[j+1]; q++ {
				if r := s.RowIdx[q]; r < m {
					h.SetSym(r, j, h.At(r, j)+s.Val[q])
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		return nil, fmt.Errorf("the Hessian at the centre is not positive definite")
	}
	var cov mat.SymDense
	if err := ch.InverseTo(&cov); err != nil {
		return nil, err
	}
	cn, err := exactmh.NewCrankNicolson(center[:m], &cov)
	if err != nil {
		return nil, err
	}
	return headProposal{cn, m}, nil
}

// headProposal applies a proposal to the first m coordinates of θ and
// keeps the others.
type headProposal struct {
	q exactmh.Proposal
	m int
}

// Propose implements exactmh.Proposal.
func (h headProposal) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	copy(dst[h.m:], theta[h.m:])
	return h.q.Propose(rng, dst[:h.m], theta[:h.m], scale)
}

// export writes the data for stan/run.R.
func (d *data) export(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "multilevel.csv"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, "y,g")
	for j := range d.x {
		fmt.Fprintf(w, ",x%d", j+1)
	}
	fmt.Fprintln(w)
	for i := range d.y {
		fmt.Fprintf(w, "%d,%d", int(d.y[i]), d.g[i]+1)
		for j := range d.x {
			fmt.Fprintf(w, ",%s", strconv.FormatFloat(d.x[j][i], 'x', -1, 64))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command outofcore samples a logistic-regression posterior whose data do
// not need to fit in memory: N = 10⁸ rows of d = 10 covariates, 8 GB in
// float64 (4 GB in float32), written once to a row store (package data),
// memory-mapped, and handed to exactmh as slices of the mapping. The exact
// control-variate kernel the automatic default picks for such data reads
// only the rows it draws, so after the set-up passes (MAP, Laplace
// approximation, control variates, bounds) the process's resident share of
// the file shrinks back to those rows (data.Store.EndFullPasses).
//
// It prints the file's size and build time, the MAP time, the automatic
// default's choice, the sampling ESS per second (minimum bulk ESS over
// coordinates per second of sampling, summed over chains), the data read
// per step, and memory from /proc/self/status: the peak resident set
// (VmHWM) and the current anonymous (RssAnon: the heap, including the
// control variates' per-datum state) and file-backed (RssFile: pages of the
// mapping) resident memory, at each stage.
//
//	go run ./examples/outofcore                        # N = 10⁸, d = 10, float64 (8 GB in the temp dir)
//	go run ./examples/outofcore -dtype float32         # the same data in 4 GB
//	go run ./examples/outofcore -n 1000000 -dir /data  # elsewhere, smaller
//	go run ./examples/outofcore -quick                 # N = 10⁵, a few seconds, file removed
//
// The store is reused when a file of the same N, d, dtype and seed exists
// in -dir (default $TMPDIR/exactmh-outofcore); -rm removes it at the end.
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
	"strings"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/memstat"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 1_000_000)
	n := flag.Int("n", 100_000_000, "rows")
	d := flag.Int("d", 10, "covariates per row")
	dtypeName := flag.String("dtype", "float64", "storage of X: float32 or float64")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "exactmh-outofcore"), "directory of the store file")
	budget := flag.Duration("budget", 30*time.Second, "sampling time per chain with -draws 0 (the draws kept then grow with the run: Result.DrawBytes each, plus slice growth)")
	advise := flag.Bool("advise", true, "madvise(DONTNEED, RANDOM) the mapping when the full passes are over")
	cold := flag.Bool("cold", false, "also drop the file from the page cache when sampling starts, so rows come from the disk (as for a file larger than RAM)")
	rm := flag.Bool("rm", false, "remove the store file at the end")
	buildOnly := flag.Bool("build-only", false, "write the store (or find it) and stop")
	rows := flag.Int("rows", 0, "sample from the first rows of the store only (0: all N): a smaller data set from the same generator, without a second file")
	direct := flag.Bool("direct", false, "no separate FindLaplace: the automatic default from a cold start (its own MAP search from θ = 0), as exactmh.Sample with no kernel runs it")
	warmup := flag.Int("warmup", 150, "warmup transitions per chain (below 200 TunaMH skips its mid-warmup comparison with MH, up to 30 full passes per chain; the automatic default's pilots have already measured MH)")
	flag.Parse()
	if cf.Quick {
		*n, *rm = 100_000, true
		cf.Draws = min(cf.Draws, 20_000)
		*dir = filepath.Join(os.TempDir(), fmt.Sprintf("exactmh-outofcore-quick-%d", os.Getpid()))
	}
	dtype, err := data.ParseDType(*dtypeName)
	if err != nil {
		log.Fatal(err)
	}
	r := &run{buildOnly: *buildOnly, rows: *rows, direct: *direct, warmup: *warmup, cf: cf, n: *n, d: *d, dtype: dtype, budget: *budget, advise: *advise, cold: *cold}
	err = r.main(*dir)
	if *rm && r.path != "" {
		os.Remove(r.path)
		if cf.Quick {
			os.Remove(*dir)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
}

type run struct {
	cf     *report.Common
	n, d   int
	dtype  data.DType
	budget time.Duration
	advise bool
	cold   bool
	warmup int
	path   string
	// buildOnly stops after the store is written or found (-build-only).
	buildOnly bool
	// rows, when positive, is how many of the store's first rows are
	// sampled from (-rows).
	rows int
	// direct leaves the MAP search to Choose (-direct).
	direct bool
	start  time.Time
}

// say prints a line of the report on stdout unless -json.
func (r *run) say(format string, args ...any) {
	if !r.cf.JSON {
		fmt.Printf(format+"\n", args...)
	}
}

func (r *run) main(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r.path = filepath.Join(dir, fmt.Sprintf("logistic_n%d_d%d_%v_seed%d.rows", r.n, r.d, r.dtype, r.cf.Seed))
	var build time.Duration
	s, err := data.OpenStore(r.path)
	if err == nil && (s.N() != r.n || s.D() != r.d || s.DType() != r.dtype) {
		s.Close()
		err = fmt.Errorf("%s holds N = %d, d = %d, %v", r.path, s.N(), s.D(), s.DType())
	}
	if err != nil {
		if !os.IsNotExist(unwrapPath(err)) {
			r.say("rebuilding: %v", err)
		}
		t0 := time.Now()
		if err := r.build(); err != nil {
			return err
		}
		build = time.Since(t0)
		if s, err = data.OpenStore(r.path); err != nil {
			return err
		}
	}
	defer s.Close()
	size := s.Size()
	if build > 0 {
		r.say("store     %s: %s, built in %.1fs", r.path, memstat.GB(size), build.Seconds())
	} else {
		r.say("store     %s: %s, reused", r.path, memstat.GB(size))
	}
	r.mem("opened")
	if r.buildOnly {
		return nil
	}

	// The energy on the mapped slices: its constructor checks every value
	// (one pass). With -rows, on the first rows only.
	n := r.n
	if r.rows > 0 && r.rows < n {
		n = r.rows
		r.say("rows      the first %d of the store's %d rows", n, r.n)
	}
	r.start = time.Now()
	t0 := time.Now()
	var e exactmh.Energy
	if r.dtype == data.Float32 {
		e, err = model.NewLogisticRegression32(s.X32()[:n*r.d], s.Y()[:n], r.d)
	} else {
		e, err = model.NewLogisticRegression(s.X64()[:n*r.d], s.Y()[:n], r.d)
	}
	if err != nil {
		return err
	}
	check := time.Since(t0)
	prior, _ := model.NewIsoGaussian(r.d, 10)
	post := &exactmh.Posterior{Energy: e, Prior: prior}
	r.say("energy    %T, values checked in %.1fs", e, check.Seconds())
	r.mem("checked")

	ctx := context.Background()
	set := &exactmh.Settings{Chains: r.cf.Chains, Seed: r.cf.Seed}
	var mapTime time.Duration
	var mapPasses int
	if !r.direct {
		t0 = time.Now()
		la, err := exactmh.FindLaplace(ctx, post, make([]float64, r.d), nil)
		if err != nil {
			return err
		}
		mapTime, mapPasses = time.Since(t0), la.Passes
		r.say("MAP       %.1fs (MAP and Laplace approximation, %d passes over the data)", mapTime.Seconds(), la.Passes)
		r.mem("after MAP")
		// The automatic default, started at the MAP (so its own Laplace
		// search converges at once): control variates, bounds and pilots.
		set.Init = la.Mean
	}
	if !r.cf.Quiet {
		set.ChoiceProgress = func(step string) { r.mem("choice: " + step) }
	}
	choice, err := exactmh.Choose(ctx, post, set)
	if err != nil {
		return err
	}
	r.say("choice    %s (%.1fs)", choice, choice.Time.Seconds())
	r.mem("after the choice")

	// The kernel's start and warmup may still pass over the data (TunaMH
	// compares itself with MH during warmup); the advice is given when the
	// first chain begins sampling.
	adv := &memstat.Adviser{Inner: r.cf.Progress()}
	var advReadBytes int64
	if r.advise || r.cold {
		adv.Do = func() error {
			defer func() { advReadBytes = readBytes() }()
			if r.cold {
				return s.EvictCache()
			}
			return s.EndFullPasses()
		}
	}
	// With -direct the chains start as Sample with a nil Kernel starts
	// them: drawn from the Laplace approximation when the chosen kernel is
	// built on it (a -CN name). From the origin instead, each chain's first
	// step is a full MH step (C·M at the origin exceeds N): a pass over the
	// data per chain, and with the advice given, a pass of random reads.
	if r.direct && strings.HasSuffix(choice.Name, "-CN") {
		set = exactmh.LaplaceInits(set, choice.Laplace, choice.Posterior)
	}
	set.Recorder = adv
	set.Draws, set.Warmup = r.cf.Draws, r.warmup
	if set.Draws == 0 {
		set.Duration = r.budget
	}
	res, err := exactmh.Sample(ctx, choice.Posterior, choice.Kernel, set)
	if err != nil {
		return err
	}
	res.Choice = choice
	if adv.Err != nil {
		return adv.Err
	}
	m := r.mem("sampled") // before the summary's FFTs add their own
	sum := res.Summary()
	tot := res.Sampling()
	rowBytes := float64(r.d*r.dtype.Size() + 8)
	size = int64(float64(n) * rowBytes) // the bytes sampled from
	perStep := tot.EvalsPerStep()
	r.say("sampling  %s: %d steps in %.1fs (summed over %d chains), min bulk ESS %.0f, %.1f ESS/s, max R-hat %.4f, accept %.2f",
		res.Kernel, tot.Steps, sum.SamplingTime.Seconds(), len(res.Chains), sum.MinESSBulk(), sum.MinESSPerSecond(), sum.MaxRHat(), tot.AcceptRate())
	r.say("reads     %.1f rows per step: %.0f bytes of x_i and y_i (%.0f B a row), %.2g of the file",
		perStep, perStep*rowBytes, rowBytes, perStep*rowBytes/float64(size))
	diskRead := readBytes() - advReadBytes
	if adv.Before != nil {
		r.say("disk      %s read from storage while sampling (/proc/self/io read_bytes), %.0f B a step",
			memstat.GB(diskRead), float64(diskRead)/float64(tot.Steps))
	}
	if adv.Before != nil {
		what := "EndFullPasses"
		if r.cold {
			what = "EvictCache"
		}
		r.say("advice    RssFile %s before %s, %s just after, %s at the end",
			memstat.GB(adv.Before["RssFile"]), what, memstat.GB(adv.After["RssFile"]), memstat.GB(m["RssFile"]))
		r.say("resident  RssAnon %s when sampling began (the kernel's per-datum state), %s when it ended (with the draws); file %s",
			memstat.GB(adv.After["RssAnon"]), memstat.GB(m["RssAnon"]), memstat.GB(size))
	}
	var kept int
	for _, ch := range res.Chains {
		kept += ch.Len()
	}
	r.say("draws     %d kept, %s (Result.DrawBytes = %d B each)", kept, memstat.GB(int64(kept*res.DrawBytes())), res.DrawBytes())
	if err := r.cf.SaveStanCSV(res, "outofcore", nil); err != nil {
		return err
	}
	if r.cf.JSON {
		return report.Write(os.Stdout, report.Row(res, map[string]any{
			"n": r.n, "d": r.d, "dtype": r.dtype.String(), "file_bytes": size,
			"build_seconds": build.Seconds(), "check_seconds": check.Seconds(),
			"map_seconds": mapTime.Seconds(), "map_passes": mapPasses, "rows": n,
			"chose": choice.Name, "choice_seconds": choice.Time.Seconds(),
			"bytes_per_step": perStep * rowBytes, "advise": r.advise, "cold": r.cold,
			"disk_read_bytes": diskRead,
			"vm_hwm":          m["VmHWM"], "rss_anon": m["RssAnon"], "rss_file": m["RssFile"],
		}))
	}
	return nil
}

// unwrapPath returns the *os.PathError inside err, or err.
func unwrapPath(err error) error {
	for e := err; e != nil; {
		if pe, ok := e.(*os.PathError); ok {
			return pe
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return err
}

// build writes the store row by row: x_ij ~ N(0, 1) (rounded to the
// storage type), y_i ~ Bernoulli(σ(x_iᵀθ*)) with θ*_j = (−1)^j·2/√d.
func (r *run) build() error {
	w, err := data.CreateStore(r.path, r.n, r.d, r.dtype)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(r.cf.Seed, 0x6f7574))
	theta := make([]float64, r.d)
	for j := range theta {
		theta[j] = 2 / math.Sqrt(float64(r.d))
		if j%2 == 1 {
			theta[j] = -theta[j]
		}
	}
	x := make([]float64, r.d)
	next := time.Now().Add(10 * time.Second)
	for i := range r.n {
		var z float64
		for j := range x {
			v := rng.NormFloat64()
			if r.dtype == data.Float32 {
				v = float64(float32(v))
			}
			x[j] = v
			z += v * theta[j]
		}
		var y float64
		if rng.Float64()*(1+math.Exp(-z)) < 1 {
			y = 1
		}
		if err := w.WriteRow(x, y); err != nil {
			w.Abort()
			return err
		}
		if !r.cf.Quiet && i&0xffff == 0 && time.Now().After(next) {
			fmt.Fprintf(os.Stderr, "building %s: %d of %d rows\n", r.path, i, r.n)
			next = next.Add(10 * time.Second)
		}
	}
	return w.Close()
}

// mem prints and returns VmHWM, VmRSS, RssAnon and RssFile in bytes, with
// the wall time since the energy's construction began and the process's
// CPU time (user + system, all threads) so far.
func (r *run) mem(stage string) map[string]int64 {
	m := memstat.ProcStatus()
	var wall float64
	if !r.start.IsZero() {
		wall = time.Since(r.start).Seconds()
	}
	r.say("memory    %-17s wall %.1fs, CPU %.1fs, VmHWM %s, VmRSS %s, RssAnon %s, RssFile %s", stage+":",
		wall, report.CPUTime().Seconds(), memstat.GB(m["VmHWM"]), memstat.GB(m["VmRSS"]), memstat.GB(m["RssAnon"]), memstat.GB(m["RssFile"]))
	return m
}

// readBytes returns read_bytes of /proc/self/io: bytes this process
// caused to be fetched from storage (0 where there is no such file).
func readBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	return 0
}

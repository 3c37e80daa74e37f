// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command flights measures the automatic default on a second real
// mid-size row beside examples/fashion: a flat logistic regression of
// "arrived more than 15 minutes late" on a fixed random subset of the
// bundled flights (examples/data/flights-3m.parquet; -n rows, 10⁵ by
// default, drawn with -seed), with the quickstart's features — log
// distance, the hour of day (sine and cosine), weekday and month dummies,
// the eight busiest origins and destinations — standardised over all
// 3·10⁶ flights, and an intercept; prior N(0, 2.5²) on each coefficient.
//
// It prints the choice, data read per transition, min bulk and tail ESS,
// R-hat and min bulk ESS per CPU-second of everything after the data are
// in memory (MAP, Laplace, control variates, pilots, warmup and sampling;
// getrusage, so a loaded machine does not inflate it). -export DIR writes
// the same rows for Stan's NUTS (stan/run.R with flights.stan), and -means
// FILE (rstan's posterior means and sds, as stan/run.R writes them)
// compares the posterior means and sds with NUTS's.
//
//	go run ./examples/flights
//	go run ./examples/flights -export /tmp/flights
//	Rscript examples/flights/stan/run.R /tmp/flights /tmp/flights/stan 1 1
//	go run ./examples/flights -means /tmp/flights/stan/flights_nuts_moments.csv
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/model"
)

// priorSD is the prior's standard deviation on every coefficient (the
// Stan program's).
const priorSD = 2.5

// spec is the quickstart's model: y = delay > 15 minutes on these
// features.
var spec = data.Spec{
	Response: data.Above("delay", 15),
	Terms: []data.Term{
		data.Log("distance"),
		data.HourOfDay("date"),
		data.DayOfWeek("date"),
		data.Month("date"),
		data.Categorical("origin", data.TopK(8)),
		data.Categorical("destination", data.TopK(8)),
	},
}

func main() {
	cf := report.RegisterCommon(runtime.GOMAXPROCS(0), 1000)
	file := flag.String("file", "", "the flights Parquet file (default: examples/data/flights-3m.parquet, found from the working directory)")
	n := flag.Int("n", 100_000, "rows in the random subset")
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	exportTo := flag.String("export", "", "only write the subset as CSV (hexadecimal reals) to this directory")
	means := flag.String("means", "", "rstan's posterior means and sds (CSV name,mean,sd from stan/run.R) to compare with")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the sampling to this file")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("flights: ")
	if cf.Quick {
		*warmup, cf.Draws = 200, 300
	}
	path, err := report.FindFlights(*file)
	if err != nil {
		log.Fatal(err)
	}
	design, err := load(path, *n, cf.Seed)
	if err != nil {
		log.Fatal(err)
	}
	e, err := model.NewLogisticRegression(design.X, design.Y, design.D)
	if err != nil {
		log.Fatal(err)
	}
	if *exportTo != "" {
		if err := export(*exportTo, design); err != nil {
			log.Fatal(err)
		}
		return
	}
	prior, err := model.NewIsoGaussian(design.D, priorSD)
	if err != nil {
		log.Fatal(err)
	}
	post := &exactmh.Posterior{Energy: e, Prior: prior, Names: design.Names}
	set := &exactmh.Settings{Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Seed: cf.Seed}
	if !cf.Quiet {
		set.Recorder = cf.Progress()
	}
	defer report.StartCPUProfile(*cpuprofile)()
	cpu0, wall0 := report.CPUTime(), time.Now()
	res, err := exactmh.Sample(context.Background(), post, nil, set)
	if err != nil {
		log.Fatal(err)
	}
	cpu, wall := report.CPUTime()-cpu0, time.Since(wall0)
	pprof.StopCPUProfile()
	s := res.Summary()
	minTail := math.Inf(1)
	for _, p := range s.Params {
		minTail = math.Min(minTail, p.ESSTail)
	}
	fmt.Printf("flights: N = %d of %d rows (random subset, seed %d), d = %d, %d chains × (%d + %d) on %d cores\n",
		design.N, *n, cf.Seed, design.D, cf.Chains, *warmup, cf.Draws, runtime.GOMAXPROCS(0))
	fmt.Printf("chose %s\n", res.Choice)
	fmt.Printf("%.4g data per transition (%.3g%% of N), acceptance %.3f; min bulk ESS %.0f, min tail ESS %.0f, max R-hat %.4f\n",
		s.EvalsPerStep, 100*s.EvalsPerStep/float64(design.N), s.AcceptRate, s.MinESSBulk(), minTail, s.MaxRHat())
	fmt.Printf("everything (MAP, Laplace, control variates, pilots, warmup and sampling): %.2f CPU-s (choice %.2f s wall), %.2f s wall: min bulk ESS per CPU-second %.4g, per wall second %.4g\n",
		cpu.Seconds(), res.Choice.Time.Seconds(), wall.Seconds(), s.MinESSBulk()/cpu.Seconds(), s.MinESSBulk()/wall.Seconds())
	for _, w := range s.Warnings {
		fmt.Printf("warning: %s\n", w)
	}
	if *means != "" {
		if err := compare(*means, design.Names, s); err != nil {
			log.Fatal(err)
		}
	}
	if cf.Out != "" {
		if err := cf.SaveStanCSV(res, "flights", nil); err != nil {
			log.Fatal(err)
		}
	}
}

// load reads the flights, builds the quickstart's design over all of them
// (so the standardisation does not depend on the subset) and keeps n rows
// drawn without replacement with PCG(seed, 33), in file order. A column
// the subset leaves constant at zero (July has 6 flights) is dropped.
func load(path string, n int, seed uint64) (*data.Design, error) {
	frame, err := data.ReadParquet(path, &data.ReadOptions{Columns: []string{"date", "delay", "distance", "origin", "destination"}})
	if err != nil {
		return nil, err
	}
	full, err := spec.Build(frame)
	if err != nil {
		return nil, err
	}
	if n <= 0 || n > full.N {
		return nil, fmt.Errorf("-n %d: want 1 to %d rows", n, full.N)
	}
	rng := rand.New(rand.NewPCG(seed, 33))
	keep := make([]bool, full.N)
	for _, i := range rng.Perm(full.N)[:n] {
		keep[i] = true
	}
	var cols []int
	for j := range full.D {
		for i := range full.N {
			if keep[i] && full.X[i*full.D+j] != 0 {
				cols = append(cols, j)
				break
			}
		}
	}
	sub := &data.Design{N: n, D: len(cols), YName: full.YName, Source: full.Source, Intercept: full.Intercept}
	for _, j := range cols {
		sub.Names = append(sub.Names, full.Names[j])
		sub.Center = append(sub.Center, full.Center[j])
		sub.Scale = append(sub.Scale, full.Scale[j])
	}
	for i := range full.N {
		if !keep[i] {
			continue
		}
		for _, j := range cols {
			sub.X = append(sub.X, full.X[i*full.D+j])
		}
		sub.Y = append(sub.Y, full.Y[i])
	}
	return sub, nil
}

// export writes DIR/flights.csv (y,x1,…,xd, reals in hexadecimal, which R
// reads exactly) and DIR/flights_constants.csv (n, d, sigma).
func export(dir string, d *data.Design) error {
	cols := []string{"y"}
	for j := range d.D {
		cols = append(cols, fmt.Sprintf("x%d", j+1))
	}
	return report.ExportCSV(dir, "flights", cols, d.N, func(b []byte, i int) []byte {
		b = report.HexFloat(b, d.Y[i])
		for _, v := range d.X[i*d.D : (i+1)*d.D] {
			b = report.HexFloat(append(b, ','), v)
		}
		return b
	}, "d", fmt.Sprint(d.D), "sigma", fmt.Sprint(priorSD))
}

// compare prints, for each coefficient, |mean − NUTS mean| / NUTS sd and
// sd / NUTS sd, and the largest of the first and the range of the second,
// from the CSV (name,mean,sd; coefficients in order) that stan/run.R
// writes.
func compare(path string, names []string, s *exactmh.Summary) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return err
	}
	if len(recs) != len(names)+1 {
		return fmt.Errorf("%s: %d rows, want a header and %d coefficients", path, len(recs), len(names))
	}
	worst, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	wj := 0
	for j, r := range recs[1:] {
		m, err1 := strconv.ParseFloat(r[1], 64)
		sd, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil || len(r) < 3 {
			return fmt.Errorf("%s: row %d: %q", path, j+2, r)
		}
		z := math.Abs(s.Params[j].Mean-m) / sd
		if z > worst {
			worst, wj = z, j
		}
		ratio := s.Params[j].SD / sd
		lo, hi = math.Min(lo, ratio), math.Max(hi, ratio)
	}
	fmt.Printf("against NUTS: posterior means within %.3f NUTS sd (max at %s), sd ratios in [%.3f, %.3f]\n", worst, names[wj], lo, hi)
	return nil
}

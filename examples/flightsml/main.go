// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command flightsml samples a multilevel logistic regression on the
// bundled 3 million US domestic flights of 2001 with the automatic
// default (exactmh.Sample with a nil kernel), issue 30's flights model:
//
//	delay > 15 ~ log(distance) + hour + weekday + month + (1 | origin) + (1 | destination)
//
// a random intercept per origin and per destination airport (crossed),
// every airport a level, built from data.Spec's random-effect terms
// (data.Random) into model.NewMultilevel without an N × G matrix.
//
//	go run ./examples/flightsml -out run            # 4 chains × 1000 draws, Stan CSV in run/
//	go run ./examples/flightsml -plot airports.png run/flights_*.csv
//
// -plot draws the busiest origin airports' effects (median, 50% and 90%
// intervals, sorted) from a run's Stan CSV files, as in the README. The
// same model on the command line:
//
//	exactmh sample --data examples/data/flights-3m.parquet --response 'delay>15' \
//	    --terms 'log(distance),hour(date),dow(date),month(date),(1|origin),(1|destination)' \
//	    --prior normal:5 --chains 4 --out run/flights
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/examples/internal/report"
)

func main() {
	cf := report.RegisterCommon(4, 1000)
	warmup := flag.Int("warmup", 1000, "warmup transitions per chain")
	dataFile := flag.String("data", "", "the flights file (default: the bundled examples/data/flights-3m.parquet)")
	rows := flag.Int("rows", 0, "read at most this many rows (0: all; with -plot, the rows of the run)")
	f32 := flag.Bool("float32", false, "store the sparse rows in float32")
	plot := flag.String("plot", "", "draw the origin airports' effects of a run from its Stan CSV files (the arguments) to this .png or .svg file, and exit")
	top := flag.Int("top", 30, "the number of airports -plot draws (the busiest)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("flightsml: ")
	if *plot != "" {
		if err := plotAirports(*plot, flag.Args(), *dataFile, *rows, *top); err != nil {
			log.Fatal(err)
		}
		return
	}
	if cf.Quick {
		*rows, *warmup, cf.Draws = 100000, 200, 200
	}
	start := time.Now()
	cpu0 := report.CPUTime()
	post, err := flightsPosterior(*dataFile, *rows, *f32)
	if err != nil {
		log.Fatal(err)
	}
	n := post.Energy.Len()
	if !cf.Quiet {
		fmt.Fprintf(os.Stderr, "flights: N = %d, d = %d; read and built in %.1fs\n", n, post.Dim(), time.Since(start).Seconds())
	}
	res, err := exactmh.Sample(context.Background(), post, nil, &exactmh.Settings{
		Chains: cf.Chains, Warmup: *warmup, Draws: cf.Draws, Seed: cf.Seed, Recorder: cf.Progress()})
	if err != nil {
		log.Fatal(err)
	}
	wall, cpu := time.Since(start), report.CPUTime()-cpu0
	s := res.Summary()
	minBulk, minTail, maxRhat := math.Inf(1), math.Inf(1), 0.0
	for _, p := range s.Params {
		minBulk, minTail, maxRhat = math.Min(minBulk, p.ESSBulk), math.Min(minTail, p.ESSTail), math.Max(maxRhat, p.RHat)
	}
	tot := res.Sampling()
	fmt.Printf("exactmh chose %s\n", res.Choice)
	fmt.Printf("%d chains × %d draws, accept %.3f, mean batch %.1f of N = %d, evals/step %.1f\n",
		len(res.Chains), s.Draws, tot.AcceptRate(), tot.MeanBatch(), n, tot.EvalsPerStep())
	fmt.Printf("min bulk ESS %.0f, min tail ESS %.0f, max R-hat %.3f over %d parameters\n", minBulk, minTail, maxRhat, len(s.Params))
	fmt.Printf("wall %.1fs, CPU %.1fs on %d cores (everything: reading, centre, pilots, warmup, draws)\n",
		wall.Seconds(), cpu.Seconds(), runtime.GOMAXPROCS(0))
	for _, p := range s.Params {
		switch p.Name {
		case "log(distance)", "log_tau_origin", "log_tau_destination", "u_origin[ATL]", "u_origin[ORD]", "u_destination[ORD]":
			fmt.Printf("  %-20s mean %8.4f  sd %7.4f  bulk ESS %5.0f  R-hat %.3f\n", p.Name, p.Mean, p.SD, p.ESSBulk, p.RHat)
		}
	}
	if err := cf.SaveStanCSV(res, "flights", post.Names); err != nil {
		log.Fatal(err)
	}
}

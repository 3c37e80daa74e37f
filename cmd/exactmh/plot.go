// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/exactmh/exactmh/stancsv"
	"github.com/exactmh/exactmh/stanplot"
)

const plotUsage = `Usage: exactmh plot [flags] FILE...

Draws plots of Stan CSV files — exactmh's, CmdStan's or rstan's — as the
chains of one run (package stanplot), each to its own file:

  PREFIX_trace.EXT      the draws against the iteration, a line per chain
  PREFIX_rank.EXT       rank histograms: flat where the chains agree
  PREFIX_intervals.EXT  median, 50% and 90% intervals, a row per variable

The variables are the parameters (--vars picks some, lp__ among them;
the interval plot leaves out an Intercept unless --vars names it, so
that it does not squeeze the slopes); exactmh's coefficients are drawn on
the original scale of each feature as exactmh summary reports them
(--standardized: as sampled). EXT is png or svg (--format).

Flags:
`

func cmdPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	kinds := fs.String("kind", "trace,rank,intervals", "the plots, comma-separated: trace, rank, intervals")
	vars := fs.String("vars", "", "the variables, comma-separated (default: every parameter)")
	out := fs.String("out", "plot", "output `prefix`: PREFIX_trace.png, …")
	format := fs.String("format", "png", "image format: png or svg")
	standardized := fs.Bool("standardized", false, "draw exactmh's coefficients as sampled, on the standardised features")
	title := fs.String("title", "", "a title for the plots")
	if _, err := parseFlags(fs, args, plotUsage, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("plot: no files (usage: exactmh plot [flags] FILE...)")
	}
	if *format != "png" && *format != "svg" {
		return usageErr("--format %s: want png or svg", *format)
	}
	var todo []string
	for _, k := range strings.Split(*kinds, ",") {
		switch k = strings.TrimSpace(k); k {
		case "trace", "rank", "intervals":
			todo = append(todo, k)
		default:
			return usageErr("--kind %s: unknown plot %q (want trace, rank or intervals)", *kinds, k)
		}
	}
	if dir := filepath.Dir(*out); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageErr("--out %s: directory %s does not exist", *out, dir)
		}
	}
	var files []*stancsv.File
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return usageErr("plot: %v", err)
		}
		sf, err := stancsv.ReadOptions{DropPartial: true}.Read(f)
		f.Close()
		if err != nil {
			return usageErr("plot: %s: %v", path, err)
		}
		if len(sf.Draws) == 0 {
			return usageErr("plot: %s has no draws", path)
		}
		files = append(files, sf)
	}
	d, err := stanplot.FromFiles(files)
	if err != nil {
		return usageErr("plot: %v", err)
	}
	if sc := fileScaling(files[0]); sc != nil && !*standardized {
		dr := &draws{names: d.Names, x: make([][][]float64, len(d.Names))}
		for j := range d.Names {
			for c := range d.Chains {
				dr.x[j] = append(dr.x[j], d.Chains[c][j])
			}
		}
		if err := sc.apply(dr); err != nil {
			return usageErr("plot: %v", err)
		}
	}
	if *vars != "" {
		var names []string
		for _, v := range strings.Split(*vars, ",") {
			names = append(names, strings.TrimSpace(v))
		}
		all, err := stanplot.FromFiles(files, "lp__")
		if err == nil && containsStr(names, "lp__") {
			d.Names = append(d.Names, "lp__")
			for c := range d.Chains {
				d.Chains[c] = append(d.Chains[c], all.Chains[c][0])
			}
		}
		if d, err = d.Select(names...); err != nil {
			return usageErr("--vars: %v", err)
		}
	}
	opt := &stanplot.Options{Title: *title}
	forest := d
	if *vars == "" && len(d.Names) > 1 && d.Names[0] == "Intercept" {
		// The intercept, on another scale than the slopes (and far from 0
		// on the original scale), would squeeze their intervals.
		if forest, err = d.Select(d.Names[1:]...); err != nil {
			return failure(err)
		}
	}
	for _, k := range todo {
		path := fmt.Sprintf("%s_%s.%s", *out, k, *format)
		switch k {
		case "trace":
			err = stanplot.Trace(path, d, opt)
		case "rank":
			err = stanplot.Ranks(path, d, opt)
		case "intervals":
			err = stanplot.Intervals(path, forest, opt)
		}
		if err != nil {
			return failure(fmt.Errorf("plot: %w", err))
		}
		fmt.Fprintln(stdout, path)
	}
	return nil
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

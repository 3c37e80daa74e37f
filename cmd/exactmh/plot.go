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
	"slices"
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

The variables are the parameters, labelled as exactmh summary and rstan
show them (u_g_L, Intercept[1]). --vars picks some, lp__ among them, spelt
so, as the files' columns (Intercept.1) or as the model names them
(u_g[L]); the interval plot leaves out an Intercept unless --vars names
it, so that it does not squeeze the slopes. exactmh's coefficients are
drawn on the original scale of each feature as exactmh summary reports them
(--standardized: as sampled). EXT is png or svg (--format).

With more than 64 parameters and no --vars (a multilevel model's
thousands of levels), the trace, rank and interval plots draw the
parameters that are not one level's effect (the fixed effects, the
scales log_tau_… and sds sd_…), and for each factor

  PREFIX_caterpillar_NAME.EXT  its levels' effects sorted by median, with
                               50% and 90% intervals (with --kind intervals)

An output file that is a symbolic link is refused, not written through.

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
	var groups []plotGroup
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
		if names, err = resolveVars(names, d.Names); err != nil {
			return usageErr("--vars: %v", err)
		}
		if d, err = d.Select(names...); err != nil {
			return usageErr("--vars: %v", err)
		}
	} else if len(d.Names) > stanplot.MaxPanels {
		// Thousands of levels: the other parameters in the panels, each
		// factor's levels in a caterpillar plot of their own.
		var top []string
		top, groups = splitGroups(files[0], d.Names)
		if len(top) > stanplot.MaxIntervals {
			fmt.Fprintf(stderr, "exactmh: plot: %d parameters besides the levels' effects: the trace and rank plots draw the first %d, the interval plot the first %d (--vars picks others)\n", len(top), stanplot.MaxPanels, stanplot.MaxIntervals)
		} else if len(top) > stanplot.MaxPanels {
			fmt.Fprintf(stderr, "exactmh: plot: %d parameters besides the levels' effects: the trace and rank plots draw the first %d (--vars picks others)\n", len(top), stanplot.MaxPanels)
		}
		full := d
		if len(top) > 0 {
			if d, err = full.Select(top...); err != nil {
				return failure(err)
			}
		}
		for k := range groups {
			if groups[k].draws, err = full.Select(groups[k].vars...); err != nil {
				return failure(err)
			}
		}
	}
	// Refuse an output that is a symbolic link, as the CSV writer does:
	// a link planted at PREFIX_trace.png would have its target replaced.
	var outputs []string
	for _, k := range todo {
		outputs = append(outputs, fmt.Sprintf("%s_%s.%s", *out, k, *format))
		if k == "intervals" {
			for _, g := range groups {
				outputs = append(outputs, g.path(*out, *format))
			}
		}
	}
	for _, path := range outputs {
		if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return usageErr("plot: %s is a symbolic link: refusing to write through it (remove it, or choose another --out)", path)
		}
	}
	opt := &stanplot.Options{Title: *title}
	forest := d
	panels := d
	if len(panels.Names) > stanplot.MaxPanels {
		if panels, err = d.Select(d.Names[:stanplot.MaxPanels]...); err != nil {
			return failure(err)
		}
	}
	if *vars == "" && len(d.Names) > 1 && d.Names[0] == "Intercept" {
		// The intercept, on another scale than the slopes (and far from 0
		// on the original scale), would squeeze their intervals.
		if forest, err = d.Select(d.Names[1:]...); err != nil {
			return failure(err)
		}
	}
	if n := len(forest.Names); n > stanplot.MaxIntervals {
		if *vars != "" && slices.Contains(todo, "intervals") {
			return usageErr("--vars: %d variables, more than the %d rows of an interval plot (pick fewer, or --kind trace,rank)", n, stanplot.MaxIntervals)
		}
		if forest, err = forest.Select(forest.Names[:stanplot.MaxIntervals]...); err != nil {
			return failure(err)
		}
	}
	// The panels and rows are labelled as summary's table and R spell the
	// variables (stancsv.RName: Intercept[1], u_g_g0).
	panels, forest = shownDraws(panels), shownDraws(forest)
	for k := range groups {
		groups[k].draws = shownDraws(groups[k].draws)
	}
	for _, k := range todo {
		path := fmt.Sprintf("%s_%s.%s", *out, k, *format)
		switch k {
		case "trace":
			err = stanplot.Trace(path, panels, opt)
		case "rank":
			err = stanplot.Ranks(path, panels, opt)
		case "intervals":
			err = stanplot.Intervals(path, forest, opt)
		}
		if err != nil {
			return failure(fmt.Errorf("plot: %w", err))
		}
		fmt.Fprintln(stdout, path)
		if k != "intervals" {
			continue
		}
		for _, g := range groups {
			gopt := &stanplot.Options{Title: strings.TrimSpace(*title + " " + g.name)}
			path := g.path(*out, *format)
			if err := stanplot.Caterpillar(path, g.draws, gopt); err != nil {
				return failure(fmt.Errorf("plot: %w", err))
			}
			fmt.Fprintln(stdout, path)
		}
	}
	return nil
}

// plotGroup is one factor's per-level effects, drawn as a caterpillar.
type plotGroup struct {
	name  string // u_origin, as the parameters start
	vars  []string
	draws *stanplot.Draws
}

// path is the group's caterpillar plot file.
func (g *plotGroup) path(prefix, format string) string {
	return fmt.Sprintf("%s_caterpillar_%s.%s", prefix, stancsv.SafeNames([]string{g.name})[0], format)
}

// splitGroups splits the files' parameters into those that are one
// level's effect, grouped by factor, and the others. exactmh's files
// list the parameters as the model names them in model_info's
// design_columns, a level's effect as u_g[LEVEL] or b_c[LEVEL] (their
// columns are these names made safe, in the same order); other files'
// indexed parameters, theta.1 … theta.k, are grouped by name.
func splitGroups(f *stancsv.File, names []string) (top []string, groups []plotGroup) {
	raw := strings.Split(f.Config["model_info.design_columns"], " | ")
	at := map[string]int{}
	add := func(group, name string) {
		k, ok := at[group]
		if !ok {
			k = len(groups)
			at[group] = k
			groups = append(groups, plotGroup{name: group})
		}
		groups[k].vars = append(groups[k].vars, name)
	}
	useRaw := len(raw) > 1 && len(raw) <= len(names)
	for j, name := range names {
		if useRaw && j < len(raw) {
			if open := strings.LastIndexByte(raw[j], '['); open > 0 && strings.HasSuffix(raw[j], "]") {
				add(raw[j][:open], name)
				continue
			}
		} else if !useRaw {
			if base, idx, ok := strings.Cut(name, "."); ok && idx != "" && strings.Trim(idx, "0123456789.") == "" {
				add(base, name)
				continue
			}
		}
		top = append(top, name)
	}
	// A group of one or two levels reads better among the panels.
	var keep []plotGroup
	for _, g := range groups {
		if len(g.vars) < 3 {
			top = append(top, g.vars...)
			continue
		}
		keep = append(keep, g)
	}
	return top, keep
}

// shownDraws returns d with its variables named as stancsv.RName shows
// the columns (the draws are shared, not copied).
func shownDraws(d *stanplot.Draws) *stanplot.Draws {
	if d == nil {
		return nil
	}
	s := *d
	s.Names = make([]string, len(d.Names))
	for j, n := range d.Names {
		s.Names[j] = stancsv.RName(n)
	}
	return &s
}

// resolveVars maps --vars names onto the files' column names: a column's
// name as it is, as the summary shows it (stancsv.RName: Intercept[1]),
// or the spelling of the run's own names (u_g[LEVEL], (Intercept)) made
// safe as the files' names are. An unknown name is an error listing a
// few of the names there are, spelt as the summary shows them.
func resolveVars(names, have []string) ([]string, error) {
	set := make(map[string]bool, len(have))
	shown := make(map[string]string, len(have))
	for _, h := range have {
		set[h] = true
		shown[stancsv.RName(h)] = h
	}
	out := make([]string, len(names))
	for i, n := range names {
		switch safe := stancsv.SafeNames([]string{n})[0]; {
		case set[n]:
			out[i] = n
		case shown[n] != "":
			out[i] = shown[n]
		case set[safe]:
			out[i] = safe
		default:
			list := have
			more := ""
			if len(list) > 8 {
				list, more = list[:8], fmt.Sprintf(", … (%d more: exactmh summary lists them)", len(have)-8)
			}
			spelt := make([]string, len(list))
			for j, h := range list {
				spelt[j] = stancsv.RName(h)
			}
			return nil, fmt.Errorf("no variable %q (the files have %s%s)", n, strings.Join(spelt, ", "), more)
		}
	}
	return out, nil
}

func containsStr(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

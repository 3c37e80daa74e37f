// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/report"
	"github.com/exactmh/exactmh/stancsv"
	"github.com/exactmh/exactmh/stanplot"
)

// plotAirports draws the origin airports' effects u_origin[…] of a run
// of the flights model from its Stan CSV files (one per chain) to out (.png or
// .svg): the top busiest origins of the flights file (by flights), sorted
// by their posterior median, each with its median, 50% and 90% intervals
// (stanplot.Intervals). A forest of every airport (hundreds of rows) is
// unreadable at any size, and the largest or smallest medians are those
// of the smallest airports, whose intervals are widest; the busiest
// airports are the ones a reader looks for.
func plotAirports(out string, csvFiles []string, dataPath string, rows, top int) error {
	var files []*stancsv.File
	for _, p := range csvFiles {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		sf, err := stancsv.Read(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		files = append(files, sf)
	}
	if len(files) == 0 {
		return fmt.Errorf("no Stan CSV files")
	}
	path, err := report.FindFlights(dataPath)
	if err != nil {
		return err
	}
	fr, err := data.ReadFile(path, &data.ReadOptions{Columns: []string{"origin"}, Limit: rows})
	if err != nil {
		return err
	}
	origins, err := fr.Strings("origin")
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, o := range origins {
		count[o]++
	}
	d, title, err := airports(files, count, top)
	if err != nil {
		return fmt.Errorf("%s: %w", csvFiles[0], err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return stanplot.Intervals(out, d, &stanplot.Options{Title: title})
}

// airports selects the top busiest origin airports (count holds each
// airport's flights) that the files have a column for — u_origin[ATL] as
// flightsml writes it, u_origin_ATL as exactmh sample does — sorted by
// their posterior median, highest first, and names each row by its
// airport and flights; it returns them with the plot's title.
func airports(files []*stancsv.File, count map[string]int, top int) (*stanplot.Draws, string, error) {
	var names []string
	for _, c := range files[0].Columns {
		if strings.HasPrefix(c, "u_origin[") && strings.HasSuffix(c, "]") || strings.HasPrefix(c, "u_origin_") {
			names = append(names, c)
		}
	}
	total := len(names)
	if total == 0 {
		return nil, "", fmt.Errorf("no column u_origin[…] or u_origin_…: not a run of the flights model")
	}
	level := func(name string) string {
		if l, ok := strings.CutPrefix(name, "u_origin_"); ok {
			return l
		}
		return strings.TrimSuffix(strings.TrimPrefix(name, "u_origin["), "]")
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(count[level(b)], count[level(a)]) })
	names = names[:min(top, len(names))]
	d, err := stanplot.FromFiles(files, names...)
	if err != nil {
		return nil, "", err
	}
	med := make(map[string]float64, len(names))
	for j, name := range d.Names {
		var all []float64
		for _, ch := range d.Chains {
			all = append(all, ch[j]...)
		}
		slices.Sort(all)
		med[name] = all[len(all)/2]
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(med[b], med[a]) })
	if d, err = d.Select(names...); err != nil {
		return nil, "", err
	}
	for j, name := range d.Names {
		d.Names[j] = fmt.Sprintf("%s (%dk flights)", level(name), (count[level(name)]+500)/1000)
	}
	title := fmt.Sprintf("Origin airports: log-odds of a delay > 15 min (%d busiest of %d)", len(names), total)
	return d, title, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"slices"
	"testing"

	"github.com/exactmh/exactmh/stancsv"
)

// TestAirports checks -plot's selection: the busiest airports with a
// column (either naming), sorted by posterior median, named with their
// flights; and the refusal of files without airport effects.
func TestAirports(t *testing.T) {
	// Four airports; draws of airport k are k + (−1, 0, 1).
	for _, cols := range [][]string{
		{"lp__", "u_origin[AAA]", "u_origin[BBB]", "u_origin[CCC]", "u_origin[DDD]", "log_tau_origin"},
		{"lp__", "u_origin_AAA", "u_origin_BBB", "u_origin_CCC", "u_origin_DDD", "log_tau_origin"},
	} {
		f := &stancsv.File{Columns: cols}
		for _, e := range []float64{-1, 0, 1} {
			f.Draws = append(f.Draws, []float64{0, 1 + e, 2 + e, 3 + e, 4 + e, 0})
		}
		count := map[string]int{"AAA": 3000, "BBB": 1000, "CCC": 5000, "DDD": 10}
		d, title, err := airports([]*stancsv.File{f, f}, count, 3)
		if err != nil {
			t.Fatal(err)
		}
		// The 3 busiest: CCC, AAA, BBB; by median: CCC (3), BBB (2), AAA (1).
		want := []string{"CCC (5k flights)", "BBB (1k flights)", "AAA (3k flights)"}
		if !slices.Equal(d.Names, want) || len(d.Chains) != 2 {
			t.Errorf("%v: rows %q in %d chains, want %q in 2", cols[1], d.Names, len(d.Chains), want)
		}
		if title == "" || !slices.Equal(d.Chains[0][0], []float64{2, 3, 4}) {
			t.Errorf("title %q, CCC's draws %v", title, d.Chains[0][0])
		}
	}
	_, _, err := airports([]*stancsv.File{{Columns: []string{"lp__", "beta"}, Draws: [][]float64{{0, 1}}}}, nil, 3)
	if err == nil {
		t.Error("files without airport effects: no error")
	}
}

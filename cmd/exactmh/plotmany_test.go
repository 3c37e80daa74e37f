// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotAndSummaryManyLevels samples a model with a factor of over 100
// levels (origin:destination) and checks that exactmh plot, without
// --vars, draws the other parameters in its panels and the levels in a
// caterpillar plot; that --vars and summary --vars take the files'
// spelling and sample's table's; that an unknown name's error is short;
// that a symlinked output is refused; and that --sig-figs 0 and repeated
// --percentiles are refused.
func TestPlotAndSummaryManyLevels(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "sample", "--data", flights, "--formula", "delay>15 ~ x1 + (1 | origin:destination)", "--kernel", "groupgibbs",
		"--chains", "2", "--warmup", "50", "--draws", "50", "--seed", "4", "--quiet", "--out", "ml")
	files := []string{"ml_1.csv", "ml_2.csv"}
	r := mustRun(t, dir, append([]string{"plot", "--out", "p"}, files...)...)
	want := []string{"p_trace.png", "p_rank.png", "p_intervals.png", "p_caterpillar_u_origin_destination.png"}
	if got := strings.Fields(r.stdout); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("plot printed %v, want %v", got, want)
	}
	for _, name := range want {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, v := range []string{"u_origin:destination[ATL:BOS],x1", "u_origin_destination_ATL_BOS,x1"} {
		mustRun(t, dir, append([]string{"plot", "--vars", v, "--kind", "trace", "--out", "v"}, files...)...)
		s := mustRun(t, dir, append([]string{"summary", "--vars", v}, files...)...)
		if !strings.Contains(s.stdout, "u_origin_destination_ATL_BOS ") || strings.Contains(s.stdout, "u_origin_destination_ATL_ATL") {
			t.Errorf("summary --vars %s:\n%s", v, s.stdout)
		}
	}
	for _, cmd := range []string{"plot", "summary"} {
		r := cli(t, dir, append([]string{cmd, "--vars", "nope"}, files...)...)
		if r.code != exitBadInput || len(r.stderr) > 600 || !strings.Contains(r.stderr, "more") {
			t.Errorf("%s --vars nope: exit %d, %d bytes: %s", cmd, r.code, len(r.stderr), r.stderr)
		}
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "s_trace.png")); err != nil {
		t.Fatal(err)
	}
	wantError(t, cli(t, dir, append([]string{"plot", "--kind", "trace", "--out", "s"}, files...)...), exitBadInput, "symbolic link")
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("plot wrote through the symbolic link: the target holds %d bytes", len(b))
	}
	wantError(t, cli(t, dir, append([]string{"summary", "--sig-figs", "0"}, files...)...), exitBadInput, "--sig-figs 0")
	wantError(t, cli(t, dir, append([]string{"summary", "--percentiles", "50,50"}, files...)...), exitBadInput, "twice")
}

// TestSummaryManyColumns runs summary over two files of 200,000 parameter
// columns, and plot --vars picking two of them, through the command (issue
// 44 item 10: summary took 10 CPU-s at 80,000 columns and did not finish
// at 200,000, a name searched among all columns for each column; the
// command's look-ups are maps, stanplot's Select too), and plot without
// --vars over all of them (bounded pictures). It relies on the
// test's timeout to fail, as stancsv's TestManyColumns does for the
// library's Summarize. Not -short: about 10 CPU-s.
func TestSummaryManyColumns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 200,000 columns")
	}
	const p, n = 200_000, 4
	dir := t.TempDir()
	var files []string
	for f := range 2 {
		var b strings.Builder
		b.WriteString("lp__")
		for j := range p {
			fmt.Fprintf(&b, ",x%d", j)
		}
		b.WriteByte('\n')
		for k := range n {
			fmt.Fprintf(&b, "%d", -k)
			for j := range p {
				fmt.Fprintf(&b, ",%d", (j*7+k*3+f)%5)
			}
			b.WriteByte('\n')
		}
		name := fmt.Sprintf("w_%d.csv", f+1)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	r := mustRun(t, dir, append([]string{"summary", "--format", "csv"}, files...)...)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	last := fmt.Sprintf("x%d,", p-1)
	if len(lines) < p+1 || !strings.HasPrefix(lines[len(lines)-1], last) {
		t.Errorf("summary of %d columns: %d lines, the last %.60q", p, len(lines), lines[len(lines)-1])
	}
	r = mustRun(t, dir, append([]string{"plot", "--vars", fmt.Sprintf("x0,x%d", p-1), "--kind", "trace", "--out", "w"}, files...)...)
	if st, err := os.Stat(filepath.Join(dir, "w_trace.png")); err != nil || st.Size() == 0 {
		t.Errorf("plot --vars over %d columns: %v (%s)", p, err, r.stdout)
	}
	// Without --vars: the first 64 in the panels, the first 1000 in the
	// interval plot (a row each for all of them took over 24 GB).
	r = mustRun(t, dir, append([]string{"plot", "--out", "all"}, files...)...)
	for _, k := range []string{"trace", "rank", "intervals"} {
		if st, err := os.Stat(filepath.Join(dir, "all_"+k+".png")); err != nil || st.Size() == 0 {
			t.Errorf("plot over %d columns: %s: %v", p, k, err)
		}
	}
	if !strings.Contains(r.stderr, "the interval plot the first 1000") {
		t.Errorf("plot over %d columns does not say what it drew: %q", p, r.stderr)
	}
}

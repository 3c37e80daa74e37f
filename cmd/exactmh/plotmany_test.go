// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
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

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exactmh plot draws the trace, rank and interval plots of our files and
// of rstan's and CmdStan's, as PNG or SVG, and refuses what it cannot do
// with exit code 2.
func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--kernel", "tunamh-cv-cn", "--chains", "2", "--out", "run")...)
	r := mustRun(t, dir, "plot", "--out", "ours", "run_1.csv", "run_2.csv")
	want := []string{"ours_trace.png", "ours_rank.png", "ours_intervals.png"}
	if got := strings.Fields(r.stdout); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("plot printed %v, want %v", got, want)
	}
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	rstan := []string{"../../stancsv/testdata/logreg_rstan_1.csv", "../../stancsv/testdata/logreg_rstan_2.csv"}
	for i, f := range rstan {
		rstan[i], _ = filepath.Abs(f)
	}
	cmdstan, _ := filepath.Abs("../../stancsv/testdata/bernoulli_cmdstan.csv")
	mustRun(t, dir, append([]string{"plot", "--format", "svg", "--kind", "rank", "--out", "rstan"}, rstan...)...)
	// A panel is labelled as rstan shows the column theta.2.
	if b, err := os.ReadFile(filepath.Join(dir, "rstan_rank.svg")); err != nil || !bytes.Contains(b, []byte("theta[2]")) || bytes.Contains(b, []byte("theta.2")) {
		t.Errorf("rstan's rank plot: %v, or no panel theta[2]", err)
	}
	mustRun(t, dir, "plot", "--vars", "theta,lp__", "--kind", "trace", "--out", "cmdstan", cmdstan)
	if _, err := os.Stat(filepath.Join(dir, "cmdstan_trace.png")); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]string{
		{"--kind", "pie", "run_1.csv"}, {"--format", "gif", "run_1.csv"}, {"--vars", "nope", "run_1.csv"},
		{"--out", "nodir/x", "run_1.csv"}, {"missing.csv"}, {},
	} {
		if r := cli(t, dir, append([]string{"plot"}, bad...)...); r.code != exitBadInput || !strings.HasPrefix(r.stderr, "exactmh: ") {
			t.Errorf("plot %v: exit %d, stderr %q; want %d and a message", bad, r.code, r.stderr, exitBadInput)
		}
	}
}

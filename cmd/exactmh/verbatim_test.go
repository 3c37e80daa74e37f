// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryVerbatimNames: a level named "Zürich" is written to the Stan
// CSV header in a Stan-safe spelling, with the run's name kept in the
// files' parameter_names comments (issue 44 item 11); summary prints the
// CSV's spelling by default (one spelling in summary, CSV and plot) and
// the run's with --verbatim-names.
func TestSummaryVerbatimNames(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("y,x,g\n")
	rng := rand.New(rand.NewPCG(3, 4))
	levels := []string{"Zürich", "Genève", "Bern"}
	for i := range 300 {
		y := 0
		if rng.Float64() < 0.4 {
			y = 1
		}
		fmt.Fprintf(&b, "%d,%.4f,%s\n", y, rng.NormFloat64(), levels[i%3])
	}
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "sample", "--data", "d.csv", "--response", "y", "--family", "logistic", "--terms", "x,(1|g)",
		"--kernel", "groupgibbs", "--chains", "2", "--warmup", "50", "--draws", "100", "--seed", "2", "--quiet", "--out", "v")
	files := []string{"v_1.csv", "v_2.csv"}
	safe := mustRun(t, dir, append([]string{"summary"}, files...)...)
	if strings.Contains(safe.stdout, "Zürich") || !strings.Contains(safe.stdout, "u_g_Z") {
		t.Errorf("summary without --verbatim-names: want the CSV's spelling only:\n%s", safe.stdout)
	}
	verb := mustRun(t, dir, append([]string{"summary", "--verbatim-names"}, files...)...)
	for _, l := range levels {
		if !strings.Contains(verb.stdout, "u_g["+l+"]") {
			t.Errorf("summary --verbatim-names: no row u_g[%s]:\n%s", l, verb.stdout)
		}
	}
}

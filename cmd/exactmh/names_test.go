// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/stancsv"
	"github.com/exactmh/exactmh/stanplot"
)

// tableNames returns the variables of a summary table in text (the first
// field of each row after the header line), in order.
func tableNames(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		switch {
		case !in:
			in = len(f) > 2 && f[0] == "mean" && f[len(f)-1] == "rhat"
		case len(f) > 1 && strings.HasPrefix(l, "  "):
			out = append(out, f[0])
		default:
			return out
		}
	}
	if !in {
		t.Fatalf("no summary table in\n%s", text)
	}
	return out
}

// TestSummaryNamesAsR checks issue 42's one spelling: on a multilevel
// ordinal run (named group effects u_g_gL, cutpoints the Stan array
// Intercept.1 … Intercept.3 in the files), sample's table, summary's
// table, CSV and JSON, the warnings and the plots' panels name every
// parameter as rstan shows it after read_stan_csv — each file column
// through rstanName (R's reading, written for TestRInterop, which checks
// it against R itself), so Intercept[1] and u_g_g0 — without running R.
// summary --vars and plot --vars take every spelling: the shown one, the
// files' column and the run's own name (u_g[g1]).
func TestSummaryNamesAsR(t *testing.T) {
	dir := t.TempDir()
	data := writeMixedCSV(t, dir, 300, 6)
	s := mustRun(t, dir, "sample", "--data", data, "--family", "ordinal", "--formula", "r ~ x + (1 | g)",
		"--kernel", "nuts", "--chains", "2", "--warmup", "100", "--draws", "100", "--seed", "3", "--out", "ord")
	files := []string{filepath.Join(dir, "ord_1.csv"), filepath.Join(dir, "ord_2.csv")}
	sf := []*stancsv.File{readCSV(t, files[0]), readCSV(t, files[1])}
	var want []string // as R shows the files' parameters
	for _, p := range sf[0].ParamNames() {
		_, flat := rstanName(p)
		want = append(want, flat)
	}
	for _, n := range []string{"Intercept[1]", "Intercept[3]", "u_g_g0", "u_g_g5", "sd_g__Intercept"} {
		if !slices.Contains(want, n) {
			t.Fatalf("R would show %q, not %q: the files' columns changed (%q)", want, n, sf[0].ParamNames())
		}
	}
	withLP := append([]string{"lp__"}, want...)
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s names %q, want R's %q", what, got, want)
		}
	}
	check("sample's table", tableNames(t, s.stdout), want)
	sum := mustRun(t, dir, append([]string{"summary"}, files...)...)
	check("summary's table", tableNames(t, sum.stdout), withLP)
	c := mustRun(t, dir, append([]string{"summary", "--format", "csv"}, files...)...)
	recs, err := csv.NewReader(strings.NewReader(c.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[1:] {
		got = append(got, r[0])
	}
	check("summary --format csv", got, withLP)
	js, _ := summaryJSON(t, dir, files...)
	got = got[:0]
	for _, v := range js.Variables {
		got = append(got, v.Variable)
	}
	check("summary --format json", got, withLP)

	// The warnings name a variable as the rows do (100 draws per chain:
	// the ESS warnings name one).
	n := 0
	for _, text := range []string{s.stdout, sum.stdout} {
		for _, v := range warnedNames(text) {
			n++
			if !slices.Contains(withLP, v) {
				t.Errorf("a warning names %q, not one of R's names %q:\n%s", v, withLP, text)
			}
		}
	}
	if n == 0 {
		t.Errorf("no warning names a variable: the check above checked nothing\n%s", sum.stdout)
	}

	// --vars: each spelling of a variable picks its row, shown as R shows it.
	v := mustRun(t, dir, append([]string{"summary", "--vars", "Intercept.1,Intercept[2],u_g[g1],u_g_g2"}, files...)...)
	check("summary --vars", tableNames(t, v.stdout), []string{"Intercept[1]", "Intercept[2]", "u_g_g1", "u_g_g2"})
	bad := cli(t, dir, append([]string{"summary", "--vars", "nope"}, files...)...)
	if bad.code == 0 || !strings.Contains(bad.stderr, `no variable "nope"`) || !strings.Contains(bad.stderr, "u_g_g0") {
		t.Errorf("summary --vars nope: exit %d, stderr %q, want an error listing u_g_g0", bad.code, bad.stderr)
	}
	mustRun(t, dir, append([]string{"plot", "--kind", "intervals", "--out", "p", "--vars", "Intercept.1,Intercept[2],u_g[g1]"}, files...)...)

	// The plots' panels are labelled by shownDraws.
	d, err := stanplot.FromFiles(sf)
	if err != nil {
		t.Fatal(err)
	}
	check("the plots' panels", shownDraws(d).Names, want)
}

// warnedNames returns the variables the "warning: " lines of text name:
// exactmh.ParamWarnings's "(NAME)", "NAME: draws constant" and "tail ESS
// of NAME (".
func warnedNames(text string) []string {
	named := regexp.MustCompile(`\(([^ ()]+)\)|^([^ :]+): draws constant|tail ESS of ([^ ]+) \(`)
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if msg, ok := strings.CutPrefix(l, "warning: "); ok {
			if m := named.FindStringSubmatch(msg); m != nil {
				out = append(out, m[1]+m[2]+m[3])
			}
		}
	}
	return out
}

// TestWarningNames checks that summary's warnings name each variable as
// its row does, R's spelling or --verbatim-names's, on two short files
// written here: a.1 (shown a[1]) whose chains disagree (R-hat), u_g_g0
// (the run's u_g[g0]) whose draws are constant, and 40 draws per chain
// (bulk and tail ESS below 100 per chain). Without report.nameWarnings
// the warnings would say a.1.
func TestWarningNames(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for c := range 2 {
		var b strings.Builder
		b.WriteString("# algorithm = hmc\n# parameter_names\n#   a.1 = a[1]\n#   u_g_g0 = u_g[g0]\nlp__,accept_stat__,a.1,u_g_g0,b\n")
		x := uint64(c + 1)
		for i := range 40 {
			x = x*6364136223846793005 + 1442695040888963407 // a fixed LCG: b's draws
			fmt.Fprintf(&b, "%d,1,%g,1.5,%g\n", -(i % 5), float64(10*c)+float64(i%7)/10, float64(x>>40)/(1<<24))
		}
		path := filepath.Join(dir, fmt.Sprintf("w_%d.csv", c+1))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	for _, tc := range []struct {
		flag           string
		rhat, constant string
		rows           []string
	}{
		{"--verbatim-names=false", "a[1]", "u_g_g0", []string{"lp__", "a[1]", "u_g_g0", "b"}},
		{"--verbatim-names", "a[1]", "u_g[g0]", []string{"lp__", "a[1]", "u_g[g0]", "b"}},
	} {
		r := mustRun(t, dir, append([]string{"summary", tc.flag}, files...)...)
		if got := tableNames(t, r.stdout); !slices.Equal(got, tc.rows) {
			t.Fatalf("summary %s: rows %q, want %q\n%s", tc.flag, got, tc.rows, r.stdout)
		}
		for _, want := range []string{"(" + tc.rhat + ") > 1.01", "bulk ESS down to", "tail ESS down to", "warning: " + tc.constant + ": draws constant"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("summary %s: no %q in\n%s", tc.flag, want, r.stdout)
			}
		}
		got := warnedNames(r.stdout)
		if len(got) < 4 {
			t.Errorf("summary %s: warnings name %q, want R-hat, both ESS and constant draws each name one\n%s", tc.flag, got, r.stdout)
		}
		for _, v := range got {
			if !slices.Contains(tc.rows, v) {
				t.Errorf("summary %s: a warning names %q, not one of the rows %q\n%s", tc.flag, v, tc.rows, r.stdout)
			}
		}
	}
}

// TestResolveVars maps each spelling of --vars onto the files' columns:
// the column, the summary's (stancsv.RName, also where SafeNames would
// not read the brackets back: TRUE_[1], a___b[2]) and the run's own
// name; an unknown name's error lists the columns as the summary shows
// them.
func TestResolveVars(t *testing.T) {
	have := []string{"Intercept.1", "u_g_g0", "TRUE_.1", "a___b.2", "sd_g__Intercept"}
	got, err := resolveVars([]string{"Intercept[1]", "Intercept.1", "u_g[g0]", "TRUE_[1]", "a___b[2]", "sd_g__Intercept"}, have)
	if want := []string{"Intercept.1", "Intercept.1", "u_g_g0", "TRUE_.1", "a___b.2", "sd_g__Intercept"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("resolveVars = %q, %v, want %q", got, err, want)
	}
	_, err = resolveVars([]string{"nope"}, have)
	if err == nil || !strings.Contains(err.Error(), "Intercept[1], u_g_g0, TRUE_[1], a___b[2]") {
		t.Errorf("resolveVars(nope): %v, want an error listing the columns as shown", err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The automatic default says what it does while it chooses (MAP, Laplace
// approximation, each pilot, on stderr) and what it chose and why (on
// stdout, above the table), and the table says which scale the
// coefficients and the prior are on.
func TestSampleExplainsChoice(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, append(sampleArgs("--chains", "2", "--prior", "normal:2.5", "--out", "auto"), "--quiet=false")...)
	for _, want := range []string{"choosing the kernel: finding the MAP and the Laplace approximation", "choosing the kernel: pilot 1 of", "not piloted"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, want := range []string{"exactmh chose ", "highest ESS per 10⁶ counted evaluations", "coefficients on the original scale of each feature",
		"prior: normal:2.5 on the coefficients of the standardised features"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The choice and its reason are said before warmup starts (the
	// first progress line of a chain), in short lines.
	chose := strings.Index(r.stderr, "choosing the kernel: chose ")
	if first := strings.Index(r.stderr, "chain 1 "); chose < 0 || first >= 0 && first < chose {
		t.Errorf("the choice is not said before the chains start (at %d, first chain line at %d):\n%s", chose, first, r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "choosing the kernel") && len(line) > 100 {
			t.Errorf("a choice line of %d bytes: %s", len(line), line)
		}
	}
	// Progress lines name the kernel as the choice does and number the
	// chains from 1, as the files.
	if !strings.Contains(r.stderr, "chain 2 ") || strings.Contains(r.stderr, "chain 0 ") {
		t.Errorf("progress lines do not number chains 1 and 2:\n%s", r.stderr)
	}
}

// A --choice run says in its output and its files which kernel the
// choice file named, and why.
func TestChoiceRunSaysChoice(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--choose-only", "--choice", "choice.json")...)
	r := mustRun(t, dir, append(sampleArgs("--choice", "choice.json", "--chains", "2", "--chain-id", "1", "--out", "split"), "--quiet=false", "--progress", "0")...)
	if !strings.Contains(r.stdout, "as chosen in choice.json: ") {
		t.Errorf("stdout does not say the kernel came from choice.json:\n%s", r.stdout)
	}
	f := readCSV(t, filepath.Join(dir, "split_2.csv"))
	if v, _ := f.ConfigValue("auto"); !strings.Contains(v, "pilots") {
		t.Errorf("the file does not carry the choice's reason: auto = %q", v)
	}
	if id, _ := f.ConfigValue("id"); id != "2" {
		t.Errorf("--chain-id 1 wrote id %s, want 2 (as its file name)", id)
	}
}

type jsonSummary struct {
	Scale     string
	Prior     string
	Variables []struct {
		Variable    string
		Mean        *float64
		Percentiles map[string]*float64
		ESSBulk     *float64 `json:"ess_bulk"`
		ESSTail     *float64 `json:"ess_tail"`
		RHat        *float64 `json:"rhat"`
	}
}

func summaryJSON(t *testing.T, dir string, args ...string) (jsonSummary, map[string]float64) {
	t.Helper()
	r := mustRun(t, dir, append([]string{"summary", "--format", "json", "--sig-figs", "15"}, args...)...)
	var s jsonSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("summary --format json: %v\n%s", err, r.stdout)
	}
	means := map[string]float64{}
	for _, v := range s.Variables {
		if v.Mean != nil {
			means[v.Variable] = *v.Mean
		}
	}
	return s, means
}

// exactmh summary reports exactmh's coefficients on the original scale,
// from the standardisation in the files' model_info: each mean is the
// standardised one mapped as data.Design.Unstandardize maps coefficients
// (the map is linear, so it maps means too); --standardized reports them
// as sampled. --format csv and json, --percentiles and --sig-figs shape
// the output.
func TestSummaryScalesAndFormats(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, sampleArgs("--kernel", "mh", "--chains", "2", "--out", "run")...)
	files := []string{filepath.Join(dir, "run_1.csv"), filepath.Join(dir, "run_2.csv")}
	orig, om := summaryJSON(t, dir, files...)
	std, sm := summaryJSON(t, dir, append([]string{"--standardized"}, files...)...)
	if !strings.Contains(orig.Scale, "original scale") || !strings.Contains(std.Scale, "standardised") || orig.Prior == "" {
		t.Errorf("scale notes %q, %q; prior %q", orig.Scale, std.Scale, orig.Prior)
	}
	f := readCSV(t, files[0])
	params := f.ParamNames()
	nums := func(key string) []float64 {
		var out []float64
		for _, s := range strings.Split(f.Config["model_info."+key], ",") {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("model_info.%s: %v", key, err)
			}
			out = append(out, v)
		}
		return out
	}
	center, scale := nums("design_center"), nums("design_scale")
	if len(center) != len(params) || params[0] != "Intercept" {
		t.Fatalf("%d centers for %d parameters %v", len(center), len(params), params)
	}
	intercept := sm["Intercept"]
	for j, p := range params {
		want := sm[p] / scale[j]
		if j > 0 {
			intercept -= want * center[j]
		}
		if j > 0 && math.Abs(om[p]-want) > 1e-9*math.Abs(want)+1e-12 {
			t.Errorf("%s: original-scale mean %v, want %v / %v = %v", p, om[p], sm[p], scale[j], want)
		}
	}
	if math.Abs(om["Intercept"]-intercept) > 1e-9*math.Abs(intercept) {
		t.Errorf("intercept on the original scale %v, want %v", om["Intercept"], intercept)
	}
	if scale[1] == 1 || om[params[1]] == sm[params[1]] {
		t.Errorf("log(distance) was not standardised (scale %v), the test shows nothing", scale[1])
	}

	r := mustRun(t, dir, append([]string{"summary", "--format", "csv", "--percentiles", "2.5,97.5", "--sig-figs", "3"}, files...)...)
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"variable", "mean", "sd", "mcse", "2.5%", "97.5%", "ess_bulk", "ess_tail", "ess_per_second", "rhat"}; !slices.Equal(recs[0], want) {
		t.Errorf("csv header %v, want %v", recs[0], want)
	}
	if len(recs) != 1+1+len(params) || recs[1][0] != "lp__" {
		t.Errorf("csv has %d rows (first %v), want lp__ and %d parameters", len(recs)-1, recs[1], len(params))
	}
	for _, rec := range recs[1:] {
		for _, v := range rec[1:6] {
			digits := strings.TrimLeft(strings.ReplaceAll(strings.Split(strings.TrimPrefix(v, "-"), "e")[0], ".", ""), "0")
			if len(digits) > 3 {
				t.Errorf("--sig-figs 3: %s has %q", rec[0], v)
			}
		}
	}
	r = mustRun(t, dir, append([]string{"summary", "--percentiles", "10,90"}, files...)...)
	if head := strings.Split(r.stdout, "\n")[3]; !strings.Contains(head, "10%") || !strings.Contains(head, "90%") || strings.Contains(head, "95%") {
		t.Errorf("table with --percentiles 10,90:\n%s", r.stdout)
	}
	for _, bad := range [][]string{{"--format", "xml"}, {"--percentiles", "150"}, {"--sig-figs", "18"}} {
		if r := cli(t, dir, append(append([]string{"summary"}, bad...), files...)...); r.code != exitBadInput {
			t.Errorf("summary %v: exit %d, want %d", bad, r.code, exitBadInput)
		}
	}
}

// "." in --terms is every other column, each as its type suggests.
func TestDotTerm(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "sample", "--data", flights, "--response", "delay>15", "--terms", ".", "--kernel", "mh", "--chains", "1",
		"--warmup", "20", "--draws", "20", "--quiet", "--out", "dot")
	got := readCSV(t, filepath.Join(dir, "dot_1.csv")).ParamNames()
	for _, want := range []string{"Intercept", "date_hour_sin", "date_dow_Tue", "date_month_Dec", "distance", "origin_ATL", "destination_DEN", "x1", "y", "count"} {
		if !slices.Contains(got, want) {
			t.Errorf("--terms . made %v, without %s", got, want)
		}
	}
	if slices.Contains(got, "delay") {
		t.Errorf("--terms . took the response's column delay as a feature: %v", got)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// TestNaturalScaleRows samples a multilevel model and checks the
// natural-scale rows: sd_origin__Intercept and sd_origin__log_distance
// in the Stan CSV equal to exp of the sampled log scales in every draw,
// in sample's table and in summary's; the fixed effects reported on the
// original scale, the header saying so, the intercept named Intercept.
func TestNaturalScaleRows(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "ml")
	r := mustRun(t, dir, "sample", "--data", flights, "--formula",
		"delay>15 ~ log(distance) + (1 + log(distance) || origin)", "--kernel", "nuts", "--chains", "2",
		"--warmup", "100", "--draws", "100", "--seed", "3", "--sig-figs", "17", "--out", prefix)
	f := readCSV(t, prefix+"_1.csv")
	for _, p := range [][2]string{{"sd_origin__Intercept", "log_tau_origin"}, {"sd_origin__log_distance", "log_tau_origin_log_distance"}} {
		sd, err := f.Column(p[0])
		if err != nil {
			t.Fatalf("%v (columns %q)", err, f.Columns)
		}
		lt, err := f.Column(p[1])
		if err != nil {
			t.Fatal(err)
		}
		for i := range sd {
			if math.Abs(sd[i]-math.Exp(lt[i])) > 1e-14*sd[i] {
				t.Fatalf("%s row %d: %v, exp(%s) = %v", p[0], i, sd[i], p[1], math.Exp(lt[i]))
			}
		}
		if !strings.Contains(r.stdout, p[0]+" ") {
			t.Errorf("sample's table has no row %s:\n%s", p[0], r.stdout)
		}
	}
	s := mustRun(t, dir, "summary", prefix+"_1.csv", prefix+"_2.csv")
	for _, out := range []string{r.stdout, s.stdout} {
		for _, want := range []string{"sd_origin__Intercept ", "Intercept ", "coefficients (fixed effects) on the original scale", "random effects as sampled"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		}
		if strings.Contains(out, "(Intercept)") {
			t.Errorf("the intercept is named (Intercept):\n%s", out)
		}
	}
	// The fixed effects on the original scale: summary's and
	// --standardized's log(distance) differ by its sd, the factor the
	// design standardised it with.
	_, std := summaryJSON(t, dir, "--standardized", prefix+"_1.csv", prefix+"_2.csv")
	_, orig := summaryJSON(t, dir, prefix+"_1.csv", prefix+"_2.csv")
	if ratio := std["log_distance"] / orig["log_distance"]; !(ratio > 0.3 && ratio < 3) || math.Abs(ratio-1) < 1e-9 {
		t.Errorf("log_distance: standardised %v, original %v: want them to differ by the feature's sd", std["log_distance"], orig["log_distance"])
	}
	if std["sd_origin__Intercept"] != orig["sd_origin__Intercept"] {
		t.Errorf("sd_origin__Intercept changed by --standardized: %v, %v", std["sd_origin__Intercept"], orig["sd_origin__Intercept"])
	}
}

// TestNoNaNSamplerColumns checks that no kernel writes NaN into a
// sampler column (bayesplot refuses the draws): SMH, TFMH and
// GroupGibbs, whose exact tests give no acceptance probability, write
// whether each draw was accepted.
func TestNoNaNSamplerColumns(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		kernel string
		model  []string
	}{
		{"smh1", []string{"--response", "delay>15", "--terms", "log(distance),x1"}},
		{"tfmh-cv", []string{"--response", "delay>15", "--terms", "log(distance),x1"}},
		{"groupgibbs", []string{"--formula", "delay>15 ~ x1 + (1|origin)"}},
		{"groupsmh", []string{"--formula", "delay>15 ~ x1 + (1|origin)"}},
	} {
		prefix := filepath.Join(dir, c.kernel)
		args := append([]string{"sample", "--data", flights, "--kernel", c.kernel, "--chains", "1", "--warmup", "50",
			"--draws", "50", "--seed", "2", "--quiet", "--out", prefix}, c.model...)
		mustRun(t, dir, args...)
		b, err := os.ReadFile(prefix + "_1.csv")
		if err != nil {
			t.Fatal(err)
		}
		f := readCSV(t, prefix+"_1.csv")
		for j, name := range f.Columns {
			if !strings.HasSuffix(name, "__") {
				continue
			}
			if slices.ContainsFunc(f.Draws, func(row []float64) bool { return math.IsNaN(row[j]) }) {
				t.Errorf("%s: column %s holds NaN", c.kernel, name)
			}
		}
		if strings.Contains(string(b), "nan") {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, "nan") {
					t.Errorf("%s: the file holds nan: %.300s", c.kernel, l)
					break
				}
			}
		}
	}
}

// TestResultReportReusesSummary checks sample's report of a multilevel
// run, which takes every variable's figures from the run's Summary except
// those of the coefficients it puts on the original scale, against the
// figures computed afresh from the report's own draws (SummarizeParam):
// every variable's mean, sd, MCSE, ESS and R-hat are the same numbers. A
// report that took the coefficients' figures from the Summary too would
// give their standardised means.
func TestResultReportReusesSummary(t *testing.T) {
	mf := modelFlags{data: flights, formula: "delay>15 ~ log(distance) + (1 | origin)", family: "logistic", prior: "flat", beta: 1, sigma: 1, nu: 4, tauPrior: ""}
	m, err := mf.build()
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(t.Context(), m.post, exactmh.NUTS{}, &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 100, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	rf := &reportFlags{}
	rf.format, rf.percentiles = "table", "5,50,95"
	rp, err := resultReport(res, m, rf)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary()
	d := resultDraws(res, s)
	sc := &scaling{center: m.design.Center, scale: m.design.Scale, intercept: m.design.Intercept}
	if err := sc.apply(d); err != nil {
		t.Fatal(err)
	}
	if len(sc.scale) < 2 || len(rp.rows) < len(d.names) {
		t.Fatalf("%d coefficients rescaled, %d rows for %d variables", len(sc.scale), len(rp.rows), len(d.names))
	}
	cols := stancsv.SafeNames(d.names) // each row named as rstan shows its column
	for j, name := range d.names {
		r, w := rp.rows[j], exactmh.SummarizeParam(name, d.x[j], s.SamplingTime.Seconds())
		if r.Name != stancsv.RName(cols[j]) || r.Mean != w.Mean || r.SD != w.SD || r.MCSE != w.MCSE || r.ESSBulk != w.ESSBulk || r.ESSTail != w.ESSTail || r.RHat != w.RHat {
			t.Errorf("row %d %s: mean %v sd %v ess %v/%v rhat %v; from its draws %s: %v %v %v/%v %v", j, r.Name,
				r.Mean, r.SD, r.ESSBulk, r.ESSTail, r.RHat, name, w.Mean, w.SD, w.ESSBulk, w.ESSTail, w.RHat)
		}
	}
	if math.Abs(rp.rows[1].Mean-s.Params[1].Mean) < 1e-9*math.Abs(s.Params[1].Mean) {
		t.Errorf("log_distance reported at its standardised mean %v: the test cannot tell a rescaled row", s.Params[1].Mean)
	}
}

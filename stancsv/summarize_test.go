// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// Summarize of a run's files (17 digits) gives Result.Summary's numbers
// for every parameter, plus lp__ where the files have it.
func TestSummarizeMatchesResult(t *testing.T) {
	g := boxed(t, 200, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 3, Warmup: 100, Draws: 200, Seed: 5, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	var files []*stancsv.File
	for c := range res.Chains {
		var buf bytes.Buffer
		if err := stancsv.Write(&buf, res, c, &stancsv.Options{SigFigs: 17}); err != nil {
			t.Fatal(err)
		}
		f, err := stancsv.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	s, err := stancsv.Summarize(files)
	if err != nil {
		t.Fatal(err)
	}
	want := res.Summary()
	if s.Chains != 3 || s.Draws != 200 || s.Kernel != "MH" || !s.Exact || len(s.Params) != res.Dim+1 || s.Params[0].Name != "lp__" {
		t.Fatalf("summary %+v", s)
	}
	for j, p := range s.Params[1:] {
		w := want.Params[j]
		if p.Name != "theta."+string(rune('1'+j)) || p.Mean != w.Mean || p.SD != w.SD || p.Q5 != w.Q5 || p.Q50 != w.Q50 ||
			p.Q95 != w.Q95 || p.MCSE != w.MCSE || p.ESSBulk != w.ESSBulk || p.ESSTail != w.ESSTail || p.RHat != w.RHat {
			t.Errorf("parameter %d: files %+v, result %+v", j, p, w)
		}
	}
	if s.AcceptRate != want.AcceptRate || s.EvalsPerStep != want.EvalsPerStep {
		t.Errorf("accept %v, evals %v; result %v, %v", s.AcceptRate, s.EvalsPerStep, want.AcceptRate, want.EvalsPerStep)
	}

	// Files of different lengths are cut to the shortest, with a warning.
	files[1].Draws = files[1].Draws[:150]
	s, err = stancsv.Summarize(files)
	if err != nil || s.Draws != 150 || !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, "cut to the shortest") }) {
		t.Errorf("cut: %v, %+v", err, s)
	}

	// Errors: no files, different parameters, a file without draws.
	if _, err := stancsv.Summarize(nil); err == nil {
		t.Error("no files: no error")
	}
	other := *files[0]
	other.Columns = slices.Clone(other.Columns)
	other.Columns[len(other.Columns)-1] = "phi"
	if _, err := stancsv.Summarize([]*stancsv.File{files[0], &other}); err == nil || !strings.Contains(err.Error(), "phi") {
		t.Errorf("different parameters: %v", err)
	}
	empty := *files[0]
	empty.Draws = nil
	if _, err := stancsv.Summarize([]*stancsv.File{files[0], &empty}); err == nil || !strings.Contains(err.Error(), "no draws") {
		t.Errorf("no draws: %v", err)
	}
}

// Summarize reads rstan's and CmdStan's files: their kernels, lp__ and
// parameters.
func TestSummarizeStanFiles(t *testing.T) {
	read := func(path string) *stancsv.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := stancsv.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, err := stancsv.Summarize([]*stancsv.File{read("testdata/logreg_rstan_1.csv"), read("testdata/logreg_rstan_2.csv")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Params {
		names = append(names, p.Name)
	}
	if s.Kernel != "NUTS(diag_e)" || s.Chains != 2 || s.Draws != 50 || !slices.Equal(names, []string{"lp__", "theta.1", "theta.2", "theta.3"}) {
		t.Errorf("rstan: %s, %d × %d, %v", s.Kernel, s.Chains, s.Draws, names)
	}
	if !(s.SamplingTime > 0) || !(s.Params[1].ESSPerSecond > 0) || !(s.AcceptRate > 0 && s.AcceptRate <= 1) {
		t.Errorf("rstan: time %v, ESS/s %v, accept %v", s.SamplingTime, s.Params[1].ESSPerSecond, s.AcceptRate)
	}
	s, err = stancsv.Summarize([]*stancsv.File{read("testdata/bernoulli_cmdstan.csv")})
	if err != nil || s.Kernel != "hmc/nuts" || len(s.Params) != 2 || s.Params[1].Name != "theta" {
		t.Errorf("CmdStan: %v, %+v", err, s)
	}
}

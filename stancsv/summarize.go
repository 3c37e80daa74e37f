// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
)

// Summarize summarises Stan CSV files as the chains of one run — the job
// of CmdStan's stansummary — in the table of [exactmh.Result.Summary]:
// for lp__ (when every file has it, and holds the log posterior rather
// than the zeros of a kernel that does not evaluate it) and each parameter column, mean, sd,
// MCSE, 5%, 50% and 95% quantiles, bulk and tail ESS, ESS per second of
// sampling and R-hat across the files ([exactmh.SummarizeParam]), with
// the same warnings on them ([exactmh.ParamWarnings]). Files
// of different lengths are cut to the shortest, with a warning. The
// files must have the same parameter columns, in any order.
//
// The header line takes the kernel from the files' configuration
// (algorithm, and engine for CmdStan's NUTS; rstan's sampler_t), exactness from exactmh's
// "exact" key (files without it count as exact: Stan's samplers are),
// the acceptance rate, evaluations per step and batch from exactmh's
// diagnostics (the trailer's means, or the accepted__, n_energy__,
// n_grad__ and batch_size__ columns of Options.DiagnosticColumns), the
// acceptance rate else from accept_stat__ (NaN or 0 where absent), and the sampling time from the
// timing trailers (ESS per second is NaN if a file has none). Warnings
// the reader recorded in File.Warnings are passed on.
func Summarize(files []*File) (*exactmh.Summary, error) {
	if len(files) == 0 {
		return nil, errors.New("stancsv: Summarize: no files")
	}
	params := files[0].ParamNames()
	if len(params) == 0 {
		return nil, fmt.Errorf("stancsv: Summarize: file 1 has no parameter columns (only %v)", files[0].Columns)
	}
	s := &exactmh.Summary{Status: exactmh.Completed, Exact: true, Chains: len(files)}
	n := -1
	lp := true
	var kernels []string
	secs := 0.0
	for i, f := range files {
		if got := f.ParamNames(); !sameSet(got, params) {
			return nil, fmt.Errorf("stancsv: Summarize: file %d has parameters %s, file 1 %s", i+1, strings.Join(got, ","), strings.Join(params, ","))
		}
		if len(f.Draws) == 0 {
			return nil, fmt.Errorf("stancsv: Summarize: file %d has no draws", i+1)
		}
		if n < 0 || len(f.Draws) < n {
			n = len(f.Draws)
		}
		if !slices.Contains(f.Columns, "lp__") {
			lp = false
		}
		if v, ok := f.Config["output.lp__"]; ok && v != lpExact {
			lp = false // the zeros of a kernel that does not evaluate it
		}
		k, _ := f.ConfigValue("algorithm")
		if e, ok := f.ConfigValue("engine"); ok {
			k += "/" + e
		}
		if k == "" {
			k, _ = f.ConfigValue("sampler_t") // rstan
		}
		if k == "" {
			k = "unknown"
		}
		if !slices.Contains(kernels, k) {
			kernels = append(kernels, k)
		}
		if v, ok := f.ConfigValue("exact"); ok && v == "0" {
			s.Exact = false
		}
		secs += f.SamplingSeconds
		for _, w := range f.Warnings {
			s.Warnings = append(s.Warnings, fmt.Sprintf("file %d: %s", i+1, w))
		}
	}
	s.Kernel = strings.Join(kernels, ", ")
	s.Draws = n
	for i, f := range files {
		if len(f.Draws) > n {
			s.Warnings = append(s.Warnings, fmt.Sprintf("file %d has %d draws, cut to the shortest file's %d", i+1, len(f.Draws), n))
		}
	}
	if !math.IsNaN(secs) {
		s.SamplingTime = time.Duration(secs * float64(time.Second))
	}
	// Each file's columns by name, looked up once per parameter: a
	// linear search per parameter made 200,000 columns take minutes.
	index := make([]map[string]int, len(files))
	for i, f := range files {
		index[i] = make(map[string]int, len(f.Columns))
		for j, c := range f.Columns {
			index[i][c] = j
		}
	}
	column := func(name string) [][]float64 {
		x := make([][]float64, len(files))
		for i, f := range files {
			j, ok := index[i][name]
			if !ok {
				return nil
			}
			x[i] = make([]float64, n)
			for k := range n {
				x[i][k] = f.Draws[k][j]
			}
		}
		return x
	}
	mean := func(name string) float64 {
		x := column(name)
		if x == nil {
			return math.NaN()
		}
		var sum float64
		for _, c := range x {
			for _, v := range c {
				sum += v
			}
		}
		return sum / float64(len(x)*n)
	}
	// A diagnostic's mean: from its column, or else from the trailers'
	// means (each file's weighted by its draws).
	diag := func(name string) float64 {
		if m := mean(name + "__"); !math.IsNaN(m) {
			return m
		}
		var sum, rows float64
		for _, f := range files {
			v, ok := f.Diagnostics[name]
			if !ok {
				return math.NaN()
			}
			sum += v * float64(len(f.Draws))
			rows += float64(len(f.Draws))
		}
		return sum / rows
	}
	s.AcceptRate = diag("accepted")
	if math.IsNaN(s.AcceptRate) {
		s.AcceptRate = mean("accept_stat__")
	}
	s.EvalsPerStep = diag("n_energy")
	s.GradPerStep = diag("n_grad")
	s.MeanBatch = diag("batch_size")
	names := params
	if lp {
		names = append([]string{"lp__"}, params...)
	}
	// The parameters' figures, independent of each other, on up to
	// GOMAXPROCS goroutines (10⁵ parameters take seconds each way).
	s.Params = make([]exactmh.ParamSummary, len(names))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(names)/64))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < len(names); j += workers {
				s.Params[j] = exactmh.SummarizeParam(names[j], column(names[j]), secs)
			}
		}()
	}
	wg.Wait()
	s.Warnings = append(s.Warnings, exactmh.ParamWarnings(s.Params, len(files))...)
	return s, nil
}

// sameSet reports whether a and b hold the same names (each once: Read
// refuses repeated names), in linear time.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	for _, x := range a {
		if !in[x] {
			return false
		}
	}
	return true
}

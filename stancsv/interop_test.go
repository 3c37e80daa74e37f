// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/stancsv"
)

// A file cut mid-row — a killed process's stream — is refused whole by
// Read (ErrPartialLine), never read back with a wrong last value; with
// DropPartial its complete rows are recovered, with a warning. At every
// cut point the rows recovered are a prefix of the whole file's.
func TestReadPartialLine(t *testing.T) {
	const file = "a__,b\n0.1,0.25\n0.2,-0.451625\n"
	for _, cut := range []string{"a__,b\n0.1,0.25\n0.2,-0", "a__,b\n0.1,0.25\n0.2,", "a__,b\n0.1,0.25\n0.2"} {
		_, err := stancsv.Read(strings.NewReader(cut))
		if !errors.Is(err, stancsv.ErrPartialLine) || !strings.Contains(err.Error(), "stancsv: Read: line 3") {
			t.Errorf("%q: error %v, want ErrPartialLine at line 3", cut, err)
		}
		f, err := stancsv.ReadOptions{DropPartial: true}.Read(strings.NewReader(cut))
		if err != nil || len(f.Draws) != 1 || f.Draws[0][1] != 0.25 || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "line 3") {
			t.Errorf("%q with DropPartial: %v, %+v", cut, err, f)
		}
	}
	if f, err := stancsv.Read(strings.NewReader(file + "  ")); err != nil || len(f.Draws) != 2 {
		t.Errorf("trailing blanks: %v", err)
	}

	g := boxed(t, 100, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Warmup: 50, Draws: 40, Seed: 3, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, nil); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	whole, err := stancsv.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(raw) {
		cut := raw[:n]
		strict, err := stancsv.Read(bytes.NewReader(cut))
		if complete := n == 0 || raw[n-1] == '\n'; complete != (err == nil || !errors.Is(err, stancsv.ErrPartialLine)) {
			t.Fatalf("cut at %d (line complete: %v): %v", n, complete, err)
		}
		f, derr := stancsv.ReadOptions{DropPartial: true}.Read(bytes.NewReader(cut))
		if err == nil && (derr != nil || len(f.Draws) != len(strict.Draws)) {
			t.Fatalf("cut at %d: DropPartial reads differently: %v", n, derr)
		}
		if derr != nil {
			continue
		}
		if len(f.Draws) > len(whole.Draws) {
			t.Fatalf("cut at %d: %d rows", n, len(f.Draws))
		}
		for i, row := range f.Draws {
			if fmt.Sprint(row) != fmt.Sprint(whole.Draws[i]) {
				t.Fatalf("cut at %d: row %d read as %v, the file has %v", n, i, row, whole.Draws[i])
			}
		}
	}
}

// rstan's flavour of the format — flat "# key=value" configuration,
// save_warmup = 1 warmup rows before the adaptation comment — from a real
// pair of files written by rstan 2.21 (testdata/logreg_rstan_*.csv).
func TestReadRstan(t *testing.T) {
	for c := 1; c <= 2; c++ {
		fh, err := os.Open(fmt.Sprintf("testdata/logreg_rstan_%d.csv", c))
		if err != nil {
			t.Fatal(err)
		}
		f, err := stancsv.Read(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		// 150 warmup iterations and 100 after, thinned by 2.
		if len(f.Warmup) != 75 || len(f.Draws) != 50 || len(f.Columns) != 10 || len(f.Warnings) != 0 {
			t.Fatalf("chain %d: %d warmup rows, %d draws, columns %v, warnings %v", c, len(f.Warmup), len(f.Draws), f.Columns, f.Warnings)
		}
		if got := f.ParamNames(); fmt.Sprint(got) != "[theta.1 theta.2 theta.3]" {
			t.Errorf("parameters %v", got)
		}
		for key, want := range map[string]string{"seed": "99", "chain_id": strconv.Itoa(c), "iter": "250", "warmup": "150", "thin": "2",
			"save_warmup": "1", "sampler_t": "NUTS(diag_e)", "adapt_delta": "0.8", "stan_version_minor": "21"} {
			if got, ok := f.ConfigValue(key); !ok || got != want || f.Config[key] != want {
				t.Errorf("chain %d: config %s = %q, want %q", c, key, got, want)
			}
		}
		step, _ := f.Column("stepsize__")
		for i, s := range step {
			if s != f.StepSize {
				t.Fatalf("chain %d: draw %d has step size %v, the adaptation comment %v", c, i, s, f.StepSize)
			}
		}
		if f.Warmup[0][2] != 0.25 && c == 1 {
			t.Errorf("first warmup row %v", f.Warmup[0])
		}
		if math.IsNaN(f.WarmupSeconds) || math.IsNaN(f.SamplingSeconds) {
			t.Errorf("chain %d: timing %v, %v", c, f.WarmupSeconds, f.SamplingSeconds)
		}
	}
	f, err := stancsv.Read(strings.NewReader("# seed=1\n")) // no header
	if err == nil {
		t.Errorf("no header: %+v", f)
	}
}

// Without an adaptation comment (adaptation off), save_warmup's rows are
// split by count: ⌈warmup/thin⌉ warmup rows.
func TestReadWarmupByCount(t *testing.T) {
	const file = "# method = sample\n#   sample\n#     num_warmup = 3\n#     save_warmup = true\n#     thin = 2\nlp__,x\n1,1\n2,2\n3,3\n4,4\n5,5\n"
	f, err := stancsv.Read(strings.NewReader(file))
	if err != nil || len(f.Warmup) != 2 || len(f.Draws) != 3 || f.Draws[0][0] != 3 {
		t.Fatalf("%v: warmup %v, draws %v", err, f.Warmup, f.Draws)
	}
}

// cmdStanPyMeta checks a file as cmdstanpy's from_csv and
// check_sampler_csv (cmdstanpy 1.2) do, and returns the flat configuration
// they read: comment lines before the header split once on '=' into flat
// keys; the keys model, method = sample, num_samples, num_warmup, thin,
// save_warmup, metric and max_depth; columns treedepth__ and divergent__
// with integer values; "# Adaptation terminated" and "# Step size = x"
// right after the header (no warmup rows); ⌈num_samples/thin⌉ rows of the
// header's width.
func cmdStanPyMeta(t *testing.T, file string) map[string]string {
	t.Helper()
	lines := strings.Split(file, "\n")
	cfg := map[string]string{}
	i := 0
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		kv := strings.Split(strings.TrimLeft(strings.TrimSpace(strings.ReplaceAll(lines[i], "(Default)", "")), " #\t"), "=")
		if len(kv) == 2 {
			cfg[strings.TrimSpace(kv[0])] = strings.TrimSpace(kv[1])
		}
	}
	for _, key := range []string{"model", "method", "num_samples", "num_warmup", "thin", "save_warmup", "metric", "max_depth"} {
		if _, ok := cfg[key]; !ok {
			t.Fatalf("cmdstanpy needs the key %s; the configuration has %v", key, cfg)
		}
	}
	if cfg["method"] != "sample" || cfg["metric"] != "unit_e" {
		t.Fatalf("method %q, metric %q", cfg["method"], cfg["metric"])
	}
	cols := strings.Split(lines[i], ",")
	idx := map[string]int{}
	for j, c := range cols {
		idx[c] = j
	}
	for _, c := range []string{"treedepth__", "divergent__"} {
		if _, ok := idx[c]; !ok {
			t.Fatalf("cmdstanpy needs the column %s; the header has %v", c, cols)
		}
	}
	if lines[i+1] != "# Adaptation terminated" {
		t.Fatalf("line after the header: %q", lines[i+1])
	}
	label, step, _ := strings.Cut(lines[i+2], "=")
	if _, err := strconv.ParseFloat(strings.TrimSpace(step), 64); strings.Count(lines[i+2], "=") != 1 || !strings.HasPrefix(label, "# Step size") || err != nil {
		t.Fatalf("step size line %q", lines[i+2]) // Python's float also reads nan and inf, as ParseFloat does
	}
	rows := 0
	for _, l := range lines[i+3:] {
		if l == "" || strings.HasPrefix(l, "#") {
			break
		}
		rows++
		v := strings.Split(l, ",")
		if len(v) != len(cols) {
			t.Fatalf("row %q: %d values, %d columns", l, len(v), len(cols))
		}
		for _, c := range []string{"treedepth__", "divergent__"} {
			if _, err := strconv.Atoi(v[idx[c]]); err != nil {
				t.Fatalf("%s = %q is not an integer", c, v[idx[c]])
			}
		}
	}
	ns, _ := strconv.Atoi(cfg["num_samples"])
	thin, _ := strconv.Atoi(cfg["thin"])
	if want := (ns + thin - 1) / thin; rows != want {
		t.Fatalf("%d rows; cmdstanpy expects ⌈num_samples/thin⌉ = ⌈%d/%d⌉ = %d", rows, ns, thin, want)
	}
	return cfg
}

// The written files satisfy rstan's and cmdstanpy's readers with thinning:
// num_samples is CmdStan's — sampling iterations before thinning — so that
// rstan's 1 + (iter − warmup − 1) %/% thin (iter = num_samples +
// num_warmup) and cmdstanpy's ⌈num_samples/thin⌉ are the rows written.
func TestWriteThinnedInterop(t *testing.T) {
	g := boxed(t, 100, 1)
	for _, thin := range []int{1, 3} {
		set := exactmh.Settings{Chains: 1, Warmup: 40, Draws: 25, Thin: thin, Seed: 3, Init: g.Mean}
		var streamed bytes.Buffer
		set.Recorder = &stancsv.Recorder{Open: func(int) (io.Writer, error) { return &streamed, nil }}
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{}, &set)
		if err != nil {
			t.Fatal(err)
		}
		var written bytes.Buffer
		if err := stancsv.Write(&written, res, 0, nil); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{"Write": written.String(), "Recorder": streamed.String()} {
			cfg := cmdStanPyMeta(t, text)
			f, err := stancsv.Read(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			ns, _ := strconv.Atoi(cfg["num_samples"])
			nw, _ := strconv.Atoi(cfg["num_warmup"])
			iter := ns + nw
			if nKept0 := 1 + (iter-nw-1)/thin; nKept0 != len(f.Draws) || ns != 25*thin || nw != 40 {
				t.Errorf("%s, thin %d: num_samples %d, num_warmup %d: rstan expects %d draws, the file has %d", name, thin, ns, nw, nKept0, len(f.Draws))
			}
		}
	}
}

// Summary and the CSV name the parameters alike, 1-based as Stan does:
// Summary's theta[j] is the CSV's column theta.j (CmdStan's flattening,
// which stansummary prints as theta[j]).
func TestParamNamesAgree(t *testing.T) {
	g := boxed(t, 100, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 2, Warmup: 50, Draws: 50, Seed: 3, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	f := writeRead(t, res)
	s := res.Summary()
	cols := f.ParamNames()
	for j, p := range s.Params {
		if want := fmt.Sprintf("theta[%d]", j+1); p.Name != want || strings.NewReplacer("[", ".", "]", "").Replace(p.Name) != cols[j] {
			t.Errorf("parameter %d: Summary %q, CSV %q", j, p.Name, cols[j])
		}
	}
}

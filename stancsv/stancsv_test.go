// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/stancsv"
	"gonum.org/v1/gonum/mat"
)

// boxed is the root package tests' boxed Gaussian-mean posterior: n data,
// mean (1, −1), box-bounded.
func boxed(t testing.TB, n int, beta float64) *mcmctest.Gaussian {
	t.Helper()
	sigma := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2})
	g, err := mcmctest.BoxedGaussian(n, []float64{1, -1}, sigma, beta, 6, 23)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// sameDraws fails unless a and b have the same draws and final step scales.
func sameDraws(t *testing.T, name string, a, b *exactmh.Result) {
	t.Helper()
	for c := range a.Chains {
		if a.Chains[c].Len() != b.Chains[c].Len() || !slices.Equal(a.Chains[c].Draws, b.Chains[c].Draws) {
			t.Fatalf("%s chain %d: %d draws vs %d, or different values", name, c, a.Chains[c].Len(), b.Chains[c].Len())
		}
		if a.Chains[c].Scale != b.Chains[c].Scale {
			t.Fatalf("%s chain %d: final scale %v vs %v", name, c, a.Chains[c].Scale, b.Chains[c].Scale)
		}
	}
}

// Write → read gives the draws back at the printed precision, every
// sampler column, and the configuration.
func TestRoundTrip(t *testing.T) {
	g := boxed(t, 300, 1)
	k := exactmh.TunaMH{Chi: 1e-3}
	res, err := exactmh.Sample(context.Background(), g.Posterior, k, &exactmh.Settings{Chains: 2, Warmup: 200, Draws: 300, Seed: 9, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []int{6, 17} {
		var buf bytes.Buffer
		if err := stancsv.Write(&buf, res, 1, &stancsv.Options{SigFigs: sig, Names: []string{"mu.1", "mu.2"}, DiagnosticColumns: true}); err != nil {
			t.Fatal(err)
		}
		f, err := stancsv.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Draws) != 300 {
			t.Fatalf("read %d draws, want 300", len(f.Draws))
		}
		if got := f.ParamNames(); len(got) != 2 || got[0] != "mu.1" {
			t.Errorf("parameters %v", got)
		}
		if lp, err := f.Column("lp__"); err != nil || slices.ContainsFunc(lp, func(v float64) bool { return v != 0 }) || f.Config["output.lp__"] == "log_posterior" {
			t.Errorf("TunaMH does not know lp__: want a column of zeros, marked so in output.lp__ (%q); %v", f.Config["output.lp__"], err)
		}
		for j, name := range []string{"mu.1", "mu.2"} {
			col, err := f.Column(name)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range col {
				want := res.Draw(1, i)[j]
				printed, _ := strconv.ParseFloat(strconv.FormatFloat(want, 'g', sig, 64), 64)
				if v != printed {
					t.Fatalf("sig %d: draw %d %s = %v, want %v", sig, i, name, v, printed)
				}
			}
		}
		batch, err := f.Column("batch_size__")
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for i, b := range batch {
			sum += b
			if int(b) != res.Chains[1].Infos[i].Batch {
				t.Fatalf("batch_size__ row %d = %v, want %d", i, b, res.Chains[1].Infos[i].Batch)
			}
		}
		if m := f.Diagnostics["batch_size"]; math.Abs(m-sum/float64(len(batch))) > 1e-5*m {
			t.Errorf("trailer's mean batch %v, columns' %v", m, sum/float64(len(batch)))
		}
		for key, want := range map[string]string{
			"random.seed": "9", "id": "2", "method.sample.algorithm": "TunaMH", "method.sample.num_samples": "300",
			"method.sample.algorithm.TunaMH.Chi": "0.001", "data.N": "300", "exactmh_version": exactmh.Version,
		} {
			if got := f.Config[key]; got != want {
				t.Errorf("config %s = %q, want %q", key, got, want)
			}
		}
		if f.StepSize != mustParse(strconv.FormatFloat(res.Chains[1].Scale, 'g', sig, 64)) || math.IsNaN(f.SamplingSeconds) {
			t.Errorf("step size %v (want %v), sampling seconds %v", f.StepSize, res.Chains[1].Scale, f.SamplingSeconds)
		}
	}
}

// writeRead writes chain 0 of res as a Stan CSV file and reads it back.
func writeRead(t *testing.T, res *exactmh.Result) *stancsv.File {
	t.Helper()
	var buf bytes.Buffer
	if err := stancsv.Write(&buf, res, 0, nil); err != nil {
		t.Fatal(err)
	}
	f, err := stancsv.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustParse(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// A file in CmdStan's own layout reads: nested configuration, sampler
// columns, adaptation and timing.
func TestReadCmdStan(t *testing.T) {
	fh, err := os.Open("testdata/bernoulli_cmdstan.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := stancsv.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Draws) != 20 || len(f.Columns) != 8 || f.Columns[0] != "lp__" || f.ParamNames()[0] != "theta" {
		t.Fatalf("%d draws, columns %v", len(f.Draws), f.Columns)
	}
	for key, want := range map[string]string{
		"model": "bernoulli_model", "random.seed": "1234", "method": "sample",
		"method.sample.num_samples": "20", "method.sample.adapt.delta": "0.8",
		"method.sample.algorithm.hmc.engine.nuts.max_depth": "10", "output.sig_figs": "-1",
	} {
		if got := f.Config[key]; got != want {
			t.Errorf("config %s = %q, want %q", key, got, want)
		}
	}
	if f.StepSize != 0.932037 || f.WarmupSeconds != 0.005 || f.SamplingSeconds != 0.001 {
		t.Errorf("step size %v, warm-up %v s, sampling %v s", f.StepSize, f.WarmupSeconds, f.SamplingSeconds)
	}
	theta, _ := f.Column("theta")
	for i, v := range theta {
		if !(v > 0 && v < 1) {
			t.Errorf("theta[%d] = %v", i, v)
		}
	}
}

// ESS and R-hat from the files equal those of the Result (17 digits).
func TestDiagnosticsMatch(t *testing.T) {
	g := boxed(t, 200, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 4, Draws: 400, Seed: 2, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	x := make([][]float64, 4)
	for c := range 4 {
		var buf bytes.Buffer
		if err := stancsv.Write(&buf, res, c, &stancsv.Options{SigFigs: 17}); err != nil {
			t.Fatal(err)
		}
		f, err := stancsv.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if x[c], err = f.Column("theta.1"); err != nil {
			t.Fatal(err)
		}
		if lp, err := f.Column("lp__"); err != nil || len(lp) != 400 || lp[0] != res.Chains[c].Infos[0].LogDensity {
			t.Errorf("MH's lp__ column: %v", err)
		}
	}
	direct := res.Samples(0)
	if a, b := diagnostics.ESSBulk(x), diagnostics.ESSBulk(direct); a != b {
		t.Errorf("ESS from files %v, from the result %v", a, b)
	}
	if a, b := diagnostics.RHat(x), diagnostics.RHat(direct); a != b {
		t.Errorf("R-hat from files %v, from the result %v", a, b)
	}
}

// The streaming recorder writes the same rows as Write (from the
// same run), each chain to its own file, with the trailer at the end.
func TestRecorder(t *testing.T) {
	g := boxed(t, 200, 1)
	dir := t.TempDir()
	rec := stancsv.NewFiles(filepath.Join(dir, "run"), &stancsv.Options{SigFigs: 9})
	set := exactmh.Settings{Chains: 2, Draws: 150, Warmup: 100, Seed: 5, Init: g.Mean}
	plain, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &set)
	if err != nil {
		t.Fatal(err)
	}
	set.Recorder = rec
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &set)
	if err != nil {
		t.Fatal(err)
	}
	sameDraws(t, "recorded run", plain, res) // recording never changes the draws
	for c := range 2 {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run_%d.csv", c+1)))
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := stancsv.Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := stancsv.Write(&buf, res, c, &stancsv.Options{SigFigs: 9}); err != nil {
			t.Fatal(err)
		}
		whole, _ := stancsv.Read(&buf)
		if len(streamed.Draws) != 150 || fmt.Sprint(streamed.Columns) != fmt.Sprint(whole.Columns) {
			t.Fatalf("chain %d: %d streamed draws, columns %v vs %v", c, len(streamed.Draws), streamed.Columns, whole.Columns)
		}
		for i := range whole.Draws {
			if fmt.Sprint(whole.Draws[i]) != fmt.Sprint(streamed.Draws[i]) {
				t.Fatalf("chain %d row %d: streamed %v, written %v", c, i, streamed.Draws[i], whole.Draws[i])
			}
		}
		if math.IsNaN(streamed.SamplingSeconds) {
			t.Errorf("chain %d: no timing trailer", c)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := stancsv.Read(bytes.NewBufferString("# only comments\n")); err == nil {
		t.Error("no header: no error")
	}
	if _, err := stancsv.Read(bytes.NewBufferString("a,b\n1,2\n3\n")); err == nil {
		t.Error("short row: no error")
	}
	if _, err := stancsv.Read(bytes.NewBufferString("a,b\n1,x\n")); err == nil {
		t.Error("bad number: no error")
	}
	f, err := stancsv.Read(bytes.NewBufferString("a__,b\nnan,-inf\n"))
	if err != nil || !math.IsNaN(f.Draws[0][0]) || !math.IsInf(f.Draws[0][1], -1) {
		t.Errorf("nan/-inf: %v %v", f, err)
	}
	g := boxed(t, 50, 1)
	res, _ := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Draws: 10, Init: g.Mean})
	if err := stancsv.Write(io.Discard, res, 3, nil); err == nil {
		t.Error("missing chain: no error")
	}
	if err := stancsv.Write(io.Discard, res, 0, &stancsv.Options{Names: []string{"a"}}); err == nil {
		t.Error("wrong number of names: no error")
	}
	var named bytes.Buffer
	if err := stancsv.Write(&named, res, 0, &stancsv.Options{Names: []string{"a,b", "c__"}}); err != nil {
		t.Errorf("names the writer makes safe: %v", err)
	} else if f, err := stancsv.Read(&named); err != nil || !slices.Equal(f.ParamNames(), []string{"a_b", "c"}) {
		t.Errorf("names a,b and c__ written as %v (%v), want a_b and c", f.ParamNames(), err)
	}
	if err := stancsv.Write(io.Discard, res, 0, &stancsv.Options{SigFigs: -1}); err == nil || !strings.Contains(err.Error(), "SigFigs = -1") {
		t.Errorf("negative SigFigs: err = %v, want an error naming it", err)
	}
	rec := &stancsv.Recorder{Open: func(int) (io.Writer, error) { return io.Discard, nil }, Options: stancsv.Options{SigFigs: -3}}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{}, &exactmh.Settings{Chains: 1, Draws: 10, Init: g.Mean, Recorder: rec}); err == nil {
		t.Error("Recorder with negative SigFigs: no error")
	}
}

// The recorder decides the lp__ column from the draws: a minibatch kernel,
// which does not know the log posterior, gets zeros, marked so in the
// configuration, and Summarize leaves them out.
func TestRecorderNoLP(t *testing.T) {
	g := boxed(t, 200, 1)
	var buf bytes.Buffer
	rec := &stancsv.Recorder{Open: func(int) (io.Writer, error) { return &buf, nil }}
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{},
		&exactmh.Settings{Chains: 1, Draws: 20, Warmup: 20, Init: g.Mean, Recorder: rec}); err != nil {
		t.Fatal(err)
	}
	f, err := stancsv.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := f.Column("lp__")
	if err != nil || len(f.Draws) != 20 || f.Columns[0] != "lp__" || slices.ContainsFunc(lp, func(v float64) bool { return v != 0 }) {
		t.Errorf("TunaMH stream: columns %v, %d draws, lp__ %v", f.Columns, len(f.Draws), lp)
	}
	if v := f.Config["output.lp__"]; !strings.HasPrefix(v, "0 ") {
		t.Errorf("output.lp__ = %q, want it to say the column is 0", v)
	}
	s, err := stancsv.Summarize([]*stancsv.File{f})
	if err != nil || s.Params[0].Name == "lp__" {
		t.Errorf("Summarize kept TunaMH's zero lp__: %v", err)
	}
}

// NUTS files carry Stan's tree columns, in CmdStan's place after
// stepsize__: treedepth__, n_leapfrog__ (leapfrog steps: gradient
// evaluations over N) and divergent__.
func TestNUTSColumns(t *testing.T) {
	g := boxed(t, 100, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.NUTS{}, &exactmh.Settings{Chains: 1, Warmup: 100, Draws: 50, Seed: 3, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	f := writeRead(t, res)
	want := []string{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "theta.1"}
	if !slices.Equal(f.Columns[:len(want)], want) {
		t.Fatalf("columns %v, want %v first", f.Columns, want)
	}
	depth, _ := f.Column("treedepth__")
	lf, _ := f.Column("n_leapfrog__")
	for i, in := range res.Chains[0].Infos {
		if int(depth[i]) != in.TreeDepth || int(lf[i])*res.N != in.GradEvals {
			t.Fatalf("row %d: treedepth__ %v, n_leapfrog__ %v; Info %+v", i, depth[i], lf[i], in)
		}
	}
}

// TestInverseMetric: a NUTS chain's adapted inverse mass matrix is written
// after the step size in CmdStan's layout — by Write and by the streaming
// Recorder alike — with the header's metric naming its kind, and Read
// returns it; CmdStan's and rstan's files read the same way.
func TestInverseMetric(t *testing.T) {
	g := boxed(t, 100, 1)
	for _, kind := range []exactmh.MetricKind{exactmh.MetricDiag, exactmh.MetricDense, exactmh.MetricUnit} {
		dir := t.TempDir()
		set := exactmh.Settings{Chains: 1, Warmup: 300, Draws: 20, Seed: 3, Init: g.Mean, Metric: kind,
			Recorder: stancsv.NewFiles(filepath.Join(dir, "run"), &stancsv.Options{SigFigs: 17})}
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.NUTS{}, &set)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := stancsv.Write(&buf, res, 0, &stancsv.Options{SigFigs: 17}); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "run_1.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		if m := res.Chains[0].Metric; kind == exactmh.MetricDiag {
			want = [][]float64{m.InvMassDiag()}
		} else if kind == exactmh.MetricDense {
			inv := m.InvMass()
			want = [][]float64{{inv.At(0, 0), inv.At(0, 1)}, {inv.At(1, 0), inv.At(1, 1)}}
			if inv.At(0, 1) == 0 {
				t.Fatalf("dense metric %v has no off-diagonal entry", want)
			}
		}
		for name, b := range map[string][]byte{"Write": buf.Bytes(), "Recorder": raw} {
			f, err := stancsv.Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := f.ConfigValue("metric"); got != string(kind)+"_e" {
				t.Errorf("%s, %s: metric = %q", kind, name, got)
			}
			if fmt.Sprint(f.InvMetric) != fmt.Sprint(want) || len(f.Draws) != 20 {
				t.Errorf("%s, %s: inverse metric %v, want %v (%d draws)", kind, name, f.InvMetric, want, len(f.Draws))
			}
		}
	}
	for file, want := range map[string]string{"testdata/bernoulli_cmdstan.csv": "[[0.530283]]",
		"testdata/logreg_rstan_1.csv": "[[0.0328492 0.0280339 0.0257675]]"} {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := stancsv.Read(fh)
		fh.Close()
		if err != nil || fmt.Sprint(f.InvMetric) != want {
			t.Errorf("%s: inverse metric %v, want %s (%v)", file, f.InvMetric, want, err)
		}
	}
	dense := "lp__,x\n# Adaptation terminated\n# Step size = 0.5\n# Elements of inverse mass matrix:\n# 2, 0.5\n# 0.5, 1\n1,2\n"
	if f, err := stancsv.Read(strings.NewReader(dense)); err != nil || fmt.Sprint(f.InvMetric) != "[[2 0.5] [0.5 1]]" {
		t.Errorf("dense inverse metric %v (%v)", f.InvMetric, err)
	}
}

// A proposal that describes itself (fmt.Stringer) is recorded so in the
// configuration: the Crank–Nicolson proposal with its walk fraction.
func TestProposalConfig(t *testing.T) {
	g := boxed(t, 300, 1)
	cn, err := exactmh.NewCrankNicolson(g.Mean, mat.NewSymDense(2, []float64{0.01, 0, 0, 0.01}))
	if err != nil {
		t.Fatal(err)
	}
	cn.Walk = 0.25
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 1, Warmup: 50, Draws: 50, Seed: 3, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	f := writeRead(t, res)
	if got, want := f.Config["method.sample.algorithm.MH.Proposal"], "CrankNicolson(d=2, walk=0.25)"; got != want {
		t.Errorf("config Proposal = %q, want %q", got, want)
	}
}

// A Crank–Nicolson kernel's stepsize__ and "Step size" are √(2(1 − ρ)),
// ρ = e^{−min(scale, MaxScale)}, at most √2, not the scale itself, which
// warmup drives to 10⁹⁷ and beyond where the posterior is close to the
// proposal's Gaussian; the configuration key stepsize_is says so. Other
// kernels write their scale.
func TestCrankNicolsonStepSize(t *testing.T) {
	g := boxed(t, 300, 1)
	cn, err := exactmh.NewCrankNicolson(g.Mean, mat.NewSymDense(2, []float64{0.01, 0, 0, 0.01}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scale, max float64
	}{{1e97, 0}, {0.3, 0}, {50, 1.5}} {
		c := *cn
		c.MaxScale = tc.max
		res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Proposal: &c, Scale: tc.scale},
			&exactmh.Settings{Chains: 1, Warmup: 10, NoAdapt: true, Draws: 20, Seed: 3, Init: g.Mean})
		if err != nil {
			t.Fatal(err)
		}
		f := writeRead(t, res)
		want := math.Sqrt(2 * (1 - c.Rho(tc.scale)))
		col := slices.Index(f.Columns, "stepsize__")
		if got := f.Draws[0][col]; math.Abs(got-want) > 1e-5*want || got > math.Sqrt2 {
			t.Errorf("scale %g, MaxScale %g: stepsize__ %v, want √(2(1 − ρ)) = %v", tc.scale, tc.max, got, want)
		}
		if !strings.HasPrefix(f.Config["method.sample.algorithm.MH.stepsize_is"], "sqrt(2*(1-rho))") {
			t.Errorf("no stepsize_is configuration key: %v", f.Config)
		}
	}
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Scale: 0.7}, &exactmh.Settings{Chains: 1, Warmup: 10, NoAdapt: true, Draws: 20, Seed: 3, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	f := writeRead(t, res)
	if got := f.Draws[0][slices.Index(f.Columns, "stepsize__")]; got != 0.7 {
		t.Errorf("random-walk MH: stepsize__ %v, want its scale 0.7", got)
	}
}

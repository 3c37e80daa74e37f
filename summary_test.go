package exactmh_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/progress"
)

func TestSummaryOfRun(t *testing.T) {
	g := conjugate(t, 100)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Seed: 5, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary("mu1")
	if len(s.Params) != 2 || s.Params[0].Name != "mu1" || s.Params[1].Name != "theta[2]" {
		t.Fatalf("params %+v", s.Params)
	}
	mean := res.Mean()
	for j, p := range s.Params {
		x := res.Samples(j)
		if p.Mean != mean[j] && math.Abs(p.Mean-mean[j]) > 1e-12 {
			t.Errorf("%s mean %g, Result.Mean %g", p.Name, p.Mean, mean[j])
		}
		if p.ESSBulk != diagnostics.ESSBulk(x) || p.RHat != diagnostics.RHat(x) || p.MCSE != diagnostics.MCSEMean(x) {
			t.Errorf("%s: summary diagnostics differ from the diagnostics functions", p.Name)
		}
		if !(p.Q5 < p.Q50 && p.Q50 < p.Q95) {
			t.Errorf("%s: quantiles %g %g %g out of order", p.Name, p.Q5, p.Q50, p.Q95)
		}
		if math.Abs(p.SD-g.SD()[j]) > 0.1*g.SD()[j] {
			t.Errorf("%s: sd %g, exact %g", p.Name, p.SD, g.SD()[j])
		}
		if want := p.ESSBulk / s.SamplingTime.Seconds(); p.ESSPerSecond != want {
			t.Errorf("%s: ESS/s %g, want %g", p.Name, p.ESSPerSecond, want)
		}
	}
	if s.Draws != 2000 || s.Chains != 4 || s.EvalsPerStep > 100 || s.AcceptRate <= 0 {
		t.Errorf("header figures %+v", s)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("unexpected warnings on a converged run: %v", s.Warnings)
	}
	table := s.String()
	for _, want := range []string{"MH (exact)", "ess_bulk", "rhat", "mu1", "theta[2]"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// Aligned: every row of the table body has the same width.
	lines := strings.Split(strings.TrimSpace(table), "\n")[1:]
	for _, l := range lines[1:] {
		if len(l) != len(lines[0]) {
			t.Errorf("rows not aligned:\n%s", table)
			break
		}
	}
}

// A run whose chains disagree, or are too short, is flagged.
func TestSummaryWarnings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	res := &exactmh.Result{Kernel: "fake", Dim: 2, Status: exactmh.Canceled, Settings: exactmh.Settings{Draws: 500}}
	for c := 0; c < 4; c++ {
		ch := &exactmh.ChainResult{Chain: c, Sampling: exactmh.Totals{Steps: 300, Time: time.Second}}
		for k := 0; k < 300; k++ {
			shift := 0.0
			if c == 3 {
				shift = 3
			}
			ch.Draws = append(ch.Draws, rng.NormFloat64()+shift, 1) // θ[1] constant
			ch.Infos = append(ch.Infos, exactmh.Info{})
		}
		res.Chains = append(res.Chains, ch)
	}
	s := res.Summary()
	all := strings.Join(s.Warnings, "\n")
	for _, want := range []string{"canceled", "R-hat", "bulk ESS", "theta[2]: draws constant"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if !s.Params[1].NotAvailable || !math.IsNaN(s.Params[1].RHat) || s.Params[1].Mean != 1 {
		t.Errorf("constant coordinate summary %+v", s.Params[1])
	}
	if !strings.Contains(s.String(), "NA") {
		t.Errorf("table does not show NA:\n%s", s)
	}
	if !math.IsNaN(s.MaxRHat()) || !math.IsNaN(s.MinESSBulk()) {
		t.Error("MaxRHat/MinESSBulk should be NaN when a coordinate has no diagnostics")
	}
}

func TestProgress(t *testing.T) {
	p := mnistLike(t, 100, 2)
	var buf bytes.Buffer
	set := &exactmh.Settings{Chains: 3, Warmup: 300, Draws: 300, Seed: 4}
	plain, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	set.Recorder = progress.New(&buf, time.Nanosecond)
	res, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, set)
	if err != nil {
		t.Fatal(err)
	}
	for c := range res.Chains {
		if !slices.Equal(res.Chains[c].Draws, plain.Chains[c].Draws) {
			t.Fatalf("chain %d: the progress printer changed the draws", c)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("progress printed %d lines:\n%s", len(lines), buf.String())
	}
	last := lines[len(lines)-1]
	for c := 1; c <= 3; c++ {
		if !strings.Contains(last, fmt.Sprintf("chain %d sampling 300/300 acc", c)) {
			t.Errorf("last line lacks chain %d's final count: %q", c, last)
		}
	}
	if !strings.HasPrefix(last, "MH ") || !strings.HasSuffix(last, "completed") || !strings.Contains(last, "batch 100") {
		t.Errorf("last line %q", last)
	}
	if !strings.Contains(lines[0], "warmup") || !strings.Contains(lines[0], "left") {
		t.Errorf("first line %q", lines[0])
	}
	// Throttled: with a long period only the final line appears.
	buf.Reset()
	set.Recorder = progress.New(&buf, time.Hour)
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{}, set); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("throttled progress printed %d lines:\n%s", n, buf.String())
	}
}

// A minibatch kernel that falls back to MH in most steps is flagged.
func TestSummaryFallbackWarning(t *testing.T) {
	g := boxed(t, 50, 1)
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.TunaMH{Chi: 1, Scale: 1},
		&exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, NoAdapt: true, Draws: 200, Init: g.Mean})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary()
	found := false
	for _, w := range s.Warnings {
		found = found || strings.Contains(w, "fell back to full-batch MH")
	}
	if !found {
		t.Errorf("no fallback warning (%d fallbacks in %d steps): %v", res.Sampling().Fallbacks, res.Sampling().Steps, s.Warnings)
	}
}

// Posterior.Names must fit the dimension and be usable as CSV columns.
func TestPosteriorNamesValidate(t *testing.T) {
	e, err := model.NewLogisticRegression([]float64{1, 2, 3, 4}, []float64{0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "1 names for dimension 2"},
		{[]string{"a", ""}, "Names[1]"},
		{[]string{"a,b", "c"}, "Names[0]"},
		{[]string{"lp__", "c"}, "trailing"},
		{[]string{"x", "x"}, "unique"},
	} {
		p := &exactmh.Posterior{Energy: e, Names: c.names}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("names %q: error %v, want one containing %q", c.names, err, c.want)
		}
	}
	if err := (&exactmh.Posterior{Energy: e, Names: []string{"mu.1", "mu.2"}}).Validate(); err != nil {
		t.Errorf("good names refused: %v", err)
	}
}

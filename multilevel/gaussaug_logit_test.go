// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// logitKit is a logistic multilevel model for the Pólya–Gamma sweep's
// kit: k_i ~ Binomial(n_i, σ(β_0 + β_1·x_i + u_g(i) + v_h(i) (+ o_i))),
// n_i = 1 (Bernoulli, model.LogisticFamily) or, with trials, n_i uniform
// on 1…maxTrials (model.BinomialFamily with the logit link, y_i = k_i/n_i
// and the trials as weights); u_g ~ N(0, τ_u²) over G groups (group 0
// holding about half the rows), v_h ~ N(0, τ_v²) over H levels crossed
// with them, β ~ N(0, 1), τ ~ half-normal(1); offsets o_i ~ N(0, 1)
// when offsets. θ = (β, u, v, log τ_u, log τ_v); with H = 0 the one
// factor u alone, θ = (β, u, log τ_u) (the independence move's grid).
type logitKit struct {
	n, g, h   int
	maxTrials int // 0 or 1: Bernoulli
	offsets   bool
}

func (m logitKit) dim() int {
	if m.h == 0 {
		return 2 + m.g + 1
	}
	return 2 + m.g + m.h + 2
}

func (m logitKit) truth(rng *rand.Rand) []float64 {
	if m.h == 0 {
		th := augKit{n: m.n, g: m.g, h: 1}.truth(rng)
		return append(th[:2+m.g:2+m.g], th[3+m.g])
	}
	return augKit{n: m.n, g: m.g, h: m.h}.truth(rng)
}

func (m logitKit) build(rng *rand.Rand, th []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, m.n), Intercept: true, FixedSD: []float64{1, 1}}
	if m.maxTrials > 1 {
		ml.Family = model.BinomialFamily{Link: model.LogisticFamily{}}
		ml.Weights = make([]float64, m.n)
	}
	x := model.Covariate{Name: "x", Values: make([]float64, m.n)}
	fg := model.Factor{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1)}
	fh := model.Factor{Name: "h", Index: make([]int32, m.n), Tau: model.HalfNormal(1)}
	if m.offsets {
		ml.Offset = make([]float64, m.n)
	}
	for i := range m.n {
		g := i % m.g
		if i >= m.n/2 && rng.IntN(2) == 0 {
			g = 0
		}
		fg.Index[i] = int32(g)
		var v float64
		if m.h > 0 {
			h := rng.IntN(m.h)
			fh.Index[i], v = int32(h), th[2+m.g+h]
		}
		xi := rng.NormFloat64()
		x.Values[i] = xi
		eta := th[0] + th[1]*xi + th[2+g] + v
		if m.offsets {
			ml.Offset[i] = rng.NormFloat64()
			eta += ml.Offset[i]
		}
		p := 1 / (1 + math.Exp(-eta))
		n := 1
		if m.maxTrials > 1 {
			n = 1 + rng.IntN(m.maxTrials)
			ml.Weights[i] = float64(n)
		}
		var k int
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		ml.Y[i] = float64(k) / float64(n)
	}
	ml.Fixed = []model.Covariate{x}
	ml.Factors = []model.Factor{fg, fh}
	if m.h == 0 {
		ml.Factors = ml.Factors[:1]
	}
	return model.NewMultilevel(ml)
}

// Draw implements mcmctest.Model: the problem's mode is the Laplace-EM
// centre.
func (m logitKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	return drawCentred(rng, m.truth, m.build)
}

// TestLogitChosen checks that the automatic default chooses the
// Pólya–Gamma sweep (or, where its counted pilot admits it, the Laplace
// independence move: TestLogitIndepChoice) on a logistic multilevel model (Bernoulli, and
// binomial with trials and offsets) and says so, and the structural
// checks: no allocation per sweep, Info, checkpoint and resume bit for
// bit, any number of workers.
func TestLogitChosen(t *testing.T) {
	for _, kit := range []logitKit{{n: 300, g: 8, h: 3}, {n: 300, g: 8, h: 3, maxTrials: 4, offsets: true}} {
		_, pb, err := kit.Draw(rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		if !multilevel.IsLogit(pb.Posterior) || multilevel.IsProbit(pb.Posterior) {
			t.Fatal("IsLogit false (or IsProbit true) on a logistic multilevel model")
		}
		c, err := exactmh.Choose(context.Background(), pb.Posterior, nil)
		if err != nil {
			t.Fatal(err)
		}
		if gg, ok := c.Kernel.(multilevel.GroupGibbs); !ok || !gg.Augment || !strings.Contains(c.Reason, "Pólya–Gamma") && !(gg.Independence < 0 && strings.Contains(c.Reason, "Laplace independence move")) {
			t.Fatalf("the default chose %s (%s), want GroupGibbs with Augment, Pólya–Gamma or the Laplace independence move", c.Name, c.Reason)
		}
		k := multilevel.GroupGibbs{Center: pb.Mode, Augment: true}
		checkStructural(t, "the Pólya–Gamma sweep", k, pb.Posterior, pb.Mode, 200)
		k.IntegratedScale = 2
		checkStructural(t, "the Pólya–Gamma sweep with integrated scale moves", k, pb.Posterior, pb.Mode, 200)
	}
}

// TestIntegratedScaleBound checks that IntegratedScale above its bound is
// an error that names it, not a sweep that would not end.
func TestIntegratedScaleBound(t *testing.T) {
	_, pb, err := logitKit{n: 60, g: 4, h: 3}.Draw(rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	k := multilevel.GroupGibbs{Center: pb.Mode, Augment: true, IntegratedScale: 1 << 30}
	_, err = exactmh.Sample(context.Background(), pb.Posterior, k, &exactmh.Settings{Chains: 1, Warmup: 1, Draws: 1, Init: pb.Mode})
	if err == nil || !strings.Contains(err.Error(), "IntegratedScale") {
		t.Errorf("IntegratedScale = 2³⁰: err = %v, want an error naming it", err)
	}
}

// singleLogit returns a Bernoulli multilevel model of n rows (success
// rate 0.4) in one factor of g levels.
func singleLogit(n, g int) (*exactmh.Posterior, error) {
	rng := rand.New(rand.NewPCG(9, 10))
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true, FixedSD: []float64{1}}
	f := model.Factor{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}
	for i := range n {
		f.Index[i] = int32(i % g)
		if rng.Float64() < 0.4 {
			ml.Y[i] = 1
		}
	}
	ml.Factors = []model.Factor{f}
	return model.NewMultilevel(ml)
}

// nestedLogit returns a Bernoulli multilevel model of n rows whose second
// factor's levels (children) are nested in its first's (parents) when
// nested, and crossed with them otherwise: c children, c/5 parents.
func nestedLogit(n, c int, nested bool) (*exactmh.Posterior, error) {
	rng := rand.New(rand.NewPCG(7, 8))
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true, FixedSD: []float64{1}}
	fp := model.Factor{Name: "parent", Index: make([]int32, n), Tau: model.HalfNormal(1)}
	fc := model.Factor{Name: "child", Index: make([]int32, n), Tau: model.HalfNormal(1)}
	for i := range n {
		ch := i % c
		fc.Index[i] = int32(ch)
		fp.Index[i] = int32(ch / 5)
		if !nested {
			fp.Index[i] = int32(rng.IntN(c / 5))
		}
		if rng.Float64() < 0.4 {
			ml.Y[i] = 1
		}
	}
	ml.Factors = []model.Factor{fp, fc}
	return model.NewMultilevel(ml)
}

// TestLogitIntegrateRule checks the default's counted rule for the
// integrated scale moves (integrateDefault), by the moves a sweep
// Choice.Reason states: one round for a nesting's parent (400 data, 40
// children in 8 parents), where a round for both factors would cost more
// than an eighth of the Pólya–Gamma draws; none where the same factors are
// crossed; integrateDefaultMax rounds for a single factor of 10 levels
// over 4,000 data, whose proposals are cheap against the draws.
func TestLogitIntegrateRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() (*exactmh.Posterior, error)
		moves int
	}{
		{"nested", func() (*exactmh.Posterior, error) { return nestedLogit(400, 40, true) }, 1},
		{"crossed", func() (*exactmh.Posterior, error) { return nestedLogit(400, 40, false) }, 0},
		{"single", func() (*exactmh.Posterior, error) { return singleLogit(4000, 10) }, 3}, // integrateDefaultMax
	} {
		p, err := tc.build()
		if err != nil {
			t.Fatal(err)
		}
		c, err := exactmh.Choose(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "GroupGibbs" {
			t.Fatalf("%s: the default chose %s, want GroupGibbs: %s", tc.name, c.Name, c.Reason)
		}
		got := 0
		if gg := c.Kernel.(multilevel.GroupGibbs); gg.Independence != 0 {
			// The default samples by the Laplace independence move
			// (TestLogitIndepChoice): the rule's rounds are those of the
			// sweep with Augment alone.
			if got, err = multilevel.IntegrateRounds(p, gg.Center); err != nil {
				t.Fatal(err)
			}
		} else if i := strings.Index(c.Reason, " integrated scale moves a sweep"); i >= 0 {
			j := strings.LastIndex(c.Reason[:i], " ")
			if got, err = strconv.Atoi(c.Reason[j+1 : i]); err != nil {
				t.Fatalf("%s: the reason %q: %v", tc.name, c.Reason, err)
			}
		}
		if got != tc.moves {
			t.Errorf("%s: the default makes %d integrated scale moves a sweep, want %d (reason %q)", tc.name, got, tc.moves, c.Reason)
		}
	}
}

// TestLogitMoments compares the Pólya–Gamma sweep with full-batch
// non-centred NUTS (two-sample |z| < 4.5 on every coordinate's mean and
// variance) on a Bernoulli kit (N = 150, 6 groups × 5 crossed levels) and
// a binomial one with offsets (N = 100, 1–6 trials): the default sweep
// (whose crossed factors get no integrated scale moves), the sweep
// without them and with two rounds of them for every factor. Mutants that must be caught
// (|z| ≥ 4.5): κ without the −n/2 and ω drawn at the start's η, never
// refreshed, on both; on the Bernoulli kit M's pairs of each row refilled
// with the previous row's ω (omega-lag), the integrated scale move
// without ½log det P and without the forward proposal's density of w′
// (half its log q ratio dropped; two rounds a sweep); on the binomial kit the joint draw from the
// previous sweep's b (b = Xᵀ(κ − Ωo) changes with ω only through the
// offsets: without them the mutant is the exact sweep; without the
// integrated scale moves, which draw from the same stale b and pull its
// small bias below the bar) and ω ~ PG(1, η) where the trials are more
// than one. A mutant whose chain fails (its P not positive definite in
// floating point, where it drives τ or η far out) is caught.
func TestLogitMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference")
	}
	for _, kit := range []logitKit{{n: 150, g: 6, h: 5}, {n: 100, g: 6, h: 5, maxTrials: 6, offsets: true}} {
		rng := rand.New(rand.NewPCG(31, 32))
		th := kit.truth(rng)
		th[0], th[1] = 0.3, 0.8
		p, err := kit.build(rand.New(rand.NewPCG(33, 34)), th)
		if err != nil {
			t.Fatal(err)
		}
		mutants := []string{"kappa-half", "omega-stale", "omega-lag", "integrated-logdet,integrate-2", "integrated-q,integrate-2"}
		if kit.maxTrials > 1 {
			mutants = []string{"kappa-half", "omega-stale", "stale-b,no-integrate", "trials-one"}
		}
		draws := func(name string) int {
			if name == "stale-b,no-integrate" {
				return 20000 // its bias is small: only the offsets' part of b is stale
			}
			return 5000
		}
		augmentMoments(t, fmt.Sprintf("%+v", kit), p, []string{"", "no-integrate", "integrate-2"}, mutants, draws)
	}
}

// TestLogitSBC is simulation-based calibration of the Pólya–Gamma sweep
// (the default's, and with two rounds of integrated scale moves)
// with every parameter unknown (β, both factors' effects, both log τ; 200
// replicates of N = 100 binomial rows of 1–3 trials, 5 groups × 3
// crossed levels): ranks uniform at Bonferroni level 10⁻³; the mutants
// omega-stale and trials-one rejected at 0.01 (kappa-half, which the
// moments catch at z > 80, drifts so far that SBC's pilot chain cannot
// thin it within MaxThin).
func TestLogitSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	augmentSBC(t, logitKit{n: 100, g: 5, h: 3, maxTrials: 3}, 19, []string{"", "integrate-2"}, []string{"omega-stale", "trials-one"})
}

// TestLogitGroupedRefill checks drawOmega's grouped rows (groupTab)
// against its pairs (pairTab, the hook refill-pairs): from the same state
// and random stream, the same ω are drawn, so M = XᵀΩX and b = Xᵀκ must
// agree to the summation's rounding (relative 10⁻¹², M's largest entry
// the scale), on a Bernoulli kit (grouped: its rows' patterns, the two
// factors' levels, repeat) and on the omega-lag mutant, which refills M
// with the previous row's ω and must differ. With offsets the refill is
// by the pairs either way.
func TestLogitGroupedRefill(t *testing.T) {
	kit := logitKit{n: 400, g: 6, h: 5}
	_, pb, err := kit.Draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := exactmh.NewTarget(pb.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	refill := func(names string) (m, b []float64, grouped bool) {
		k := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, names)
		ch, err := k.Start(tg, pb.Mode)
		if err != nil {
			t.Fatal(err)
		}
		return multilevel.DrawOmegaRefill(ch, rand.New(rand.NewPCG(43, 44)))
	}
	mg, bg, grouped := refill("")
	mp, bp, pairsGrouped := refill("refill-pairs")
	if !grouped || pairsGrouped {
		t.Fatalf("grouped refill: default %v (want true), refill-pairs %v (want false)", grouped, pairsGrouped)
	}
	maxDiff := func(x, y []float64) (d, scale float64) {
		for i := range x {
			d = max(d, math.Abs(x[i]-y[i]))
			scale = max(scale, math.Abs(y[i]))
		}
		return d, scale
	}
	if d, s := maxDiff(mg, mp); d > 1e-12*s || s == 0 {
		t.Errorf("M by the grouped rows differs from M by the pairs by %.3g (largest entry %.3g)", d, s)
	}
	if d, s := maxDiff(bg, bp); d > 1e-12*s || s == 0 {
		t.Errorf("b by the grouped rows differs from b by the pairs by %.3g (largest entry %.3g)", d, s)
	}
	ml, _, _ := refill("omega-lag")
	if d, s := maxDiff(ml, mp); d <= 1e-6*s {
		t.Errorf("the omega-lag mutant's grouped M is within %.3g of the exact one (largest entry %.3g): not caught", d, s)
	}
}

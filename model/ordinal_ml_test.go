// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlOrdinal is a cumulative logit multilevel model for the ordinal kit:
// a covariate x with β ~ N(0, 1), one factor of G groups with a random
// intercept u_g ~ N(0, τ²), τ ~ half-normal(1), and K categories whose
// K − 1 cutpoints are student_t(3, 0, 2.5) draws sorted (or, with normal
// set, N(0, 2.5²) draws): every parameter unknown. θ = (β, u_0, …,
// u_{G−1}, log τ, c_1, ℓ_2, …).
type mlOrdinal struct {
	n, groups, k int
	normal       bool
}

func (m mlOrdinal) cut() model.CutpointPrior {
	if m.normal {
		return model.CutpointPrior{Nu: math.Inf(1), Scale: 2.5}
	}
	return model.DefaultCutpointPrior
}

// truth draws θ from the prior.
func (m mlOrdinal) truth(rng *rand.Rand) []float64 {
	th := mlGroupedTruth(rng, m.groups)
	cut := make([]float64, m.k-1)
	for k := range cut {
		if m.normal {
			cut[k] = 2.5 * rng.NormFloat64()
		} else {
			cut[k] = 2.5 * studentTDraw(rng, 3)
		}
	}
	slices.Sort(cut)
	return append(th, rawCut(cut)...)
}

// model returns the multilevel model of data drawn at θ (Family and Y
// set by the caller's use: y in 1..K).
func (m mlOrdinal) model(rng *rand.Rand, theta []float64) *model.Multilevel {
	cut := model.Cutpoints(make([]float64, m.k-1), theta[m.groups+2:])
	return mlGrouped(rng, m.n, m.groups, theta, func(eta float64) float64 { return ordinalDraw(rng, eta, cut) })
}

func (m mlOrdinal) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	return model.NewOrdinalMultilevel(m.model(rng, theta), m.k, m.cut())
}

func (m mlOrdinal) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	th := m.truth(rng)
	p, err := m.build(rng, th)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	return th, truthProblem(p, th), nil
}

// TestOrdinalMultilevelEnergy checks the multilevel energy against
// another implementation: with K = 2 the cumulative logit datum is the
// logistic one, P(y = 2) = F(η − c_1), so that U_i(β, u, log τ, c_1) of
// NewOrdinalMultilevel equals the logistic multilevel model's U_i at
// intercept −c_1 and response y − 1, and its posterior the logistic one
// when the cutpoint's prior is the intercept's N(0, 2.5²). It also checks
// the gradient of the K = 4 posterior against central differences.
func TestOrdinalMultilevelEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	m := mlOrdinal{n: 80, groups: 5, k: 2, normal: true}
	th := m.truth(rng)
	ml := m.model(rng, th)
	ord, err := model.NewOrdinalMultilevel(ml, 2, m.cut())
	if err != nil {
		t.Fatal(err)
	}
	lg := *ml
	lg.Family, lg.Intercept, lg.FixedSD, lg.Y = model.LogisticFamily{}, true, []float64{2.5, 1}, make([]float64, m.n)
	for i, y := range ml.Y {
		lg.Y[i] = y - 1
	}
	logit, err := model.NewMultilevel(&lg)
	if err != nil {
		t.Fatal(err)
	}
	toLogit := func(o []float64) []float64 { // (β, u, log τ, c_1) → (−c_1, β, u, log τ)
		return append([]float64{-o[len(o)-1]}, o[:len(o)-1]...)
	}
	idx := make([]int, m.n)
	for i := range idx {
		idx[i] = i
	}
	for range 3 {
		o := m.truth(rng)
		a, b := make([]float64, m.n), make([]float64, m.n)
		ord.Energy.Energies(a, o, idx)
		logit.Energy.Energies(b, toLogit(o), idx)
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-10*(1+math.Abs(b[i])) {
				t.Fatalf("θ %v datum %d: ordinal U %v, logistic U %v", o, i, a[i], b[i])
			}
		}
		po, pl := ord.Prior.LogPrior(o), logit.Prior.LogPrior(toLogit(o))
		o2 := slices.Clone(o)
		o2[0] += 0.5
		o2[len(o2)-1] -= 0.7
		if d := (ord.Prior.LogPrior(o2) - po) - (logit.Prior.LogPrior(toLogit(o2)) - pl); math.Abs(d) > 1e-10 {
			t.Errorf("log-prior differences differ by %v", d)
		}
	}
	m4 := mlOrdinal{n: 80, groups: 5, k: 4}
	th4 := m4.truth(rng)
	p4, err := m4.build(rng, th4)
	if err != nil {
		t.Fatal(err)
	}
	checkGradient(t, p4, th4)
	w := make([]float64, m4.n)
	for i := range w {
		w[i] = 1
	}
	// A step on the sparse rows allocates nothing.
	g, dst := make([]float64, len(th4)), make([]float64, m4.n)
	eg := p4.Energy.(exactmh.EnergyGradienter)
	if a := testing.AllocsPerRun(20, func() { eg.EnergiesAndGradient(dst, g, th4, idx, w) }); a != 0 {
		t.Errorf("%v allocations per gradient, want 0", a)
	}
}

// mlOrdinalPosterior builds the posterior of ml with a mutant.
func mlOrdinalPosterior(t *testing.T, ml *model.Multilevel, k int, mut model.OrdinalMutant, noJacobian bool) *exactmh.Posterior {
	t.Helper()
	p, err := model.NewOrdinalMultilevel(ml, k, model.DefaultCutpointPrior)
	if err != nil {
		t.Fatal(err)
	}
	p.Energy.(*model.OrdinalRegression).Mutate(mut)
	if noJacobian {
		p.Prior.(*model.WithCutpoints).MutateNoJacobian()
	}
	return p
}

// TestOrdinalMultilevelMoments samples a cumulative logit multilevel
// model (N = 600, 12 groups, K = 4, one category rare) with the kernel
// the automatic default chooses and compares its means and variances with
// full-batch NUTS's (two-sample |z| < 4.5 on every coordinate).
// Mutants, each caught: the ordered transform's Jacobian dropped, the
// data of category 2 reading category 3's cutpoints, η's sign flipped.
func TestOrdinalMultilevelMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: the default's choice and NUTS")
	}
	ctx := context.Background()
	run := func(p *exactmh.Posterior, seed uint64) (*exactmh.Result, string) {
		return sampleDefault(t, p, seed, 400, 2500)
	}
	rng := rand.New(rand.NewPCG(83, 84))
	m := mlOrdinal{n: 600, groups: 12, k: 4}
	th := []float64{0.7}
	for g := range m.groups {
		th = append(th, 0.8*math.Sin(float64(g)))
	}
	th = append(th, math.Log(0.8))
	th = append(th, rawCut([]float64{-1, -0.85, 1.2})...)
	ml := m.model(rng, th)
	p := mlOrdinalPosterior(t, ml, m.k, model.OrdinalMutant{}, false)
	ref, err := exactmh.Sample(ctx, p, &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 2500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, name := run(p, 2)
	z, j := compareZ(r, ref)
	t.Logf("the automatic default %s: largest two-sample |z| %.2f (θ%d) against NUTS", name, z, j)
	if !(math.Abs(z) < 4.5) {
		t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", name, z, j)
	}
	for _, mu := range []struct {
		name  string
		mut   model.OrdinalMutant
		noJac bool
	}{
		{"Jacobian of the ordered transform dropped", model.OrdinalMutant{}, true},
		{"category 2 reads category 3's cutpoints", model.OrdinalMutant{OffByOne: true}, false},
		{"sign of η flipped", model.OrdinalMutant{SignFlip: true}, false},
	} {
		r, _ := run(mlOrdinalPosterior(t, ml, m.k, mu.mut, mu.noJac), 3)
		checkMutant(t, mu.name, r, ref)
	}
}

// TestOrdinalMultilevelLogistic samples the K = 2 cumulative logit
// multilevel model (N = 600, 12 groups, the cutpoint's prior N(0, 2.5²))
// with its automatic default and the logistic multilevel model of the
// same data (intercept −c_1, response y − 1, the intercept's prior
// N(0, 2.5²)) with GroupGibbs about its Laplace-EM centre: the same
// posterior by another energy, prior and kernel; two-sample |z| < 4.5 on
// every coordinate's mean and variance.
func TestOrdinalMultilevelLogistic(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS and GroupGibbs")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(87, 88))
	th := []float64{0.7}
	for g := range 12 {
		th = append(th, 0.8*math.Sin(float64(g)))
	}
	th = append(th, math.Log(0.8))

	m2 := mlOrdinal{n: 600, groups: 12, k: 2, normal: true}
	th2 := append(th, 0.3)
	ml2 := m2.model(rng, th2)
	p2, err := model.NewOrdinalMultilevel(ml2, 2, m2.cut())
	if err != nil {
		t.Fatal(err)
	}
	lg := *ml2
	lg.Family, lg.Intercept, lg.FixedSD, lg.Y = model.LogisticFamily{}, true, []float64{2.5, 1}, make([]float64, m2.n)
	for i, y := range ml2.Y {
		lg.Y[i] = y - 1
	}
	pl, err := model.NewMultilevel(&lg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(ctx, p2, &exactmh.Settings{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	nameO, nameL := c.Name, "GroupGibbs"
	ro, err := exactmh.Sample(ctx, c.Posterior, c.Kernel, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 2500, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := exactmh.Sample(ctx, pl, multilevel.GroupGibbs{}, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 2500, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	// (β, u, log τ, c_1) against (−Intercept, β, u, log τ).
	d := p2.Dim()
	var zmax float64
	at := -1
	for j := range d {
		l, sign := j+1, 1.0
		if j == d-1 {
			l, sign = 0, -1
		}
		mo, vo, smo, svo := meanVar(ro, j)
		ml, vl, sml, svl := meanVar(rl, l)
		for _, z := range []float64{(mo - sign*ml) / math.Hypot(smo, sml), (vo - vl) / math.Hypot(svo, svl)} {
			if !(math.Abs(z) <= math.Abs(zmax)) {
				zmax, at = z, j
			}
		}
	}
	t.Logf("K = 2: %s on the ordinal model against %s on the logistic one: largest |z| %.2f (θ%d)", nameO, nameL, zmax, at)
	if !(math.Abs(zmax) < 4.5) {
		t.Errorf("K = 2: the ordinal model's moments off the logistic model's: z = %.2f (θ%d)", zmax, at)
	}
}

// TestOrdinalMultilevelSBC is simulation-based calibration of NUTS on
// the cumulative logit multilevel model with every parameter unknown
// (β, the group effects, log τ and the cutpoints; 100 replicates): ranks
// uniform at Bonferroni level 0.01.
func TestOrdinalMultilevelSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates")
	}
	r, err := mcmctest.SBC(mlOrdinal{n: 80, groups: 5, k: 3}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 100, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
}

// TestOrdinalMultilevelChoice checks the automatic default's route on a
// cumulative logit multilevel model above exactmh.AutoSmallN with D = 306
// > 256: full-batch NUTS without pilots (multilevel.FullBatchEnergy), not
// the flat path's dense Laplace approximation; and that FullBatchReason
// declines on a small multilevel model (D = 46) and on the flat model,
// leaving them to the flat path's pilots.
func TestOrdinalMultilevelChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(85, 86))
	small, err := mlOrdinal{n: 100, groups: 40, k: 5}.build(rng, mlOrdinal{groups: 40, k: 5}.truth(rng))
	if err != nil {
		t.Fatal(err)
	}
	if r := small.Energy.(*model.OrdinalRegression).FullBatchReason(); r != "" {
		t.Errorf("D = %d: FullBatchReason %q, want \"\"", small.Dim(), r)
	}
	m := mlOrdinal{n: 3000, groups: 300, k: 5}
	p, err := m.build(rng, m.truth(rng))
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(context.Background(), p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Kernel.(exactmh.NUTS); !ok || c.Posterior != p || len(c.Candidates) != 0 || !strings.Contains(c.Reason, "cutpoints enter every datum") {
		t.Errorf("the default chose %s (%T, %d candidates): %s; want NUTS on the posterior as given, no pilot", c.Name, c.Kernel, len(c.Candidates), c.Reason)
	}
	x, y := ordinalData(rng, 10, []float64{1}, []float64{-1, 0, 1, 2})
	e, err := model.NewOrdinalRegression(x, y, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.FullBatchReason(); r != "" {
		t.Errorf("flat model: FullBatchReason %q, want \"\"", r)
	}
}

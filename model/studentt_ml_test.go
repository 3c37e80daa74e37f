// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/stat/distuv"
)

// mlStudentT is a Student-t multilevel model (ν = 4) of the shared
// multilevel kit design (mlGrouped) with σ ~ half-normal(1) unknown:
// y_i = β·x_i + u_{g(i)} + σ·t_4. θ = (β, u_0, …, u_{G−1}, log τ, log σ).
// With sigmaCount set, Draw poses the mutant posterior counting N·log σ
// twice.
type mlStudentT struct {
	n, groups  int
	sigmaCount bool
}

const mlTNu = 4

// truth draws θ from the prior.
func (m mlStudentT) truth(rng *rand.Rand) []float64 {
	return append(mlGroupedTruth(rng, m.groups), math.Log(math.Abs(rng.NormFloat64())))
}

// model returns the multilevel model of data drawn at θ.
func (m mlStudentT) model(rng *rand.Rand, theta []float64) *model.Multilevel {
	sigma := math.Exp(theta[len(theta)-1])
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: mlTNu, Src: rand.NewPCG(rng.Uint64(), 3)}
	return mlGrouped(rng, m.n, m.groups, theta, func(eta float64) float64 { return eta + sigma*st.Rand() })
}

// posterior builds the posterior of ml, with the mutants asked for.
func (m mlStudentT) posterior(ml *model.Multilevel, noJacobian, sigmaCount bool) (*exactmh.Posterior, error) {
	p, err := model.NewStudentTMultilevel(ml, mlTNu, model.HalfNormal(1))
	if err != nil {
		return nil, err
	}
	if noJacobian {
		model.MutateNoJacobian(p.Prior.(*model.WithScale))
	}
	if sigmaCount {
		model.MutateTSigmaCount(p.Energy.(*model.StudentTScaleRegression))
	}
	return p, nil
}

func (m mlStudentT) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	th := m.truth(rng)
	p, err := m.posterior(m.model(rng, th), false, m.sigmaCount)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	return th, truthProblem(p, th), nil
}

// TestStudentTMultilevelEnergy checks NewStudentTMultilevel against the
// Student-t log density (Σ U_i(θ) − U_i(θ′) = −Σ log p(y_i | θ) + log
// p(y_i | θ′), η_i = β·x_i + u_{g(i)}), the names, and the posterior's
// gradient (energy and prior, log σ's Jacobian included) against central
// differences, and no allocation on the step paths.
func TestStudentTMultilevelEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	m := mlStudentT{n: 60, groups: 5}
	th := m.truth(rng)
	ml := m.model(rng, th)
	p, err := m.posterior(ml, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := len(th); p.Dim() != d || p.Names[d-1] != "log_sigma" || p.Names[d-2] != "log_tau_g" {
		t.Fatalf("dimension %d, names %q; want %d ending log_tau_g, log_sigma", p.Dim(), p.Names, d)
	}
	idx, w := make([]int, m.n), make([]float64, m.n)
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	total := func(x []float64) float64 {
		u := make([]float64, m.n)
		p.Energy.Energies(u, x, idx)
		var s float64
		for _, v := range u {
			s += v
		}
		return s
	}
	logLik := func(x []float64) float64 {
		var s float64
		for i, y := range ml.Y {
			g := ml.Factors[0].Index[i]
			s += distuv.StudentsT{Mu: x[0]*ml.Fixed[0].Values[i] + x[1+g], Sigma: math.Exp(x[len(x)-1]), Nu: mlTNu}.LogProb(y)
		}
		return s
	}
	th2 := m.truth(rng)
	want := logLik(th2) - logLik(th)
	if got := total(th) - total(th2); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
		t.Errorf("ΣU(θ) − ΣU(θ′) = %v, from the log density %v", got, want)
	}
	diffs := make([]float64, m.n)
	p.Energy.(exactmh.EnergyDiffer).EnergyDiffs(diffs, th, th2, idx)
	var sum float64
	for _, v := range diffs {
		sum += v
	}
	if math.Abs(sum-want) > 1e-9*(1+math.Abs(want)) {
		t.Errorf("Σ EnergyDiffs = %v, from the log density %v", sum, want)
	}
	checkGradient(t, p, th)
	grad := make([]float64, len(th))
	th2[0] += 0.1
	eg := p.Energy.(exactmh.EnergyGradienter)
	ed := p.Energy.(exactmh.EnergyDiffer)
	pg := p.Prior.(exactmh.PriorGradienter)
	if a := testing.AllocsPerRun(20, func() {
		ed.EnergyDiffs(diffs, th, th2, idx)
		eg.EnergiesAndGradient(diffs, grad, th, idx, w)
		pg.AddLogPriorGradient(grad, th)
		_ = p.Prior.LogPrior(th)
	}); a != 0 {
		t.Errorf("%v allocations per step, want 0", a)
	}
	if _, err := model.NewStudentTMultilevel(ml, 0, model.HalfNormal(1)); err == nil {
		t.Error("ν = 0 accepted")
	}
	mw := *ml
	mw.Weights = make([]float64, m.n)
	if _, err := model.NewStudentTMultilevel(&mw, 4, model.HalfNormal(1)); err == nil {
		t.Error("Weights accepted")
	}
}

// TestStudentTMultilevelMoments samples a Student-t multilevel model
// (N = 600, 12 groups, ν = 4, σ = 1.3) with the kernel the automatic
// default chooses and compares its means and variances with full-batch
// NUTS's (two-sample |z| < 4.5 on every coordinate); the mutant counting
// the energy's N·log σ term twice must be caught there. The Jacobian of
// log σ moves log σ by about its variance, a small fraction of its sd at
// N = 600: the mutant dropping it is run at N = 40 (4 groups), NUTS
// against NUTS, 4 × 10,000 draws, as TestStudentTScaleMoments does.
func TestStudentTMultilevelMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: the default's choice and NUTS")
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(93, 94))
	m := mlStudentT{n: 600, groups: 12}
	th := []float64{0.7}
	for g := range m.groups {
		th = append(th, 0.8*math.Sin(float64(g)))
	}
	th = append(th, math.Log(0.8), math.Log(1.3))
	ml := m.model(rng, th)
	post := func(noJac, count bool) *exactmh.Posterior {
		p, err := m.posterior(ml, noJac, count)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref, err := exactmh.Sample(ctx, post(false, false), &exactmh.NUTS{}, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 2500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, name := sampleDefault(t, post(false, false), 2, 400, 2500)
	z, j := compareZ(r, ref)
	t.Logf("the automatic default %s: largest two-sample |z| %.2f (θ%d) against NUTS", name, z, j)
	if !(math.Abs(z) < 4.5) {
		t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d)", name, z, j)
	}
	r, _ = sampleDefault(t, post(false, true), 3, 400, 2500)
	checkMutant(t, "N·log σ counted twice", r, ref)

	small := mlStudentT{n: 40, groups: 4}
	ms := small.model(rng, append(th[:1+small.groups:1+small.groups], math.Log(0.8), math.Log(1.3)))
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 10000, Seed: 4}
	ps, err := small.posterior(ms, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if ref, err = exactmh.Sample(ctx, ps, &exactmh.NUTS{}, set); err != nil {
		t.Fatal(err)
	}
	if ps, err = small.posterior(ms, true, false); err != nil {
		t.Fatal(err)
	}
	set.Seed = 5
	if r, err = exactmh.Sample(ctx, ps, &exactmh.NUTS{}, set); err != nil {
		t.Fatal(err)
	}
	checkMutant(t, "Jacobian of log σ dropped", r, ref)
}

// TestStudentTMultilevelSBC is simulation-based calibration of NUTS on
// the Student-t multilevel model with every parameter unknown (β, the
// group effects, log τ and log σ; 100 replicates): ranks uniform at
// Bonferroni level 0.01; the mutant counting N·log σ twice must be
// rejected.
func TestStudentTMultilevelSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates")
	}
	r, err := mcmctest.SBC(mlStudentT{n: 60, groups: 5}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 100, Seed: 13})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
	mut, err := mcmctest.SBC(mlStudentT{n: 60, groups: 5, sigmaCount: true}, func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} },
		&mcmctest.SBCOptions{Replicates: 100, Seed: 13})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mutant N·log σ counted twice: SBC p-values %.3g", mut.P)
	if !mut.Reject(0.01) {
		t.Errorf("SBC misses the mutant counting N·log σ twice: p = %.3g", mut.P)
	}
}

// TestStudentTMultilevelChoice checks the automatic default's route on a
// Student-t multilevel model above exactmh.AutoSmallN with D = 302 > 256:
// full-batch NUTS without pilots (multilevel.FullBatchEnergy); and that
// FullBatchReason declines on a small multilevel model and on the flat
// model, leaving them to the flat path's pilots.
func TestStudentTMultilevelChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 96))
	sm := mlStudentT{n: 100, groups: 40}
	small, err := sm.posterior(sm.model(rng, sm.truth(rng)), false, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := small.Energy.(*model.StudentTScaleRegression).FullBatchReason(); r != "" {
		t.Errorf("D = %d: FullBatchReason %q, want \"\"", small.Dim(), r)
	}
	m := mlStudentT{n: 3000, groups: 299}
	p, err := m.posterior(m.model(rng, m.truth(rng)), false, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(context.Background(), p, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Kernel.(exactmh.NUTS); !ok || c.Posterior != p || len(c.Candidates) != 0 || !strings.Contains(c.Reason, "σ enters every datum") {
		t.Errorf("the default chose %s (%T, %d candidates): %s; want NUTS on the posterior as given, no pilot", c.Name, c.Kernel, len(c.Candidates), c.Reason)
	}
	x, y := tData(rng, 10, []float64{1, 2}, 1.5, 4)
	e, err := model.NewStudentTScaleRegression(x, y, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.FullBatchReason(); r != "" {
		t.Errorf("flat model: FullBatchReason %q, want \"\"", r)
	}
}

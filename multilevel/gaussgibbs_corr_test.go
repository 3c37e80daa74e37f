// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// gaussCorrKit is mlCorr's model with the Gaussian family and σ unknown:
// y_i = β_0 + Σ_k β_k·x_ki + u_g0 + Σ_k u_gk·x_ki + σ·ε_i, u_g ~ N(0,
// diag(τ)·Ω·diag(τ)), β ~ N(0, 1), τ_k and σ ~ half-normal(1), Ω ~
// LKJ(η), in sufficient statistics (model.SparseGaussianRegression):
// θ = (β, u, log τ, y, log σ), every parameter unknown.
type gaussCorrKit struct{ mlCorr }

func (m gaussCorrKit) dim() int { return m.mlCorr.dim() + 1 }

// truth draws θ from the prior (mlCorr.truth's C-vine for Ω).
func (m gaussCorrKit) truth(rng *rand.Rand) []float64 {
	return append(m.mlCorr.truth(rng), math.Log(math.Abs(rng.NormFloat64())))
}

// build returns the posterior of rows drawn at θ.
func (m gaussCorrKit) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	q := m.q
	ml := &model.Multilevel{Family: model.GaussianFamily{Sigma: 1}, Y: make([]float64, m.n), Intercept: true,
		FixedSD: make([]float64, q)}
	f := model.Factor{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1), Correlated: true, LKJ: m.eta}
	for k := 1; k < q; k++ {
		c := model.Covariate{Name: "x" + strconv.Itoa(k), Values: make([]float64, m.n)}
		ml.Fixed = append(ml.Fixed, c)
		f.Slopes = append(f.Slopes, c)
	}
	for k := range ml.FixedSD {
		ml.FixedSD[k] = 1
	}
	sigma := math.Exp(theta[len(theta)-1])
	for i := range m.n {
		g := i % m.groups
		if i >= m.n/2 && rng.IntN(2) == 0 {
			g = 0
		}
		f.Index[i] = int32(g)
		z := theta[0] + theta[q+g*q]
		for k := 1; k < q; k++ {
			x := rng.NormFloat64()
			f.Slopes[k-1].Values[i] = x
			z += (theta[k] + theta[q+g*q+k]) * x
		}
		ml.Y[i] = z + sigma*rng.NormFloat64()
	}
	ml.Factors = []model.Factor{f}
	unit, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, err
	}
	e, err := model.NewSparseGaussianRegression(unit.Energy.(*model.SparseGLM[float64]))
	if err != nil {
		return nil, err
	}
	base := unit.Prior
	if m.dropLKJJacobian {
		base = lkjJacobianDropped{unit.Prior.(*model.MultilevelPrior), m.q, m.mlCorr.dim() - m.nCor()}
	}
	return &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: base, Scale: model.HalfNormal(1)}, Names: append(unit.Names, "log_sigma")}, nil
}

// Draw implements mcmctest.Model.
func (m gaussCorrKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.truth(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	return theta, stepProblem(p, append([]float64{}, theta...)), nil
}

// TestGaussGibbsCorrelatedChosen checks that the automatic default
// chooses GroupGibbs's Gaussian sweep on a Gaussian multilevel model with
// correlated effects (q = 2 and 3) and σ estimated, that a sweep reads no
// datum, allocates nothing and keeps every draw of the effects (β's prior
// is Gaussian, so the joint draw with Σ⁻¹ per level is the exact
// conditional: its acceptance ratio, the prior's log ratio less the
// sweep's Gaussian part, is 0 up to rounding).
func TestGaussGibbsCorrelatedChosen(t *testing.T) {
	for _, q := range []int{2, 3} {
		kit := gaussCorrKit{mlCorr{n: 300, groups: 6, q: q, eta: 1}}
		rng := rand.New(rand.NewPCG(1, 2))
		p, err := kit.build(rng, kit.truth(rng))
		if err != nil {
			t.Fatal(err)
		}
		if d := p.Energy.Dim(); d != kit.dim() {
			t.Fatalf("q = %d: dimension %d, want %d", q, d, kit.dim())
		}
		if !multilevel.IsGaussian(p) {
			t.Fatalf("q = %d: IsGaussian false on a Gaussian model with correlated effects", q)
		}
		c, err := exactmh.Choose(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "GroupGibbs" {
			t.Fatalf("q = %d: the automatic default chose %s (%s), want GroupGibbs", q, c.Name, c.Reason)
		}
		tg, err := exactmh.NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := c.Kernel.Start(tg, c.Center)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		if allocs := testing.AllocsPerRun(50, func() {
			info, err := ch.Step(r)
			if err != nil {
				t.Fatal(err)
			}
			if !(info.AcceptProb > 1-1e-9) || math.IsNaN(info.LogDensity) {
				t.Fatalf("q = %d: a sweep's draw of the effects has acceptance %v (want 1: the exact conditional) or no log density: %+v", q, info.AcceptProb, info)
			}
		}); allocs != 0 {
			t.Errorf("q = %d: a sweep allocates %v times", q, allocs)
		}
		if ev := tg.Evals(); ev != 0 {
			t.Errorf("q = %d: sweeps read %d data, want 0", q, ev)
		}
	}
}

// TestGaussGibbsCorrelated compares GroupGibbs's Gaussian sweep on
// correlated effects with NUTS on the same sufficient-statistic posterior
// (q = 2: N = 400, 8 groups, η = 1; q = 3: N = 600, 8 groups, η = 2):
// two-sample |z| < 4.5 on every coordinate's mean and variance. Mutants,
// caught (|z| > 6 or the run fails): P with each Σ⁻¹ replaced by its
// diagonal diag(τ⁻²), and the posterior without the LKJ transform's
// Jacobian (lkjJacobianDropped); and the mutant corr-nc-jacobian (the
// correlated factors' non-centred move with its Jacobian one power
// short), against the exact sweep's run. The sweep without that move
// (no-corr-nc) agrees with NUTS too.
func TestGaussGibbsCorrelated(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS references")
	}
	ctx := context.Background()
	for _, kit := range []gaussCorrKit{{mlCorr{n: 400, groups: 8, q: 2, eta: 1}}, {mlCorr{n: 600, groups: 8, q: 3, eta: 2}}} {
		name := "q = " + strconv.Itoa(kit.q)
		theta := kit.truth(rand.New(rand.NewPCG(uint64(kit.q), 19)))
		// Scales well away from 0 (NUTS's funnel) for a fair reference.
		for k := range kit.q {
			j := kit.q + kit.groups*kit.q + k
			for g := range kit.groups {
				theta[kit.q+g*kit.q+k] *= 0.8 / math.Exp(theta[j])
			}
			theta[j] = math.Log(0.8)
		}
		theta[len(theta)-1] = math.Log(1.3)
		p, err := kit.build(rand.New(rand.NewPCG(uint64(kit.q), 20)), theta)
		if err != nil {
			t.Fatal(err)
		}
		run := func(p *exactmh.Posterior, k exactmh.Kernel, draws int, seed uint64) (*exactmh.Result, error) {
			return exactmh.Sample(ctx, p, k, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: draws, Seed: seed, Init: theta})
		}
		ref, err := run(p, &exactmh.NUTS{}, 10000, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := run(p, multilevel.GroupGibbs{}, 20000, 2)
		if err != nil {
			t.Fatal(err)
		}
		z, j := gaussZ(r, ref)
		t.Logf("%s: largest two-sample |z| %.2f (θ%d %s) against NUTS; min bulk ESS %.0f of %d draws (NUTS %.0f)", name, z, j, p.Names[j], minBulkESS(r), 4*20000, minBulkESS(ref))
		if !(math.Abs(z) < 4.5) {
			t.Errorf("%s: moments off NUTS's: z = %.2f (θ%d %s)", name, z, j, p.Names[j])
		}
		// Without the correlated factors' non-centred move: exact too.
		rc, err := run(p, multilevel.GaussGibbsCorrNC(multilevel.GroupGibbs{}, "no-corr-nc"), 20000, 2)
		if err != nil {
			t.Fatal(err)
		}
		zc, jc := gaussZ(rc, ref)
		t.Logf("%s, no-corr-nc: largest |z| %.2f (θ%d %s); min bulk ESS %.0f", name, zc, jc, p.Names[jc], minBulkESS(rc))
		if !(math.Abs(zc) < 4.5) {
			t.Errorf("%s, no-corr-nc: moments off NUTS's: z = %.2f (θ%d %s)", name, zc, jc, p.Names[jc])
		}
		// And against the exact sweep's run (the comparison the mutant
		// below meets, here between two exact chains).
		if zc, jc := gaussZ(rc, r); !(math.Abs(zc) < 4.5) {
			t.Errorf("%s, no-corr-nc: moments off the exact sweep's: z = %.2f (θ%d %s)", name, zc, jc, p.Names[jc])
		}
		drop := kit
		drop.dropLKJJacobian = true
		pd, err := drop.build(rand.New(rand.NewPCG(uint64(kit.q), 20)), theta) // the same data
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			name string
			p    *exactmh.Posterior
			k    multilevel.GroupGibbs
		}{
			{"Σ⁻¹ replaced by its diagonal", p, multilevel.GaussGibbsCorrDiagonal(multilevel.GroupGibbs{})},
			{"LKJ Jacobian dropped", pd, multilevel.GroupGibbs{}},
		} {
			rm, err := run(m.p, m.k, 20000, 2)
			if err != nil {
				t.Logf("%s: mutant %q caught: the run fails: %.200s", name, m.name, err)
				continue
			}
			if z, j := gaussZ(rm, ref); math.Abs(z) < 6 {
				t.Errorf("%s: mutant %q passes: z = %.2f (θ%d %s)", name, m.name, z, j, p.Names[j])
			} else {
				t.Logf("%s: mutant %q caught: z = %.1f (θ%d %s)", name, m.name, z, j, p.Names[j])
			}
		}
		// The non-centred move's Jacobian one power short, 4 × 40,000
		// draws: against the exact sweep's own run above (validated
		// against NUTS, and with eight times NUTS's ESS, so that a bias of
		// a few NUTS MCSEs shows).
		rm, err := run(p, multilevel.GaussGibbsCorrNC(multilevel.GroupGibbs{}, "corr-nc-jacobian"), 40000, 3)
		if err != nil {
			t.Logf("%s: mutant %q caught: the run fails: %.200s", name, "corr-nc-jacobian", err)
		} else if z, j := gaussZ(rm, r); math.Abs(z) < 6 {
			t.Errorf("%s: mutant %q passes: z = %.2f (θ%d %s) against the exact sweep", name, "corr-nc-jacobian", z, j, p.Names[j])
		} else {
			t.Logf("%s: mutant %q caught: z = %.1f (θ%d %s) against the exact sweep", name, "corr-nc-jacobian", z, j, p.Names[j])
		}
	}
}

// TestGaussGibbsCorrelatedSBC is simulation-based calibration of
// GroupGibbs's Gaussian sweep on correlated effects with every parameter
// unknown (β, each group's q effects, the q log τ, the correlation
// coordinates, log σ; Ω by the C-vine, independently of the model's
// density): q = 2 (N = 100, 5 groups, η = 1, 200 replicates) and q = 3
// (N = 150, 5 groups, η = 2, 100 replicates), ranks uniform at
// Bonferroni level 10⁻³; the mutants of TestGaussGibbsCorrelated rejected
// at 0.01 (q = 2).
func TestGaussGibbsCorrelatedSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	run := func(kit gaussCorrKit, k multilevel.GroupGibbs, reps int) *mcmctest.SBCResult {
		r, err := mcmctest.SBC(kit, func(mcmctest.Problem) exactmh.Kernel { return k },
			&mcmctest.SBCOptions{Replicates: reps, Seed: 23, MaxThin: 400})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kit2 := gaussCorrKit{mlCorr{n: 100, groups: 5, q: 2, eta: 1}}
	for _, c := range []struct {
		kit  gaussCorrKit
		reps int
	}{{kit2, 200}, {gaussCorrKit{mlCorr{n: 150, groups: 5, q: 3, eta: 2}}, 100}} {
		r := run(c.kit, multilevel.GroupGibbs{}, c.reps)
		t.Logf("q = %d: SBC p-value %.3g (thin %d)", c.kit.q, r.P, r.Thin)
		if r.Reject(1e-3) {
			t.Errorf("q = %d: SBC rejects uniformity: p = %.3g", c.kit.q, r.P)
		}
	}
	drop := kit2
	drop.dropLKJJacobian = true
	for _, m := range []struct {
		name string
		kit  gaussCorrKit
		k    multilevel.GroupGibbs
	}{
		{"Σ⁻¹ replaced by its diagonal", kit2, multilevel.GaussGibbsCorrDiagonal(multilevel.GroupGibbs{})},
		{"LKJ Jacobian dropped", drop, multilevel.GroupGibbs{}},
	} {
		r, err := mcmctest.SBC(m.kit, func(mcmctest.Problem) exactmh.Kernel { return m.k },
			&mcmctest.SBCOptions{Replicates: 200, Seed: 23, MaxThin: 400})
		if err != nil {
			t.Logf("mutant %q caught: SBC fails: %.200s", m.name, err)
			continue
		}
		t.Logf("mutant %q: SBC p-value %.3g", m.name, r.P)
		if !r.Reject(0.01) {
			t.Errorf("SBC misses the mutant %q: p = %.3g", m.name, r.P)
		}
	}
}

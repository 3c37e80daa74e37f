// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// gaussKit is a Gaussian multilevel model with σ unknown: y_i = o_i + β_0
// + β_1·x_i + u_g(i) (+ v_g(i)·x_i with slope) + σ·ε_i, u_g ~ N(0, τ²),
// v_g ~ N(0, τ_v²), β ~ N(0, 1) (flat if flat), τ and σ ~ half-normal(1);
// group 0 holds half the rows.
type gaussKit struct {
	n, groups   int
	slope, flat bool
	correlated  bool // the intercept and slope correlated (LKJ(1)), with slope
}

func (m gaussKit) q() int {
	if m.slope {
		return 2
	}
	return 1
}

func (m gaussKit) dim() int { return 2 + m.q()*m.groups + m.q() + 1 } // β, u, log τ, log σ

// build returns the sufficient-statistic posterior of rows drawn at θ.
func (m gaussKit) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{
		Family:    model.GaussianFamily{Sigma: 1},
		Y:         make([]float64, m.n),
		Offset:    make([]float64, m.n),
		Intercept: true,
		Fixed:     []model.Covariate{{Name: "x", Values: make([]float64, m.n)}},
		FixedSD:   []float64{1, 1},
		Factors:   []model.Factor{{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1)}},
	}
	if m.flat {
		ml.FixedSD = nil
	}
	if m.slope {
		ml.Factors[0].Slopes = []model.Covariate{{Name: "x", Values: ml.Fixed[0].Values}}
		ml.Factors[0].Correlated = m.correlated
	}
	q := m.q()
	sigma := math.Exp(theta[len(theta)-1])
	for i := range m.n {
		x := rng.NormFloat64()
		g := i % m.groups
		if i >= m.n/2 {
			g = 0
		}
		ml.Fixed[0].Values[i], ml.Factors[0].Index[i] = x, int32(g)
		ml.Offset[i] = 0.3 * rng.NormFloat64()
		eta := ml.Offset[i] + theta[0] + theta[1]*x + theta[2+q*g]
		if m.slope {
			eta += theta[3+q*g] * x
		}
		ml.Y[i] = eta + sigma*rng.NormFloat64()
	}
	unit, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, err
	}
	e, err := model.NewSparseGaussianRegression(unit.Energy.(*model.SparseGLM[float64]))
	if err != nil {
		return nil, err
	}
	return &exactmh.Posterior{Energy: e, Prior: &model.WithScale{Base: unit.Prior, Scale: model.HalfNormal(1)}}, nil
}

// truth draws θ from the prior (β from N(0, 1) also when flat).
func (m gaussKit) truth(rng *rand.Rand) []float64 {
	d, q := m.dim(), m.q()
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	for k := range q {
		tau := math.Abs(rng.NormFloat64())
		for g := range m.groups {
			theta[2+q*g+k] = tau * rng.NormFloat64()
		}
		theta[2+q*m.groups+k] = math.Log(tau)
	}
	theta[d-1] = math.Log(math.Abs(rng.NormFloat64()))
	return theta
}

// Draw implements mcmctest.Model.
func (m gaussKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.truth(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	return theta, stepProblem(p, append([]float64{}, theta...)), nil
}

// stepProblem is the kit's Problem on p started at mode, every
// coordinate's first step scale 0.2 (warmup adapts it).
func stepProblem(p *exactmh.Posterior, mode []float64) mcmctest.Problem {
	sd := make([]float64, len(mode))
	for j := range sd {
		sd[j] = 0.2
	}
	return mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
}

// centredProblem is stepProblem started at p's Laplace-EM centre.
func centredProblem(p *exactmh.Posterior) (mcmctest.Problem, error) {
	c, _, err := multilevel.Center(context.Background(), p)
	if err != nil {
		return mcmctest.Problem{}, err
	}
	return stepProblem(p, c), nil
}

// gaussZ returns the largest two-sample |z| of the means and variances of
// r's draws against ref's, and its coordinate.
func gaussZ(r, ref *exactmh.Result) (zmax float64, at int) {
	mv := func(r *exactmh.Result, j int) (m, v, sm, sv float64) {
		x := r.Samples(j)
		var n int
		for _, ch := range x {
			for _, xi := range ch {
				m += xi
				n++
			}
		}
		m /= float64(n)
		sq := make([][]float64, len(x))
		for c, ch := range x {
			sq[c] = make([]float64, len(ch))
			for i, xi := range ch {
				sq[c][i] = (xi - m) * (xi - m)
				v += sq[c][i]
			}
		}
		return m, v / float64(n), diagnostics.MCSEMean(x), diagnostics.MCSEMean(sq)
	}
	for j := range r.Dim {
		m, v, sm, sv := mv(r, j)
		m0, v0, sm0, sv0 := mv(ref, j)
		for _, z := range []float64{(m - m0) / math.Hypot(sm, sm0), (v - v0) / math.Hypot(sv, sv0)} {
			if !(math.Abs(z) <= math.Abs(zmax)) {
				zmax, at = z, j
			}
		}
	}
	return zmax, at
}

// TestGaussGibbsChosen checks that the automatic default chooses
// GroupGibbs's Gaussian sweep on a Gaussian multilevel model with σ
// estimated, that a sweep reads no datum, and that a transition allocates
// nothing.
func TestGaussGibbsChosen(t *testing.T) {
	kit := gaussKit{n: 300, groups: 6}
	rng := rand.New(rand.NewPCG(1, 2))
	p, err := kit.build(rng, kit.truth(rng))
	if err != nil {
		t.Fatal(err)
	}
	if !multilevel.IsGaussian(p) {
		t.Fatal("IsGaussian false on the Gaussian multilevel model")
	}
	c, err := exactmh.Choose(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "GroupGibbs" {
		t.Fatalf("the automatic default chose %s (%s), want GroupGibbs", c.Name, c.Reason)
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
		if !info.Accepted || math.IsNaN(info.LogDensity) {
			t.Fatalf("a sweep with a Gaussian prior on β rejected its draw or has no log density: %+v", info)
		}
	}); allocs != 0 {
		t.Errorf("a sweep allocates %v times", allocs)
	}
	if ev := tg.Evals(); ev != 0 {
		t.Errorf("sweeps read %d data, want 0", ev)
	}
}

// TestGaussGibbsMoments compares GroupGibbs's Gaussian sweep with NUTS on
// the same sufficient-statistic posterior (NUTS proven there against the
// per-datum energy by model's TestMultilevelGaussianMoments): two-sample
// |z| < 4.5 on every coordinate's mean and variance, for a random
// intercept (β ~ N(0, 1)), a random intercept with flat β and a random
// intercept and slope; the sweep without the terms' non-centred scale
// move (no-term-nc) too, and against the sweep's own run. Mutants, caught:
// σ⁻²'s Gamma shape (N − D)/2 (the residual degrees of freedom of least
// squares, D the rows' coefficients), the effects' precision with M/σ for
// M/σ², and term-nc-jacobian (the move's τ^G one power short, against the
// exact sweep's run).
func TestGaussGibbsMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS references")
	}
	ctx := context.Background()
	for _, kit := range []gaussKit{{n: 60, groups: 6}, {n: 80, groups: 5, flat: true}, {n: 120, groups: 6, slope: true}} {
		rng := rand.New(rand.NewPCG(43, 44))
		theta := kit.truth(rng)
		theta[kit.dim()-1] = math.Log(1.3)
		p, err := kit.build(rand.New(rand.NewPCG(45, 46)), theta)
		if err != nil {
			t.Fatal(err)
		}
		run := func(k exactmh.Kernel, draws int, seed uint64) *exactmh.Result {
			r, err := exactmh.Sample(ctx, p, k, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: draws, Seed: seed, Init: theta})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		ref := run(&exactmh.NUTS{}, 10000, 1)
		r := run(multilevel.GroupGibbs{}, 20000, 2)
		z, j := gaussZ(r, ref)
		t.Logf("%+v: largest two-sample |z| %.2f (θ%d) against NUTS; min bulk ESS %.0f of %d draws", kit, z, j, minBulkESS(r), 4*20000)
		if !(math.Abs(z) < 4.5) {
			t.Errorf("%+v: moments off NUTS's: z = %.2f (θ%d)", kit, z, j)
		}
		// Without the terms' non-centred scale move: exact too, and
		// against the exact sweep's run (the mutant's comparison below).
		rn := run(multilevel.GaussGibbsCorrNC(multilevel.GroupGibbs{}, "no-term-nc"), 20000, 3)
		zn, jn := gaussZ(rn, ref)
		zr, jr := gaussZ(rn, r)
		t.Logf("%+v, no-term-nc: largest |z| %.2f (θ%d) against NUTS, %.2f (θ%d) against the sweep; min bulk ESS %.0f", kit, zn, jn, zr, jr, minBulkESS(rn))
		if !(math.Abs(zn) < 4.5) || !(math.Abs(zr) < 4.5) {
			t.Errorf("%+v, no-term-nc: moments off: z = %.2f (θ%d) against NUTS, %.2f (θ%d) against the sweep", kit, zn, jn, zr, jr)
		}
		// The move's Jacobian τ^G one power short: against the exact
		// sweep's run, 4 × 40,000 draws.
		// (Its τ may drift to 0, where the run fails: caught too.)
		if rm, err := exactmh.Sample(ctx, p, multilevel.GaussGibbsCorrNC(multilevel.GroupGibbs{}, "term-nc-jacobian"),
			&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 40000, Seed: 4, Init: theta}); err != nil {
			t.Logf("%+v: mutant %q caught: the run fails: %.200s", kit, "term-nc-jacobian", err)
		} else if z, j := gaussZ(rm, r); math.Abs(z) < 6 {
			t.Errorf("%+v: mutant %q passes: z = %.2f (θ%d) against the exact sweep", kit, "term-nc-jacobian", z, j)
		} else {
			t.Logf("%+v: mutant %q caught: z = %.1f (θ%d) against the exact sweep", kit, "term-nc-jacobian", z, j)
		}
		if kit.slope || kit.flat {
			continue
		}
		for _, m := range []struct {
			name string
			k    multilevel.GroupGibbs
		}{
			{"σ⁻² shape (N − D)/2", multilevel.GaussGibbsSigmaShape(multilevel.GroupGibbs{}, -float64(2+kit.q()*kit.groups)/2)},
			{"precision M/σ for M/σ²", multilevel.GaussGibbsPrecSigma(multilevel.GroupGibbs{}, 1)},
		} {
			if z, j := gaussZ(run(m.k, 20000, 2), ref); math.Abs(z) < 4.5 {
				t.Errorf("mutant %q passes: z = %.2f (θ%d)", m.name, z, j)
			} else {
				t.Logf("mutant %q caught: z = %.1f (θ%d)", m.name, z, j)
			}
		}
	}
}

// minBulkESS returns the smallest bulk ESS of r's coordinates.
func minBulkESS(r *exactmh.Result) float64 {
	e := math.Inf(1)
	for j := range r.Dim {
		e = math.Min(e, diagnostics.ESSBulk(r.Samples(j)))
	}
	return e
}

// TestGaussGibbsSBC is simulation-based calibration of GroupGibbs's
// Gaussian sweep with every parameter unknown (β, each group's intercept
// and slope, both log τ, log σ; 200 replicates of N = 100 rows in 5
// groups): ranks uniform at Bonferroni level 10⁻³; the mutants of
// TestGaussGibbsMoments rejected at 0.01.
func TestGaussGibbsSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	kit := gaussKit{n: 100, groups: 5, slope: true}
	run := func(k multilevel.GroupGibbs) *mcmctest.SBCResult {
		r, err := mcmctest.SBC(kit, func(mcmctest.Problem) exactmh.Kernel { return k },
			&mcmctest.SBCOptions{Replicates: 200, Seed: 17, MaxThin: 400})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(multilevel.GroupGibbs{})
	t.Logf("SBC p-value %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(1e-3) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
	for name, k := range map[string]multilevel.GroupGibbs{
		"σ⁻² shape (N − D)/2":    multilevel.GaussGibbsSigmaShape(multilevel.GroupGibbs{}, -float64(2+kit.q()*kit.groups)/2),
		"precision M/σ for M/σ²": multilevel.GaussGibbsPrecSigma(multilevel.GroupGibbs{}, 1),
	} {
		m := run(k)
		t.Logf("mutant %q: SBC p-value %.3g", name, m.P)
		if !m.Reject(0.01) {
			t.Errorf("SBC misses the mutant %q: p = %.3g", name, m.P)
		}
	}
}

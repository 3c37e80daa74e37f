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
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlPoisKit is a one-factor multilevel Poisson regression with an offset:
// y_i ~ Poisson(e^{o_i + β_0 + β_1·x_i + u_g(i)(+ v_g(i)·x_i)}), o_i the
// log of an exposure in [0.5, 2] shifted by off (a negative off: low
// counts), x_i ~ N(0, xsd²) (xsd 0: 1), β ~ N(0, 1), u_g ~ N(0, τ²) (and,
// with slope, v_g ~ N(0, τ_v²)), τ ~ half-normal(max(tauSD, 1)), log τ
// sampled; groups of skewed sizes (group 0 holds half the data, the rest
// round robin). θ = (β_0, β_1, u_0 (v_0) … u_{G−1} (v_{G−1}), log τ (log
// τ_v)).
//
// With bare, the model has no fixed effects (θ = (u_0 … u_{G−1}, log τ),
// β taken as 0): each row touches one block, so its bound has no slack
// from B_i and the exponential factor is what keeps it valid.
type mlPoisKit struct {
	n, groups       int
	off, tauSD, xsd float64
	slope, bare     bool
}

// q returns the effects per group.
func (m mlPoisKit) q() int {
	if m.slope {
		return 2
	}
	return 1
}

func (m mlPoisKit) dim() int { return m.p() + (m.groups+1)*m.q() }

// p returns the fixed effects.
func (m mlPoisKit) p() int {
	if m.bare {
		return 0
	}
	return 2
}

// build returns the model's posterior for data drawn at θ.
func (m mlPoisKit) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{
		Family:    model.PoissonFamily{},
		Y:         make([]float64, m.n),
		Offset:    make([]float64, m.n),
		Intercept: true,
		Fixed:     []model.Covariate{{Name: "x", Values: make([]float64, m.n)}},
		FixedSD:   []float64{1, 0.5}, // Draw's prior: SBC needs θ* from the model's own
		Factors:   []model.Factor{{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(max(m.tauSD, 1))}},
	}
	x := ml.Fixed[0].Values
	if m.bare {
		ml.Intercept, ml.Fixed, ml.FixedSD = false, nil, nil
	}
	if m.slope {
		ml.Factors[0].Slopes = []model.Covariate{{Name: "x", Values: x}}
	}
	xsd := m.xsd
	if xsd == 0 {
		xsd = 1
	}
	q, p := m.q(), m.p()
	for i := range m.n {
		x[i] = xsd * rng.NormFloat64()
		ml.Offset[i] = m.off + math.Log(0.5+1.5*rng.Float64())
		g := i % m.groups
		if i >= m.n/2 {
			g = 0
		}
		ml.Factors[0].Index[i] = int32(g)
		z := ml.Offset[i] + theta[p+q*g]
		if !m.bare {
			z += theta[0] + theta[1]*x[i]
		}
		if m.slope {
			z += theta[p+1+q*g] * x[i]
		}
		ml.Y[i] = float64(poissonCount(rng, math.Exp(min(z, 8))))
	}
	return model.NewMultilevel(ml)
}

// poissonCount draws a Poisson(mu) count (mu ≤ e⁸) by inversion.
func poissonCount(rng *rand.Rand, mu float64) int {
	u, k := rng.Float64(), 0
	p := math.Exp(-mu)
	s := p
	for u > s && k < 100000 {
		k++
		p *= mu / float64(k)
		s += p
	}
	return k
}

// Draw implements mcmctest.Model: θ from the prior, y from the model.
func (m mlPoisKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	d, q, nf := m.dim(), m.q(), m.p()
	theta := make([]float64, d)
	if !m.bare {
		theta[0], theta[1] = rng.NormFloat64(), 0.5*rng.NormFloat64()
	}
	for k := range q {
		tau := max(m.tauSD, 1) * math.Abs(rng.NormFloat64())
		for g := range m.groups {
			theta[nf+q*g+k] = tau * rng.NormFloat64()
		}
		theta[d-q+k] = math.Log(tau)
	}
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// TestGroupGibbsPoissonStart checks that GroupGibbs starts on a Poisson
// multilevel model (its pair-wise bound) and, from the centre, accepts
// and thins most block updates.
func TestGroupGibbsPoissonStart(t *testing.T) {
	kit := mlPoisKit{n: 300, groups: 8}
	rng := rand.New(rand.NewPCG(3, 4))
	theta := make([]float64, kit.dim())
	theta[0], theta[1] = 0.3, 0.5
	for g := range kit.groups {
		theta[2+g] = 0.8 * rng.NormFloat64()
	}
	theta[kit.dim()-1] = math.Log(0.8)
	p, err := kit.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), p, multilevel.GroupGibbs{}, &exactmh.Settings{Chains: 1, Warmup: 200, Draws: 500, Seed: 1, Init: center})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Chains[0]
	if c.Params["block0_accept"] < 0.5 || c.Params["block_accept"] < 0.5 || c.Params["thinned"] < 0.5 {
		t.Errorf("Params %v: want most block updates accepted, most thinned", c.Params)
	}
	t.Logf("Params %v, data per sweep %.1f of N = %d", c.Params, res.Sampling().MeanBatch(), p.Len())
}

// TestGroupGibbsPoissonMoments compares GroupGibbs's posterior means and
// standard deviations with full-batch NUTS's on three multilevel Poisson
// regressions with an offset and τ unknown (its pair-wise bound,
// groupgibbs_growth.go, with the fixed block's cross-cubic control
// variate on the first two): one factor of 10 groups (N = 2000, group 0
// holding half the data); 30 small groups (N = 400, about 7 data each but
// group 0's 200) with every update thinned; and 200 groups of 10 data with
// no fixed effects and low counts (offsets near −6, τ ≈ 2.5: most groups'
// effects barely identified, their proposals reaching far above the
// centre, where e^z's growth is what the bound's exponential factor
// covers), against non-centred NUTS. Every mean is within 4.5 combined
// Monte Carlo standard errors, every SD ratio in [0.85, 1.18] ([0.7, 1.4]
// on the last, whose centred Gibbs sweeps mix the weakly identified
// effects slowly). Each mutant is caught (some |z| > 6, or an SD ratio
// outside [0.7, 1.4] on the first two): a stale expansion on the first,
// a bound that ignores the groups' blocks on the second, the bound
// without its exponential factor on the third (the other two's moves stay
// where the slack of B_i and of Cauchy–Schwarz covers e^A).
func TestGroupGibbsPoissonMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and GroupGibbs runs of 4 chains")
	}
	for _, c := range []struct {
		name    string
		kit     mlPoisKit
		seed    uint64
		b0, tau float64
		eb      int
		sdTol   float64
	}{
		{"one factor", mlPoisKit{n: 2000, groups: 10}, 5, 0.5, 0.7, 0, 1.18},
		{"small groups, all thinned", mlPoisKit{n: 400, groups: 30}, 17, -0.3, 1.2, -1, 1.18},
		{"no fixed effects, low counts", mlPoisKit{n: 2000, groups: 200, off: -6, tauSD: 2.5, bare: true}, 17, 0, 2.5, -1, 1.4},
	} {
		rng := rand.New(rand.NewPCG(c.seed, c.seed+1))
		d, nf := c.kit.dim(), c.kit.p()
		theta := make([]float64, d)
		if nf > 0 {
			theta[0], theta[1] = c.b0, 0.4
		}
		for g := range c.kit.groups {
			theta[nf+g] = c.tau * rng.NormFloat64()
		}
		theta[d-1] = math.Log(c.tau)
		p, err := c.kit.build(rng, theta)
		if err != nil {
			t.Fatal(err)
		}
		var rs *exactmh.Summary
		var mode, sd []float64
		switch c.eb {
		case 0:
			rs, mode, sd = nutsReference(t, p)
		default:
			if c.kit.bare {
				rs, mode, sd = poisNUTSReference(t, p, exactmh.NUTS{NonCentred: true}, 500, 2000)
			} else {
				rs, mode, sd = nutsReferenceLong(t, p, 1000, 5000)
			}
		}
		pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
		if c.kit.bare {
			// The weakly identified effects' reference means are far from
			// their modes: centre at the Laplace-EM centre, as the
			// automatic default does.
			if pb.Mode, _, err = multilevel.CenterOf(p); err != nil {
				t.Fatal(err)
			}
		}
		z, zn, lr, ln, res := gibbsMoments(t, p, gibbsKernel(pb, c.eb), rs, pb.Mode, 3000)
		t.Logf("%s: GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, %v",
			c.name, z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), res.Chains[0].Params)
		if math.Abs(z) > 4.5 || lr > math.Log(c.sdTol) {
			t.Errorf("%s: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", c.name, z, zn, lr, ln)
		}
		var mutants map[string]exactmh.Kernel
		switch {
		case c.kit.bare:
			mutants = map[string]exactmh.Kernel{"bound without its exponential factor": multilevel.GroupGibbsGrowthLoose(gibbsKernel(pb, c.eb))}
		case c.eb == 0:
			mutants = map[string]exactmh.Kernel{"stale expansion": multilevel.GroupGibbsStale(gibbsKernel(pb, c.eb), 0.05)}
		default:
			mutants = map[string]exactmh.Kernel{"bound ignores a block": multilevel.GroupGibbsFixedBlockOnly(gibbsKernel(pb, c.eb))}
		}
		for name, k := range mutants {
			z, zn, lr, ln, _ := gibbsMoments(t, p, k, rs, pb.Mode, 3000)
			reportMutant(t, c.name, name, math.Abs(z) > 6 || lr > math.Log(1.4) && !c.kit.bare, z, zn, lr, ln)
		}
	}
}

// TestGroupGibbsPoissonCrossed compares GroupGibbs's posterior means and
// SDs with full-batch NUTS's on a multilevel Poisson regression with two
// crossed factors (N = 1500, 8 × 6 levels, a random slope on the first):
// its rows touch three blocks, so the pair-wise bound carries one E_m
// per further factor (groupgibbs_growth.go) — valid, looser — with the
// same tolerances as TestGroupGibbsPoissonMoments.
func TestGroupGibbsPoissonCrossed(t *testing.T) {
	if testing.Short() {
		t.Skip("a NUTS reference and a GroupGibbs run of 4 chains")
	}
	p := mlCrossed{n: 1500, ga: 8, gb: 6, poisson: true}.posteriorAt(t, -0.5, 0.4, [3]float64{0.4, 0.3, 0.4})
	rs, mode, sd := poisNUTSReference(t, p, exactmh.NUTS{}, 300, 750)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, gibbsKernel(pb, 0), rs, mode, 3000)
	t.Logf("crossed: GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, %v",
		z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), res.Chains[0].Params)
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("crossed: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", z, zn, lr, ln)
	}
}

// TestGroupGibbsPoissonSBC runs simulation-based calibration with τ
// unknown on the one-factor multilevel Poisson regression with an offset
// (N = 200, 6 groups, every coordinate: β, u, log τ), with ExactBelow −1:
// each block's data thinned unless thinning would draw more than the
// block holds.
func TestGroupGibbsPoissonSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	gibbsSBC(t, mlPoisKit{n: 200, groups: 6}, -1, 9)
}

// poisNUTSReference is nutsReferenceLong with kernel k (NUTS, centred or
// not) started at the multilevel centre.
func poisNUTSReference(t *testing.T, p *exactmh.Posterior, k exactmh.NUTS, warmup, draws int) (*exactmh.Summary, []float64, []float64) {
	t.Helper()
	center, _, err := multilevel.CenterOf(p)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := exactmh.Sample(context.Background(), p, k,
		&exactmh.Settings{Chains: 4, Warmup: warmup, Draws: draws, Seed: 1, Init: center})
	if err != nil {
		t.Fatal(err)
	}
	rs := ref.Summary()
	d := p.Energy.Dim()
	mode, sd := make([]float64, d), make([]float64, d)
	for j, ps := range rs.Params {
		mode[j], sd[j] = ps.Mean, ps.SD
	}
	return rs, mode, sd
}

// reportMutant logs a caught mutant of problem with its largest |z| and
// SD ratio (parameters zn, ln), and fails the test on one that passes.
func reportMutant(t *testing.T, problem, name string, caught bool, z float64, zn string, lr float64, ln string) {
	t.Helper()
	if caught {
		t.Logf("%s: mutant %q caught: z = %.1f (%s), sd ratio e^±%.3f (%s)", problem, name, z, zn, lr, ln)
	} else {
		t.Errorf("%s: mutant %q passes: z = %.2f (%s), sd ratio e^±%.3f (%s)", problem, name, z, zn, lr, ln)
	}
}

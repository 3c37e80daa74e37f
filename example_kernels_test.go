// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// The examples below sample two small simulated posteriors.
//
// The logistic regression: 400 labelled points with two standard normal
// features and true coefficients (1, −1), a N(0, 10²) prior on each
// coefficient, no tempering. Its posterior mean is (1.00, −0.99) and its
// posterior standard deviations are about 0.14.
//
// The Gaussian mean on a box: 1000 points y_i ~ N(θ, 0.25²·I) in two
// dimensions whose sample mean is exactly (1, −1), a uniform prior on the box
// [0, 2] × [−2, 0] centred there, and the likelihood tempered by β = 1/N, as
// in the papers' truncated-Gaussian experiments, so that the posterior is as
// wide as one datum's likelihood: N((1, −1), 0.25²·I) truncated to the box,
// whose mean is exactly (1, −1) by symmetry. The box is the bounded support
// that PoissonMH and its gradient relatives need for an EnergyRange, and on
// which the Gaussian mean has the difference bound of TunaMH, TFMH and
// TunaMH-SGLD.
//
// The examples print posterior means to one decimal only where their Monte
// Carlo error is far below the rounding, so that the output is the same on
// every machine.

// simulateLogistic returns n data of a logistic regression with
// coefficients w: features x_ij ~ N(0, 1) (row-major) and labels y_i ∈ {0, 1}
// with P(y_i = 1) = σ(x_iᵀw).
func simulateLogistic(n int, w []float64, seed uint64) (x, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	d := len(w)
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * w[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return x, y
}

// simulateGaussian returns n points y_i ~ N(mu, sd²·I) (row-major), shifted
// so that their sample mean is exactly mu.
func simulateGaussian(n int, mu []float64, sd float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := len(mu)
	y := make([]float64, n*d)
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			y[i*d+j] = mu[j] + sd*rng.NormFloat64()
			mean[j] += y[i*d+j] / float64(n)
		}
	}
	for i := range n {
		for j := range d {
			y[i*d+j] += mu[j] - mean[j]
		}
	}
	return y
}

// logisticPosterior returns the logistic-regression posterior of the
// examples.
func logisticPosterior() *exactmh.Posterior {
	x, y := simulateLogistic(400, []float64{1, -1}, 41)
	e, err := model.NewLogisticRegression(x, y, 2)
	if err != nil {
		panic(err)
	}
	prior, _ := model.NewIsoGaussian(2, 10)
	return &exactmh.Posterior{Energy: e, Prior: prior}
}

// boxedGaussianPosterior returns the tempered Gaussian-mean posterior on a
// box of the examples.
func boxedGaussianPosterior() *exactmh.Posterior {
	const n = 1000
	y := simulateGaussian(n, []float64{1, -1}, 0.25, 1)
	e, err := model.NewGaussianMean(y, 2, mat.NewSymDense(2, []float64{0.0625, 0, 0, 0.0625}))
	if err != nil {
		panic(err)
	}
	box, _ := model.NewBox([]float64{0, -2}, []float64{2, 0})
	return &exactmh.Posterior{Energy: e, Prior: box, Beta: 1.0 / n}
}

// Full-batch Metropolis–Hastings, the reference every minibatch kernel is
// measured against: each step reads all N data.
func ExampleMH() {
	// The logistic-regression posterior (logisticPosterior builds the same).
	x, y := simulateLogistic(400, []float64{1, -1}, 41)
	e, err := model.NewLogisticRegression(x, y, 2)
	if err != nil {
		panic(err)
	}
	prior, _ := model.NewIsoGaussian(2, 10)
	post := &exactmh.Posterior{Energy: e, Prior: prior}

	// MH{} is a Gaussian random walk whose step scale warmup adapts toward
	// Settings.TargetAccept (0: the kernel's default, 0.234 for MH). Chain c draws from PCG(Seed, c).
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Seed: 1}
	res, err := exactmh.Sample(context.Background(), post, exactmh.MH{}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling() // cost and acceptance, summed over chains
	m := res.Mean()
	fmt.Printf("%s (exact %v): %.0f datum evaluations per step\n", res.Kernel, res.Exact, tot.EvalsPerStep())
	fmt.Println("acceptance in (0.15, 0.35):", tot.AcceptRate() > 0.15 && tot.AcceptRate() < 0.35)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// MH (exact true): 400 datum evaluations per step
	// acceptance in (0.15, 0.35): true
	// posterior mean (1.0, -1.0)
}

// MALA proposes from the full-data gradient. The energy must implement
// Gradienter and the prior PriorGradienter, as the ready-made ones do.
func ExampleMALA() {
	post := logisticPosterior() // as in ExampleMH
	// 0.574 is MALA's optimal acceptance rate (Roberts and Rosenthal 1998).
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 3000, Seed: 1, TargetAccept: 0.574}
	res, err := exactmh.Sample(context.Background(), post, exactmh.MALA{}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s: %.0f energy and %.0f gradient evaluations per step\n", res.Kernel,
		tot.EvalsPerStep(), float64(tot.GradEvals)/float64(tot.Steps))
	fmt.Println("acceptance in (0.4, 0.8):", tot.AcceptRate() > 0.4 && tot.AcceptRate() < 0.8)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// MALA: 400 energy and 400 gradient evaluations per step
	// acceptance in (0.4, 0.8): true
	// posterior mean (1.0, -1.0)
}

// HMC makes Steps leapfrog steps per transition, each reading the gradient
// of every datum.
func ExampleHMC() {
	post := logisticPosterior() // as in ExampleMH
	// The trajectory length Steps·ε is not jittered. The posterior standard
	// deviations here are about 0.14, so three steps already travel half an
	// orbit; the default ten would make trajectories nearly periodic and mix
	// badly. 0.65 is HMC's optimal acceptance rate (Beskos et al. 2013).
	set := &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 1000, Seed: 1, TargetAccept: 0.65}
	res, err := exactmh.Sample(context.Background(), post, exactmh.HMC{Steps: 3}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s: %.0f gradient evaluations per step\n", res.Kernel, float64(tot.GradEvals)/float64(tot.Steps))
	fmt.Println("acceptance in (0.5, 0.9):", tot.AcceptRate() > 0.5 && tot.AcceptRate() < 0.9)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// HMC: 1200 gradient evaluations per step
	// acceptance in (0.5, 0.9): true
	// posterior mean (1.0, -1.0)
}

// NUTS builds each trajectory until it turns back on itself, so there is
// no trajectory length to tune: warmup adapts the step size (to a mean
// acceptance statistic of 0.8, Stan's adapt_delta) and, in Stan's
// windows, a diagonal metric. Every leapfrog step reads all N data.
func ExampleNUTS() {
	post := logisticPosterior() // as in ExampleMH
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 1000, Seed: 1}
	res, err := exactmh.Sample(context.Background(), post, exactmh.NUTS{}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	var depth, stat float64
	for _, ch := range res.Chains {
		for _, in := range ch.Infos {
			depth += float64(in.TreeDepth) / float64(tot.Steps)
			stat += in.AcceptProb / float64(tot.Steps)
		}
	}
	s := res.Summary("theta1", "theta2")
	fmt.Printf("%s: target %.1f, mean acceptance statistic in (0.7, 0.95): %v\n", res.Kernel, res.Settings.TargetAccept, stat > 0.7 && stat < 0.95)
	fmt.Printf("mean tree depth in (1, 4): %v, divergences: %d\n", depth > 1 && depth < 4, tot.Divergent)
	fmt.Println("metric:", res.Chains[0].Metric.Kind())
	fmt.Println("bulk ESS above half the draws:", s.Params[0].ESSBulk > 2000 && s.Params[1].ESSBulk > 2000)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", s.Params[0].Mean, s.Params[1].Mean)
	// Output:
	// NUTS: target 0.8, mean acceptance statistic in (0.7, 0.95): true
	// mean tree depth in (1, 4): true, divergences: 0
	// metric: diag
	// bulk ESS above half the draws: true
	// posterior mean (1.0, -1.0)
}

// TunaMH needs a difference bound |βU_i(θ) − βU_i(θ′)| ≤ c_i·M(θ, θ′),
// which the ready-made energies supply (Posterior.DiffBound): everywhere for
// the regressions, on a bounded support such as this box for the Gaussian
// mean. Its batch is a Poisson count of mean χC²M² + CM, C = Σc_i and M the
// proposal's length, not N.
func ExampleTunaMH() {
	post := boxedGaussianPosterior() // as in ExamplePoissonMH
	// Chi 0 starts χ at the paper's heuristic; halfway through warmup a
	// search chooses it, or switches a chain to full-batch MH where MH is
	// predicted faster (Params "as_mh"), and χ then stays fixed. The origin
	// lies outside the box, so the chains start at Init.
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Thin: 5, Seed: 1, Init: []float64{1, -1}}
	res, err := exactmh.Sample(context.Background(), post, exactmh.TunaMH{}, set)
	if err != nil {
		panic(err)
	}
	m := res.Mean()
	fmt.Printf("%s (exact %v): C = %.1f\n", res.Kernel, res.Exact, res.Chains[0].Params["C"])
	var asMH, k int
	var batch float64
	for _, c := range res.Chains {
		if c.Params["as_mh"] == 1 {
			asMH++
			continue
		}
		batch += c.Sampling.MeanBatch()
		k++
	}
	fmt.Printf("chains switched to full-batch MH: %d of %d\n", asMH, len(res.Chains))
	fmt.Printf("the others' mean batch below 5%% of N = %d: %v\n", res.N, batch/float64(k) < 0.05*float64(res.N))
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// TunaMH (exact true): C = 27.2
	// chains switched to full-batch MH: 1 of 4
	// the others' mean batch below 5% of N = 1000: true
	// posterior mean (1.0, -1.0)
}

// PoissonMH needs an EnergyRange, every βU_i bounded on the prior's support:
// here a Gaussian mean on a box, tempered. A step draws a Poisson number of
// data with mean λ + L, L the sum of the ranges' widths and
// λ = LambdaScale·L² (proposals outside the box are rejected before any
// datum is read).
func ExamplePoissonMH() {
	// The Gaussian-mean posterior (boxedGaussianPosterior builds the same):
	// 1000 points with covariance 0.25²·I, a uniform prior on a box, and β = 1/N.
	const n = 1000
	y := simulateGaussian(n, []float64{1, -1}, 0.25, 1)
	e, err := model.NewGaussianMean(y, 2, mat.NewSymDense(2, []float64{0.0625, 0, 0, 0.0625}))
	if err != nil {
		panic(err)
	}
	box, _ := model.NewBox([]float64{0, -2}, []float64{2, 0})
	post := &exactmh.Posterior{Energy: e, Prior: box, Beta: 1.0 / n}

	r, err := post.EnergyRange() // what PoissonMH uses, untempered
	if err != nil {
		panic(err)
	}
	var l float64 // L = Σ_i M_i with M_i = β·Width_i: the kernel applies β
	for _, w := range r.Width {
		l += post.Beta * w
	}
	k := exactmh.PoissonMH{LambdaScale: 0.01}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Thin: 5, Seed: 1, Init: []float64{1, -1}}
	res, err := exactmh.Sample(context.Background(), post, k, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s: L = %.1f, λ = %.1f\n", res.Kernel, l, res.Chains[0].Params["lambda"])
	fmt.Println("mean batch below λ + L:", tot.MeanBatch() < l+res.Chains[0].Params["lambda"])
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// PoissonMH: L = 23.2, λ = 5.4
	// mean batch below λ + L: true
	// posterior mean (1.0, -1.0)
}

// TFMH, truncated factorised MH, needs the same bound as TunaMH and accepts
// only if every datum it draws does: it stops reading at the first rejection
// and needs small steps.
func ExampleTFMH() {
	post := boxedGaussianPosterior() // as in ExamplePoissonMH
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Thin: 10, Seed: 1, Init: []float64{1, -1}}
	// By default TFMH compares itself with full-batch MH halfway through
	// warmup, and a chain that finds MH faster runs as MH and says so; on
	// this tempered posterior TFMH wins and every chain keeps it.
	res, err := exactmh.Sample(context.Background(), post, exactmh.TFMH{}, set)
	if err != nil {
		panic(err)
	}
	asMH := 0
	for _, ch := range res.Chains {
		if ch.Params["as_mh"] == 1 {
			asMH++
		}
	}
	fmt.Printf("default: %d of 4 chains ran as MH, %.0f data per step\n", asMH, res.Sampling().EvalsPerStep())
	// KeepMinibatch shows the kernel itself: a few data per step.
	res, err = exactmh.Sample(context.Background(), post, exactmh.TFMH{KeepMinibatch: true}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s (exact %v): fewer than 10 data per step: %v\n", res.Kernel, res.Exact, tot.EvalsPerStep() < 10)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// default: 0 of 4 chains ran as MH, 5 data per step
	// TFMH (exact true): fewer than 10 data per step: true
	// posterior mean (1.0, -1.0)
}

// SMH is TFMH with Taylor control variates around a centre, typically the
// MAP. Near the centre the remainders are tiny, so most steps read no datum
// at all.
func ExampleSMH() {
	post := logisticPosterior() // as in ExampleMH
	mp, err := exactmh.FindMAP(context.Background(), post, []float64{0, 0}, nil)
	if err != nil {
		panic(err)
	}
	// SMH-2: second-order control variates, O(N) extra memory for the
	// ready-made regressions. The chains start at the MAP too.
	k := exactmh.SMH{Order: 2, Center: mp.Theta}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 1, Init: mp.Theta}
	res, err := exactmh.Sample(context.Background(), post, k, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s (exact %v): less than one datum per step: %v\n", res.Kernel, res.Exact, tot.EvalsPerStep() < 1)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// SMH-2 (exact true): less than one datum per step: true
	// posterior mean (1.0, -1.0)
}

// FlyMC with lower bounds tight at the MAP (FlyMC-MAP): a θ-step reads only
// the "bright" data, and a z-step proposes to brighten a fraction Q of the
// dark ones.
func ExampleFlyMC() {
	post := logisticPosterior() // as in ExampleMH
	mp, err := exactmh.FindMAP(context.Background(), post, []float64{0, 0}, nil)
	if err != nil {
		panic(err)
	}
	k := exactmh.FlyMC{TightAt: mp.Theta, Q: 0.1}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 3000, Seed: 1, Init: mp.Theta}
	res, err := exactmh.Sample(context.Background(), post, k, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	// Info.Batch counts the bright data; Evals both steps, about Q·N for
	// the z-step (Info.AuxEvals).
	fmt.Printf("%s (exact %v): fewer than 5 bright data: %v\n", res.Kernel, res.Exact, tot.MeanBatch() < 5)
	fmt.Println("evaluations per step below N/5:", tot.EvalsPerStep() < float64(res.N)/5)
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// FlyMC-MAP (exact true): fewer than 5 bright data: true
	// evaluations per step below N/5: true
	// posterior mean (1.0, -1.0)
}

// Poisson-Barker: PoissonMH's Poisson counts also estimate the gradient,
// which drives a Barker proposal. It needs an EnergyRange and gradients.
func ExamplePoissonBarker() {
	post := boxedGaussianPosterior() // as in ExamplePoissonMH
	// The auxiliary-variable paper tunes it to acceptance 0.25–0.55.
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Seed: 1, Init: []float64{1, -1}, TargetAccept: 0.55}
	res, err := exactmh.Sample(context.Background(), post, exactmh.PoissonBarker{}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s (exact %v): mean batch below 5%% of N: %v\n", res.Kernel, res.Exact, tot.MeanBatch() < 0.05*float64(res.N))
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// Poisson-Barker (exact true): mean batch below 5% of N: true
	// posterior mean (1.0, -1.0)
}

// Poisson-MALA: the same Poisson-count gradient in a Langevin proposal.
func ExamplePoissonMALA() {
	post := boxedGaussianPosterior() // as in ExamplePoissonMH
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Seed: 1, Init: []float64{1, -1}, TargetAccept: 0.55}
	res, err := exactmh.Sample(context.Background(), post, exactmh.PoissonMALA{}, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	fmt.Printf("%s (exact %v): mean batch below 5%% of N: %v\n", res.Kernel, res.Exact, tot.MeanBatch() < 0.05*float64(res.N))
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// Poisson-MALA (exact true): mean batch below 5% of N: true
	// posterior mean (1.0, -1.0)
}

// TunaMH-SGLD: a stochastic-gradient Langevin proposal from K data drawn
// without replacement, made exact by TunaMH's minibatch test. χ must be
// set; the energy needs a difference bound and gradients.
func ExampleTunaMHSGLD() {
	post := boxedGaussianPosterior() // as in ExamplePoissonMH
	k := exactmh.TunaMHSGLD{Chi: 0.01, GradBatch: 20}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Thin: 2, Seed: 1, Init: []float64{1, -1}, TargetAccept: 0.5}
	res, err := exactmh.Sample(context.Background(), post, k, set)
	if err != nil {
		panic(err)
	}
	tot := res.Sampling()
	m := res.Mean()
	// 2K gradients per step: K at θ for the proposal, K at θ′ for the
	// reverse move (none when θ′ leaves the box).
	fmt.Printf("%s (exact %v): at most 2K = 40 gradients per step: %v\n", res.Kernel, res.Exact, tot.GradEvals <= 40*int64(tot.Steps))
	fmt.Println("mean batch below 5% of N:", tot.MeanBatch() < 0.05*float64(res.N))
	fmt.Printf("posterior mean (%.1f, %.1f)\n", m[0], m[1])
	// Output:
	// TunaMH-SGLD (exact true): at most 2K = 40 gradients per step: true
	// mean batch below 5% of N: true
	// posterior mean (1.0, -1.0)
}

// fullDataMH is an AuxScheme without auxiliary variables (ω1 and ω2 are
// empty structs): a Gaussian random walk whose log ratio is the exact
// full-data log-likelihood ratio. Through Aux it is Metropolis–Hastings.
// Real schemes keep a minibatch or Poisson counts in ω1 and ω2, in storage
// their chain owns, so that a step allocates nothing.
type fullDataMH struct{}

func (fullDataMH) Name() string { return "MH via Aux" }

func (fullDataMH) Start(t *exactmh.Target, _ []float64) (exactmh.AuxChain[struct{}, struct{}], error) {
	c := &fullDataMHChain{t: t, idx: make([]int, t.N()), diff: make([]float64, t.N())}
	for i := range c.idx {
		c.idx[i] = i
	}
	return c, nil
}

type fullDataMHChain struct {
	t    *exactmh.Target // counts every datum evaluation
	idx  []int           // all the data: 0, …, N−1
	diff []float64       // βU_i(θ) − βU_i(θ′)
}

func (c *fullDataMHChain) DrawOmega1(*rand.Rand, []float64) (struct{}, error) {
	return struct{}{}, nil
}

func (c *fullDataMHChain) Propose(rng *rand.Rand, next, theta []float64, _ struct{}, scale float64) (float64, error) {
	for j, v := range theta {
		next[j] = v + scale*rng.NormFloat64()
	}
	return 0, nil // symmetric: log q(θ′, θ) − log q(θ, θ′) = 0
}

func (c *fullDataMHChain) DrawOmega2(*rand.Rand, []float64, []float64, struct{}) (struct{}, error) {
	return struct{}{}, nil
}

// LogRatio returns log L(θ′) − log L(θ) = Σ_i β(U_i(θ) − U_i(θ′)): the
// random walk is symmetric, and Aux adds the prior ratio itself.
func (c *fullDataMHChain) LogRatio(theta, next []float64, _, _ struct{}, _ float64) (float64, error) {
	if err := c.t.EnergyDiffs(c.diff, theta, next, c.idx); err != nil {
		return 0, err
	}
	var s float64
	for _, d := range c.diff {
		s += d
	}
	return s, nil
}

func (c *fullDataMHChain) Report(info exactmh.Info) exactmh.Info {
	info.Batch, info.Distinct = c.t.N(), c.t.N()
	return info
}

// Aux is the auxiliary-variable framework (Algorithm 4 of its paper) as a
// Kernel: an AuxScheme supplies ω1, the proposal, ω2 and the log ratio; Aux
// applies the prior exactly and accepts. Written through it, full-batch MH
// (the fullDataMH scheme of this file) makes the same draws as MH.
func ExampleAux() {
	post := logisticPosterior() // as in ExampleMH
	// A fixed step scale: with warmup adaptation the two kernels' rounding
	// differences (a sum of differences against a difference of sums) would
	// make their adapted scales differ in the ninth digit.
	set := &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 2000, Seed: 1, NoAdapt: true}
	res, err := exactmh.Sample(context.Background(), post, exactmh.Aux[struct{}, struct{}]{Scheme: fullDataMH{}, Scale: 0.35}, set)
	if err != nil {
		panic(err)
	}
	ref, err := exactmh.Sample(context.Background(), post, exactmh.MH{Scale: 0.35}, set)
	if err != nil {
		panic(err)
	}
	same := true
	for c, ch := range res.Chains {
		for k, v := range ch.Draws {
			same = same && v == ref.Chains[c].Draws[k]
		}
	}
	fmt.Printf("%s (exact %v): mean batch %.0f\n", res.Kernel, res.Exact, res.Sampling().MeanBatch())
	fmt.Println("the same draws as MH:", same)
	// Output:
	// MH via Aux (exact true): mean batch 400
	// the same draws as MH: true
}

// Fixed-time runs: with Settings.Duration each chain samples for that much
// wall time after warmup, and Draws 0 means as many draws as fit. The
// number of draws then depends on the machine and its load (a chain makes
// at least one): compare kernels by ESS per second
// (Summary.MinESSPerSecond, per second of a chain's wall time).
func ExampleSample_duration() {
	post := logisticPosterior() // as in ExampleMH
	set := &exactmh.Settings{Chains: 2, Warmup: 500, Duration: 100 * time.Millisecond, Seed: 1}
	res, err := exactmh.Sample(context.Background(), post, exactmh.MH{}, set)
	if err != nil {
		panic(err)
	}
	fmt.Println("status:", res.Status)
	for _, ch := range res.Chains {
		fmt.Printf("chain %d sampled for the whole budget: %v, at least one draw: %v\n",
			ch.Chain, ch.Sampling.Time >= set.Duration, ch.Len() >= 1)
	}
	// Output:
	// status: completed
	// chain 0 sampled for the whole budget: true, at least one draw: true
	// chain 1 sampled for the whole budget: true, at least one draw: true
}

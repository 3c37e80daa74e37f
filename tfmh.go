// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/vec"
)

// TFMH is truncated factorised Metropolis–Hastings (Cornish et al. 2019,
// "Scalable Metropolis–Hastings for exact Bayesian inference with large
// datasets", without control variates; TunaMH paper §2.2). It is exact.
//
// Factorised MH accepts with the product of one MH factor per datum,
// Π_i min(1, e^{−ΔU_i}) with ΔU_i = βU_i(θ′) − βU_i(θ), times the factor of
// the prior and proposal, min(1, prior(θ′)q(θ|θ′)/(prior(θ)q(θ′|θ))): each
// factor is reversible, so their product is. TFMH decides it by Poisson
// thinning: K ~ Poisson(CM) data drawn ∝ c_i (C = Σc_i, M = M(θ, θ′) from
// the DiffBound), each rejecting with probability max(0, ΔU_i)/(c_iM); the
// first rejection ends the step.
//
// The product of per-datum factors can be exponentially smaller than MH's
// acceptance (App. C, Statement 1: e^{−M/2} where MH accepts surely), so TFMH
// needs tiny steps and mixes slowly on most problems; it is here as the
// baseline the TunaMH paper compares with. When the expected batch CM
// exceeds MaxRate the step is a full MH step instead ("truncation"),
// decided from M alone so the chain stays exact.
type TFMH struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// Bound is the difference bound, in the untempered energy's units as
	// Posterior.DiffBound returns it; the kernel multiplies it by β (nil:
	// the posterior's).
	Bound *DiffBound
	// TrustBound skips the audit of the bound at Start: every datum at θ0
	// and a few proposals from it (see the package documentation,
	// "Bounds"). Set it only for a bound known to hold; steps still check
	// every datum they draw.
	TrustBound bool
	// MaxRate is the expected batch CM above which the step is full MH
	// (0: N; +Inf: never).
	MaxRate float64
	// KeepMinibatch keeps the minibatch steps even where the mid-warmup
	// comparison predicts full-batch MH faster (the default then runs as
	// MH and says so: see TunaMH); for studies of the kernel itself.
	KeepMinibatch bool

	// Test hooks (export_test.go), nil in every real kernel: the datum's
	// energy increase βU_i(θ′) − βU_i(θ) from diff = βU_i(θ) − βU_i(θ′)
	// (nil: −diff), and the log prior-and-proposal factor (nil: itself).
	increase    func(diff float64) float64
	priorFactor func(logExact float64) float64
}

// Name returns "TFMH".
func (TFMH) Name() string { return "TFMH" }

// Exact returns true.
func (TFMH) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's optimal rate
// (Roberts, Gelman and Gilks 1997), which no other rate clearly beats for
// TFMH within the ESS estimates' noise; TestTargetAcceptSweep (go test -run
// TestTargetAcceptSweep -sweep TFMH -v .) measures bulk ESS per datum
// evaluation across target rates.
func (TFMH) DefaultTargetAccept() float64 { return 0.234 }

// Start checks the bound and builds the chain's alias table.
func (k TFMH) Start(t *Target, theta0 []float64) (Chain, error) {
	w, err := newWalk("TFMH", t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	w.full = newFullEnergies(t.Dim())
	if k.MaxRate < 0 || math.IsNaN(k.MaxRate) {
		return nil, fmt.Errorf("TFMH: MaxRate = %v, want ≥ 0 (0: N, +Inf: never fall back)", k.MaxRate)
	}
	b, err := diffBound("TFMH", t, k.Bound)
	if err != nil {
		return nil, err
	}
	var draws *boundDraws
	if err := auditWhileBuilding(t.N(), func() error {
		return w.audit(k.TrustBound, b.auditKey(), diffAudit(b))
	}, func() (err error) {
		draws, err = newBoundDraws("TFMH", "bound constants c_i (DiffBound.C)", b, t, false)
		return err
	}); err != nil {
		return nil, err
	}
	c := &tfmhChain{walk: w, bound: b, draws: draws, sumC: draws.total, maxRate: k.MaxRate,
		seen: newDistinct(), increase: k.increase, priorFactor: k.priorFactor}
	if r, ok := denseLogistic(t.Energy()); ok {
		c.lx, c.lx32, c.ly = r.X, r.X32, r.Y
	}
	c.mem = memRows(t.Energy())
	if c.maxRate == 0 {
		c.maxRate = float64(t.N())
	}
	if !k.KeepMinibatch {
		c.rival = newMHRival(t.Dim())
	}
	if c.priorFactor == nil {
		c.priorFactor = func(logExact float64) float64 { return logExact }
	}
	return c, nil
}

type tfmhChain struct {
	walk
	rival   *mhRival // nil with KeepMinibatch
	bound   *DiffBound
	draws   *boundDraws // ∝ c_i, and c_i
	sumC    float64
	maxRate float64 // the expected batch above which a step is full MH (asMHRate: every step)

	idx         [batchChunk]int
	diff        [batchChunk]float64
	ahead       [tfmhAhead]int     // a group of data drawn ahead (Step)
	coins       [tfmhAhead]float64 // and their thinning uniforms
	m           float64            // the step's M(θ, θ′)
	sink        float64            // prefetch's sum of what it read (see prefetch.Data)
	seen        distinct
	increase    func(diff float64) float64 // nil: −diff
	priorFactor func(logExact float64) float64

	// The rows (lx or lx32) and labels of a logistic DenseGLM
	// (denseLogistic): energyDiff computes their difference inline, bit for
	// bit model.LogisticRegression's EnergyDiffs, without the call through
	// the interface and its batch machinery for a batch of one.
	lx   []float64
	lx32 []float32
	ly   []float64
	// The rows and responses of the package's GLMs that keep them in
	// memory (memRows), which prefetch reads.
	mem rowStore
}

// tfmhAhead is how many data TFMH's step draws, and prefetches, before
// evaluating them, as smhAhead for SMH: enough misses in flight to cover
// most of a row's latency, few enough that a rejection early in the group
// wastes little.
const tfmhAhead = 16

// prefetch starts loading the bound constants c_i of the data idx and, for
// the package's GLMs with rows in memory, their rows and responses
// (internal/prefetch), so that their cache misses overlap instead of being
// met one datum at a time. What prefetch returns is stored in c.sink.
// Compact c_i are not prefetched: drawing the data read them.
func (c *tfmhChain) prefetch(idx []int) {
	c.sink = c.mem.prefetch(len(c.theta), idx)
	if c.draws.c != nil {
		c.sink += float64(prefetch.Rows(c.draws.c, 1, 1, idx))
	}
}

// energyDiff returns β(U_i(θ) − U_i(θ′)) of datum i for the step's θ, θ′,
// bit for bit Target.EnergyDiffs on the one datum, counted as it counts
// it and with its error for a value that is not finite. A logistic
// DenseGLM is computed inline (logit.EnergyDiff, model.LogisticRegression's
// EnergyDiffs' expression); other energies go through the Target without
// its check of the arguments, which hold by construction (θ, θ′ are the
// chain's, i is drawn from the alias table over [0, N)).
func (c *tfmhChain) energyDiff(i int) (float64, error) {
	var v float64
	switch {
	case c.lx != nil:
		c.t.evals++
		d := len(c.theta)
		z, zn := vec.Dot2(c.lx[i*d:(i+1)*d], c.theta, c.next)
		v = logit.EnergyDiff(z, zn, math.Exp(-math.Abs(z)), math.Exp(-math.Abs(zn)), c.ly[i])
	case c.lx32 != nil:
		c.t.evals++
		d := len(c.theta)
		z, zn := vec.Dot2Conv(c.lx32[i*d:(i+1)*d], c.theta, c.next)
		v = logit.EnergyDiff(z, zn, math.Exp(-math.Abs(z)), math.Exp(-math.Abs(zn)), c.ly[i])
	default:
		c.idx[0] = i
		err := c.t.energyDiffs(c.diff[:1], c.theta, c.next, c.idx[:1])
		return c.diff[0], err
	}
	// As Target.temperDiffs.
	v *= c.t.beta
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, newEnergyError(i, c.theta, c.next, v)
	}
	return v, nil
}

// midWarmup switches the chain to full-batch MH, halfway through warmup,
// if MH is predicted faster (mhRival).
func (c *tfmhChain) midWarmup(warmup Totals, _ bool) (warmupTurn, error) {
	if c.rival == nil {
		return warmupTurn{}, nil
	}
	scale, switched, err := c.rival.compare(&c.walk, c.t, warmup, minibatchStepCost)
	if switched {
		c.maxRate = asMHRate // every step a full MH step
	}
	return restartAt(scale, switched), err
}

// Params reports C = Σc_i and, when warmup switched the chain to MH, the
// switch.
func (c *tfmhChain) Params() map[string]float64 {
	return c.rival.params(map[string]float64{"C": c.sumC})
}

// MarshalState saves the switch to MH (nothing without one).
func (c *tfmhChain) MarshalState() ([]byte, error) { return c.rival.saveSwitch() }

// UnmarshalState restores it.
func (c *tfmhChain) UnmarshalState(b []byte) error {
	asMH, err := c.rival.restoreSwitch(b)
	if asMH {
		c.maxRate = asMHRate
	}
	return err
}

// Step makes one TFMH transition.
func (c *tfmhChain) Step(rng *rand.Rand) (Info, error) {
	// Propose; the prior is exact and rejects outside its support first.
	logExact, ok := c.propose(rng)
	if !ok {
		return Info{LogDensity: math.NaN()}, nil
	}
	m := c.bound.M(c.theta, c.next)
	rate := c.sumC * m // E[K] = CM
	if !(rate >= 0) {
		return Info{}, fmt.Errorf("expected batch CM = %v (C = %v, M = %v) at θ = %v, θ′ = %v", rate, c.sumC, m, c.theta, c.next)
	}
	// The factorised step, with a full MH step where CM exceeds MaxRate,
	// and also where M is +Inf, as a pair-wise bound's can be far from its
	// centre (growthDistance), whatever MaxRate
	// (TestPoissonGrowthFarSteps).
	c.m = m
	return c.factorised(rng, c, logExact, rate, c.maxRate, &c.seen, c.ahead[:], c.coins[:], &c.idx, &c.diff)
}

// firstFactor returns TFMH's first factor: the prior and proposal's.
func (c *tfmhChain) firstFactor(logExact float64) (float64, int, error) {
	return c.priorFactor(logExact), 0, nil
}

// draw draws the data ∝ c_i and their thinning uniforms.
func (c *tfmhChain) draw(rng *rand.Rand, group []int, coins []float64) {
	c.draws.drawInto(rng, group, coins) // coins as scratch, then drawn
	for k := range coins {
		coins[k] = rng.Float64()
	}
}

// datumFactor returns datum i's energy increase ΔU_i = βU_i(θ′) − βU_i(θ),
// whose factor is min(1, e^{−ΔU_i}), and its bound m_i = c_i·M.
func (c *tfmhChain) datumFactor(i int) (float64, float64, error) {
	diff, err := c.energyDiff(i) // βU_i(θ) − βU_i(θ′)
	if err != nil {
		return 0, 0, err
	}
	du := -diff
	if c.increase != nil {
		du = c.increase(diff)
	}
	mi := c.draws.at(i) * c.m
	if math.Abs(du) > mi*(1+boundTol) {
		return 0, 0, diffViolation(i, du, mi, c.theta, c.next)
	}
	return du, mi, nil
}

// A TFMH transition changes the chain only once decided: a cancelled
// full-batch step (fullMHStep) or minibatch leaves it as it was.
func (c *tfmhChain) interruptible() bool { return true }
func (c *tfmhChain) abandonStep()        {}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ stepInterrupter = (*tfmhChain)(nil)
	_ factorisedChain = (*tfmhChain)(nil)

	_ Kernel        = TFMH{}
	_ AcceptTarget  = TFMH{}
	_ driverChain   = (*tfmhChain)(nil)
	_ ParamReporter = (*tfmhChain)(nil)
	_ midWarmuper   = (*tfmhChain)(nil)
	_ fullMemoer    = (*tfmhChain)(nil)
)

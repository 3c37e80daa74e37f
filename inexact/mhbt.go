// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/logit"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// MHBT is Metropolis–Hastings with batch tempering (Wu, Wang and Wong,
// "Mini-batch Metropolis–Hastings MCMC with reversible SGLD proposal",
// Algorithm 1). It is INEXACT by design: its stationary law is
// approximately the posterior raised to the power 1/T, T = N/c_n (eq. 3),
// a tempered posterior c_n/N times as concentrated in log density — plus a
// bias that vanishes only as d·c_n^{2+α}·log c_n/m → 0. Use it for what it
// is for (exploring multimodal posteriors, optimisation-like sampling of
// large models), not for posterior expectations.
//
// The state is (θ, I), I a batch of m data. A step draws a fresh batch I′
// and θ′ ~ q_I(θ → ·) and accepts (θ′, I′) with probability
//
//	min{1, e^{c_n μ̂_{I′}(θ′)}·q_{I′}(θ′ → θ) / (e^{c_n μ̂_I(θ)}·q_I(θ → θ′))}   (eq. 2/8),
//
// μ̂_I(θ) the mean log-likelihood −βU_i(θ) over I (the prior enters as
// prior^{c_n/N}, tempered with the likelihood). On rejection the chain keeps
// (θ, I) and the cached μ̂_I(θ): θ is never re-evaluated on a new batch (the
// paper's reference code does that, which changes the stationary law).
//
// The proposal is the random walk (Proposal, Scale), or, with RSGLD set, the
// reversible SGLD proposal of eq. (6)–(7) with learning rate Scale, or, with
// SGLD set, the plain SGLD proposal of eq. (5), the
// baseline of the paper's Fig. 1.
type MHBT struct {
	// BatchSize is m (0: 1000, capped at N).
	BatchSize int
	// Cn is c_n > 0, the batch tempering constant (0: 20, the paper's value
	// for m = 1000; it recommends a value close to but below √m).
	Cn float64
	// Proposal draws θ′ when RSGLD is false (nil: the isotropic RandomWalk).
	Proposal exactmh.Proposal
	// Scale is the random walk's scale, or RSGLD's learning rate ε
	// (0: 0.1); warmup adapts it unless Settings.NoAdapt.
	Scale float64
	// RSGLD selects the reversible SGLD proposal (needs gradients).
	RSGLD bool
	// SGLD selects the plain SGLD proposal of eq. (5) (needs gradients;
	// not with RSGLD): the forward move alone, whose acceptance collapses
	// as d grows unless ε shrinks (the paper's Fig. 1).
	SGLD bool
	// Beta is RSGLD's backward noise factor β ≥ 1 (0: 1). With AdaptBeta,
	// the starting value (0: 10).
	Beta float64
	// RefreshOnReject makes a rejection move the chain to the new batch I′
	// and re-evaluate θ on it (m more evaluations), as the paper's
	// reference code does (it sets the current batch to the proposal's
	// every iteration), instead of keeping (θ, I) and μ̂_I(θ) as
	// Algorithm 1 does. The chain is then a noisy Metropolis–Hastings
	// chain, whose ratio's batch noise is drawn afresh at every step
	// rather than stuck to the state: still INEXACT, and with a law that
	// is neither the posterior nor Algorithm 1's π̃ (mhbt_test.go measures
	// the difference on a tempered Gaussian; on a multimodal target it
	// hops between modes that Algorithm 1's chain stays in, because a
	// state's lucky batch no longer holds it).
	RefreshOnReject bool
	// AdaptBeta tunes β during warmup by the schedule of §3.2: after each
	// epoch (N/m steps) whose mean acceptance probability exceeds 0.4, β
	// drops by 5% while 100 forward-only test moves accept with mean
	// probability above 0.7 (at most by half per epoch, never below 1);
	// after an epoch below 0.2 it grows by 5%.
	AdaptBeta bool

	// Test hooks (export_test.go), nil in every real kernel: RSGLD's log
	// proposal density (nil: rsgldProposal.LogDensity) and what a rejection
	// does to the batch (nil: nothing, the batch and μ̂_I(θ) are kept).
	logDensity func(q rsgldProposal, to, from, g []float64) float64
	onReject   func(c *mhbtChain) error
}

// Name returns "MHBT", "MHBT-RSGLD" or "MHBT-SGLD", with "-refresh"
// appended under RefreshOnReject.
func (k MHBT) Name() string {
	name := "MHBT"
	switch {
	case k.RSGLD:
		name = "MHBT-RSGLD"
	case k.SGLD:
		name = "MHBT-SGLD"
	}
	if k.RefreshOnReject {
		name += "-refresh"
	}
	return name
}

// gradProposal reports whether the proposal uses the batch gradient.
func (k MHBT) gradProposal() bool { return k.RSGLD || k.SGLD }

// sgldProposal is the plain SGLD proposal of the MHBT paper (eq. 5):
// θ′ = θ + εg + s·ξ, ξ ~ N(0, I), s = √(2ε)/N, g the minibatch mean
// gradient of the log-likelihood, with density φ(θ′ − θ − εg; s²I) —
// rsgldProposal's forward move alone.
type sgldProposal struct {
	Epsilon float64 // learning rate ε > 0
	N       int     // data size, in the noise scale s = √(2ε)/N
}

// Validate reports whether the proposal is usable: ε finite > 0, N > 0.
func (q sgldProposal) Validate() error {
	if !(q.Epsilon > 0) || math.IsInf(q.Epsilon, 0) || q.N <= 0 {
		return fmt.Errorf("inexact: MHBT's SGLD proposal (ε = %v, N = %d): want ε finite > 0, N > 0", q.Epsilon, q.N)
	}
	return nil
}

// Draw writes a proposal from theta with gradient g into dst.
func (q sgldProposal) Draw(rng *rand.Rand, dst, theta, g []float64) {
	s := math.Sqrt(2*q.Epsilon) / float64(q.N)
	for j, v := range theta {
		dst[j] = v + q.Epsilon*g[j] + s*rng.NormFloat64()
	}
}

// LogDensity returns log q(from → to) for the gradient g at from.
func (q sgldProposal) LogDensity(to, from, g []float64) float64 {
	s := math.Sqrt(2*q.Epsilon) / float64(q.N)
	var r2 float64
	for j := range to {
		a := to[j] - from[j] - q.Epsilon*g[j]
		r2 += a * a
	}
	d := float64(len(to))
	return -r2/(2*s*s) - d*math.Log(s) - d/2*math.Log(2*math.Pi)
}

// Exact returns false: the chain targets a tempered, biased posterior.
func (MHBT) Exact() bool { return false }

// rsgldProposal is the reversible SGLD proposal of the MHBT paper (eq. 6–7):
// with probability ½ a forward move θ′ = θ + εg + s·ξ, else a backward move
// θ′ = θ − εg + β·s·ξ, ξ ~ N(0, I), s = √(2ε)/N, g the minibatch mean
// gradient of the log-likelihood. Its density is the two-component Gaussian
// mixture
//
//	q(θ → θ′) = ½φ(θ′ − θ − εg; s²I) + ½φ(θ′ − θ + εg; β²s²I),
//
// normalising constants included (their ratio β^{−d} matters).
type rsgldProposal struct {
	Epsilon float64 // learning rate ε > 0
	Beta    float64 // backward noise factor β ≥ 1
	N       int     // data size, in the noise scale s = √(2ε)/N

}

// Validate reports whether the proposal is usable: ε finite > 0, β finite
// ≥ 1, N > 0. Draw and LogDensity assume it (MHBT checks its own).
func (r rsgldProposal) Validate() error {
	if !(r.Epsilon > 0) || math.IsInf(r.Epsilon, 0) || !(r.Beta >= 1) || math.IsInf(r.Beta, 0) || r.N <= 0 {
		return fmt.Errorf("inexact: MHBT's RSGLD proposal (ε = %v, β = %v, N = %d): want ε finite > 0, β finite ≥ 1, N > 0", r.Epsilon, r.Beta, r.N)
	}
	return nil
}

func (r rsgldProposal) s() float64 { return math.Sqrt(2*r.Epsilon) / float64(r.N) }

// Draw writes a proposal from theta with gradient g into dst.
func (r rsgldProposal) Draw(rng *rand.Rand, dst, theta, g []float64) {
	s, sign := r.s(), 1.0
	if rng.IntN(2) == 1 {
		s, sign = r.Beta*s, -1
	}
	for j, v := range theta {
		dst[j] = v + sign*r.Epsilon*g[j] + s*rng.NormFloat64()
	}
}

// LogDensity returns log q(from → to) for the gradient g at from.
func (r rsgldProposal) LogDensity(to, from, g []float64) float64 {
	s := r.s()
	d := float64(len(to))
	var fwd, bwd float64
	for j := range to {
		a := to[j] - from[j] - r.Epsilon*g[j]
		b := to[j] - from[j] + r.Epsilon*g[j]
		fwd += a * a
		bwd += b * b
	}
	lf := -fwd/(2*s*s) - d*math.Log(s) - d/2*math.Log(2*math.Pi)
	lb := -bwd/(2*r.Beta*r.Beta*s*s) - d*math.Log(r.Beta*s) - d/2*math.Log(2*math.Pi)
	return math.Log(0.5) + logit.LogAddExp(lf, lb)
}

// Start checks the configuration and evaluates the first batch.
func (k MHBT) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	name := k.Name()
	prop := k.Proposal
	if k.gradProposal() {
		prop = nil // unused: the gradient proposals draw θ′ themselves
	}
	w, err := exactmh.NewWalk(name, t, prop, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	if k.RSGLD && k.SGLD {
		return nil, fmt.Errorf("%s: RSGLD and SGLD both set: choose one proposal", name)
	}
	if err := requireGradient(t); k.gradProposal() && err != nil {
		return nil, fmt.Errorf("%s %w", name, err)
	}
	n := t.N()
	m := k.BatchSize
	if m == 0 {
		m = 1000
	}
	if m < 1 {
		return nil, fmt.Errorf("%s: BatchSize = %d, want ≥ 1 (0: 1000)", name, k.BatchSize)
	}
	m = min(m, n)
	cn := k.Cn
	if cn == 0 {
		cn = 20
	}
	if !(cn > 0) || math.IsInf(cn, 0) {
		return nil, fmt.Errorf("%s: Cn = %v, want finite > 0", name, k.Cn)
	}
	beta := k.Beta
	switch {
	case beta == 0 && k.AdaptBeta:
		beta = 10
	case beta == 0:
		beta = 1
	}
	if !(beta >= 1) || math.IsInf(beta, 0) {
		return nil, fmt.Errorf("%s: Beta = %v, want finite ≥ 1", name, k.Beta)
	}
	d := t.Dim()
	c := &mhbtChain{k: k, Walk: w, t: t, theta: w.Position(), next: w.Next(), m: m, cn: cn, beta: beta, perm: identity(n),
		batch: make([]int, m), batchNew: make([]int, m), u: make([]float64, m),
		grad: make([]float64, d), gradNew: make([]float64, d), pgrad: make([]float64, d),
		testSrc: rand.NewPCG(0x6d686274, 1), epoch: max(50, (n+m-1)/m)}
	c.testRNG = rand.New(c.testSrc)
	if c.logDensity = k.logDensity; c.logDensity == nil {
		c.logDensity = rsgldProposal.LogDensity
	}
	c.onReject = k.onReject
	lp := t.LogPrior(theta0)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, fmt.Errorf("%s: θ0 = %v outside the prior's support", name, theta0)
	}
	// The initial batch, drawn from a fixed stream (the chain's own stream
	// starts with the first step).
	c.drawBatch(c.testRNG, c.batch)
	if c.mu, err = c.meanLogLik(c.batch, theta0); err != nil {
		return nil, err
	}
	if k.gradProposal() {
		if err := c.gradient(c.grad, c.batch, theta0); err != nil {
			return nil, err
		}
	}
	return c, nil
}

type mhbtChain struct {
	k MHBT
	*exactmh.Walk
	t           *exactmh.Target
	theta, next []float64 // θ and θ′, the Walk's
	m           int
	cn          float64
	beta        float64 // RSGLD's β
	perm        []int
	batch       []int   // I
	mu          float64 // μ̂_I(θ)
	grad        []float64
	u           []float64
	gradNew     []float64
	pgrad       []float64

	batchNew []int

	// β adaptation (warmup only).
	warmup   bool
	epoch    int
	steps    int
	sumAccP  float64
	testSrc  *rand.PCG
	testRNG  *rand.Rand
	testNext []float64

	logDensity func(q rsgldProposal, to, from, g []float64) float64
	onReject   func(c *mhbtChain) error
}

// Params reports m, c_n, the temperature T = N/c_n and (RSGLD) β.
func (c *mhbtChain) Params() map[string]float64 {
	p := map[string]float64{"m": float64(c.m), "cn": c.cn, "T": float64(c.t.N()) / c.cn}
	if c.k.RSGLD {
		p["beta"] = c.beta
	}
	return p
}

// SetWarmup implements WarmupAware: β adapts during warmup only.
func (c *mhbtChain) SetWarmup(on bool) {
	c.warmup = on && c.k.AdaptBeta && c.k.RSGLD
	c.steps, c.sumAccP = 0, 0
}

// drawBatch writes m indices drawn uniformly without replacement into dst
// by a partial Fisher–Yates shuffle of the permutation.
func (c *mhbtChain) drawBatch(rng *rand.Rand, dst []int) {
	shuffleRange(rng, c.perm, 0, len(dst))
	copy(dst, c.perm)
}

// meanLogLik returns μ̂_I(θ) = −(1/m)Σ_{i∈I} βU_i(θ).
func (c *mhbtChain) meanLogLik(batch []int, theta []float64) (float64, error) {
	var s float64
	for lo := 0; lo < len(batch); lo += chunk {
		hi := min(lo+chunk, len(batch))
		if err := c.t.Energies(c.u[lo:hi], theta, batch[lo:hi]); err != nil {
			return 0, err
		}
		for _, v := range c.u[lo:hi] {
			s += v
		}
	}
	return -s / float64(len(batch)), nil
}

// gradient sets g = ĝ_I(θ) = (1/m)Σ_{i∈I}∇ℓ_i(θ) + (1/N)∇log prior(θ), the
// gradient of the tempered target's log density divided by c_n.
func (c *mhbtChain) gradient(g []float64, batch []int, theta []float64) error {
	clear(g)
	if err := c.t.AddGradient(g, theta, batch, nil); err != nil {
		return err
	}
	m, n := float64(len(batch)), float64(c.t.N())
	clear(c.pgrad)
	if err := c.t.AddLogPriorGradient(c.pgrad, theta); err != nil {
		return err
	}
	for j := range g {
		g[j] = -g[j]/m + c.pgrad[j]/n
	}
	return nil
}

func (c *mhbtChain) sgld() sgldProposal {
	return sgldProposal{Epsilon: c.StepScale(), N: c.t.N()}
}

func (c *mhbtChain) rsgld() rsgldProposal {
	return rsgldProposal{Epsilon: c.StepScale(), Beta: c.beta, N: c.t.N()}
}

// Step makes one MHBT transition (Algorithm 1).
func (c *mhbtChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	info := exactmh.Info{AcceptProb: 0, LogDensity: math.NaN(), Batch: c.m, Distinct: c.m}
	c.drawBatch(rng, c.batchNew)
	// 1. Propose θ′ (RSGLD from the batch gradient at θ, or the Proposal);
	// the prior is exact and rejects outside its support first.
	ok := false
	switch {
	case c.k.RSGLD:
		c.rsgld().Draw(rng, c.next, c.theta, c.grad)
		_, ok = c.Finish(0)
	case c.k.SGLD:
		c.sgld().Draw(rng, c.next, c.theta, c.grad)
		_, ok = c.Finish(0)
	default:
		_, ok = c.Propose(rng)
	}
	if !ok {
		info.Batch, info.Distinct = 0, 0
		c.adapt(0)
		return info, nil
	}
	// 2. The new batch's mean log-likelihood at θ′.
	muNew, err := c.meanLogLik(c.batchNew, c.next)
	if err != nil {
		return exactmh.Info{}, err
	}
	logPriorNext, logPrior, logQ := c.Parts()
	if c.k.gradProposal() {
		if err := c.gradient(c.gradNew, c.batchNew, c.next); err != nil {
			return exactmh.Info{}, err
		}
	}
	switch {
	case c.k.RSGLD:
		q := c.rsgld()
		logQ = c.logDensity(q, c.theta, c.next, c.gradNew) - c.logDensity(q, c.next, c.theta, c.grad)
	case c.k.SGLD:
		q := c.sgld()
		logQ = q.LogDensity(c.theta, c.next, c.gradNew) - q.LogDensity(c.next, c.theta, c.grad)
	}
	// 3. The tempered ratio c_n(μ̂_I′(θ′) − μ̂_I(θ)) with the prior tempered
	// alike, and the decision.
	n := float64(c.t.N())
	logR := c.cn*(muNew-c.mu) + c.cn/n*(logPriorNext-logPrior) + logQ
	info, err = c.Accept(rng, logR, info)
	if err != nil {
		return exactmh.Info{}, err
	}
	switch {
	case info.Accepted:
		c.batch, c.batchNew = c.batchNew, c.batch
		c.mu = muNew
		c.grad, c.gradNew = c.gradNew, c.grad
	case c.onReject != nil:
		if err := c.onReject(c); err != nil {
			return exactmh.Info{}, err
		}
	case c.k.RefreshOnReject:
		c.batch, c.batchNew = c.batchNew, c.batch
		if c.mu, err = c.meanLogLik(c.batch, c.theta); err != nil {
			return exactmh.Info{}, err
		}
		if c.k.gradProposal() {
			if err := c.gradient(c.grad, c.batch, c.theta); err != nil {
				return exactmh.Info{}, err
			}
		}
	}
	// The β schedule reads batchNew and gradNew as scratch: only now.
	c.adapt(info.AcceptProb)
	return info, nil
}

// adapt runs the §3.2 β schedule during warmup.
func (c *mhbtChain) adapt(p float64) {
	if !c.warmup {
		return
	}
	c.steps++
	c.sumAccP += p
	if c.steps < c.epoch {
		return
	}
	avg := c.sumAccP / float64(c.steps)
	c.steps, c.sumAccP = 0, 0
	switch {
	case avg > 0.4:
		start := c.beta
		for c.beta*0.95 >= max(1, start/2) && c.forwardAcceptance() > 0.7 {
			c.beta *= 0.95
		}
	case avg < 0.2:
		c.beta *= 1.05
	}
}

// forwardAcceptance returns the mean acceptance probability of 100
// forward-only RSGLD moves from the current state, drawn from the chain's
// private test stream (so the chain's own stream is untouched).
func (c *mhbtChain) forwardAcceptance() float64 {
	if c.testNext == nil {
		c.testNext = make([]float64, len(c.theta))
	}
	q := c.rsgld()
	s := q.s()
	n := float64(c.t.N())
	var sum float64
	for range 100 {
		c.drawBatch(c.testRNG, c.batchNew)
		for j, v := range c.theta {
			c.testNext[j] = v + q.Epsilon*c.grad[j] + s*c.testRNG.NormFloat64()
		}
		lpNew := c.t.LogPrior(c.testNext)
		if math.IsInf(lpNew, -1) {
			continue
		}
		muNew, err := c.meanLogLik(c.batchNew, c.testNext)
		if err != nil {
			return 0
		}
		if err := c.gradient(c.gradNew, c.batchNew, c.testNext); err != nil {
			return 0
		}
		logR := c.cn*(muNew-c.mu) + c.cn/n*(lpNew-c.t.LogPrior(c.theta)) +
			q.LogDensity(c.theta, c.testNext, c.gradNew) - q.LogDensity(c.testNext, c.theta, c.grad)
		sum += math.Exp(min(logR, 0))
	}
	return sum / 100
}

type mhbtState struct {
	Perm, Batch []int
	Beta        float64
	Warm        bool // the chain's warmup, under the name saved checkpoints carry
	Steps       int
	SumAccP     float64
	TestRNG     []byte
}

// MarshalState saves the batch (with the permutation it was drawn from),
// β and its schedule's state, and the schedule's private random stream.
func (c *mhbtChain) MarshalState() ([]byte, error) {
	rng, err := c.testSrc.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return chainstate.Encode(mhbtState{Perm: c.perm, Batch: c.batch, Beta: c.beta, Warm: c.warmup, Steps: c.steps,
		SumAccP: c.sumAccP, TestRNG: rng})
}

// checkState checks a saved state against the chain as Start built it:
// a permutation of the data, a batch of m distinct data, β finite ≥ 1 and
// fixed unless RSGLD's β adapts, the β schedule's epoch counters (zero
// outside warmup).
func (c *mhbtChain) checkState(s *mhbtState) error {
	if err := chainstate.CheckPerm("permutation", s.Perm, len(c.perm)); err != nil {
		return err
	}
	if len(s.Batch) != len(c.batch) {
		return fmt.Errorf("saved batch of %d data, the chain's BatchSize makes %d", len(s.Batch), len(c.batch))
	}
	if err := chainstate.CheckDistinct("batch", s.Batch, len(c.perm)); err != nil {
		return err
	}
	adapts := c.k.AdaptBeta && c.k.RSGLD
	switch {
	case !(s.Beta >= 1) || math.IsInf(s.Beta, 0):
		return fmt.Errorf("saved β = %v, want finite ≥ 1", s.Beta)
	case !adapts && s.Beta != c.beta:
		return fmt.Errorf("saved β = %v, but β is not adapted and the kernel's is %v", s.Beta, c.beta)
	case s.Warm && !adapts:
		return errors.New("saved in warmup mode, but the kernel does not adapt β")
	case s.Steps < 0 || s.Steps >= c.epoch || !(s.SumAccP >= 0 && s.SumAccP <= float64(s.Steps)):
		return fmt.Errorf("saved epoch of %d steps (epoch length %d) with acceptance sum %v", s.Steps, c.epoch, s.SumAccP)
	case !s.Warm && (s.Steps != 0 || s.SumAccP != 0):
		return fmt.Errorf("saved epoch of %d steps outside warmup", s.Steps)
	}
	return nil
}

// inWarmup reports whether β is being adapted.
func (c *mhbtChain) inWarmup() bool { return c.warmup }

// UnmarshalState restores them and recomputes the batch's mean
// log-likelihood (and gradient) at θ.
func (c *mhbtChain) UnmarshalState(b []byte) error {
	var s mhbtState
	if err := chainstate.Decode(b, &s); err != nil {
		return err
	}
	if err := c.checkState(&s); err != nil {
		return err
	}
	copy(c.perm, s.Perm)
	copy(c.batch, s.Batch)
	c.beta, c.warmup, c.steps, c.sumAccP = s.Beta, s.Warm, s.Steps, s.SumAccP
	if err := c.testSrc.UnmarshalBinary(s.TestRNG); err != nil {
		return err
	}
	var err error
	if c.mu, err = c.meanLogLik(c.batch, c.theta); err != nil {
		return err
	}
	if c.k.gradProposal() {
		return c.gradient(c.grad, c.batch, c.theta)
	}
	return nil
}

// The contracts this file's kernel and chain satisfy.
var (
	_ exactmh.Kernel        = MHBT{}
	_ driverChain           = (*mhbtChain)(nil)
	_ exactmh.ParamReporter = (*mhbtChain)(nil)
	_ exactmh.WarmupAware   = (*mhbtChain)(nil)
)

// The capabilities MHBT declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k MHBT) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k MHBT) WithScale(s float64) exactmh.Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k MHBT) Proposer() exactmh.Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k MHBT) WithProposal(p exactmh.Proposal) exactmh.Kernel {
	k.Proposal = p
	return k
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/vec"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// TunaMHSGLD is TunaMH-SGLD, Algorithm 6 of the auxiliary-variable paper
// (Case 3 of Aux): a stochastic-gradient Langevin proposal made exact by
// TunaMH's acceptance test. Each transition draws K data uniformly without
// replacement (ω1), proposes, with the Metric M⁻¹ (Algorithm 6's
// preconditioned form; M⁻¹ = I in the paper),
//
//	θ′ ~ N(μ(θ), ε²M⁻¹),  μ(θ) = θ + (ε²/2)M⁻¹(−(N/K)·clip(Σ_{i∈ω1}∇βU_i(θ)) + ∇log prior(θ)),
//
// evaluates the reverse density N(θ; μ(θ′), ε²M⁻¹) from θ′ with the same
// ω1 — the log proposal ratio is (‖θ′ − μ(θ)‖²_M − ‖θ − μ(θ′)‖²_M)/(2ε²)
// in the mass norm ‖r‖²_M = rᵀMr — and accepts with
// TunaMH's minibatch estimate of the likelihood ratio (ω2, drawn with
// χ as in TunaMH, with its full-MH fallback). clip(g) = g·min(1, Clip/‖g‖)
// is a true clip, applied identically in both directions (the reference
// code instead always rescales g to norm 2). It needs a DiffBound and
// gradients (Gradienter, PriorGradienter). Info counts the 2K gradient
// evaluations in GradEvals and TunaMH's Poisson count in Batch. It is exact.
type TunaMHSGLD struct {
	// Scale is ε, the proposal's noise standard deviation (0: 0.1).
	Scale float64
	// Chi is TunaMH's χ > 0. Zero means: chosen — at Start by TunaMH's
	// heuristic on the proposal's noise alone (no gradient read), then,
	// halfway through an adapted warmup of at least 200 transitions,
	// by TunaMH's search (see the package documentation, "Choosing χ") on
	// Langevin proposals whose gradient minibatches the search draws as the
	// chain draws ω1, at the adapted ε or, where the search predicts
	// acceptance below 0.15 there or cannot judge it, at the most
	// efficient of steps smaller by 0.7 at a time (up to 8 of them), from
	// which the second half of warmup restarts; then compared with
	// full-batch MH (a search predicting acceptance below 0.15 even so
	// leaves the step to adapt toward the kernel's target, not held where
	// χ was judged): a chain that MH would beat runs every step's test on
	// the full batch and says so (Params "as_mh"), as does one whose
	// proposals the search could judge at none of those steps (with
	// "chi_unjudged"). At the end of warmup the search also checks the
	// final step: where it predicts acceptance below 0.15 there, the step
	// is lowered in the same way (Params "scale_cut"). The paper uses
	// 10⁻⁵ on MNIST.
	Chi float64
	// GradBatch is K, the gradient minibatch size (0: 20, the paper's).
	GradBatch int
	// Clip is the largest norm of the minibatch gradient sum (0: no clip;
	// the paper clips to 2).
	Clip float64
	// Bound, MaxBatch and TrustBound are as in TunaMH.
	Bound      *DiffBound
	MaxBatch   float64
	TrustBound bool
	// Metric is M⁻¹ (zero value: the identity), adapted by warmup as for
	// MALA.
	Metric Metric

	// Test hooks (export_test.go), nil in every real kernel: sets the
	// reverse proposal mean μ(θ′) into c.muRev (nil: tunaSGLDChain.mean
	// at θ′ with the same ω1), and the log proposal ratio once μ(θ) and
	// μ(θ′) are set (nil: tunaSGLDChain.logProposalRatio).
	reverseMean   func(c *tunaSGLDChain, theta, next []float64, w1 []int, eps float64) error
	proposalRatio func(c *tunaSGLDChain, theta, next []float64, eps float64) float64
}

// Name returns "TunaMH-SGLD".
func (TunaMHSGLD) Name() string { return "TunaMH-SGLD" }

// Exact returns true.
func (TunaMHSGLD) Exact() bool { return true }

// DefaultTargetAccept returns 0.234. Its Langevin proposal would suggest
// MALA's 0.574, but TunaMH's minibatch test, not the proposal, sets its
// efficiency, which falls fast above 0.3; TestTargetAcceptSweep (go test
// -run TestTargetAcceptSweep -sweep TunaMH-SGLD -v .) measures bulk ESS per
// datum evaluation across target rates.
func (TunaMHSGLD) DefaultTargetAccept() float64 { return 0.234 }

// Start checks the configuration and starts the framework chain.
func (k TunaMHSGLD) Start(t *Target, theta0 []float64) (Chain, error) {
	ch, err := startMetricAux[[]int, *tunaOmega2](tunaSGLDScheme{k}, k.Scale, t, theta0, k.TrustBound)
	if err != nil {
		return nil, err
	}
	ac := ch.(*metricAux[[]int, *tunaOmega2]).auxChain
	c := ac.scheme.(*tunaSGLDChain)
	c.walk = &ac.walk
	if k.Chi == 0 {
		c.chooseChi()
		if !(c.batch.chi > 0) || math.IsInf(c.batch.chi, 0) {
			return nil, fmt.Errorf("TunaMH-SGLD: could not choose χ from pilot proposals at θ0 (got %v): set TunaMHSGLD.Chi", c.batch.chi)
		}
	}
	return ch, nil
}

// chooseChi sets χ by TunaMH's heuristic (ChiHeuristic) from pilot
// proposals θ + εξ, ξ ~ N(0, M⁻¹): the Langevin drift, which would cost
// gradients, is left out.
func (c *tunaSGLDChain) chooseChi() {
	rng := rand.New(rand.NewPCG(0x74756e61, 0x73676c64))
	m2 := make([]float64, pilotSize)
	next := make([]float64, len(c.walk.theta))
	for k := range m2 {
		c.metric.DrawNoise(rng, c.r1)
		for j, v := range c.walk.theta {
			next[j] = v + c.walk.scale*c.r1[j]
		}
		m := c.batch.bound.M(c.walk.theta, next)
		m2[k] = m * m
	}
	if chi := chiQuantileRule(c.batch.sumC, m2); chi > 0 {
		c.batch.chi = chi
	}
}

// midWarmup chooses χ at the adapted ε (chiSearch) and compares the result
// with full-batch MH (mhRival), as TunaMH does, when χ is chosen. Dual
// averaging across TunaMH-SGLD's cliff (acceptance near 0.9 below a step,
// near 0 above, where the Langevin drift overshoots) can leave the first
// half of warmup at a step far past it, where the search either predicts
// acceptance near 0 (and MH, compared with that, wins by 10³⁰) or cannot
// judge the proposals at all (chiResolve), which left χ at Start's
// heuristic and the chain sampling at acceptance 0.002–0.05
// (TestTunaMHSGLDChiChosen's seeds). So the search runs at smaller steps
// too (cutScale) until one's predicted acceptance reaches
// chiMinTurnTarget, χ is chosen and compared with MH at the best of
// them, and the second half of warmup restarts from it. A chain whose
// proposals the search cannot judge at any of those steps runs as MH
// (chiTurn; Params "chi_unjudged" = 1 beside "as_mh"): TunaMH would need
// batches of order (C·M·sd(u))² at every step tried.
func (c *tunaSGLDChain) midWarmup(_ Totals, ownTarget bool) (warmupTurn, error) {
	if c.k.Chi != 0 || c.rival.asMH {
		return warmupTurn{}, nil
	}
	theta := c.walk.theta
	turn, ch, err := chiTurn(c.batch, c.rival, AcceptMetropolis, theta, c.walk.scale, c.searchProposer(theta), math.Inf(1), c.searchStepCost(), ownTarget)
	if err != nil {
		return warmupTurn{}, err
	}
	if ch.eff > 0 {
		c.tuned, c.tunedAccept = true, ch.accept
	} else {
		c.unjudged = true // and the chain runs as MH (chiTurn)
	}
	return turn, nil
}

// cutScale tries the step scale, then steps smaller by chiFinalCut, up to
// chiFinalCuts of them or until one's predicted acceptance (at) reaches
// chiMinTurnTarget and more steps after it, and returns the one of those
// tried with the highest predicted efficiency and its prediction (eff −1
// when the search could judge none).
func cutScale(scale float64, more int, at func(eps float64) (chiChoice, error)) (float64, chiChoice, error) {
	best, bestAt := scale, chiChoice{eff: -1}
	reached := -1
	for k, eps := 0, scale; k <= chiFinalCuts && (reached < 0 || k <= reached+more); k, eps = k+1, eps*chiFinalCut {
		p, err := at(eps)
		if err != nil {
			return 0, chiChoice{}, err
		}
		if p.eff > bestAt.eff {
			best, bestAt = eps, p
		}
		if reached < 0 && p.eff > 0 && p.accept >= chiMinTurnTarget {
			reached = k
		}
	}
	return best, bestAt, nil
}

// finalScale checks the step warmup ends with, when the search chose χ or
// the chain switched to MH: where the acceptance predicted there
// (chiSearch, at the chosen χ, or from the probes' full-batch ratio
// estimates as MH) is below chiMinTurnTarget, it lowers the step
// (cutScale). Dual averaging toward a target across TunaMH-SGLD's cliff
// (see midWarmup) ends at the average of iterates on both sides:
// TestTunaMHSGLDChiChosen's seed 3 sampled one chain of two at acceptance
// 0.017 with the search predicting 0.004 at its final step.
func (c *tunaSGLDChain) finalScale(scale float64) (float64, error) {
	if !c.tuned && !c.rival.asMH || c.k.Chi != 0 {
		return scale, nil
	}
	theta := c.walk.theta
	best, cut, err := finalChiScale(c.batch, AcceptMetropolis, theta, scale, c.searchProposer(theta), c.batch.chi, c.searchStepCost())
	if cut > 0 {
		c.scaleCut = cut
	}
	return best, err
}

// searchStepCost is a step's cost beyond its data for the χ search, in
// units of a datum of a full pass: TunaMH's, plus the 2K gradients, each
// about two datum energies.
func (c *tunaSGLDChain) searchStepCost() float64 {
	return chiStepCost(len(c.walk.theta)) + 4*c.kFloat
}

// chiFinalCut and chiFinalCuts are the factor and the most steps by
// which finalScale lowers warmup's final step.
const (
	chiFinalCut  = 0.7
	chiFinalCuts = 8
)

// chiFinalMore is how many steps below the first one predicted to reach
// chiMinTurnTarget finalScale also tries, picking the most efficient: one
// point's prediction on the cliff's edge is noisy, and a final step
// predicted at 0.155 sampled at 0.070 (TestTunaMHSGLDPredictionMeasure's
// CV logistic, chain 2).
const chiFinalMore = 1

// chiMinTurnTarget is the lowest predicted acceptance at which
// TunaMH-SGLD's warmup holds the step the search judged χ at: the lowest
// target at which TestTargetAcceptSweep found it near its best (see
// DefaultTargetAccept).
const chiMinTurnTarget = 0.15

// searchProposer returns the proposer of the mid-warmup search and of the
// comparison with MH: the chain's own transition from theta up to its
// test — ω1, K data drawn without replacement as DrawOmega1 draws them,
// the Langevin proposal from its gradient and the log proposal ratio with
// the same ω1 — from the generator it is given. ω1 is the first K of a
// partial Fisher–Yates shuffle of the chain's permutation, undone at once
// (the swaps replayed in reverse), so the chain's own draws never depend
// on the search; it allocates its K indices and swaps once.
func (c *tunaSGLDChain) searchProposer(theta []float64) proposer {
	w1, swaps := make([]int, c.kGrad), make([]int, c.kGrad)
	return func(rng *rand.Rand, next []float64, eps float64) (float64, error) {
		shuffleLogged(rng, c.perm, swaps)
		copy(w1, c.perm)
		unshuffle(c.perm, swaps)
		if err := c.mean(c.mu, theta, w1, eps); err != nil {
			return 0, err
		}
		c.metric.DrawNoise(rng, c.r1)
		for j := range next {
			next[j] = c.mu[j] + eps*c.r1[j]
		}
		if err := c.mean(c.muRev, next, w1, eps); err != nil {
			return 0, err
		}
		return c.proposalRatioWith(c.metric, theta, next, eps), nil
	}
}

// tunaSGLDScheme is the AuxScheme behind TunaMHSGLD.
type tunaSGLDScheme struct{ k TunaMHSGLD }

func (s tunaSGLDScheme) Name() string { return s.k.Name() }

func (s tunaSGLDScheme) Start(t *Target, _ []float64) (AuxChain[[]int, *tunaOmega2], error) {
	return s.k.startScheme(t)
}

// tunaOmega2 is ω2: TunaMH's minibatch, kept as the ratio estimate it gives
// and its cost.
type tunaOmega2 struct {
	logR float64
	info Info
}

// auditCheck checks the DiffBound (TunaMH's check).
func (c *tunaSGLDChain) auditCheck() (string, auditCheck) {
	return c.batch.bound.auditKey(), diffAudit(c.batch.bound)
}

type tunaSGLDChain struct {
	k      TunaMHSGLD
	t      *Target
	batch  *tunaBatch
	perm   []int // a permutation of the data; its first K are ω1
	swaps  []int // the last DrawOmega1's swaps (shuffleLogged), for abandonStep
	kGrad  int
	w2     tunaOmega2
	mu     []float64 // the forward mean μ(θ)
	muRev  []float64 // the reverse mean μ(θ′)
	grad   []float64
	drift  []float64 // M⁻¹ times a gradient
	r1, r2 []float64 // the noise, then the residuals θ′ − μ(θ), θ − μ(θ′)
	kFloat float64
	metric Metric

	reverseMean   func(c *tunaSGLDChain, theta, next []float64, w1 []int, eps float64) error
	proposalRatio func(c *tunaSGLDChain, theta, next []float64, eps float64) float64

	// With χ chosen (Chi = 0): the framework chain's walk (θ and ε), the
	// mid-warmup search's result and the comparison with MH.
	walk        *walk
	tuned       bool
	tunedAccept float64
	unjudged    bool    // no step tried let the search judge χ (midWarmup)
	scaleCut    float64 // finalScale's factor on warmup's final step (0: none)
	rival       *mhRival
}

// startScheme is the AuxScheme view of TunaMHSGLD.
func (k TunaMHSGLD) startScheme(t *Target) (*tunaSGLDChain, error) {
	if k.Chi < 0 || math.IsNaN(k.Chi) || math.IsInf(k.Chi, 0) {
		return nil, fmt.Errorf("TunaMH-SGLD: Chi = %v, want finite > 0 (0: chosen)", k.Chi)
	}
	if k.GradBatch < 0 || k.GradBatch > t.N() {
		return nil, fmt.Errorf("TunaMH-SGLD: GradBatch = %d, want in [0, N = %d] (0: 20)", k.GradBatch, t.N())
	}
	if k.Clip < 0 || math.IsNaN(k.Clip) {
		return nil, fmt.Errorf("TunaMH-SGLD: Clip = %v, want ≥ 0 (0: no clip)", k.Clip)
	}
	if k.MaxBatch < 0 || math.IsNaN(k.MaxBatch) {
		return nil, fmt.Errorf("TunaMH-SGLD: MaxBatch = %v, want ≥ 0 (0: N, +Inf: never fall back)", k.MaxBatch)
	}
	if err := t.requireGradient(); err != nil {
		return nil, fmt.Errorf("TunaMH-SGLD %w", err)
	}
	if err := k.Metric.check(t.Dim()); err != nil {
		return nil, fmt.Errorf("TunaMH-SGLD: %w", err)
	}
	b, err := diffBound("TunaMH-SGLD", t, k.Bound)
	if err != nil {
		return nil, err
	}
	batch, err := newTunaBatch("TunaMH-SGLD", t, b, k.Chi, k.MaxBatch, nil, nil)
	if err != nil {
		return nil, err
	}
	kg := k.GradBatch
	if kg == 0 {
		kg = min(20, t.N())
	}
	d := t.Dim()
	c := &tunaSGLDChain{k: k, t: t, batch: batch, perm: make([]int, t.N()), swaps: make([]int, kg), kGrad: kg, kFloat: float64(kg),
		mu: make([]float64, d), muRev: make([]float64, d), grad: make([]float64, d), drift: make([]float64, d),
		r1: make([]float64, d), r2: make([]float64, d), metric: k.Metric, rival: newMHRival(d)}
	for i := range c.perm {
		c.perm[i] = i
	}
	if c.reverseMean = k.reverseMean; c.reverseMean == nil {
		c.reverseMean = func(c *tunaSGLDChain, _, next []float64, w1 []int, eps float64) error {
			return c.mean(c.muRev, next, w1, eps)
		}
	}
	if c.proposalRatio = k.proposalRatio; c.proposalRatio == nil {
		c.proposalRatio = (*tunaSGLDChain).logProposalRatio
	}
	return c, nil
}

// Metric returns the chain's inverse mass matrix.
func (c *tunaSGLDChain) Metric() Metric { return c.metric }

// SetMetric replaces the inverse mass matrix (warmup's metric adaptation).
func (c *tunaSGLDChain) SetMetric(m Metric) error {
	if err := m.check(c.t.Dim()); err != nil {
		return fmt.Errorf("TunaMH-SGLD: %w", err)
	}
	c.metric = m
	return nil
}

// Params reports χ, C and K; "chi_tuned" = 1 with "chi_accept" when
// warmup's search chose χ; "scale_cut", the factor by which finalScale
// lowered warmup's final step, when it did; "as_mh" and "mh_speedup" when
// the comparison with MH switched the chain to full-batch tests, with
// "chi_unjudged" = 1 when it did because the search could judge χ at no
// step it tried (such a chain always switches: chiTurn).
func (c *tunaSGLDChain) Params() map[string]float64 {
	p := c.rival.params(map[string]float64{"chi": c.batch.chi, "C": c.batch.sumC, "K": c.kFloat})
	if c.tuned {
		p["chi_tuned"], p["chi_accept"] = 1, c.tunedAccept
	}
	if c.scaleCut > 0 {
		p["scale_cut"] = c.scaleCut
	}
	if c.unjudged {
		p["chi_unjudged"] = 1
	}
	return p
}

// DrawOmega1 draws K indices uniformly without replacement by a partial
// Fisher–Yates shuffle of the chain's permutation (O(K), no allocation).
func (c *tunaSGLDChain) DrawOmega1(rng *rand.Rand, _ []float64) ([]int, error) {
	shuffleLogged(rng, c.perm, c.swaps)
	return c.perm[:c.kGrad], nil
}

// A TunaMH-SGLD transition is abandoned after DrawOmega1 (in the
// minibatch gradient, TunaMH's batch or its full-batch fallback):
// abandonStep undoes DrawOmega1's swaps of the permutation, which
// checkpoints save.
func (c *tunaSGLDChain) interruptible() bool { return true }

func (c *tunaSGLDChain) abandonStep() {
	unshuffle(c.perm, c.swaps)
	c.w2 = tunaOmega2{}
}

// mean sets mu = θ − (ε²/2)(N/K)M⁻¹clip(Σ_{i∈ω1}∇βU_i(θ)) + (ε²/2)M⁻¹∇log prior(θ).
func (c *tunaSGLDChain) mean(mu, theta []float64, w1 []int, eps float64) error {
	clear(c.grad)
	if err := c.t.AddGradient(c.grad, theta, w1, nil); err != nil {
		return err
	}
	if c.k.Clip > 0 {
		if norm := math.Sqrt(vec.Dot(c.grad, c.grad)); norm > c.k.Clip {
			f := c.k.Clip / norm
			for j := range c.grad {
				c.grad[j] *= f
			}
		}
	}
	h := eps * eps / 2
	scale := float64(c.t.N()) / c.kFloat
	c.metric.MulInvMass(c.drift, c.grad)
	for j := range mu {
		mu[j] = theta[j] - h*scale*c.drift[j]
	}
	clear(c.grad)
	if err := c.t.AddLogPriorGradient(c.grad, theta); err != nil {
		return err
	}
	c.metric.MulInvMass(c.drift, c.grad)
	for j := range mu {
		mu[j] += h * c.drift[j]
	}
	return nil
}

// Propose draws θ′ ~ N(μ(θ), ε²M⁻¹). Its ratio needs μ(θ′), so LogRatio
// includes it.
func (c *tunaSGLDChain) Propose(rng *rand.Rand, next, theta []float64, w1 []int, eps float64) (float64, error) {
	if err := c.mean(c.mu, theta, w1, eps); err != nil {
		return 0, err
	}
	c.metric.DrawNoise(rng, c.r1)
	for j := range next {
		next[j] = c.mu[j] + eps*c.r1[j]
	}
	return 0, nil
}

// DrawOmega2 draws TunaMH's minibatch at (θ, θ′) and keeps its estimate.
func (c *tunaSGLDChain) DrawOmega2(rng *rand.Rand, theta, next []float64, _ []int) (*tunaOmega2, error) {
	logR, info, err := c.batch.logRatio(rng, theta, next)
	c.w2 = tunaOmega2{logR: logR, info: info}
	return &c.w2, err
}

// LogRatio adds the SGLD proposal ratio, the reverse mean from θ′ with the
// same ω1, to TunaMH's estimate.
func (c *tunaSGLDChain) LogRatio(theta, next []float64, w1 []int, w2 *tunaOmega2, eps float64) (float64, error) {
	if err := c.reverseMean(c, theta, next, w1, eps); err != nil {
		return 0, err
	}
	return w2.logR + c.proposalRatio(c, theta, next, eps), nil
}

// logProposalRatio returns log q(θ′, θ) − log q(θ, θ′) with the chain's
// metric, μ(θ) and μ(θ′) set.
func (c *tunaSGLDChain) logProposalRatio(theta, next []float64, eps float64) float64 {
	return c.proposalRatioWith(c.metric, theta, next, eps)
}

// proposalRatioWith returns (‖θ′ − μ(θ)‖²_M − ‖θ − μ(θ′)‖²_M)/(2ε²), the
// log ratio of the Gaussian densities N(θ; μ(θ′), ε²M⁻¹) and
// N(θ′; μ(θ), ε²M⁻¹) for the metric m.
func (c *tunaSGLDChain) proposalRatioWith(m Metric, theta, next []float64, eps float64) float64 {
	for j := range theta {
		c.r1[j], c.r2[j] = next[j]-c.mu[j], theta[j]-c.muRev[j]
	}
	return (m.MassNorm(c.r1) - m.MassNorm(c.r2)) / (2 * eps * eps)
}

// Report gives TunaMH's Poisson count, distinct data and fallback.
func (c *tunaSGLDChain) Report(info Info) Info {
	info.Batch, info.Distinct, info.Fallback = c.w2.info.Batch, c.w2.info.Distinct, c.w2.info.Fallback
	c.w2 = tunaOmega2{}
	return info
}

// tunaSGLDState is what a TunaMH-SGLD chain with a chosen χ saves beside
// its permutation.
type tunaSGLDState struct {
	Perm        []int
	Chi         float64
	Tuned       bool
	TunedAccept float64
	AsMH        bool
	MHSpeedup   float64
	ScaleCut    float64 // absent (0) in checkpoints from before finalScale
	Unjudged    bool
}

// fullMemo is the memo of the fallback steps, saved with checkpoints.
func (c *tunaSGLDChain) fullMemo() *fullEnergies { return &c.batch.full }

// MarshalState saves the permutation the K-subsets are drawn from and,
// when χ is chosen, χ and the mid-warmup decision.
func (c *tunaSGLDChain) MarshalState() ([]byte, error) {
	if c.k.Chi != 0 {
		return chainstate.Encode(c.perm) // as before χ could be chosen
	}
	return chainstate.Encode(tunaSGLDState{c.perm, c.batch.chi, c.tuned, c.tunedAccept, c.rival.asMH, c.rival.speedup, c.scaleCut, c.unjudged})
}

// UnmarshalState restores it.
func (c *tunaSGLDChain) UnmarshalState(b []byte) error {
	if c.k.Chi != 0 {
		return chainstate.RestorePerm(b, c.perm)
	}
	var s tunaSGLDState
	if err := chainstate.Decode(b, &s); err != nil {
		return err
	}
	switch err := checkSwitch(s.AsMH, s.MHSpeedup); {
	case !(s.Chi > 0) || math.IsInf(s.Chi, 0):
		return fmt.Errorf("saved χ = %v, want finite > 0", s.Chi)
	case err != nil:
		return err
	}
	if err := chainstate.CheckPerm("permutation", s.Perm, len(c.perm)); err != nil {
		return err
	}
	copy(c.perm, s.Perm)
	if !(s.ScaleCut >= 0 && s.ScaleCut <= 1) {
		return fmt.Errorf("saved scale cut %v, want in [0, 1]", s.ScaleCut)
	}
	c.batch.chi, c.tuned, c.tunedAccept, c.scaleCut, c.unjudged = s.Chi, s.Tuned, s.TunedAccept, s.ScaleCut, s.Unjudged
	c.rival.asMH, c.rival.speedup = s.AsMH, s.MHSpeedup
	if s.AsMH {
		c.batch.maxBatch = -1
	}
	return nil
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel                       = TunaMHSGLD{}
	_ AcceptTarget                 = TunaMHSGLD{}
	_ AuxChain[[]int, *tunaOmega2] = (*tunaSGLDChain)(nil)
	_ schemeChain                  = (*tunaSGLDChain)(nil)
	_ fullMemoer                   = (*tunaSGLDChain)(nil)
	_ stepInterrupter              = (*tunaSGLDChain)(nil)
	_ driverChain                  = (*metricAux[[]int, *tunaOmega2])(nil)
	_ MetricAdapter                = (*metricAux[[]int, *tunaOmega2])(nil)
	_ fullMemoer                   = (*metricAux[[]int, *tunaOmega2])(nil)
)

// The capabilities TunaMHSGLD declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k TunaMHSGLD) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k TunaMHSGLD) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// WithChi returns k with Chi v (χ).
func (k TunaMHSGLD) WithChi(v float64) Kernel {
	k.Chi = v
	return k
}

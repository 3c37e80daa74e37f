// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/vec"
)

// NUTS is the No-U-Turn sampler (Hoffman and Gelman 2014, "The No-U-Turn
// Sampler", JMLR 15) in the multinomial form Stan uses since 2.21
// (Betancourt 2017, "A conceptual introduction to Hamiltonian Monte
// Carlo", arXiv:1701.02434, §4.3 and App. A): the honest full-batch
// baseline for the minibatch kernels, reading all N data for every
// gradient.
//
// A transition draws the momentum p ~ N(0, M) (Metric) and builds a
// trajectory of leapfrog steps of size ε (Scale) by repeated doubling:
// at depth j it integrates 2ʲ further steps, forward or backward in time
// with probability ½ each, as a balanced binary tree of subtrees. Every
// state z on the trajectory has weight w(z) = e^{H(z₀)−H(z)}, H = −log π(θ)
// + ½pᵀM⁻¹p. Within a new subtree the draw is multinomial: the later half
// replaces the earlier half's pick with probability w(later)/w(both);
// between the old trajectory and the new subtree it is biased progressive
// sampling, which moves to the new subtree with probability
// min(1, w(new)/w(old)) and so favours states far from the start (App.
// A.3.2). Doubling stops when the trajectory makes a U-turn by the
// generalised criterion ρ·p♯₋ > 0 and ρ·p♯₊ > 0 failing, where ρ is the
// sum of the momenta and p♯ = M⁻¹p at the two ends (App. A.4.2), checked
// on every subtree, on the merged trajectory and — as Stan does since
// 2.21 — across the boundary between the two halves of each merge (each
// half extended by the nearest state of the other), at the tree depth
// MaxDepth, or when the energy error H − H(z₀) exceeds MaxDeltaH (a
// divergence: the integrator has left the true trajectory). A new subtree
// that U-turns within itself, or diverges, is discarded whole: sampling
// from it would break detailed balance. A step that leaves the prior's
// support, or reaches a position whose energy or gradient is not finite
// (a Poisson rate e^η past η ≈ 709), is a divergence too: zero density
// there, not an error (TestLeapfrogOverflowDiverges).
//
// Info.AcceptProb is Stan's accept_stat__, the mean of min(1, e^{H(z₀)−H})
// over every state the transition integrated (discarded subtrees
// included), which the driver's dual averaging adapts toward
// Settings.TargetAccept (default 0.8, Stan's adapt_delta); Info.TreeDepth
// and Info.Divergent report the tree, and GradEvals/N is the number of
// leapfrog steps: each costs N gradient and N energy evaluations, read
// together (EnergyGradienter) where the energy allows. Info.Accepted
// reports whether the draw differs from the starting point. The energy
// must implement Gradienter and the prior PriorGradienter.
type NUTS struct {
	// Scale is the leapfrog step size ε (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
	// MaxDepth bounds the tree depth: at most 2^MaxDepth − 1 leapfrog
	// steps per transition (0: 10, Stan's max_depth).
	MaxDepth int
	// MaxDeltaH is the energy error beyond which a trajectory diverges
	// (0: 1000, Stan's).
	MaxDeltaH float64
	// Metric is M⁻¹ (zero value: the identity). Warmup replaces it with
	// one estimated from the warmup draws unless Settings.Metric is
	// MetricUnit (or NoAdapt).
	Metric Metric
	// NonCentred makes the chain move in the non-centred parametrisation
	// of a multilevel posterior (the prior of model.NewMultilevel; any
	// other is refused at Start): each random effect u = τ·z with z
	// sampled in its place, and the Jacobian Σ_t G_t·log τ_t added to log
	// π (noncentred.go). The target is the same, exactly; where groups
	// have few data the centred posterior is a funnel in (u, log τ) that
	// one step size cannot cross (divergences, a stuck lower tail of τ),
	// while the non-centred one is nearly Gaussian. Draws, Stan CSV and
	// Summary keep the centred names and values (u_…); the metric adapts
	// in the non-centred coordinates; Info.LogDensity is log π at the
	// centred draw.
	// TestNonCentredFunnel measures both on a funnel.
	NonCentred bool
	// TargetAccept is the acceptance rate warmup adapts the step size
	// toward when Settings.TargetAccept is 0 (0: 0.8, Stan's adapt_delta).
	// The automatic default sets 0.95 for the non-centred form on
	// multilevel posteriors, as rstanarm's stan_glmer does: a smaller step
	// that enters their narrow regions (TestNonCentredPinnedTarget).
	TargetAccept float64

	// Test hooks (export_test.go), nil in every real kernel: the log
	// weight of a state from H(z₀) and its H (nil: H(z₀) − H); the choices
	// between the trajectory and a new subtree (top) and between the
	// halves of a subtree (within), given the log weights of the new part
	// and of the reference (nil: take); the U-turn criterion applied
	// within subtrees (nil: noUTurn); whether a new subtree is discarded
	// rather than sampled from, given its validity (nil: if invalid).
	logWeight   func(h0, h float64) float64
	top, within func(rng *rand.Rand, logNew, logRef float64) bool
	subtreeTurn func(pSharpMinus, pSharpPlus, rho []float64) bool
	discard     func(valid bool) bool
	// With NonCentred: leave the Jacobian out (false: keep it).
	ncNoJacobian bool
}

// DefaultTargetAccept returns TargetAccept, or 0.8 (Stan's adapt_delta)
// when it is not in (0, 1).
func (k NUTS) DefaultTargetAccept() float64 {
	if k.TargetAccept > 0 && k.TargetAccept < 1 {
		return k.TargetAccept
	}
	return 0.8
}

// Name returns "NUTS".
func (NUTS) Name() string { return "NUTS" }

// Exact returns true.
func (NUTS) Exact() bool { return true }

// Start checks the configuration, evaluates log π and its gradient at θ0
// and allocates the trajectory's buffers for the largest tree.
func (k NUTS) Start(t *Target, theta0 []float64) (Chain, error) {
	maxDepth := k.MaxDepth
	if maxDepth == 0 {
		maxDepth = 10
	}
	if maxDepth < 0 || maxDepth > 30 {
		return nil, fmt.Errorf("NUTS: MaxDepth = %d, want in [1, 30] (0 means 10)", k.MaxDepth)
	}
	maxDeltaH := k.MaxDeltaH
	if maxDeltaH == 0 {
		maxDeltaH = 1000
	}
	if !(maxDeltaH > 0) {
		return nil, fmt.Errorf("NUTS: MaxDeltaH = %v, want > 0 (0 means 1000)", k.MaxDeltaH)
	}
	if !(k.TargetAccept == 0 || k.TargetAccept > 0 && k.TargetAccept < 1) {
		return nil, fmt.Errorf("NUTS: TargetAccept = %v, want in (0, 1) (0 means 0.8)", k.TargetAccept)
	}
	g, err := newGradWalkOn("NUTS", t, k.Scale, k.Metric, theta0, k.NonCentred, k.ncNoJacobian)
	if err != nil {
		return nil, err
	}
	d := t.Dim()
	vec := func() []float64 { return make([]float64, d) }
	c := &nutsChain{gradWalk: g, maxDepth: maxDepth, maxDeltaH: maxDeltaH,
		logWeight: k.logWeight, top: k.top, within: k.within, subtreeTurn: k.subtreeTurn, discard: k.discard,
		fwd: newNUTSState(d), bck: newNUTSState(d), propose: newNUTSPoint(d),
		vel: vec(), rho: vec(), rhoFwd: vec(), rhoBck: vec(), rhoExt: vec(),
		pFwdFwd: vec(), pSharpFwdFwd: vec(), pFwdBck: vec(), pSharpFwdBck: vec(),
		pBckFwd: vec(), pSharpBckFwd: vec(), pBckBck: vec(), pSharpBckBck: vec(),
		levels: make([]nutsLevel, maxDepth)}
	for i := 1; i < maxDepth; i++ { // level 0, a single leapfrog step, needs none
		c.levels[i] = nutsLevel{pInitEnd: vec(), pSharpInitEnd: vec(), rhoInit: vec(),
			pFinalBeg: vec(), pSharpFinalBeg: vec(), rhoFinal: vec(), rhoSub: vec(), proposeFinal: newNUTSPoint(d)}
	}
	if c.logWeight == nil {
		c.logWeight = func(h0, h float64) float64 { return h0 - h }
	}
	if c.top == nil {
		c.top = take
	}
	if c.within == nil {
		c.within = take
	}
	if c.subtreeTurn == nil {
		c.subtreeTurn = noUTurn
	}
	if c.discard == nil {
		c.discard = func(valid bool) bool { return !valid }
	}
	return c, nil
}

// nutsPoint is a position with its log density and gradient: a candidate
// draw.
type nutsPoint struct {
	theta, grad []float64
	logPi       float64
}

func newNUTSPoint(d int) nutsPoint {
	return nutsPoint{theta: make([]float64, d), grad: make([]float64, d)}
}

// set copies z into the point.
func (q *nutsPoint) set(z *nutsPoint) {
	copy(q.theta, z.theta)
	copy(q.grad, z.grad)
	q.logPi = z.logPi
}

// nutsState is a point of phase space: a point and its momentum.
type nutsState struct {
	nutsPoint
	p []float64
}

func newNUTSState(d int) nutsState {
	return nutsState{nutsPoint: newNUTSPoint(d), p: make([]float64, d)}
}

// nutsLevel is the scratch of one level of the recursion (Stan's locals of
// build_tree at that depth): the momenta, sharp momenta and momentum sums
// of its two halves, and the later half's draw.
type nutsLevel struct {
	pInitEnd, pSharpInitEnd, rhoInit    []float64
	pFinalBeg, pSharpFinalBeg, rhoFinal []float64
	rhoSub                              []float64
	proposeFinal                        nutsPoint
}

// nutsChain is a NUTS chain: its draw, the trajectory's ends, the
// momentum sums and end momenta of the U-turn criterion, and the scratch
// of every level of the tree, all allocated by Start for the largest tree.
type nutsChain struct {
	gradWalk  // θ, log π and ∇log π: the chain's draw
	maxDepth  int
	maxDeltaH float64

	logWeight   func(h0, h float64) float64
	top, within func(rng *rand.Rand, logNew, logRef float64) bool
	subtreeTurn func(pSharpMinus, pSharpPlus, rho []float64) bool
	discard     func(valid bool) bool

	fwd, bck nutsState   // the trajectory's forward and backward ends
	propose  nutsPoint   // the draw from the newest subtree
	levels   []nutsLevel // build-tree scratch by depth
	vel      []float64   // M⁻¹p in the leapfrog step

	// The momentum sums of the trajectory and of its backward and forward
	// parts, and the momenta and sharp momenta at the ends of those parts
	// (Stan's names: p_fwd_bck is the momentum at the backward end of the
	// forward part).
	rho, rhoFwd, rhoBck, rhoExt                  []float64
	pFwdFwd, pSharpFwdFwd, pFwdBck, pSharpFwdBck []float64
	pBckFwd, pSharpBckFwd, pBckBck, pSharpBckBck []float64

	// The transition being built.
	h0           float64 // H(z₀)
	nLeapfrog    int
	sumMetroProb float64 // Σ min(1, e^{H(z₀)−H}) over the integrated states
	divergent    bool
	moved        bool // the draw left z₀

	// The draw before the transition, kept while the run may interrupt a
	// transition (Target.interrupt): progressive sampling moves θ between
	// doublings, and an abandoned transition puts it back.
	savedTheta, savedGrad []float64
	savedLogPi            float64
}

// A NUTS transition may be abandoned between any two data chunks; it
// restores the draw it started from.
func (c *nutsChain) interruptible() bool { return true }

func (c *nutsChain) abandonStep() {
	if c.savedTheta == nil {
		return
	}
	copy(c.theta, c.savedTheta)
	copy(c.grad, c.savedGrad)
	c.logPi = c.savedLogPi
}

// MarshalState saves nothing for a centred chain; a non-centred one saves
// its position in φ (gradWalk.marshalState).
func (c *nutsChain) MarshalState() ([]byte, error) { return c.marshalState() }

// UnmarshalState restores what MarshalState saved.
func (c *nutsChain) UnmarshalState(b []byte) error { return c.unmarshalState(b) }

// Params reports the tree's limits.
func (c *nutsChain) Params() map[string]float64 {
	return map[string]float64{"max_depth": float64(c.maxDepth), "max_delta_h": c.maxDeltaH}
}

// Step makes one NUTS transition (Betancourt 2017, App. A; Stan's
// base_nuts::transition).
func (c *nutsChain) Step(rng *rand.Rand) (Info, error) {
	// 1. Momentum p ~ N(0, M); both ends of the trajectory are z₀.
	z0 := &c.fwd
	if c.t.interrupt != nil {
		if c.savedTheta == nil {
			c.savedTheta, c.savedGrad = make([]float64, len(c.theta)), make([]float64, len(c.grad))
		}
		copy(c.savedTheta, c.theta)
		copy(c.savedGrad, c.grad)
		c.savedLogPi = c.logPi
	}
	c.metric.DrawMomentum(rng, z0.p)
	copy(z0.theta, c.theta)
	copy(z0.grad, c.grad)
	z0.logPi = c.logPi
	c.h0 = -c.logPi + c.metric.KineticEnergy(z0.p)
	copy(c.bck.p, z0.p)
	c.bck.set(&z0.nutsPoint)
	c.metric.MulInvMass(c.pSharpFwdFwd, z0.p)
	for _, v := range [][]float64{c.pFwdFwd, c.pFwdBck, c.pBckFwd, c.pBckBck, c.rho} {
		copy(v, z0.p)
	}
	for _, v := range [][]float64{c.pSharpFwdBck, c.pSharpBckFwd, c.pSharpBckBck} {
		copy(v, c.pSharpFwdFwd)
	}
	logSumWeight := 0.0 // log w(z₀)
	c.nLeapfrog, c.sumMetroProb, c.divergent, c.moved = 0, 0, false, false

	// 2. Double the trajectory, in a random direction each time, until it
	// U-turns, diverges or reaches the maximum depth.
	depth := 0
	for depth < c.maxDepth {
		clear(c.rhoFwd)
		clear(c.rhoBck)
		logSumSub := math.Inf(-1)
		var valid bool
		var err error
		if rng.Float64() > 0.5 { // forward: the old trajectory becomes the backward part
			copy(c.rhoBck, c.rho)
			copy(c.pBckFwd, c.pFwdFwd)
			copy(c.pSharpBckFwd, c.pSharpFwdFwd)
			valid, err = c.buildTree(rng, &c.fwd, depth, 1, &c.propose,
				c.pSharpFwdBck, c.pSharpFwdFwd, c.rhoFwd, c.pFwdBck, c.pFwdFwd, &logSumSub)
		} else { // backward: the old trajectory becomes the forward part
			copy(c.rhoFwd, c.rho)
			copy(c.pFwdBck, c.pBckBck)
			copy(c.pSharpFwdBck, c.pSharpBckBck)
			valid, err = c.buildTree(rng, &c.bck, depth, -1, &c.propose,
				c.pSharpBckFwd, c.pSharpBckBck, c.rhoBck, c.pBckFwd, c.pBckBck, &logSumSub)
		}
		if err != nil {
			return Info{}, err
		}
		if c.discard(valid) {
			break // a subtree that U-turned or diverged is discarded whole
		}
		depth++
		// Biased progressive sampling between the trajectory and the
		// new subtree.
		if c.top(rng, logSumSub, logSumWeight) {
			c.gradWalk.theta, c.propose.theta = c.propose.theta, c.gradWalk.theta
			c.grad, c.propose.grad = c.propose.grad, c.grad
			c.logPi = c.propose.logPi
			c.moved = true
		}
		logSumWeight = logSumExp(logSumWeight, logSumSub)
		// The U-turn criterion on the merged trajectory and across the
		// boundary between its parts. (valid is false here only in a
		// mutant that samples from invalid subtrees; it still stops.)
		for j := range c.rho {
			c.rho[j] = c.rhoBck[j] + c.rhoFwd[j]
		}
		persist := valid && noUTurn(c.pSharpBckBck, c.pSharpFwdFwd, c.rho)
		for j := range c.rhoExt {
			c.rhoExt[j] = c.rhoBck[j] + c.pFwdBck[j]
		}
		persist = persist && noUTurn(c.pSharpBckBck, c.pSharpFwdBck, c.rhoExt)
		for j := range c.rhoExt {
			c.rhoExt[j] = c.rhoFwd[j] + c.pBckFwd[j]
		}
		persist = persist && noUTurn(c.pSharpBckFwd, c.pSharpFwdFwd, c.rhoExt)
		if !persist {
			break
		}
	}

	// 3. The draw is in place; report the tree.
	n := c.t.N()
	return Info{Accepted: c.moved, AcceptProb: c.sumMetroProb / float64(c.nLeapfrog), LogDensity: c.logDensity(),
		Batch: n, TreeDepth: depth, Divergent: c.divergent}, nil
}

// buildTree integrates a subtree of 2^depth leapfrog steps from the state
// z (an end of the trajectory, moved along) in direction sign, as Stan's
// base_nuts::build_tree: it leaves the subtree's multinomial draw in
// propose, the sharp momenta and momenta at its first and last states in
// pSharpBeg, pSharpEnd, pBeg and pEnd, adds its momenta to rho and the log
// of its weights to *logSumWeight. It returns false if the subtree
// diverged or U-turned, which invalidates it.
func (c *nutsChain) buildTree(rng *rand.Rand, z *nutsState, depth int, sign float64, propose *nutsPoint,
	pSharpBeg, pSharpEnd, rho, pBeg, pEnd []float64, logSumWeight *float64) (bool, error) {
	if depth == 0 {
		// One leapfrog step: a state with its weight.
		inside, err := c.leapfrog(z, sign*c.scale)
		if err != nil {
			return false, err
		}
		c.nLeapfrog++
		h := math.Inf(1) // outside the support: infinitely improbable
		if inside {
			h = -z.logPi + c.metric.KineticEnergy(z.p)
		}
		if math.IsNaN(h) {
			h = math.Inf(1)
		}
		if h-c.h0 > c.maxDeltaH {
			c.divergent = true
		}
		*logSumWeight = logSumExp(*logSumWeight, c.logWeight(c.h0, h))
		if c.h0-h > 0 {
			c.sumMetroProb++
		} else {
			c.sumMetroProb += math.Exp(c.h0 - h)
		}
		propose.set(&z.nutsPoint)
		c.metric.MulInvMass(pSharpBeg, z.p)
		copy(pSharpEnd, pSharpBeg)
		for j, v := range z.p {
			rho[j] += v
		}
		copy(pBeg, z.p)
		copy(pEnd, z.p)
		return !c.divergent, nil
	}

	// Two subtrees of half the depth, the first drawing into propose, the
	// second into the level's own point.
	lv := &c.levels[depth]
	logSumInit := math.Inf(-1)
	clear(lv.rhoInit)
	valid, err := c.buildTree(rng, z, depth-1, sign, propose, pSharpBeg, lv.pSharpInitEnd, lv.rhoInit, pBeg, lv.pInitEnd, &logSumInit)
	if err != nil || !valid {
		return false, err
	}
	logSumFinal := math.Inf(-1)
	clear(lv.rhoFinal)
	valid, err = c.buildTree(rng, z, depth-1, sign, &lv.proposeFinal, lv.pSharpFinalBeg, pSharpEnd, lv.rhoFinal, lv.pFinalBeg, pEnd, &logSumFinal)
	if err != nil || !valid {
		return false, err
	}

	// Multinomial sampling between the halves.
	logSumSub := logSumExp(logSumInit, logSumFinal)
	*logSumWeight = logSumExp(*logSumWeight, logSumSub)
	if c.within(rng, logSumFinal, logSumSub) {
		propose.set(&lv.proposeFinal)
	}

	// The U-turn criterion on the subtree and across its halves' boundary.
	for j := range rho {
		lv.rhoSub[j] = lv.rhoInit[j] + lv.rhoFinal[j]
		rho[j] += lv.rhoSub[j]
	}
	persist := c.subtreeTurn(pSharpBeg, pSharpEnd, lv.rhoSub)
	for j := range rho {
		lv.rhoSub[j] = lv.rhoInit[j] + lv.pFinalBeg[j]
	}
	persist = persist && c.subtreeTurn(pSharpBeg, lv.pSharpFinalBeg, lv.rhoSub)
	for j := range rho {
		lv.rhoSub[j] = lv.rhoFinal[j] + lv.pInitEnd[j]
	}
	return persist && c.subtreeTurn(lv.pSharpInitEnd, pSharpEnd, lv.rhoSub), nil
}

// leapfrog moves z one leapfrog step of size eps (backward in time for
// eps < 0): a half kick with the gradient, a drift θ += eps·M⁻¹p, the
// gradient and log π at the new θ in one read of the data, and another
// half kick. It returns false, reading no data, if θ left the prior's
// support, and false if the energy or gradient at θ is not finite
// (evalStep): both are zero density, a divergence.
func (c *nutsChain) leapfrog(z *nutsState, eps float64) (bool, error) {
	for j, g := range z.grad {
		z.p[j] += eps / 2 * g
	}
	c.metric.MulInvMass(c.vel, z.p)
	for j, v := range c.vel {
		z.theta[j] += eps * v
	}
	lp, err := c.evalStep(z.grad, z.theta)
	if err != nil {
		return false, err
	}
	z.logPi = lp
	if math.IsInf(lp, -1) {
		return false, nil
	}
	for j, g := range z.grad {
		z.p[j] += eps / 2 * g
	}
	return true, nil
}

// noUTurn is the generalised no-U-turn criterion (Betancourt 2017, App.
// A.4.2): a trajectory whose momenta sum to rho and whose ends have sharp
// momenta p♯₋ and p♯₊ has not turned back while both ends still move along
// rho.
func noUTurn(pSharpMinus, pSharpPlus, rho []float64) bool {
	return vec.Dot(pSharpPlus, rho) > 0 && vec.Dot(pSharpMinus, rho) > 0
}

// take reports whether the draw moves to a new part of the trajectory of
// log weight logNew, given the log weight logRef of the reference: with
// probability min(1, e^{logNew − logRef}). Against the old trajectory
// that is biased progressive sampling; against the union of two halves,
// multinomial sampling.
func take(rng *rand.Rand, logNew, logRef float64) bool {
	return logNew > logRef || rng.Float64() < math.Exp(logNew-logRef)
}

// logSumExp returns log(e^a + e^b), −Inf if both are.
func logSumExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(a, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel       = NUTS{}
	_ AcceptTarget = NUTS{}
	_ driverChain  = (*nutsChain)(nil)

	_ stepInterrupter = (*nutsChain)(nil)
	_ MetricAdapter   = (*nutsChain)(nil)
	_ ParamReporter   = (*nutsChain)(nil)
)

// The capabilities NUTS declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k NUTS) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k NUTS) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// WithNonCentred returns k with NonCentred on.
func (k NUTS) WithNonCentred(on bool) Kernel {
	k.NonCentred = on
	return k
}

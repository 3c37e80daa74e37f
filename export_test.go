// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/precision"
	"github.com/exactmh/exactmh/sparse"
)

// Test hooks. Each mutant below is a kernel with one small function
// swapped for a deliberately wrong one; the exactness tests must catch
// every one of them. Production code has no mutant branches: a kernel's
// unexported hook fields are nil except here.

// TunaMHEjectWithNew is TunaMH whose ejection probability uses φ_new in
// place of φ_old.
func TunaMHEjectWithNew(k TunaMH) TunaMH {
	k.term = func(d, mi, a float64) (float64, float64) {
		keep, _ := tunaTerm(-d, mi, a)
		_, term := tunaTerm(d, mi, a)
		return keep, term
	}
	return k
}

// TunaMHUniformDraws is TunaMH that draws data uniformly instead of ∝ c_i.
func TunaMHUniformDraws(k TunaMH) TunaMH { k.weights = uniform; return k }

// PoissonMHFlippedThinning is PoissonMH that keeps draws with probability
// (a + M_i − φ_i)/(a + M_i) instead of (a + φ_i)/(a + M_i).
func PoissonMHFlippedThinning(k PoissonMH) PoissonMH {
	k.keep = func(a, phi, width float64) float64 { return (a + width - phi) / (a + width) }
	return k
}

// PoissonMHUniformDraws is PoissonMH that draws data uniformly instead of
// ∝ M_i.
func PoissonMHUniformDraws(k PoissonMH) PoissonMH { k.weights = uniform; return k }

func uniform(w []float64) []float64 {
	u := make([]float64, len(w))
	for i := range u {
		u[i] = 1
	}
	return u
}

// FlyMCBright reports whether datum i is bright in a FlyMC chain.
func FlyMCBright(ch Chain, i int) bool {
	c := ch.(*flyChain)
	return int(c.pos[i]) < c.nBright
}

// FlyMCNoBoundTerm returns a FlyMC that leaves the collapsed bound ratio
// Π B_i(θ′)/B_i(θ) out of the θ-step.
func FlyMCNoBoundTerm(k FlyMC) FlyMC {
	k.logBoundSum = func([]float64) float64 { return 0 }
	return k
}

// FlyMCDarkenAlways returns a FlyMC whose z-step darkens every bright datum
// (as if q_{b→d} ignored ρ_i).
func FlyMCDarkenAlways(k FlyMC) FlyMC {
	k.logDarken = func(float64, float64) float64 { return math.Inf(1) }
	return k
}

// MALAStaleReverse returns a MALA whose reverse proposal density uses the
// gradient at θ instead of θ′.
func MALAStaleReverse(k MALA) MALA { k.reverse = stale; return k }

func stale(g, _ []float64) []float64 { return g }

// HMCStaleGradient returns an HMC that never refreshes the gradient inside
// the trajectory (the reference code's bug G10, in the extreme).
func HMCStaleGradient(k HMC) HMC {
	k.refresh = func(*hmcChain, []float64, []float64) error { return nil }
	return k
}

// HMCLeapfrog integrates (θ, p) with an HMC chain's leapfrog at step eps and
// returns the end point; ok is false if the path left the support.
func HMCLeapfrog(ch Chain, theta, p []float64, eps float64) (thetaEnd, pEnd []float64, ok bool, err error) {
	c := ch.(*hmcChain)
	copy(c.next, theta)
	copy(c.momentum, p)
	if err := c.gradient(c.gradNext, c.next); err != nil {
		return nil, nil, false, err
	}
	ok, err = c.leapfrog(eps)
	return append([]float64(nil), c.next...), append([]float64(nil), c.momentum...), ok, err
}

// PoissonMALAStaleReverse returns a Poisson-MALA whose reverse proposal
// uses the gradient estimate at θ instead of θ′.
func PoissonMALAStaleReverse(k PoissonMALA) PoissonMALA { k.reverse = stale; return k }

// PoissonBarkerFlipped returns a Poisson-Barker with its proposal ratio
// oriented the wrong way.
func PoissonBarkerFlipped(k PoissonBarker) PoissonBarker {
	k.proposalRatio = func(c *poissonGradChain, theta, next, gRev []float64, _ float64) float64 {
		var r float64
		for j := range theta {
			dj := theta[j] - next[j] // the wrong way round
			r += logit.Softplus(-dj*c.g[j]) - logit.Softplus(dj*gRev[j])
		}
		return r
	}
	return k
}

// TunaMHSGLDStaleReverse returns a TunaMH-SGLD whose reverse proposal mean
// reuses the drift computed at θ.
func TunaMHSGLDStaleReverse(k TunaMHSGLD) TunaMHSGLD {
	k.reverseMean = func(c *tunaSGLDChain, theta, next []float64, _ []int, _ float64) error {
		for j := range c.muRev {
			c.muRev[j] = next[j] + (c.mu[j] - theta[j])
		}
		return nil
	}
	return k
}

// SMHNoControlVariate returns an SMH that skips the control-variate factor.
func SMHNoControlVariate(k SMH) SMH {
	k.controlVariate = func(float64, float64) float64 { return 0 }
	return k
}

// SMHFlippedRemainder returns an SMH that thins with the remainder of the
// reverse move.
func SMHFlippedRemainder(k SMH) SMH {
	k.remainder = func(r float64) float64 { return -r }
	return k
}

// TFMHFlippedSign returns a TFMH that rejects with probability
// max(0, −ΔU_i)/(c_iM): the per-datum factor of the reverse move.
func TFMHFlippedSign(k TFMH) TFMH {
	k.increase = func(diff float64) float64 { return diff }
	return k
}

// TFMHNoPriorFactor returns a TFMH that leaves out the prior-and-proposal
// factor.
func TFMHNoPriorFactor(k TFMH) TFMH {
	k.priorFactor = func(float64) float64 { return 0 }
	return k
}

// MetricWindowEnds returns the warmup transitions at which the driver's
// metric adaptation ends a window, for a warmup of the given length (nil
// if it estimates no metric).
func MetricWindowEnds(warmup int) []int {
	w := newMetricWindows(warmup, 1, false, false)
	if w == nil {
		return nil
	}
	var ends []int
	theta := []float64{0}
	for it := range warmup {
		theta[0] = float64(it % 7)
		if _, ok, _ := w.learn(theta); ok {
			ends = append(ends, it)
		}
	}
	return ends
}

// NUTSUnweighted returns a NUTS whose multinomial weights ignore the
// energy error: every state of the trajectory is equally likely, as if
// the integrator were exact.
func NUTSUnweighted(k NUTS) NUTS {
	k.logWeight = func(float64, float64) float64 { return 0 }
	return k
}

// NUTSLastState returns a NUTS that draws the last state it integrated
// (of the last valid subtree) instead of sampling the trajectory.
func NUTSLastState(k NUTS) NUTS {
	always := func(*rand.Rand, float64, float64) bool { return true }
	k.top, k.within = always, always
	return k
}

// NUTSNoSubtreeCheck returns a NUTS that never finds a U-turn within a
// subtree, only on the whole trajectory: a subtree that turned back is
// kept and sampled from.
func NUTSNoSubtreeCheck(k NUTS) NUTS {
	k.subtreeTurn = func(_, _, _ []float64) bool { return true }
	return k
}

// NUTSSampleInvalid returns a NUTS that, when a new subtree U-turns within
// itself or diverges, still samples from it before stopping.
func NUTSSampleInvalid(k NUTS) NUTS {
	k.discard = func(bool) bool { return false }
	return k
}

// PoissonBarkerIdentityRatio returns a Poisson-Barker that proposes with
// its metric but computes the proposal ratio as if the metric were the
// identity (Δθ_j g_j in place of the whitened Δζ_j(Lᵀg)_j). For a diagonal
// metric the two coincide (Δζ_j(Lᵀg)_j = Δθ_j g_j): the mutant is wrong
// only for a dense one.
func PoissonBarkerIdentityRatio(k PoissonBarker) PoissonBarker {
	k.proposalRatio = identityRatio
	return k
}

// PoissonMALAIdentityRatio returns a Poisson-MALA that proposes with its
// metric but computes the proposal ratio with the identity's norm and
// drift.
func PoissonMALAIdentityRatio(k PoissonMALA) PoissonMALA {
	k.proposalRatio = identityRatio
	return k
}

func identityRatio(c *poissonGradChain, theta, next, gRev []float64, scale float64) float64 {
	return c.proposalRatioWith(Metric{}, theta, next, gRev, scale)
}

// TunaMHSGLDIdentityRatio returns a TunaMH-SGLD that proposes with its
// metric but computes the Gaussian proposal ratio in the identity's norm.
func TunaMHSGLDIdentityRatio(k TunaMHSGLD) TunaMHSGLD {
	k.proposalRatio = func(c *tunaSGLDChain, theta, next []float64, eps float64) float64 {
		return c.proposalRatioWith(Metric{}, theta, next, eps)
	}
	return k
}

// PoissonBuffers reports, for a PoissonMH, Poisson-Barker or Poisson-MALA
// chain, whether it falls back to full-batch steps and the capacity of its
// buffers of kept draws (the largest of the three).
func PoissonBuffers(ch Chain) (fallback bool, capacity int) {
	var p *poissonCounts
	switch c := ch.(type) {
	case *auxChain[struct{}, *poissonCounts]:
		p = c.scheme.(*poissonChain).counts
	case *metricAux[*poissonCounts, *poissonCounts]:
		p = c.scheme.(*poissonGradChain).counts
	default:
		panic(fmt.Sprintf("PoissonBuffers: %T is not a Poisson chain", ch))
	}
	return p.fallback, max(cap(p.kept), cap(p.phiOld), cap(p.phiNew))
}

// ControlVariatesHalfQuadratic is ControlVariatesOrder with half the summed
// Hessian in the surrogate prior while the remainders subtract all of it:
// the target gains e^{β¼ΔᵀHΔ} (a mutant).
func ControlVariatesHalfQuadratic(p *Posterior, la *LaplaceApprox, order int) (*Posterior, error) {
	return controlVariates(p, la, cvOrderMode(order), func(q *cvPrior) {
		for i := range q.hess {
			q.hess[i] /= 2
		}
	}, nil)
}

// ControlVariatesShiftedSurrogate is ControlVariatesOrder with the surrogate
// prior expanded about θ̂ + shift (with θ̂'s gradient and Hessian) while the
// remainders subtract the expansion about θ̂: the target gains
// e^{β·shiftᵀH(θ − θ̂)}, which moves its mean by about shift (a mutant).
func ControlVariatesShiftedSurrogate(p *Posterior, la *LaplaceApprox, order int, shift []float64) (*Posterior, error) {
	return controlVariates(p, la, cvOrderMode(order), func(q *cvPrior) {
		c := make([]float64, len(q.center)) // the energy keeps θ̂
		for j, v := range q.center {
			c[j] = v + shift[j]
		}
		q.center = c
	}, nil)
}

// SetAvailableMemory makes the memory check see bytes available (ok
// false: unknown) until the returned function restores it.
func SetAvailableMemory(bytes float64, ok bool) (restore func()) {
	old := availableMemory
	availableMemory = func() (float64, bool) { return bytes, ok }
	return func() { availableMemory = old }
}

// ExchangeSimulateAtCurrent is Exchange that simulates the synthetic data
// at the current θ instead of the proposal θ′.
func ExchangeSimulateAtCurrent[D any](k Exchange[D]) Exchange[D] {
	k.simAt = func(theta, _ []float64) []float64 { return theta }
	return k
}

// SetCVRecordLimit makes ControlVariates store each datum's expansion only
// up to n data (0: never) until the returned function restores it.
func SetCVRecordLimit(n int) (restore func()) {
	old := cvRecordLimit
	cvRecordLimit = n
	return func() { cvRecordLimit = old }
}

// CNQuad returns (v − μ)ᵀΣ⁻¹(v − μ) for c's Gaussian N(μ, Σ).
func CNQuad(c *CrankNicolson, v []float64) float64 { return c.fac.Quad(v, c.mean) }

// NewCrankNicolsonSparse returns the Crank–Nicolson proposal around
// N(mean, prec⁻¹) for a sparse precision, factored under a minimum degree
// ordering: the proposal a sparse Laplace approximation makes
// (LaplaceApprox.CrankNicolson), from a given precision for the tests.
func NewCrankNicolsonSparse(mean []float64, prec *sparse.SymCSC) (*CrankNicolson, error) {
	if err := prec.Check(); err != nil {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: precision: %w", err)
	}
	if prec.N != len(mean) {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: len(mean) = %d, precision %d×%d", len(mean), prec.N, prec.N)
	}
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewCrankNicolsonSparse: %w", err)
	}
	la := &LaplaceApprox{Mean: mean, SparsePrecision: prec.Clone(), SparseFactor: c}
	return la.CrankNicolson()
}

// NewGaussianWalkSparse returns the random walk shaped by the sparse
// precision prec (LaplaceApprox.GaussianWalk of a sparse approximation).
func NewGaussianWalkSparse(prec *sparse.SymCSC) (*GaussianWalk, error) {
	c, err := sparse.Factorize(prec)
	if err != nil {
		return nil, fmt.Errorf("exactmh: NewGaussianWalkSparse: %w", err)
	}
	return &GaussianWalk{fac: &precision.Sparse{Prec: prec, Chol: c}}, nil
}

// CVGrowthFactor returns e^{s·max(a, b)}, the factor growthDistance puts
// on a control-variate bound with LossGrowther (1 without).
func CVGrowthFactor(p *Posterior, theta, thetaNew []float64) float64 {
	e := p.Energy.(*cvEnergy)
	if e.sGrow == 0 {
		return 1
	}
	return math.Exp(e.sGrow * max(e.norm(theta, e.center), e.norm(thetaNew, e.center)))
}

// ControlVariatesOrder is ControlVariates expanded to the given order, 2 or
// 3 (3 needs a GLM with LossDeriv3 and LossBound4), instead of the order
// it chooses.
func ControlVariatesOrder(p *Posterior, la *LaplaceApprox, order int) (*Posterior, error) {
	return controlVariates(p, la, cvOrderMode(order), nil, nil)
}

// ControlVariatesOrderNegatedCube is ControlVariatesOrder(p, la, 3) with
// the summed third-derivative tensor negated in the surrogate prior while
// the remainders subtract it with its sign: the target gains
// e^{β·T(Δ,Δ,Δ)/3}, a skew (a mutant: a sign error).
func ControlVariatesOrderNegatedCube(p *Posterior, la *LaplaceApprox) (*Posterior, error) {
	return controlVariates(p, la, cvCubicAlways, func(q *cvPrior) {
		for i := range q.cube.w {
			q.cube.w[i] = -q.cube.w[i]
		}
	}, nil)
}

// cvOrderMode returns the mode that forces order 2 or 3.
func cvOrderMode(order int) cvCubicMode {
	if order == 3 {
		return cvCubicAlways
	}
	return cvCubicNever
}

// CVOrder returns the expansion order of a ControlVariates rewrite: 3 or 2.
func CVOrder(p *Posterior) int {
	if p.Energy.(*cvEnergy).cuber != nil {
		return 3
	}
	return 2
}

// NUTSNonCentredNoJacobian returns a non-centred NUTS without the
// Jacobian Σ_t G_t·log τ_t of u = τ·z: the mutant "a prior term dropped"
// of the non-centred parametrisation.
func NUTSNonCentredNoJacobian(k NUTS) NUTS {
	k.NonCentred, k.ncNoJacobian = true, true
	return k
}

// HMCNonCentredNoJacobian is NUTSNonCentredNoJacobian for HMC.
func HMCNonCentredNoJacobian(k HMC) HMC {
	k.NonCentred, k.ncNoJacobian = true, true
	return k
}

// WarmupStopMutant makes every chain's warmup stop by a mutant of
// independenceLimit until restore is called: "early", a stop from the
// first transition at step scale 1, before the Crank–Nicolson proposal
// is its independence limit and inside Stan's initial buffer; "never",
// no stop, warmup adapting on past the limit.
func WarmupStopMutant(name string) (restore func()) {
	old := warmupStop
	switch name {
	case "early":
		warmupStop = func(cr *chainRunner, it int, set *Settings) string {
			if !cr.cnLimit || !(cr.tune.StepScale() >= 1 && cr.adapt.Hbar < 0) {
				return ""
			}
			return fmt.Sprintf("stopped after %d of %d warmup transitions (mutant: at scale %.3g)", it+1, set.Warmup, cr.tune.StepScale())
		}
	case "never":
		warmupStop = func(*chainRunner, int, *Settings) string { return "" }
	case "uncapped only":
		warmupStop = func(cr *chainRunner, it int, set *Settings) string {
			if !cr.cnLimit {
				return ""
			}
			return old(cr, it, set)
		}
	default:
		panic("WarmupStopMutant: no mutant " + name)
	}
	return func() { warmupStop = old }
}

// ChoiceForRun returns an empty Choice deciding a run of run transitions
// (Choose sets it from the settings), whose Pilot caps its pilots.
func ChoiceForRun(run int) *Choice { return &Choice{run: run} }

// EarlyMidOff turns off the early mid-warmup decision (earlyDecision)
// until restore is called: midWarmuper chains decide at Warmup/2 only.
func EarlyMidOff() (restore func()) {
	earlyMid = false
	return func() { earlyMid = true }
}

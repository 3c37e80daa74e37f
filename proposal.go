// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// Proposal draws a candidate θ' from θ. A Proposal is a configuration shared
// by all chains, so it must be safe for concurrent use; the per-chain step
// scale, which the driver adapts during warmup, is passed to every call.
type Proposal interface {
	// Propose writes θ' into dst (len(dst) == len(theta); dst and theta do
	// not overlap) and returns log q(θ|θ') − log q(θ'|θ), the log proposal
	// ratio of the Metropolis–Hastings acceptance probability. scale > 0 is
	// the chain's current step scale. A proposal that picks one of several
	// moves at random, independently of θ, may return the picked move's
	// ratio instead: the chain is then a mixture of Metropolis–Hastings
	// kernels, each reversible with respect to the target, and so is the
	// mixture (CrankNicolson's random-walk steps are such a move).
	Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64
}

// RandomWalk is the Gaussian random walk θ' = θ + scale·diag(Sigma)·z,
// z ~ N(0, I). It is symmetric, so its log proposal ratio is 0. A nil Sigma
// is the isotropic walk θ' = θ + scale·z, the papers' random walk with
// "step size" scale.
type RandomWalk struct {
	// Sigma optionally preconditions each coordinate (for example with
	// posterior standard deviations). nil means all ones.
	Sigma []float64
}

// Propose draws θ' = θ + scale·Sigma∘z and returns 0.
func (w RandomWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if w.Sigma == nil {
		for j, v := range theta {
			dst[j] = v + scale*rng.NormFloat64()
		}
		return 0
	}
	for j, v := range theta {
		dst[j] = v + scale*w.Sigma[j]*rng.NormFloat64()
	}
	return 0
}

// checkDim reports whether Sigma fits dimension d.
func (w RandomWalk) checkDim(d int) error {
	if w.Sigma == nil {
		return nil
	}
	if len(w.Sigma) != d {
		return fmt.Errorf("RandomWalk.Sigma has length %d, want %d", len(w.Sigma), d)
	}
	for j, s := range w.Sigma {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("RandomWalk.Sigma[%d] = %v, want finite > 0", j, s)
		}
	}
	return nil
}

// checkScale validates a step scale set by a user.
func checkScale(who string, s float64) error {
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("%s: step scale %v, want finite > 0", who, s)
	}
	return nil
}

// GaussianWalk is the random walk θ′ = θ + scale·Lz, z ~ N(0, I), whose
// increments have covariance scale²·Σ for a given Σ = LLᵀ: a random walk
// shaped like the posterior, for example by the Laplace approximation's
// covariance H⁻¹. On a posterior close to N(θ̂, Σ) its optimal scale is
// about 2.38/√d and its acceptance about 0.234 in any orientation, where the
// isotropic walk's step must shrink to the posterior's narrowest direction.
// It is symmetric: its log proposal ratio is 0. A step costs O(d²).
type GaussianWalk struct {
	l []float64 // L, row-major lower triangular d×d
}

// NewGaussianWalk returns the random walk with increment covariance
// scale²·cov. cov must be symmetric positive definite.
func NewGaussianWalk(cov mat.Symmetric) (*GaussianWalk, error) {
	l, err := choleskyRows("NewGaussianWalk", cov)
	if err != nil {
		return nil, err
	}
	return &GaussianWalk{l: l}, nil
}

// Propose draws θ′ = θ + scale·Lz and returns 0.
func (w *GaussianWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	walkStep(rng, dst, theta, w.l, scale)
	return 0
}

// walkStep sets dst = θ + scale·Lz, z ~ N(0, I), for a row-major lower
// triangular L: the Gaussian walk's move and CrankNicolson's random-walk
// steps.
func walkStep(rng *rand.Rand, dst, theta, l []float64, scale float64) {
	lowerTimesNormal(rng, dst, l)
	for j, v := range theta {
		dst[j] = v + scale*dst[j]
	}
}

func (w *GaussianWalk) checkDim(d int) error {
	if n := sqrtLen(w.l); n != d {
		return fmt.Errorf("GaussianWalk has dimension %d, want %d", n, d)
	}
	return nil
}

// CrankNicolson is the preconditioned Crank–Nicolson proposal around a
// Gaussian N(μ, Σ):
//
//	θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·Lz,  z ~ N(0, I),  LLᵀ = Σ,  ρ = e^{−scale}.
//
// It leaves N(μ, Σ) invariant and is reversible with respect to it, so its
// log proposal ratio is log N(θ; μ, Σ) − log N(θ′; μ, Σ): the Gaussian part
// of the target cancels from the acceptance ratio, and what is left is the
// target's departure from the Gaussian. With μ and Σ from the Laplace
// approximation (the MAP and H⁻¹) a concentrated posterior is close to
// N(μ, Σ) (Bernstein–von Mises), so acceptance stays high even for large
// moves in any dimension. scale → 0 makes small moves (ρ → 1); large scales
// approach the independence sampler from N(μ, Σ). The driver adapts scale
// like any step scale. A step costs O(d²).
//
// A fraction Walk of the steps (defaultWalk unless changed) are instead the
// Gaussian random walk θ′ = θ + (2.38/√d)·Lz, whose log proposal ratio is 0:
// the random walk shaped by Σ at its optimal step for a target near
// N(μ, Σ). Which move a step makes is drawn independently of θ, so the
// chain is a mixture of two Metropolis–Hastings kernels that are each
// reversible with respect to the target, and so is the mixture. The walk
// is there for targets with heavier tails than N(μ, Σ), where
// Crank–Nicolson moves alone are not geometrically ergodic: in such a tail
// the target's ratio to N(μ, Σ) is larger than anywhere the move pulls
// toward, so those moves are rejected and the chain stays, while a
// random-walk step toward the centre raises the target and is accepted.
// TestCrankNicolsonWalkHeavyTail shows a chain without the walk staying
// thousands of steps in a Student-t tail and one with it exact there; on
// near-Gaussian posteriors the walk costs MH some of its ESS per step.
// Walk = 0 is the pure Crank–Nicolson proposal.
type CrankNicolson struct {
	// Walk is the probability, in [0, 1], that a step is the random walk
	// rather than the Crank–Nicolson move.
	Walk float64

	mean []float64
	l    []float64 // L, row-major lower triangular d×d
	prec []float64 // Σ⁻¹, row-major d×d
}

// defaultWalk is the fraction of random-walk steps NewCrankNicolson sets
// (CrankNicolson.Walk).
const defaultWalk = 0.1

// NewCrankNicolson returns the Crank–Nicolson proposal around N(mean, cov),
// with a fraction defaultWalk of random-walk steps. cov must be symmetric
// positive definite.
func NewCrankNicolson(mean []float64, cov mat.Symmetric) (*CrankNicolson, error) {
	if cov.SymmetricDim() != len(mean) {
		return nil, fmt.Errorf("exactmh: NewCrankNicolson: len(mean) = %d, covariance %d×%d", len(mean), cov.SymmetricDim(), cov.SymmetricDim())
	}
	if err := vec.FiniteVec("NewCrankNicolson: mean", mean); err != nil {
		return nil, err
	}
	l, err := choleskyRows("NewCrankNicolson", cov)
	if err != nil {
		return nil, err
	}
	d := len(mean)
	var ch mat.Cholesky
	ch.Factorize(cov) // succeeded in choleskyRows
	var p mat.SymDense
	if err := ch.InverseTo(&p); err != nil {
		return nil, fmt.Errorf("exactmh: NewCrankNicolson: inverting the covariance: %w", err)
	}
	prec := make([]float64, d*d)
	for j := range d {
		for k := range d {
			prec[j*d+k] = p.At(j, k)
		}
	}
	return &CrankNicolson{Walk: defaultWalk, mean: slices.Clone(mean), l: l, prec: prec}, nil
}

// Propose draws θ′ and returns its log proposal ratio: for a Crank–Nicolson
// move log N(θ; μ, Σ) − log N(θ′; μ, Σ), for a random-walk step 0.
func (c *CrankNicolson) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if c.Walk > 0 && rng.Float64() < c.Walk {
		walkStep(rng, dst, theta, c.l, 2.38/math.Sqrt(float64(len(dst))))
		return 0
	}
	rho := math.Exp(-scale)
	s := math.Sqrt(-math.Expm1(-2 * scale)) // √(1 − ρ²), accurate for small scales
	lowerTimesNormal(rng, dst, c.l)
	for j, m := range c.mean {
		dst[j] = m + rho*(theta[j]-m) + s*dst[j]
	}
	return (c.quad(dst) - c.quad(theta)) / 2
}

// String describes the proposal's configuration, as the Stan CSV files'
// configuration comments record it: "CrankNicolson(d=32, walk=0.1)".
func (c *CrankNicolson) String() string {
	return fmt.Sprintf("CrankNicolson(d=%d, walk=%g)", len(c.mean), c.Walk)
}

// quad returns (v − μ)ᵀΣ⁻¹(v − μ), without scratch memory.
func (c *CrankNicolson) quad(v []float64) float64 {
	d := len(c.mean)
	var q float64
	for j := range d {
		var r float64
		row := c.prec[j*d : (j+1)*d]
		for k, p := range row {
			r += p * (v[k] - c.mean[k])
		}
		q += (v[j] - c.mean[j]) * r
	}
	return q
}

// checkDim reports whether the proposal fits dimension d and its Walk is
// a probability.
func (c *CrankNicolson) checkDim(d int) error {
	if !(c.Walk >= 0 && c.Walk <= 1) {
		return fmt.Errorf("CrankNicolson.Walk = %g, want a probability in [0, 1]", c.Walk)
	}
	if len(c.mean) != d {
		return fmt.Errorf("CrankNicolson has dimension %d, want %d", len(c.mean), d)
	}
	return nil
}

// lowerTimesNormal sets dst = Lz for z ~ N(0, I) and a row-major lower
// triangular L, in place: z is drawn into dst and multiplied from the last
// row up, so that row j reads only entries k ≤ j still holding z.
func lowerTimesNormal(rng *rand.Rand, dst, l []float64) {
	d := len(dst)
	for j := range dst {
		dst[j] = rng.NormFloat64()
	}
	for j := d - 1; j >= 0; j-- {
		var s float64
		for k, v := range l[j*d : j*d+j+1] {
			s += v * dst[k]
		}
		dst[j] = s
	}
}

// choleskyRows returns the lower Cholesky factor of a symmetric positive
// definite matrix, row-major.
func choleskyRows(who string, cov mat.Symmetric) ([]float64, error) {
	d := cov.SymmetricDim()
	if d == 0 {
		return nil, fmt.Errorf("exactmh: %s: empty covariance", who)
	}
	for j := range d {
		for k := range d {
			if v := cov.At(j, k); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("exactmh: %s: covariance[%d][%d] = %v, want finite", who, j, k, v)
			}
		}
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(cov); !ok {
		return nil, fmt.Errorf("exactmh: %s: the covariance is not positive definite", who)
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	l := make([]float64, d*d)
	for j := range d {
		for k := 0; k <= j; k++ {
			l[j*d+k] = lt.At(j, k)
		}
	}
	return l, nil
}

// sqrtLen returns n for a slice of n² elements.
func sqrtLen(x []float64) int { return int(math.Round(math.Sqrt(float64(len(x))))) }

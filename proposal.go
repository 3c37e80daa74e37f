// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/precision"
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

// GaussianWalk is the random walk θ′ = θ + scale·ξ, ξ ~ N(0, Σ), for a
// given Σ: a random walk shaped like the posterior, for example by the
// Laplace approximation's covariance H⁻¹ (LaplaceApprox.GaussianWalk). On
// a posterior close to N(θ̂, Σ) its optimal scale is about 2.38/√d and its
// acceptance about 0.234 in any orientation, where the isotropic walk's
// step must shrink to the posterior's narrowest direction. It is
// symmetric: its log proposal ratio is 0. ξ is drawn through the
// precision factor (internal/precision): Lz with LLᵀ = Σ, O(d²) a step,
// or for a sparse Laplace approximation PᵀL⁻ᵀz with H = PᵀLLᵀP,
// O(nnz(L)).
type GaussianWalk struct {
	fac precision.Factor
}

// NewGaussianWalk returns the random walk with increment covariance
// scale²·cov. cov must be symmetric positive definite.
func NewGaussianWalk(cov mat.Symmetric) (*GaussianWalk, error) {
	l, err := precision.CholeskyRows("NewGaussianWalk", cov)
	if err != nil {
		return nil, err
	}
	return &GaussianWalk{fac: precision.NewDenseCovChol(l)}, nil
}

// Propose draws θ′ = θ + scale·ξ and returns 0.
func (w *GaussianWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	walkStep(rng, dst, theta, w.fac, scale)
	return 0
}

// walkStep sets dst = θ + scale·ξ, ξ ~ N(0, Σ) through the factor: the
// Gaussian walk's move and CrankNicolson's random-walk steps.
func walkStep(rng *rand.Rand, dst, theta []float64, fac precision.Factor, scale float64) {
	fac.Normal(rng, dst)
	for j, v := range theta {
		dst[j] = v + scale*dst[j]
	}
}

func (w *GaussianWalk) checkDim(d int) error {
	if n := w.fac.Dim(); n != d {
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
// like any step scale. Σ is held as a precision factor
// (internal/precision), the one axis between dense and sparse: a step
// costs O(d²), and around a sparse Laplace approximation
// (LaplaceApprox.CrankNicolson) O(nnz) of its factor.
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
	// Nu, when positive (at least 1), makes the Crank–Nicolson moves
	// reversible with respect to a product of Student-t distributions t_ν
	// in the coordinates whitened by N(μ, Σ), instead of N(μ, Σ) itself:
	// a scale mixture of the Gaussian move with a latent scale per
	// coordinate (see Propose). 0 is the Gaussian proposal. The automatic
	// default keeps 0: on the rare-event logistic regression of
	// examples/rare, small ν shortened the longest stays and raised tail
	// ESS relative to bulk ESS but cost bulk ESS per transition, and larger
	// ν stuck longer (the measurements: examples/README, "rare").
	Nu float64
	// MaxScale, when positive, caps the step scale of the Crank–Nicolson
	// moves: they use ρ = e^{−min(scale, MaxScale)}, so ρ ≥ e^{−MaxScale}
	// whatever scale the chain passes, and the driver's warmup adapts the
	// scale no higher (Sample). 0 is no cap. Without a cap, warmup on a
	// posterior close to N(μ, Σ) drives the scale up without bound (the
	// acceptance rate stays above its target as ρ → 0) and the moves become
	// independent draws from N(μ, Σ), which stick where the posterior has a
	// heavier or skewed tail; with ρ ≥ e^{−tailMaxScale} every move is also
	// partly local (TestCrankNicolsonMaxScale). The automatic default
	// pilots the chosen Crank–Nicolson kernel with and without that cap and
	// keeps the better by its tail-aware ESS per second (Choose).
	MaxScale float64
	// Antithetic, when true, negates ρ: the Crank–Nicolson moves are
	//
	//	θ′ = μ + ρ(θ − μ) + √(1 − ρ²)·Lz,  ρ = −e^{−min(scale, MaxScale)},
	//
	// which pull θ′ to the far side of μ. The pair (θ, θ′) with θ ~ N(μ, Σ)
	// is Gaussian with covariances Σ, Σ and ρΣ, symmetric in θ and θ′ for
	// every ρ in (−1, 1), so the move is reversible with respect to N(μ, Σ)
	// and its log proposal ratio is the same as for ρ > 0
	// (TestCrankNicolsonAntithetic proves it through the kit, with a mutant
	// whose ratio is wrong). On a posterior close to N(μ, Σ) a linear
	// function of θ then follows an AR(1) chain with a negative
	// coefficient, whose effective sample size exceeds the number of draws
	// ((1 − ρ)/(1 + ρ) a draw when every move is accepted), where ρ = 0,
	// the independence sampler, gives at most one. A control-variate
	// kernel's batch depends on the move's length δ only through
	// min(·, δ·…) (ControlVariates), which is already at its large-move
	// value for |ρ| ≲ 0.9, so these moves cost about as many data as the
	// independence sampler's. Warmup raises the scale (so lowers |ρ|) while
	// the acceptance rate is above its target; MaxScale keeps |ρ| ≥
	// e^{−MaxScale}. Squares and tail indicators of θ are not
	// anticorrelated (their lag-one correlation is about ρ² ≥ 0), so the
	// gain is in bulk ESS of means, not in tail ESS: on examples/tall's
	// Student-t regression at d = 100 (N = 10⁵), ρ = −½ gave 3.6 times
	// the bulk ESS a step of ρ ≈ 0 at the same data a step, and about the
	// same tail ESS (figures/bench/antithetic_cn.txt). The automatic
	// default, which scores min(bulk, tail) ESS, does not use it.
	Antithetic bool

	mean []float64
	fac  precision.Factor // Σ⁻¹ and its factor, dense or sparse
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
	fac, err := precision.NewDenseCov("NewCrankNicolson", cov)
	if err != nil {
		return nil, err
	}
	return &CrankNicolson{Walk: defaultWalk, mean: slices.Clone(mean), fac: fac}, nil
}

// Propose draws θ′ and returns its log proposal ratio: for a Crank–Nicolson
// move log N(θ; μ, Σ) − log N(θ′; μ, Σ), for a random-walk step 0.
//
// With Nu = ν > 0 the Crank–Nicolson moves are made in the whitened
// coordinates u = L⁻¹(θ − μ), each coordinate around its own Student-t
// t_ν(0, 1): u_j's latent precision is drawn from its conditional
// w_j ~ Gamma((ν + 1)/2, rate (ν + u_j²)/2), and then
//
//	u′_j = ρ·u_j + √(1 − ρ²)·z_j/√w_j,  θ′ = μ + Lu′.
//
// t_ν is the scale mixture ∫ N(0, 1/w) Gamma(w; ν/2, ν/2) dw, and the
// Gaussian move is reversible with respect to N(0, 1/w), so
// t_ν(u_j)·q(u′_j|u_j) = ∫ p(w)·N(u_j; 0, 1/w)·k_w(u_j, u′_j) dw is
// symmetric: each coordinate's move, and so the whole move, is reversible
// with respect to the product Π_j t_ν(u_j), and the log ratio is
// Σ_j (ν + 1)/2·(log(1 + u′_j²/ν) − log(1 + u_j²/ν)) (the Jacobian of
// θ ↦ u cancels). This is a mixed preconditioned Crank–Nicolson move
// (Kamatani's MpCN family) with a latent scale per whitened coordinate. A
// chain far out in one coordinate's tail has a large u_j², hence a small
// w_j, and proposes on the scale of its distance in that coordinate only:
// unlike the Gaussian moves, which pull it into the bulk against a
// reference ratio that grows like e^{u_j²/2}, it can move about the tail.
// A multivariate t (one latent scale for all coordinates) does not do
// this in many dimensions: one coordinate's excursion barely changes
// ‖u‖², which the other d − 1 coordinates dominate.
func (c *CrankNicolson) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if c.Walk > 0 && rng.Float64() < c.Walk {
		walkStep(rng, dst, theta, c.fac, 2.38/math.Sqrt(float64(len(dst))))
		return 0
	}
	rho, s := c.coefficients(scale)
	if c.Nu > 0 {
		return c.proposeT(rng, dst, theta, rho, s)
	}
	if f, ok := c.fac.(*precision.Dense); ok {
		return f.CrankNicolsonStep(rng, dst, theta, c.mean, rho, s)
	}
	c.fac.Normal(rng, dst)
	for j, m := range c.mean {
		dst[j] = m + rho*(theta[j]-m) + s*dst[j]
	}
	return (c.fac.Quad(dst, c.mean) - c.fac.Quad(theta, c.mean)) / 2
}

// proposeT is Propose's Crank–Nicolson move around the product of
// Student-t distributions t_ν in the whitened coordinates, ν = c.Nu. It
// works in dst without scratch memory: u = L⁻¹(θ − μ) by forward
// substitution, then u′ in place, then θ′ = μ + Lu′ from the last row up.
// It needs the dense factor (checkDim).
func (c *CrankNicolson) proposeT(rng *rand.Rand, dst, theta []float64, rho, s float64) float64 {
	d := len(dst)
	l := c.fac.(*precision.Dense).C
	for j := range d {
		row := l[j*d : j*d+j+1]
		v := theta[j] - c.mean[j]
		for k, l := range row[:j] {
			v -= l * dst[k]
		}
		dst[j] = v / row[j]
	}
	nu := c.Nu
	half := (nu + 1) / 2
	var logQ float64
	for j, u := range dst {
		w := gammaRand(rng, half) * 2 / (nu + u*u)
		un := rho*u + s*rng.NormFloat64()/math.Sqrt(w)
		logQ += math.Log1p(un*un/nu) - math.Log1p(u*u/nu)
		dst[j] = un
	}
	for j := d - 1; j >= 0; j-- {
		var v float64
		for k, lk := range l[j*d : j*d+j+1] {
			v += lk * dst[k]
		}
		dst[j] = c.mean[j] + v
	}
	return half * logQ
}

// gammaRand draws from Gamma(a, 1), a ≥ 1, by Marsaglia and Tsang's
// method (ACM TOMS 26(3), 2000): a squeeze and a log test on a cubed
// normal, accepting more than 95% of the time for every a ≥ 1.
func gammaRand(rng *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v *= v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < x2/2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// proposalMaxScale returns the MaxScale of kernel k's Crank–Nicolson
// proposal (the Proposer it declares), 0 when it has none or no cap.
func proposalMaxScale(k Kernel) float64 {
	if cn, ok := cnProposal(k); ok {
		return cn.MaxScale
	}
	return 0
}

// coefficients returns the Crank–Nicolson moves' ρ = ±e^{−min(scale,
// MaxScale)} (negative when Antithetic) and √(1 − ρ²), the latter
// accurate for small scales.
func (c *CrankNicolson) coefficients(scale float64) (rho, s float64) {
	scale = c.capScale(scale)
	rho = math.Exp(-scale)
	if c.Antithetic {
		rho = -rho
	}
	return rho, math.Sqrt(-math.Expm1(-2 * scale))
}

// capScale returns the step scale the Crank–Nicolson moves use:
// min(scale, MaxScale) when MaxScale is positive.
func (c *CrankNicolson) capScale(scale float64) float64 {
	if c.MaxScale > 0 {
		return min(scale, c.MaxScale)
	}
	return scale
}

// Rho returns the autoregression coefficient ρ = e^{−min(scale, MaxScale)}
// of the Crank–Nicolson moves at step scale scale (its negative when
// Antithetic): 1 for no move, 0 for independent draws from N(μ, Σ), −1
// for the reflection through μ.
func (c *CrankNicolson) Rho(scale float64) float64 {
	rho, _ := c.coefficients(scale)
	return rho
}

// String describes the proposal's configuration, as the Stan CSV files'
// configuration comments record it: "CrankNicolson(d=32, walk=0.1)".
func (c *CrankNicolson) String() string {
	var extra string
	if c.MaxScale > 0 {
		extra = fmt.Sprintf(", max_scale=%g", c.MaxScale)
	}
	if c.Antithetic {
		extra += ", antithetic"
	}
	if !c.dense() {
		return fmt.Sprintf("CrankNicolson(d=%d, nnzL=%d, walk=%g%s)", len(c.mean), c.fac.FactorNNZ(), c.Walk, extra)
	}
	if c.Nu > 0 {
		return fmt.Sprintf("CrankNicolson(d=%d, walk=%g, nu=%g%s)", len(c.mean), c.Walk, c.Nu, extra)
	}
	return fmt.Sprintf("CrankNicolson(d=%d, walk=%g%s)", len(c.mean), c.Walk, extra)
}

// dense reports whether the proposal's factor is dense (the Student-t
// moves need it).
func (c *CrankNicolson) dense() bool {
	_, ok := c.fac.(*precision.Dense)
	return ok
}

// checkDim reports whether the proposal fits dimension d and its Walk is
// a probability.
func (c *CrankNicolson) checkDim(d int) error {
	if !(c.Walk >= 0 && c.Walk <= 1) {
		return fmt.Errorf("CrankNicolson.Walk = %g, want a probability in [0, 1]", c.Walk)
	}
	if !(c.MaxScale >= 0) {
		return fmt.Errorf("CrankNicolson.MaxScale = %g, want ≥ 0 (0: no cap)", c.MaxScale)
	}
	if !(c.Nu == 0 || c.Nu >= 1 && !math.IsInf(c.Nu, 1)) {
		return fmt.Errorf("CrankNicolson.Nu = %g, want 0 (Gaussian) or finite ≥ 1 (Student-t)", c.Nu)
	}
	if c.Nu > 0 && !c.dense() {
		return fmt.Errorf("CrankNicolson.Nu = %g with a sparse precision (a sparse Laplace approximation's): the Student-t moves need the dense factor; want 0", c.Nu)
	}
	if len(c.mean) != d {
		return fmt.Errorf("CrankNicolson has dimension %d, want %d", len(c.mean), d)
	}
	return nil
}

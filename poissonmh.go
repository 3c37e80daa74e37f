// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/poisson"
)

// PoissonMH is the exact minibatch kernel of Zhang and De Sa (2019),
// "Poisson-minibatching for Gibbs sampling with convergence rate
// guarantees", in the Metropolis–Hastings form of the TunaMH paper (App. D,
// Algorithm 3, thinning form).
//
// It needs an EnergyRange: βU_i(θ) ∈ [lo_i, lo_i + M_i] on the prior's
// support, so φ_i(θ) = lo_i + M_i − βU_i(θ) ∈ [0, M_i] and
// π(θ) ∝ exp(Σφ_i(θ)). With L = ΣM_i and the hyperparameter λ, each step
// draws Poisson counts s_i ~ Poisson(λM_i/L + φ_i(θ)) at the current θ
// only — by thinning B ~ Poisson(λ + L) draws i ∝ M_i — and accepts θ′ with
// ratio Π_i ((λM_i/L + φ_i(θ′))/(λM_i/L + φ_i(θ)))^{s_i}. The counts are
// kept as the sparse list of kept draws, never as a length-N vector.
//
// A step costs about λ + L evaluations at θ plus one per kept draw at θ′.
// The spectral-gap ratio to MH is at least e^{−1/e}·exp(−L²/max(λ+L, 2λ))
// (auxiliary-variable paper, Prop. 5), so λ must grow like L²: the
// convention here is λ = LambdaScale·L².
type PoissonMH struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1); warmup adapts it.
	Scale float64
	// LambdaScale sets λ = LambdaScale·L² (0: 0.01, the auxiliary-variable
	// paper's robust-regression value; it uses 0.0005 for its truncated
	// Gaussian). Ignored when Lambda > 0.
	LambdaScale float64
	// Lambda sets λ directly when positive.
	Lambda float64
	// Range is the energy range, in units of the tempered energy βU_i as
	// Posterior.EnergyRange returns it (nil: the posterior's).
	Range *EnergyRange

	mutation int // test hook (export_test.go)
}

// Name returns "PoissonMH".
func (PoissonMH) Name() string { return "PoissonMH" }

// Exact returns true.
func (PoissonMH) Exact() bool { return true }

// Start checks the range and builds the alias table over M_i.
func (k PoissonMH) Start(t *Target, theta0 []float64) (Chain, error) {
	prop, scale, err := proposalSetup("PoissonMH", k.Proposal, k.Scale, t.Dim())
	if err != nil {
		return nil, err
	}
	if err := checkStart(t, theta0); err != nil {
		return nil, err
	}
	r := k.Range
	if r == nil {
		if r, err = posteriorOf(t).EnergyRange(); err != nil {
			return nil, fmt.Errorf("PoissonMH: %w", err)
		}
	} else if err := r.check(t.N()); err != nil {
		return nil, fmt.Errorf("PoissonMH: %w", err)
	}
	table, err := alias.New(r.Width)
	if err != nil {
		return nil, fmt.Errorf("PoissonMH: range widths M_i: %w", err)
	}
	sumM := table.Total()
	lambda := k.Lambda
	switch {
	case lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0):
		return nil, fmt.Errorf("PoissonMH: Lambda = %v, want finite ≥ 0 (0: LambdaScale·L²)", lambda)
	case k.LambdaScale < 0 || math.IsNaN(k.LambdaScale) || math.IsInf(k.LambdaScale, 0):
		return nil, fmt.Errorf("PoissonMH: LambdaScale = %v, want finite ≥ 0 (0: 0.01)", k.LambdaScale)
	case lambda == 0 && k.LambdaScale == 0:
		lambda = 0.01 * sumM * sumM
	case lambda == 0:
		lambda = k.LambdaScale * sumM * sumM
	}
	if err := poisson.Check(lambda + sumM); err != nil {
		return nil, fmt.Errorf("PoissonMH: batch mean λ + L: %w (λ = %v, L = %v)", err, lambda, sumM)
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("PoissonMH: λ = %v, want > 0", lambda)
	}
	expect := lambda + sumM
	return &poissonChain{
		k: k, t: t, prop: prop, scale: scale, lo: r.Lo, width: r.Width, table: table,
		lambda: lambda, sumM: sumM,
		theta: slices.Clone(theta0), next: make([]float64, t.Dim()),
		// Kept draws number at most B; room for B up to its mean + 10 sd
		// covers every step in practice, and growth beyond is kept.
		kept:   make([]int, 0, int(expect+10*math.Sqrt(expect)+64)),
		phiOld: make([]float64, 0, int(expect+10*math.Sqrt(expect)+64)),
		seen:   newDistinct(t.N()),
	}, nil
}

type poissonChain struct {
	k           PoissonMH
	t           *Target
	prop        Proposal
	scale       float64
	lo, width   []float64
	table       *alias.Table
	lambda      float64
	sumM        float64 // L = ΣM_i
	theta, next []float64

	kept   []int     // the counts s as the multiset of kept draws
	phiOld []float64 // φ_i(θ) for each kept draw
	idx    [batchChunk]int
	u      [batchChunk]float64
	seen   distinct
}

func (c *poissonChain) Position() []float64    { return c.theta }
func (c *poissonChain) StepScale() float64     { return c.scale }
func (c *poissonChain) SetStepScale(s float64) { c.scale = s }

// Params reports λ and L.
func (c *poissonChain) Params() map[string]float64 {
	return map[string]float64{"lambda": c.lambda, "L": c.sumM}
}

// Step makes one PoissonMH transition (TunaMH paper, Algorithm 3).
func (c *poissonChain) Step(rng *rand.Rand) (Info, error) {
	// 1. Propose θ′; reject outside the prior's support before any datum.
	logQ := c.prop.Propose(rng, c.next, c.theta, c.scale)
	lpNew := c.t.LogPrior(c.next)
	if math.IsInf(lpNew, -1) {
		return Info{AcceptProb: 0, LogDensity: math.NaN()}, nil
	}
	logR := lpNew - c.t.LogPrior(c.theta) + logQ

	// 2. The Poisson counts at θ by thinning: B ~ Poisson(λ + L) draws
	// i ∝ M_i, each kept with probability (λM_i/L + φ_i(θ))/(λM_i/L + M_i).
	batch := poisson.Draw(rng, c.lambda+c.sumM)
	c.kept, c.phiOld = c.kept[:0], c.phiOld[:0]
	c.seen.next()
	for done := 0; done < batch; {
		n := min(batch-done, batchChunk)
		idx := c.idx[:n]
		for j := range idx {
			idx[j] = c.table.Draw(rng)
			if c.k.mutation == mutationUniformDraws {
				idx[j] = rng.IntN(len(c.width))
			}
			c.seen.add(idx[j])
		}
		if err := c.t.Energies(c.u[:n], c.theta, idx); err != nil {
			return Info{}, err
		}
		for j, i := range idx {
			phi, err := c.phi(i, c.u[j], c.theta)
			if err != nil {
				return Info{}, err
			}
			a := c.lambda * c.width[i] / c.sumM
			keep := (a + phi) / (a + c.width[i])
			if c.k.mutation == mutationPoissonFlip {
				keep = (a + c.width[i] - phi) / (a + c.width[i])
			}
			if rng.Float64() < keep {
				c.kept = append(c.kept, i)
				c.phiOld = append(c.phiOld, phi)
			}
		}
		done += n
	}

	// 3. The ratio from the counts: Σ_kept log((a_i + φ_i(θ′))/(a_i + φ_i(θ))).
	for lo := 0; lo < len(c.kept); lo += batchChunk {
		hi := min(lo+batchChunk, len(c.kept))
		if err := c.t.Energies(c.u[:hi-lo], c.next, c.kept[lo:hi]); err != nil {
			return Info{}, err
		}
		for j, i := range c.kept[lo:hi] {
			phiNew, err := c.phi(i, c.u[j], c.next)
			if err != nil {
				return Info{}, err
			}
			a := c.lambda * c.width[i] / c.sumM
			logR += math.Log1p(phiNew/a) - math.Log1p(c.phiOld[lo+j]/a)
		}
	}

	// 4. Accept with probability min(1, r).
	if math.IsNaN(logR) {
		return Info{}, fmt.Errorf("PoissonMH: log acceptance ratio is NaN at θ = %v, θ′ = %v", c.theta, c.next)
	}
	info := Info{Batch: batch, Distinct: c.seen.count, AcceptProb: math.Exp(min(logR, 0)), LogDensity: math.NaN()}
	if logR >= 0 || rng.Float64() < info.AcceptProb {
		copy(c.theta, c.next)
		info.Accepted = true
	}
	return info, nil
}

// phi returns φ_i = lo_i + M_i − βU_i, checking that it lies in [0, M_i]:
// outside, the thinning probabilities leave [0, 1] and the chain is no
// longer exact, so the step fails with the datum and numbers.
func (c *poissonChain) phi(i int, u float64, theta []float64) (float64, error) {
	phi := c.lo[i] + c.width[i] - u
	slack := boundTol * (math.Abs(c.lo[i]) + c.width[i])
	if phi < -slack || phi > c.width[i]+slack {
		v := &BoundViolation{Datum: i, Theta: slices.Clone(theta), Value: u, Lo: c.lo[i], Width: c.width[i],
			Ratio: math.Max(-phi, phi-c.width[i]) / c.width[i]}
		return 0, fmt.Errorf("PoissonMH: %w", v)
	}
	return min(max(phi, 0), c.width[i]), nil
}

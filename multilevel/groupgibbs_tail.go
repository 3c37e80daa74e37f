// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
)

// The block proposals' Student-t component (GroupGibbs.TailMix).
//
// A group block's update proposes θ′_m independently of θ_m from the
// Gaussian N(μ, P⁻¹) of its conditional under the control variate
// (docs/multilevel.md, "Block updates"). Where the group's conditional
// has a longer tail than that Gaussian — a person in a crossed design who
// answered every item alike, whose likelihood is monotone in its effect,
// leaving the prior's N(0, τ²) tail; a probit group of one or two data —
// an independence sampler that reaches the tail stays there for as long
// as the Gaussian takes to propose a point as far out, and the chain shows
// rare long excursions: a small bulk and tail ESS and an inflated sd.
//
// The defensive mixture
//
//	q(θ′) = (1 − ε)·N(θ′; μ, P⁻¹) + ε·t₄(θ′; μ, P⁻¹),
//
// a Student-t of ν = 4 degrees of freedom with the Gaussian's centre and
// scale (θ′ = μ + L⁻ᵀz·√w, z ~ N(0, I), w = ν/χ²_ν, P = LLᵀ), has tails
// heavier than any Gaussian's and costs ε of the Gaussian's acceptance at
// most. It is still an independence proposal (μ and P are functions of
// the other blocks and the scales only), so the Metropolis–Hastings ratio
// is π(θ′)q(θ)/(π(θ)q(θ′)); the conditional is N(μ, P⁻¹) times the data's
// remainders e^{−βΣR_i} (the Gaussian factors of the conditional are N's),
// so the ratio is the block update's data term times
//
//	exp{[log N(θ′) − log q(θ′)] − [log N(θ) − log q(θ)]},
//
// a function of the Mahalanobis distances m² = ‖Lᵀ(x − μ)‖² alone, exact
// and O(q²): it enters the block's exact factor (logExact), with the
// prior's where the block has one. Dropping it (the tailNoQ hook) makes
// the chain target π·q/N, whose tails are too heavy; TestGroupGibbsTail
// catches that and checks the mixture against the Gaussian proposal's
// chain.

// DefaultTailMix is the weight ε of the Student-t component the automatic
// default's GroupGibbs uses (GroupGibbs.TailMix): a fifth of the group
// blocks' proposals, which costs at most that share of their acceptance.
const DefaultTailMix = 0.2

// tailDF is the Student-t component's degrees of freedom ν.
const tailDF = 4

// tailDraw picks the proposal's component: with probability 1 − ε it
// leaves z (the Gaussian) and returns 1; with probability ε it scales z
// by √w, w = ν/χ²_ν, and returns w (‖z‖² is then multiplied by w).
func (c *gibbsChain) tailDraw(rng *rand.Rand, z []float64) float64 {
	if rng.Float64() >= c.tailMix {
		return 1
	}
	var chi float64
	for range tailDF {
		x := rng.NormFloat64()
		chi += x * x
	}
	w := tailDF / chi
	sw := math.Sqrt(w)
	for a := range z {
		z[a] *= sw
	}
	return w
}

// tailLogRatio is [log N(θ′) − log q(θ′)] − [log N(θ) − log q(θ)] for
// block coords (q coordinates), l its conditional precision's Cholesky
// factor (row-major, lower), mu its Gaussian's mean and m2new the
// proposal's ‖Lᵀ(θ′ − μ)‖².
//
// With log N − log q = −log A, A(m²) = (1 − ε) + ε·t₄(m²)/N(m²) (tailA),
// the ratio is log A(m²) − log A(m²′): one logarithm for both points.
func (c *gibbsChain) tailLogRatio(l []float64, q int, coords []int32, mu []float64, m2new float64) float64 {
	var m2 float64
	for a := range q {
		var y float64
		for b := a; b < q; b++ {
			y += l[b*q+a] * (c.theta[coords[b]] - mu[b])
		}
		m2 += y * y
	}
	ec := c.tailE[q]
	a, aNew := tailA(m2, q, c.tailMix, ec), tailA(m2new, q, c.tailMix, ec)
	if math.IsInf(a, 1) || math.IsInf(aNew, 1) {
		return tailLogNOverQ(m2new, q, c.tailMix, c.tailC[q]) - tailLogNOverQ(m2, q, c.tailMix, c.tailC[q])
	}
	return math.Log(a / aNew)
}

// tailConsts returns, for each block size q ≤ qMax, the constant of the
// t₄ density's log beside the Gaussian's, log Γ((ν+q)/2) − log Γ(ν/2) −
// (q/2)·log(ν/2): it depends on q alone, so Start computes it once and a
// block update reads it.
func tailConsts(qMax int) []float64 {
	nu := float64(tailDF)
	c := make([]float64, qMax+1)
	b, _ := math.Lgamma(nu / 2)
	for q := range c {
		qf := float64(q)
		a, _ := math.Lgamma((nu + qf) / 2)
		c[q] = a - b - qf/2*math.Log(nu/2)
	}
	return c
}

// tailScaled returns ε·e^{cq} for each cq of tailConsts: tailA's factor.
func tailScaled(cq []float64, eps float64) []float64 {
	e := make([]float64, len(cq))
	for q, v := range cq {
		e[q] = eps * math.Exp(v)
	}
	return e
}

// tailAMax is the largest m² tailA computes directly: e^{m²/2} stays
// finite (below e^{350}), and beyond it tailA returns +Inf.
const tailAMax = 700

// tailA is q(x)/N(x) = (1 − ε) + ε·t₄(x)/N(x) at Mahalanobis distance²
// m2 in q dimensions, ec = ε·e^{cq} (tailScaled):
//
//	t₄/N = e^{cq} · e^{m²/2} · (1 + m²/ν)^{−(ν+q)/2},  ν = 4,
//
// the power by products and at most one square root (ν + q is an
// integer), so a block update's ratio costs two exponentials and one
// logarithm (tailLogRatio) rather than the log form's dozen. +Inf past
// tailAMax, where tailLogNOverQ's log form is used.
func tailA(m2 float64, q int, eps, ec float64) float64 {
	if m2 > tailAMax {
		return math.Inf(1)
	}
	w := 1 + m2/tailDF
	pw := w * w // w^{ν/2}, ν = 4
	for range q / 2 {
		pw *= w
	}
	if q%2 == 1 {
		pw *= math.Sqrt(w)
	}
	return (1 - eps) + ec*math.Exp(m2/2)/pw
}

// tailLogNOverQ is log N(x) − log q(x) at Mahalanobis distance² m2 in q
// dimensions, cq = tailConsts(·)[q] (the normalising constants they
// share, log|L| − (q/2)log 2π, cancel).
func tailLogNOverQ(m2 float64, q int, eps, cq float64) float64 {
	nu, qf := float64(tailDF), float64(q)
	ln := -m2 / 2
	lt := cq - (nu+qf)/2*math.Log1p(m2/nu)
	x, y := math.Log1p(-eps)+ln, math.Log(eps)+lt
	hi := math.Max(x, y)
	return ln - (hi + math.Log(math.Exp(x-hi)+math.Exp(y-hi)))
}

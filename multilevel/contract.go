// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "github.com/exactmh/exactmh"

// The multilevel contract: what GroupGibbs, GroupSMH and the Laplace-EM
// centre need of a posterior, as small interfaces. A posterior is a
// multilevel one (Of) when its
//
//   - Prior is a Layout with at least one term, and implements
//     exactmh.SparseHessianer (∇² of −log p, sparse);
//   - Energy is a SparseRowGLM and implements exactmh.SparseHessianer
//     (∇² of Σ_i U_i, sparse).
//
// Optional capabilities of the energy widen what the kernels can do:
// exactmh.LossGrowther (a family whose f‴ is unbounded but grows at most
// exponentially, Poisson's: GroupGibbs's bound becomes pair-wise),
// LossGrowther4 (the same of f⁗, for the cross-cubic control variate),
// exactmh.LossCuber (f‴ at a point and a bound on f⁗: the fixed block's
// cross-cubic control variate), RowViewer (rows read through a view of
// the chain's own). A prior may add FixedScaleLayout. The package model's
// NewMultilevel builds posteriors that meet all of it; a user's own prior
// or family meets it by these methods alone
// (example_userprior_test.go).

// Layout is a multilevel prior's description of θ, which the kernels
// read instead of assuming a parametrisation.
//
// Blocks returns, for each coordinate of θ, its block: 0 for the fixed
// effects β, then one block per group of each grouping factor (the
// effects u_g that only the rows of group g hold), or −1 for a coordinate
// no row of the energy holds (a log scale). A row's entry in a −1
// coordinate is an error at Start.
//
// NumTerms returns the number of random-effect terms and Term(t) term t:
// its names (for messages) and where its effects and its log scale are —
// θ[start + g·stride] for the levels g < levels, and θ[logTau]. The
// promise: under the prior, the effects of term t are independent
// N(0, e^{2θ[logTau]}) given θ[logTau], and independent of every other
// coordinate given it. GroupGibbs's block proposals and location moves
// rely on it exactly (the Gaussian parts of target and proposal cancel);
// its Start checks it at the centre against the prior's LogPrior.
type Layout interface {
	Blocks() []int32
	NumTerms() int
	Term(t int) (factor, term string, start, stride, levels, logTau int)
}

// FixedScaleLayout is a Layout with terms of fixed scale (the package
// model's Factor.FixedTau): NumFixedScale terms whose effects
// θ[start + g·stride], g < levels, are independent N(0, sd²) under the
// prior with no log scale in θ. GroupGibbs pairs such a term with a fixed
// effect for location moves as it pairs the random terms.
type FixedScaleLayout interface {
	NumFixedScale() int
	FixedScale(t int) (start, stride, levels int, sd float64)
}

// SparseRowGLM is the energy of a multilevel model: a generalised linear
// model whose rows are sparse (the fixed effects and one block of effects
// per grouping factor),
//
//	U_i(θ) = f_i(x_iᵀθ + o_i),
//
// with everything GroupSMH and GroupGibbs read of it: the row's entries
// (read once, at Start, to bound each datum by its own blocks), the
// linear predictors at two points reading the row once, and f_i with its
// derivatives and bounds as in exactmh.GLM. Energy(i, θ) must equal
// Loss(i, LinearPredictors(i, θ, ·)): the kernels evaluate a datum through
// Loss. The package model's SparseGLM implements it.
type SparseRowGLM interface {
	exactmh.Energy
	// SparseRow appends the columns and values of row i to cols and vals
	// and returns them.
	SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64)
	// LinearPredictors returns x_iᵀθ + o_i and x_iᵀθ′ + o_i.
	LinearPredictors(i int, theta, thetaNew []float64) (z, zn float64)
	// Loss returns f_i(z).
	Loss(i int, z float64) float64
	// LossDerivs returns f_i′(z) and f_i″(z).
	LossDerivs(i int, z float64) (f1, f2 float64)
	// LossBound returns an upper bound on sup |f_i^{(k)}(z)| over
	// lo ≤ z ≤ hi for k ∈ {1, 2, 3}, or +Inf. The kernels' remainder
	// bounds, and so their exactness, rest on it (k = 3 over the whole
	// line unless the energy is an exactmh.LossGrowther).
	LossBound(i, k int, lo, hi float64) float64
}

// RowViewer is an energy whose rows a chain can read through a view of
// its own (model.SparseGLM after SetRowReaders: pread of a mapped
// data.SparseStore's rows into the view's buffers), so that the rows
// GroupGibbs draws at random places leave nothing in the resident set.
// RowView returns a SparseRowGLM with the same values as the energy, or
// nil where there is none. A view with an Err() error method reports its
// first read error there (its methods return NaN then).
type RowViewer interface{ RowView() SparseRowGLM }

// LossGrowther4 is a SparseRowGLM whose fourth loss derivative grows at
// most exponentially:
//
//	|f_i⁗(z)| ≤ A₄·e^{|z − z₀|},  A₄ = LossGrowth4(i, z₀),
//
// for every z and z₀ (ok false where it has no such bound): model.SparseGLM
// of model.PoissonFamily, A₄ = e^{z₀}. It gives GroupGibbs's cross-cubic
// control variate its pair-wise bound (cubicFactor).
type LossGrowther4 interface {
	LossGrowth4(i int, z0 float64) (a float64, ok bool)
}

// CorrelatedLayout is a Layout some of whose factors' terms are
// correlated (the package model's Factor.Correlated, lme4's (1 + x | g)):
// for correlated factor c, the terms Correlated(c) returns (indices for
// Term, q of them, the factor's effects in their order at each level:
// each level's q effects contiguous, stride q) are at each level jointly
// N(0, Σ) under the prior, independent across levels and of every other
// coordinate given the coordinates no row holds (the log scales and the
// correlation coordinates θ[cor : cor + q(q−1)/2]). EffectPrecision sets
// prec (q×q, row-major) to Σ⁻¹ at θ and reports whether Σ is positive
// definite. A correlated term is exempt from Layout's promise of
// independent N(0, e^{2θ[logTau]}) effects: GroupGibbs's block
// proposals use Σ⁻¹ instead, and its Start checks that form at the
// centre against the prior's LogPrior.
type CorrelatedLayout interface {
	Layout
	NumCorrelated() int
	Correlated(c int) (terms []int, cor int)
	EffectPrecision(c int, theta, prec []float64) bool
}

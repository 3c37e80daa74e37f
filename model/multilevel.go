// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/sparse"
)

// Multilevel describes a generalised linear mixed model (GLMM),
//
//	η_i = o_i + x_iᵀβ + Σ_k z_{ik}ᵀ u_{k, g_k(i)},   y_i ~ Family(η_i),
//	u_{k,g,j} ~ N(0, τ_{kj}²) independently,   τ_{kj} ~ Factors[k].Tau,
//	(or, Factor.Correlated, u_{k,g} ~ N(0, diag(τ_k)·Ω_k·diag(τ_k)), Ω_k ~ LKJ(η)),
//	β_j ~ N(FixedMean_j, FixedSD_j²) or flat,
//
// with one grouping factor k per entry of Factors (any number of them,
// nested or crossed: a nested factor is one whose levels are the
// combinations of its parents', such as school:class), a random intercept
// (unless NoIntercept) and random slopes on the factor's Slopes. NewMultilevel
// turns it into an *exactmh.Posterior whose Energy is a SparseGLM (one
// sparse row per datum: the fixed effects and one block per factor, never
// an N × G matrix) and whose Prior is a *MultilevelPrior holding every
// non-data term exactly.
//
// θ is laid out as β (the fixed effects, in the order Intercept, Fixed),
// then for each factor its effects level by level (u_{k,g,0}, …,
// u_{k,g,q−1} for g = 0, 1, …, intercept first), then log τ_{kj} for each
// factor k and term j, then each correlated factor's correlation
// coordinates (correlated.go). The scales are sampled on the log scale,
// the prior including the Jacobian τ of τ = e^{log τ}.
type Multilevel struct {
	// Family is the response's family: LogisticFamily, ProbitFamily,
	// PoissonFamily (Offset the log exposure), BinomialFamily (Weights
	// the trials) or GaussianFamily (σ known). Required. A Gaussian
	// response with σ unknown is not a GLM in θ (log σ enters every
	// datum's energy outside its linear predictor): build the model with
	// GaussianFamily{Sigma: 1} and sample NewSparseGaussianRegression of
	// its energy, with WithScale adding σ's prior to its prior.
	Family GLMFamily
	// Y holds the N responses. Required.
	Y []float64
	// Offset, if not nil, holds o_i (N values).
	Offset []float64
	// Weights, if not nil, holds w_i > 0 (N values) multiplying datum
	// i's energy (NewWeightedSparseGLM): a binomial response's trials,
	// with Family BinomialFamily and Y the fractions of successes.
	Weights []float64
	// Intercept adds a fixed intercept, named "Intercept", as the first
	// coefficient.
	Intercept bool
	// Fixed are the fixed-effect covariates (N values each).
	Fixed []Covariate
	// FixedSD, if not nil, holds the prior standard deviation of each fixed
	// effect (intercept first): β_j ~ N(FixedMean_j, FixedSD_j²); an SD of
	// 0 (or a nil FixedSD) means a flat prior on that coefficient.
	FixedSD []float64
	// FixedMean, if not nil, holds the prior means (nil: 0).
	FixedMean []float64
	// Factors are the grouping factors. At least one.
	Factors []Factor
	// Float32 stores the sparse rows' values in float32 (half the memory;
	// exact for 0/1 indicators).
	Float32 bool
}

// Covariate is one named column of N values.
type Covariate struct {
	Name   string
	Values []float64
}

// Factor is a grouping factor with its random effects.
type Factor struct {
	// Name names the factor in the parameters: "u_origin[ATL]",
	// "log_tau_origin". Required.
	Name string
	// Index holds the level of each datum, in [0, G). Required (N values).
	Index []int32
	// Levels names the G levels; nil names them "1" … "G" with G one more
	// than the largest index. A level without data is allowed (its effects
	// are drawn from their prior).
	Levels []string
	// NoIntercept leaves out the random intercept.
	NoIntercept bool
	// Slopes are the covariates with a random slope per level.
	Slopes []Covariate
	// Tau is the prior on each of the factor's scales τ. Required unless
	// FixedTau is set.
	Tau ScalePrior
	// FixedTau, if positive, fixes the factor's scales at FixedTau: its
	// effects are fixed effects with the normal prior N(0, FixedTau²) — a
	// high-cardinality categorical covariate with every level, no
	// reference level, in a sparse design — sampled with the random
	// effects' machinery (a block per level) but with no scale in θ. They
	// are named "b_origin[ATL]" and "b_origin_log_distance[ATL]" (not
	// "u_…"), and Tau must be left unset.
	FixedTau float64
	// Correlated makes the factor's q ≥ 2 effects at each level jointly
	// normal, u_g ~ N(0, Σ) with Σ = diag(τ)·Ω·diag(τ), each τ_k ~ Tau and
	// the correlation matrix Ω ~ LKJ(η): lme4's and brms's (1 + x | g).
	// Unset, the effects are independent (lme4's (1 + x || g)). θ then
	// holds, after every log scale, the factor's q(q−1)/2 unconstrained
	// correlation coordinates, named "atanh_cpc_g__Intercept__x" (the
	// inverse hyperbolic tangents of Ω's canonical partial correlations,
	// Stan's transform: for q = 2 the correlation's). At most 8 effects.
	Correlated bool
	// LKJ is η of the LKJ prior on a Correlated factor's Ω, p(Ω) ∝
	// det(Ω)^{η−1} (0: η = 1, uniform over correlation matrices, brms's
	// default).
	LKJ float64
}

// scaleKind says which law a ScalePrior is.
type scaleKind int

// The scale priors.
const (
	noScalePrior scaleKind = iota
	halfNormalKind
	halfStudentTKind
	exponentialKind
	gammaKind
)

// ScalePrior is a prior on a random effect's scale τ > 0. Build one with
// HalfNormal, HalfStudentT or Exponential.
type ScalePrior struct {
	kind  scaleKind
	scale float64 // half-normal σ, half-t scale, exponential rate λ
	df    float64 // half-t ν
}

// HalfNormal is the prior p(τ) ∝ exp(−τ²/(2s²)), τ > 0.
func HalfNormal(s float64) ScalePrior { return ScalePrior{kind: halfNormalKind, scale: s} }

// HalfStudentT is the prior p(τ) ∝ (1 + τ²/(νs²))^{−(ν+1)/2}, τ > 0
// (a half-Cauchy for ν = 1).
func HalfStudentT(nu, s float64) ScalePrior {
	return ScalePrior{kind: halfStudentTKind, scale: s, df: nu}
}

// Exponential is the prior p(τ) ∝ exp(−λτ), τ > 0.
func Exponential(rate float64) ScalePrior { return ScalePrior{kind: exponentialKind, scale: rate} }

// Gamma is the prior p(τ) ∝ τ^{α−1}·exp(−λτ), τ > 0, of shape α and rate
// λ (brms's default on a negative binomial's shape: Gamma(0.01, 0.01)).
func Gamma(shape, rate float64) ScalePrior {
	return ScalePrior{kind: gammaKind, scale: rate, df: shape}
}

// String returns the prior in Stan's notation.
func (s ScalePrior) String() string {
	switch s.kind {
	case halfNormalKind:
		return fmt.Sprintf("normal(0, %v) on τ > 0", s.scale)
	case halfStudentTKind:
		return fmt.Sprintf("student_t(%v, 0, %v) on τ > 0", s.df, s.scale)
	case exponentialKind:
		return fmt.Sprintf("exponential(%v)", s.scale)
	case gammaKind:
		return fmt.Sprintf("gamma(%v, %v)", s.df, s.scale)
	}
	return "no prior"
}

func (s ScalePrior) check() error {
	ok := s.scale > 0 && !math.IsInf(s.scale, 0)
	switch s.kind {
	case noScalePrior:
		return errors.New("no prior on τ: set Tau to HalfNormal, HalfStudentT or Exponential")
	case halfStudentTKind:
		if !(s.df > 0) || math.IsInf(s.df, 0) {
			return fmt.Errorf("half-Student-t prior with ν = %v, want finite > 0", s.df)
		}
	case gammaKind:
		if !(s.df > 0) || math.IsInf(s.df, 0) {
			return fmt.Errorf("gamma prior with shape %v, want finite > 0", s.df)
		}
	}
	if !ok {
		return fmt.Errorf("%s: scale or rate %v, want finite > 0", s, s.scale)
	}
	return nil
}

// logDensity returns log p(τ) + log τ at τ = e^ℓ (the Jacobian of the log
// transform included), up to a constant, and its first two derivatives
// in ℓ. With a = τ²/(νs²) for the half-t:
//
//	half-normal:   −τ²/(2s²) + ℓ,            1 − τ²/s²,          −2τ²/s²
//	half-t:        −(ν+1)/2·log1p(a) + ℓ,    1 − (ν+1)a/(1+a),   −2(ν+1)a/(1+a)²
//	exponential:   −λτ + ℓ,                  1 − λτ,             −λτ
//	gamma(α, λ):   −λτ + αℓ,                 α − λτ,             −λτ
func (s ScalePrior) logDensity(l float64) (f, d1, d2 float64) {
	tau := math.Exp(l)
	switch s.kind {
	case halfNormalKind:
		r := tau / s.scale
		return -r*r/2 + l, 1 - r*r, -2 * r * r
	case halfStudentTKind:
		r := tau / s.scale
		a := r * r / s.df
		return -(s.df+1)/2*math.Log1p(a) + l, 1 - (s.df+1)*a/(1+a), -2 * (s.df + 1) * a / ((1 + a) * (1 + a))
	case exponentialKind:
		return -s.scale*tau + l, 1 - s.scale*tau, -s.scale * tau
	case gammaKind:
		return -s.scale*tau + s.df*l, s.df - s.scale*tau, -s.scale * tau
	}
	return math.NaN(), math.NaN(), math.NaN()
}

// reTerm is one random-effect term: the effects u_{k,g,j} of term j of
// factor k for every level g, at θ[start + g·stride], with scale
// e^{θ[logTau]}.
type reTerm struct {
	factor, term     string // "origin", "log_distance" ("" for the intercept)
	start, stride, g int
	logTau           int
	prior            ScalePrior
	// corr: the term is one of a correlated factor's (corrs), whose
	// effects' normal density is the factor's, not the term's.
	corr bool
}

// MultilevelPrior is the exact non-data part of a multilevel model's
// posterior density over θ = (β, u, log τ):
//
//	log p(θ) = Σ_j log N(β_j | m_j, s_j²) + Σ_{k,j} [ Σ_g log N(u_{k,g,j} | 0, τ_{kj}²)
//	           + log p(τ_{kj}) + log τ_{kj} ],
//
// up to a constant, the normal terms of β only where an SD is set, and
// τ_kj the constant Factor.FixedTau (no density, no log τ in θ) for a
// factor of fixed scale; a correlated factor's effects have instead the
// multivariate normal density, its correlations the LKJ prior with the
// transform's Jacobian (correlated.go). It
// implements exactmh.Prior, exactmh.PriorGradienter and SparseHessian (∇²
// of −log p, diagonal but for the coupling of each u to its log τ). Every
// evaluation costs O(d). It is read-only and safe for concurrent use.
type MultilevelPrior struct {
	d        int
	nBeta    int
	betaMean []float64
	betaPrec []float64 // 1/s_j², 0 for a flat coefficient
	terms    []reTerm
	// Every factor's effects, in θ's order: level g's q effects at
	// start + g·q, and for a factor of fixed scale (Factor.FixedTau) the
	// precision 1/τ² of each (0 for a random factor, whose terms hold
	// it).
	factors []priorFactor
	// The correlated factors (correlated.go).
	corrs []corrFactor
}

// priorFactor is where a factor's effects are in θ and, for a fixed
// scale, their prior precision.
type priorFactor struct {
	start, q, g int
	prec        float64
}

// numFree returns the number of coordinates no row holds, the last of θ:
// the log scales and the correlated factors' correlation coordinates.
func (p *MultilevelPrior) numFree() int {
	n := len(p.terms)
	for _, c := range p.corrs {
		n += c.nCor()
	}
	return n
}

// NumFixed returns the number of fixed effects, θ[0:NumFixed()].
func (p *MultilevelPrior) NumFixed() int { return p.nBeta }

// NumTerms returns the number of random-effect terms Σ_k q_k.
func (p *MultilevelPrior) NumTerms() int { return len(p.terms) }

// NumFixedScale returns the number of fixed-scale terms: one per term of
// each factor with Factor.FixedTau, whose effects are fixed effects with a
// N(0, FixedTau²) prior.
func (p *MultilevelPrior) NumFixedScale() int {
	var n int
	for _, f := range p.factors {
		if f.prec > 0 {
			n += f.q
		}
	}
	return n
}

// FixedScale returns where fixed-scale term t's effects are — θ[start +
// g·stride] for the levels g < levels — and their prior's sd.
func (p *MultilevelPrior) FixedScale(t int) (start, stride, levels int, sd float64) {
	for _, f := range p.factors {
		if !(f.prec > 0) {
			continue
		}
		if t < f.q {
			return f.start + t, f.q, f.g, 1 / math.Sqrt(f.prec)
		}
		t -= f.q
	}
	panic(fmt.Sprintf("model: MultilevelPrior.FixedScale(%d) of %d terms", t, p.NumFixedScale()))
}

// Term returns where term t's effects are: θ[start + g·stride] is the
// effect of level g (g < levels), θ[logTau] is log τ of the term.
func (p *MultilevelPrior) Term(t int) (factor, term string, start, stride, levels, logTau int) {
	r := p.terms[t]
	return r.factor, r.term, r.start, r.stride, r.g, r.logTau
}

// Blocks returns the partition of θ that multilevel.GroupSMH bounds each
// datum by: block 0 the fixed effects, then one block per level of each
// factor (its q effects), and −1 for the log scales, which no row holds.
func (p *MultilevelPrior) Blocks() []int32 {
	b := make([]int32, p.d)
	for j := range b {
		b[j] = -1
	}
	for j := range p.nBeta {
		b[j] = 0
	}
	next := int32(1)
	for _, f := range p.factors {
		for g := range f.g {
			for j := range f.q {
				b[f.start+g*f.q+j] = next
			}
			next++
		}
	}
	return b
}

// LogPrior returns log p(θ) up to a constant.
func (p *MultilevelPrior) LogPrior(theta []float64) float64 {
	var s float64
	for j, prec := range p.betaPrec[:p.nBeta] {
		if prec != 0 {
			r := theta[j] - p.betaMean[j]
			s -= prec * r * r / 2
		}
	}
	for _, t := range p.terms {
		l := theta[t.logTau]
		var ss float64
		for g := range t.g {
			u := theta[t.start+g*t.stride]
			ss += u * u
		}
		f, _, _ := t.prior.logDensity(l)
		if t.corr {
			ss = 0
		}
		s += -ss*math.Exp(-2*l)/2 - float64(t.g)*l + f
	}
	for c := range p.corrs {
		s += p.corrs[c].logPrior(theta, false)
	}
	for _, f := range p.factors {
		if f.prec != 0 {
			var ss float64
			for _, u := range theta[f.start : f.start+f.g*f.q] {
				ss += u * u
			}
			s -= f.prec * ss / 2
		}
	}
	if math.IsNaN(s) {
		return math.Inf(-1)
	}
	return s
}

// ScaleTerm reports whether θ[j] is the log scale of exactly one
// uncorrelated random term and no other part of the prior reads it; if
// so it returns the term's number of levels g and Σ_g u_g² at θ. Then, as
// a function of θ[j] = ℓ alone, log p(θ) is ScaleLogConditional(j, ℓ, g,
// ss) plus a constant (LogPrior's term for it, the other terms unchanged):
// the full conditional of a log scale in O(1) an evaluation, after one
// O(g) sum, where LogPrior takes O(d).
func (p *MultilevelPrior) ScaleTerm(theta []float64, j int) (g int, ss float64, ok bool) {
	k := -1
	for q, t := range p.terms {
		if t.logTau == j {
			if k >= 0 || t.corr {
				return 0, 0, false
			}
			k = q
		}
	}
	if k < 0 {
		return 0, 0, false
	}
	t := p.terms[k]
	for c := range p.corrs {
		if slices.Contains(p.corrs[c].logTau, j) {
			return 0, 0, false
		}
	}
	for l := range t.g {
		u := theta[t.start+l*t.stride]
		ss += u * u
	}
	return t.g, ss, true
}

// ScaleLogConditional is −ss·e^{−2ℓ}/2 − g·ℓ + log p(τ) + log τ at τ = e^ℓ,
// LogPrior's term for the random term whose log scale is θ[j] (ScaleTerm
// gives g and ss); −Inf where it is NaN.
func (p *MultilevelPrior) ScaleLogConditional(j int, l float64, g int, ss float64) float64 {
	for _, t := range p.terms {
		if t.logTau == j {
			f, _, _ := t.prior.logDensity(l)
			v := -ss*math.Exp(-2*l)/2 - float64(g)*l + f
			if math.IsNaN(v) {
				return math.Inf(-1)
			}
			return v
		}
	}
	return math.NaN()
}

// AddLogPriorGradient adds ∇log p(θ) to grad:
// ∂/∂u_g = −u_g/τ², ∂/∂log τ = Σ_g u_g²/τ² − G + (log p(τ) + log τ)′.
func (p *MultilevelPrior) AddLogPriorGradient(grad, theta []float64) {
	for j, prec := range p.betaPrec[:p.nBeta] {
		grad[j] -= prec * (theta[j] - p.betaMean[j])
	}
	for _, t := range p.terms {
		l := theta[t.logTau]
		_, d1, _ := t.prior.logDensity(l)
		if t.corr {
			grad[t.logTau] += d1 - float64(t.g) // the quadratic's part: corrFactor.addGradient
			continue
		}
		w := math.Exp(-2 * l)
		var ss float64
		for g := range t.g {
			k := t.start + g*t.stride
			u := theta[k]
			ss += u * u
			grad[k] -= u * w
		}
		grad[t.logTau] += ss*w - float64(t.g) + d1
	}
	for c := range p.corrs {
		p.corrs[c].addGradient(grad, theta, false)
	}
	for _, f := range p.factors {
		for j := f.start; j < f.start+f.g*f.q && f.prec != 0; j++ {
			grad[j] -= f.prec * theta[j]
		}
	}
}

// SparseHessian returns ∇²(−log p)(θ), lower triangle: 1/s_j² on β's
// diagonal (0 for a flat coefficient, stored), and for each term
//
//	∂²/∂u_g² = 1/τ²,  ∂²/∂u_g∂log τ = −2u_g/τ²,
//	∂²/∂log τ² = 2Σ_g u_g²/τ² − (log p(τ) + log τ)″
//
// of an independent term; of a correlated factor, Σ⁻¹ on each level's
// effects and the columns of its log scales and correlation coordinates
// by central differences of the exact gradient (corrHessianValues).
// It is not positive definite everywhere (the funnel of a centred
// parametrisation): a Newton search must damp it.
func (p *MultilevelPrior) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	if len(theta) != p.d {
		return nil, fmt.Errorf("model: MultilevelPrior.SparseHessian: len(θ) = %d, want the dimension %d", len(theta), p.d)
	}
	// Column j holds j itself and, for an effect u of an independent
	// term, the row of its log τ (which comes after every effect); the
	// correlated factors' entries as corrPattern lays them out.
	rows := make([][]int, p.d)
	for _, t := range p.terms {
		if t.corr {
			continue
		}
		for g := range t.g {
			k := t.start + g*t.stride
			rows[k] = append(rows[k], t.logTau)
		}
	}
	p.corrPattern(rows)
	h := &sparse.SymCSC{N: p.d, ColPtr: make([]int, p.d+1)}
	for j := range p.d {
		h.RowIdx = append(h.RowIdx, j)
		slices.Sort(rows[j])
		h.RowIdx = append(h.RowIdx, rows[j]...)
		h.ColPtr[j+1] = len(h.RowIdx)
	}
	h.Val = make([]float64, len(h.RowIdx))
	for j, prec := range p.betaPrec[:p.nBeta] {
		h.Val[h.ColPtr[j]] = prec
	}
	for _, f := range p.factors {
		for j := f.start; j < f.start+f.g*f.q && f.prec != 0; j++ {
			h.Val[h.ColPtr[j]] = f.prec
		}
	}
	for _, t := range p.terms {
		l := theta[t.logTau]
		if t.corr {
			continue
		}
		w := math.Exp(-2 * l)
		var ss float64
		for g := range t.g {
			k := t.start + g*t.stride
			u := theta[k]
			ss += u * u
			h.Val[h.ColPtr[k]] = w
			h.Val[h.ColPtr[k]+1] = -2 * u * w
		}
		_, _, d2 := t.prior.logDensity(l)
		h.Val[h.ColPtr[t.logTau]] = 2*ss*w - d2
	}
	if err := p.corrHessianValues(h, theta); err != nil {
		return nil, err
	}
	return h, nil
}

// NewMultilevel returns the posterior of the multilevel model m, with
// parameter names that say what each coordinate is: the fixed effects by
// their covariates' names, "u_origin[ATL]" (the random intercept of level
// ATL of factor origin), "u_origin_log_distance[ATL]" (its random slope on
// log_distance), "log_tau_origin" and "log_tau_origin_log_distance" (the
// log scales). It checks every input and names the first bad one. The
// energy keeps Y and Offset; the sparse rows are built in one pass, N·(p +
// Σ_k q_k) entries at most (zeros are not stored).
func NewMultilevel(m *Multilevel) (*exactmh.Posterior, error) {
	post, fixed, blocks, err := newMultilevel(m, false)
	if err != nil {
		return nil, err
	}
	d := post.Prior.(*MultilevelPrior).d
	if m.Float32 {
		post.Energy, err = NewWeightedSparseGLM(multilevelRows[float32](m, fixed, blocks, d), m.Y, m.Offset, m.Weights, m.Family)
	} else {
		post.Energy, err = NewWeightedSparseGLM(multilevelRows[float64](m, fixed, blocks, d), m.Y, m.Offset, m.Weights, m.Family)
	}
	if err != nil {
		return nil, fmt.Errorf("model: NewMultilevel: %w", err)
	}
	return post, post.Validate()
}

// NewMultilevelRows returns the posterior of the multilevel model m whose
// design is given as sparse rows already laid out as NewMultilevel lays
// them out — the fixed effects (the intercept first if m.Intercept) in
// columns 0 … p−1, then each factor's effects level by level, terms
// (intercept first) within a level — such as the rows of a mapped
// data.SparseStore. The rows, m.Y and m.Offset are kept, not copied, so a
// design larger than memory is sampled from its mapping. m describes the
// model without its data: the fixed effects' Names (Values nil), each
// factor's Name, Levels (required: they set G), NoIntercept, Slopes'
// Names and Tau; Index and Values are not read, and Float32 is implied by
// T. The parameters are named as NewMultilevel names them. It checks that
// the rows have the layout's width (its columns, or the dimension of θ
// with the log scales, which no row holds) and (NewSparseGLM) that every row
// pointer, column and value is valid, in one pass over the rows.
func NewMultilevelRows[T float32 | float64](m *Multilevel, rows SparseRows[T]) (*exactmh.Posterior, error) {
	post, _, _, err := newMultilevel(m, true)
	if err != nil {
		return nil, fmt.Errorf("%w (NewMultilevelRows)", err)
	}
	p := post.Prior.(*MultilevelPrior)
	if cols := p.d - p.numFree(); rows.D != cols && rows.D != p.d || rows.N != len(m.Y) {
		return nil, fmt.Errorf("model: NewMultilevelRows: rows of %d×%d, want N = len(Y) = %d rows of the layout's %d columns (or the dimension %d)", rows.N, rows.D, len(m.Y), cols, p.d)
	}
	if rows.D == p.d {
		// Rows as wide as θ: no row may hold a log scale's column, which
		// would make the energy depend on τ and the sampled model another
		// (TestMultilevelRowsLogScaleSlot). One pass over the columns.
		scale := make([]bool, p.d)
		for j := p.d - p.numFree(); j < p.d; j++ {
			scale[j] = true
		}
		if len(rows.RowPtr) == rows.N+1 && rows.RowPtr[0] == 0 && rows.RowPtr[rows.N] == len(rows.Col) {
			for i := range rows.N {
				for q := rows.RowPtr[i]; q < rows.RowPtr[i+1] && q >= 0 && q < len(rows.Col); q++ {
					if c := rows.Col[q]; c >= 0 && int(c) < p.d && scale[c] {
						return nil, fmt.Errorf("model: NewMultilevelRows: row %d holds column %d, the log scale %s, which no row may hold (the layout's columns are the %d effects, then the log scales)", i, c, post.Names[c], p.d-len(p.terms))
					}
				}
			}
		}
	}
	rows.D = p.d // the log scales' columns, which no row holds
	if post.Energy, err = NewWeightedSparseGLM(rows, m.Y, m.Offset, m.Weights, m.Family); err != nil {
		return nil, fmt.Errorf("model: NewMultilevelRows: %w", err)
	}
	return post, post.Validate()
}

// newMultilevel checks m and returns its posterior without an energy, the
// fixed effects and the factors' places in θ. With described, m has no
// data but Y and Offset: the factors' Index and the covariates' Values are
// not read.
func newMultilevel(m *Multilevel, described bool) (*exactmh.Posterior, []Covariate, []factorBlock, error) {
	if m == nil {
		return nil, nil, nil, errors.New("model: NewMultilevel: nil model")
	}
	n := len(m.Y)
	if n == 0 {
		return nil, nil, nil, errors.New("model: NewMultilevel: no data (len(Y) = 0)")
	}
	if m.Family == nil {
		return nil, nil, nil, errors.New("model: NewMultilevel: nil Family")
	}
	if len(m.Factors) == 0 {
		return nil, nil, nil, errors.New("model: NewMultilevel: no grouping factor (a model without random effects is a GLM: use NewGLM)")
	}
	var names []string
	seen := map[string]string{}
	addName := func(name, what string) error {
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("model: NewMultilevel: %s and %s both give the parameter name %q", prev, what, name)
		}
		if name == "" || strings.ContainsAny(name, ",#\n\r") || strings.HasSuffix(name, "__") {
			return fmt.Errorf("model: NewMultilevel: %s gives the parameter name %q, want non-empty, without ',', '#', newlines or a trailing \"__\"", what, name)
		}
		seen[name] = what
		names = append(names, name)
		return nil
	}
	var fixed []Covariate
	if m.Intercept {
		fixed = append(fixed, Covariate{Name: "Intercept"})
	}
	fixed = append(fixed, m.Fixed...)
	for j, c := range fixed {
		if !(m.Intercept && j == 0) && !described {
			if err := checkColumn(fmt.Sprintf("fixed effect %d (%q)", j, c.Name), c.Values, n); err != nil {
				return nil, nil, nil, err
			}
		}
		if err := addName(c.Name, fmt.Sprintf("fixed effect %d", j)); err != nil {
			return nil, nil, nil, err
		}
	}
	nb := len(fixed)
	prior := &MultilevelPrior{nBeta: nb, betaMean: make([]float64, nb), betaPrec: make([]float64, nb)}
	if m.FixedSD != nil {
		if len(m.FixedSD) != nb {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: len(FixedSD) = %d, want the number of fixed effects %d", len(m.FixedSD), nb)
		}
		for j, s := range m.FixedSD {
			if !(s >= 0) || math.IsInf(s, 0) {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: FixedSD[%d] (%s) = %v, want finite ≥ 0 (0: flat)", j, fixed[j].Name, s)
			}
			if s > 0 {
				prior.betaPrec[j] = 1 / (s * s)
			}
		}
	}
	if m.FixedMean != nil {
		if len(m.FixedMean) != nb {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: len(FixedMean) = %d, want the number of fixed effects %d", len(m.FixedMean), nb)
		}
		for j, v := range m.FixedMean {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: FixedMean[%d] (%s) = %v is not finite", j, fixed[j].Name, v)
			}
		}
		copy(prior.betaMean, m.FixedMean)
	}
	// The effects of each factor, level-major, then the log scales.
	blocks := make([]factorBlock, len(m.Factors))
	d := nb
	for k := range m.Factors {
		f := &m.Factors[k]
		what := fmt.Sprintf("factor %d (%q)", k, f.Name)
		if f.Name == "" {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: factor %d has no name", k)
		}
		switch {
		case f.FixedTau != 0 && (!(f.FixedTau > 0) || math.IsInf(f.FixedTau, 0)):
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: FixedTau = %v, want finite > 0 (or 0: τ sampled)", what, f.FixedTau)
		case f.FixedTau > 0 && f.Tau.kind != noScalePrior:
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: both Tau (%s) and FixedTau = %v: set one", what, f.Tau, f.FixedTau)
		case f.FixedTau == 0:
			if err := f.Tau.check(); err != nil {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: %w", what, err)
			}
		}
		if described {
			if f.Levels == nil {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: no Levels (the rows do not say how many levels there are)", what)
			}
			f = &Factor{Name: f.Name, Levels: f.Levels, NoIntercept: f.NoIntercept, Slopes: f.Slopes, Tau: f.Tau, FixedTau: f.FixedTau}
		} else if len(f.Index) != n {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: len(Index) = %d, want N = %d", what, len(f.Index), n)
		}
		g := len(f.Levels)
		if f.Levels == nil {
			for _, v := range f.Index {
				g = max(g, int(v)+1)
			}
		}
		for i, v := range f.Index { // nil when described
			if v < 0 || int(v) >= g {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: Index[%d] = %d, want a level in [0, %d)", what, i, v, g)
			}
		}
		levels := f.Levels
		if levels == nil {
			levels = make([]string, g)
			for l := range levels {
				levels[l] = strconv.Itoa(l + 1)
			}
		}
		var terms []Covariate
		if !f.NoIntercept {
			terms = append(terms, Covariate{})
		}
		for j, c := range f.Slopes {
			if c.Name == "" {
				return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: slope %d has no name", what, j)
			}
			if described {
				continue
			}
			if err := checkColumn(fmt.Sprintf("%s: slope %q", what, c.Name), c.Values, n); err != nil {
				return nil, nil, nil, err
			}
		}
		terms = append(terms, f.Slopes...)
		if len(terms) == 0 {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s has neither an intercept nor a slope", what)
		}
		q := len(terms)
		switch {
		case !f.Correlated && f.LKJ != 0:
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: LKJ = %v without Correlated (independent effects have no correlation prior)", what, f.LKJ)
		case !f.Correlated:
		case q < 2 || q > maxCorrelated:
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: Correlated with %d effects, want 2 to %d", what, q, maxCorrelated)
		case f.FixedTau > 0:
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: Correlated with FixedTau = %v: a fixed-scale factor's effects are independent", what, f.FixedTau)
		case f.LKJ < 0 || math.IsNaN(f.LKJ) || math.IsInf(f.LKJ, 0):
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: LKJ = %v, want η finite > 0 (or 0: η = 1)", what, f.LKJ)
		}
		if d > exactmh.MaxDim-g*q {
			return nil, nil, nil, fmt.Errorf("model: NewMultilevel: %s: %d levels × %d terms take the dimension past MaxDim = %d", what, g, q, exactmh.MaxDim)
		}
		blocks[k] = factorBlock{f: f, start: d, q: q, levels: levels, slopes: terms}
		pf := priorFactor{start: d, q: q, g: g}
		prefix := "u_"
		if f.FixedTau > 0 {
			pf.prec, prefix = 1/(f.FixedTau*f.FixedTau), "b_"
		}
		prior.factors = append(prior.factors, pf)
		for l, lv := range levels {
			for _, c := range terms {
				name := prefix + f.Name
				if c.Name != "" {
					name += "_" + c.Name
				}
				if err := addName(name+"["+lv+"]", fmt.Sprintf("%s, level %d", what, l)); err != nil {
					return nil, nil, nil, err
				}
			}
		}
		d += g * q
	}
	for k, b := range blocks {
		if b.f.FixedTau > 0 {
			continue
		}
		var cf *corrFactor
		if b.f.Correlated {
			eta := b.f.LKJ
			if eta == 0 {
				eta = 1
			}
			prior.corrs = append(prior.corrs, corrFactor{factor: b.f.Name, start: b.start, q: b.q, g: len(b.levels), first: len(prior.terms), eta: eta})
			cf = &prior.corrs[len(prior.corrs)-1]
		}
		for j, c := range b.slopes {
			prior.terms = append(prior.terms, reTerm{
				factor: b.f.Name, term: c.Name, start: b.start + j, stride: b.q, g: len(b.levels),
				logTau: d, prior: b.f.Tau, corr: cf != nil,
			})
			if cf != nil {
				cf.logTau = append(cf.logTau, d)
				cf.terms = append(cf.terms, cmp.Or(c.Name, "Intercept"))
			}
			name := "log_tau_" + b.f.Name
			if c.Name != "" {
				name += "_" + c.Name
			}
			if err := addName(name, fmt.Sprintf("factor %d (%q), scale of term %d", k, b.f.Name, j)); err != nil {
				return nil, nil, nil, err
			}
			d++
		}
	}
	// Each correlated factor's y, after every log scale.
	for c := range prior.corrs {
		cf := &prior.corrs[c]
		cf.cor = d
		for i := 1; i < cf.q; i++ {
			for j := range i {
				if err := addName("atanh_cpc_"+cf.factor+"__"+cf.terms[j]+"__"+cf.terms[i], fmt.Sprintf("factor %q, correlation of terms %d and %d", cf.factor, j, i)); err != nil {
					return nil, nil, nil, err
				}
				d++
			}
		}
	}
	if d > exactmh.MaxDim {
		return nil, nil, nil, fmt.Errorf("model: NewMultilevel: dimension %d past MaxDim = %d", d, exactmh.MaxDim)
	}
	prior.d = d
	return &exactmh.Posterior{Prior: prior, Names: names}, fixed, blocks, nil
}

// factorBlock is where a factor's effects are in θ: level g's q effects
// (the terms, intercept first) at start + g·q.
type factorBlock struct {
	f      *Factor
	start  int
	q      int
	levels []string
	slopes []Covariate // the terms; an intercept has nil Values
}

// multilevelRows returns one sparse row per datum, columns ascending: the
// fixed effects, then each factor's block at the datum's level. Zeros are
// not stored.
func multilevelRows[T float32 | float64](m *Multilevel, fixed []Covariate, blocks []factorBlock, d int) SparseRows[T] {
	n := len(m.Y)
	perRow := len(fixed)
	for _, b := range blocks {
		perRow += b.q
	}
	r := SparseRows[T]{N: n, D: d, RowPtr: make([]int, n+1), Col: make([]int32, 0, n*perRow), Val: make([]T, 0, n*perRow)}
	for i := range n {
		for j, c := range fixed {
			v := 1.0
			if !(m.Intercept && j == 0) {
				v = c.Values[i]
			}
			if v != 0 {
				r.Col, r.Val = append(r.Col, int32(j)), append(r.Val, T(v))
			}
		}
		for _, b := range blocks {
			base := b.start + int(b.f.Index[i])*b.q
			for j, c := range b.slopes {
				v := 1.0
				if c.Values != nil {
					v = c.Values[i]
				}
				if v != 0 {
					r.Col, r.Val = append(r.Col, int32(base+j)), append(r.Val, T(v))
				}
			}
		}
		r.RowPtr[i+1] = len(r.Col)
	}
	r.Col, r.Val = slices.Clip(r.Col), slices.Clip(r.Val)
	return r
}

// checkColumn checks that a covariate has N finite values.
func checkColumn(what string, v []float64, n int) error {
	if len(v) != n {
		return fmt.Errorf("model: NewMultilevel: %s: %d values, want N = %d", what, len(v), n)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("model: NewMultilevel: %s: value %d = %v is not finite", what, i, x)
		}
	}
	return nil
}

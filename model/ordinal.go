// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/multilevel"
)

// OrdinalRegression is the energy of the cumulative logit (proportional
// odds) model of an ordered response y_i ∈ {1, …, K} — brms's
// cumulative("logit"), ordinal::clm, MASS::polr:
//
//	P(y_i ≤ k) = F(c_k − η_i),  k = 1, …, K − 1,  F(t) = 1/(1 + e^{−t}),
//
// η_i = x_iᵀβ with no intercept in x (the cutpoints c_1 < … < c_{K−1}
// take its place). θ = (β, c_1, ℓ_2, …, ℓ_{K−1}) of dimension
// d + K − 1 is unconstrained: c_k = c_{k−1} + e^{ℓ_k}, so every θ gives
// ordered cutpoints; CutpointPrior puts the prior on c with the
// Jacobian Σ_k ℓ_k of this map. With a = c_{y_i} − η_i and
// b = c_{y_i−1} − η_i (c_0 = −∞, c_K = +∞) datum i's energy is
//
//	U_i = −log(F(a) − F(b)) = s(a) + s(−b) − log(e^{a−b} − 1),  s(t) = log(1 + e^t),
//
// s(−a) for y_i = 1 and s(b) for y_i = K: no difference of
// probabilities is formed, so no category's energy cancels. Its
// derivative in η is 1 − F(a) − F(b) ∈ (−1, 1).
//
// The cutpoints enter every datum outside the linear predictor, so this
// is not a GLM in θ and has no bounds for the minibatch kernels: the
// automatic default pilots the full-batch kernels on it (NUTS; MH with
// the Crank–Nicolson proposal about the Laplace approximation), as for
// NegBinomialRegression. Given the cutpoints it is a GLM whose loss in η
// has |f′| < 1, f″ ≤ 1/2, |f‴| ≤ 1/(3√3) (docs/multilevel.md, section
// "Ordinal"), the route to a Gibbs split not taken here.
type OrdinalRegression struct {
	x    []float64 // N×d row-major covariates (flat); nil with sparse
	rows multilevel.SparseRowGLM
	// addRow adds a·x_i to grad without a buffer (SparseGLM's: no
	// allocation on the step path); nil: rows.SparseRow.
	addRow func(grad []float64, a float64, i int)
	y      []int32 // categories 1..K
	d, k   int

	// Mutants of the kit tests (OrdinalMutant).
	mut OrdinalMutant
}

// OrdinalMutant is a deliberate fault of OrdinalRegression's energy for
// the kit tests, which must catch it (TestOrdinalMoments,
// TestOrdinalMultilevelMoments). The zero value is the true model.
type OrdinalMutant struct {
	// OffByOne makes the data of category 2 read the cutpoints of
	// category 3 (c_3, c_2 instead of c_2, c_1): the cutpoint order wrong
	// in those data's energies.
	OffByOne bool
	// SignFlip uses F(c_k + η) (the opposite sign convention).
	SignFlip bool
}

// NewOrdinalRegression returns the cumulative logit energy of the
// covariates x (row-major, N rows of d columns, no intercept column;
// d = 0 and x empty: the cutpoints alone) and responses y, each an
// integer in 1..K (K ≥ 2 categories). x is kept, not copied.
func NewOrdinalRegression(x, y []float64, d, k int) (*OrdinalRegression, error) {
	if d == 0 && len(x) == 0 { // the cutpoints alone (y ~ 1)
	} else if err := vec.DataRows("NewOrdinalRegression", x, len(y), d); err != nil {
		return nil, err
	}
	cat, err := ordinalCategories("NewOrdinalRegression", y, k)
	if err != nil {
		return nil, err
	}
	return &OrdinalRegression{x: x, y: cat, d: d, k: k}, nil
}

// ordinalCategories checks that every y_i is an integer in 1..K.
func ordinalCategories(who string, y []float64, k int) ([]int32, error) {
	if k < 2 {
		return nil, fmt.Errorf("exactmh: %s: K = %d categories, want ≥ 2", who, k)
	}
	if k > 1<<20 {
		return nil, fmt.Errorf("exactmh: %s: K = %d categories, want ≤ 2²⁰", who, k)
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("exactmh: %s: no data", who)
	}
	cat := make([]int32, len(y))
	for i, v := range y {
		if !(v >= 1 && v <= float64(k)) || v != math.Trunc(v) {
			return nil, fmt.Errorf("exactmh: %s: y[%d] = %v, want a category, an integer in 1..%d", who, i, v, k)
		}
		cat[i] = int32(v)
	}
	return cat, nil
}

// Len returns the number of data.
func (e *OrdinalRegression) Len() int { return len(e.y) }

// Dim returns d + K − 1: the coefficients, c_1 and the K − 2 log
// increments.
func (e *OrdinalRegression) Dim() int { return e.d + e.k - 1 }

// Categories returns K.
func (e *OrdinalRegression) Categories() int { return e.k }

// Coefficients returns d, the number of coefficients before the
// cutpoints' coordinates.
func (e *OrdinalRegression) Coefficients() int { return e.d }

// Response returns y_i.
func (e *OrdinalRegression) Response(i int) int { return int(e.y[i]) }

// Mutate sets the mutant of the kit tests (the zero value: none).
func (e *OrdinalRegression) Mutate(m OrdinalMutant) { e.mut = m }

// Cutpoints writes c_1, …, c_{K−1} of θ into dst (K − 1 values) and
// returns it (Cutpoints(θ[d:]): c_1 = θ[d], c_k = c_{k−1} + e^{θ[d+k−1]}).
func Cutpoints(dst, raw []float64) []float64 {
	if len(raw) == 0 {
		return dst[:0]
	}
	dst = dst[:len(raw)]
	dst[0] = raw[0]
	for k := 1; k < len(raw); k++ {
		dst[k] = dst[k-1] + math.Exp(raw[k])
	}
	return dst
}

// cutpoints returns a slice of K − 1 cutpoints on buf when it fits (no
// allocation for K ≤ 33), else a new one.
func (e *OrdinalRegression) cutpoints(buf []float64, theta []float64) []float64 {
	if cap(buf) < e.k-1 {
		buf = make([]float64, e.k-1)
	}
	return Cutpoints(buf[:e.k-1], theta[e.d:])
}

// softplus returns log(1 + e^t) without overflow.
func softplus(t float64) float64 { return max(t, 0) + math.Log1p(math.Exp(-math.Abs(t))) }

// logExpm1 returns log(e^δ − 1), δ > 0.
func logExpm1(delta float64) float64 {
	if delta > 30 {
		return delta + math.Log1p(-math.Exp(-delta))
	}
	return math.Log(math.Expm1(delta))
}

// bounds returns a = c_y − η and b = c_{y−1} − η with their presence
// (y < K, y > 1), the mutants applied.
func (e *OrdinalRegression) bounds(cut []float64, y int, eta float64) (a, b float64, hasA, hasB bool) {
	if e.mut.SignFlip {
		eta = -eta
	}
	if e.mut.OffByOne && y == 2 && e.k > 3 {
		y = 3
	}
	if y < e.k {
		a, hasA = cut[y-1]-eta, true
	}
	if y > 1 {
		b, hasB = cut[y-2]-eta, true
	}
	return a, b, hasA, hasB
}

// ordinalEnergy returns U at a and b.
func ordinalEnergy(a, b float64, hasA, hasB bool) float64 {
	switch {
	case !hasB:
		return softplus(-a)
	case !hasA:
		return softplus(b)
	}
	return softplus(a) + softplus(-b) - logExpm1(a-b)
}

// ordinalDerivs returns ∂U/∂a and ∂U/∂b: F(a) − r and r − F(−b), r =
// 1/(1 − e^{−(a−b)}); F(a) − 1 for y = 1, F(b) for y = K.
func ordinalDerivs(a, b float64, hasA, hasB bool) (ga, gb float64) {
	switch {
	case !hasB:
		return sigmoid(a) - 1, 0
	case !hasA:
		return 0, sigmoid(b)
	}
	r := -1 / math.Expm1(-(a - b))
	return sigmoid(a) - r, r - sigmoid(-b)
}

// eta returns x_iᵀβ and x_iᵀβ′.
func (e *OrdinalRegression) eta(i int, theta, thetaNew []float64) (float64, float64) {
	if e.rows != nil {
		return e.rows.LinearPredictors(i, theta[:e.d], thetaNew[:e.d])
	}
	return vec.Dot2(e.x[i*e.d:(i+1)*e.d], theta[:e.d], thetaNew[:e.d])
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *OrdinalRegression) Energies(dst, theta []float64, idx []int) {
	var buf [32]float64
	cut := e.cutpoints(buf[:], theta)
	for k, i := range idx {
		z, _ := e.eta(i, theta, theta)
		dst[k] = ordinalEnergy(e.bounds(cut, int(e.y[i]), z))
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *OrdinalRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	var buf, bufn [32]float64
	cut, cutn := e.cutpoints(buf[:], theta), e.cutpoints(bufn[:], thetaNew)
	for k, i := range idx {
		z, zn := e.eta(i, theta, thetaNew)
		y := int(e.y[i])
		dst[k] = ordinalEnergy(e.bounds(cut, y, z)) - ordinalEnergy(e.bounds(cutn, y, zn))
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) (dst nil: not) and adds
// w[k]·∇U_i(θ) to grad: ∂U/∂η = −(∂U/∂a + ∂U/∂b) on β through x_i, and
// ∂U/∂c_k summed over the data, then mapped onto (c_1, ℓ_2, …) by
// ∂c_k/∂c_1 = 1, ∂c_k/∂ℓ_j = e^{ℓ_j} (j ≤ k).
func (e *OrdinalRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	var buf, gbuf [32]float64
	cut := e.cutpoints(buf[:], theta)
	gc := gbuf[:0]
	if e.k-1 > len(gbuf) {
		gc = make([]float64, e.k-1)
	} else {
		gc = gbuf[:e.k-1]
	}
	var cols []int32
	var vals []float64
	for k, i := range idx {
		y := int(e.y[i])
		z, _ := e.eta(i, theta, theta)
		a, b, hasA, hasB := e.bounds(cut, y, z)
		if dst != nil {
			dst[k] = ordinalEnergy(a, b, hasA, hasB)
		}
		ga, gb := ordinalDerivs(a, b, hasA, hasB)
		ga, gb = w[k]*ga, w[k]*gb
		ya := y
		if e.mut.OffByOne && y == 2 && e.k > 3 {
			ya = 3
		}
		if hasA {
			gc[ya-1] += ga
		}
		if hasB {
			gc[ya-2] += gb
		}
		geta := -(ga + gb)
		if e.mut.SignFlip {
			geta = -geta
		}
		if e.addRow != nil {
			e.addRow(grad, geta, i)
		} else if e.rows != nil {
			cols, vals = e.rows.SparseRow(i, cols[:0], vals[:0])
			for q, c := range cols {
				grad[c] += geta * vals[q]
			}
		} else {
			vec.Axpy(grad[:e.d], geta, e.x[i*e.d:(i+1)*e.d])
		}
	}
	addCutGradient(grad[e.d:], theta[e.d:], gc)
}

// addCutGradient adds the gradient gc in the cutpoints c onto their
// coordinates (c_1, ℓ_2, …): g[0] += Σ_k gc_k, g[j] += e^{ℓ_j}·Σ_{k≥j} gc_k.
// gc is overwritten.
func addCutGradient(g, raw, gc []float64) {
	var tail float64
	for j := len(gc) - 1; j >= 1; j-- {
		tail += gc[j]
		g[j] += math.Exp(raw[j]) * tail
	}
	if len(gc) > 0 {
		g[0] += tail + gc[0]
	}
}

// fullBatchDim is the dimension above which a multilevel ordinal model's
// automatic default is NUTS without pilots: below it the flat path's
// dense Laplace approximation (a D × D Hessian by central differences of
// the gradient, 2D passes over the data) is cheap, and its pilots may
// find MH-CN about it faster than NUTS.
const fullBatchDim = 256

// FullBatchReason is multilevel.FullBatchEnergy's: with random effects
// (NewOrdinalMultilevel) and D > 256 the automatic default samples with
// full-batch NUTS, GroupGibbs having no sweep for the cutpoints; "" for
// the flat model and a small multilevel one, whose automatic default
// pilots the full-batch kernels about the Laplace approximation.
func (e *OrdinalRegression) FullBatchReason() string {
	if e.rows == nil || e.Dim() <= fullBatchDim {
		return ""
	}
	return fmt.Sprintf("a cumulative logit multilevel model (N = %d, D = %d): its K − 1 = %d cutpoints enter every datum, so GroupGibbs has no sweep for it and the minibatch kernels no bound; full-batch NUTS, exact", len(e.y), e.Dim(), e.k-1)
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) to grad.
func (e *OrdinalRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.EnergiesAndGradient(nil, grad, theta, idx, w)
}

// String names the model, as errors about it do.
func (e *OrdinalRegression) String() string {
	return fmt.Sprintf("OrdinalRegression(N = %d, d = %d, K = %d, cumulative logit)", len(e.y), e.d, e.k)
}

// CutpointPrior is the prior on the K − 1 ordered cutpoints of an
// OrdinalRegression: independent Student-t(Nu, 0, Scale) densities on
// c_1, …, c_{K−1} restricted to their order (brms's default on an
// ordinal model's Intercept[k], student_t(3, 0, 2.5); Nu = +Inf is the
// normal N(0, Scale²)), proper because each factor is. It is placed on
// the coordinates (c_1, ℓ_2, …) with the Jacobian Σ_{k≥2} ℓ_k of
// c_k = c_{k−1} + e^{ℓ_k}.
type CutpointPrior struct {
	Nu, Scale float64
}

// DefaultCutpointPrior is brms's default, student_t(3, 0, 2.5).
var DefaultCutpointPrior = CutpointPrior{Nu: 3, Scale: 2.5}

func (c CutpointPrior) check() error {
	if !(c.Nu > 0) || !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
		return fmt.Errorf("cutpoint prior student_t(%v, 0, %v): want ν > 0 (+Inf: normal) and a finite scale > 0", c.Nu, c.Scale)
	}
	return nil
}

// logDensity returns log p(c) up to a constant and its derivative.
func (c CutpointPrior) logDensity(x float64) (f, d1 float64) {
	z := x / c.Scale
	if math.IsInf(c.Nu, 1) {
		return -z * z / 2, -z / c.Scale
	}
	return -(c.Nu + 1) / 2 * math.Log1p(z*z/c.Nu), -(c.Nu + 1) * z / (c.Nu + z*z) / c.Scale
}

// String writes the prior as brms does.
func (c CutpointPrior) String() string {
	if math.IsInf(c.Nu, 1) {
		return fmt.Sprintf("normal(0, %v)", c.Scale)
	}
	return fmt.Sprintf("student_t(%v, 0, %v)", c.Nu, c.Scale)
}

// WithCutpoints is the prior of an ordinal model: Base on the first
// D − (K − 1) coordinates (the coefficients, or a multilevel model's
// whole θ), Cut on the cutpoints of the last K − 1, with the Jacobian of
// their unconstrained coordinates:
//
//	log p(θ) = log Base(θ[:D−K+1]) + Σ_k log Cut(c_k) + Σ_{k≥2} ℓ_k.
//
// A nil Base is flat. It implements exactmh.PriorGradienter (Base's
// gradient if it has one) and the dimension check.
type WithCutpoints struct {
	Base exactmh.Prior
	K    int
	Cut  CutpointPrior

	// noJacobian drops the Jacobian (a mutant of the kit tests).
	noJacobian bool
}

// MutateNoJacobian drops the Jacobian of the ordered transform (a mutant
// the kit tests must catch).
func (p *WithCutpoints) MutateNoJacobian() { p.noJacobian = true }

// LogPrior returns log p(θ).
func (p *WithCutpoints) LogPrior(theta []float64) float64 {
	m := len(theta) - (p.K - 1)
	raw := theta[m:]
	var f, c float64
	for k, v := range raw {
		if k == 0 {
			c = v
		} else {
			c += math.Exp(v)
			if !p.noJacobian {
				f += v
			}
		}
		l, _ := p.Cut.logDensity(c)
		f += l
	}
	if p.Base != nil {
		f += p.Base.LogPrior(theta[:m])
	}
	return f
}

// AddLogPriorGradient adds ∇log p(θ) to grad.
func (p *WithCutpoints) AddLogPriorGradient(grad, theta []float64) {
	m := len(theta) - (p.K - 1)
	raw := theta[m:]
	var buf [32]float64
	gc := buf[:0]
	if len(raw) > len(buf) {
		gc = make([]float64, len(raw))
	} else {
		gc = buf[:len(raw)]
	}
	var c float64
	for k, v := range raw {
		if k == 0 {
			c = v
		} else {
			c += math.Exp(v)
			if !p.noJacobian {
				grad[m+k]++
			}
		}
		_, gc[k] = p.Cut.logDensity(c)
	}
	addCutGradient(grad[m:], raw, gc)
	if g, ok := p.Base.(exactmh.PriorGradienter); ok {
		g.AddLogPriorGradient(grad[:m], theta[:m])
	}
}

// CheckDim checks the cutpoint prior and Base's dimension d − (K − 1).
func (p *WithCutpoints) CheckDim(d int) error {
	if err := p.Cut.check(); err != nil {
		return fmt.Errorf("exactmh: WithCutpoints: %w", err)
	}
	if p.K < 2 || d < p.K-1 {
		return fmt.Errorf("exactmh: WithCutpoints: dimension %d with K = %d categories, want K ≥ 2 and ≥ K − 1 coordinates", d, p.K)
	}
	if p.Base == nil {
		return nil
	}
	return checkPriorDim(p.Base, d-(p.K-1))
}

// String describes the prior on the cutpoints.
func (p *WithCutpoints) String() string { return p.Cut.String() + " on each cutpoint" }

// CutpointNames returns the names of the cutpoints' K − 1 coordinates:
// "cut_1" (c_1) and "log_cut_diff_k" (ℓ_k = log(c_k − c_{k−1})).
func CutpointNames(k int) []string {
	out := []string{"cut_1"}
	for j := 2; j < k; j++ {
		out = append(out, fmt.Sprintf("log_cut_diff_%d", j))
	}
	return out
}

// NewOrdinalMultilevel returns the posterior of the cumulative logit
// multilevel model m with K categories (m.Y in 1..K; m.Family ignored;
// m.Intercept, m.Offset and m.Weights must be unset: the cutpoints take
// the intercept's place) and the prior cut on the cutpoints: θ is
// NewMultilevel's followed by the cutpoints' coordinates (CutpointNames),
// the energy an OrdinalRegression on the multilevel sparse rows. It
// implements exactmh.EnergyDiffer, EnergyGradienter and Gradienter; the
// automatic default samples it with the full-batch kernels (it is not a
// SparseRowGLM, so GroupGibbs does not take it): NUTS without pilots
// above D = 256 (multilevel.FullBatchEnergy), the flat path's pilots
// about the Laplace approximation below.
func NewOrdinalMultilevel(m *Multilevel, k int, cut CutpointPrior) (*exactmh.Posterior, error) {
	if m == nil {
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: nil model")
	}
	switch {
	case m.Intercept:
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: Intercept set, want none (the cutpoints take its place)")
	case m.Offset != nil:
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: Offset set, want nil")
	case m.Weights != nil:
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: Weights set, want nil")
	}
	if err := cut.check(); err != nil {
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: %w", err)
	}
	cat, err := ordinalCategories("NewOrdinalMultilevel", m.Y, k)
	if err != nil {
		return nil, err
	}
	mc := *m
	mc.Family = GaussianFamily{Sigma: 1} // the rows only: any y
	p, err := NewMultilevel(&mc)
	if err != nil {
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: %w", err)
	}
	rows, ok := p.Energy.(multilevel.SparseRowGLM)
	if !ok {
		return nil, fmt.Errorf("model: NewOrdinalMultilevel: energy %T, want a SparseRowGLM", p.Energy)
	}
	e := &OrdinalRegression{rows: rows, y: cat, d: rows.Dim(), k: k}
	if ra, ok := rows.(interface{ addRow([]float64, float64, int) }); ok {
		e.addRow = ra.addRow
	}
	return &exactmh.Posterior{Energy: e, Prior: &WithCutpoints{Base: p.Prior, K: k, Cut: cut},
		Names: append(p.Names, CutpointNames(k)...)}, nil
}

// Compile-time checks.
var (
	_ exactmh.Energy             = (*OrdinalRegression)(nil)
	_ exactmh.EnergyDiffer       = (*OrdinalRegression)(nil)
	_ exactmh.EnergyGradienter   = (*OrdinalRegression)(nil)
	_ exactmh.Gradienter         = (*OrdinalRegression)(nil)
	_ exactmh.PriorGradienter    = (*WithCutpoints)(nil)
	_ multilevel.FullBatchEnergy = (*OrdinalRegression)(nil)
)

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/exactmh/exactmh/sparse"
)

// Correlated random effects (Factor.Correlated): a factor's q effects at
// level g are u_g ~ N(0, Σ), Σ = D·Ω·D with D = diag(τ_1, …, τ_q) and the
// correlation matrix Ω = LLᵀ, L its Cholesky factor, Ω ~ LKJ(η). θ holds
// log τ_k (with the other factors' log scales) and, after every log
// scale, the factor's q(q−1)/2 unconstrained coordinates y of Stan's
// cholesky_factor_corr transform (Stan Reference Manual, "Cholesky
// factors of correlation matrices"): z = tanh(y), canonical partial
// correlations, filled row by row of the strict lower triangle, and
//
//	L_00 = 1,  L_i0 = z_i0,  L_ij = z_ij·√(1 − s_ij) (0 < j < i),
//	L_ii = √(1 − s_ii),  s_ij = Σ_{k<j} L_ik²,
//
// with log|∂L/∂y| = Σ log(1 − z_ij²) + Σ_{0<j<i} ½·log(1 − s_ij). The LKJ
// density of L (Lewandowski, Kurowicka and Joe 2009, in Stan's
// lkj_corr_cholesky form, the Jacobian of Ω ↦ L included) is
//
//	log p(L | η) = Σ_{i≥1} (q − i − 1 + 2η − 2)·log L_ii,
//
// and the effects' normal density, with v_g = D⁻¹u_g and w_g = L⁻¹v_g,
//
//	Σ_g log N(u_g | 0, Σ) = −½ Σ_g ‖w_g‖² − G·Σ_k log τ_k − G·Σ_i log L_ii.
//
// So the factor's part of log p(θ) is the sum of these, the LKJ
// Jacobian's and each τ_k's prior (with its log-τ Jacobian), exactly.

// maxCorrelated is the most effects a correlated factor may have (its
// factors are held on the stack: LogPrior allocates nothing).
const maxCorrelated = 8

// corrFactor is a correlated factor's place in θ and its prior.
type corrFactor struct {
	factor string
	terms  []string // the effects' names, "Intercept" for the intercept
	start  int      // level g's q effects at start + g·q
	q, g   int
	first  int   // the first of its terms in MultilevelPrior.terms
	logTau []int // θ index of log τ_k
	cor    int   // θ[cor : cor + q(q−1)/2] = y
	eta    float64
}

// nCor returns the number of y coordinates, q(q−1)/2.
func (c *corrFactor) nCor() int { return c.q * (c.q - 1) / 2 }

// cholCorr sets the q×q row-major lower-triangular L from y (Stan's
// transform above), s[i·q + j] = s_ij for 0 < j ≤ i, and returns
// log|∂L/∂y| (0 if noJac), and false where a diagonal of L is not
// positive (|y| so large that tanh rounds to ±1).
func cholCorr(y []float64, q int, l, s []float64, noJac bool) (float64, bool) {
	var jac float64
	l[0] = 1
	k := 0
	for i := 1; i < q; i++ {
		var ss float64
		for j := range i {
			z := math.Tanh(y[k])
			if !noJac {
				a := math.Abs(y[k])
				jac += -2 * (a + math.Log1p(math.Exp(-2*a)) - math.Ln2) // log(1 − tanh²y)
			}
			k++
			if j == 0 {
				l[i*q] = z
			} else {
				s[i*q+j] = ss
				if !noJac {
					jac += math.Log1p(-ss) / 2
				}
				l[i*q+j] = z * math.Sqrt(1-ss)
			}
			ss += l[i*q+j] * l[i*q+j]
		}
		s[i*q+i] = ss
		if !(ss < 1) {
			return math.Inf(-1), false
		}
		l[i*q+i] = math.Sqrt(1 - ss)
	}
	return jac, true
}

// logPrior returns the factor's part of log p(θ) but for the τ priors
// and −G·Σ_k log τ_k, which its terms hold.
func (c *corrFactor) logPrior(theta []float64, noJac bool) float64 {
	var l, s [maxCorrelated * maxCorrelated]float64
	var itau, v [maxCorrelated]float64
	q := c.q
	jac, ok := cholCorr(theta[c.cor:c.cor+c.nCor()], q, l[:], s[:], noJac)
	if !ok {
		return math.Inf(-1)
	}
	lp := jac
	for i := 1; i < q; i++ {
		lp += (float64(q-i-1) + 2*c.eta - 2 - float64(c.g)) * math.Log(l[i*q+i])
	}
	for k := range q {
		itau[k] = math.Exp(-theta[c.logTau[k]])
	}
	for g := range c.g {
		u := theta[c.start+g*q : c.start+g*q+q]
		for i := range q {
			x := u[i] * itau[i]
			for j := range i {
				x -= l[i*q+j] * v[j]
			}
			v[i] = x / l[i*q+i]
			lp -= v[i] * v[i] / 2
		}
	}
	return lp
}

// addGradient adds the gradient of logPrior (and of the terms'
// −G·log τ_k's complement: the quadratic's derivative in log τ_k) to
// grad: with r_g = L⁻ᵀw_g,
//
//	∂/∂u_g = −D⁻¹r_g,  ∂/∂log τ_k += Σ_g r_gk·v_gk,
//	∂/∂L_ij = Σ_g r_gi·w_gj (j ≤ i) + [i = j ≥ 1]·(q − i − 1 + 2η − 2 − G)/L_ii,
//
// then back through the transform to y, the Jacobian's terms included.
func (c *corrFactor) addGradient(grad, theta []float64, noJac bool) {
	var l, s, gl [maxCorrelated * maxCorrelated]float64
	var itau, w, r [maxCorrelated]float64
	q := c.q
	y := theta[c.cor : c.cor+c.nCor()]
	if _, ok := cholCorr(y, q, l[:], s[:], noJac); !ok {
		return
	}
	for k := range q {
		itau[k] = math.Exp(-theta[c.logTau[k]])
	}
	for g := range c.g {
		base := c.start + g*q
		u := theta[base : base+q]
		for i := range q {
			x := u[i] * itau[i]
			for j := range i {
				x -= l[i*q+j] * w[j]
			}
			w[i] = x / l[i*q+i]
		}
		for i := q - 1; i >= 0; i-- {
			x := w[i]
			for j := i + 1; j < q; j++ {
				x -= l[j*q+i] * r[j]
			}
			r[i] = x / l[i*q+i]
		}
		for k := range q {
			grad[base+k] -= itau[k] * r[k]
			grad[c.logTau[k]] += r[k] * u[k] * itau[k]
			for j := 0; j <= k; j++ {
				gl[k*q+j] += r[k] * w[j]
			}
		}
	}
	for i := 1; i < q; i++ {
		gl[i*q+i] += (float64(q-i-1) + 2*c.eta - 2 - float64(c.g)) / l[i*q+i]
	}
	// Back through row i's recursion, last column first.
	k0 := 0
	for i := 1; i < q; i++ {
		gs := -gl[i*q+i] / (2 * l[i*q+i]) // ∂/∂s_ii
		for j := i - 1; j >= 1; j-- {
			sj := s[i*q+j]
			rt := math.Sqrt(1 - sj)
			z := math.Tanh(y[k0+j])
			g := gl[i*q+j] + 2*gs*l[i*q+j] // s_i,j+1 = s_ij + L_ij²
			gs += -g * z / (2 * rt)        // L_ij = z·√(1 − s_ij)
			if !noJac {
				gs -= 1 / (2 * (1 - sj)) // ½·log(1 − s_ij)
			}
			gz := g * rt
			grad[c.cor+k0+j] += gz * (1 - z*z)
			if !noJac {
				grad[c.cor+k0+j] -= 2 * z
			}
		}
		z := math.Tanh(y[k0])
		gz := gl[i*q] + 2*gs*z // s_i1 = z_i0²
		grad[c.cor+k0] += gz * (1 - z*z)
		if !noJac {
			grad[c.cor+k0] -= 2 * z
		}
		k0 += i
	}
}

// precision sets prec (q×q, row-major) to Σ⁻¹ = D⁻¹L⁻ᵀL⁻¹D⁻¹ at θ and
// reports whether Σ is positive definite there.
func (c *corrFactor) precision(theta, prec []float64) bool {
	var l, s, li [maxCorrelated * maxCorrelated]float64
	var itau [maxCorrelated]float64
	q := c.q
	if _, ok := cholCorr(theta[c.cor:c.cor+c.nCor()], q, l[:], s[:], true); !ok {
		return false
	}
	// li = L⁻¹, lower triangular, column by column.
	for col := range q {
		for i := col; i < q; i++ {
			x := 0.0
			if i == col {
				x = 1
			}
			for j := col; j < i; j++ {
				x -= l[i*q+j] * li[j*q+col]
			}
			li[i*q+col] = x / l[i*q+i]
		}
	}
	for k := range q {
		itau[k] = math.Exp(-theta[c.logTau[k]])
	}
	for a := range q {
		for b := range q {
			var x float64
			for k := max(a, b); k < q; k++ {
				x += li[k*q+a] * li[k*q+b]
			}
			prec[a*q+b] = itau[a] * itau[b] * x
		}
	}
	return true
}

// correlations sets cor to the strict lower triangle of Ω = LLᵀ at θ, row
// by row (Ω_10, Ω_20, Ω_21, …).
func (c *corrFactor) correlations(theta, cor []float64) {
	var l, s [maxCorrelated * maxCorrelated]float64
	q := c.q
	if _, ok := cholCorr(theta[c.cor:c.cor+c.nCor()], q, l[:], s[:], true); !ok {
		for k := range cor {
			cor[k] = math.NaN()
		}
		return
	}
	k := 0
	for i := 1; i < q; i++ {
		for j := range i {
			var x float64
			for m := 0; m <= j; m++ {
				x += l[i*q+m] * l[j*q+m]
			}
			cor[k] = x
			k++
		}
	}
}

// NumCorrelated returns the number of correlated factors
// (Factor.Correlated).
func (p *MultilevelPrior) NumCorrelated() int { return len(p.corrs) }

// Correlated returns correlated factor c: the indices (for Term) of its q
// terms, in the order of its effects at each level, and where its q(q−1)/2
// unconstrained correlation coordinates are, θ[cor : cor + q(q−1)/2].
// Under the prior its effects at each level are jointly N(0, Σ), Σ⁻¹ as
// EffectPrecision sets it, independent across levels given θ's scales
// and correlations.
func (p *MultilevelPrior) Correlated(c int) (terms []int, cor int) {
	f := &p.corrs[c]
	terms = make([]int, f.q)
	for k := range terms {
		terms[k] = f.first + k
	}
	return terms, f.cor
}

// EffectPrecision sets prec (q×q, row-major) to Σ⁻¹ of correlated factor
// c's effects at θ and reports whether Σ is positive definite there.
func (p *MultilevelPrior) EffectPrecision(c int, theta, prec []float64) bool {
	return p.corrs[c].precision(theta, prec)
}

// Correlations sets cor to correlated factor c's correlations at θ, the
// strict lower triangle of Ω row by row (cor_{1,0}, cor_{2,0}, cor_{2,1},
// …, the indices those of the factor's effects, intercept first), and
// returns the pairs' names in brms's spelling, "cor_g__Intercept__x".
// With theta nil it returns the names alone.
func (p *MultilevelPrior) Correlations(c int, theta, cor []float64) []string {
	f := &p.corrs[c]
	if theta != nil {
		f.correlations(theta, cor)
	}
	var names []string
	for i := 1; i < f.q; i++ {
		for j := range i {
			names = append(names, "cor_"+f.factor+"__"+f.terms[j]+"__"+f.terms[i])
		}
	}
	return names
}

// corrHessian adds the correlated factors' entries to the pattern rows
// (rows[j]: the rows below the diagonal of column j) for SparseHessian:
// within each level the q effects together, each effect with its
// factor's scale coordinates (its q log τ and the y's), and those among
// themselves.
func (p *MultilevelPrior) corrPattern(rows [][]int) {
	for _, f := range p.corrs {
		scale := slices.Clone(f.logTau)
		for k := range f.nCor() {
			scale = append(scale, f.cor+k)
		}
		slices.Sort(scale)
		for g := range f.g {
			for a := range f.q {
				j := f.start + g*f.q + a
				for b := a + 1; b < f.q; b++ {
					rows[j] = append(rows[j], f.start+g*f.q+b)
				}
				rows[j] = append(rows[j], scale...)
			}
		}
		for a, s := range scale {
			rows[s] = append(rows[s], scale[a+1:]...)
		}
	}
}

// corrHessianValues sets the correlated factors' entries of h (∇² of
// −log p, its pattern from corrPattern): Σ⁻¹ exactly on each level's
// effects; the columns of the scale coordinates (log τ_k, y) by central
// differences of the exact gradient, step 10⁻⁵ — they feed the Laplace
// centre's Newton steps and standard deviations, not any kernel's
// acceptance.
func (p *MultilevelPrior) corrHessianValues(h *sparse.SymCSC, theta []float64) error {
	at := func(col, row int) *float64 {
		rs := h.RowIdx[h.ColPtr[col]:h.ColPtr[col+1]]
		k, ok := slices.BinarySearch(rs, row)
		if !ok {
			panic(fmt.Sprintf("model: MultilevelPrior.SparseHessian: no entry (%d, %d) in the pattern", row, col))
		}
		return &h.Val[h.ColPtr[col]+k]
	}
	th := slices.Clone(theta)
	gp, gm := make([]float64, p.d), make([]float64, p.d)
	var prec [maxCorrelated * maxCorrelated]float64
	for _, f := range p.corrs {
		q := f.q
		if !f.precision(theta, prec[:]) {
			return fmt.Errorf("model: MultilevelPrior.SparseHessian: factor %s: its correlation matrix is singular at θ (|y| too large)", f.factor)
		}
		for g := range f.g {
			for a := range q {
				for b := a; b < q; b++ {
					*at(f.start+g*q+a, f.start+g*q+b) = prec[a*q+b]
				}
			}
		}
		scale := slices.Clone(f.logTau)
		for k := range f.nCor() {
			scale = append(scale, f.cor+k)
		}
		for _, s := range scale {
			const step = 1e-5
			clear(gp)
			clear(gm)
			th[s] = theta[s] + step
			p.AddLogPriorGradient(gp, th)
			th[s] = theta[s] - step
			p.AddLogPriorGradient(gm, th)
			th[s] = theta[s]
			col := func(j int) float64 { return -(gp[j] - gm[j]) / (2 * step) }
			for g := range f.g {
				for a := range q {
					j := f.start + g*q + a
					*at(j, s) = col(j)
				}
			}
			for _, r := range scale {
				if r >= s {
					*at(s, r) = col(r)
				}
			}
		}
	}
	return nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"sync"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/sparse"
)

// laplaceMetric is the sparse metric of non-centred NUTS on a multilevel
// posterior (exactmh.MetricOps): the mass matrix M = S⁻¹HS⁻¹, H the
// Gauss–Newton Hessian of −log π_φ at the Laplace-EM centre in the
// non-centred coordinates φ = (β, z, log τ), u = τ·z (laplaceHessian),
// applied through its sparse Cholesky factor H = PᵀLLᵀP, and S a
// diagonal that warmup sets (Rescale; I until then). With p ~ N(0, M)
// and kinetic energy ½pᵀM⁻¹p, NUTS in φ is NUTS with the unit metric in
// the whitened w = LᵀPS⁻¹φ (Neal 2011, §4.1): the sums of coordinates
// that the data pin (a location with one brood, the intercept with a
// year's broods) become unit-scale directions, which no diagonal metric
// can scale. M is fixed after warmup, so NUTS stays exact whatever it is;
// every operation is a sparse triangular product or solve, O(nnz(L)),
// and none allocates (KineticEnergy, MassNorm and SolveChol take scratch
// from a pool).
type laplaceMetric struct {
	d        int
	perm     []int     // perm[k]: the original index of pivot k
	lp, li   []int     // L by columns, diagonal first, in pivot order
	lx       []float64 // L's values
	prow     []int     // prow[q] = perm[li[q]]
	hinvDiag []float64 // diag(H⁻¹), for Rescale
	sc       []float64 // S's diagonal (nil: I)
	scratch  *sync.Pool
	mutant   metricMutant // test hook: 0 in every real kernel
}

// metricMutant names the deliberately wrong forms of laplaceMetric that
// the kit must catch (TestLaplaceNUTSMoments).
type metricMutant uint8

const (
	mutantNone metricMutant = iota
	// mutantMomentumTranspose draws p = S·PᵀL⁻ᵀξ, covariance M⁻¹, while
	// the kinetic energy stays ½pᵀM⁻¹p: the momentum's law is not the
	// one the Hamiltonian assumes (the factor's transpose used wrongly).
	mutantMomentumTranspose
)

func newLaplaceMetric(ch *sparse.Cholesky) *laplaceMetric {
	l := ch.L()
	m := &laplaceMetric{d: ch.N(), perm: ch.Symbolic().Perm(), lp: l.ColPtr, li: l.RowIdx, lx: l.Val}
	m.prow = make([]int, len(m.li))
	for q, i := range m.li {
		m.prow[q] = m.perm[i]
	}
	m.hinvDiag = make([]float64, m.d)
	ch.InverseDiag(m.hinvDiag)
	m.scratch = &sync.Pool{New: func() any { s := make([]float64, 2*m.d); return &s }}
	return m
}

// Rescale returns the metric M⁻¹ = S·H⁻¹·S whose diagonal is v, warmup's
// estimate of the marginal variances (exactmh.NewMetric's Rescale, called
// at the end of each warmup window): S_jj = √(v_j/(H⁻¹)_jj). H keeps the
// correlations the data impose at the centre, which a window's few
// hundred draws cannot estimate in hundreds of dimensions; the window
// sets each coordinate's scale, which one Hessian at one τ cannot (the
// log scales' spread, the effects' across the funnel). It shares L.
func (m *laplaceMetric) Rescale(v []float64) exactmh.MetricOps {
	r := *m
	r.sc = make([]float64, m.d)
	for j, x := range v {
		r.sc[j] = 1
		if s := math.Sqrt(x / m.hinvDiag[j]); s > 0 && !math.IsInf(s, 0) {
			r.sc[j] = s
		}
	}
	return &r
}

// scale multiplies x by S, or divides it if inverse.
func (m *laplaceMetric) scale(x []float64, inverse bool) {
	for j, s := range m.sc {
		if inverse {
			x[j] /= s
		} else {
			x[j] *= s
		}
	}
}

// Dim returns d.
func (m *laplaceMetric) Dim() int { return m.d }

// Kind returns "laplace".
func (m *laplaceMetric) Kind() exactmh.MetricKind { return "laplace" }

// Momentum sets p = S⁻¹PᵀLξ in place, ξ_k = p[perm[k]] ~ N(0, 1): Cov p
// = S⁻¹PᵀLLᵀPS⁻¹ = M. Column j of L adds to rows below it only, so going
// from the last column up each ξ_j is read before it is overwritten.
func (m *laplaceMetric) Momentum(p []float64) {
	if m.mutant == mutantMomentumTranspose {
		m.Noise(p)
		return
	}
	for j := m.d - 1; j >= 0; j-- {
		lo, hi := m.lp[j], m.lp[j+1]
		xj := p[m.perm[j]]
		p[m.perm[j]] = m.lx[lo] * xj
		for q := lo + 1; q < hi; q++ {
			p[m.prow[q]] += m.lx[q] * xj
		}
	}
	m.scale(p, true)
}

// solveL solves Ly = Px in place in x's original indexing (y_k stored at
// x[perm[k]]).
func (m *laplaceMetric) solveL(x []float64) {
	for j := range m.d {
		lo, hi := m.lp[j], m.lp[j+1]
		xj := x[m.perm[j]] / m.lx[lo]
		x[m.perm[j]] = xj
		for q := lo + 1; q < hi; q++ {
			x[m.prow[q]] -= m.lx[q] * xj
		}
	}
}

// solveLT solves Lᵀy = x in place in x's original indexing, the inverse
// of solveL's storage: x[perm[k]] holds entry k before and after.
func (m *laplaceMetric) solveLT(x []float64) {
	for j := m.d - 1; j >= 0; j-- {
		lo, hi := m.lp[j], m.lp[j+1]
		s := x[m.perm[j]]
		for q := lo + 1; q < hi; q++ {
			s -= m.lx[q] * x[m.prow[q]]
		}
		x[m.perm[j]] = s / m.lx[lo]
	}
}

// mulLT sets dst[j] = (LᵀPy)_j, column j of L against y.
func (m *laplaceMetric) mulLT(dst, y []float64) {
	for j := range m.d {
		var c float64
		for q := m.lp[j]; q < m.lp[j+1]; q++ {
			c += m.lx[q] * y[m.prow[q]]
		}
		dst[j] = c
	}
}

// KineticEnergy returns ½pᵀM⁻¹p = ½‖L⁻¹PSp‖².
func (m *laplaceMetric) KineticEnergy(p []float64) float64 {
	bp := m.scratch.Get().(*[]float64)
	y := (*bp)[:m.d]
	copy(y, p)
	m.scale(y, false)
	m.solveL(y)
	var k float64
	for _, v := range y {
		k += v * v
	}
	m.scratch.Put(bp)
	return k / 2
}

// MulInvMass sets dst = M⁻¹v = S·PᵀL⁻ᵀL⁻¹P·Sv (dst may be v).
func (m *laplaceMetric) MulInvMass(dst, v []float64) {
	copy(dst, v)
	m.scale(dst, false)
	m.solveL(dst)
	m.solveLT(dst)
	m.scale(dst, false)
}

// Noise sets x = S·PᵀL⁻ᵀξ in place, ξ_k = x[perm[k]] ~ N(0, 1): Cov x =
// M⁻¹.
func (m *laplaceMetric) Noise(x []float64) {
	m.solveLT(x)
	m.scale(x, false)
}

// MassNorm returns rᵀMr = ‖LᵀPS⁻¹r‖².
func (m *laplaceMetric) MassNorm(r []float64) float64 {
	bp := m.scratch.Get().(*[]float64)
	y, w := (*bp)[:m.d], (*bp)[m.d:]
	copy(y, r)
	m.scale(y, true)
	m.mulLT(w, y)
	var s float64
	for _, c := range w {
		s += c * c
	}
	m.scratch.Put(bp)
	return s
}

// The factor F = S·PᵀL⁻ᵀ of M⁻¹ = FFᵀ whitens: w = F⁻¹φ = LᵀPS⁻¹φ.

// MulChol sets dst = Fv (dst and v distinct).
func (m *laplaceMetric) MulChol(dst, v []float64) {
	for k, i := range m.perm {
		dst[i] = v[k]
	}
	m.solveLT(dst)
	m.scale(dst, false)
}

// MulCholT sets dst = Fᵀv = L⁻¹PSv (dst and v distinct).
func (m *laplaceMetric) MulCholT(dst, v []float64) {
	for k, i := range m.perm {
		dst[k] = v[i]
		if m.sc != nil {
			dst[k] *= m.sc[i]
		}
	}
	for j := range m.d {
		lo, hi := m.lp[j], m.lp[j+1]
		xj := dst[j] / m.lx[lo]
		dst[j] = xj
		for q := lo + 1; q < hi; q++ {
			dst[m.li[q]] -= m.lx[q] * xj
		}
	}
}

// SolveChol sets dst = F⁻¹v = LᵀPS⁻¹v (dst may be v).
func (m *laplaceMetric) SolveChol(dst, v []float64) {
	bp := m.scratch.Get().(*[]float64)
	y, w := (*bp)[:m.d], (*bp)[m.d:]
	copy(y, v)
	m.scale(y, true)
	m.mulLT(w, y)
	copy(dst, w)
	m.scratch.Put(bp)
}

// laplaceTauFloor is the smallest curvature laplaceHessian gives a log
// scale: an sd of at most 2 in log τ, where the data and the prior leave
// it flat (a variance at zero: no effect moves with τ).
const laplaceTauFloor = 0.25

// laplaceHessian returns the sparse Cholesky factor of H, the Gauss–Newton
// Hessian of −log π_φ at the centre c (centred coordinates θ) in the
// non-centred ones φ = T⁻¹(θ), θ = T(φ) setting u_{t,g} = τ_t·z_{t,g}:
//
//	H = JᵀH_E J + H_prior,φ,
//
// H_E the energy's sparse Hessian at c and J = ∂θ/∂φ, whose column is
// e_j for a fixed effect, τ_t·e_u for z_{t,g} and Σ_g u_{t,g}·e_{u_{t,g}}
// for log τ_t. Under model.NewMultilevel's prior z ~ N(0, 1) apart from
// τ (the Jacobian Σ_t G_t·log τ_t cancels the effects' 1/τ), so the
// prior adds 1 to each z's diagonal, the prior's own Hessian on the
// fixed effects, and to each log τ the curvature of its hyperprior, by
// central differences of log π_φ's prior part along log τ with z fixed.
// The residual term of the Gauss–Newton form (the energy's gradient
// times ∂²θ/∂log τ²) is left out: it can make H indefinite away from a
// mode, and the centre is not a mode of π_φ. With tauInL the log scales'
// rows and columns (J's log τ columns against the others) are in H;
// without, each log τ gets its diagonal alone. Each log τ's diagonal is
// at least laplaceTauFloor. The ordering puts the log scales last (they
// touch every effect of their term) through the minimum-degree order.
func laplaceHessian(t *exactmh.Target, lay Layout, c []float64, tauInL bool) (*sparse.Cholesky, error) {
	d := t.Dim()
	eh, ok := t.Energy().(exactmh.SparseHessianer)
	if !ok {
		return nil, fmt.Errorf("energy %T has no sparse Hessian", t.Energy())
	}
	ph, ok := t.Prior().(exactmh.SparseHessianer)
	if !ok {
		return nil, fmt.Errorf("prior %T has no sparse Hessian", t.Prior())
	}
	he, err := t.SparseHessianOf(eh, c)
	if err != nil {
		return nil, err
	}
	hp, err := t.SparseHessianOf(ph, c)
	if err != nil {
		return nil, err
	}
	// s[j]: ∂θ_j/∂φ_j (τ for an effect, 1 else); term[j]: the term whose
	// effect j is, −1 else; isTau[j]: a log scale.
	s, term, isTau := make([]float64, d), make([]int, d), make([]bool, d)
	for j := range d {
		s[j], term[j] = 1, -1
	}
	nt := lay.NumTerms()
	lts := make([]int, nt)
	for tm := range nt {
		_, _, start, stride, levels, lt := lay.Term(tm)
		lts[tm] = lt
		isTau[lt] = true
		tau := math.Exp(c[lt])
		for g := range levels {
			j := start + g*stride
			s[j], term[j] = tau, tm
		}
	}
	tr := sparse.NewTriplet(d)
	// cross[tm*d + j] accumulates (J_{log τ_tm})ᵀ H_E e_j·s_j: Σ_g u_g H_E[u_g, j] s_j.
	var cross []float64
	if tauInL {
		cross = make([]float64, nt*d)
	}
	tauDiag := make([]float64, nt*nt)
	for j := range he.N {
		for q := he.ColPtr[j]; q < he.ColPtr[j+1]; q++ {
			i, v := he.RowIdx[q], he.Val[q]
			if isTau[i] || isTau[j] {
				continue
			}
			tr.Add(i, j, s[i]*s[j]*v)
			// H_E[i, j] pairs (i, j) and, off the diagonal, (j, i).
			for _, e := range [2][2]int{{i, j}, {j, i}} {
				a, b := e[0], e[1]
				if tm := term[a]; tm >= 0 {
					ua := c[a]
					if tauInL {
						cross[tm*d+b] += ua * v * s[b]
					}
					if tb := term[b]; tb >= 0 {
						tauDiag[tm*nt+tb] += ua * v * c[b]
					}
				}
				if i == j {
					break
				}
			}
		}
	}
	for j := range hp.N {
		for q := hp.ColPtr[j]; q < hp.ColPtr[j+1]; q++ {
			if i := hp.RowIdx[q]; term[i] < 0 && term[j] < 0 && !isTau[i] && !isTau[j] {
				tr.Add(i, j, hp.Val[q])
			}
		}
	}
	for j := range d {
		if term[j] >= 0 {
			tr.Add(j, j, 1)
		}
	}
	// The hyperprior's curvature along each log τ with z fixed.
	phi := make([]float64, d)
	theta := make([]float64, d)
	for j := range d {
		phi[j] = c[j] / s[j]
	}
	priorPhi := func() float64 {
		copy(theta, phi)
		for j := range d {
			if tm := term[j]; tm >= 0 {
				theta[j] = math.Exp(phi[lts[tm]]) * phi[j]
			}
		}
		return t.LogPrior(theta)
	}
	const h = 1e-3
	for tm, lt := range lts {
		_, _, _, _, levels, _ := lay.Term(tm)
		f0 := priorPhi()
		phi[lt] = c[lt] + h
		fp := priorPhi() + float64(levels)*h
		phi[lt] = c[lt] - h
		fm := priorPhi() - float64(levels)*h
		phi[lt] = c[lt]
		curv := -(fp - 2*f0 + fm) / (h * h)
		if math.IsNaN(curv) || math.IsInf(curv, 0) {
			curv = 0
		}
		dd := tauDiag[tm*nt+tm] + curv
		if !(dd >= laplaceTauFloor) {
			dd = laplaceTauFloor
		}
		tr.Add(lt, lt, dd)
		if !tauInL {
			continue
		}
		for tb := tm + 1; tb < nt; tb++ {
			tr.Add(lt, lts[tb], tauDiag[tm*nt+tb])
		}
		for j := range d {
			if v := cross[tm*d+j]; v != 0 && !isTau[j] {
				tr.Add(lt, j, v)
			}
		}
	}
	a, err := tr.SymCSC()
	if err != nil {
		return nil, err
	}
	ch, err := sparse.Factorize(a)
	if err != nil {
		return nil, fmt.Errorf("the non-centred Hessian at the centre: %w", err)
	}
	return ch, nil
}

// laplaceTauInL says whether NUTSLaplace puts the log scales' rows in H
// (true) or gives each its diagonal alone: without the log τ–z coupling a
// move of log τ with z fixed moves every pinned effect u = τ·z, and on
// grouseticks NUTS took 4 times the leapfrogs
// (figures/bench/multilevel_real_laplace.txt).
const laplaceTauInL = true

// laplaceMaxFill bounds the factor NUTSLaplace accepts, in entries of L
// per datum: a leapfrog step applies L three times (the kinetic energy and
// the velocity's two solves), a multiply-add per entry each, beside one
// gradient, a pass over the N rows that reads a row's handful of entries
// and takes the family's e^η or erfc (tens of flops), so past about 16
// entries a datum the metric would cost more than the gradient (large
// crossed factors fill L). grouseticks' factor holds 12 a datum,
// guimmun's 9.
const laplaceMaxFill = 16

// NUTSLaplace returns non-centred NUTS (exactmh.NUTS.NonCentred, target
// acceptance 0.95 as the default's NUTS-NC) whose metric is the sparse
// Laplace one of p at centre (laplaceMetric): the Gauss–Newton Hessian of
// the non-centred posterior at the centre through its sparse Cholesky
// factor, each coordinate's scale then set by warmup (Rescale). centre
// is in p's (centred) coordinates, as the automatic default's Laplace-EM
// centre (exactmh.Choice.Center). It is an error where p is not a
// multilevel posterior (Of), H cannot be factored, or its factor holds
// more than laplaceMaxFill·N + d entries.
//
// The automatic default does not choose it: on grouseticks it mixes the
// fixed effects ten times better per gradient than NUTS-NC but the log
// scales of the loosely identified terms worse
// (figures/bench/multilevel_real_laplace.txt).
func NUTSLaplace(p *exactmh.Posterior, centre []float64) (exactmh.NUTS, error) {
	m, err := laplaceMetricOf(p, centre, laplaceTauInL)
	if err != nil {
		return exactmh.NUTS{}, err
	}
	met, err := exactmh.NewMetric(m)
	if err != nil {
		return exactmh.NUTS{}, err
	}
	return exactmh.NUTS{NonCentred: true, TargetAccept: multilevelTargetAccept, Metric: met}, nil
}

// laplaceMetricOf builds NUTSLaplace's metric.
func laplaceMetricOf(p *exactmh.Posterior, centre []float64, tauInL bool) (*laplaceMetric, error) {
	lay, ok := Of(p)
	if !ok {
		return nil, fmt.Errorf("multilevel: NUTSLaplace: not a multilevel posterior (Of)")
	}
	if len(centre) != p.Dim() {
		return nil, fmt.Errorf("multilevel: NUTSLaplace: centre of dimension %d, want %d", len(centre), p.Dim())
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, err
	}
	ch, err := laplaceHessian(t, lay, centre, tauInL)
	if err != nil {
		return nil, fmt.Errorf("multilevel: NUTSLaplace: %w", err)
	}
	if nnz := ch.Symbolic().FactorNNZ(); nnz > laplaceMaxFill*t.N()+t.Dim() {
		return nil, fmt.Errorf("multilevel: NUTSLaplace: the factor holds %d entries, more than %d a datum (N = %d, d = %d)", nnz, laplaceMaxFill, t.N(), t.Dim())
	}
	return newLaplaceMetric(ch), nil
}

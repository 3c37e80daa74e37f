// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
)

// The Laplace independence move's proposal (indepMove): Student t tails of
// indepNuL degrees of freedom in the log scales and indepNuW in the
// location vector given them, the scales' covariance the Laplace
// marginal's inflated by indepInflate. Polynomial tails, heavier than the
// target's in every direction far enough out (its Gaussian effects, its
// logistic likelihood's linear decay in β, its scales' priors and
// Jacobians in ℓ), keep the importance weights p/q bounded, so the move
// alone is uniformly ergodic (Mengersen and Tweedie, Ann. Stat. 24,
// 1996). νW is large because the location vector has dozens of
// coordinates: a t of few degrees of freedom there is far from the
// Laplace Gaussian in the bulk (on contraception the pilot's effective
// fraction is 0.61 with νW = 30 and 0.83 with νW = 1000). νL and the
// inflation are wide because the Laplace marginal of a log scale of few
// levels is narrower than the posterior's skewed one: with νL = 10 and
// S inflated 1.1 the move alone kept log τ of 5 crossed levels away from
// its left tail in TestLogitIndepMoments (|z| = 7 against NUTS); νL = 4
// and 1.5 cost contraception a tenth of its acceptance (0.75 → 0.68).
const (
	indepNuL     = 4
	indepNuW     = 1000
	indepInflate = 1.5
)

// indepPilotDraws is the number of draws from q the default's counted
// pilot weighs (indepPilot), each one pass over the data.
const indepPilotDraws = 200

// indepPilotMin is the least effective fraction (Σw)²/(KΣw²) of the
// pilot's importance weights at which the default makes the move: below
// it the move would be rejected too often to pay for its pass over the
// data.
const indepPilotMin = 0.6

// indepMove is the Laplace independence Metropolis–Hastings move on the
// whole state of a logistic multilevel model (indep): ℓ, the independent
// terms' log scales, and w = (β, u), proposed together from
//
//	q(ℓ, w) = t_νL(ℓ; ℓ̂, S) · t_νW(w; m(ℓ), P(ℓ)⁻¹),
//
// where P(ℓ) = M₀ + diag(τ⁻²) + H_F and m(ℓ) = P(ℓ)⁻¹(b₀ − g_F + H_F θ̂_F)
// are update 2's Gaussian conditional with the latent statistics (M, b)
// replaced by the likelihood's second-order expansion at the joint
// Laplace point (M₀ = XᵀWX, b₀ = Xᵀ(n(y − p) + W(η − o)) at ŵ): the
// Laplace approximation of p(w | τ, y) one Newton step from ŵ, a
// deterministic function of ℓ. ℓ̂ and S are the mode and inflated inverse
// curvature of the Laplace marginal of ℓ (indepFit). With one scale the
// proposal is the grid's instead (indepGrid): w's Gaussian the
// conditional Laplace approximation at the node nearest ℓ, q_ℓ the
// tabulated Laplace marginal mixed with this t.
type indepMove struct {
	rounds int  // moves a sweep
	only   bool // the move alone, no Pólya–Gamma sweep
	// The expansion: M₀'s values in M's pattern, b₀, and the log scales'
	// coordinates, mode and the lower Cholesky factor of S (k×k).
	mVal, b0 []float64
	lt       []int
	mode, sL []float64
	// The data of the expansion: n_i·y_i and n_i (nil: every n_i = 1).
	ny, nw []float64
	// The exact energy's rows (energy): the distinct rows (x_i, o_i) in
	// compressed form, each with its Σn_i and Σn_i·y_i over the data that
	// share it.
	uptr      []int32
	ucol      []int32
	uval      []float64
	uoff      []float64
	ucnt, uny []float64
	// Scratch: a standardised ℓ, the saved latent statistics.
	z            []float64
	saveM, saveB []float64
	// The cache of the current state's log target and log q (valid where
	// curOK): functions of θ alone, recomputed bit for bit after a resume.
	curOK       bool
	piCur, qCur float64
	// The proposal of a model of one log scale (indepGrid; nil: the
	// expansion at the joint Laplace point and q_ℓ the t alone).
	grid *indepGrid
	// Counts: moves kept and made, the current run of rejections and the
	// longest.
	n, t, run, maxRun int64
}

// indepHooks are the move's mutants (augHooks.indep): noReverse leaves
// q(current) out of the ratio; stale keeps the cached q(current) of the
// state before a kept move; mismatch (without a grid) takes the
// proposal's density at the current state's log det P instead of the one
// its draw used; noJacobian takes q_ℓ as a density in τ (less Σℓ),
// without the Jacobian of ℓ = log τ; on the grid (indepGrid), cell reads
// q_ℓ's tabulated part on the neighbouring segment and node takes the
// density of w at the neighbouring node's (m, P), the draw's being ℓ's
// own node's. noGrid (not a mutant) makes the move without a grid on a
// model of one scale.
type indepHooks struct {
	noReverse, stale, mismatch, noJacobian, cell, node, noGrid bool
}

// startIndep sets the chain's independence move of rounds moves a sweep
// (only: no other update), fitting its proposal at the centre.
func (c *augChain) startIndep(rounds int, only bool) error {
	if !c.logit || len(c.corr) > 0 || len(c.asis) == 0 {
		return errors.New("the Laplace independence move needs a logistic model whose random terms are all independent")
	}
	k := len(c.asis)
	ind := &indepMove{rounds: rounds, only: only, mVal: make([]float64, len(c.m.Val)), b0: make([]float64, len(c.b)),
		lt: make([]int, k), mode: make([]float64, k), sL: make([]float64, k*k), z: make([]float64, k),
		saveM: make([]float64, len(c.m.Val)), saveB: make([]float64, len(c.b))}
	for q, a := range c.asis {
		ind.lt[q] = a.logTau
	}
	pe := c.pe.(LogitGLM)
	n := pe.Len()
	ind.ny = make([]float64, n)
	for i := range n {
		w := pe.Weight(i)
		ind.ny[i] = w * pe.Response(i)
		if w != 1 && ind.nw == nil {
			ind.nw = make([]float64, n)
			for q := range i {
				ind.nw[q] = 1
			}
		}
		if ind.nw != nil {
			ind.nw[i] = w
		}
	}
	c.ind = ind
	c.distinctRows()
	if c.chol2 == nil {
		var err error
		if c.chol2, err = c.chol.Symbolic().Factor(c.pv); err != nil {
			return err
		}
		ne := len(c.eff)
		c.mean2, c.dz, c.zeroEff = make([]float64, ne), make([]float64, ne), make([]float64, ne)
	}
	// The fit is a function of the model, the centre and the grid's
	// switch: built once a run and shared by its chains and the default's
	// pilot (read only; each chain copies the vectors it writes).
	key := fmt.Appendf(nil, "multilevel/augment/indep %v", c.ah.indep.noGrid)
	for _, v := range c.centre {
		key = fmt.Appendf(key, " %x", math.Float64bits(v))
	}
	fit, err := shared(c.t, string(key), func() (*indepFitted, error) {
		if err := c.indepFit(); err != nil {
			return nil, err
		}
		return &indepFitted{mode: slices.Clone(ind.mode), sL: slices.Clone(ind.sL), mVal: slices.Clone(ind.mVal), b0: slices.Clone(ind.b0), grid: ind.grid}, nil
	})
	if err != nil {
		return err
	}
	copy(ind.mode, fit.mode)
	copy(ind.sL, fit.sL)
	copy(ind.mVal, fit.mVal)
	copy(ind.b0, fit.b0)
	ind.grid = fit.grid
	return nil
}

// indepFitted is indepFit's result, shared by a run's chains: ℓ̂, the
// factor of S, the expansion M₀, b₀ and the grid (nil: none).
type indepFitted struct {
	mode, sL, mVal, b0 []float64
	grid               *indepGrid
}

// indepPerLevel is the least mean number of data a level of every random
// term must hold for the default to weigh the move by its pilot: the
// Laplace approximation's error in an effect falls as its data grow (a
// level's likelihood nearer Gaussian), and over many levels of few data
// each (chem97's 2,410 schools of 13 pupils) the errors add up to an
// effective fraction the pilot would refuse after reading the data
// indepPilotDraws times.
const indepPerLevel = 20

// indepMoves is the number of independence moves a transition the
// default makes (GroupGibbs.Independence = −indepMoves).
const indepMoves = 2

// choosePilot reports whether the default samples the logistic model of
// n data by the independence move alone, and the pilot's effective
// fraction: where every random term is independent, a proposal's
// counted cost (integrateCost) is at most integrateRoundShare of the
// Pólya–Gamma draws' (the factor of P cheap against a pass over the data:
// few levels, many data each), every term's levels hold at least
// indepPerLevel data on average, and the counted pilot (indepPilot) finds
// an effective fraction of at least indepPilotMin. The pilot reads the
// data indepPilotDraws times; it is made only where the gate admits it.
// Deterministic: counts and a fixed stream, never a clock.
func (c *augChain) choosePilot(n int) (float64, bool) {
	if !c.logit || len(c.corr) > 0 || len(c.asis) == 0 {
		return math.NaN(), false
	}
	if q := c.integrateCost(); !(q <= integrateRoundShare*logitFlopsPerDatum*float64(n)) {
		return math.NaN(), false
	}
	for k := range c.asis {
		a := &c.asis[k]
		nnz := c.termNNZ(a)
		if nnz < indepPerLevel*a.levels {
			return math.NaN(), false
		}
	}
	if err := c.startIndep(1, true); err != nil {
		return math.NaN(), false
	}
	f := c.indepPilot(indepPilotDraws)
	return f, f >= indepPilotMin
}

// energy returns the exact logistic energy U(w) = Σ_i n_i·softplus(η_i) −
// n_i y_i·η_i at θ's w, one pass over the data's distinct rows (data of
// the same row and offset share η: their n_i and n_i y_i summed, an exact
// regrouping; contraception's 1,934 women are 1,547 rows). softplus(η) =
// max(η, 0) + log(1 + e^{−|η|}), and the logs of rows of energyRun data
// in all are taken once, of the product of their factors (1 +
// e^{−|η|})^{n} ∈ (1, 2^n] (no overflow), so a row costs an exponential
// (expNeg) and no log.
func (c *augChain) energy(theta []float64) float64 {
	ind := c.ind
	ptr, col, val := ind.uptr, ind.ucol, ind.uval
	cnt, ny := ind.ucnt, ind.uny
	cnt, ny = cnt[:len(ind.uoff)], ny[:len(ind.uoff)]
	var u float64
	prod, run := 1.0, 0.0
	for i, o := range ind.uoff {
		eta := o
		lo, hi := ptr[i], ptr[i+1]
		rc, rv := col[lo:hi], val[lo:hi]
		rv = rv[:len(rc)]
		for k, j := range rc {
			eta += rv[k] * theta[j]
		}
		f := 1 + expNeg(math.Abs(eta))
		n := cnt[i]
		u += n*max(eta, 0) - ny[i]*eta
		switch n {
		case 1:
			prod *= f
		case 2:
			prod *= f * f
		case 3:
			prod *= f * f * f
		default:
			u += n * math.Log(f)
			continue
		}
		if run += n; run >= energyRun {
			u += math.Log(prod)
			prod, run = 1, 0
		}
	}
	return u + math.Log(prod)
}

// distinctRows sets the energy's distinct rows (indepMove.uptr …) from the
// chain's rows, offsets and the data's n_i, n_i y_i, in the order each
// first appears.
func (c *augChain) distinctRows() {
	ind := c.ind
	seen := map[string]int32{}
	var key []byte
	ind.uptr = []int32{0}
	for i, o := range c.off {
		lo, hi := c.rows.ptr[i], c.rows.ptr[i+1]
		key = binary.LittleEndian.AppendUint64(key[:0], math.Float64bits(o))
		for k := lo; k < hi; k++ {
			key = binary.LittleEndian.AppendUint32(key, uint32(c.rows.col[k]))
			key = binary.LittleEndian.AppendUint64(key, math.Float64bits(c.rows.val[k]))
		}
		n := 1.0
		if ind.nw != nil {
			n = ind.nw[i]
		}
		q, ok := seen[string(key)]
		if !ok {
			q = int32(len(ind.uoff))
			seen[string(key)] = q
			ind.ucol = append(ind.ucol, c.rows.col[lo:hi]...)
			ind.uval = append(ind.uval, c.rows.val[lo:hi]...)
			ind.uptr = append(ind.uptr, int32(len(ind.ucol)))
			ind.uoff = append(ind.uoff, o)
			ind.ucnt = append(ind.ucnt, 0)
			ind.uny = append(ind.uny, 0)
		}
		ind.ucnt[q] += n
		ind.uny[q] += ind.ny[i]
	}
}

// energyRun is the rows energy multiplies before a log: their product is
// at most 2^energyRun.
const energyRun = 256

// expandAt sets M₀ and b₀ to the likelihood's second-order expansion at
// x's w: W_i = n_i p_i(1 − p_i), M₀ = XᵀWX, b₀ = Xᵀ(n(y − p) + W(η − o)).
func (c *augChain) expandAt(x []float64, pt pairTab) {
	ind := c.ind
	clear(ind.mVal)
	clear(ind.b0)
	ptr, col, val := c.rows.ptr, c.rows.col, c.rows.val
	q := 0
	for i, o := range c.off {
		lo, hi := ptr[i], ptr[i+1]
		eta := o
		for k := lo; k < hi; k++ {
			eta += val[k] * x[col[k]]
		}
		p := 1 / (1 + math.Exp(-eta))
		nw := 1.0
		if ind.nw != nil {
			nw = ind.nw[i]
		}
		wi := nw * p * (1 - p)
		r := ind.ny[i] - nw*p + wi*(eta-o)
		for k := lo; k < hi; k++ {
			ind.b0[col[k]] += val[k] * r
		}
		q1 := q + (hi-lo)*(hi-lo+1)/2
		for k := q; k < q1; k++ {
			ind.mVal[pt.pos[k]] += wi * pt.prod[k]
		}
		q = q1
	}
	copy(c.m.Val, ind.mVal) // swapped in (indepFit)
	copy(c.b, ind.b0)
}

// swapIn makes the chain's latent statistics (M, b) the expansion's, for
// conditional; swapOut restores them.
func (c *augChain) swapIn() {
	copy(c.ind.saveM, c.m.Val)
	copy(c.ind.saveB, c.b)
	copy(c.m.Val, c.ind.mVal)
	copy(c.b, c.ind.b0)
}

func (c *augChain) swapOut() {
	copy(c.m.Val, c.ind.saveM)
	copy(c.b, c.ind.saveB)
}

// laplaceAt returns the Laplace log marginal of ℓ (x's log scales), up to
// a constant, log π(ℓ, m(ℓ)) − U(m(ℓ)) − ½log det P(ℓ), setting x's w to
// m(ℓ); M₀ and b₀ swapped in. c.theta's scales are x's on return.
func (c *augChain) laplaceAt(x []float64) (float64, error) {
	for _, j := range c.ind.lt {
		c.theta[j] = x[j]
	}
	if err := c.conditional(c.chol2, c.mean2); err != nil {
		return math.NaN(), err
	}
	for a, j := range c.eff {
		x[j] = c.mean2[a]
	}
	return c.t.LogPrior(x) - c.energy(x) - 0.5*c.chol2.LogDet(), nil
}

// indepFit finds the joint Laplace point from the centre — alternately
// the likelihood's expansion at w (expandAt) and a Newton step of the
// Laplace marginal of ℓ (finite differences of laplaceAt), w then m(ℓ) —
// and sets M₀, b₀ there, ℓ̂ and S = indepInflate·(−∇²)⁻¹ of the marginal
// at ℓ̂. Deterministic in the model and the centre: every chain of a run
// fits the same proposal.
func (c *augChain) indepFit() error {
	ind := c.ind
	k := len(ind.lt)
	saved := append([]float64(nil), c.theta...)
	defer copy(c.theta, saved)
	pt := pairs(&c.rows, c.m)
	x := append([]float64(nil), c.centre...)
	c.swapIn()
	defer c.swapOut()
	f := func(l []float64) (float64, error) {
		for q, j := range ind.lt {
			x[j] = l[q]
		}
		return c.laplaceAt(x)
	}
	l := make([]float64, k)
	for q, j := range ind.lt {
		l[q] = x[j]
	}
	grad, hess := make([]float64, k), make([]float64, k*k)
	deriv := func(h float64) error {
		f0, err := f(l)
		if err != nil {
			return err
		}
		lp := append([]float64(nil), l...)
		for a := range k {
			lp[a] = l[a] + h
			fp, err1 := f(lp)
			lp[a] = l[a] - h
			fm, err2 := f(lp)
			lp[a] = l[a]
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			grad[a] = (fp - fm) / (2 * h)
			hess[a*k+a] = (fp - 2*f0 + fm) / (h * h)
			for b := range a {
				var v [4]float64
				for s, d := range [4][2]float64{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}} {
					lp[a], lp[b] = l[a]+d[0]*h, l[b]+d[1]*h
					if v[s], err = f(lp); err != nil {
						return err
					}
				}
				lp[a], lp[b] = l[a], l[b]
				hess[a*k+b] = (v[0] - v[1] - v[2] + v[3]) / (4 * h * h)
				hess[b*k+a] = hess[a*k+b]
			}
		}
		_, err = f(l) // x's w back at m(ℓ)
		return err
	}
	step := make([]float64, k)
	for range 40 {
		c.expandAt(x, pt)
		if err := deriv(1e-3); err != nil {
			return err
		}
		neg := make([]float64, k*k)
		for q := range neg {
			neg[q] = -hess[q]
		}
		ok := cholInPlace(neg, k)
		if ok {
			copy(step, grad)
			forwardSub(neg, k, step)
			backSub(neg, k, step)
		} else {
			copy(step, grad) // not concave here: a gradient step
		}
		var big float64
		for a := range step {
			big = max(big, math.Abs(step[a]))
		}
		if big > 1 {
			for a := range step {
				step[a] /= big
			}
		}
		for a := range l {
			l[a] += step[a]
		}
		if _, err := f(l); err != nil {
			return err
		}
		if big < 1e-6 {
			break
		}
	}
	c.expandAt(x, pt)
	if err := deriv(0.05); err != nil {
		return err
	}
	for q := range hess {
		ind.sL[q] = -hess[q]
	}
	if !cholInPlace(ind.sL, k) {
		return fmt.Errorf("the Laplace marginal of the log scales is not concave at its mode %v", l)
	}
	// S = inflate·H⁻¹: L_S = √inflate·L_H⁻ᵀ is not triangular; take
	// instead the factor of S itself, inverting H (k×k) column by column.
	s := make([]float64, k*k)
	e := make([]float64, k)
	for b := range k {
		clear(e)
		e[b] = 1
		forwardSub(ind.sL, k, e)
		backSub(ind.sL, k, e)
		for a := range k {
			s[a*k+b] = indepInflate * e[a]
		}
	}
	if !cholInPlace(s, k) {
		return errors.New("the Laplace marginal's covariance is not positive definite")
	}
	copy(ind.sL, s)
	copy(ind.mode, l)
	ind.grid = nil
	if k == 1 && !c.ah.indep.noGrid {
		if err := c.buildGrid(x, pt); err != nil {
			ind.grid = nil // a node's P singular: the move without a grid
		}
	}
	return nil
}

// cholInPlace overwrites the k×k symmetric a (row-major) with its lower
// Cholesky factor (cholesky), the upper triangle zeroed, reporting
// whether a is positive definite.
func cholInPlace(a []float64, k int) bool {
	if !cholesky(a, k) {
		return false
	}
	for j := range k {
		clear(a[j*k+j+1 : j*k+k])
	}
	return true
}

// logQL returns log q_ℓ at θ's log scales up to a constant: the
// multivariate t's −(νL + k)/2·log(1 + |L_S⁻¹(ℓ − ℓ̂)|²/νL), or on the
// grid its mixture's (indepGrid.logQ).
func (c *augChain) logQL(theta []float64) float64 {
	ind := c.ind
	var lq float64
	if ind.grid != nil {
		lq = ind.grid.logQ(theta[ind.lt[0]], ind.mode[0], c.ah.indep.cell)
	} else {
		k := len(ind.lt)
		for q, j := range ind.lt {
			ind.z[q] = theta[j] - ind.mode[q]
		}
		forwardSub(ind.sL, k, ind.z)
		var r float64
		for _, v := range ind.z {
			r += v * v
		}
		lq = -0.5 * (indepNuL + float64(k)) * math.Log1p(r/indepNuL)
	}
	if c.ah.indep.noJacobian {
		for _, j := range ind.lt {
			lq -= theta[j]
		}
	}
	return lq
}

// logQW returns log t_νW(w; m, P⁻¹) up to a constant from log det P and
// δ² = (w − m)ᵀP(w − m).
func logQW(ld, d2 float64, dim int) float64 {
	return 0.5*ld - 0.5*(indepNuW+float64(dim))*math.Log1p(d2/indepNuW)
}

// indepCurrent sets the cache of the current state: log π(θ) − U(θ) and
// log q(θ), with c.chol and c.mean the conditional at θ's scales under
// the expansion (swapped in).
func (c *augChain) indepCurrent() error {
	ind := c.ind
	if ind.grid != nil {
		ind.qCur = c.logQL(c.theta) + c.qW(c.theta)
		ind.piCur = c.lp - c.energy(c.theta)
		ind.curOK = true
		return nil
	}
	if err := c.conditional(c.chol, c.mean); err != nil {
		return err
	}
	for a, j := range c.eff {
		c.dz[a] = c.theta[j] - c.mean[a]
	}
	ind.qCur = c.logQL(c.theta) + logQW(c.chol.LogDet(), c.pv.Quad(c.dz, c.zeroEff), len(c.eff))
	ind.piCur = c.lp - c.energy(c.theta)
	ind.curOK = true
	return nil
}

// indep makes the sweep's independence moves (indepMove): each draws
// ℓ′ ~ t_νL(ℓ̂, S), then w′ = m(ℓ′) + ε/√g, ε ~ N(0, P(ℓ′)⁻¹) by the
// sparse factor of P(ℓ′) and g ~ χ²_νW/νW, and keeps (ℓ′, w′) with
// probability min(1, α),
//
//	log α = log π(θ′) − U(θ′) − log π(θ) + U(θ) + log q(θ) − log q(θ′),
//
// π the prior (its Jacobians in ℓ included), U the exact logistic energy
// (one pass over the data) and q the proposal's density, evaluated at
// the same (m(ℓ), P(ℓ)) as its draw: a deterministic function of ℓ, so
// the move is an exact independence Metropolis–Hastings update of the
// posterior (Tierney, Ann. Stat. 22, 1994), whatever the quality of the
// approximation. The current state's log π − U and log q are cached
// (curOK) while no other update moves θ; both are recomputed from θ
// itself after a kept move (w′ − m(ℓ′) as stored), so the cache is a
// function of the state and a resumed chain makes the same draws. Proven
// by TestLogitIndepMoments and TestLogitIndepSBC with the mutants of
// indepHooks caught.
func (c *augChain) indep(rng *rand.Rand) error {
	ind := c.ind
	c.swapIn()
	defer c.swapOut()
	if !ind.curOK {
		if err := c.indepCurrent(); err != nil {
			return err
		}
	}
	for range ind.rounds {
		ind.t++
		c.t.Count(len(c.off))
		qNew, piNew, lpNew, ok := c.propose(rng)
		if !ok {
			ind.reject()
			continue // P(ℓ′) numerically singular: rejected
		}
		la := piNew - ind.piCur - qNew
		if !c.ah.indep.noReverse {
			la += ind.qCur
		}
		if math.IsNaN(la) {
			ind.reject()
			continue
		}
		if la >= 0 || rng.Float64() < math.Exp(la) {
			copy(c.theta, c.next)
			c.lp = lpNew
			if ind.grid == nil { // the grid's factors are its own
				c.chol, c.chol2 = c.chol2, c.chol
				c.mean, c.mean2 = c.mean2, c.mean
			}
			ind.piCur = piNew
			if !c.ah.indep.stale {
				ind.qCur = qNew
			}
			ind.n++
			ind.run = 0
			continue
		}
		ind.reject()
	}
	c.fresh = false // chol and mean are the expansion's, not the latent statistics'
	return nil
}

// propose draws θ′ ~ q into c.next (indep), its factor and mean in chol2
// and mean2, and returns log q(θ′), log π(θ′) − U(θ′) and log π(θ′); ok
// false where P(ℓ′) is numerically singular. The expansion is swapped in.
func (c *augChain) propose(rng *rand.Rand) (qNew, piNew, lpNew float64, ok bool) {
	ind := c.ind
	k := len(ind.lt)
	copy(c.next, c.theta)
	if g := ind.grid; g != nil {
		// ℓ′ ~ q_ℓ, w′ from its node's t: no factorisation.
		l := g.draw(rng, ind.mode[0])
		c.next[ind.lt[0]] = l
		j, ne := g.node(l), len(c.eff)
		gw := math.Sqrt(gammaDraw(rng, indepNuW/2) / (indepNuW / 2))
		g.chol[j].NormalInto(rng, c.dz)
		m := g.mean[j*ne : (j+1)*ne]
		for a, k := range c.eff {
			c.next[k] = m[a] + c.dz[a]/gw
		}
		lpNew = c.t.LogPrior(c.next)
		qNew = c.logQL(c.next) + c.qW(c.next)
		return qNew, lpNew - c.energy(c.next), lpNew, true
	}
	// ℓ′ ~ t_νL(ℓ̂, S).
	gl := math.Sqrt(gammaDraw(rng, indepNuL/2) / (indepNuL / 2))
	for q := range k {
		ind.z[q] = rng.NormFloat64()
	}
	for a := range k {
		var s float64
		for b := range a + 1 {
			s += ind.sL[a*k+b] * ind.z[b]
		}
		c.next[ind.lt[a]] = ind.mode[a] + s/gl
	}
	old := c.theta
	c.theta = c.next // conditional reads the scales from c.theta
	err := c.conditional(c.chol2, c.mean2)
	c.theta = old
	if err != nil {
		return 0, 0, 0, false
	}
	gw := math.Sqrt(gammaDraw(rng, indepNuW/2) / (indepNuW / 2))
	c.chol2.NormalInto(rng, c.dz)
	for a, j := range c.eff {
		c.next[j] = c.mean2[a] + c.dz[a]/gw
		c.dz[a] = c.next[j] - c.mean2[a]
	}
	ld := c.chol2.LogDet()
	if c.ah.indep.mismatch {
		ld = c.chol.LogDet()
	}
	qNew = c.logQL(c.next) + logQW(ld, c.pv.Quad(c.dz, c.zeroEff), len(c.eff))
	lpNew = c.t.LogPrior(c.next)
	return qNew, lpNew - c.energy(c.next), lpNew, true
}

// indepPilot returns the effective fraction (Σw)²/(K·Σw²) of the
// importance weights w = π(θ)e^{−U(θ)}/q(θ) of K draws from q, from a
// fixed stream: what the move's acceptance rate follows (about the
// fraction where the weights' log is near Gaussian), counted in K passes
// over the data and the same on every machine. θ is left as it was.
func (c *augChain) indepPilot(k int) float64 {
	rng := rand.New(rand.NewPCG(0x1de9, 0x5eed))
	c.swapIn()
	defer c.swapOut()
	lw := make([]float64, 0, k)
	for range k {
		q, pi, _, ok := c.propose(rng)
		if !ok {
			lw = append(lw, math.Inf(-1))
			continue
		}
		lw = append(lw, pi-q)
	}
	top := math.Inf(-1)
	for _, v := range lw {
		top = max(top, v)
	}
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return 0
	}
	var s, s2 float64
	for _, v := range lw {
		e := math.Exp(v - top)
		s += e
		s2 += e * e
	}
	return s * s / (float64(k) * s2)
}

// marshal appends the move's counts to b; the cached q(current) is not
// saved: a function of θ, unmarshal marks it for recomputation.
func (ind *indepMove) marshal(b []byte) []byte {
	return fmt.Appendf(b, " %d %d %d %d", ind.n, ind.t, ind.run, ind.maxRun)
}

// unmarshal reads what marshal saved.
func (ind *indepMove) unmarshal(r io.Reader) error {
	if _, err := fmt.Fscan(r, &ind.n, &ind.t, &ind.run, &ind.maxRun); err != nil {
		return err
	}
	if ind.n < 0 || ind.n > ind.t || ind.run < 0 || ind.run > ind.maxRun || ind.maxRun > ind.t {
		return errors.New("independence move's counts out of range")
	}
	ind.curOK = false
	return nil
}

// reject counts a rejected move in the current run of rejections.
func (ind *indepMove) reject() {
	ind.run++
	ind.maxRun = max(ind.maxRun, ind.run)
}

// stepIndep is a transition of the independence moves alone (indepMove.only).
func (c *augChain) stepIndep(rng *rand.Rand) (exactmh.Info, error) {
	if err := c.indep(rng); err != nil {
		return exactmh.Info{}, err
	}
	n := len(c.off) * c.ind.rounds
	return exactmh.Info{Accepted: true, AcceptProb: math.NaN(), LogDensity: math.NaN(), Batch: n, Distinct: len(c.off)}, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/sparse"
	"gonum.org/v1/gonum/mat"
)

// MultilevelCenter returns a centre for exactmh.GroupSMH's control
// variates on a posterior built by NewMultilevel, and the standard
// deviations of a Gaussian approximation there (for a preconditioned
// proposal). The joint posterior of (β, u, log τ) has no mode — its
// density grows without bound as τ → 0 with u = 0 — so the centre is
// that of a Laplace-EM iteration, as lme4's fits: the mode (β̂, û) of the
// posterior given τ, by Newton's method on the sparse Hessian, then
// τ_kj² = Σ_g(û_gj² + v_gj)/G_k with v_gj the conditional variance of
// u_gj, until log τ moves less than 0.01 (at most maxIter rounds of one
// Newton step and one update of τ each; 0: 50), then Newton to the mode
// given that τ.
//
// With one grouping factor each Newton step solves the arrow-shaped
// system (the fixed effects coupled to every group, the groups to nothing
// else) through the Schur complement on the fixed effects: O(N·nnz per
// row² + G·q³ + G·q²·p + p³), no d×d matrix. With several factors (crossed
// or nested), whose groups are coupled through the data, it factorises
// the sparse Hessian of (β, u) (sparse.Factorize, a minimum-degree order;
// Refactor on later steps) and takes the variances v_gj from its
// inverse's diagonal (Takahashi's recurrence, InverseDiag): O(nnz(L))
// memory, no d×d matrix either.
func MultilevelCenter(ctx context.Context, post *exactmh.Posterior, maxIter int) (center, sd []float64, err error) {
	return multilevelCenter(ctx, post, maxIter, false)
}

// multilevelCenter is MultilevelCenter, with the sparse factorisation for
// one factor too if forceSparse (TestMultilevelCenterSparseArrow).
func multilevelCenter(ctx context.Context, post *exactmh.Posterior, maxIter int, forceSparse bool) (center, sd []float64, err error) {
	prior, ok := post.Prior.(*MultilevelPrior)
	if !ok {
		return nil, nil, fmt.Errorf("model: MultilevelCenter: prior %T, want the *MultilevelPrior of NewMultilevel", post.Prior)
	}
	e, ok := post.Energy.(centerEnergy)
	if !ok {
		return nil, nil, fmt.Errorf("model: MultilevelCenter: energy %T has no gradient and sparse Hessian", post.Energy)
	}
	if maxIter == 0 {
		maxIter = 50
	}
	a, err := newCenterSys(prior)
	if err != nil {
		return nil, nil, err
	}
	if forceSparse {
		a = &sparseSys{m: prior.d - len(prior.terms)}
	}
	d := prior.d
	theta := make([]float64, d)
	t, err := exactmh.NewTarget(post)
	if err != nil {
		return nil, nil, err
	}
	for round := range maxIter {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		// One Newton step per round: (β, u) and τ converge together.
		if err := newton(ctx, a, t, e, prior, theta, 1); err != nil {
			return nil, nil, fmt.Errorf("model: MultilevelCenter: round %d: %w", round, err)
		}
		var moved float64
		for _, tm := range prior.terms {
			var s float64
			for g := range tm.g {
				k := tm.start + g*tm.stride
				s += theta[k]*theta[k] + a.variance(k)
			}
			l := math.Log(s/float64(tm.g)) / 2
			l = math.Max(l, -10) // a scale collapsing to 0: keep the centre finite
			moved = math.Max(moved, math.Abs(l-theta[tm.logTau]))
			theta[tm.logTau] = l
		}
		if moved < 1e-2 {
			break
		}
	}
	if err := newton(ctx, a, t, e, prior, theta, 100); err != nil {
		return nil, nil, fmt.Errorf("model: MultilevelCenter: %w", err)
	}
	sd = make([]float64, d)
	for j := range d {
		sd[j] = math.Sqrt(a.variance(j))
	}
	hp, err := prior.SparseHessian(theta)
	if err != nil {
		return nil, nil, err
	}
	for _, tm := range prior.terms {
		h := hp.Val[hp.ColPtr[tm.logTau]]
		sd[tm.logTau] = 1 / math.Sqrt(math.Max(h, 1e-12))
	}
	return theta, sd, nil
}

// centerEnergy is what MultilevelCenter needs of the energy: its gradient
// and sparse Hessian (the root's SparseHessianer).
type centerEnergy interface {
	exactmh.Energy
	exactmh.Gradienter
	SparseHessian(theta []float64) (*sparse.SymCSC, error)
}

// arrow is the Hessian of (β, u) given τ for one grouping factor: A on
// the fixed effects, a q×q block D_g per group and its coupling B_g (q×p)
// to the fixed effects; after factor, the Schur complement
// S = A − Σ_g B_gᵀD_g⁻¹B_g and each D_g factorised.
type arrow struct {
	p, q, groups, start int
	a                   *mat.SymDense
	dg                  []*mat.SymDense
	bg                  []*mat.Dense
	dChol               []mat.Cholesky
	sChol               mat.Cholesky
	sInv                mat.SymDense
}

// centerSys is the Newton system of (β, u) given τ: assemble the Hessian
// at θ, factorise it, solve with it, and the conditional variance of a
// coordinate (0 for a log scale).
type centerSys interface {
	assemble(e centerEnergy, prior *MultilevelPrior, theta []float64) error
	factor() error
	solve(r []float64) []float64
	variance(j int) float64
}

// newCenterSys returns the arrow for one grouping factor, else the sparse
// factorisation.
func newCenterSys(prior *MultilevelPrior) (centerSys, error) {
	if len(prior.terms) == 0 {
		return nil, errors.New("model: MultilevelCenter: no random effects")
	}
	t0 := prior.terms[0]
	if len(prior.factors) > 1 {
		// Several factors (random or of fixed scale) are coupled through
		// the data.
		return &sparseSys{m: prior.d - len(prior.terms)}, nil
	}
	for _, t := range prior.terms {
		// The terms of one factor share its block: starts t0.start … t0.start + q − 1.
		if t.start < t0.start || t.start >= t0.start+t0.stride || t.stride != t0.stride || t.g != t0.g {
			return &sparseSys{m: prior.d - len(prior.terms)}, nil
		}
	}
	a := &arrow{p: prior.nBeta, q: t0.stride, groups: t0.g, start: t0.start}
	return a, nil
}

// sparseSys is the Newton system of (β, u), the first m coordinates of θ
// (the log scales come last), by the sparse Cholesky factorisation.
type sparseSys struct {
	m    int
	h    *sparse.SymCSC // the assembled Hessian
	pat  *sparse.SymCSC // the one chol was analysed for
	chol *sparse.Cholesky
	vars []float64
}

// assemble sums the energy's and the prior's sparse Hessians and keeps
// the rows and columns of (β, u).
func (s *sparseSys) assemble(e centerEnergy, prior *MultilevelPrior, theta []float64) error {
	he, err := e.SparseHessian(theta)
	if err != nil {
		return err
	}
	hp, err := prior.SparseHessian(theta)
	if err != nil {
		return err
	}
	sum, err := sparse.Add(1, he, 1, hp)
	if err != nil {
		return err
	}
	h := &sparse.SymCSC{N: s.m, ColPtr: make([]int, s.m+1)}
	for j := range s.m {
		for q := sum.ColPtr[j]; q < sum.ColPtr[j+1]; q++ {
			if r := sum.RowIdx[q]; r < s.m {
				h.RowIdx = append(h.RowIdx, r)
				h.Val = append(h.Val, sum.Val[q])
			}
		}
		h.ColPtr[j+1] = len(h.RowIdx)
	}
	s.h = h
	return nil
}

// factor factorises the assembled Hessian (Refactor when its pattern is
// the factorised one's: the data's pattern does not change with θ) and
// computes the diagonal of its inverse.
func (s *sparseSys) factor() error {
	var err error
	if s.chol != nil && s.pat.SamePattern(s.h) {
		err = s.chol.Refactor(s.h)
	} else {
		s.chol, err = sparse.Factorize(s.h)
		s.pat = s.h
	}
	if err != nil {
		return fmt.Errorf("the Hessian of the fixed and random effects: %w", err)
	}
	s.vars = make([]float64, s.m)
	s.chol.InverseDiag(s.vars)
	return nil
}

// solve returns x with H x = r over (β, u) (log scales: 0).
func (s *sparseSys) solve(r []float64) []float64 {
	x := make([]float64, len(r))
	s.chol.Solve(x[:s.m], r[:s.m], make([]float64, s.m))
	return x
}

// variance returns (H⁻¹)_jj for an effect, 0 for a log scale.
func (s *sparseSys) variance(j int) float64 {
	if j >= s.m {
		return 0
	}
	return s.vars[j]
}

// block returns the group and offset of coordinate j, or −1 for a fixed
// effect or a log scale.
func (a *arrow) block(j int) (g, off int) {
	if j < a.start || j >= a.start+a.groups*a.q {
		return -1, 0
	}
	return (j - a.start) / a.q, (j - a.start) % a.q
}

// assemble fills the blocks from the energy's sparse Hessian and the
// prior's diagonal (the u's 1/τ², the fixed effects' precisions).
func (a *arrow) assemble(e centerEnergy, prior *MultilevelPrior, theta []float64) error {
	h, err := e.SparseHessian(theta)
	if err != nil {
		return err
	}
	hp, err := prior.SparseHessian(theta)
	if err != nil {
		return err
	}
	a.a = mat.NewSymDense(max(a.p, 1), nil)
	a.dg = make([]*mat.SymDense, a.groups)
	a.bg = make([]*mat.Dense, a.groups)
	for g := range a.groups {
		a.dg[g] = mat.NewSymDense(a.q, nil)
		if a.p > 0 {
			a.bg[g] = mat.NewDense(a.q, a.p, nil)
		}
	}
	add := func(r, c int, v float64) error {
		gr, or := a.block(r)
		gc, oc := a.block(c)
		switch {
		case r < a.p && c < a.p:
			a.a.SetSym(r, c, a.a.At(r, c)+v)
		case gr >= 0 && c < a.p:
			a.bg[gr].Set(or, c, a.bg[gr].At(or, c)+v)
		case gr >= 0 && gr == gc:
			a.dg[gr].SetSym(or, oc, a.dg[gr].At(or, oc)+v)
		case gr >= 0 && gc >= 0:
			return fmt.Errorf("groups %d and %d are coupled in the Hessian", gc, gr)
		}
		return nil // log scales: held fixed
	}
	for j := range h.N {
		for q := h.ColPtr[j]; q < h.ColPtr[j+1]; q++ {
			if err := add(h.RowIdx[q], j, h.Val[q]); err != nil {
				return err
			}
		}
	}
	for j := range hp.N {
		q := hp.ColPtr[j] // the diagonal comes first in every column
		if err := add(j, j, hp.Val[q]); err != nil {
			return err
		}
	}
	return nil
}

// factor factorises every D_g and the Schur complement.
func (a *arrow) factor() error {
	a.dChol = make([]mat.Cholesky, a.groups)
	s := mat.NewSymDense(max(a.p, 1), nil)
	s.CopySym(a.a)
	var tmp mat.Dense
	for g := range a.groups {
		if !a.dChol[g].Factorize(a.dg[g]) {
			return fmt.Errorf("the Hessian block of group %d is not positive definite", g)
		}
		if a.p == 0 {
			continue
		}
		if err := a.dChol[g].SolveTo(&tmp, a.bg[g]); err != nil {
			return err
		}
		var btdb mat.Dense
		btdb.Mul(a.bg[g].T(), &tmp)
		for i := range a.p {
			for j := i; j < a.p; j++ {
				s.SetSym(i, j, s.At(i, j)-btdb.At(i, j))
			}
		}
	}
	if a.p > 0 {
		if !a.sChol.Factorize(s) {
			return errors.New("the Schur complement on the fixed effects is not positive definite (a flat prior on collinear covariates?)")
		}
		if err := a.sChol.InverseTo(&a.sInv); err != nil {
			return err
		}
	}
	return nil
}

// solve returns x with H x = r over (β, u) (log scales: 0).
func (a *arrow) solve(r []float64) []float64 {
	x := make([]float64, len(r))
	rb := mat.NewVecDense(max(a.p, 1), nil)
	for j := range a.p {
		rb.SetVec(j, r[j])
	}
	dsol := make([]*mat.VecDense, a.groups)
	for g := range a.groups {
		sg := mat.NewVecDense(a.q, r[a.start+g*a.q:a.start+(g+1)*a.q])
		dsol[g] = mat.NewVecDense(a.q, nil)
		_ = a.dChol[g].SolveVecTo(dsol[g], sg)
		if a.p > 0 {
			var t mat.VecDense
			t.MulVec(a.bg[g].T(), dsol[g])
			rb.SubVec(rb, &t)
		}
	}
	var xb mat.VecDense
	if a.p > 0 {
		_ = a.sChol.SolveVecTo(&xb, rb)
		for j := range a.p {
			x[j] = xb.AtVec(j)
		}
	}
	for g := range a.groups {
		sg := mat.NewVecDense(a.q, nil)
		for o := range a.q {
			sg.SetVec(o, r[a.start+g*a.q+o])
		}
		if a.p > 0 {
			var t mat.VecDense
			t.MulVec(a.bg[g], &xb)
			sg.SubVec(sg, &t)
		}
		var y mat.VecDense
		_ = a.dChol[g].SolveVecTo(&y, sg)
		for o := range a.q {
			x[a.start+g*a.q+o] = y.AtVec(o)
		}
	}
	return x
}

// variance returns the conditional variance of coordinate j given τ: the
// fixed effects' from S⁻¹, a group effect's from D_g⁻¹ (without its
// coupling to the fixed effects), 0 for a log scale.
func (a *arrow) variance(j int) float64 {
	if j < a.p {
		return a.sInv.At(j, j)
	}
	g, o := a.block(j)
	if g < 0 {
		return 0
	}
	var inv mat.SymDense
	if err := a.dChol[g].InverseTo(&inv); err != nil {
		return 0
	}
	return inv.At(o, o)
}

// newton runs damped Newton steps on (β, u) at fixed log scales until the
// step is below 10⁻⁸ (at most maxSteps), leaving a factorised at the last
// point.
func newton(ctx context.Context, a centerSys, t *exactmh.Target, e centerEnergy, prior *MultilevelPrior, theta []float64, maxSteps int) error {
	d := len(theta)
	obj := func(th []float64) (float64, error) {
		u, err := t.TotalEnergy(th)
		return u - prior.LogPrior(th), err
	}
	f, err := obj(theta)
	if err != nil {
		return err
	}
	grad := make([]float64, d)
	trial := make([]float64, d)
	for range maxSteps {
		if err := ctx.Err(); err != nil {
			return err
		}
		clear(grad)
		if _, err := t.TotalEnergyAndGradient(grad, theta); err != nil {
			return err
		}
		pg := make([]float64, d)
		prior.AddLogPriorGradient(pg, theta)
		for j := range grad {
			grad[j] = -(grad[j] - pg[j]) // the Newton right-hand side −∇F
		}
		if err := a.assemble(e, prior, theta); err != nil {
			return err
		}
		if err := a.factor(); err != nil {
			return err
		}
		step := a.solve(grad)
		var size, dec float64
		for j, s := range step {
			size = math.Max(size, math.Abs(s))
			dec += grad[j] * s
		}
		if size < 1e-8 {
			return nil
		}
		// Near the mode the decrease the step predicts (half the Newton
		// decrement ∇FᵀH⁻¹∇F) is below the rounding of F, a sum of N
		// terms: no step can be seen to descend, and the line search would
		// halve λ some 30 times, each a pass over the data. There Newton's
		// full step is taken (it converges quadratically).
		if dec/2 <= 1e-12*math.Abs(f) {
			for j := range theta {
				theta[j] += step[j]
			}
			if f, err = obj(theta); err != nil {
				return err
			}
			continue
		}
		lambda := 1.0
		for {
			for j := range theta {
				trial[j] = theta[j] + lambda*step[j]
			}
			ft, err := obj(trial)
			if err == nil && ft <= f {
				copy(theta, trial)
				f = ft
				break
			}
			if lambda /= 2; lambda < 1e-10 {
				return nil // no descent along the Newton step: at the mode to rounding
			}
		}
	}
	return nil
}

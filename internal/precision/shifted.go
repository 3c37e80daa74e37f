// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package precision

import (
	"errors"
	"fmt"
	"math"

	"github.com/exactmh/exactmh/sparse"
	"gonum.org/v1/gonum/mat"
)

// Cond is the condition number above which a Cholesky factor of a
// Hessian is treated as singular (and, in a Newton search, the Hessian
// shifted): H⁻¹ would have no correct digit.
const Cond = 1e14

// Hessian is the Hessian H of −log π at a point of a damped Newton
// search, dense or sparse, which it factors as H + τI with the smallest
// τ that makes the factor positive definite and its condition below
// Cond: τ = 0 where H is, otherwise τ from 10⁻³·max|H_jj| up by factors
// of 10 (Nocedal & Wright, Algorithm 3.3), which still gives a descent
// direction −(H + τI)⁻¹g.
type Hessian interface {
	// Factor factors H + τI and returns τ.
	Factor() (tau float64, err error)
	// Solve sets dst = (H + τI)⁻¹b for the last Factor's τ.
	Solve(dst, b []float64) error
}

// DenseHessian is a dense Hessian: H's upper triangle, d×d row-major.
type DenseHessian struct {
	D       int
	H       []float64
	chol    mat.Cholesky
	shifted []float64
}

// Factor factors H + τI through gonum's Cholesky, treating a condition
// number (its estimate) above Cond as singular.
func (h *DenseHessian) Factor() (float64, error) {
	d := h.D
	if h.chol.Factorize(mat.NewSymDense(d, h.H)) && h.chol.Cond() <= Cond {
		return 0, nil
	}
	var scale float64
	for j := range d {
		scale = math.Max(scale, math.Abs(h.H[j*d+j]))
	}
	if h.shifted == nil {
		h.shifted = make([]float64, d*d)
	}
	for tau := 1e-3 * math.Max(scale, 1e-300); ; tau *= 10 {
		if math.IsInf(tau, 1) {
			return 0, errors.New("no positive definite shift of the Hessian")
		}
		copy(h.shifted, h.H)
		for j := range d {
			h.shifted[j*d+j] += tau
		}
		if h.chol.Factorize(mat.NewSymDense(d, h.shifted)) && h.chol.Cond() <= Cond {
			return tau, nil
		}
	}
}

// Solve sets dst = (H + τI)⁻¹b; a factor near singularity (mat.Condition)
// is not an error.
func (h *DenseHessian) Solve(dst, b []float64) error {
	err := h.chol.SolveVecTo(mat.NewVecDense(h.D, dst), mat.NewVecDense(h.D, b))
	if _, ok := err.(mat.Condition); ok {
		return nil
	}
	return err
}

// SparseHessian is a sparse Hessian H (lower triangle) and its factor
// under the fill-reducing order of Sym, which the points of one search
// share (the pattern is the same at every θ): a factor whose squared
// pivot ratio exceeds Cond (a lower bound on its condition number)
// counts as singular.
type SparseHessian struct {
	H    *sparse.SymCSC
	Sym  *sparse.Symbolic // analysed from H when nil
	Chol *sparse.Cholesky
	// NotPD says why H itself could not be factored at the last Factor
	// (nil when it could).
	NotPD error
	work  []float64
}

// Factor factors H + τI.
func (h *SparseHessian) Factor() (float64, error) {
	if h.Sym == nil {
		sym, err := sparse.Analyze(h.H, nil)
		if err != nil {
			return 0, err
		}
		h.Sym = sym
	}
	err := h.refactor(h.H)
	if err == nil {
		lo, hi := h.Chol.PivotRange()
		if (hi/lo)*(hi/lo) <= Cond {
			h.NotPD = nil
			return 0, nil
		}
		err = fmt.Errorf("the Hessian is numerically singular: its Cholesky factor's pivots range from %.3g to %.3g", lo, hi)
	}
	h.NotPD = err
	var maxDiag float64
	d := h.H.N
	for j := range d {
		maxDiag = math.Max(maxDiag, math.Abs(h.H.At(j, j)))
	}
	shifted := h.H.Clone()
	for tau := 1e-3 * math.Max(maxDiag, 1e-300); tau < 1e300; tau *= 10 {
		copy(shifted.Val, h.H.Val)
		for j := range d {
			// The diagonal is the first entry of its column (rows
			// ascend, ≥ j).
			shifted.Val[shifted.ColPtr[j]] += tau
		}
		if err = h.refactor(shifted); err == nil {
			lo, hi := h.Chol.PivotRange()
			if (hi/lo)*(hi/lo) <= Cond {
				return tau, nil
			}
			err = fmt.Errorf("H + %.3g·I is numerically singular: its Cholesky factor's pivots range from %.3g to %.3g", tau, lo, hi)
		}
	}
	return 0, err
}

func (h *SparseHessian) refactor(a *sparse.SymCSC) error {
	if h.Chol == nil {
		c, err := h.Sym.Factor(a)
		if err != nil {
			return err
		}
		h.Chol = c
		return nil
	}
	return h.Chol.Refactor(a)
}

// Solve sets dst = (H + τI)⁻¹b.
func (h *SparseHessian) Solve(dst, b []float64) error {
	if len(h.work) != len(b) {
		h.work = make([]float64, len(b))
	}
	h.Chol.Solve(dst, b, h.work)
	return nil
}

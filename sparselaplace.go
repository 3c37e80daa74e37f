// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh/internal/newton"
	"github.com/exactmh/exactmh/internal/precision"
	"github.com/exactmh/exactmh/sparse"
)

// SparseHessianer is an optional capability of an Energy (∇² of Σ_i U_i)
// or a Prior (∇² of −log p) whose Hessian is sparse. The pattern is
// the same at every θ. One whose pass over the data is long may also
// implement
//
//	SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error)
//
// polling stop (once per chunk of data) and returning an error once it
// reports true, so that a cancelled run or search stops within the pass
// (model.SparseGLM does).
type SparseHessianer interface {
	SparseHessian(theta []float64) (*sparse.SymCSC, error)
}

// stopSparseHessianer is a SparseHessianer whose pass over the data polls
// a stop function (model.SparseGLM's SparseHessianStop), returning an
// error once it reports true.
type stopSparseHessianer interface {
	SparseHessianStop(theta []float64, stop func() bool) (*sparse.SymCSC, error)
}

// SparseHessianOf returns h's SparseHessian at θ (h an energy's or a
// prior's), or ErrInterrupted once t's run is cancelled: before the call,
// and within a chunk of data inside it where h polls (a SparseHessianer
// with SparseHessianStop); another SparseHessianer is waited for
// (TestInterruptSparseHessian).
func (t *Target) SparseHessianOf(h SparseHessianer, theta []float64) (*sparse.SymCSC, error) {
	if t.interrupted() {
		return nil, errInterrupted
	}
	sh, ok := h.(stopSparseHessianer)
	if !ok || t.interrupt == nil {
		return h.SparseHessian(theta)
	}
	m, err := sh.SparseHessianStop(theta, t.interrupted)
	if err != nil && t.interrupted() {
		return nil, errInterrupted
	}
	return m, err
}

// sparseParts returns the energy's and the prior's sparse Hessians, or
// why the sparse Laplace approximation does not apply: the energy and
// the prior must implement SparseHessianer (a nil Prior, flat, does).
func sparseParts(t *Target) (SparseHessianer, SparseHessianer, string) {
	eh, ok := t.Energy().(SparseHessianer)
	if !ok {
		return nil, nil, fmt.Sprintf("energy %T does not implement SparseHessianer", t.Energy())
	}
	ph, ok := t.Prior().(SparseHessianer) // a nil Prior's flat one does
	if !ok {
		return nil, nil, fmt.Sprintf("prior %T does not implement SparseHessianer", t.Prior())
	}
	return eh, ph, ""
}

// SparseHessian returns the Hessian of the flat prior's −log p: the d×d
// zero matrix with no stored entry, d = len(θ).
func (flat) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	return &sparse.SymCSC{N: len(theta), ColPtr: make([]int, len(theta)+1), RowIdx: []int{}, Val: []float64{}}, nil
}

// sparseNewton is the Newton model (newtonModel) of a posterior whose
// Hessian is sparse: f and its gradient in one pass (Gradienter), then the
// energy's and the prior's SparseHessian, factored under the fill-reducing
// order analysed at the first point (precision.SparseHessian), in
// O(nnz(L)) where the dense model holds d×d matrices.
type sparseNewton struct {
	t      *Target
	eh, ph SparseHessianer
	best   *MAP
	gp     []float64
	sym    *sparse.Symbolic
	h      *sparse.SymCSC // the first Hessian, whose pattern every other must have
}

func (s *sparseNewton) point() *newtonPoint {
	d := s.t.Dim()
	return &newtonPoint{Point: newton.Point{X: make([]float64, d), G: make([]float64, d), Step: make([]float64, d), Hess: &precision.SparseHessian{}}}
}

// Eval sets f(θ) = −log π(θ) = βΣU_i(θ) − log p(θ), its gradient, the
// sparse Hessian and the Newton step at pt.X.
func (s *sparseNewton) Eval(pt *newtonPoint) error {
	t, theta := s.t, pt.X
	lp := t.LogPrior(theta)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return errOutside
	}
	clear(pt.G)
	u, err := t.TotalEnergyAndGradient(pt.G, theta)
	s.best.Passes++
	if err != nil {
		return err
	}
	if s.gp == nil {
		s.gp = make([]float64, len(theta))
	}
	clear(s.gp)
	if err := t.AddLogPriorGradient(s.gp, theta); err != nil {
		return err
	}
	for j, v := range s.gp {
		pt.G[j] -= v
	}
	pt.F = u - lp
	h, err := s.hessian(theta)
	if err != nil {
		return err
	}
	sh := pt.Hess.(*precision.SparseHessian)
	sh.H, sh.Sym = h, s.sym
	err = pt.direction()
	s.sym = sh.Sym
	return err
}

// Value returns f(θ), +Inf outside the prior's support.
func (s *sparseNewton) Value(theta []float64) (float64, error) {
	lp := s.t.LogPrior(theta)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return math.Inf(1), nil
	}
	s.best.Passes++
	u, err := s.t.TotalEnergy(theta)
	return u - lp, err
}

// hessian returns H(θ) = β·∇²ΣU_i + ∇²(−log p), on the union of the two
// patterns and the diagonal, checking the pattern stays the one seen
// first.
func (s *sparseNewton) hessian(theta []float64) (*sparse.SymCSC, error) {
	d := s.t.Dim()
	he, err := s.t.SparseHessianOf(s.eh, theta)
	s.best.Passes++
	if err != nil {
		return nil, fmt.Errorf("the energy's SparseHessian: %w", err)
	}
	if he == nil || he.N != d {
		return nil, fmt.Errorf("the energy's SparseHessian is %s, want %d×%d", dimString(he), d, d)
	}
	h, err := sparse.Add(s.t.Beta(), he, 0, identity(d))
	if err != nil {
		return nil, fmt.Errorf("the energy's SparseHessian: %w", err)
	}
	hp, err := s.t.SparseHessianOf(s.ph, theta)
	if err != nil {
		return nil, fmt.Errorf("the prior's SparseHessian: %w", err)
	}
	if hp == nil || hp.N != d {
		return nil, fmt.Errorf("the prior's SparseHessian is %s, want %d×%d", dimString(hp), d, d)
	}
	if h, err = sparse.Add(1, h, 1, hp); err != nil {
		return nil, fmt.Errorf("the prior's SparseHessian: %w", err)
	}
	if s.h == nil {
		s.h = h
	} else if !s.h.SamePattern(h) {
		return nil, fmt.Errorf("the sparse Hessian's pattern changed between θ values (%d entries, then %d): SparseHessianer must return the same pattern at every θ", s.h.NNZ(), h.NNZ())
	}
	return h, nil
}

// identity returns the d×d identity.
func identity(d int) *sparse.SymCSC {
	a := &sparse.SymCSC{N: d, ColPtr: make([]int, d+1), RowIdx: make([]int, d), Val: make([]float64, d)}
	for j := range d {
		a.ColPtr[j+1] = j + 1
		a.RowIdx[j] = j
		a.Val[j] = 1
	}
	return a
}

func dimString(a *sparse.SymCSC) string {
	if a == nil {
		return "nil"
	}
	return fmt.Sprintf("%d×%d", a.N, a.N)
}

// sparseGLMMinDim is the dimension from which FindLaplace takes the sparse
// path for an energy that is also a GLM: below it the dense approximation
// costs little (H is 8d² bytes, its factor microseconds to milliseconds)
// and gives the GLM control variates (ControlVariates), which need it.
// Other energies with sparse Hessians take the sparse path at any d: the
// dense path would differentiate their gradient numerically.
const sparseGLMMinDim = 200

// sparsePath reports whether FindLaplace and LaplaceAt take the sparse
// path for p: its energy and prior (unless flat) implement
// SparseHessianer, and the energy is not a GLM of fewer than
// sparseGLMMinDim parameters.
func sparsePath(p *Posterior) bool {
	if p == nil || p.Energy == nil || p.Validate() != nil {
		return false
	}
	t, err := NewTarget(p)
	if err != nil {
		return false
	}
	if _, _, why := sparseParts(t); why != "" {
		return false
	}
	_, isGLM := p.Energy.(GLM)
	return !isGLM || t.Dim() >= sparseGLMMinDim
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh/internal/fdiff"
	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/symm"
	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// Hessianer is an optional capability of an Energy: exact second
// derivatives, for FindMAP's Newton steps and the Laplace approximation
// (FindLaplace, Posterior.Hessian). A GLM needs none: its Hessian
// Σ_i f_i″(x_iᵀθ)·x_ix_iᵀ follows from the contract (Row, LossDerivs), and
// the Target builds it in one pass over the data. GaussianMean and
// GaussianMixture implement it; an energy with neither is differentiated
// numerically (see Posterior.Hessian).
type Hessianer interface {
	// AddHessian adds Σ_k w[k]·∇²U_{idx[k]}(θ) to h, a symmetric d×d
	// matrix stored row-major in d² entries of which only the upper
	// triangle, h[a·d + b] with a ≤ b, is read (the layout of
	// mat.NewSymDense(d, h)); entries below the diagonal may be left alone
	// or written. len(w) == len(idx).
	AddHessian(h, theta []float64, idx []int, w []float64)
}

// PriorHessianer is an optional capability of a Prior: the exact Hessian of
// its log density. Every ready-made prior implements it: Gaussian adds
// −1/SD_j² on the diagonal; Flat, Box, Ball and Laplace add nothing (the
// Laplace prior's second derivative is 0 away from its kinks and undefined
// on them). A prior with a gradient but without a Hessian is differentiated
// numerically.
type PriorHessianer interface {
	// AddLogPriorHessian adds ∇²log p(θ) to the upper triangle of h (d×d
	// row-major, as Hessianer), θ inside the support.
	AddLogPriorHessian(h, theta []float64)
}

// glmHessian is the Hessianer every GLM has: ∇²U_i(θ) = f_i″(x_iᵀθ)·x_ix_iᵀ.
type glmHessian struct{ g GLM }

func (a glmHessian) AddHessian(h, theta []float64, idx []int, w []float64) {
	acc := symm.RankAcc{H: h, D: len(theta)}
	rows := newRowCursor(a.g)
	for k, i := range idx {
		row := rows.row(i)
		_, f2 := a.g.LossDerivs(i, vec.Dot(row, theta))
		acc.Add(row, w[k]*f2)
	}
	acc.Flush()
}

// hessianer returns the energy's own Hessianer, the contract's for a GLM
// without one, or nil.
func (t *Target) hessianer() Hessianer {
	if h, ok := t.energy.(Hessianer); ok {
		return h
	}
	if g, ok := t.energy.(GLM); ok {
		return glmHessian{g}
	}
	return nil
}

// addFullHessian adds β·Σ_i∇²U_i(θ) over all data to the upper triangle of
// h. It costs N Hessian evaluations.
func (t *Target) addFullHessian(hs Hessianer, h, theta []float64) error {
	for lo := 0; lo < t.n; lo += chunk {
		if t.interrupted() {
			return errInterrupted
		}
		idx, w := t.block(lo)
		t.hessEvals += int64(len(idx))
		hs.AddHessian(h, theta, idx, w)
	}
	return fdiff.FiniteUpper(h, t.d, theta)
}

// newtonSweep returns βΣ_iU_i(θ) and adds β·Σ_i∇U_i(θ) to g and
// β·Σ_i∇²U_i(θ) to the upper triangle of h, and how many times it read the
// data: once for a GLM (x_iᵀθ, f_i, f_i′ and f_i″ from one read of x_i);
// otherwise the energy and gradient (one read with an EnergyGradienter,
// two without) and then the Hessian. hs is t.hessianer(), not nil.
func (t *Target) newtonSweep(hs Hessianer, h, g, theta []float64) (f float64, passes int, err error) {
	gl, ok := t.energy.(GLM)
	if _, own := t.energy.(Hessianer); !ok || own {
		passes = 2
		if _, fused := t.energy.(EnergyGradienter); !fused {
			passes = 3
		}
		if f, err = t.TotalEnergyAndGradient(g, theta); err != nil {
			return 0, passes, err
		}
		return f, passes, t.addFullHessian(hs, h, theta)
	}
	d := t.d
	// The blocks' partial sums: the data's energy, gradient and Hessian.
	nb := passBlocks(t.n, d*d+d)
	type part struct {
		sum  float64
		g, h []float64
		err  error
	}
	parts := make([]part, nb)
	forBlocks(nb, func(b int) {
		pt := &parts[b]
		idx, val := t.idxBuf[:], t.valBuf[:]
		pt.g, pt.h = g, h
		if nb > 1 {
			idx, val = make([]int, chunk), make([]float64, chunk)
			pt.g, pt.h = make([]float64, d), make([]float64, d*d)
		}
		lo, hi := blockRange(b, nb, t.n)
		pt.sum, pt.err = t.glmSweep(gl, pt.g, pt.h, theta, lo, hi, idx, val)
	})
	var sum float64
	for b := range parts {
		pt := &parts[b]
		if pt.err != nil {
			return 0, 1, pt.err
		}
		sum += pt.sum
		if nb > 1 {
			vec.Axpy(g, 1, pt.g)
			symm.AddUpper(h, pt.h, d)
		}
	}
	t.evals += int64(t.n)
	t.gradEvals += int64(t.n)
	t.hessEvals += int64(t.n)
	if err := finiteGradient(g, theta); err != nil {
		return 0, 1, err
	}
	return t.beta * sum, 1, fdiff.FiniteUpper(h, d, theta)
}

// cvSums reports whether newtonSweep's sums, with t's energy, are bit for
// bit those controlVariates accumulates at the same θ: the energy is a GLM
// without its own Hessian (the sweep is then glmSweep, in the blocks of
// passBlocks(N, d² + d) that controlVariates uses, four rows to a rank
// update from each block's start, partial sums added in block order), its
// rows are float64 slices (a rowConverter's rowDot, controlVariates' ẑ_i,
// may round differently from dot on the converted row, the sweep's), and
// β = 1 (the sweep adds β·f_i′ and β·f_i″, which are f_i′ and f_i″ only
// then).
func (t *Target) cvSums() bool {
	gl, ok := t.energy.(GLM)
	if !ok || t.beta != 1 {
		return false
	}
	if _, own := gl.(Hessianer); own {
		return false
	}
	return rowConverterOf(gl) == nil
}

// glmSweep is newtonSweep of a GLM over data lo … hi−1: it returns
// Σ_iU_i(θ) (untempered) and adds β·Σ_i∇U_i(θ) to g and β·Σ_i∇²U_i(θ) to
// the upper triangle of h, with idx and val (chunk long) as scratch. It
// reads only the Target's β and N, so blocks run concurrently.
func (t *Target) glmSweep(gl GLM, g, h, theta []float64, lo, hi int, idx []int, val []float64) (float64, error) {
	var sum float64
	acc := symm.RankAcc{H: h, D: t.d}
	rows := newRowCursor(gl)
	// The logistic loss and its derivatives from one exponential, bit for
	// bit as Loss and LossDerivs, for a DenseGLM with float64 rows that
	// declares the logistic loss (denseLogistic).
	fused, ok := denseLogistic(gl)
	if ok && fused.X == nil {
		ok = false
	}
	var zs, f1s, f2s []float64
	if ok {
		zs, f1s, f2s = make([]float64, chunk), make([]float64, chunk), make([]float64, chunk)
	}
	sp := memRows(gl).pass(t.d, lo, hi)
	defer sp.End()
	for start := lo; start < hi; start += chunk {
		if t.interrupted() {
			return 0, errInterrupted
		}
		sp.At(start)
		m := min(chunk, hi-start)
		idx, val := idx[:m], val[:m]
		if ok {
			// In three loops, so that the exponentials and logarithms of
			// consecutive data overlap (in one loop each datum's waits on
			// its dot product and feeds its rank update); every value and
			// every sum is the one loop's, in the same order.
			for k := range idx {
				idx[k] = start + k
				zs[k] = vec.Dot(fused.X[(start+k)*t.d:(start+k+1)*t.d], theta)
			}
			for k := range idx {
				val[k], f1s[k], f2s[k] = logit.LossAndDerivs(fused.Y[start+k], zs[k])
			}
			for k := range idx {
				row := fused.X[(start+k)*t.d : (start+k+1)*t.d]
				vec.Axpy(g, t.beta*f1s[k], row[:t.d])
				acc.Add(row, t.beta*f2s[k])
			}
		} else {
			for k := range idx {
				i := start + k
				idx[k] = i
				row := rows.row(i)
				z := vec.Dot(row, theta)
				val[k] = gl.Loss(i, z)
				f1, f2 := gl.LossDerivs(i, z)
				vec.Axpy(g, t.beta*f1, row[:t.d])
				acc.Add(row, t.beta*f2)
			}
		}
		acc.Flush()
		s, err := sumEnergies(val, idx, theta)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum, nil
}

// addDataHessian adds β·Σ_i∇²U_i(θ) to the upper triangle of h, exactly
// when the energy has a Hessian (Hessianer or GLM), else by central
// differences of the full gradient (2d gradient passes). It returns whether
// it was exact and how many times it read the data.
func (t *Target) addDataHessian(h, theta []float64) (exact bool, passes int, err error) {
	if hs := t.hessianer(); hs != nil {
		return true, 1, t.addFullHessian(hs, h, theta)
	}
	if t.grad == nil {
		return false, 0, t.requireGradient()
	}
	err = fdiff.Jacobian(h, theta, func(g, x []float64) error {
		clear(g)
		passes++
		return t.addFullGradient(g, x)
	})
	return false, passes, err
}

// addNegLogPriorHessian subtracts ∇²log p(θ) from the upper triangle of h:
// exactly for a PriorHessianer, else by central differences of the prior's
// gradient (no data are read). It returns whether it was exact.
func (t *Target) addNegLogPriorHessian(h, theta []float64) (exact bool, err error) {
	d := t.d
	ph := make([]float64, d*d)
	if p, ok := t.prior.(PriorHessianer); ok {
		p.AddLogPriorHessian(ph, theta)
		exact = true
	} else {
		if t.pgrad == nil {
			return false, t.requireGradient()
		}
		err := fdiff.Jacobian(ph, theta, func(g, x []float64) error {
			clear(g)
			if math.IsInf(t.prior.LogPrior(x), -1) {
				return fmt.Errorf("exactmh: θ = %v, a central-difference point for the prior's Hessian, is outside the prior's support", x)
			}
			t.pgrad.AddLogPriorGradient(g, x)
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	for a := range d {
		for b := a; b < d; b++ {
			h[a*d+b] -= ph[a*d+b]
		}
	}
	return exact, fdiff.FiniteUpper(h, d, theta)
}

// negLogPosteriorHessian returns the upper triangle of the Hessian of
// −log π = βΣU_i − log p at θ, whether every part of it was exact, and how
// many times it read the data.
func (t *Target) negLogPosteriorHessian(theta []float64) (h []float64, exact bool, passes int, err error) {
	if math.IsInf(t.LogPrior(theta), -1) {
		return nil, false, 0, fmt.Errorf("exactmh: θ = %v is outside the prior's support", theta)
	}
	h = make([]float64, t.d*t.d)
	exact, passes, err = t.addDataHessian(h, theta)
	if err != nil {
		return nil, false, passes, err
	}
	pexact, err := t.addNegLogPriorHessian(h, theta)
	if err != nil {
		return nil, false, passes, err
	}
	return h, exact && pexact, passes, nil
}

// Hessian returns the Hessian of the negative log posterior at θ,
//
//	H(θ) = β·Σ_i∇²U_i(θ) − ∇²log prior(θ),
//
// the precision of the Laplace approximation when θ is the MAP. The data
// term is exact for an energy that implements Hessianer (GaussianMean,
// GaussianMixture) or GLM (LogisticRegression, StudentTRegression, NewGLM's
// energies, a user's GLM: β·Σ_i f_i″(x_iᵀθ)·x_ix_iᵀ in one pass over the
// data, O(N·d²)); otherwise it is the symmetrised central difference of the
// full gradient, with step ε^{1/3}·max(1, |θ_j|) in coordinate j (ε the
// float64 epsilon; the step balances the O(h²) truncation error against the
// O(ε/h) rounding of the gradient), at the cost of 2d gradient passes.
// The prior's part is exact for a PriorHessianer (every ready-made prior:
// diag(1/SD²) for Gaussian, 0 for Flat, Box, Ball and Laplace), else by
// central differences of its gradient. It returns an error wrapping
// ErrNoGradient if a numerical Hessian is needed and there is no gradient,
// and an error for a θ of the wrong length, outside the prior's support,
// or where an entry is not finite.
func (p *Posterior) Hessian(theta []float64) (h *mat.SymDense, err error) {
	err = guard("Posterior.Hessian", func() (err error) {
		h, err = p.hessian(theta)
		return err
	})
	return h, err
}

// hessian is Hessian without its guard.
func (p *Posterior) hessian(theta []float64) (*mat.SymDense, error) {
	t, err := p.targetAt("Hessian", theta)
	if err != nil {
		return nil, err
	}
	h, _, _, err := t.negLogPosteriorHessian(theta)
	if err != nil {
		return nil, within("exactmh: Hessian", err)
	}
	return mat.NewSymDense(t.d, h), nil
}

// targetAt validates p and returns a Target for evaluations at θ, checking
// θ's length; who names the caller in errors.
func (p *Posterior) targetAt(who string, theta []float64) (*Target, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	if len(theta) != t.d {
		return nil, fmt.Errorf("exactmh: %s: len(θ) = %d, want %d", who, len(theta), t.d)
	}
	return t, nil
}

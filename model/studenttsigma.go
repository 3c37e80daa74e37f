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

// StudentTScaleRegression is robust linear regression with Student-t
// noise of ν degrees of freedom and the scale σ unknown (brms's
// student() with ν fixed), in θ = (β, log σ) of dimension d + 1:
//
//	U_i(θ) = s + (ν+1)/2 · log(1 + r_i²e^{−2s}/ν),  r_i = y_i − x_iᵀβ, s = log σ,
//
// its gradient ∂U_i/∂β = −w_i r_i e^{−2s}·x_i and ∂U_i/∂s = 1 − w_i r_i²e^{−2s},
// w_i = (ν+1)/(ν + r_i²e^{−2s}). σ enters outside the linear predictor, so
// this is not a GLM in θ: the automatic default pilots the full-batch
// kernels on it (NUTS, MH-CN). The prior on σ is WithScale's
// (TestStudentTScaleMoments, TestStudentTScaleSBC). With random effects
// (NewStudentTMultilevel) x_i is a row of the multilevel model's sparse
// rows and x_iᵀβ its linear predictor, offset included.
type StudentTScaleRegression struct {
	x, y []float64 // x: N×d row-major (flat); nil with rows
	rows multilevel.SparseRowGLM
	// addRow adds a·x_i to grad without a buffer (SparseGLM's, in
	// memory: no allocation on the step path); nil: rows.SparseRow.
	addRow func(grad []float64, a float64, i int)
	d      int
	nu     float64

	// mutantNu, a mutant of the kit tests, weighs the log term by ν/2
	// instead of (ν+1)/2.
	mutantNu bool
	// mutantN, a mutant of the kit tests, counts the s = log σ term of
	// U_i twice (2N·log σ in the energy instead of N·log σ).
	mutantN bool
}

// NewStudentTScaleRegression returns the energy of x (row-major, N×d),
// responses y and ν > 0 degrees of freedom. The slices are kept.
func NewStudentTScaleRegression(x, y []float64, d int, nu float64) (*StudentTScaleRegression, error) {
	if _, err := NewStudentTRegression(x, y, d, nu); err != nil { // the same checks
		return nil, err
	}
	return &StudentTScaleRegression{x: x, y: y, d: d, nu: nu}, nil
}

// Len returns the number of data.
func (e *StudentTScaleRegression) Len() int { return len(e.y) }

// Dim returns d + 1: the coefficients and log σ.
func (e *StudentTScaleRegression) Dim() int { return e.d + 1 }

// Row returns x_i (not a copy); nil with random effects, whose rows are
// sparse.
func (e *StudentTScaleRegression) Row(i int) []float64 {
	if e.rows != nil {
		return nil
	}
	return e.x[i*e.d : (i+1)*e.d]
}

// u returns U_i at residual r and s = log σ (c = e^{−2s}).
func (e *StudentTScaleRegression) u(r, s, c float64) float64 {
	return e.sCount()*s + 0.5*e.nu1()*math.Log1p(r*r*c/e.nu)
}

// sCount is the coefficient of s in U_i: 1 (2 in the mutant).
func (e *StudentTScaleRegression) sCount() float64 {
	if e.mutantN {
		return 2
	}
	return 1
}

// SparseRow appends the columns and values of x_i to cols and vals and
// returns them: the multilevel model's sparse row, or the dense row's
// every column (the automatic default's cost of a datum reads it).
func (e *StudentTScaleRegression) SparseRow(i int, cols []int32, vals []float64) ([]int32, []float64) {
	if e.rows != nil {
		return e.rows.SparseRow(i, cols, vals)
	}
	for j, v := range e.Row(i) {
		cols, vals = append(cols, int32(j)), append(vals, v)
	}
	return cols, vals
}

// eta returns x_iᵀβ and x_iᵀβ′.
func (e *StudentTScaleRegression) eta(i int, theta, thetaNew []float64) (float64, float64) {
	if e.rows != nil {
		return e.rows.LinearPredictors(i, theta[:e.d], thetaNew[:e.d])
	}
	return vec.Dot2(e.Row(i), theta[:e.d], thetaNew[:e.d])
}

// nu1 is ν + 1 (ν in the mutant).
func (e *StudentTScaleRegression) nu1() float64 {
	if e.mutantNu {
		return e.nu
	}
	return e.nu + 1
}

// Energies sets dst[k] = U_i(θ) for i = idx[k].
func (e *StudentTScaleRegression) Energies(dst, theta []float64, idx []int) {
	s := theta[e.d]
	c := math.Exp(-2 * s)
	for k, i := range idx {
		z, _ := e.eta(i, theta, theta)
		dst[k] = e.u(e.y[i]-z, s, c)
	}
}

// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ′), reading x_i once.
func (e *StudentTScaleRegression) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	s, sn := theta[e.d], thetaNew[e.d]
	c, cn := math.Exp(-2*s), math.Exp(-2*sn)
	for k, i := range idx {
		z, zn := e.eta(i, theta, thetaNew)
		dst[k] = e.u(e.y[i]-z, s, c) - e.u(e.y[i]-zn, sn, cn)
	}
}

// EnergiesAndGradient sets dst[k] = U_i(θ) (dst nil: not) and adds
// w[k]·∇U_i(θ) to grad.
func (e *StudentTScaleRegression) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	d := e.d
	s := theta[d]
	c := math.Exp(-2 * s)
	var cols []int32
	var vals []float64
	for k, i := range idx {
		z, _ := e.eta(i, theta, theta)
		r := e.y[i] - z
		if dst != nil {
			dst[k] = e.u(r, s, c)
		}
		wi := e.nu1() / (e.nu + r*r*c)
		gz := -w[k] * wi * r * c
		if e.addRow != nil {
			e.addRow(grad, gz, i)
		} else if e.rows != nil {
			cols, vals = e.rows.SparseRow(i, cols[:0], vals[:0])
			for q, col := range cols {
				grad[col] += gz * vals[q]
			}
		} else {
			vec.Axpy(grad[:d], gz, e.Row(i))
		}
		grad[d] += w[k] * (e.sCount() - wi*r*r*c)
	}
}

// AddGradient adds Σ_k w[k]·∇U_i(θ) to grad.
func (e *StudentTScaleRegression) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.EnergiesAndGradient(nil, grad, theta, idx, w)
}

// FullBatchReason is multilevel.FullBatchEnergy's: with random effects
// (NewStudentTMultilevel) and D > 256 the automatic default samples with
// full-batch NUTS, GroupGibbs having no sweep for σ; "" for the flat
// model and a small multilevel one, whose automatic default pilots the
// full-batch kernels about the Laplace approximation.
func (e *StudentTScaleRegression) FullBatchReason() string {
	if e.rows == nil || e.Dim() <= fullBatchDim {
		return ""
	}
	return fmt.Sprintf("a Student-t multilevel model (N = %d, D = %d, ν = %v): its scale σ enters every datum outside the linear predictor, so GroupGibbs has no sweep for it and the minibatch kernels no bound; full-batch NUTS, exact", len(e.y), e.Dim(), e.nu)
}

// NewStudentTMultilevel returns the posterior of the Student-t multilevel
// model m with ν > 0 degrees of freedom and σ unknown (brms's student()
// with random effects and ν fixed; m.Family ignored, m.Offset added to
// the linear predictor, m.Weights must be nil) with the prior sigma on σ,
// the Jacobian of log σ included (WithScale): θ is NewMultilevel's
// followed by log σ, named "log_sigma", the energy a
// StudentTScaleRegression on the multilevel sparse rows. It implements
// exactmh.EnergyDiffer, EnergyGradienter and Gradienter; the automatic
// default samples it with the full-batch kernels (it is not a
// SparseRowGLM, so GroupGibbs does not take it): NUTS without pilots
// above D = 256 (multilevel.FullBatchEnergy), the flat path's pilots
// about the Laplace approximation below (TestStudentTMultilevelMoments,
// TestStudentTMultilevelSBC).
func NewStudentTMultilevel(m *Multilevel, nu float64, sigma ScalePrior) (*exactmh.Posterior, error) {
	if m == nil {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: nil model")
	}
	if m.Weights != nil {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: Weights set, want nil")
	}
	if !(nu > 0) || math.IsInf(nu, 0) {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: ν = %v, want finite > 0", nu)
	}
	if err := sigma.check(); err != nil {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: σ's prior: %w", err)
	}
	mc := *m
	mc.Family = GaussianFamily{Sigma: 1} // the rows only
	p, err := NewMultilevel(&mc)
	if err != nil {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: %w", err)
	}
	rows, ok := p.Energy.(multilevel.SparseRowGLM)
	if !ok {
		return nil, fmt.Errorf("model: NewStudentTMultilevel: energy %T, want a SparseRowGLM", p.Energy)
	}
	e := &StudentTScaleRegression{rows: rows, y: m.Y, d: rows.Dim(), nu: nu}
	if ra, ok := rows.(interface{ addRow([]float64, float64, int) }); ok {
		e.addRow = ra.addRow
	}
	return &exactmh.Posterior{Energy: e, Prior: &WithScale{Base: p.Prior, Scale: sigma},
		Names: append(p.Names, "log_sigma")}, nil
}

// String names the model.
func (e *StudentTScaleRegression) String() string {
	return fmt.Sprintf("StudentTScaleRegression(ν = %v, σ unknown)", e.nu)
}

// Compile-time checks.
var (
	_ exactmh.EnergyDiffer       = (*StudentTScaleRegression)(nil)
	_ exactmh.EnergyGradienter   = (*StudentTScaleRegression)(nil)
	_ exactmh.Gradienter         = (*StudentTScaleRegression)(nil)
	_ multilevel.FullBatchEnergy = (*StudentTScaleRegression)(nil)
)

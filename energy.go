// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/stream"
)

// Energy is a target factorised over N data: π(θ) ∝ prior(θ)·exp(−Σ_i U_i(θ)),
// where U_i(θ) = −log p(x_i | θ) is the energy of datum i.
//
// Energy is batch-oriented: a kernel asks for the energies of a slice of data
// at one θ and receives them in a slice it owns, so an implementation can keep
// its data in contiguous row-major storage and loop over it without calls per
// datum. Implementations must be safe for concurrent use by several chains
// (read-only after construction) and must not retain dst, theta or idx.
type Energy interface {
	// Len returns N, the number of data.
	Len() int
	// Dim returns d, the dimension of θ.
	Dim() int
	// Energies sets dst[k] = U_{idx[k]}(θ) for every k. len(dst) == len(idx).
	Energies(dst, theta []float64, idx []int)
}

// SufficientStatistics is an optional method of an Energy that holds
// sufficient statistics of its data instead of the data (a Gaussian
// linear model's XᵀX, Xᵀy and residual sum of squares,
// model.GaussianRegression): its one term (Len is 1) is the whole
// likelihood and costs O(d²) whatever the number of observations, so a
// full-batch kernel is exact and reads no datum, and Choose takes NUTS on
// it without pilots.
type SufficientStatistics interface {
	// Observations returns the number of data the statistics summarise.
	Observations() int
}

// EnergyDiffer is an optional fast path of an Energy: it computes energy
// differences reading each datum once (a GLM reads x_i once for both dot
// products). Kernels use it when the Energy implements it.
type EnergyDiffer interface {
	// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ') for i = idx[k]: the
	// log-likelihood ratio of datum i for the move θ → θ'.
	EnergyDiffs(dst, theta, thetaNew []float64, idx []int)
}

// Gradienter is an optional capability of an Energy, needed by gradient-based
// kernels.
type Gradienter interface {
	// AddGradient adds Σ_k w[k]·∇U_{idx[k]}(θ) to grad. len(w) == len(idx).
	AddGradient(grad, theta []float64, idx []int, w []float64)
}

// EnergyGradienter is an optional fast path of a Gradienter: energies and
// gradient in one read of the data, which the full-batch gradient kernels
// (MALA, HMC) need at every proposal.
type EnergyGradienter interface {
	// EnergiesAndGradient sets dst[k] = U_{idx[k]}(θ) and adds
	// Σ_k w[k]·∇U_{idx[k]}(θ) to grad.
	EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64)
}

// rowStore is the rows (at most one of rows, rows32 non-nil) and
// responses of a DenseGLM, for the steps that prefetch
// the rows of the data they draw (prefetch) and only read them.
type rowStore struct {
	rows   []float64
	rows32 []float32
	resp   []float64
}

// memRows returns the rows and responses of a DenseGLM, through the
// control-variate rewrite to the GLM it wraps, and an empty rowStore for
// any other energy.
func memRows(e Energy) rowStore {
	if cv, ok := e.(*cvEnergy); ok { // the control-variate rewrite reads its GLM's rows
		return memRows(cv.g)
	}
	if r, ok := denseRows(e); ok {
		return rowStore{rows: r.X, rows32: r.X32, resp: r.Y}
	}
	return rowStore{}
}

// pass returns the streaming advice (package stream) of a pass over data
// lo … hi−1 of the store, d columns a row: read-ahead and drop-behind over
// its rows and responses where they lie in a registered file mapping (a
// data.Store's), nothing otherwise.
func (r rowStore) pass(d, lo, hi int) stream.Pass {
	return stream.NewPass(lo, hi, stream.Rows(r.rows, d), stream.Rows(r.rows32, d), stream.Rows(r.resp, 1))
}

// randomReads is stream.RandomReads over data lo … hi−1 of the store, for
// a phase that reads a scattered subsample of them (newtonPresearch).
func (r rowStore) randomReads(d, lo, hi int) (done func()) {
	return stream.RandomReads(lo, hi, stream.Rows(r.rows, d), stream.Rows(r.rows32, d), stream.Rows(r.resp, 1))
}

// prefetch is prefetch.Data over the rows idx (d columns) of the store,
// 0 for an empty one.
func (r rowStore) prefetch(d int, idx []int) float64 {
	switch {
	case r.rows != nil:
		return prefetch.Data(r.rows, d, r.resp, idx)
	case r.rows32 != nil:
		return prefetch.Data(r.rows32, d, r.resp, idx)
	}
	return 0
}

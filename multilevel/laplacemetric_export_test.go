// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/sparse"
)

// Metric mutants of LaplaceNUTS (laplaceMetric's mutant field).
const (
	MetricMutantNone              = int(mutantNone)
	MetricMutantMomentumTranspose = int(mutantMomentumTranspose)
)

// LaplaceNUTS returns NUTSLaplace's kernel for p at centre with the log
// scales in H if tauInL, else diagonal, made wrong as mutant says.
func LaplaceNUTS(p *exactmh.Posterior, centre []float64, scale float64, tauInL bool, mutant int) (exactmh.NUTS, error) {
	lm, err := laplaceMetricOf(p, centre, tauInL)
	if err != nil {
		return exactmh.NUTS{}, err
	}
	lm.mutant = metricMutant(mutant)
	m, err := exactmh.NewMetric(lm)
	if err != nil {
		return exactmh.NUTS{}, err
	}
	return exactmh.NUTS{Scale: scale, NonCentred: true, Metric: m}, nil
}

// LaplaceMetricDense returns the dense H of the Laplace metric built from
// the lower-triangular factor entries of a random sparse SPD matrix of
// order n, and the metric's operations on it, for checking against dense
// algebra.
func LaplaceMetricDense(n int, seed uint64) (h [][]float64, ops exactmh.MetricOps, err error) {
	rng := rand.New(rand.NewPCG(seed, 0))
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
	}
	// A sparse B with a few entries per row; H = BᵀB + I.
	b := make([][]float64, n)
	for i := range b {
		b[i] = make([]float64, n)
		for range 3 {
			b[i][rng.IntN(n)] = rng.NormFloat64()
		}
	}
	for i := range n {
		for j := range n {
			var s float64
			for k := range n {
				s += b[k][i] * b[k][j]
			}
			if i == j {
				s++
			}
			a[i][j] = s
		}
	}
	ch, err := factorDense(a)
	if err != nil {
		return nil, nil, err
	}
	return a, newLaplaceMetric(ch), nil
}

// factorDense factors the nonzero entries of the symmetric a.
func factorDense(a [][]float64) (*sparse.Cholesky, error) {
	tr := sparse.NewTriplet(len(a))
	for i := range a {
		for j := 0; j <= i; j++ {
			if a[i][j] != 0 {
				tr.Add(i, j, a[i][j])
			}
		}
	}
	s, err := tr.SymCSC()
	if err != nil {
		return nil, err
	}
	return sparse.Factorize(s)
}

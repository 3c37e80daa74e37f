// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/testgen"
)

// prefetchEnergy is a GLM with its own prefetching gather loops.
type prefetchEnergy interface {
	Energy
	EnergyDiffer
}

// namedPrefetchEnergy names one of prefetchFixture's energies.
type namedPrefetchEnergy struct {
	name string
	e    prefetchEnergy
}

// prefetchFixture draws from rng n standard normal rows of d features (the
// float32 rows rounded first, so that both precisions hold the same
// numbers) and n binary responses, and returns every GLM with its own
// loops over them (logistic and a Gaussian family, float64 and float32
// rows) and two parameter points theta and next drawn from N(0, 0.1²).
func prefetchFixture(tb testing.TB, rng *rand.Rand, n, d int) (es []namedPrefetchEnergy, theta, next []float64) {
	tb.Helper()
	x, x32, y := testgen.BinaryRows(rng, n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		tb.Fatal(err)
	}
	lr32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		tb.Fatal(err)
	}
	glm, err := NewGLM(x, y, d, GaussianFamily{Sigma: 1})
	if err != nil {
		tb.Fatal(err)
	}
	glm32, err := NewGLM32(x32, y, d, GaussianFamily{Sigma: 1})
	if err != nil {
		tb.Fatal(err)
	}
	theta, next = make([]float64, d), make([]float64, d)
	for j := range theta {
		theta[j], next[j] = 0.1*rng.NormFloat64(), 0.1*rng.NormFloat64()
	}
	return []namedPrefetchEnergy{{"logistic", lr}, {"logistic32", lr32}, {"glm", glm}, {"glm32", glm32}}, theta, next
}

// The prefetching gathers (several blocks of rows per call at large d) give
// exactly what one call per datum gives, for every GLM with its own loops.
func TestPrefetchedGathersMatchOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{3, 50, 1000} {
		n := 300
		es, theta, next := prefetchFixture(t, rng, n, d)
		idx := make([]int, 257)
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		for _, ne := range es {
			name, e := ne.name, ne.e
			got, gotD := make([]float64, len(idx)), make([]float64, len(idx))
			e.Energies(got, theta, idx)
			e.EnergyDiffs(gotD, theta, next, idx)
			var one [1]float64
			for k, i := range idx {
				e.Energies(one[:], theta, []int{i})
				if one[0] != got[k] {
					t.Fatalf("%s d=%d: Energies[%d] = %v in a batch, %v alone", name, d, k, got[k], one[0])
				}
				e.EnergyDiffs(one[:], theta, next, []int{i})
				if one[0] != gotD[k] {
					t.Fatalf("%s d=%d: EnergyDiffs[%d] = %v in a batch, %v alone", name, d, k, gotD[k], one[0])
				}
			}
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// The root package's test helpers these tests share (its tunamh_test.go,
// sampler_test.go, contracts_test.go, tfmh_test.go), so that the
// benchmarks measure the same problems.

// hiddenGradient hides an energy's gradient (and every other method but
// Energy's).
type hiddenGradient struct{ exactmh.Energy }

// statementOne is the energy of the TunaMH paper's App. C: U_i(θ) = −θx_i
// with x_i = ±a, half each; it has no gradient.
type statementOne struct{ x []float64 }

func (e *statementOne) Len() int { return len(e.x) }
func (e *statementOne) Dim() int { return 1 }
func (e *statementOne) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = -theta[0] * e.x[i]
	}
}

// tallLogistic is the root package's benchmark problem: a logistic
// regression of N = 100,000 and d = 50 on a ball of radius 1, β = 10⁻³.
func tallLogistic(b *testing.B) *exactmh.Posterior {
	const n, d = 100000, 50
	rng := rand.New(rand.NewPCG(8, 9))
	x := make([]float64, n*d)
	y := make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * 0.3
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		b.Fatal(err)
	}
	ball, err := model.NewBall(d, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	return &exactmh.Posterior{Energy: e, Prior: ball, Beta: 1e-3}
}

// benchmarkKernel times k's steps from the origin after 200 to reach a
// steady state, reporting evaluations, batch and acceptance per step.
func benchmarkKernel(b *testing.B, p *exactmh.Posterior, k exactmh.Kernel) {
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := k.Start(tgt, make([]float64, p.Dim()))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		if _, err := ch.Step(rng); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	e0 := tgt.Evals()
	var batch, acc float64
	for b.Loop() {
		info, err := ch.Step(rng)
		if err != nil {
			b.Fatal(err)
		}
		batch += float64(info.Batch)
		if info.Accepted {
			acc++
		}
	}
	b.ReportMetric(float64(tgt.Evals()-e0)/float64(b.N), "evals/step")
	b.ReportMetric(batch/float64(b.N), "batch/step")
	if batch > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/batch, "ns/datum")
	}
	b.ReportMetric(acc/float64(b.N), "accept")
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// BenchmarkStepAcrossN measures the time of a minibatch step at a fixed
// expected batch as N grows: logistic regression, d = 10, a unit-ball
// prior and β·N held at 100, so the bounds' sum βC — and the batch — stay
// the same while the data (and the per-datum tables) grow from 10⁴ to 10⁷
// rows (80 KB … 800 MB of x_i); SMH-2 starts at the MAP it expands about. Its ns/step against N is the cost of cache
// and TLB misses per drawn datum: the row, the alias column, the bound
// constant. -short stops at N = 10⁶.
//
//	go test -run '^$' -bench StepAcrossN -benchtime 20000x
func BenchmarkStepAcrossN(b *testing.B) {
	const d = 10
	sizes := []int{10_000, 100_000, 1_000_000, 10_000_000}
	if testing.Short() {
		sizes = sizes[:3]
	}
	for _, n := range sizes {
		e := acrossNData(b, n, d)
		ball, err := model.NewBall(d, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		p := &exactmh.Posterior{Energy: e, Prior: ball, Beta: 100 / float64(n)}
		for _, k := range []exactmh.Kernel{
			exactmh.TunaMH{Scale: 0.05},
			exactmh.TFMH{Scale: 0.05},
			exactmh.PoissonMH{Scale: 0.05},
		} {
			b.Run(fmt.Sprintf("%s/N=%d", k.Name(), n), func(b *testing.B) {
				benchmarkKernel(b, p, k)
			})
		}
		// SMH-2 from the MAP it expands about (the same tempered posterior
		// at every N, so the same batch).
		b.Run(fmt.Sprintf("SMH-2/N=%d", n), func(b *testing.B) {
			m, err := exactmh.FindMAP(context.Background(), p, make([]float64, d), nil)
			if err != nil {
				b.Fatal(err)
			}
			benchmarkKernelAt(b, p, exactmh.SMH{Order: 2, Center: m.Theta, Scale: 0.05}, m.Theta)
		})
	}
}

// acrossNData is BenchmarkStepAcrossN's logistic regression of n rows of d
// features.
func acrossNData(b *testing.B, n, d int) *model.LogisticRegression {
	rng := rand.New(rand.NewPCG(7, uint64(n)))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range n {
		var z float64
		for j := range d {
			v := rng.NormFloat64() / 3
			x[i*d+j] = v
			z += v * 0.5
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkGatherAcrossN is BenchmarkStepAcrossN's plain loop: per
// iteration it draws 8 data uniformly (TFMH's mean batch there is 7.9)
// and computes their energy differences in one EnergyDiffs call, which
// prefetches their rows and labels together before reading any — the
// kernels' gather with nothing else of a step (no alias table, no bound
// constants, no proposal, prior or acceptance). Its growth from N = 10⁴
// to 10⁷ is what the memory system alone charges for 8 random rows;
// set against StepAcrossN's, it says how much of a kernel's growth is its
// own. -short stops at N = 10⁶.
//
//	go test -run '^$' -bench 'GatherAcrossN|StepAcrossN/TFMH' -benchtime 100000x
func BenchmarkGatherAcrossN(b *testing.B) {
	const d, batch = 10, 8
	sizes := []int{10_000, 100_000, 1_000_000, 10_000_000}
	if testing.Short() {
		sizes = sizes[:3]
	}
	for _, n := range sizes {
		e := acrossNData(b, n, d)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			theta, next := make([]float64, d), make([]float64, d)
			for j := range next {
				theta[j], next[j] = 0.1, 0.11
			}
			gatherLoop(b, e, n, theta, next, batch)
		})
	}
}

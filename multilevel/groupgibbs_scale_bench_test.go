//go:build unix

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// BenchmarkGroupGibbsAcrossG measures GroupGibbs's sweep as the number of
// groups G grows at a fixed amount of data per group (so a fixed amount of
// data per block update): a logistic random-intercept-and-slope model with
// an intercept and two fixed covariates, 100 data in every group (N =
// 100·G), τ = (0.5, 0.25), float32 rows, from MultilevelCenter's centre.
// A sweep updates every one of the G + 1 blocks (and the log scales and
// the location moves, O(d)), so its time is O(G); the step whose cost
// should be flat in G is one block update. An op is ⌈10⁴/G⌉ sweeps (about
// 10⁴ block updates at every G), and the cost of one update is reported
// as ns/block (wall)
// and cpu-ns/block (the process's CPU time, getrusage, which a loaded
// machine does not inflate), with the data read per block (data/block)
// and per sweep (data/sweep) and the CPU time per datum read
// (cpu-ns/datum). -short stops at G = 1,000.
//
//	go test -run '^$' -bench GroupGibbsAcrossG -benchtime 10x -count 6
func BenchmarkGroupGibbsAcrossG(b *testing.B) {
	sizes := []int{100, 1000, 10000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, groups := range sizes {
		post := acrossGModel(b, groups, 100)
		center, _, err := model.MultilevelCenter(context.Background(), post, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("G=%d", groups), func(b *testing.B) {
			tgt, err := exactmh.NewTarget(post)
			if err != nil {
				b.Fatal(err)
			}
			ch, err := multilevel.GroupGibbs{Center: center}.Start(tgt, center)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 { // leave the centre before timing
				if _, err := ch.Step(rng); err != nil {
					b.Fatal(err)
				}
			}
			// An op is about 10⁴ block updates at every G: ns/op is the
			// cost of the same work, and each op lasts well beyond the
			// resolution of the CPU clock.
			sweeps := max(1, 10000/groups)
			e0, cpu0 := tgt.Evals(), processCPU()
			for b.Loop() {
				for range sweeps {
					if _, err := ch.Step(rng); err != nil {
						b.Fatal(err)
					}
				}
			}
			blocks := float64(b.N * sweeps * (groups + 1))
			cpu := float64(processCPU() - cpu0)
			read := float64(tgt.Evals() - e0)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/blocks, "ns/block")
			b.ReportMetric(cpu/blocks, "cpu-ns/block")
			b.ReportMetric(cpu/read, "cpu-ns/datum")
			b.ReportMetric(read/blocks, "data/block")
			b.ReportMetric(read/float64(b.N*sweeps), "data/sweep")
		})
	}
}

// acrossGModel returns the posterior of BenchmarkGroupGibbsAcrossG's model
// with groups groups of per data each.
func acrossGModel(b *testing.B, groups, per int) *exactmh.Posterior {
	n := groups * per
	rng := rand.New(rand.NewPCG(uint64(groups), 7))
	m := &model.Multilevel{
		Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
		Fixed:   []model.Covariate{{Name: "x1", Values: make([]float64, n)}, {Name: "x2", Values: make([]float64, n)}},
		FixedSD: []float64{5, 5, 5},
		Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}},
		Float32: true,
	}
	m.Factors[0].Slopes = []model.Covariate{{Name: "x1", Values: m.Fixed[0].Values}}
	beta := []float64{-1, 0.5, -0.3}
	for g := range groups {
		u, v := 0.5*rng.NormFloat64(), 0.25*rng.NormFloat64()
		for k := range per {
			i := g*per + k
			x1, x2 := rng.NormFloat64(), rng.NormFloat64()
			m.Fixed[0].Values[i], m.Fixed[1].Values[i] = x1, x2
			m.Factors[0].Index[i] = int32(g)
			z := beta[0] + beta[1]*x1 + beta[2]*x2 + u + v*x1
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				m.Y[i] = 1
			}
		}
	}
	post, err := model.NewMultilevel(m)
	if err != nil {
		b.Fatal(err)
	}
	return post
}

// processCPU returns the process's user and system CPU time in ns
// (getrusage; 0 where it fails).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

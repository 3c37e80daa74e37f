// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// pgBenchModel is a Bernoulli logistic multilevel model shaped like the
// real suite's logistic sets: n rows, p standard-normal covariates
// besides the intercept, and factors of the given numbers of levels
// (crossed, each row's level uniform), effects of sd 0.8, intercept −0.3.
func pgBenchModel(n, p int, levels ...int) (*exactmh.Posterior, error) {
	rng := rand.New(rand.NewPCG(7, 8))
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true, FixedSD: make([]float64, p+1)}
	for k := range ml.FixedSD {
		ml.FixedSD[k] = 5
	}
	eta := make([]float64, n)
	for i := range eta {
		eta[i] = -0.3
	}
	for k := range p {
		x := model.Covariate{Name: fmt.Sprintf("x%d", k), Values: make([]float64, n)}
		for i := range n {
			x.Values[i] = rng.NormFloat64()
			eta[i] += 0.3 * x.Values[i]
		}
		ml.Fixed = append(ml.Fixed, x)
	}
	for f, g := range levels {
		u := make([]float64, g)
		for j := range u {
			u[j] = 0.8 * rng.NormFloat64()
		}
		fac := model.Factor{Name: fmt.Sprintf("f%d", f), Index: make([]int32, n), Tau: model.HalfNormal(1)}
		for i := range n {
			j := rng.IntN(g)
			fac.Index[i] = int32(j)
			eta[i] += u[j]
		}
		ml.Factors = append(ml.Factors, fac)
	}
	for i := range n {
		if rng.Float64() < 1/(1+math.Exp(-eta[i])) {
			ml.Y[i] = 1
		}
	}
	return model.NewMultilevel(ml)
}

// BenchmarkLogitDrawOmega: one drawOmega (the Pólya–Gamma draws and the
// refill of M = XᵀΩX and b) per op, at the Laplace-EM centre, on a
// contraception-like model (1,934 rows, 6 covariates, one factor of 60
// levels) and a verbagg-like one (7,584 rows, 6 covariates, crossed
// factors of 316 and 24 levels). Step: the whole sweep. cpu-ns/op is the
// process's user + system CPU per op (run pinned with GOMAXPROCS=1).
func BenchmarkLogitDrawOmega(b *testing.B) {
	for _, s := range []struct {
		name   string
		n, p   int
		levels []int
	}{
		{"contraception", 1934, 6, []int{60}},
		{"verbagg", 7584, 6, []int{316, 24}},
	} {
		post, err := pgBenchModel(s.n, s.p, s.levels...)
		if err != nil {
			b.Fatal(err)
		}
		centre, _, err := multilevel.Center(context.Background(), post)
		if err != nil {
			b.Fatal(err)
		}
		t, err := exactmh.NewTarget(post)
		if err != nil {
			b.Fatal(err)
		}
		ch, err := multilevel.GroupGibbs{Center: centre, Augment: true}.Start(t, centre)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s.name+"/drawOmega", func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			cpu := processCPU()
			for b.Loop() {
				multilevel.DrawOmegaSweeps(ch, rng, 1)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
		b.Run(s.name+"/Step", func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			cpu := processCPU()
			for b.Loop() {
				if _, err := ch.Step(rng); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchCases are the Hessian patterns of multilevel models: a random
// intercept (q = 1) or intercept and slope (q = 2) per group with p = 10
// fixed effects and one scale per random effect, and two crossed factors.
func benchCases() []struct {
	name string
	a    *SymCSC
} {
	rng := rand.New(rand.NewPCG(1, 1))
	var cs []struct {
		name string
		a    *SymCSC
	}
	for _, g := range []int{100, 1000, 10000} {
		for _, q := range []int{1, 2} {
			cs = append(cs, struct {
				name string
				a    *SymCSC
			}{fmt.Sprintf("arrow/G=%d/q=%d", g, q), arrow(rng, 10, g, q, q)})
		}
	}
	for _, g := range []int{100, 1000} {
		cs = append(cs, struct {
			name string
			a    *SymCSC
		}{fmt.Sprintf("crossed/G=%d+%d/pairs=%d", g, g/2, 4*g), crossed(rng, 10, g, g/2, 4*g)})
	}
	return cs
}

// BenchmarkMinDegree measures the ordering.
func BenchmarkMinDegree(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := MinDegree(c.a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFactor measures the numeric factorisation (Refactor: the cost
// of a Newton iteration) for the analysed pattern; nnzA and nnzL are the
// matrix's and its factor's entry counts.
func BenchmarkFactor(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			ch, err := Factorize(c.a)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := ch.Refactor(c.a); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.a.NNZ()), "nnzA")
			b.ReportMetric(float64(ch.Symbolic().FactorNNZ()), "nnzL")
		})
	}
}

// BenchmarkSolve measures a solve with H (two triangular solves) and a
// draw from N(0, H⁻¹) (one), the per-step cost of a sparse proposal.
func BenchmarkSolve(b *testing.B) {
	for _, c := range benchCases() {
		ch, err := Factorize(c.a)
		if err != nil {
			b.Fatal(err)
		}
		n := c.a.N
		x, w := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = 1
		}
		b.Run("H⁻¹b/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ch.Solve(x, x, w)
			}
			b.ReportMetric(float64(ch.Symbolic().FactorNNZ()), "nnzL")
		})
		b.Run("normal/"+c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, 2))
			b.ReportAllocs()
			for b.Loop() {
				ch.NormalInto(rng, x)
			}
		})
	}
}

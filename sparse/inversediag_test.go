// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"math/rand/v2"
	"testing"
)

// inverseDiagSearch is Takahashi's recurrence with each Z_ik found by a
// binary search of its column: the plain form of InverseDiag, whose sums
// InverseDiag's cursors must reproduce to the bit.
func inverseDiagSearch(c *Cholesky, dst []float64) {
	s := c.sym
	lp, li, lx := s.lp, c.li, c.lx
	z := make([]float64, len(lx))
	at := func(i, k int) float64 {
		if i < k {
			i, k = k, i
		}
		lo, hi := lp[k], lp[k+1]
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			switch r := li[m]; {
			case r == i:
				return z[m]
			case r < i:
				lo = m + 1
			default:
				hi = m
			}
		}
		panic("not on L's pattern")
	}
	for j := s.n - 1; j >= 0; j-- {
		ljj := lx[lp[j]]
		for q := lp[j] + 1; q < lp[j+1]; q++ {
			i := li[q]
			var sum float64
			for r := lp[j] + 1; r < lp[j+1]; r++ {
				sum += at(i, li[r]) * lx[r]
			}
			z[q] = -sum / ljj
		}
		var sum float64
		for r := lp[j] + 1; r < lp[j+1]; r++ {
			sum += z[r] * lx[r]
		}
		z[lp[j]] = (1/ljj - sum) / ljj
	}
	for k, v := range s.perm {
		dst[v] = z[lp[k]]
	}
}

// TestInverseDiagCursors: InverseDiag's cursors give exactly (bit for bit)
// the binary-searched recurrence's diagonal, on nested, crossed (whose
// factor ends in a dense block) and random patterns, so the Laplace-EM
// centre built on it is unchanged. A cursor that skipped an entry or read
// a neighbour's would differ in the last bits at least.
func TestInverseDiagCursors(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	cases := []*SymCSC{
		arrow(rng, 4, 30, 2, 2),
		arrow(rng, 1, 200, 1, 0),
		crossed(rng, 3, 20, 15, 60),
		crossed(rng, 2, 300, 120, 3000),
		crossed(rng, 1, 50, 400, 2000),
	}
	for _, den := range []float64{0.02, 0.1, 0.3} {
		a, _ := randomSPD(rng, 120, den)
		cases = append(cases, a)
	}
	for n, a := range cases {
		c, err := Factorize(a)
		if err != nil {
			t.Fatal(err)
		}
		got, want := make([]float64, a.N), make([]float64, a.N)
		c.InverseDiag(got)
		inverseDiagSearch(c, want)
		for i := range a.N {
			if got[i] != want[i] {
				t.Fatalf("case %d (n = %d, nnz(L) = %d): InverseDiag[%d] = %v, the searched recurrence %v", n, a.N, c.Symbolic().FactorNNZ(), i, got[i], want[i])
			}
		}
	}
}

// BenchmarkInverseDiagCrossed: a crossed design of 1,000 × 300 levels,
// whose factor ends in a dense block (InstEval's shape, smaller).
func BenchmarkInverseDiagCrossed(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := crossed(rng, 2, 1000, 300, 10000)
	c, err := Factorize(a)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, a.N)
	b.Run("cursors", func(b *testing.B) {
		for b.Loop() {
			c.InverseDiag(dst)
		}
	})
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			inverseDiagSearch(c, dst)
		}
	})
}

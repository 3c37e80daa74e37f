// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzCholesky builds a symmetric matrix from arbitrary bytes — the order
// from the first byte, then (row, column, value) triples, the diagonal
// shifted by the last byte — and checks that ordering, analysis and
// factorisation never panic, that a matrix the factorisation accepts is
// solved to a small residual, and that a rejected one is rejected with an
// error.
func FuzzCholesky(f *testing.F) {
	f.Add([]byte{5, 0, 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 2, 3, 0, 0, 0, 0, 0, 0, 0xe0, 0xbf, 10})
	f.Add([]byte{1})
	f.Add([]byte{0})
	f.Add([]byte{40, 3, 39, 1, 2, 3, 4, 5, 6, 7, 8, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		n := int(b[0] % 64)
		shift := float64(b[len(b)-1]) / 8
		tr := NewTriplet(n)
		rest := b[1:]
		for len(rest) >= 10 && n > 0 {
			i, j := int(rest[0])%n, int(rest[1])%n
			v := math.Float64frombits(binary.LittleEndian.Uint64(rest[2:10]))
			if math.IsNaN(v) || math.Abs(v) > 1e6 {
				v = float64(rest[2]) - 128
			}
			tr.Add(i, j, v)
			rest = rest[10:]
		}
		for i := range n {
			tr.Add(i, i, shift)
		}
		a, err := tr.SymCSC()
		if err != nil {
			t.Fatalf("triplet: %v", err)
		}
		c, err := Factorize(a)
		if err != nil {
			return // not positive definite: an error is the right answer
		}
		x := make([]float64, n)
		rhs := make([]float64, n)
		for i := range rhs {
			rhs[i] = float64(i%3) - 1
		}
		c.Solve(x, rhs, make([]float64, n))
		r := make([]float64, n)
		a.MulVec(r, x)
		var scale float64
		for _, v := range a.Val {
			scale = math.Max(scale, math.Abs(v))
		}
		var xn float64
		for _, v := range x {
			xn = math.Max(xn, math.Abs(v))
		}
		for i := range r {
			if d := math.Abs(r[i] - rhs[i]); d > 1e-6*(1+scale*xn) {
				// Ill-conditioned matrices legitimately lose digits; only a
				// well-conditioned one (small x) must solve accurately.
				if xn < 1e3 {
					t.Fatalf("residual[%d] = %v (|x|∞ = %v, max|a| = %v)", i, d, xn, scale)
				}
			}
		}
		if ld := c.LogDet(); math.IsNaN(ld) {
			t.Fatalf("LogDet is NaN")
		}
	})
}

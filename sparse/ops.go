// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"fmt"
	"math"
)

// Check reports the first way a is not a well-formed SymCSC: N < 0,
// ColPtr not of length N+1, not starting at 0 or not non-decreasing,
// RowIdx and Val not of length ColPtr[N], a row index above the diagonal,
// out of range or not strictly ascending within its column, or a value that
// is not finite. Every function of this package that takes a SymCSC checks
// it first, so a malformed matrix is an error and never an index panic.
func (a *SymCSC) Check() error {
	if a == nil {
		return fmt.Errorf("sparse: nil matrix")
	}
	if a.N < 0 {
		return fmt.Errorf("sparse: N = %d, want ≥ 0", a.N)
	}
	if len(a.ColPtr) != a.N+1 {
		return fmt.Errorf("sparse: len(ColPtr) = %d, want N+1 = %d", len(a.ColPtr), a.N+1)
	}
	if a.ColPtr[0] != 0 {
		return fmt.Errorf("sparse: ColPtr[0] = %d, want 0", a.ColPtr[0])
	}
	for j := range a.N {
		if a.ColPtr[j+1] < a.ColPtr[j] {
			return fmt.Errorf("sparse: ColPtr[%d] = %d < ColPtr[%d] = %d", j+1, a.ColPtr[j+1], j, a.ColPtr[j])
		}
	}
	nz := a.ColPtr[a.N]
	if len(a.RowIdx) != nz || len(a.Val) != nz {
		return fmt.Errorf("sparse: len(RowIdx) = %d and len(Val) = %d, want ColPtr[N] = %d", len(a.RowIdx), len(a.Val), nz)
	}
	for j := range a.N {
		prev := j - 1
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			i := a.RowIdx[p]
			if i < j || i >= a.N {
				return fmt.Errorf("sparse: column %d holds row %d, want a row in [%d, %d) (lower triangle)", j, i, j, a.N)
			}
			if i <= prev {
				return fmt.Errorf("sparse: column %d: row %d after row %d, want strictly ascending rows", j, i, prev)
			}
			prev = i
			if v := a.Val[p]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse: entry (%d, %d) = %v, want finite", i, j, v)
			}
		}
	}
	return nil
}

// NNZ returns the number of stored entries of the lower triangle.
func (a *SymCSC) NNZ() int { return a.ColPtr[a.N] }

// At returns entry (i, j) of the symmetric matrix, 0 outside the pattern;
// it costs a binary search of column min(i, j).
func (a *SymCSC) At(i, j int) float64 {
	if i < j {
		i, j = j, i
	}
	lo, hi := a.ColPtr[j], a.ColPtr[j+1]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch r := a.RowIdx[m]; {
		case r == i:
			return a.Val[m]
		case r < i:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0
}

// MulVec sets dst = A·x for the symmetric A, in O(nnz). dst and x must have
// length N and must not overlap.
func (a *SymCSC) MulVec(dst, x []float64) {
	clear(dst[:a.N])
	for j := range a.N {
		xj := x[j]
		var s float64
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			i, v := a.RowIdx[p], a.Val[p]
			if i == j {
				s += v * xj
				continue
			}
			dst[i] += v * xj
			s += v * x[i]
		}
		dst[j] += s
	}
}

// Quad returns (x − m)ᵀA(x − m) in O(nnz), without scratch memory: the
// diagonal entries once, each stored off-diagonal entry twice. x and m
// must have length N.
func (a *SymCSC) Quad(x, m []float64) float64 {
	var q float64
	for j := range a.N {
		vj := x[j] - m[j]
		var s float64
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			i := a.RowIdx[p]
			if i == j {
				s += a.Val[p] * vj
				continue
			}
			s += 2 * a.Val[p] * (x[i] - m[i])
		}
		q += vj * s
	}
	return q
}

// Clone returns a deep copy of a.
func (a *SymCSC) Clone() *SymCSC {
	return &SymCSC{
		N:      a.N,
		ColPtr: append([]int(nil), a.ColPtr...),
		RowIdx: append([]int(nil), a.RowIdx...),
		Val:    append([]float64(nil), a.Val...),
	}
}

// Scale multiplies every stored entry by alpha, in place.
func (a *SymCSC) Scale(alpha float64) {
	for p := range a.Val {
		a.Val[p] *= alpha
	}
}

// SamePattern reports whether a and b store the same entries.
func (a *SymCSC) SamePattern(b *SymCSC) bool {
	if a.N != b.N || len(a.RowIdx) != len(b.RowIdx) {
		return false
	}
	for j, p := range a.ColPtr {
		if b.ColPtr[j] != p {
			return false
		}
	}
	for p, i := range a.RowIdx {
		if b.RowIdx[p] != i {
			return false
		}
	}
	return true
}

// Add returns alpha·A + beta·B on the union of their patterns: an energy's
// Hessian and a prior's, whose patterns differ (the prior's is often the
// diagonal, or the fixed and random effects' variance blocks). A and B
// must be well formed (Check) and of the same order.
func Add(alpha float64, a *SymCSC, beta float64, b *SymCSC) (*SymCSC, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sparse: Add: first matrix: %w", err)
	}
	if err := b.Check(); err != nil {
		return nil, fmt.Errorf("sparse: Add: second matrix: %w", err)
	}
	if a.N != b.N {
		return nil, fmt.Errorf("sparse: Add: orders %d and %d differ", a.N, b.N)
	}
	n := a.N
	c := &SymCSC{N: n, ColPtr: make([]int, n+1)}
	nz := 0
	for j := range n {
		p, pe := a.ColPtr[j], a.ColPtr[j+1]
		q, qe := b.ColPtr[j], b.ColPtr[j+1]
		for p < pe || q < qe {
			switch {
			case q == qe || (p < pe && a.RowIdx[p] < b.RowIdx[q]):
				p++
			case p == pe || b.RowIdx[q] < a.RowIdx[p]:
				q++
			default:
				p++
				q++
			}
			nz++
		}
		c.ColPtr[j+1] = nz
	}
	c.RowIdx = make([]int, nz)
	c.Val = make([]float64, nz)
	k := 0
	for j := range n {
		p, pe := a.ColPtr[j], a.ColPtr[j+1]
		q, qe := b.ColPtr[j], b.ColPtr[j+1]
		for p < pe || q < qe {
			switch {
			case q == qe || (p < pe && a.RowIdx[p] < b.RowIdx[q]):
				c.RowIdx[k], c.Val[k] = a.RowIdx[p], alpha*a.Val[p]
				p++
			case p == pe || b.RowIdx[q] < a.RowIdx[p]:
				c.RowIdx[k], c.Val[k] = b.RowIdx[q], beta*b.Val[q]
				q++
			default:
				c.RowIdx[k], c.Val[k] = a.RowIdx[p], alpha*a.Val[p]+beta*b.Val[q]
				p++
				q++
			}
			k++
		}
	}
	return c, nil
}

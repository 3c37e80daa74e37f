// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Triplet builds a SymCSC from (i, j, v) entries in any order: an entry
// above the diagonal is stored as its mirror below it, and duplicates are
// summed (the Hessian of a sum of terms is the sum of their Hessians).
// The zero value is not usable; call NewTriplet.
type Triplet struct {
	n int
	e []tripletEntry
}

type tripletEntry struct {
	i, j int
	v    float64
}

// NewTriplet returns an empty builder for an n×n symmetric matrix.
func NewTriplet(n int) *Triplet { return &Triplet{n: n} }

// Add adds v to entries (i, j) and (j, i) of the symmetric matrix (once:
// Add(0, 1, v) sets both off-diagonal entries to v). Indices out of range
// and non-finite values are reported by SymCSC, not here, so that a loop
// of Adds needs no error checks.
func (t *Triplet) Add(i, j int, v float64) {
	if i < j {
		i, j = j, i
	}
	t.e = append(t.e, tripletEntry{i, j, v})
}

// Len returns the number of entries added.
func (t *Triplet) Len() int { return len(t.e) }

// SymCSC returns the matrix: the pattern is every (i, j) added (a stored
// zero included), values summed. The builder can be added to and compiled
// again.
func (t *Triplet) SymCSC() (*SymCSC, error) {
	if t.n < 0 || t.n > MaxFill {
		return nil, fmt.Errorf("sparse: Triplet: order %d, want 0 to %d", t.n, MaxFill)
	}
	for k, e := range t.e {
		if e.j < 0 || e.i >= t.n {
			return nil, fmt.Errorf("sparse: Triplet: entry %d at (%d, %d), want indices in [0, %d)", k, e.i, e.j, t.n)
		}
		if math.IsNaN(e.v) || math.IsInf(e.v, 0) {
			return nil, fmt.Errorf("sparse: Triplet: entry %d at (%d, %d) = %v, want finite", k, e.i, e.j, e.v)
		}
	}
	e := slices.Clone(t.e)
	slices.SortStableFunc(e, func(a, b tripletEntry) int {
		if c := cmp.Compare(a.j, b.j); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	a := &SymCSC{N: t.n, ColPtr: make([]int, t.n+1)}
	for k := 0; k < len(e); {
		i, j, v := e[k].i, e[k].j, e[k].v
		for k++; k < len(e) && e[k].i == i && e[k].j == j; k++ {
			v += e[k].v
		}
		a.RowIdx = append(a.RowIdx, i)
		a.Val = append(a.Val, v)
		a.ColPtr[j+1]++
	}
	for j := range t.n {
		a.ColPtr[j+1] += a.ColPtr[j]
	}
	if a.RowIdx == nil {
		a.RowIdx, a.Val = []int{}, []float64{}
	}
	return a, nil
}

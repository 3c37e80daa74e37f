// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"container/heap"
	"fmt"
	"math"
)

// MaxFill is the largest number of entries the ordering's elimination
// graph and a Cholesky factor may hold (2²⁷ entries, about 2 GiB of
// values and indices for a factor): a pattern whose factor would be larger
// is an error from MinDegree and Analyze instead of an exhausted memory.
const MaxFill = 1 << 27

// MinDegree returns a fill-reducing symmetric ordering of a's pattern:
// perm[k] is the index of the k-th pivot, so that the Cholesky factor of
// A[perm, perm] has few more entries than A (Analyze).
//
// It is the minimum degree algorithm on the explicit elimination graph:
// repeatedly eliminate the node of least current degree (ties to the
// lowest index, so the ordering is deterministic) and make its neighbours
// a clique. Nodes whose degree exceeds max(16, 10√n) are "dense", taken
// out of the graph at the start and ordered last, as approximate minimum
// degree does (Amestoy, Davis & Duff 1996, §5): in a multilevel model these
// are the fixed effects and the random-effect scales, coupled to every
// group, and leaving them in would make every elimination touch them.
//
// Why exact minimum degree on an explicit graph rather than AMD's quotient
// graph: the patterns here (an arrow of p dense fixed effects over G
// groups' small blocks, crossed factors whose groups share data) are
// eliminated with little fill, and then the explicit graph costs
// O(Σ_k deg_k²) — at most the factorisation's own flop count — and its
// degrees are exact rather than AMD's upper bounds, which on these
// patterns gives orderings at least as good. What it gives up is AMD's
// O(nnz(A)) memory on patterns whose factor fills in: there the graph
// grows with the fill, and beyond MaxFill entries MinDegree returns an
// error (the factor would not fit either). TestMinDegreeArrow checks the
// arrow pattern's factor has no fill; BenchmarkMinDegree measures the cost.
func MinDegree(a *SymCSC) ([]int, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sparse: MinDegree: %w", err)
	}
	n := a.N
	// The graph: each node's neighbours, sorted, both directions.
	deg := make([]int, n)
	for j := range n {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			if i := a.RowIdx[p]; i != j {
				deg[i]++
				deg[j]++
			}
		}
	}
	dense := make([]bool, n)
	limit := max(16, int(10*math.Sqrt(float64(n))))
	for v, d := range deg {
		dense[v] = d > limit
	}
	adj := make([][]int32, n)
	for v := range n {
		adj[v] = make([]int32, 0, deg[v])
	}
	for j := range n {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			i := a.RowIdx[p]
			if i == j || dense[i] || dense[j] {
				continue
			}
			adj[j] = append(adj[j], int32(i)) // ascending: i > j, rows ascending
		}
	}
	// Rows i > j were appended to column j in order; now add the mirror
	// (j into adj[i]) in ascending j by a second pass over columns.
	for j := range n {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			i := a.RowIdx[p]
			if i == j || dense[i] || dense[j] {
				continue
			}
			adj[i] = append(adj[i], int32(j))
		}
	}
	// adj[v] now holds its larger neighbours (ascending) followed by its
	// smaller ones (ascending); make each sorted.
	size := 0
	for v := range n {
		adj[v] = sortTwoRuns(adj[v], int32(v))
		size += len(adj[v])
	}

	perm := make([]int, 0, n)
	done := make([]bool, n)
	h := make(degHeap, 0, n)
	for v := range n {
		if !dense[v] {
			h = append(h, degNode{len(adj[v]), v})
		}
	}
	heap.Init(&h)
	var buf []int32
	for h.Len() > 0 {
		top := heap.Pop(&h).(degNode)
		v := top.node
		if done[v] || top.deg != len(adj[v]) {
			continue // stale entry: v's degree changed since it was pushed
		}
		done[v] = true
		perm = append(perm, v)
		nb := adj[v]
		for _, u := range nb {
			// adj[u] ← (adj[u] ∪ nb) \ {u, v}
			buf = mergeClique(buf[:0], adj[u], nb, u, int32(v))
			size += len(buf) - len(adj[u])
			if cap(adj[u]) >= len(buf) {
				adj[u] = append(adj[u][:0], buf...)
			} else {
				adj[u] = append(make([]int32, 0, len(buf)+len(buf)/2), buf...)
			}
			heap.Push(&h, degNode{len(adj[u]), int(u)})
		}
		if size > MaxFill {
			return nil, fmt.Errorf("sparse: MinDegree: the elimination graph of the %d×%d pattern with %d entries exceeds %d entries after %d of %d eliminations; its Cholesky factor would not fit in memory", n, n, a.NNZ(), MaxFill, len(perm), n)
		}
		size -= len(nb)
		adj[v] = nil
	}
	for v := range n {
		if dense[v] {
			perm = append(perm, v)
		}
	}
	return perm, nil
}

// sortTwoRuns merges the two ascending runs of s (the entries above v,
// then those below it) into one ascending slice, in place order.
func sortTwoRuns(s []int32, v int32) []int32 {
	k := 0
	for k < len(s) && s[k] > v {
		k++
	}
	if k == 0 || k == len(s) {
		return s
	}
	out := make([]int32, 0, len(s))
	out = append(out, s[k:]...)
	out = append(out, s[:k]...)
	return out
}

// mergeClique appends (a ∪ b) \ {u, v} to dst, for ascending a and b.
func mergeClique(dst, a, b []int32, u, v int32) []int32 {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var x int32
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			x = a[i]
			i++
		case i == len(a) || b[j] < a[i]:
			x = b[j]
			j++
		default:
			x = a[i]
			i++
			j++
		}
		if x != u && x != v {
			dst = append(dst, x)
		}
	}
	return dst
}

type degNode struct{ deg, node int }

// degHeap is a min-heap of nodes by (degree, index).
type degHeap []degNode

func (h degHeap) Len() int { return len(h) }
func (h degHeap) Less(i, j int) bool {
	if h[i].deg != h[j].deg {
		return h[i].deg < h[j].deg
	}
	return h[i].node < h[j].node
}
func (h degHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *degHeap) Push(x any)   { *h = append(*h, x.(degNode)) }
func (h *degHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Symbolic is the symbolic analysis of a sparse symmetric pattern under a
// fill-reducing ordering: the permutation, the elimination tree of the
// permuted matrix and the pattern's column counts, from which Factor
// computes the numeric Cholesky factor of any matrix with that pattern.
// A Symbolic is read-only once built and can be shared.
type Symbolic struct {
	n      int
	perm   []int // perm[k]: the original index of pivot k
	pinv   []int // pinv[perm[k]] = k
	parent []int // elimination tree of C = PAPᵀ; -1 at a root
	lp     []int // column pointers of L (len n+1)

	// C, the upper triangle of PAPᵀ by columns (its column k is row k of
	// the lower triangle), and where each entry of A goes in it.
	cp, ci []int
	amap   []int
	annz   int
	acolp  []int // A's ColPtr, to check a matrix has the analysed pattern
	arow   []int // A's RowIdx
	// The pattern of each row k of L (the columns j < k it holds),
	// rj[rp[k]:rp[k+1]], in the topological order ereach gives.
	rp []int
	rj []int32
}

// Analyze returns the symbolic analysis of a's pattern under the ordering
// perm (perm[k] is the k-th pivot), or under MinDegree(a) when perm is
// nil: the elimination tree (Liu's algorithm with path compression) and
// the column counts of L (each row's pattern is the reach of its entries
// in the tree), in O(nnz(L)) time. It is an error if the factor would hold
// more than MaxFill entries.
func Analyze(a *SymCSC, perm []int) (*Symbolic, error) {
	if err := a.Check(); err != nil {
		return nil, fmt.Errorf("sparse: Analyze: %w", err)
	}
	n := a.N
	if perm == nil {
		var err error
		if perm, err = MinDegree(a); err != nil {
			return nil, err
		}
	} else {
		perm = append([]int(nil), perm...)
	}
	if len(perm) != n {
		return nil, fmt.Errorf("sparse: Analyze: len(perm) = %d, want %d", len(perm), n)
	}
	pinv := make([]int, n)
	for k := range pinv {
		pinv[k] = -1
	}
	for k, v := range perm {
		if v < 0 || v >= n || pinv[v] >= 0 {
			return nil, fmt.Errorf("sparse: Analyze: perm[%d] = %d is out of range or repeated; want a permutation of 0..%d", k, v, n-1)
		}
		pinv[v] = k
	}
	s := &Symbolic{n: n, perm: perm, pinv: pinv, annz: a.NNZ(),
		acolp: append([]int(nil), a.ColPtr...), arow: append([]int(nil), a.RowIdx...)}

	// C = upper triangle of PAPᵀ, column by column.
	s.cp = make([]int, n+1)
	for j := range n {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			s.cp[max(pinv[a.RowIdx[p]], pinv[j])+1]++
		}
	}
	for k := range n {
		s.cp[k+1] += s.cp[k]
	}
	next := append([]int(nil), s.cp[:n]...)
	s.ci = make([]int, s.annz)
	s.amap = make([]int, s.annz)
	for j := range n {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			r, c := pinv[a.RowIdx[p]], pinv[j]
			if r > c {
				r, c = c, r
			}
			q := next[c]
			next[c]++
			s.ci[q] = r
			s.amap[p] = q
		}
	}

	// Elimination tree of C (Liu 1986; Davis 2006, cs_etree).
	s.parent = make([]int, n)
	ancestor := make([]int, n)
	for k := range n {
		s.parent[k], ancestor[k] = -1, -1
		for p := s.cp[k]; p < s.cp[k+1]; p++ {
			for i := s.ci[p]; i != -1 && i < k; {
				inext := ancestor[i]
				ancestor[i] = k
				if inext == -1 {
					s.parent[i] = k
				}
				i = inext
			}
		}
	}

	// Column counts: row k of L is the reach of C's column k in the tree.
	counts := make([]int, n)
	stack := make([]int, n)
	mark := ancestor // reuse: ereach marks with the row index
	for k := range mark {
		mark[k] = -1
	}
	for k := range n {
		top := s.ereach(k, stack, mark)
		for _, j := range stack[top:] {
			counts[j]++
		}
	}
	s.lp = make([]int, n+1)
	for j := range n {
		s.lp[j+1] = s.lp[j] + counts[j] + 1
		if s.lp[j+1] > MaxFill {
			return nil, fmt.Errorf("sparse: Analyze: the Cholesky factor of the %d×%d pattern with %d entries would hold more than %d entries (after %d of %d columns); it would not fit in memory", n, n, s.annz, MaxFill, j+1, n)
		}
	}
	// Each row's pattern, kept in ereach's topological order for Refactor.
	s.rp = make([]int, n+1)
	s.rj = make([]int32, 0, s.lp[n]-n)
	for k := range mark {
		mark[k] = -1
	}
	for k := range n {
		top := s.ereach(k, stack, mark)
		for _, j := range stack[top:] {
			s.rj = append(s.rj, int32(j))
		}
		s.rp[k+1] = len(s.rj)
	}
	return s, nil
}

// ereach sets stack[top:] to the pattern of row k of L (the columns j < k
// with L[k, j] ≠ 0), in topological order, and returns top (Davis 2006,
// cs_ereach). mark[i] == k marks i as visited for row k.
func (s *Symbolic) ereach(k int, stack, mark []int) int {
	top := s.n
	mark[k] = k
	for p := s.cp[k]; p < s.cp[k+1]; p++ {
		i := s.ci[p]
		if i > k {
			continue
		}
		l := 0
		for ; mark[i] != k; i = s.parent[i] {
			stack[l] = i
			l++
			mark[i] = k
		}
		for l > 0 {
			l--
			top--
			stack[top] = stack[l]
		}
	}
	return top
}

// N returns the order of the analysed matrix.
func (s *Symbolic) N() int { return s.n }

// Perm returns the ordering: Perm()[k] is the original index of pivot k.
// The slice is the analysis's own; do not modify it.
func (s *Symbolic) Perm() []int { return s.perm }

// FactorNNZ returns the number of entries of L, diagonal included.
func (s *Symbolic) FactorNNZ() int { return s.lp[s.n] }

// FactorFlops returns Σ_j c_j², c_j the entries of column j of L: the
// count of multiply-adds of a numeric factorisation (Refactor) up to a
// small factor, which the automatic default bounds where a sweep factors
// once.
func (s *Symbolic) FactorFlops() float64 {
	var f float64
	for j := range s.n {
		c := float64(s.lp[j+1] - s.lp[j])
		f += c * c
	}
	return f
}

// Cholesky is the sparse Cholesky factorisation H = PᵀLLᵀP of a symmetric
// positive definite H: L lower triangular with positive diagonal, P the
// permutation of the symbolic analysis ((Px)[k] = x[perm[k]]). Its
// methods other than Refactor are read-only and safe for concurrent use.
type Cholesky struct {
	sym *Symbolic
	li  []int     // row indices of L, diagonal first in each column
	lx  []float64 // values of L
	// prow[p] = perm[li[p]]: the original index of each entry's row, so
	// that NormalInto reads dst with one indirection rather than two.
	prow []int
	cx   []float64 // values of C
	x    []float64 // numeric workspace
	next []int     // Refactor's next free slot per column of L
}

// Factorize analyses a's pattern with MinDegree and factors it.
func Factorize(a *SymCSC) (*Cholesky, error) {
	s, err := Analyze(a, nil)
	if err != nil {
		return nil, err
	}
	return s.Factor(a)
}

// Factor returns the Cholesky factor of a, whose pattern must be the
// analysed one. It is an error if a is not positive definite (the pivot
// where it fails is named, by its original index).
func (s *Symbolic) Factor(a *SymCSC) (*Cholesky, error) {
	c := &Cholesky{sym: s,
		li: make([]int, s.lp[s.n]), lx: make([]float64, s.lp[s.n]),
		cx: make([]float64, s.annz), x: make([]float64, s.n), next: make([]int, s.n)}
	if err := c.Refactor(a); err != nil {
		return nil, err
	}
	return c, nil
}

// Refactor recomputes the factor for a new matrix with the analysed
// pattern (a Newton iteration's Hessian), without allocating, by the
// up-looking algorithm (Davis 2006, cs_chol): row k of L is the solution
// of a triangular system whose pattern is row k's reach in the
// elimination tree (each row's pattern kept by Analyze, so a refactor
// walks no tree), so the cost is the factor's flop count, Σ_j |L_{*j}|².
// Not safe for concurrent use with other methods of c.
//
// A matrix with the analysed pattern is not checked further: a value that
// is not finite makes a pivot fail, and the error then names it (Check).
func (c *Cholesky) Refactor(a *SymCSC) error {
	s := c.sym
	if !s.matches(a) {
		if err := a.Check(); err != nil {
			return fmt.Errorf("sparse: Factor: %w", err)
		}
		return fmt.Errorf("sparse: Factor: the %d×%d matrix with %d entries does not have the analysed pattern (%d×%d, %d entries)", a.N, a.N, a.NNZ(), s.n, s.n, s.annz)
	}
	n := s.n
	cx := c.cx
	for p, q := range s.amap {
		cx[q] = a.Val[p]
	}
	next := c.next
	copy(next[:n], s.lp[:n])
	// The fields' slices held in locals, and each column's entries so far
	// sliced once (li and lx to the same length), so that the inner
	// update runs without reloading them or checking its indices but x's:
	// the same operations in the same order.
	x, li, lx, lp, ci := c.x, c.li, c.lx, s.lp, s.ci
	for k := range n {
		x[k] = 0
		for p := s.cp[k]; p < s.cp[k+1]; p++ {
			x[ci[p]] = cx[p]
		}
		d := x[k]
		x[k] = 0
		for _, i32 := range s.rj[s.rp[k]:s.rp[k+1]] {
			i := int(i32)
			lo, hi := lp[i], next[i]
			lki := x[i] / lx[lo]
			x[i] = 0
			rows := li[lo+1 : hi]
			vals := lx[lo+1 : hi]
			vals = vals[:len(rows)]
			for q, r := range rows {
				x[r] -= vals[q] * lki
			}
			d -= lki * lki
			next[i] = hi + 1
			li[hi], lx[hi] = k, lki
		}
		if !(d > 0) || math.IsInf(d, 0) {
			clear(x)
			if err := a.Check(); err != nil {
				return fmt.Errorf("sparse: Factor: %w", err)
			}
			return fmt.Errorf("sparse: Factor: the matrix is not positive definite: pivot %d (index %d) is %v", k, s.perm[k], d)
		}
		p := next[k]
		next[k]++
		c.li[p], c.lx[p] = k, math.Sqrt(d)
	}
	if c.prow == nil {
		c.prow = make([]int, len(c.li))
		for p, i := range c.li {
			c.prow[p] = s.perm[i]
		}
	}
	return nil
}

// matches reports whether a is a well-formed matrix with the analysed
// pattern (which Analyze checked).
func (s *Symbolic) matches(a *SymCSC) bool {
	if a == nil || a.N != s.n || len(a.ColPtr) != s.n+1 || len(a.RowIdx) != s.annz || len(a.Val) != s.annz {
		return false
	}
	return s.samePattern(a)
}

func (s *Symbolic) samePattern(a *SymCSC) bool {
	if a.N != s.n || a.NNZ() != s.annz {
		return false
	}
	for j, p := range a.ColPtr {
		if s.acolp[j] != p {
			return false
		}
	}
	for p, i := range a.RowIdx {
		if s.arow[p] != i {
			return false
		}
	}
	return true
}

// Symbolic returns the analysis the factor was computed from.
func (c *Cholesky) Symbolic() *Symbolic { return c.sym }

// N returns the order of the factored matrix.
func (c *Cholesky) N() int { return c.sym.n }

// LogDet returns log det H = 2 Σ_k log L_kk.
func (c *Cholesky) LogDet() float64 {
	var s float64
	for k := range c.sym.n {
		s += math.Log(c.lx[c.sym.lp[k]])
	}
	return 2 * s
}

// SolveL solves L y = x in place, in the permuted coordinates.
func (c *Cholesky) SolveL(x []float64) {
	lp := c.sym.lp
	for j := range c.sym.n {
		xj := x[j] / c.lx[lp[j]]
		x[j] = xj
		for p := lp[j] + 1; p < lp[j+1]; p++ {
			x[c.li[p]] -= c.lx[p] * xj
		}
	}
}

// SolveLT solves Lᵀ y = x in place, in the permuted coordinates.
func (c *Cholesky) SolveLT(x []float64) {
	lp := c.sym.lp
	for j := c.sym.n - 1; j >= 0; j-- {
		s := x[j]
		for p := lp[j] + 1; p < lp[j+1]; p++ {
			s -= c.lx[p] * x[c.li[p]]
		}
		x[j] = s / c.lx[lp[j]]
	}
}

// Solve sets dst = H⁻¹b, using work (length N) as scratch; dst may be b.
// It costs O(nnz(L)) and does not allocate.
func (c *Cholesky) Solve(dst, b, work []float64) {
	perm := c.sym.perm
	for k, v := range perm {
		work[k] = b[v]
	}
	c.SolveL(work)
	c.SolveLT(work)
	for k, v := range perm {
		dst[v] = work[k]
	}
}

// NormalInto sets dst = PᵀL⁻ᵀz for z ~ N(0, I) drawn from rng, a draw
// from N(0, H⁻¹): its covariance is PᵀL⁻ᵀL⁻¹P = H⁻¹. The back
// substitution writes pivot k's value straight to dst[perm[k]] and draws
// z_k when it reaches it, so it needs no scratch memory: O(nnz(L)), no
// allocation, safe for concurrent use with distinct dst and rng.
func (c *Cholesky) NormalInto(rng *rand.Rand, dst []float64) {
	lp, perm, lx, prow := c.sym.lp, c.sym.perm, c.lx, c.prow
	for j := c.sym.n - 1; j >= 0; j-- {
		s := rng.NormFloat64()
		lo, hi := lp[j], lp[j+1]
		for p := lo + 1; p < hi; p++ {
			s -= lx[p] * dst[prow[p]]
		}
		dst[perm[j]] = s / lx[lo]
	}
}

// L returns L as a lower-triangular SymCSC-shaped matrix in the permuted
// coordinates (for tests and inspection; it shares no memory with c).
func (c *Cholesky) L() *SymCSC {
	return &SymCSC{N: c.sym.n, ColPtr: append([]int(nil), c.sym.lp...),
		RowIdx: append([]int(nil), c.li...), Val: append([]float64(nil), c.lx...)}
}

// InverseDiag sets dst[i] = (H⁻¹)_ii for every i, by Takahashi's
// recurrence (Takahashi, Fagan & Chin 1973): Z = (LLᵀ)⁻¹ satisfies
// ZL = L⁻ᵀ, whose entries on and below the diagonal give, column by
// column from the last,
//
//	Z_ij = −Σ_{k∈S_j} Z_ik L_kj / L_jj  (i ∈ S_j),
//	Z_jj = (1/L_jj − Σ_{k∈S_j} Z_jk L_kj) / L_jj,
//
// S_j the rows below the diagonal of L's column j. Every Z_ik it needs lies
// on L's pattern (i, k ∈ S_j, i > k: L_ij ≠ 0 and L_kj ≠ 0 make L_ik ≠ 0),
// so Z is computed there only, in O(nnz(L)) memory where the dense inverse
// takes O(d²).
//
// The entries are found by cursors, not searched: for column j the rows
// i ∈ S_j are visited in increasing order, so the position of row i in
// each column k ∈ S_j below it only moves down that column (one cursor per
// k), and for a fixed i the columns k > i are visited in increasing order
// of row in column i (one cursor, restarted per i). Column j costs
// O(|S_j|² + Σ_{k∈S_j} |L_{*k}|); the sums are formed in the same order as
// the plain recurrence, so the result is the same to the bit
// (TestInverseDiagCursors). It is the marginal variances of N(θ̂, H⁻¹)
// (exactmh.LaplaceApprox.SD of a sparse approximation) and the Laplace-EM
// centre's conditional variances, on crossed designs whose factor holds a
// dense block of a thousand columns.
func (c *Cholesky) InverseDiag(dst []float64) {
	s := c.sym
	lp, li, lx := s.lp, c.li, c.lx
	z := make([]float64, len(lx))
	width := 0
	for j := range s.n {
		width = max(width, lp[j+1]-lp[j])
	}
	cur := make([]int, width) // cur[r−lp[j]]: a position in column li[r], at or above row i
	for j := s.n - 1; j >= 0; j-- {
		ljj := lx[lp[j]]
		lo, hi := lp[j]+1, lp[j+1]
		for r := lo; r < hi; r++ {
			cur[r-lo] = lp[li[r]] // column k = li[r] from its diagonal
		}
		for q := lo; q < hi; q++ {
			i := li[q]
			var sum float64
			up := lp[i] + 1 // rows below the diagonal of column i, for k > i
			for r := lo; r < hi; r++ {
				k := li[r]
				var zik float64
				switch {
				case k < i: // Z_ik in column k at row i
					p := cur[r-lo]
					for li[p] < i {
						p++
					}
					cur[r-lo] = p
					zik = z[p]
				case k == i:
					zik = z[lp[i]]
				default: // Z_ki in column i at row k
					for li[up] < k {
						up++
					}
					zik = z[up]
				}
				sum += zik * lx[r]
			}
			z[q] = -sum / ljj
		}
		var sum float64
		for r := lo; r < hi; r++ {
			sum += z[r] * lx[r]
		}
		z[lp[j]] = (1/ljj - sum) / ljj
	}
	for k, v := range s.perm {
		dst[v] = z[lp[k]]
	}
}

// PivotRange returns the smallest and largest diagonal entries of L. Their
// squared ratio is a lower bound on the condition number of H (the
// pivots L_kk² are Schur complements' diagonals, between H's extreme
// eigenvalues), which exactmh's sparse Newton search and Laplace
// approximation compare with their singularity threshold as the dense path compares the condition number.
func (c *Cholesky) PivotRange() (lo, hi float64) {
	if c.sym.n == 0 {
		return 1, 1
	}
	lo, hi = math.Inf(1), 0
	for k := range c.sym.n {
		v := c.lx[c.sym.lp[k]]
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

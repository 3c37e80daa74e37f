// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/newton"
	"github.com/exactmh/exactmh/sparse"
)

// backfitLevels is the number of levels both factors of a crossed pair
// must reach for the Laplace-EM centre to be found by backfitting
// (backfitCenter) instead of sparse Newton. Two crossed factors of G₁ ≥ G₂
// levels make the Hessian's Cholesky factor dense on the smaller factor
// (G₂²/2 entries, G₂³/3 flops a factorisation) and its inverse diagonal
// (Takahashi) cost Σ_j |S_j|², ≈ G₂³ and more with the larger factor's
// columns, in every Laplace-EM round: at G₂ = 10³ and N = 10⁶ that is most
// of the set-up, at G₂ = 10⁴ hours. Backfitting costs a pass over the rows
// per factor and sweep and holds O(d).
const backfitLevels = 1000

// backfitPlan is the block structure backfitCenter works on: each block's
// coordinates (contiguous in θ), the group it is updated with (0: the
// fixed effects; k ≥ 1: the k-th grouping factor's levels), and the
// location pairs (a term whose column equals a fixed effect's on every
// row) whose common shift the prior alone identifies.
type backfitPlan struct {
	blocks       []int32
	bStart, bLen []int   // per block
	hOff         []int   // per block: its q×q Hessian's place in a flat array
	grp          []int   // per block
	nGroups      int     // 1 + the number of factors
	firstBlock   []int   // per group: its first block (a factor's levels are consecutive blocks)
	pairs        [][]int // per location pair: the fixed coordinate, then the term's coordinates
	crossed      bool    // some two factors of ≥ minLevels levels are crossed
	hLen         int
}

// planBackfit returns the plan of a multilevel layout, or nil where
// backfitting does not apply (correlated effects, a block whose
// coordinates are not contiguous, fewer than two factors), with one pass
// over the rows to find crossed factors (both of at least minLevels
// levels) and location pairs.
func planBackfit(ctx context.Context, e SparseRowGLM, n int, lay Layout, blocks []int32, minLevels int) *backfitPlan {
	if c, ok := lay.(CorrelatedLayout); ok && c.NumCorrelated() > 0 {
		return nil
	}
	var nb int32
	for _, b := range blocks {
		nb = max(nb, b+1)
	}
	pl := &backfitPlan{blocks: blocks, bStart: make([]int, nb), bLen: make([]int, nb), hOff: make([]int, nb), grp: make([]int, nb)}
	for b := range pl.bStart {
		pl.bStart[b] = -1
	}
	for j, b := range blocks {
		if b < 0 {
			continue
		}
		if pl.bStart[b] < 0 {
			pl.bStart[b] = j
		} else if pl.bStart[b]+pl.bLen[b] != j {
			return nil // not contiguous
		}
		pl.bLen[b]++
	}
	for b := range pl.bLen {
		if pl.bStart[b] < 0 {
			return nil
		}
		pl.hOff[b] = pl.hLen
		pl.hLen += pl.bLen[b] * pl.bLen[b]
	}
	factor := map[string]int{}
	var levels []int
	type term struct{ start, stride, levels, grp int }
	var terms []term
	for tm := range lay.NumTerms() {
		f, _, start, stride, lv, _ := lay.Term(tm)
		k, ok := factor[f]
		if !ok {
			k = len(factor) + 1
			factor[f] = k
			levels = append(levels, lv)
		}
		terms = append(terms, term{start, stride, lv, k})
		for g := range lv {
			j := start + g*stride
			if j < 0 || j >= len(blocks) || blocks[j] < 1 {
				return nil
			}
			pl.grp[blocks[j]] = k
		}
	}
	pl.nGroups = len(factor) + 1
	if pl.nGroups < 3 {
		return nil
	}
	pl.firstBlock = make([]int, pl.nGroups)
	for g := range pl.firstBlock {
		pl.firstBlock[g] = -1
	}
	for b := len(pl.grp) - 1; b >= 0; b-- {
		pl.firstBlock[pl.grp[b]] = b
	}
	// One pass: which factor pairs are nested (each level of one within
	// a single level of the other), and which terms' columns equal a
	// fixed effect's on every row.
	K := pl.nGroups - 1
	parent := make([][]int32, K*K) // parent[k*K+l][level of l] = the level of k it lies in (−1 unseen, −2 several)
	nested := make([]bool, K*K)
	for k := range K {
		for l := range K {
			if k != l && levels[k] >= minLevels && levels[l] >= minLevels {
				parent[k*K+l] = make([]int32, levels[l])
				for i := range parent[k*K+l] {
					parent[k*K+l][i] = -1
				}
				nested[k*K+l] = true
			}
		}
	}
	if !slices.ContainsFunc(parent, func(p []int32) bool { return p != nil }) {
		return pl // no two factors large enough: sparse Newton
	}
	p := pl.bLen[0]
	match := make([][]bool, len(terms))
	for tm := range terms {
		match[tm] = make([]bool, p)
		for c := range p {
			match[tm][c] = true
		}
	}
	lev := make([]int32, K)
	fixedVal := make([]float64, p)
	var cols []int32
	var vals []float64
	for i := range n {
		if i&0xffff == 0 && ctx.Err() != nil {
			return nil
		}
		cols, vals = e.SparseRow(i, cols[:0], vals[:0])
		clear(fixedVal)
		for k := range lev {
			lev[k] = -1
		}
		for q, c := range cols {
			b := blocks[c]
			if b == 0 {
				fixedVal[c-int32(pl.bStart[0])] = vals[q]
			} else if b > 0 {
				g := pl.grp[b]
				lev[g-1] = b - int32(pl.firstBlock[g])
			}
		}
		for k := range K {
			for l := range K {
				pk := parent[k*K+l]
				if pk == nil || !nested[k*K+l] || lev[k] < 0 || lev[l] < 0 {
					continue
				}
				if v := pk[lev[l]]; v == -1 {
					pk[lev[l]] = lev[k]
				} else if v != lev[k] {
					nested[k*K+l] = false
				}
			}
		}
		for tm, t := range terms {
			var uv float64
			for q, c := range cols {
				if o := int(c) - t.start; o >= 0 && o%t.stride == 0 && o/t.stride < t.levels {
					uv = vals[q]
					break
				}
			}
			for c := range p {
				match[tm][c] = match[tm][c] && fixedVal[c] == uv
			}
		}
	}
	for k := range K {
		for l := k + 1; l < K; l++ {
			if parent[k*K+l] != nil && !nested[k*K+l] && !nested[l*K+k] {
				pl.crossed = true
			}
		}
	}
	for tm, t := range terms {
		for c := range p {
			if match[tm][c] {
				pr := []int{pl.bStart[0] + c}
				for g := range t.levels {
					pr = append(pr, t.start+g*t.stride)
				}
				pl.pairs = append(pl.pairs, pr)
				break
			}
		}
	}
	return pl
}

// backfitCenter is multilevelCenter's Laplace-EM iteration with the mode
// of the effects given the scales found by backfitting — block
// Gauss–Seidel Newton: the fixed effects, then each factor's levels, each
// block's Newton step given every other block (its gradient and q×q
// Hessian summed in one pass over the rows), and after each sweep every
// location pair's shift (a fixed effect up, its term's effects down: the
// linear predictors unchanged) to the prior's optimum along it, the
// direction along which Gauss–Seidel alone crawls. The conditional
// variance of an effect given the others, (H_b⁻¹)_jj, stands in for
// the marginal one of the sparse path's inverse diagonal in the scales'
// update. It costs 1 + K passes over the rows a sweep (K factors), one
// sweep a Laplace-EM round, and holds O(d) per worker: no Hessian of the
// effects, no factorisation. Any centre keeps GroupGibbs exact (docs/
// multilevel.md, "Laplace-EM centre"); this one sets its efficiency.
func backfitCenter(ctx context.Context, t *exactmh.Target, pl *backfitPlan, lay Layout, e SparseRowGLM) (center, sd []float64, passes int, err error) {
	d := t.Dim()
	n := t.N()
	theta := make([]float64, d)
	variance := make([]float64, d)
	pg := make([]float64, d)
	ph, ok := t.Prior().(exactmh.SparseHessianer)
	if !ok {
		return nil, nil, 0, fmt.Errorf("prior %T has no sparse Hessian", t.Prior())
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), n/4096+1))
	type acc struct {
		grad, hess []float64
		cols       []int32
		vals       []float64
	}
	accs := make([]acc, workers)
	for w := range accs {
		accs[w] = acc{grad: make([]float64, d), hess: make([]float64, pl.hLen)}
	}
	beta := t.Beta()
	// pass sums the energy's gradient and block Hessians over the rows
	// for the blocks of group gr into accs[0].
	pass := func(gr int) error {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		for w := range workers {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				a := &accs[w]
				clear(a.grad)
				clear(a.hess)
				lo, hi := n*w/workers, n*(w+1)/workers
				for i := lo; i < hi; i++ {
					if (i-lo)&0xffff == 0 && ctx.Err() != nil {
						mu.Lock()
						firstErr = ctx.Err()
						mu.Unlock()
						return
					}
					z, _ := e.LinearPredictors(i, theta, theta)
					f1, f2 := e.LossDerivs(i, z)
					f1, f2 = beta*f1, beta*f2
					a.cols, a.vals = e.SparseRow(i, a.cols[:0], a.vals[:0])
					for q, c := range a.cols {
						b := pl.blocks[c]
						if b < 0 || pl.grp[b] != gr {
							continue
						}
						a.grad[c] += f1 * a.vals[q]
						s, m := pl.bStart[b], pl.bLen[b]
						row := pl.hOff[b] + (int(c)-s)*m
						for r, c2 := range a.cols {
							if o := int(c2) - s; o >= 0 && o < m {
								a.hess[row+o] += f2 * a.vals[q] * a.vals[r]
							}
						}
					}
				}
			}(w)
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		for w := 1; w < workers; w++ {
			for j, v := range accs[w].grad {
				accs[0].grad[j] += v
			}
			for j, v := range accs[w].hess {
				accs[0].hess[j] += v
			}
		}
		t.Count(n)
		passes++
		return nil
	}
	// A block's Newton step given the others is one iteration of the
	// module's damped Newton (internal/newton, blockPolicy) on its m
	// coordinates from s: Eval sets its gradient and Hessian, the pass's
	// sums (accs[0]) plus the prior's (pg, hp), and the step through
	// blockHessian. cur holds the block's coordinates before the step and
	// next is the block's slice of θ, which the step writes.
	var (
		hp        *sparse.SymCSC
		b, s, m   int // the block, its start and size
		bh        blockHessian
		cur, next newton.Point
	)
	cur.Hess = &bh
	search := newton.Search[*newton.Point]{Policy: blockPolicy, Problem: newton.Funcs{
		EvalFunc: func(pt *newton.Point) error {
			bh.h, bh.m = append(bh.h[:0], accs[0].hess[pl.hOff[b]:pl.hOff[b]+m*m]...), m
			for a := range m {
				for c := range m {
					bh.h[a*m+c] += hp.At(s+a, s+c)
				}
				pt.G[a] = accs[0].grad[s+a] - pg[s+a] // ∇F
			}
			return pt.Direction()
		},
		ValueFunc: func([]float64) (float64, error) { return math.NaN(), errNoValue },
	}}
	var xbuf, gbuf, sbuf []float64
	// update makes each block of group gr its Newton step given the
	// others and returns the largest step in the block's conditional sd.
	update := func(gr int) (float64, error) {
		if err := pass(gr); err != nil {
			return 0, err
		}
		clear(pg)
		if err := t.AddLogPriorGradient(pg, theta); err != nil {
			return 0, err
		}
		var err error
		if hp, err = t.SparseHessianOf(ph, theta); err != nil {
			return 0, err
		}
		var big float64
		for b = pl.firstBlock[gr]; b < len(pl.grp) && pl.grp[b] == gr; b++ {
			s, m = pl.bStart[b], pl.bLen[b]
			xbuf = append(xbuf[:0], theta[s:s+m]...)
			gbuf, sbuf = slices.Grow(gbuf[:0], m)[:m], slices.Grow(sbuf[:0], m)[:m]
			cur.X, cur.G, cur.Step, cur.Derived = xbuf, gbuf, sbuf, false
			next.X = theta[s : s+m]
			search.Iterations = 0
			if _, out, err := search.Minimize(ctx, &cur, &next); out == newton.Stopped || out == newton.Failed {
				return 0, err
			}
			shrink := search.Lambda
			for a := range m {
				variance[s+a] = denseInvDiag(bh.l, m, a)
				big = math.Max(big, shrink*math.Abs(cur.Step[a])/math.Sqrt(variance[s+a]))
			}
		}
		return big, nil
	}
	// shift moves each location pair to the prior's optimum along it.
	shift := func() error {
		clear(pg)
		if err := t.AddLogPriorGradient(pg, theta); err != nil {
			return err
		}
		hp, err := t.SparseHessianOf(ph, theta)
		if err != nil {
			return err
		}
		for _, pr := range pl.pairs {
			// F(s) = −log p with the fixed coordinate up by s and the
			// term's down by s: F′(0) = −pg_c + Σ pg_j, F″ = Σ h_jj.
			g, hh := -pg[pr[0]], hp.At(pr[0], pr[0])
			for _, j := range pr[1:] {
				g += pg[j]
				hh += hp.At(j, j)
			}
			if !(hh > 0) {
				continue
			}
			s := -g / hh
			theta[pr[0]] += s
			for _, j := range pr[1:] {
				theta[j] -= s
			}
		}
		return nil
	}
	sweep := func() (float64, error) {
		var big float64
		for gr := range pl.nGroups {
			b, err := update(gr)
			if err != nil {
				return 0, err
			}
			big = math.Max(big, b)
		}
		return big, shift()
	}
	lastSaid := time.Now()
	for round := range 50 {
		if _, err := sweep(); err != nil {
			return nil, nil, passes, fmt.Errorf("Laplace-EM (backfitting) round %d: %w", round, err)
		}
		var moved float64
		for tm := range lay.NumTerms() {
			_, _, start, stride, levels, lt := lay.Term(tm)
			if levels == 0 {
				continue
			}
			var s float64
			for g := range levels {
				j := start + g*stride
				s += theta[j]*theta[j] + variance[j]
			}
			lg := math.Max(math.Log(s/float64(levels))/2, -10)
			moved = math.Max(moved, math.Abs(lg-theta[lt]))
			theta[lt] = lg
		}
		if time.Since(lastSaid) >= 2*time.Second {
			lastSaid = time.Now()
			(*exactmh.Choice)(nil).Progress(ctx, "Laplace-EM round %d (backfitting, %d passes): the log scales moved up to %.3g (it stops below 0.01, at most 50 rounds)", round+1, passes, moved)
		}
		if moved < 1e-2 {
			break
		}
	}
	// The mode given the final scales: sweeps until no block moves by
	// more than 10⁻³ of its conditional sd (at most 50).
	for range 50 {
		big, err := sweep()
		if err != nil {
			return nil, nil, passes, err
		}
		if big < 1e-3 {
			break
		}
	}
	sd = make([]float64, d)
	if hp, err = t.SparseHessianOf(ph, theta); err != nil {
		return nil, nil, passes, err
	}
	for j, b := range pl.blocks {
		if b >= 0 {
			sd[j] = math.Sqrt(variance[j])
		} else {
			sd[j] = 1 / math.Sqrt(math.Max(hp.At(j, j), 1e-12))
		}
	}
	return theta, sd, passes, nil
}

// blockPolicy is backfitCenter's block step: one Newton step given the
// other blocks, untested (Gauss–Seidel has no line search: the sweep is
// the outer loop), shortened to at most 1 in every coordinate far from
// the mode.
var blockPolicy = newton.Policy{LineSearch: newton.None, MaxStep: 1, DecTol: math.NaN(), MaxIterations: 1}

// errNoValue is what a block's objective says if asked its value: the
// block step (blockPolicy) never is.
var errNoValue = errors.New("the backfitting block step has no objective value")

// blockHessian is a block's m×m Hessian h (row-major) and its Cholesky
// factor l; where h is not positive definite, the factor of its diagonal
// (floored at 10⁻⁸) put over the partial factor, a step that still
// descends (Factor then returns 1).
type blockHessian struct {
	h, l []float64
	m    int
}

func (f *blockHessian) Factor() (float64, error) {
	m := f.m
	f.l = append(f.l[:0], f.h...)
	if cholesky(f.l, m) {
		return 0, nil
	}
	for a := range m { // not positive definite: a diagonal step
		f.l[a*m+a] = math.Max(f.h[a*m+a], 1e-8)
	}
	cholesky(f.l, m)
	return 1, nil
}

func (f *blockHessian) Solve(dst, b []float64) error {
	copy(dst, b)
	forwardSub(f.l, f.m, dst)
	backSub(f.l, f.m, dst)
	return nil
}

// denseInvDiag returns ((LLᵀ)⁻¹)_aa = ‖L⁻¹e_a‖², L the lower factor in l.
func denseInvDiag(l []float64, m, a int) float64 {
	x := make([]float64, m)
	x[a] = 1
	var s float64
	for i := a; i < m; i++ {
		v := x[i]
		for k := a; k < i; k++ {
			v -= l[i*m+k] * x[k]
		}
		x[i] = v / l[i*m+i]
		s += x[i] * x[i]
	}
	return s
}

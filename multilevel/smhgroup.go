// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/distinct"
	"github.com/exactmh/exactmh/internal/vec"
	"github.com/exactmh/exactmh/sparse"
)

// GroupSMH is SMH-2 (see exactmh.SMH) for GLMs with sparse rows whose
// columns fall into blocks — a multilevel model's fixed effects, and each
// group's effects — with both halves of the step made sparse: the
// control-variate factor from the energy's sparse Hessian at Center, in
// O(nnz(H)) per step, and each datum's remainder bounded by how far its
// own blocks moved (Σ_b w_ib(δ_b³ + δ′_b³)), so a datum of group g is
// bounded by how far β and u_g moved, not by the largest move of any
// group, and drawn by Poisson thinning in two stages (a block, then a
// datum from its alias table). The derivation, the detailed-balance
// argument and the tests and mutants that check it are in
// docs/multilevel.md, section "GroupSMH".
//
// Blocks assigns each coordinate of θ its block (0, 1, …) or −1 for a
// coordinate that no row holds (a log scale τ, read only by the prior);
// a row's entry in such a coordinate is an error at Start. The package
// model's MultilevelPrior.Blocks gives the blocks of a multilevel model.
//
// The bound needs sup|f‴| finite on the whole line: the logistic and
// probit families (and the Gaussian, whose remainders vanish); a Poisson
// energy is refused at Start with ErrNoBound.
//
// It is exact for every centre and every partition into blocks; the
// centre only sets the cost. A step costs O(d + #blocks) plus O(log
// #blocks) per datum drawn; memory is O(N·blocks per row) for the bounds
// and per-datum expansions, O(nnz(H)) for the Hessian.
type GroupSMH struct {
	// Center is θ̂, the expansion point (nil: the Laplace-EM centre of a
	// multilevel posterior, as GroupGibbs's; then a nil Proposal is the
	// RandomWalk scaled by the standard deviations there, and a nil Free
	// those standard deviations).
	Center []float64
	// Blocks maps each coordinate of θ to its block, or −1 (nil: the
	// multilevel prior's Blocks).
	Blocks []int32
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal exactmh.Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// MaxRate is the expected batch above which the step is full MH (0: N;
	// +Inf: never).
	MaxRate float64
	// Free, if not nil (len d), adds after every transition FreeSteps
	// random-walk Metropolis updates of the coordinates that no row holds
	// (Blocks −1: a multilevel model's log scales), jointly, with step
	// (2.38/√k)·Free_j for the k such coordinates. Their full conditional
	// involves the prior alone, so each update reads no datum and costs two
	// prior evaluations; the composition of the two π-invariant kernels is
	// π-invariant. It lets the scales follow the effects, which a proposal
	// around a fixed Gaussian does poorly (the funnel of a centred
	// multilevel model).
	Free []float64
	// FreeSteps is the number of those updates per transition (0: 5).
	FreeSteps int
	// ExactBelow, if positive, takes the data of every block with fewer
	// than ExactBelow data (a multilevel model's small groups) out of the
	// thinning: their remainders join the control-variate factor, computed
	// exactly at every step (their energies read every step). A small
	// group's effects move by a large posterior standard deviation, where
	// its data's remainders are large and of both signs: factorised one
	// by one, each positive one may reject, while in the one factor they
	// largely cancel. Any choice is exact; this one trades data read per
	// step for acceptance.
	ExactBelow int

	// Test hooks (export_test.go), nil in every real kernel: the centre
	// of the control-variate sums g and H (nil: Center), and the bound φ_i
	// the thinning uses from datum i's blocks (nil: all of them) — a hook
	// set also clips the thinning probability to 1 and skips the check of
	// |r_i| ≤ φ_i, as a silently wrong kernel would.
	sumCenter func(center []float64) []float64
	blockMask func(b int32) bool
}

// Name returns "GroupSMH".
func (GroupSMH) Name() string { return "GroupSMH" }

// Exact returns true.
func (GroupSMH) Exact() bool { return true }

// DefaultTargetAccept is SMH's 0.234.
func (GroupSMH) DefaultTargetAccept() float64 { return 0.234 }

// groupTerms is what GroupSMH precomputes at the centre, shared by the
// run's chains.
type groupTerms struct {
	e       SparseRowGLM
	center  []float64
	nBlock  int
	exact   []int32        // the data evaluated at every step (ExactBelow)
	gradSum []float64      // Σ∇U_i(θ̂)
	hess    *sparse.SymCSC // Σ∇²U_i(θ̂), lower triangle
	exp     []taylor       // per datum: ẑ_i, f′, f″ (b unused)
	// Datum i's blocks and weights w_ib: dBlock, dW[dPtr[i]:dPtr[i+1]].
	dPtr   []int
	dBlock []int32
	dW     []float64
	// Block b's data and their alias columns:
	// bRec[bPtr[b]:bPtr[b+1]], and S_b = Σ_i w_ib.
	bPtr []int
	bRec []groupRec
	sumW []float64
}

// groupRec is one column of a block's alias table: its datum, the
// probability of keeping it and its alias (an offset within the block).
type groupRec struct {
	prob  float64
	datum int32
	alias int32
}

// Start checks the configuration and precomputes the terms at the centre
// (one pass over the data, the energy's sparse Hessian there).
func (k GroupSMH) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	name := k.Name()
	if k.Center == nil {
		c, sd, err := defaultMultilevelCenter(name, t)
		if err != nil {
			return nil, err
		}
		k.Center = c
		if k.Proposal == nil {
			k.Proposal = exactmh.RandomWalk{Sigma: sd}
			if k.Free == nil {
				k.Free = sd
			}
		}
	}
	w, err := exactmh.NewWalk(name, t, k.Proposal, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	d := t.Dim()
	if k.Blocks == nil {
		lay, err := targetMultilevel(name, t)
		if err != nil {
			return nil, err
		}
		if k.Blocks, err = shared(t, "multilevel/blocks", func() ([]int32, error) { return lay.Blocks(), nil }); err != nil {
			return nil, err
		}
	}
	if len(k.Center) != d {
		return nil, fmt.Errorf("%s: len(Center) = %d, want %d", name, len(k.Center), d)
	}
	if err := vec.FiniteVec(name+": Center", k.Center); err != nil {
		return nil, err
	}
	if math.IsInf(t.LogPrior(k.Center), -1) {
		return nil, fmt.Errorf("%s: Center = %v outside the prior's support", name, k.Center)
	}
	if len(k.Blocks) != d {
		return nil, fmt.Errorf("%s: len(Blocks) = %d, want the dimension %d", name, len(k.Blocks), d)
	}
	if k.MaxRate < 0 || math.IsNaN(k.MaxRate) {
		return nil, fmt.Errorf("%s: MaxRate = %v, want ≥ 0 (0: N, +Inf: never fall back)", name, k.MaxRate)
	}
	terms, err := shared(t, fmt.Sprintf("smhgroup/%p/%p/%d", &k.Center[0], &k.Blocks[0], k.ExactBelow), func() (*groupTerms, error) {
		return newGroupTerms(name, t, k)
	})
	if err != nil {
		return nil, err
	}
	if k.Free != nil && len(k.Free) != d {
		return nil, fmt.Errorf("%s: len(Free) = %d, want the dimension %d", name, len(k.Free), d)
	}
	var free []int
	var freeSD []float64
	for j, v := range k.Free {
		if k.Blocks[j] == -1 && v != 0 {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: Free[%d] = %v, want finite ≥ 0", name, j, v)
			}
			free = append(free, j)
			freeSD = append(freeSD, v)
		}
	}
	for q := range freeSD {
		freeSD[q] *= 2.38 / math.Sqrt(float64(len(free)))
	}
	var zeroed [][3]int
	if lay, err := targetMultilevel(name, t); err == nil && len(free) > 0 {
		for tm := range lay.NumTerms() {
			_, _, start, stride, levels, lt := lay.Term(tm)
			if lt >= 0 && slices.Contains(free, lt) && levels > 0 {
				zeroed = append(zeroed, [3]int{start, stride, levels})
			}
		}
	}
	steps := k.FreeSteps
	if steps == 0 {
		steps = 5
	}
	if steps < 0 {
		return nil, fmt.Errorf("%s: FreeSteps = %d, want ≥ 0", name, steps)
	}
	// The set of a step's distinct data, sized for min(N, 2048) of them so
	// that the first steps' batches do not grow it (allocating) while
	// they exceed the 32 of newDistinct.
	seen := distinct.NewSized(min(t.N(), 2048))
	c := &groupChain{Walk: w, t: t, theta: w.Position(), next: w.Next(), groupTerms: terms, maxRate: k.MaxRate, seen: seen,
		free: free, freeSD: freeSD, freeSteps: steps, zeroed: zeroed,
		blocks: k.Blocks, mask: k.blockMask,
		delta: make([]float64, terms.nBlock), deltaNew: make([]float64, terms.nBlock),
		cum: make([]float64, terms.nBlock)}
	if c.maxRate == 0 {
		c.maxRate = float64(t.N())
	}
	c.firstFn, c.drawFn, c.factorFn = c.firstFactor, c.draw, c.datumFactor
	return c, nil
}

// newGroupTerms computes GroupSMH's terms at the centre.
func newGroupTerms(name string, t *exactmh.Target, k GroupSMH) (*groupTerms, error) {
	e, hs, err := sparseRowParts(name, t)
	if err != nil {
		return nil, err
	}
	d, n := t.Dim(), t.N()
	nb, err := countBlocks(name, k.Blocks)
	if err != nil {
		return nil, err
	}
	sc := k.Center
	if k.sumCenter != nil {
		sc = k.sumCenter(k.Center)
	}
	g := &groupTerms{e: e, center: slices.Clone(k.Center), nBlock: int(nb), gradSum: make([]float64, d),
		exp: make([]taylor, n), dPtr: make([]int, n+1), sumW: make([]float64, nb)}
	if g.hess, err = hessianAt(t, name, hs, sc, d); err != nil {
		return nil, err
	}
	count := make([]int, nb)
	err = blockRows(name, e, k.Blocks, "Blocks", g.center, sc, g.exp, g.gradSum, false, func(i int, k3 float64, touched []int32, norms []float64) {
		nbi := float64(len(touched))
		for q, b := range touched {
			a := norms[q]
			w := k3 * nbi * nbi * a * a * a / 6
			if w == 0 {
				continue // no remainder (a Gaussian family)
			}
			g.dBlock = append(g.dBlock, b)
			g.dW = append(g.dW, w)
			count[b]++
		}
		g.dPtr[i+1] = len(g.dBlock)
	})
	if err != nil {
		return nil, err
	}
	if err := vec.FiniteVec(name+": Σ∇U_i at Center", g.gradSum); err != nil {
		return nil, err
	}
	// The data of the small blocks, evaluated exactly, leave the blocks.
	if k.ExactBelow > 0 {
		small := make([]bool, nb)
		for b, c := range count {
			small[b] = c < k.ExactBelow
		}
		for i := range n {
			for q := g.dPtr[i]; q < g.dPtr[i+1]; q++ {
				if small[g.dBlock[q]] {
					g.exact = append(g.exact, int32(i))
					break
				}
			}
		}
		clear(count)
		for i, e := 0, 0; i < n; i++ {
			if e < len(g.exact) && int(g.exact[e]) == i {
				e++
				continue
			}
			for q := g.dPtr[i]; q < g.dPtr[i+1]; q++ {
				count[g.dBlock[q]]++
			}
		}
	}
	// The blocks' data and alias tables.
	g.bPtr = make([]int, nb+1)
	for b := range nb {
		g.bPtr[b+1] = g.bPtr[b] + count[b]
	}
	g.bRec = make([]groupRec, g.bPtr[nb])
	wb := make([]float64, g.bPtr[nb])
	next := slices.Clone(g.bPtr[:nb])
	for i, e := 0, 0; i < n; i++ {
		if e < len(g.exact) && int(g.exact[e]) == i {
			e++
			continue
		}
		for q := g.dPtr[i]; q < g.dPtr[i+1]; q++ {
			b := g.dBlock[q]
			g.bRec[next[b]].datum = int32(i)
			wb[next[b]] = g.dW[q]
			next[b]++
		}
	}
	for b := range int(nb) {
		lo, hi := g.bPtr[b], g.bPtr[b+1]
		if lo == hi {
			continue
		}
		tab, err := alias.New(wb[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("%s: block %d: %w", name, b, err)
		}
		g.sumW[b] = tab.Total()
		for q := range hi - lo {
			p, a := tab.Column(q)
			g.bRec[lo+q].prob, g.bRec[lo+q].alias = p, int32(a)
		}
	}
	return g, nil
}

// groupChain is a GroupSMH chain: the shared walk (θ, θ′, the proposal
// and its scale, the full-batch fallback), its terms and scratch.
type groupChain struct {
	*exactmh.Walk
	t           *exactmh.Target
	theta, next []float64 // the Walk's θ and θ′
	*groupTerms
	maxRate   float64
	blocks    []int32
	mask      func(b int32) bool
	seen      distinct.Set
	delta     []float64 // δ_b³ at θ
	deltaNew  []float64 // δ′_b³ at θ′
	cum       []float64 // cumulative block weights S_b(δ_b³ + δ′_b³)
	free      []int     // the coordinates no row holds that Free updates
	freeSD    []float64 // and their steps
	freeSteps int
	// zeroed lists, for each random-effect term whose log scale is free,
	// its effects' coordinates (start, stride, levels): while all of one
	// term's are exactly 0 the free updates wait (improperFree).
	zeroed [][3]int
	// The step's parts (firstFactor, draw, datumFactor) as functions for
	// Walk.Factorised, made once at Start.
	firstFn  func(float64) (float64, int, error)
	drawFn   func(*rand.Rand, []int, []float64)
	factorFn func(int) (float64, float64, error)
}

// MarshalState returns no state: the chain's whole state is θ, and Start
// recomputes the rest.
func (*groupChain) MarshalState() ([]byte, error) { return nil, nil }

// UnmarshalState accepts only the empty state.
func (*groupChain) UnmarshalState(b []byte) error {
	if len(b) != 0 {
		return fmt.Errorf("the chain has no state beyond θ, but the checkpoint holds %d bytes for it", len(b))
	}
	return nil
}

// Params reports Σ_b S_b.
func (c *groupChain) Params() map[string]float64 {
	var s float64
	for _, v := range c.sumW {
		s += v
	}
	return map[string]float64{"sum_w": s, "blocks": float64(c.nBlock)}
}

// cubes sets dst[b] = ‖(v − θ̂)_b‖₂³ for every block.
func (c *groupChain) cubes(dst, v []float64) {
	clear(dst)
	for j, x := range v {
		if b := c.blocks[j]; b >= 0 {
			r := x - c.center[j]
			dst[b] += r * r
		}
	}
	for b, s := range dst {
		dst[b] = s * math.Sqrt(s)
	}
}

// cvDiff returns Σ_i(Û_i(θ′) − Û_i(θ)) = gᵀs + ½sᵀH(θ′ + θ − 2θ̂), s =
// θ′ − θ, from the lower triangle of H: O(nnz(H)).
func (c *groupChain) cvDiff() float64 {
	h := c.hess
	var lin, quad float64
	for j := range h.N {
		sj := c.next[j] - c.theta[j]
		pj := c.next[j] + c.theta[j] - 2*c.center[j]
		lin += c.gradSum[j] * sj
		for q := h.ColPtr[j]; q < h.ColPtr[j+1]; q++ {
			r := h.RowIdx[q]
			v := h.Val[q]
			if r == j {
				quad += v * sj * pj
				continue
			}
			// H_rj = H_jr: both sᵀ and (θ′ + θ − 2θ̂) sides.
			sr := c.next[r] - c.theta[r]
			pr := c.next[r] + c.theta[r] - 2*c.center[r]
			quad += v * (sj*pr + sr*pj)
		}
	}
	return lin + quad/2
}

// Step makes one transition, then the updates of the free coordinates.
// With those, Info.Accepted says that θ moved (by either), and
// Info.AcceptProb, which warmup adapts the proposal's scale to, is the
// indicator of the GroupSMH step's acceptance (its probability for a full
// MH step), with the smallest positive float64 for 0 where the free
// updates moved θ (an accepted transition has a positive probability).
// The probability given the data drawn would overstate it: a step stops
// at its first rejecting datum, and the CV factor's rejection draws none.
func (c *groupChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	info, err := c.step(rng)
	if err != nil || c.free == nil {
		return info, err
	}
	if !(info.AcceptProb >= 0 && info.AcceptProb <= 1) {
		info.AcceptProb = 0
		if info.Accepted {
			info.AcceptProb = 1
		}
	}
	if c.freeUpdates(rng) {
		info.Accepted = true
		info.AcceptProb = max(info.AcceptProb, math.SmallestNonzeroFloat64)
	}
	return info, nil
}

// freeUpdates makes freeSteps random-walk Metropolis updates of the free
// coordinates, accepted on the prior ratio alone (no row holds them: every
// energy is unchanged), and reports whether one was accepted.
//
// In a state where every effect of a term is exactly 0 (an Init at the
// origin) they wait (improperFree): there the log scale's conditional,
// τ^(1−G)·p(τ) in log τ, is improper, and the walk would take log τ
// toward −∞ (≈ −354 in TestMultilevelOriginInit) before the joint move
// took any effect off 0, after which none could move. Skipping them on
// that set leaves the kernel exact: the set has probability 0 under the
// posterior, so ∫π(dθ)K(θ, A) is unchanged, and the joint move, which
// still runs there, leaves it.
func (c *groupChain) freeUpdates(rng *rand.Rand) (moved bool) {
	if c.improperFree() {
		return false
	}
	lp := c.t.LogPrior(c.theta)
	for range c.freeSteps {
		copy(c.next, c.theta)
		for q, j := range c.free {
			c.next[j] += c.freeSD[q] * rng.NormFloat64()
		}
		lpn := c.t.LogPrior(c.next)
		if r := lpn - lp; r >= 0 || rng.Float64() < math.Exp(r) {
			copy(c.theta, c.next)
			lp = lpn
			moved = true
		}
	}
	return moved
}

// improperFree reports whether every effect of some term in zeroed is
// exactly 0 at θ (freeUpdates). O(effects) with an early exit at the
// first nonzero effect of each term.
func (c *groupChain) improperFree() bool {
	for _, z := range c.zeroed {
		all := true
		for g := range z[2] {
			if c.theta[z[0]+g*z[1]] != 0 {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// step makes the GroupSMH transition.
func (c *groupChain) step(rng *rand.Rand) (exactmh.Info, error) {
	logExact, ok := c.Propose(rng)
	if !ok {
		return exactmh.Info{LogDensity: math.NaN()}, nil
	}
	beta := c.t.Beta()
	c.cubes(c.delta, c.theta)
	c.cubes(c.deltaNew, c.next)
	var rate float64
	for b, s := range c.sumW {
		if c.mask != nil && !c.mask(int32(b)) {
			s = 0
		}
		rate += s * (c.delta[b] + c.deltaNew[b])
		c.cum[b] = rate
	}
	rate *= beta
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return exactmh.Info{}, fmt.Errorf("expected batch βΣφ = %v at θ = %v, θ′ = %v", rate, c.theta, c.next)
	}
	// The factorised step (exactmh.Walk.Factorised), with a full MH step
	// where the expected batch exceeds MaxRate.
	return c.Factorised(rng, logExact, rate, c.maxRate, &c.seen, c.firstFn, c.drawFn, c.factorFn)
}

// firstFactor returns the log of the step's first factor, the
// control-variate factor from the sparse sums with the remainders of the
// data evaluated exactly (c.exact), and how many those are.
func (c *groupChain) firstFactor(logExact float64) (float64, int, error) {
	beta := c.t.Beta()
	log1 := logExact - beta*c.cvDiff()
	for lo := 0; lo < len(c.exact); lo += chunk {
		// The exact data may be most of N: a cancelled run stops within
		// a chunk of them.
		if err := c.t.Interrupted(); err != nil {
			return 0, 0, err
		}
		for _, i := range c.exact[lo:min(lo+chunk, len(c.exact))] {
			c.seen.Add(int(i))
			r, _, err := c.remainderDiff(int(i), beta)
			if err != nil {
				return 0, 0, err
			}
			log1 -= r
		}
	}
	return log1, len(c.exact), nil
}

// draw draws one datum ∝ φ_i, a block then a datum of the block, and its
// thinning uniform.
func (c *groupChain) draw(rng *rand.Rand, group []int, coins []float64) {
	total := c.cum[len(c.cum)-1]
	// x ∈ (0, total]: the first b with cum[b] ≥ x has cum[b−1] < x, a
	// block of positive weight.
	b := sort.SearchFloat64s(c.cum, (1-rng.Float64())*total)
	lo, hi := c.bPtr[b], c.bPtr[b+1]
	q := lo + rng.IntN(hi-lo)
	if rng.Float64() >= c.bRec[q].prob {
		q = lo + int(c.bRec[q].alias)
	}
	group[0] = int(c.bRec[q].datum)
	coins[0] = rng.Float64()
}

// datumFactor returns datum i's change of Taylor remainder βR_i(θ′) −
// βR_i(θ) and its bound βφ_i, checked (unless a test hook masks blocks).
func (c *groupChain) datumFactor(i int) (float64, float64, error) {
	beta := c.t.Beta()
	r, du, err := c.remainderDiff(i, beta)
	if err != nil {
		return 0, 0, err
	}
	bound := beta * c.phi(i)
	if c.mask == nil && math.Abs(r) > bound*(1+boundTol)+1e-12*math.Abs(du) {
		return 0, 0, fmt.Errorf("Taylor remainder: %w", diffViolation(i, r, bound, c.theta, c.next))
	}
	return r, bound, nil
}

// phi returns φ_i = Σ_b w_ib(δ_b³ + δ′_b³) over datum i's blocks (those
// the test hook keeps).
func (c *groupChain) phi(i int) float64 {
	var s float64
	for q := c.dPtr[i]; q < c.dPtr[i+1]; q++ {
		b := c.dBlock[q]
		if c.mask != nil && !c.mask(b) {
			continue
		}
		s += c.dW[q] * (c.delta[b] + c.deltaNew[b])
	}
	return s
}

// remainderDiff returns βR_i(θ′) − βR_i(θ) and βΔU_i = β(U_i(θ′) − U_i(θ)),
// reading row i once.
func (c *groupChain) remainderDiff(i int, beta float64) (r, du float64, err error) {
	c.t.Count(1)
	z, zn := c.e.LinearPredictors(i, c.theta, c.next)
	du = beta * (c.e.Loss(i, zn) - c.e.Loss(i, z))
	if math.IsNaN(du) || math.IsInf(du, 0) {
		return 0, 0, newEnergyError(i, c.theta, c.next, -du)
	}
	return du - beta*c.exp[i].diff(z, zn), du, nil
}

// sparseRowParts returns t's energy as a GLM with sparse rows and its
// sparse Hessian, or an error naming what is missing.
func sparseRowParts(name string, t *exactmh.Target) (SparseRowGLM, exactmh.SparseHessianer, error) {
	e, ok := t.Energy().(SparseRowGLM)
	if !ok {
		return nil, nil, fmt.Errorf("%s: energy %T is not a GLM with sparse rows (implement SparseRowGLM): it needs a multilevel model (model.NewMultilevel, or (1|group) terms in the exactmh command)", name, t.Energy())
	}
	hs, ok := t.Energy().(exactmh.SparseHessianer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: energy %T has no sparse Hessian (implement SparseHessian)", name, t.Energy())
	}
	return e, hs, nil
}

// blockRows makes the pass over the data GroupSMH and GroupGibbs start
// with: for each datum i, its second-order expansion at center (exp[i]),
// ∇U_i at sc added into gradSum, and visit(i, sup|f‴_i| (A_i(ẑ_i) with
// growth, see datumExpansion), touched, norms)
// with the blocks its row has a nonzero entry in and their norms a_ib =
// ‖x_i,b‖₂ (touched[q], norms[q]; the slices are reused). A column out of
// range or in no block (blocksName, −1) is an error naming the row.
func blockRows(name string, e SparseRowGLM, blocks []int32, blocksName string, center, sc []float64, exp []taylor, gradSum []float64, growth bool,
	visit func(i int, k3 float64, touched []int32, norms []float64)) error {
	var rb rowBlocks
	rb.init(blocks)
	for i := range e.Len() {
		x, k3, err := datumExpansion(name, e, i, center, growth)
		if err != nil {
			return err
		}
		if exp != nil {
			exp[i] = x
		}
		if err := rb.load(name, e, blocks, blocksName, i); err != nil {
			return err
		}
		zs, _ := e.LinearPredictors(i, sc, sc)
		fs1, _ := e.LossDerivs(i, zs)
		for q, c := range rb.cols {
			gradSum[c] += fs1 * rb.vals[q]
		}
		visit(i, k3, rb.touched, rb.norms)
	}
	return nil
}

// datumK3 returns sup|f‴_i| over the line.
func datumK3(e SparseRowGLM, i int) float64 { return e.LossBound(i, 3, math.Inf(-1), math.Inf(1)) }

// rowBlocks is a row's blocks and their norms a_ib = ‖x_i restricted to
// block b‖, in the order the row first touches them, computed in place
// from the row (GroupGibbs recomputes them for each datum it draws rather
// than storing them per datum).
type rowBlocks struct {
	cols    []int32
	vals    []float64
	touched []int32
	norms   []float64
	sq      []float64 // a_ib² of the current row, by block
}

func (rb *rowBlocks) init(blocks []int32) { rb.sq = make([]float64, countMax(blocks)) }

// load reads row i and fills touched and norms.
func (rb *rowBlocks) load(name string, e SparseRowGLM, blocks []int32, blocksName string, i int) error {
	d := len(blocks)
	rb.cols, rb.vals = e.SparseRow(i, rb.cols[:0], rb.vals[:0])
	rb.touched = rb.touched[:0]
	for q, c := range rb.cols {
		if int(c) >= d || c < 0 {
			return fmt.Errorf("%s: row %d has column %d, want < %d", name, i, c, d)
		}
		b := blocks[c]
		if b < 0 {
			return fmt.Errorf("%s: row %d has an entry in column %d, which %s leaves out (−1)", name, i, c, blocksName)
		}
		if rb.sq[b] == 0 && rb.vals[q] != 0 {
			rb.touched = append(rb.touched, b)
		}
		rb.sq[b] += rb.vals[q] * rb.vals[q]
	}
	rb.norms = rb.norms[:0]
	for _, b := range rb.touched {
		rb.norms = append(rb.norms, math.Sqrt(rb.sq[b]))
		rb.sq[b] = 0
	}
	return nil
}

// countMax returns the number of blocks of a partition countBlocks has
// checked (the largest entry plus one).
func countMax(blocks []int32) int {
	var nb int32
	for _, b := range blocks {
		nb = max(nb, b+1)
	}
	return int(nb)
}

// countBlocks checks a partition into blocks (each entry ≥ −1, some ≥ 0)
// and returns the number of blocks.
func countBlocks(name string, blocks []int32) (int32, error) {
	nb := int32(0)
	for j, b := range blocks {
		if b < -1 {
			return 0, fmt.Errorf("%s: Blocks[%d] = %d, want a block ≥ 0 or −1", name, j, b)
		}
		nb = max(nb, b+1)
	}
	if nb == 0 {
		return 0, fmt.Errorf("%s: Blocks has no block (every coordinate −1)", name)
	}
	return nb, nil
}

// hessianAt returns the energy's sparse Hessian at θ, checked to be a
// well-formed finite d×d matrix, or errInterrupted once t's run is
// cancelled (Target.sparseHessian).
func hessianAt(t *exactmh.Target, name string, hs exactmh.SparseHessianer, theta []float64, d int) (*sparse.SymCSC, error) {
	h, err := t.SparseHessianOf(hs, theta)
	return checkHessian(name, d, h, err)
}

// onceHessianer is an energy that can compute its sparse Hessian without
// keeping its pattern afterwards (model.SparseGLM.SparseHessianOnce).
type onceHessianer interface {
	SparseHessianOnce(theta []float64, stop func() bool) (*sparse.SymCSC, error)
}

// hessianOnce is hessianAt for a caller that keeps the matrix in its own
// form: through the energy's SparseHessianOnce when it has one, so the
// energy holds no pattern of the Hessian beside the caller's copy.
func hessianOnce(t *exactmh.Target, name string, hs exactmh.SparseHessianer, theta []float64, d int) (*sparse.SymCSC, error) {
	o, ok := hs.(onceHessianer)
	if !ok {
		return hessianAt(t, name, hs, theta, d)
	}
	if err := t.Interrupted(); err != nil {
		return nil, err
	}
	h, err := o.SparseHessianOnce(theta, func() bool { return t.Interrupted() != nil })
	if err != nil {
		if ie := t.Interrupted(); ie != nil {
			return nil, ie
		}
	}
	return checkHessian(name, d, h, err)
}

// checkHessian returns h, a sparse Hessian of dimension d, and err, or
// the error that h is malformed or not finite.
func checkHessian(name string, d int, h *sparse.SymCSC, err error) (*sparse.SymCSC, error) {
	if errors.Is(err, exactmh.ErrInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, within(name, err)
	}
	if h.N != d || len(h.ColPtr) != d+1 || h.ColPtr[d] != len(h.RowIdx) || len(h.RowIdx) != len(h.Val) {
		return nil, fmt.Errorf("%s: SparseHessian returned a malformed %d×%d matrix", name, h.N, h.N)
	}
	if err := vec.FiniteVec(name+": Hessian at Center", h.Val); err != nil {
		return nil, err
	}
	return h, nil
}

// datumExpansion returns datum i's second-order expansion at center and
// sup|f‴_i| over the line, or an error: non-finite derivatives, or no
// finite bound (ErrNoBound).
//
// With growth (GroupGibbs on a family whose f‴ is unbounded but grows at
// most exponentially, exactmh.LossGrowther) the constant returned is A_i(ẑ_i) of
// |f_i‴(z)| ≤ A_i(ẑ_i)·e^{|z − ẑ_i|} instead.
func datumExpansion(name string, e SparseRowGLM, i int, center []float64, growth bool) (taylor, float64, error) {
	z, _ := e.LinearPredictors(i, center, center)
	f1, f2 := e.LossDerivs(i, z)
	if math.IsNaN(f1+f2) || math.IsInf(f1+f2, 0) {
		return taylor{}, 0, fmt.Errorf("%s: datum %d at Center: f′ = %v, f″ = %v, want finite", name, i, f1, f2)
	}
	if growth {
		a, ok := e.(exactmh.LossGrowther).LossGrowth(i, z)
		if !ok || !(a >= 0) || math.IsInf(a, 0) {
			return taylor{}, 0, fmt.Errorf("%s: %w: datum %d: LossGrowth at ẑ = %v is %v, want finite ≥ 0", name, exactmh.ErrNoBound, i, z, a)
		}
		return taylor{zHat: z, f1: f1, f2: f2}, a, nil
	}
	k3 := datumK3(e, i)
	if !(k3 >= 0) || math.IsInf(k3, 0) {
		return taylor{}, 0, fmt.Errorf("%s: %w: datum %d: sup|f‴| over the line is %v, want finite ≥ 0 (GroupGibbs also takes a family whose f‴ grows at most exponentially, with LossGrowth)", name, exactmh.ErrNoBound, i, k3)
	}
	return taylor{zHat: z, f1: f1, f2: f2}, k3, nil
}

// A GroupSMH transition changes the chain only once decided (its free
// updates come after): a cancelled full-batch step, exact reads or
// minibatch leave it as it was.
// AbandonStep undoes nothing: a step changes θ only after its last read.
func (c *groupChain) AbandonStep() {}

var _ interface{ AbandonStep() } = (*groupChain)(nil)

// The capabilities GroupSMH declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k GroupSMH) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k GroupSMH) WithScale(s float64) exactmh.Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k GroupSMH) Proposer() exactmh.Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k GroupSMH) WithProposal(p exactmh.Proposal) exactmh.Kernel {
	k.Proposal = p
	return k
}

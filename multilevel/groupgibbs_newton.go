// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

// The fixed blocks' Newton proposal (GroupGibbs.FixedNewton;
// docs/multilevel.md, "Fixed blocks by a Newton proposal"): a block of
// fixed effects β_m (block 0, or one split off it) updated by an
// independence proposal from the Laplace approximation of its own
// conditional π(β_m | θ_−m) at the current group effects, not from the
// expansion at the centre. From the centre's β̂_m,
//
//	G = β Σ_i f′_i(z_i) x_im − p_m,   J = β Σ_i f″_i(z_i) x_im x_imᵀ + diag(π_m),
//
// z_i the linear predictors at (β̂_m, θ_−m) and p, π the prior's expansion
// at the centre (its gradient and curvature), one pass over the block's
// data; the proposal is
//
//	β′_m ~ N(μ, J⁻¹),   μ = β̂_m − J⁻¹G,
//
// one Newton step from a start that does not depend on β_m. (μ, J) are
// functions of θ_−m alone, so the proposal is an independence proposal
// for the conditional given θ_−m, and the Metropolis–Hastings ratio
//
//	log r = −β Σ_i (U_i(θ′) − U_i(θ)) + log p(θ′) − log p(θ) + log q(β_m) − log q(β′_m),
//
// log q(b) = −½(b − μ)ᵀJ(b − μ), read exactly in a second pass over the
// block's data, keeps π(β_m | θ_−m) invariant. Where J is not positive
// definite (a non-convex family far from the centre) the update leaves θ
// as it is, which is π-invariant too: the choice is a function of θ_−m.
//
// The expansion's own proposal for β_m has a mean linear in the other
// blocks, with the centre's curvature: with N large and the group effects
// far from the centre, its misfit to the conditional exceeds the
// conditional's sd and almost every proposal is rejected (lme4's Chem97:
// 0.03 accepted). The Newton step uses the curvature and gradient where
// the group effects are, and the conditional, a p-dimensional one of N
// data, is close to Gaussian.

// newtonState is a chain's scratch and counters for the Newton proposal.
type newtonState struct {
	x, g, j, mu, z, d []float64
	zc, xc            []float64 // the first pass's linear predictors at θ and rows' entries in the block (newtonCached)
	cols              []int32
	vals              []float64
	tried, acc        float64
	saved             [2]float64
}

// initNewton allocates the Newton proposal's scratch.
func (c *gibbsChain) initNewton() {
	q := c.qMax
	s := &c.nw
	s.x, s.g, s.mu, s.z, s.d = make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q)
	s.j = make([]float64, q*q)
}

// newtonBlock updates fixed block m by the Newton proposal and returns
// whether it moved and the data it read.
func (c *gibbsChain) newtonBlock(rng *rand.Rand, m int) (bool, int, error) {
	coords := c.bc[c.bcPtr[m]:c.bcPtr[m+1]]
	q := len(coords)
	if q == 0 {
		return false, 0, nil
	}
	s := &c.nw
	beta := c.t.Beta()
	data := c.blockData(int32(m))
	// The Newton step's start: the centre (the newtonFromState mutant:
	// the current β_m, which makes the proposal depend on it).
	for _, j := range coords {
		c.next[j] = c.center[j]
		if c.newtonFromState {
			c.next[j] = c.theta[j]
		}
	}
	x, g, jm := s.x[:q], s.g[:q], s.j[:q*q]
	clear(jm)
	// A block that holds every datum (block 0 with an intercept) reads
	// them all: the sweep's distinct count is N (seenAll), no datum need
	// enter the set. Where its data fit newtonCacheMax, the first pass
	// keeps each datum's linear predictor at θ and its row's entries in
	// the block, and the second pass reads no row (newtonCached).
	all := data.n == c.t.N()
	if all {
		c.seenAll = true
	}
	cache := data.n*(q+1) <= newtonCacheMax
	if cache && len(s.zc) < data.n {
		s.zc, s.xc = make([]float64, data.n), make([]float64, data.n*q)
	}
	for a, j := range coords {
		g[a] = -c.pGrad[j] + c.pPrec[j]*(c.next[j]-c.center[j])
		jm[a*q+a] = c.pPrec[j]
	}
	for lo := 0; lo < data.n; lo += chunk {
		if err := c.t.Interrupted(); err != nil {
			c.revert(coords)
			return false, 0, err
		}
		for r := range min(chunk, data.n-lo) {
			i := data.at(lo + r)
			c.t.Count(1)
			if !all {
				c.seen.Add(i)
			}
			zo, z := c.rows.LinearPredictors(int(i), c.theta, c.next)
			f1, f2 := c.rows.LossDerivs(int(i), z)
			s.cols, s.vals = c.rows.SparseRow(int(i), s.cols[:0], s.vals[:0])
			clear(x)
			for k, col := range s.cols {
				if c.blocks[col] == int32(m) {
					x[c.local[col]] += s.vals[k]
				}
			}
			if cache {
				s.zc[lo+r] = zo
				copy(s.xc[(lo+r)*q:(lo+r+1)*q], x)
			}
			for a := range q {
				if x[a] == 0 {
					continue
				}
				g[a] += beta * f1 * x[a]
				for b := 0; b <= a; b++ {
					jm[a*q+b] += beta * f2 * x[a] * x[b]
				}
			}
		}
	}
	if err := c.rowErr(); err != nil {
		c.revert(coords)
		return false, 0, err
	}
	n := 2 * data.n
	s.tried++
	// J = LLᵀ; μ = start − J⁻¹G.
	if !cholesky(jm, q) {
		c.revert(coords)
		return false, data.n, nil
	}
	mu := s.mu[:q]
	copy(mu, g)
	forwardSub(jm, q, mu)
	backSub(jm, q, mu)
	for a, j := range coords {
		mu[a] = c.next[j] - mu[a]
	}
	for a := range mu {
		if math.IsNaN(mu[a]) || math.IsInf(mu[a], 0) {
			c.revert(coords)
			return false, 0, fmt.Errorf("GroupGibbs: block %d: Newton proposal's mean %v at θ = %v", m, mu, c.theta)
		}
	}
	// β′ = μ + L⁻ᵀz; log q(β′) = −½‖z‖² + const, log q(β) = −½‖Lᵀ(β − μ)‖² + const.
	z, d := s.z[:q], s.d[:q]
	var zz float64
	for a := range z {
		z[a] = rng.NormFloat64()
		zz += z[a] * z[a]
	}
	backSub(jm, q, z)
	for a, j := range coords {
		c.next[j] = mu[a] + z[a]
		d[a] = c.theta[j] - mu[a]
	}
	var dd float64
	for b := range q { // (Lᵀd)_b = Σ_{a ≥ b} L_ab d_a
		var t float64
		for a := b; a < q; a++ {
			t += jm[a*q+b] * d[a]
		}
		dd += t * t
	}
	logQ := (zz - dd) / 2
	if c.newtonNoQ {
		logQ = 0
	}
	lpn := c.t.LogPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) {
		c.revert(coords)
		return false, data.n, nil
	}
	logR := lpn - c.t.LogPrior(c.theta) + logQ
	var sum float64
	if cache {
		dl := s.d[:q] // θ′_m − θ_m
		for a, j := range coords {
			dl[a] = c.next[j] - c.theta[j]
		}
		sum = c.newtonCached(data, q, dl)
	} else {
		for lo := 0; lo < data.n; lo += chunk {
			if err := c.t.Interrupted(); err != nil {
				c.revert(coords)
				return false, 0, err
			}
			for k := lo; k < min(lo+chunk, data.n); k++ {
				i := data.at(k)
				c.t.Count(1)
				zo, zn := c.rows.LinearPredictors(int(i), c.theta, c.next)
				l, ln := c.loss2(int(i), zo, zn)
				sum += ln - l
			}
		}
	}
	if err := c.t.Interrupted(); err != nil {
		c.revert(coords)
		return false, 0, err
	}
	if err := c.rowErr(); err != nil {
		c.revert(coords)
		return false, 0, err
	}
	if math.IsNaN(sum) {
		c.revert(coords)
		return false, 0, fmt.Errorf("GroupGibbs: block %d: energy difference NaN at θ = %v, θ′ = %v", m, c.theta, c.next)
	}
	if !c.decide(rng, logR-beta*sum) {
		c.revert(coords)
		return false, n, nil
	}
	var dn float64
	for _, j := range coords {
		c.theta[j] = c.next[j]
		r := c.next[j] - c.center[j]
		dn += r * r
	}
	c.setDsq(m, dn)
	s.acc++
	return true, n, nil
}

// dataFree makes one more round of the sweep's updates that read no
// datum (GroupGibbs.FreeRepeats): the location moves, the log scales'
// slice updates, the data-free shifts and the nested scale moves, each
// π-invariant, and reports whether one moved θ.
// newtonCacheMax is the most floats a chain keeps for the Newton
// proposal's second pass (newtonCached): a block's data times (q + 1),
// 32 MB.
const newtonCacheMax = 1 << 22

// newtonCached is the second pass of newtonBlock from the first pass's
// cache: Σ_i f_i(z_i + x_imᵀδ) − f_i(z_i) over the block's data, z_i
// their linear predictors at θ and x_im their rows' entries in the block
// (s.zc, s.xc), δ = θ′_m − θ_m. It reads no row: z_i + x_imᵀδ is x_iᵀθ′ + o_i
// up to rounding. It counts an evaluation a datum, as the pass over the
// rows does.
func (c *gibbsChain) newtonCached(data dataList, q int, dl []float64) float64 {
	s := &c.nw
	var sum float64
	for lo := 0; lo < data.n; lo += chunk {
		hi := min(lo+chunk, data.n)
		c.t.Count(hi - lo)
		for r := lo; r < hi; r++ {
			zo := s.zc[r]
			zn := zo
			for a, v := range s.xc[r*q : (r+1)*q] {
				zn += v * dl[a]
			}
			i := data.at(r)
			l, ln := c.loss2(i, zo, zn)
			sum += ln - l
		}
	}
	return sum
}

func (c *gibbsChain) dataFree(rng *rand.Rand) bool {
	moved := c.locationMoves(rng)
	if c.sliceFree(rng) {
		moved = true
	}
	if c.mv == nil {
		return moved
	}
	c.ms.lpOK = false
	if c.shiftMoves(rng) {
		moved = true
		c.deltas()
	}
	for r := range c.mv.nested {
		if c.nestedScaleMove(rng, &c.mv.nested[r]) {
			moved = true
			c.deltas()
		}
	}
	return moved
}

// DefaultNewtonEvery and DefaultFreeRepeats are GroupGibbs's NewtonEvery
// and FreeRepeats where the automatic default finds the fixed block stuck
// (newtonDefault; figures/bench/multilevel_joint.txt, section 4). The
// LEAs' near-zero scale on Chem97, which only the data-free moves carry
// across its funnel, has a bulk ESS (4 × 1,000 draws) of about 110 at
// one repeat, 340–410 at 5 and 520–590 at 10; a repeat is O(d), no datum
// read (figures/bench/multilevel_real_chem97_profile.txt).
const (
	DefaultNewtonEvery = 4
	DefaultFreeRepeats = 10
)

// cachedNewtonEvery is NewtonEvery where the fixed block's data fit the
// Newton update's cache (newtonCacheMax): its second pass then reads no
// row, so an update costs about one pass, not two, and one sweep in two
// reads what one in four does uncached. On Chem97 the covariate's bulk
// ESS follows the updates: about 270 at one sweep in four, 470–700 at
// one in two.
const cachedNewtonEvery = 2

// newtonEveryFor returns the automatic default's NewtonEvery for a
// posterior of n data with q fixed effects in block 0: cachedNewtonEvery
// where n·(q + 1) fits newtonCacheMax (the block's data are at most n),
// DefaultNewtonEvery otherwise.
func newtonEveryFor(n, q int) int {
	if n*(q+1) <= newtonCacheMax {
		return cachedNewtonEvery
	}
	return DefaultNewtonEvery
}

// newtonDefault is the GroupGibbs the automatic default pilots where its
// first pilot finds the fixed block stuck.
func newtonDefault(center []float64) GroupGibbs {
	return GroupGibbs{Center: center, FixedNewton: true, NewtonEvery: DefaultNewtonEvery, FreeRepeats: DefaultFreeRepeats}
}

// grindNewton is grind for GroupGibbs with the Newton proposal k, whose
// sweeps may read 2N/NewtonEvery data more on average (its two passes),
// and the shear moves' reads (shearPasses).
func grindNewton(p *exactmh.Posterior, c *exactmh.ChainResult, k GroupGibbs) string {
	n := p.Len()
	tot := c.Sampling
	allow := gibbsGrind + 2/float64(max(k.NewtonEvery, 1)) + shearPasses(p, c)
	if tot.Steps == 0 || tot.MeanBatch() <= allow*float64(n) {
		return ""
	}
	return fmt.Sprintf("grinds: its pilot read %.3g data per sweep of N = %d (%.3g passes over the data)",
		tot.MeanBatch(), n, tot.MeanBatch()/float64(n))
}

// fixedInBlock0 is the number of coordinates of lay's block 0, the fixed
// effects the Newton update of block 0 moves.
func fixedInBlock0(lay Layout) int {
	q := 0
	for _, b := range lay.Blocks() {
		if b == 0 {
			q++
		}
	}
	return q
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/poisson"
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
	// The thinned test (newtonThin): the start, the data's part of G and
	// J, a and a′ (θ_m and θ′_m less the start), and for each fixed block
	// the cumulative weights of its data (nil: not built; empty: the
	// block is decided by a full pass).
	st, gd, jd, a, an []float64
	cw                [][]float64
	xcFor             int // 1 + the fixed block whose rows' entries xc holds (0: none)
	thinOff, noRem    bool
	thinAll           bool
	tried, acc        float64
	thinned, reads    float64 // updates decided by thinning, the data they read
	saved             [4]float64
}

// initNewton allocates the Newton proposal's scratch.
func (c *gibbsChain) initNewton() {
	q := c.qMax
	s := &c.nw
	s.x, s.g, s.mu, s.z, s.d = make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q)
	s.j = make([]float64, q*q)
	s.st, s.gd, s.a, s.an = make([]float64, q), make([]float64, q), make([]float64, q), make([]float64, q)
	s.jd = make([]float64, q*q)
	s.cw = make([][]float64, c.nb)
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
	for a, j := range coords {
		c.next[j] = c.center[j]
		if c.newtonFromState {
			c.next[j] = c.theta[j]
		}
		s.st[a] = c.next[j]
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
	// The rows' entries in the block do not change: where the cache holds
	// this block's from an earlier pass (xcFor), the pass reads them there
	// and reads no row but for the linear predictors.
	known := cache && s.xcFor == m+1
	if cache && !known {
		s.xcFor = 0
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
			x := x
			if known {
				x = s.xc[(lo+r)*q : (lo+r+1)*q]
			} else {
				s.cols, s.vals = c.rows.SparseRow(int(i), s.cols[:0], s.vals[:0])
				clear(x)
				for k, col := range s.cols {
					if c.blocks[col] == int32(m) {
						x[c.local[col]] += s.vals[k]
					}
				}
				if cache {
					copy(s.xc[(lo+r)*q:(lo+r+1)*q], x)
				}
			}
			if cache {
				s.zc[lo+r] = zo
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
	if cache {
		s.xcFor = m + 1
	}
	n := 2 * data.n
	s.tried++
	// The data's part of G and J, for the thinned test: G less the
	// prior's terms at the start, J less its diagonal.
	gd, jd := s.gd[:q], s.jd[:q*q]
	copy(jd, jm)
	for a, j := range coords {
		gd[a] = g[a] + c.pGrad[j] - c.pPrec[j]*(s.st[a]-c.center[j])
		jd[a*q+a] -= c.pPrec[j]
	}
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
	if cache {
		if w := c.newtonWeights(m, data, q); len(w) > 0 {
			acc, nread, thinned, err := c.newtonThin(rng, data, q, coords, w, logR)
			if err != nil {
				c.revert(coords)
				return false, 0, err
			}
			if thinned {
				if !acc {
					c.revert(coords)
					return false, data.n + nread, nil
				}
				c.acceptNewton(m, coords)
				return true, data.n + nread, nil
			}
		}
	}
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
	c.acceptNewton(m, coords)
	return true, n, nil
}

// acceptNewton moves fixed block m (coords) to its proposal c.next.
func (c *gibbsChain) acceptNewton(m int, coords []int32) {
	var dn float64
	for _, j := range coords {
		c.theta[j] = c.next[j]
		r := c.next[j] - c.center[j]
		dn += r * r
	}
	c.setDsq(m, dn)
	c.nw.acc++
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

// The Newton proposal's thinned test (newtonThin). The first pass has
// each datum's f′_i, f″_i at z_i, its linear predictor at the start
// (β̂_m, θ_−m), and their sums G_d = β Σ_i f′_i x_im, J_d = β Σ_i f″_i
// x_im x_imᵀ (the data's part of G and J). With a = θ_m − β̂_m and
// a′ = θ′_m − β̂_m, each datum's energy difference is
//
//	β(f_i(z_i + x_imᵀa′) − f_i(z_i + x_imᵀa)) = βf′_i·x_imᵀ(a′ − a) + ½βf″_i((x_imᵀa′)² − (x_imᵀa)²) + d_i,
//
// d_i = β(r_i(a′) − r_i(a)), r_i the third-order Taylor remainder at z_i,
// so the data's sum is Q(a′) − Q(a) + Σ_i d_i with Q(a) = G_dᵀa + ½aᵀJ_da
// in O(q²). The update is accepted with probability
//
//	min(1, e^{log R − Q(a′) + Q(a)}) · Π_i min(1, e^{−d_i}),
//
// log R the prior's and the proposal's log ratio (newtonBlock): each
// factor's log is antisymmetric under the exchange of θ and θ′ (G_d, J_d
// and the start depend on θ_−m alone), so the product keeps detailed
// balance (the factorised test of the block updates, docs/multilevel.md
// "Thinning bound"). The data's factor is decided by Poisson thinning:
// |r_i(a)| ≤ F_i|x_imᵀa|³/6 ≤ F_i‖x_im‖³‖a‖³/6 with F_i ≥ sup|f‴_i| over
// the line (LossBound), so |d_i| ≤ b_i = β(‖a‖³ + ‖a′‖³)·w_i, w_i =
// F_i‖x_im‖³/6, symmetric in θ and θ′; K ~ Poisson(Σ_i b_i) data drawn in
// proportion to w_i each pass with probability 1 − max(d_i, 0)/b_i, which
// makes the factor e^{−Σ_i max(d_i, 0)}. A datum's d_i is read from the
// first pass's cache (z_i, x_im) and two losses: the second pass over
// every datum becomes K ≪ N reads. Where the expected K reaches the
// block's data count (a function of θ, θ′ symmetric too) the update reads
// them all as before. Families without a bounded f‴ (the Poisson's) keep
// the full pass. TestGroupGibbsNewtonMutants catches the test with the
// remainders ignored (newtonNoRem).

// newtonWeights returns the cumulative weights w_i of fixed block m's
// data (newtonThin), built from the first pass's cache on the first call,
// or an empty slice where the block is not thinned (a datum without a
// finite bound on f‴, or the newtonThinOff hook).
func (c *gibbsChain) newtonWeights(m int, data dataList, q int) []float64 {
	s := &c.nw
	if s.thinOff {
		return nil
	}
	if s.cw[m] != nil {
		return s.cw[m]
	}
	w := make([]float64, data.n)
	var cum float64
	for r := range data.n {
		f3 := c.rows.LossBound(data.at(r), 3, math.Inf(-1), math.Inf(1))
		if !(f3 >= 0) || math.IsInf(f3, 1) {
			s.cw[m] = []float64{}
			return s.cw[m]
		}
		var nx float64
		for _, v := range s.xc[r*q : (r+1)*q] {
			nx += v * v
		}
		nx = math.Sqrt(nx)
		cum += f3 / 6 * nx * nx * nx
		w[r] = cum
	}
	if c.rowErr() != nil || !(cum > 0) || math.IsInf(cum, 1) {
		s.cw[m] = []float64{}
		return s.cw[m]
	}
	s.cw[m] = w
	return w
}

// newtonThin decides the Newton update of a fixed block (coords, its data
// and cumulative weights w; c.next holds the proposal, logR the prior's
// and the proposal's log ratio) by the thinned test (doc above). It
// returns thinned false, reading nothing, where the expected batch
// reaches the block's data count; otherwise whether it accepted and the
// data it read.
func (c *gibbsChain) newtonThin(rng *rand.Rand, data dataList, q int, coords []int32, w []float64, logR float64) (acc bool, nread int, thinned bool, err error) {
	s := &c.nw
	beta := c.t.Beta()
	a, an := s.a[:q], s.an[:q]
	var na, nn float64
	for k, j := range coords {
		a[k], an[k] = c.theta[j]-s.st[k], c.next[j]-s.st[k]
		na += a[k] * a[k]
		nn += an[k] * an[k]
	}
	na, nn = math.Sqrt(na), math.Sqrt(nn)
	r3 := beta * (na*na*na + nn*nn*nn)
	total := w[len(w)-1]
	rate := r3 * total
	if !(rate < float64(data.n)) && (!s.thinAll || math.IsInf(rate, 1) || math.IsNaN(rate)) {
		return false, 0, false, nil
	}
	s.thinned++
	logR -= newtonQuad(s.gd[:q], s.jd[:q*q], an) - newtonQuad(s.gd[:q], s.jd[:q*q], a)
	if math.IsNaN(logR) || !c.decide(rng, logR) {
		return false, 0, true, nil
	}
	if s.noRem {
		return true, 0, true, nil
	}
	if err := poisson.Check(rate); err != nil {
		return false, 0, true, err
	}
	draws := poisson.Draw(rng, rate)
	for k := range draws {
		r := min(sort.SearchFloat64s(w, (1-rng.Float64())*total), len(w)-1)
		i := data.at(r)
		c.t.Count(1)
		var xa, xn float64
		for b, v := range s.xc[r*q : (r+1)*q] {
			xa += v * a[b]
			xn += v * an[b]
		}
		zo := s.zc[r]
		zs := zo - xa
		f1, f2 := c.rows.LossDerivs(i, zs)
		du := c.rows.Loss(i, zs+xn) - c.rows.Loss(i, zo)
		rd := beta * (du - f1*(xn-xa) - f2*(xn*xn-xa*xa)/2)
		wi := w[r]
		if r > 0 {
			wi -= w[r-1]
		}
		bound := r3 * wi
		if math.IsNaN(rd) || math.Abs(rd) > bound*(1+boundTol)+1e-12*math.Abs(beta*du) {
			if err := c.rowErr(); err != nil {
				return false, 0, true, err
			}
			return false, 0, true, fmt.Errorf("GroupGibbs: Newton update: Taylor remainder: %w", diffViolation(i, rd, bound, c.theta, c.next))
		}
		if rng.Float64()*bound < rd {
			s.reads += float64(k + 1)
			return false, k + 1, true, nil
		}
	}
	s.reads += float64(draws)
	return true, draws, true, nil
}

// newtonQuad returns gᵀa + ½aᵀJa, J's lower triangle read (row-major q×q).
func newtonQuad(g, j, a []float64) float64 {
	q := len(a)
	var s float64
	for k := range q {
		s += g[k]*a[k] + j[k*q+k]*a[k]*a[k]/2
		for b := range k {
			s += j[k*q+b] * a[k] * a[b]
		}
	}
	return s
}

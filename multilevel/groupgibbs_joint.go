// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/exactmh/exactmh/internal/poisson"
	"github.com/exactmh/exactmh/sparse"
)

// The joint location move (GroupGibbs.Joint; docs/multilevel.md, "Joint
// location move"): every coordinate a row holds — the fixed effects and
// all group effects — moved at once given the coordinates no row holds
// (the log scales), by a Crank–Nicolson proposal through the sparse
// Cholesky factor of the Gaussian
//
//	N(θ) ∝ exp(−βÛ(θ) + Q̃(θ)),  Û = gᵀΔ + ½ΔᵀHΔ (Δ = θ − θ̂),
//	Q̃(θ) = −Σ_{effects} θ_j²/(2τ̃_j²) + Σ_{others} (p_jΔ_j − ½π_jΔ_j²),
//
// (p, π the prior's expansion at the centre the fixed block uses; τ̃ the
// effect's scale e^{log τ} rounded to the grid jointTauGrid in log τ):
// precision P = βH + diag(τ̃⁻², π), mean μ solving Pμ = βHθ̂ − βg +
// (p + πθ̂ on the non-effects). The proposal θ′ = μ + ρ(θ − μ) +
// √(1 − ρ²)·ξ, ξ ~ N(0, P⁻¹), is reversible with respect to N, so its
// log q ratio is log N(θ) − log N(θ′), and the Metropolis–Hastings log
// ratio of the conditional π(θ_loc | τ) ∝ e^{−βU(θ)}p(θ) is
//
//	−βΣ_i (R_i(θ′) − R_i(θ)) + [log p(θ′) − log p(θ)] − [Q̃(θ′) − Q̃(θ)],
//
// R_i = U_i − Û_i: the first term is decided as GroupGibbs's blocks decide
// theirs (exactly, or by Poisson thinning), the bracket exactly. N depends
// on the state only through τ̃, a function of the log scales the move
// conditions on, so each τ gives one fixed reversible kernel and the
// move keeps π invariant; the rounding only lets a chain reuse its factor
// while the scales stay in one cell of the grid, and what it changes in
// the prior's Gaussian part is in the exact bracket.
//
// The thinning bound sums over the blocks a row touches: with s_m = ‖θ′_m
// − θ_m‖ and M_b = max(‖Δ_b‖, ‖Δ′_b‖),
//
//	|R_i(θ′) − R_i(θ)| ≤ K_i/2·|a′ − a|·max(|a|, |a′|)²
//	≤ K_i·B_i/2·(Σ_m a_im·s_m)·(Σ_b a_ib²·M_b²) = φ_i,
//
// so Σ_i φ_i = Σ_{pairs (m, b)} s_m·S_mb·M_b², the pairs' sums S_mb the
// blocks' thinning already holds: O(pairs) per move, drawn pair then
// datum as there.

// jointTauGrid is the grid in log τ to which the joint move's proposal
// rounds each scale (its factor is refreshed when a scale leaves its
// cell): a precision at most e^{2·0.005} ≈ 1 % from the current one.
// The bracket of the log ratio carries the difference, ½Σ_j (τ_j⁻² −
// τ̃_j⁻²)(θ′_j² − θ_j²) over the effects, whose spread grows as √G with the
// number of effects moved: a fine grid keeps it small where the joint
// proposal moves every effect.
const jointTauGrid = 0.01

// jointThinMax is the expected batch above which the joint move reads
// its data exactly rather than by thinning. The factorised test's
// acceptance is about exp(−Σ_i max(0, r_i)) over every datum the move
// changes — all of them — against the exact test's exp(−|Σ_i r_i|):
// thinning pays only where the bound's total Σφ_i, which bounds
// Σ max(0, r_i), is a few units (on lme4's VerbAgg, 7,584 data, the
// joint move thinned at ρ = 0.97 accepted 0.05 of its proposals, read
// exactly 0.70). The choice is a function of the rate, symmetric in θ
// and θ′, so either test keeps detailed balance.
const jointThinMax = 3.0

// DefaultJointRho is the Crank–Nicolson autocorrelation ρ of the joint
// location move the automatic default uses (GroupGibbs.JointRho).
const DefaultJointRho = 0.9

// gibbsJoint is what the joint move precomputes, shared by the chains.
type gibbsJoint struct {
	loc  []int32 // the coordinate of each location index, ascending
	pat  *sparse.SymCSC
	src  []int32 // each entry's index in hVal (−1: a diagonal H lacks)
	diag []int   // each location index's diagonal entry
	sym  *sparse.Symbolic
	hth  []float64 // (Hθ̂) by location index
	taus []int32   // the log-scale coordinates the effects read
	// exactOnly: the move's data are always read exactly (a family whose
	// f‴ grows, or data the blocks read exactly, out of the pairs).
	exactOnly bool
	pM        []int32 // each pair's block m
	fix       []int32 // the location indices of the fixed effects (blocks 0 and the split ones)
}

// newGibbsJoint builds the joint move's pattern and symbolic factor.
func newGibbsJoint(name string, g *gibbsTerms, exactData bool) (*gibbsJoint, error) {
	d := len(g.blocks)
	j := &gibbsJoint{exactOnly: g.growth || exactData}
	li := make([]int32, d)
	for c, b := range g.blocks {
		li[c] = -1
		if b >= 0 {
			li[c] = int32(len(j.loc))
			j.loc = append(j.loc, int32(c))
		}
	}
	n := len(j.loc)
	if n == 0 {
		return nil, nil
	}
	pat := &sparse.SymCSC{N: n, ColPtr: make([]int, n+1)}
	j.diag = make([]int, n)
	type ent struct {
		row int32
		src int32
	}
	var col []ent
	for l, c := range j.loc {
		col = col[:0]
		hasDiag := false
		for p := g.hPtr[c]; p < g.hPtr[c+1]; p++ {
			r := li[g.hCol[p]]
			if r < 0 {
				return nil, fmt.Errorf("%s: joint move: the Hessian couples coordinate %d to %d, which no row holds", name, c, g.hCol[p])
			}
			if int(r) >= l {
				col = append(col, ent{r, int32(p)})
				hasDiag = hasDiag || int(r) == l
			}
		}
		if !hasDiag {
			col = append(col, ent{int32(l), -1})
		}
		slices.SortFunc(col, func(a, b ent) int { return int(a.row) - int(b.row) })
		for _, e := range col {
			if e.row == int32(l) {
				j.diag[l] = len(pat.RowIdx)
			}
			pat.RowIdx = append(pat.RowIdx, int(e.row))
			j.src = append(j.src, e.src)
		}
		pat.ColPtr[l+1] = len(pat.RowIdx)
	}
	pat.Val = make([]float64, len(pat.RowIdx))
	j.pat = pat
	sym, err := sparse.Analyze(pat, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: joint move: %w", name, err)
	}
	j.sym = sym
	j.hth = make([]float64, n)
	for l, c := range j.loc {
		var s float64
		for p := g.hPtr[c]; p < g.hPtr[c+1]; p++ {
			s += g.hVal[p] * g.center[g.hCol[p]]
		}
		j.hth[l] = s
	}
	seen := map[int32]bool{}
	for _, c := range j.loc {
		if lt := g.logTau[c]; lt >= 0 && !seen[lt] {
			seen[lt] = true
			j.taus = append(j.taus, lt)
		}
	}
	for l, c := range j.loc {
		if b := g.blocks[c]; b == 0 || int(b) >= g.firstSplit {
			j.fix = append(j.fix, int32(l))
		}
	}
	j.pM = make([]int32, len(g.pBlock))
	for m := range g.nb {
		for p := g.pPtr[m]; p < g.pPtr[m+1]; p++ {
			j.pM[p] = int32(m)
		}
	}
	return j, nil
}

// jointState is a chain's joint-move scratch: its own values of P and
// factor, the grid cell they are for, μ and the proposal's vectors.
type jointState struct {
	a        sparse.SymCSC
	ch       *sparse.Cholesky
	key      []int64 // the grid cells of the scales P is for
	beta     float64
	have, ok bool // a factor was computed for key; P was positive definite
	mu, xi   []float64
	u, v     []float64 // location vectors (the mutant's q ratio)
	sBlk, dn []float64 // per block: s_m, ‖Δ′_b‖²
	cum      []float64
	// The marginal proposal's V = P⁻¹E_β (column-major), the Cholesky
	// factor of Σ_ββ (row-major lower) and two p-vectors.
	vm, sbb, zb, db []float64
	// Counters for Params.
	tried, acc, exact float64
}

// initJoint allocates the chain's joint-move scratch.
func (c *gibbsChain) initJoint() error {
	j := c.jt
	if j == nil {
		return nil
	}
	n := len(j.loc)
	s := &c.js
	s.a = sparse.SymCSC{N: n, ColPtr: j.pat.ColPtr, RowIdx: j.pat.RowIdx, Val: make([]float64, len(j.pat.Val))}
	s.key = make([]int64, len(j.taus))
	s.mu, s.xi, s.u, s.v = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	s.sBlk, s.dn = make([]float64, c.nb), make([]float64, c.nb)
	s.cum = make([]float64, len(c.pBlock))
	if c.jointFixed {
		p := len(j.fix)
		s.vm, s.sbb, s.zb, s.db = make([]float64, p*n), make([]float64, p*p), make([]float64, p), make([]float64, p)
	}
	c.jointFill(c.t.Beta())
	ch, err := j.sym.Factor(&s.a)
	if err != nil {
		// P(τ̃) is not positive definite at this chain's start; refresh
		// retries with every new cell (a factor needs a pattern, so make
		// one from the identity).
		for l := range n {
			s.a.Val[j.diag[l]] = 1
		}
		if ch, err = j.sym.Factor(&s.a); err != nil {
			return fmt.Errorf("GroupGibbs: joint move: %w", err)
		}
		s.have, s.ok = false, false
	}
	s.ch = ch
	return nil
}

// jointCell returns the grid cell of log scale x.
func jointCell(x float64) int64 {
	return int64(math.Round(x / jointTauGrid))
}

// jointTau2 returns τ̃⁻² of a cell.
func jointTau2(k int64) float64 {
	return math.Exp(-2 * float64(k) * jointTauGrid)
}

// jointFill sets P's values and the key for the chain's current scales.
func (c *gibbsChain) jointFill(beta float64) {
	j, s := c.jt, &c.js
	for q, lt := range j.taus {
		s.key[q] = jointCell(c.theta[lt])
	}
	s.beta = beta
	for p, src := range j.src {
		s.a.Val[p] = 0
		if src >= 0 {
			s.a.Val[p] = beta * c.hVal[src]
		}
	}
	for l, cc := range j.loc {
		s.a.Val[j.diag[l]] += c.jointPrec(cc)
	}
}

// jointPrec returns the proposal's prior precision of coordinate cc:
// τ̃⁻² for an effect, the prior expansion's π otherwise.
func (c *gibbsChain) jointPrec(cc int32) float64 {
	if lt := c.logTau[cc]; lt >= 0 {
		return jointTau2(jointCell(c.theta[lt]))
	}
	return c.pPrec[cc]
}

// jointRefresh makes the factor and μ those of the current scales'
// cells, refactoring only when a scale left its cell; it reports whether
// P is positive definite there.
func (c *gibbsChain) jointRefresh(beta float64) bool {
	j, s := c.jt, &c.js
	same := s.have && s.beta == beta
	for q, lt := range j.taus {
		if !same {
			break
		}
		same = s.key[q] == jointCell(c.theta[lt])
	}
	if same {
		return s.ok
	}
	c.jointFill(beta)
	s.have = true
	if err := s.ch.Refactor(&s.a); err != nil {
		s.ok = false
		return false
	}
	s.ok = true
	for l, cc := range j.loc {
		b := beta * (j.hth[l] - c.gradSum[cc])
		if c.logTau[cc] < 0 {
			b += c.pGrad[cc] + c.pPrec[cc]*c.center[cc]
		}
		s.xi[l] = b
	}
	s.ch.Solve(s.mu, s.xi, s.u)
	if c.jointFixed {
		// V = P⁻¹E_β (a column per fixed effect), Σ_ββ = E_βᵀV and its
		// Cholesky factor.
		p := len(j.fix)
		for k, l := range j.fix {
			clear(s.xi)
			s.xi[l] = 1
			col := s.vm[k*len(j.loc) : (k+1)*len(j.loc)]
			s.ch.Solve(col, s.xi, s.u)
			for a, la := range j.fix {
				s.sbb[a*p+k] = col[la]
			}
		}
		if !cholesky(s.sbb, p) {
			s.ok = false
			return false
		}
	}
	return true
}

// jointQPrior returns Q̃(θ) of the location coordinates of th.
func (c *gibbsChain) jointQPrior(th []float64) float64 {
	var q float64
	for _, cc := range c.jt.loc {
		x := th[cc]
		if lt := c.logTau[cc]; lt >= 0 {
			q -= x * x * jointTau2(jointCell(c.theta[lt])) / 2
		} else {
			dd := x - c.center[cc]
			q += c.pGrad[cc]*dd - c.pPrec[cc]*dd*dd/2
		}
	}
	return q
}

// jointMove makes one joint location move and returns whether it was
// accepted and the data read.
func (c *gibbsChain) jointMove(rng *rand.Rand) (bool, int, error) {
	j, s := c.jt, &c.js
	beta := c.t.Beta()
	if !c.jointRefresh(beta) {
		return false, 0, nil
	}
	rho := c.jointRho
	sq := math.Sqrt(1 - rho*rho)
	if c.jointFixed {
		c.jointShear(rng, rho, sq)
	} else {
		s.ch.NormalInto(rng, s.xi)
		for l, cc := range j.loc {
			c.next[cc] = s.mu[l] + rho*(c.theta[cc]-s.mu[l]) + sq*s.xi[l]
		}
	}
	s.tried++
	lpn := c.t.LogPrior(c.next)
	if math.IsInf(lpn, -1) || math.IsNaN(lpn) {
		c.jointRevert()
		return false, 0, nil
	}
	logExact := lpn - c.t.LogPrior(c.theta) - (c.jointQPrior(c.next) - c.jointQPrior(c.theta))
	if c.jointNoQ {
		// Mutant: the log q ratio log N(θ) − log N(θ′) dropped.
		for l, cc := range j.loc {
			s.u[l], s.v[l] = c.next[cc], c.theta[cc]
		}
		logExact -= (s.a.Quad(s.u, s.mu) - s.a.Quad(s.v, s.mu)) / 2
	}
	// s_m², ‖Δ′_b‖² per block.
	clear(s.sBlk)
	clear(s.dn)
	for _, cc := range j.loc {
		b := c.blocks[cc]
		d := c.next[cc] - c.theta[cc]
		r := c.next[cc] - c.center[cc]
		s.sBlk[b] += d * d
		s.dn[b] += r * r
	}
	for b := range s.sBlk {
		s.sBlk[b] = math.Sqrt(s.sBlk[b])
		c.fac[b] = math.Max(c.dsq[b], s.dn[b])
		if c.jointIgnore >= 0 && int32(b) == c.jointIgnore || c.jointIgnore == -2 && b > 0 {
			s.sBlk[b] = 0 // mutant: a bound that ignores a block's move
		}
	}
	c.classFac()
	n := c.rows.Len()
	var rate float64
	if !j.exactOnly {
		for p, m := range j.pM {
			if w := c.pS[p]; w > 0 {
				rate += w * s.sBlk[m] * c.fac[c.pBlock[p]]
			}
			s.cum[p] = rate
		}
		rate *= beta
		if !(rate >= 0) || math.IsInf(rate, 1) {
			return false, 0, fmt.Errorf("GroupGibbs: joint move: expected batch %v at θ = %v", rate, c.theta)
		}
	}
	thinMax := float64(jointThinMax)
	if c.jointThinAll {
		thinMax = float64(n)
	}
	if j.exactOnly || rate >= thinMax {
		var sum float64
		for lo := 0; lo < n; lo += chunk {
			if err := c.t.Interrupted(); err != nil {
				return false, 0, err
			}
			for i := lo; i < min(lo+chunk, n); i++ {
				c.seen.Add(i)
				r, _, _, err := c.remainderDiff(i, beta)
				if err != nil {
					return false, 0, err
				}
				sum += r
			}
		}
		if math.IsNaN(sum) {
			return false, 0, fmt.Errorf("GroupGibbs: joint move: remainder difference NaN at θ = %v, θ′ = %v", c.theta, c.next)
		}
		s.exact++
		if c.decide(rng, logExact-sum) {
			return c.jointAccept(), n, nil
		}
		c.jointRevert()
		return false, n, nil
	}
	if logExact < 0 && rng.Float64() >= math.Exp(logExact) {
		c.jointRevert()
		return false, 0, nil
	}
	if err := poisson.Check(rate); err != nil {
		return false, 0, err
	}
	draws := poisson.Draw(rng, rate)
	np := len(j.pM)
	total := 0.0
	if np > 0 {
		total = s.cum[np-1]
	}
	for k := range draws {
		p := sort.SearchFloat64s(s.cum[:np], (1-rng.Float64())*total)
		i := c.pairDatum(rng, p)
		c.seen.Add(i)
		rd, du, kf, err := c.remainderDiff(i, beta)
		if err != nil {
			return false, 0, err
		}
		if err := c.loadRow(i); err != nil {
			return false, 0, err
		}
		if err := c.rowErr(); err != nil {
			return false, 0, err
		}
		var bound float64
		if c.cls != nil && !c.crossNoCorr {
			// Σ_m s_m·Σ_p w̃_ip·F_p over the datum's pairs (m, p), w̃ its
			// coded weights (groupgibbs_cross.go).
			for _, m := range c.rb.touched {
				bound += s.sBlk[m] * c.codedPhi(m, kf, c.fac)
			}
			bound *= beta
		} else {
			var as, af float64
			if c.cls != nil {
				// The mutant: each partner's own factor, uncoded weights.
				as = 1
				for q, m := range c.rb.touched {
					var f float64
					for r, b := range c.rb.touched {
						f += c.rb.norms[r] * c.rb.norms[r] * c.partnerFac(m, b)
					}
					af += c.rb.norms[q] * s.sBlk[m] * f
				}
			} else {
				for q, b := range c.rb.touched {
					a := c.rb.norms[q]
					as += a * s.sBlk[b]
					af += a * a * c.fac[b]
				}
			}
			bound = beta * kf * float64(len(c.rb.touched)) / 2 * as * af
		}
		if c.jointIgnore == -1 && math.Abs(rd) > bound*(1+boundTol)+1e-12*math.Abs(du) {
			return false, 0, fmt.Errorf("GroupGibbs: joint move: Taylor remainder: %w", diffViolation(i, rd, bound, c.theta, c.next))
		}
		if rng.Float64()*bound < rd {
			c.jointRevert()
			return false, k + 1, nil
		}
	}
	return c.jointAccept(), draws, nil
}

// jointShear sets next to the marginal proposal: the fixed effects by
// Crank–Nicolson on their marginal N(μ_β, Σ_ββ) under N, β′ = μ_β +
// ρ(β − μ_β) + √(1 − ρ²)ξ_β, and every location coordinate shifted by
// VΣ_ββ⁻¹(β′ − β), V = P⁻¹E_β: the group effects follow their
// conditional mean under N, E[u | β′] − E[u | β], their deviation from
// it unchanged (a shear, of unit Jacobian). The move is reversible with
// respect to N, with the log q ratio log N(θ) − log N(θ′) as the joint
// proposal's.
func (c *gibbsChain) jointShear(rng *rand.Rand, rho, sq float64) {
	j, s := c.jt, &c.js
	p, n := len(j.fix), len(j.loc)
	z := s.zb[:p]
	for a := range z {
		z[a] = rng.NormFloat64()
	}
	// ξ_β = L_ββz; δ = β′ − β.
	d := s.db[:p]
	for a := range p {
		var v float64
		for b := 0; b <= a; b++ {
			v += s.sbb[a*p+b] * z[b]
		}
		l := j.fix[a]
		beta := c.theta[j.loc[l]]
		d[a] = s.mu[l] + rho*(beta-s.mu[l]) + sq*v - beta
	}
	// η = Σ_ββ⁻¹δ in place, then θ′ = θ + Vη.
	forwardSub(s.sbb, p, d)
	backSub(s.sbb, p, d)
	for l, cc := range j.loc {
		v := c.theta[cc]
		for k := range p {
			v += s.vm[k*n+l] * d[k]
		}
		c.next[cc] = v
	}
}

func (c *gibbsChain) jointAccept() bool {
	for _, cc := range c.jt.loc {
		c.theta[cc] = c.next[cc]
	}
	copy(c.dsq, c.js.dn)
	c.dsqChanged()
	c.js.acc++
	return true
}

func (c *gibbsChain) jointRevert() {
	for _, cc := range c.jt.loc {
		c.next[cc] = c.theta[cc]
	}
}

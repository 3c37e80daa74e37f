// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package localgibbs is an exact Metropolis-within-Gibbs kernel for a
// posterior whose data each depend on a few coordinates of θ besides a
// handful that every datum reads: a multilevel model written as a plain
// Energy (issue 43's custom row: 5 fixed effects read by every datum, 500
// group effects read by 200 data each), where no GLM contract gives
// control variates and a full-batch move of all d coordinates pays a pass
// over the data for one accept-reject.
//
// A transition updates the global block (the coordinates more than
// GlobalShare of the data read) by GlobalMoves Metropolis–Hastings moves,
// each over all the data, then each other ("local") coordinate in turn by one move that
// reads only its own data: the local sweep costs one pass over the data
// in all, however many coordinates it moves. Every move is a
// Crank–Nicolson proposal about the Laplace approximation's conditional
// Gaussian of what it moves given the rest (mean m, precision block
// H_BB), θ′_B = m + ρ(θ_B − m) + √(1 − ρ²)·H_BB^{−1/2}z, which is
// reversible with respect to that Gaussian, so the Metropolis–Hastings
// ratio is π(θ′)N(θ_B; m)/(π(θ)N(θ′_B; m)) (Tierney 1994 for the
// composition of such moves). A negative ρ (DefaultRho) makes the moves
// antithetic: on a near-Gaussian conditional successive draws are
// negatively correlated and the bulk ESS per draw exceeds one.
//
// The kernel keeps each datum's energy at the current θ, so a move reads
// each of its data once (Target.Energies at θ′), not twice; under a prior
// that is a product of one-dimensional ones (CoordinatePrior: package
// model's Gaussian and Flat) a local move's prior ratio is one term, not
// the whole log prior's d. Which data a
// coordinate's move reads is its dependence pattern, read at Start from
// each datum's gradient at θ0 and at a second point (a datum whose gradient
// has a non-zero entry j at either depends on θ_j): the kernel is exact
// when that pattern holds everywhere — U_i does not depend on θ_j where
// both gradients' entry j is zero, as for any energy written as a sum over
// data of functions of their own coordinates (a multilevel linear
// predictor). An energy whose dependence changes with θ (a max, a
// piecewise term flat at both points) breaks that assumption.
//
// The moves' conditional Gaussians are centred on the Laplace
// approximation's conditional means (μ(θ_L) for the global block, m_j(θ_{−j})
// for a local coordinate), which lie at the joint mode's side of the
// posterior: on issue 43's custom row the fixed effects' posterior means
// are 0.15–0.3 sd from their joint mode, and the global moves accept 0.82
// of their proposals. During an adapted warmup the chain therefore
// estimates, from the warmup's transitions from the RecentreFrom-th on,
// the mean s of θ_G − μ(θ_L) (and of θ_j − m_j(θ_{−j}) for each local
// coordinate) by a gradient control variate (adaptCentre: a gradient pass
// a warmup transition), and when warmup ends moves each centre by its s,
// clipped to MaxShift conditional sds (WarmupAware). The proposal
// θ′_G = c + ρ(θ_G − c) + √(1 − ρ²)·L⁻ᵀz about c = μ(θ_L) + s is
// reversible with respect to N(c, H_GG⁻¹), whose density ratio the
// acceptance carries, so with s fixed every draw comes from one exact
// Metropolis–Hastings kernel (TestLocalGibbsRecentred catches the ratios
// taken at the unshifted centres, global or local, and a centre that
// moves with the chain during sampling). The kernel adapts no step scale
// or metric, so its warmup is burn-in and this estimate: it ends after
// exactmh.MinBurnIn transitions (exactmh.WarmupSettler;
// TestLocalGibbsWarmupSettles), the draws all made.
//
// A run's chains need not estimate the shifts again where a pilot chain of
// the kernel did: FromPilot (exactmh.PilotSeeder) returns the kernel with
// that chain's frozen shifts fixed (Shift), its chains' warmup then
// burn-in alone, with no gradient pass; the automatic default runs its
// winning pilot's so (TestLocalGibbsSeeded).
//
// Imported, the package registers the kernel (exactmh.Register) as a
// candidate of the automatic default (KernelInfo.FromLaplace: Applies)
// on a posterior that is not a GLM, where the dependence pattern read at
// the Laplace approximation's mean puts at least half the coordinates in
// the local sweep and its reads are at most LocalReadsMax passes.
package localgibbs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

// DefaultRho is the Crank–Nicolson coefficient of Kernel's moves when its
// Rho is 0: antithetic, the best of ρ ∈ {0, −0.3, −0.5, −0.7} by min bulk
// ESS on issue 43's custom row at N = 2·10⁴ (figures/bench/default_table.txt).
const DefaultRho = -0.5

// DefaultGlobalMoves is the global block's moves a transition when
// Kernel.GlobalMoves is 0. One: on issue 43's custom row two moves (the
// global block accepts 0.8 of its proposals, the local moves 0.99) raised
// the min bulk ESS from 2,683 to 2,811 for half as much again CPU
// (figures/bench/default_table.txt).
const DefaultGlobalMoves = 1

// DefaultGlobalShare is the share of the data above which a coordinate is
// read by so many data that it moves in the global block.
const DefaultGlobalShare = 0.25

// MaxShift bounds each re-centring shift, in its coordinate's Laplace
// conditional sd 1/√H_jj: a shift is the mean of 100 warmup terms or so,
// and a centre moved far off would leave the chain stuck where the
// proposal's density is low (issue 43's custom row's shifts lie well
// within it: figures/bench/default_table.txt).
const MaxShift = 0.5

// RecentreFrom is the first warmup transition (1-based) that enters the
// re-centring's means (package doc): the earlier ones still leave the
// chain's start.
const RecentreFrom = 50

// CoordinatePrior is a Prior that is a product of one-dimensional priors
// (package model's Gaussian and Flat): a local move, which changes one
// coordinate, takes the prior's change from it, one term, where the whole
// log prior costs d terms a move (d moves a sweep: d² terms, 2.5·10⁵ on
// issue 43's custom row, a few per cent of its sweep). The change must
// equal log p(θ′) − log p(θ) for θ′ = θ but θ′_j = x, −Inf where x leaves
// the support (TestLocalGibbsCoordinatePrior checks the kernel against the
// whole log prior under a prior that pins the group effects).
type CoordinatePrior interface {
	exactmh.Prior
	LogPriorChange(theta []float64, j int, x float64) float64
}

// Kernel is the local Metropolis-within-Gibbs kernel (package doc).
type Kernel struct {
	// Laplace is the Gaussian approximation the moves are built on (its
	// Mean and dense Precision; exactmh.FindLaplace's). Required.
	Laplace *exactmh.LaplaceApprox
	// Rho is every move's Crank–Nicolson coefficient, in (−1, 1); 0 means
	// DefaultRho. A value near 0 (1e-300) gives independence proposals.
	Rho float64
	// GlobalShare: coordinates read by more than this share of the data
	// move in the global block; 0 means DefaultGlobalShare.
	GlobalShare float64
	// GlobalMoves is how many moves the global block makes a transition,
	// each a pass over the data; 0 means DefaultGlobalMoves.
	GlobalMoves int
	// NoRecentre keeps the moves centred on the Laplace approximation's
	// conditional means after warmup too (package doc).
	NoRecentre bool
	// Shift, if not nil (length d), fixes the re-centring shift of every
	// coordinate's conditional centre from the start (in θ's order; the
	// package doc's s): the chains estimate nothing in warmup, which is
	// then burn-in alone, with no gradient pass. FromPilot sets it to a
	// pilot chain's frozen shifts.
	Shift []float64
}

// Name is "LocalGibbs".
func (Kernel) Name() string { return "LocalGibbs" }

// Exact is true: every move is a Metropolis–Hastings move on the whole
// posterior, exact under the dependence pattern of the package doc.
func (Kernel) Exact() bool { return true }

// mutant, set by tests, breaks the kernel on purpose (the tests must
// catch each): 1 drops the proposal's density ratio from the local moves'
// acceptance; 2 leaves the cached energies stale after an accepted local
// move; 3 drops the proposal's density ratio from the global move's; 4
// takes the global move's ratio at the unshifted centre μ(θ_L), not the
// re-centred c the proposal is drawn about; 5 keeps moving the centre
// during sampling, to θ_G − μ(θ_L) of the last transition; 6 takes the
// local moves' ratio at their unshifted centres during sampling; 7 leaves
// a kernel given its Shift (FromPilot) re-centring, unfrozen, as 5 does;
// 8 drops a CoordinatePrior's change from the local moves' acceptance.
var mutant int

// chain is one chain of Kernel.
type chain struct {
	t        *exactmh.Target
	theta    []float64
	prop     []float64
	mean     []float64
	rho, sq  float64
	moves    int             // global moves a transition
	lp       float64         // log prior at theta
	cp       CoordinatePrior // the prior, where it is one; else nil
	u        []float64       // each datum's energy at theta
	buf      []float64
	all      []int
	global   []int // the global block's coordinates
	local    []int // the others, in the order they move
	dataPtr  []int // local coordinate local[k]'s data: dataIdx[dataPtr[k]:dataPtr[k+1]]
	dataIdx  []int
	nbPtr    []int // coordinate j's off-diagonal precision entries: nbIdx/nbVal[nbPtr[j]:nbPtr[j+1]]
	nbIdx    []int
	nbVal    []float64
	diag     []float64 // H_jj
	isGlobal []bool
	chol     []float64 // lower Cholesky factor of H_GG, ng×ng
	mu, b, z []float64 // global block scratch, ng each
	// The re-centring (package doc): shift is s, added to μ(θ_L); sum and
	// count accumulate θ_G − μ(θ_L) over warmup transitions from
	// RecentreFrom on; warm says warmup is on, recentre that s adapts in
	// it; steps counts transitions.
	shift, sum, raw []float64
	lshift, lsum    []float64 // the same for the local coordinates, in c.local's order
	grad, ones      []float64 // the re-centring's gradient (d) and unit weights (N)
	count, steps    int
	warm, recentre  bool
}

// Start reads the dependence pattern, builds the conditional Gaussians
// and the data of each local coordinate, and evaluates every datum at θ0.
func (k Kernel) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	la := k.Laplace
	n, d := t.N(), t.Dim()
	if la == nil || la.Precision == nil || len(la.Mean) != d {
		return nil, errors.New("localgibbs: Kernel.Laplace must be a dense Laplace approximation of the target (FindLaplace)")
	}
	if !t.HasGradient() {
		return nil, fmt.Errorf("localgibbs: %w: the dependence pattern is read from the data's gradients", exactmh.ErrNoGradient)
	}
	if err := t.CheckStart("LocalGibbs", theta0); err != nil {
		return nil, err
	}
	rho, share, moves := k.Rho, k.GlobalShare, k.GlobalMoves
	if rho == 0 {
		rho = DefaultRho
	}
	if moves == 0 {
		moves = DefaultGlobalMoves
	}
	if share == 0 {
		share = DefaultGlobalShare
	}
	if !(rho > -1 && rho < 1) || !(share > 0 && share <= 1) || moves < 0 {
		return nil, fmt.Errorf("localgibbs: Rho = %g, GlobalShare = %g, GlobalMoves = %d: want Rho in (−1, 1), GlobalShare in (0, 1], GlobalMoves ≥ 0", k.Rho, k.GlobalShare, k.GlobalMoves)
	}
	c := &chain{t: t, moves: moves, theta: append([]float64(nil), theta0...), prop: make([]float64, d), mean: la.Mean,
		rho: rho, sq: math.Sqrt(1 - rho*rho), u: make([]float64, n), buf: make([]float64, n), all: make([]int, n), recentre: !k.NoRecentre}
	for i := range c.all {
		c.all[i] = i
	}
	h := make([]float64, d*d)
	for a := range d {
		for b := range d {
			h[a*d+b] = la.Precision.At(a, b)
		}
	}
	c.diag = make([]float64, d)
	c.nbPtr = make([]int, d+1)
	for a := range d {
		c.diag[a] = h[a*d+a]
		if !(c.diag[a] > 0) {
			return nil, fmt.Errorf("localgibbs: the Laplace precision's diagonal entry %d is %g, want > 0", a, c.diag[a])
		}
		for b := range d {
			if b != a && h[a*d+b] != 0 {
				c.nbIdx = append(c.nbIdx, b)
				c.nbVal = append(c.nbVal, h[a*d+b])
			}
		}
		c.nbPtr[a+1] = len(c.nbIdx)
	}
	v, err := t.Shared(fmt.Sprintf("localgibbs locality %p %v", la, share), func() (any, error) { return localityOf(t, la.Mean, c.diag, share) })
	if err != nil {
		return nil, err
	}
	loc := v.(*locality)
	c.isGlobal = make([]bool, d)
	c.dataPtr = []int{0}
	for j, cj := range loc.count {
		if float64(cj) > share*float64(n) {
			c.isGlobal[j] = true
			c.global = append(c.global, j)
		} else {
			c.local = append(c.local, j)
			c.dataPtr = append(c.dataPtr, c.dataPtr[len(c.dataPtr)-1]+cj)
		}
	}
	c.dataIdx = loc.idx // read only, shared by the chains
	ng := len(c.global)
	c.chol = make([]float64, ng*ng)
	for a := range ng {
		for b := 0; b <= a; b++ {
			s := h[c.global[a]*d+c.global[b]]
			for l := range b {
				s -= c.chol[a*ng+l] * c.chol[b*ng+l]
			}
			if a == b {
				if !(s > 0) {
					return nil, errors.New("localgibbs: the Laplace precision's global block is not positive definite")
				}
				c.chol[a*ng+a] = math.Sqrt(s)
			} else {
				c.chol[a*ng+b] = s / c.chol[b*ng+b]
			}
		}
	}
	c.mu, c.b, c.z = make([]float64, ng), make([]float64, ng), make([]float64, ng)
	c.shift, c.sum, c.raw = make([]float64, ng), make([]float64, ng), make([]float64, ng)
	c.lshift, c.lsum = make([]float64, len(c.local)), make([]float64, len(c.local))
	if k.Shift != nil {
		if len(k.Shift) != d {
			return nil, fmt.Errorf("localgibbs: len(Kernel.Shift) = %d, want the dimension %d", len(k.Shift), d)
		}
		for a, j := range c.global {
			c.shift[a] = k.Shift[j]
		}
		for q, j := range c.local {
			c.lshift[q] = k.Shift[j]
		}
		c.recentre = mutant == 7
	}
	if c.recentre {
		c.grad, c.ones = make([]float64, d), make([]float64, n)
		for i := range c.ones {
			c.ones[i] = 1
		}
	}
	if err := t.Energies(c.u, c.theta, c.all); err != nil {
		return nil, err
	}
	c.lp = t.LogPrior(c.theta)
	c.cp, _ = t.Prior().(CoordinatePrior)
	if math.IsInf(c.lp, -1) || math.IsNaN(c.lp) {
		return nil, fmt.Errorf("localgibbs: log prior %g at θ0", c.lp)
	}
	return c, nil
}

// locality is the data's dependence pattern as Start uses it: how many
// data read each coordinate, and the data of the local ones (read by at
// most share·N), coordinate after coordinate in increasing order, each
// coordinate's data in increasing order.
type locality struct{ count, idx []int }

// localityOf reads the locality at θ0 by two scans (four gradient passes),
// once per run (Target.Shared): the counts, then the local coordinates'
// data, so that only they are held — O(N) for a sparse pattern, never the
// N·d entries of a dense one.
func localityOf(t *exactmh.Target, theta0, diag []float64, share float64) (*locality, error) {
	n, d := t.N(), t.Dim()
	count := make([]int, d)
	if err := scan(t, theta0, diag, func(_, j int) { count[j]++ }); err != nil {
		return nil, err
	}
	fill := make([]int, d) // the next slot of local j in idx; −1: global
	total := 0
	for j, cj := range count {
		if float64(cj) > share*float64(n) {
			fill[j] = -1
		} else {
			fill[j] = total
			total += cj
		}
	}
	idx := make([]int, total)
	err := scan(t, theta0, diag, func(i, j int) {
		if fill[j] >= 0 {
			idx[fill[j]] = i
			fill[j]++
		}
	})
	if err != nil {
		return nil, err
	}
	return &locality{count: count, idx: idx}, nil
}

// scan calls visit(i, j) once for each datum i and each coordinate j its
// gradient is non-zero in at θ0 or at θ0 moved by a hundredth of 1/√H_jj
// in a fixed ± pattern, data in order: two gradients a datum, O(d) work
// and memory beyond them (a membership test by stamps, not a search of
// the datum's list).
func scan(t *exactmh.Target, theta0, diag []float64, visit func(i, j int)) error {
	n, d := t.N(), t.Dim()
	g := make([]float64, d)
	seen := make([]int, d) // seen[j] = i+1 once datum i has visited j
	idx, one := []int{0}, []float64{1}
	second := make([]float64, d)
	rng := rand.New(rand.NewPCG(0x6c6f63, 0x616c))
	for j, v := range theta0 {
		second[j] = v + 0.01/math.Sqrt(diag[j])*float64(2*rng.IntN(2)-1)
	}
	for i := range n {
		idx[0] = i
		for _, at := range [2][]float64{theta0, second} {
			clear(g)
			if err := t.AddGradient(g, at, idx, one); err != nil {
				return err
			}
			for j, v := range g {
				if v != 0 && seen[j] != i+1 {
					seen[j] = i + 1
					visit(i, j)
				}
			}
		}
	}
	return nil
}

// Position returns θ.
func (c *chain) Position() []float64 { return c.theta }

// SetWarmup turns the re-centring on for warmup and freezes it after
// (exactmh.WarmupAware).
func (c *chain) SetWarmup(on bool) {
	if c.warm && !on && c.count > 0 {
		c.freeze()
	}
	c.warm = on
}

// freeze sets the shifts to the warmup's control-variate means, each
// clipped to ±MaxShift of its coordinate's conditional sd 1/√H_jj.
func (c *chain) freeze() {
	w := 1 / float64(c.count)
	for a, j := range c.global {
		c.shift[a] = clip(c.sum[a]*w, MaxShift/math.Sqrt(c.diag[j]))
	}
	for k, j := range c.local {
		c.lshift[k] = clip(c.lsum[k]*w, MaxShift/math.Sqrt(c.diag[j]))
	}
}

func clip(x, r float64) float64 { return max(-r, min(r, x)) }

// FromPilot returns k with Shift set to the re-centring shifts that the
// pilot chain ch, one of k's past its warmup, froze (exactmh.PilotSeeder):
// the automatic default runs that kernel, whose chains then need no
// re-centring passes in their warmup. ok is false where ch is not k's
// chain, is still in warmup, or estimated no shift (NoRecentre, or a
// warmup too short to reach RecentreFrom).
func (k Kernel) FromPilot(ch exactmh.Chain) (exactmh.Kernel, bool) {
	c, ok := ch.(*chain)
	if !ok || c.warm || c.count == 0 || k.Shift != nil || k.Laplace == nil || len(c.theta) != len(k.Laplace.Mean) {
		return k, false
	}
	shift := make([]float64, len(c.theta))
	for a, j := range c.global {
		shift[j] = c.shift[a]
	}
	for q, j := range c.local {
		shift[j] = c.lshift[q]
	}
	k.Shift = shift
	return k, true
}

// WarmupSettled: the kernel's warmup is burn-in and the re-centring,
// frozen when warmup ends; the runner asks from exactmh.MinBurnIn
// transitions on (exactmh.WarmupSettler).
func (c *chain) WarmupSettled(int) bool { return true }

// Step moves the global block, then each local coordinate.
func (c *chain) Step(rng *rand.Rand) (exactmh.Info, error) {
	accepted := false
	c.steps++
	for range c.moves {
		if len(c.global) == 0 {
			break
		}
		acc, err := c.globalMove(rng)
		if err != nil {
			return exactmh.Info{}, err
		}
		accepted = accepted || acc
	}
	if len(c.global) > 0 && c.moves > 0 && c.recentre && (c.warm || mutant == 5 || mutant == 7) {
		if err := c.adaptCentre(); err != nil {
			return exactmh.Info{}, err
		}
	}
	copy(c.prop, c.theta)
	for k, j := range c.local {
		// The conditional Gaussian of θ_j given the rest: mean
		// m_j − Σ_l H_jl(θ_l − m_l)/H_jj, sd 1/√H_jj.
		var s float64
		for q := c.nbPtr[j]; q < c.nbPtr[j+1]; q++ {
			l := c.nbIdx[q]
			s += c.nbVal[q] * (c.theta[l] - c.mean[l])
		}
		m := c.mean[j] - s/c.diag[j] + c.lshift[k]
		sd := 1 / math.Sqrt(c.diag[j])
		old := c.theta[j]
		x := m + c.rho*(old-m) + c.sq*sd*rng.NormFloat64()
		var dlp, lp float64 // the prior's change, and its log density at θ′ without a CoordinatePrior
		if c.cp != nil {
			dlp = c.cp.LogPriorChange(c.theta, j, x)
		} else {
			c.prop[j] = x
			lp = c.t.LogPrior(c.prop)
			dlp = lp - c.lp
		}
		if math.IsInf(dlp, -1) || math.IsNaN(dlp) {
			c.prop[j] = old
			continue
		}
		c.prop[j] = x
		idx := c.dataIdx[c.dataPtr[k]:c.dataPtr[k+1]]
		e := c.buf[:len(idx)]
		if err := c.t.Energies(e, c.prop, idx); err != nil {
			return exactmh.Info{}, err
		}
		var du float64
		for q, i := range idx {
			du += c.u[i] - e[q]
		}
		if mutant == 8 && c.cp != nil {
			dlp = 0
		}
		logA := du + dlp
		if mutant == 6 && !c.warm {
			m -= c.lshift[k]
		}
		if mutant != 1 {
			zo, zn := (old-m)/sd, (x-m)/sd
			logA += 0.5 * (zn*zn - zo*zo)
		}
		if math.Log(rng.Float64()) < logA {
			c.theta[j], accepted = x, true
			if c.cp == nil {
				c.lp = lp
			}
			if mutant != 2 {
				for q, i := range idx {
					c.u[i] = e[q]
				}
			}
		} else {
			c.prop[j] = old
		}
	}
	if c.cp != nil && accepted {
		// The global move's ratio reads the log prior at θ: taken whole
		// once a sweep, not summed from the moves' changes.
		c.lp = c.t.LogPrior(c.theta)
	}
	return exactmh.Info{Accepted: accepted, AcceptProb: math.NaN(), LogDensity: math.NaN(), Batch: c.t.N(), Distinct: c.t.N()}, nil
}

// globalMove is the global block's move: its conditional Gaussian given
// the local coordinates has precision H_GG and mean
// m_G − H_GG⁻¹ Σ_l H_Gl(θ_l − m_l).
func (c *chain) globalMove(rng *rand.Rand) (bool, error) {
	ng, L := len(c.global), c.chol
	for a, j := range c.global {
		var s float64
		for q := c.nbPtr[j]; q < c.nbPtr[j+1]; q++ {
			if l := c.nbIdx[q]; !c.isGlobal[l] {
				s += c.nbVal[q] * (c.theta[l] - c.mean[l])
			}
		}
		c.b[a] = s
	}
	// mu = H_GG⁻¹ b by L y = b, Lᵀ mu = y.
	for a := range ng {
		s := c.b[a]
		for l := range a {
			s -= L[a*ng+l] * c.mu[l]
		}
		c.mu[a] = s / L[a*ng+a]
	}
	for a := ng - 1; a >= 0; a-- {
		s := c.mu[a]
		for l := a + 1; l < ng; l++ {
			s -= L[l*ng+a] * c.mu[l]
		}
		c.mu[a] = s / L[a*ng+a]
	}
	for a, j := range c.global {
		c.raw[a] = c.mean[j] - c.mu[a]
		c.mu[a] = c.raw[a] + c.shift[a]
	}
	// A draw of N(0, H_GG⁻¹) is L⁻ᵀz: solve Lᵀ x = z in place.
	for a := range c.z {
		c.z[a] = rng.NormFloat64()
	}
	for a := ng - 1; a >= 0; a-- {
		s := c.z[a]
		for l := a + 1; l < ng; l++ {
			s -= L[l*ng+a] * c.z[l]
		}
		c.z[a] = s / L[a*ng+a]
	}
	copy(c.prop, c.theta)
	for a, j := range c.global {
		c.prop[j] = c.mu[a] + c.rho*(c.theta[j]-c.mu[a]) + c.sq*c.z[a]
	}
	lp := c.t.LogPrior(c.prop)
	if math.IsInf(lp, -1) {
		return false, nil
	}
	if err := c.t.Energies(c.buf, c.prop, c.all); err != nil {
		return false, err
	}
	var du float64
	for i, v := range c.buf {
		du += c.u[i] - v
	}
	logA := du + lp - c.lp
	if mutant == 4 {
		copy(c.mu, c.raw)
	}
	if mutant != 3 {
		logA += c.quad(c.prop) - c.quad(c.theta)
	}
	if math.Log(rng.Float64()) < logA {
		copy(c.theta, c.prop)
		copy(c.u, c.buf)
		c.lp = lp
		return true, nil
	}
	return false, nil
}

// quad returns ½‖Lᵀ(θ_G − mu)‖² = ½(θ_G − mu)ᵀH_GG(θ_G − mu): minus the
// log density of the global block's conditional Gaussian at θ, up to a
// constant.
func (c *chain) quad(theta []float64) float64 {
	ng, L := len(c.global), c.chol
	var q float64
	for b := range ng {
		var s float64
		for a := b; a < ng; a++ {
			s += L[a*ng+b] * (theta[c.global[a]] - c.mu[a])
		}
		q += s * s
	}
	return 0.5 * q
}

// adaptCentre, after a warmup transition's global moves, adds a term to
// the sums whose means (freeze) are the shifts s of θ_G − μ(θ_L) (μ at
// the last global move's θ_L) and of each local θ_j − m_j(θ_{−j}), over
// the warmup transitions from RecentreFrom on.
//
// θ_G − μ(θ_L) = −H_GG⁻¹∇_G log π̂(θ), π̂ the Laplace approximation, and
// E_π[∇ log π] = 0, so its mean is that of
//
//	g(θ) = θ_G − μ(θ_L) + H_GG⁻¹∇_G log π(θ),
//
// the Gaussian part of the posterior cancelled (g = 0 on a Gaussian
// posterior that π̂ matches): a control variate that leaves only the
// non-Gaussian remainder's spread, where the plain mean of θ_G − μ(θ_L)
// carries the conditional's, too much for the hundred terms of a warmup
// (figures/bench/default_table.txt, branch custom).
// Each term costs a gradient pass over the data, in warmup only.
func (c *chain) adaptCentre() error {
	if (mutant == 5 || mutant == 7) && !c.warm {
		for a, j := range c.global {
			c.shift[a] = c.theta[j] - c.raw[a]
		}
		return nil
	}
	if c.steps < RecentreFrom {
		return nil
	}
	clear(c.grad)
	if err := c.t.AddGradient(c.grad, c.theta, c.all, c.ones); err != nil {
		return err
	}
	for j := range c.grad {
		c.grad[j] = -c.grad[j]
	}
	if err := c.t.AddLogPriorGradient(c.grad, c.theta); err != nil {
		return err
	}
	for a, j := range c.global {
		c.b[a] = c.grad[j]
	}
	c.solve(c.b)
	c.count++
	for a, j := range c.global {
		c.sum[a] += c.theta[j] - c.raw[a] + c.b[a]
	}
	for k, j := range c.local {
		// θ_j − m_j(θ_{−j}) + ∂_j log π(θ)/H_jj, m_j(θ_{−j}) = m_j − Σ_l H_jl(θ_l − m_l)/H_jj.
		s := c.grad[j]
		for q := c.nbPtr[j]; q < c.nbPtr[j+1]; q++ {
			l := c.nbIdx[q]
			s += c.nbVal[q] * (c.theta[l] - c.mean[l])
		}
		c.lsum[k] += c.theta[j] - c.mean[j] + s/c.diag[j]
	}
	return nil
}

// solve sets x to H_GG⁻¹x by the Cholesky factor: L y = x, Lᵀ x = y.
func (c *chain) solve(x []float64) {
	ng, L := len(c.global), c.chol
	for a := range ng {
		s := x[a]
		for l := range a {
			s -= L[a*ng+l] * x[l]
		}
		x[a] = s / L[a*ng+a]
	}
	for a := ng - 1; a >= 0; a-- {
		s := x[a]
		for l := a + 1; l < ng; l++ {
			s -= L[l*ng+a] * x[l]
		}
		x[a] = s / L[a*ng+a]
	}
}

// LocalReadsMax is the most passes over the data the local sweep may read
// (the sum over local coordinates of the data each reads, over N) for the
// kernel to be a candidate of the automatic default (Applies): beyond it a
// transition costs as much as that many full-batch moves of all d
// coordinates.
const LocalReadsMax = 2

func init() {
	exactmh.Register(exactmh.KernelInfo{Name: "LocalGibbs", Family: exactmh.FullBatchFamily, Exact: true, NeedsGradient: true,
		New:         func([]float64) exactmh.Kernel { return Kernel{} },
		FromLaplace: Applies})
}

// Applies is the kernel's KernelInfo.FromLaplace: it reads the data's
// dependence pattern at la's mean (two gradient passes, counted) and
// offers Kernel{Laplace: la} where at least half the coordinates (and at
// least one) are local and the local sweep reads at most LocalReadsMax
// passes; else it says why not. The decision reads counts only.
func Applies(ctx context.Context, p *exactmh.Posterior, la *exactmh.LaplaceApprox) (exactmh.Kernel, string, float64, error) {
	if la == nil || la.Precision == nil {
		return nil, "no dense Laplace approximation", 0, nil
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, "", 0, err
	}
	if !t.HasGradient() {
		return nil, "the energy has no gradient to read the dependence pattern from", 0, nil
	}
	release := t.Watch(ctx)
	defer release()
	n, d := t.N(), t.Dim()
	diag := make([]float64, d)
	for j := range d {
		if diag[j] = la.Precision.At(j, j); !(diag[j] > 0) {
			return nil, fmt.Sprintf("the Laplace precision's diagonal entry %d is %g", j, diag[j]), 0, nil
		}
	}
	// Counted, not stored: a dense posterior would hold N·d entries.
	count := make([]int, d)
	err = scan(t, la.Mean, diag, func(_, j int) { count[j]++ })
	passes := float64(t.GradEvals()) / float64(n)
	if err != nil {
		return nil, "", passes, err
	}
	local, reads := 0, 0
	for _, c := range count {
		if float64(c) <= DefaultGlobalShare*float64(n) {
			local++
			reads += c
		}
	}
	r := float64(reads) / float64(n)
	if local == 0 || 2*local < d || r > LocalReadsMax {
		return nil, fmt.Sprintf("the data's dependence pattern (read from their gradients at the Laplace mean) leaves %d of %d coordinates local, their moves reading %.3g passes: LocalGibbs needs half of them local and at most %d passes", local, d, r, LocalReadsMax), passes, nil
	}
	why := fmt.Sprintf("the data's dependence pattern (read from their gradients at the Laplace mean) leaves %d of %d coordinates each read by at most %.3g of the data, moved one at a time over their own data (%.3g passes a sweep), the other %d together over all of it",
		local, d, DefaultGlobalShare, r, d-local)
	return Kernel{Laplace: la}, why, passes, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// FlyMC is Firefly Monte Carlo (Maclaurin & Adams 2014), an exact kernel
// with auxiliary brightness variables z_i ∈ {0, 1}, one per datum, on the
// joint
//
//	p(θ, z) ∝ prior(θ)·Π_i B_i(θ)^β·Π_{z_i=1} ρ_i(θ),  ρ_i = (L_i/B_i)^β − 1,
//
// whose θ-marginal is the posterior. B_i ≤ L_i is a collapsible lower bound
// on the likelihood (FlyBound): Π_i B_i costs time independent of N, so a
// θ-move reads only the bright data. Each transition is
//
//  1. a z-step, an implicit MH sweep with q_{b→d} = 1 and q_{d→b} = Q:
//     each bright datum darkens with probability min(1, Q/ρ_i(θ)); each
//     datum dark at the start of the sweep is proposed with probability Q
//     (by geometric skipping, so the cost is Q·N_dark, not N) and brightens
//     with probability min(1, ρ_i(θ)/Q);
//  2. a θ-step, random-walk MH on p(θ | z), which evaluates the bright data
//     at θ′ (their values at θ are cached).
//
// Chains start with all data dark. Info.Batch is the number of bright data
// (the FlyMC papers' batch size), Info.AuxEvals the z-step's evaluations;
// Info.Evals counts both steps. FlyMC mixes slowly when many data are
// bright, since θ and z are strongly coupled; a bound tight near the mode
// (FlyMC-MAP: TightAt = FindMAP's θ) keeps them few.
type FlyMC struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// Q is q_{d→b}, the probability that the z-step proposes to brighten a
	// dark datum (0: 0.01, the TunaMH experiments' value for robust
	// regression and the Gaussian mixture; they use 0.1 for MNIST).
	Q float64
	// Bound is the lower bound, in the untempered energy's units; the
	// kernel raises it to the power β (nil: the energy's FlyBound at
	// TightAt).
	Bound FlyBound
	// TightAt is where the energy's bounds are tight (typically the MAP:
	// FlyMC-MAP); nil means the energy's untuned default. Ignored when
	// Bound is set.
	TightAt []float64
	// TrustBound skips the audit of the bound at Start: every datum's gap
	// and the change of LogBoundSum at θ0 and a few proposals from it (see
	// the package documentation, "Bounds"). Set it only for a bound known
	// to hold; steps still check every gap they compute.
	TrustBound bool

	// Test hooks (export_test.go), nil in every real kernel: βΣ log B_i(θ)
	// (nil: from Bound) and the log darkening probability's argument from
	// log q_{d→b} and log ρ_i (nil: their difference).
	logBoundSum func(theta []float64) float64
	logDarken   func(logQ, logRho float64) float64
}

// Name returns "FlyMC", or "FlyMC-MAP" when TightAt is set.
func (k FlyMC) Name() string {
	if k.TightAt != nil && k.Bound == nil {
		return "FlyMC-MAP"
	}
	return "FlyMC"
}

// Exact returns true.
func (FlyMC) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's optimal rate
// (Roberts, Gelman and Gilks 1997), which no other rate clearly beats for
// FlyMC-MAP; TestTargetAcceptSweep (go test -run TestTargetAcceptSweep
// -sweep FlyMC-MAP -v .) measures bulk ESS per datum evaluation across
// target rates.
func (FlyMC) DefaultTargetAccept() float64 { return 0.234 }

// Start builds the bound and the chain's brightness state, all dark.
func (k FlyMC) Start(t *Target, theta0 []float64) (Chain, error) {
	w, err := newWalk("FlyMC", t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	q := k.Q
	if q == 0 {
		q = 0.01
	}
	if !(q > 0 && q <= 1) {
		return nil, fmt.Errorf("FlyMC: Q = %v, want in (0, 1]", k.Q)
	}
	b := k.Bound
	if b == nil {
		fb, ok := flyBounderOf(t.Energy())
		if !ok {
			return nil, fmt.Errorf("FlyMC: %w: energy %T has no FlyMC lower bound: set FlyMC.Bound or use an energy implementing FlyBounder or GLM", ErrNoBound, t.Energy())
		}
		if b, err = fb.FlyBound(k.TightAt, t.Prior()); err != nil {
			return nil, within("FlyMC", err)
		}
	}
	if err := w.audit(k.TrustBound, "", flyAudit(b)); err != nil {
		return nil, err
	}
	n := t.N()
	c := &flyChain{
		k: k, walk: w, bound: b, beta: t.Beta(),
		logQDB: math.Log(q), logGeom: math.Log1p(-q), q: q,
		order: make([]int32, n), pos: make([]int32, n),
		logRho: make([]float64, n), logRhoNew: make([]float64, n), brighten: make([]int32, 0, n),
	}
	for i := range c.order {
		c.order[i], c.pos[i] = int32(i), int32(i)
	}
	lp := t.LogPrior(theta0)
	if math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, fmt.Errorf("FlyMC: θ0 = %v outside the prior's support", theta0)
	}
	c.logBoundSum = k.logBoundSum
	if c.logBoundSum == nil {
		c.logBoundSum = func(theta []float64) float64 { return c.beta * c.bound.LogBoundSum(theta) }
	}
	c.logDarken = k.logDarken
	if c.logDarken == nil {
		c.logDarken = func(logQ, logRho float64) float64 { return logQ - logRho }
	}
	c.logBound = c.logBoundSum(theta0)
	if math.IsNaN(c.logBound) || math.IsInf(c.logBound, 0) {
		return nil, fmt.Errorf("FlyMC: Σ log B_i(θ0) = %v at θ0 = %v", c.logBound, theta0)
	}
	return c, nil
}

type flyChain struct {
	k FlyMC
	walk
	bound   FlyBound
	beta    float64
	q       float64
	logQDB  float64 // log q_{d→b}
	logGeom float64 // log(1 − q), for geometric skipping

	logBound    float64 // βΣ log B_i(θ)
	logBoundSum func(theta []float64) float64
	logDarken   func(logQ, logRho float64) float64

	// order lists the data bright first: order[:nBright] are bright, the
	// rest dark; pos[i] is datum i's index in order.
	order   []int32
	pos     []int32
	nBright int
	// logRho[i] = log ρ_i(θ) for bright i at the current θ; logRhoNew[k]
	// holds log ρ at θ′ for order[k] during a θ-step.
	logRho, logRhoNew []float64
	brighten          []int32

	// The last z-step's swaps of order (position pairs) and the bright
	// count before it, kept while the run may interrupt a transition
	// (Target.interrupt), so that abandonStep can undo a z-step whose
	// θ-step was abandoned.
	swaps    []int32
	nBright0 int

	idx  [batchChunk]int
	gaps [batchChunk]float64
}

// Params reports q_{d→b} and the number of bright data now.
func (c *flyChain) Params() map[string]float64 {
	return map[string]float64{"q": c.q, "bright": float64(c.nBright)}
}

// logRhoOf returns log ρ = log(e^gap − 1) = gap + log(1 − e^{−gap}) for a
// tempered gap > 0, computed without cancellation; −Inf for gap = 0.
func logRhoOf(gap float64) float64 {
	if gap > 30 {
		return gap + math.Log1p(-math.Exp(-gap))
	}
	return math.Log(math.Expm1(gap))
}

// Step makes one FlyMC transition: z-step, then θ-step.
func (c *flyChain) Step(rng *rand.Rand) (Info, error) {
	e0 := c.t.Evals()
	if err := c.zStep(rng); err != nil {
		return Info{}, err
	}
	aux := int(c.t.Evals() - e0)
	info, err := c.thetaStep(rng)
	info.AuxEvals = aux
	return info, err
}

// zStep is the implicit MH sweep over the brightness variables.
func (c *flyChain) zStep(rng *rand.Rand) error {
	nBright0 := c.nBright
	c.swaps, c.nBright0 = c.swaps[:0], nBright0
	// Propose to brighten the data dark at the start of the sweep: skip
	// Geometric(q) dark positions between proposals. Decisions are
	// collected first, so that no datum is updated twice in one sweep.
	c.brighten = c.brighten[:0]
	n := len(c.order)
	for p := nBright0 + c.skip(rng); p < n; {
		if c.t.interrupted() {
			return errInterrupted
		}
		m := 0
		for ; m < batchChunk && p < n; m++ {
			c.idx[m] = int(c.order[p])
			p += 1 + c.skip(rng)
		}
		if err := c.t.Gaps(c.gaps[:m], c.theta, c.idx[:m], c.bound); err != nil {
			return err
		}
		for j := range m {
			// Brighten with probability min(1, ρ_i/q).
			lr := logRhoOf(c.gaps[j])
			if lr >= c.logQDB || math.Log(rng.Float64()) < lr-c.logQDB {
				i := c.idx[j]
				c.logRho[i] = lr
				c.brighten = append(c.brighten, int32(i))
			}
		}
	}
	// Darken each datum bright at the start with probability
	// min(1, q/ρ_i(θ)) from its cached ρ. Going down the bright block, a
	// darkened datum swaps with the last bright one, which was already
	// visited.
	keep := c.t.interrupt != nil
	for k := nBright0 - 1; k >= 0; k-- {
		i := c.order[k]
		if ld := c.logDarken(c.logQDB, c.logRho[i]); ld >= 0 || math.Log(rng.Float64()) < ld {
			if keep {
				c.swaps = append(c.swaps, int32(k), int32(c.nBright-1))
			}
			c.swap(k, c.nBright-1)
			c.nBright--
		}
	}
	for _, i := range c.brighten {
		if keep {
			c.swaps = append(c.swaps, c.pos[i], int32(c.nBright))
		}
		c.swap(int(c.pos[i]), c.nBright)
		c.nBright++
	}
	return nil
}

// skip draws the number of failures before a success of probability q.
func (c *flyChain) skip(rng *rand.Rand) int {
	if c.q == 1 {
		return 0
	}
	u := 1 - rng.Float64() // (0, 1]
	g := math.Floor(math.Log(u) / c.logGeom)
	if g > float64(len(c.order)) {
		return len(c.order)
	}
	return int(g)
}

// swap exchanges the data at positions a and b of order.
func (c *flyChain) swap(a, b int) {
	ia, ib := c.order[a], c.order[b]
	c.order[a], c.order[b] = ib, ia
	c.pos[ib], c.pos[ia] = int32(a), int32(b)
}

// thetaStep is MH on p(θ | z): collapsed bound plus the bright data.
func (c *flyChain) thetaStep(rng *rand.Rand) (Info, error) {
	info := Info{Batch: c.nBright, Distinct: c.nBright, AcceptProb: 0, LogDensity: math.NaN()}
	logR, ok := c.propose(rng)
	if !ok {
		return info, nil
	}
	logBoundNew := c.logBoundSum(c.next)
	logR = logR + logBoundNew - c.logBound // in this order: bit-identical draws
	for lo := 0; lo < c.nBright; lo += batchChunk {
		if c.t.interrupted() {
			return Info{}, errInterrupted
		}
		m := min(batchChunk, c.nBright-lo)
		for j := range m {
			c.idx[j] = int(c.order[lo+j])
		}
		if err := c.t.Gaps(c.gaps[:m], c.next, c.idx[:m], c.bound); err != nil {
			return Info{}, err
		}
		for j := range m {
			lr := logRhoOf(c.gaps[j])
			c.logRhoNew[lo+j] = lr
			logR += lr - c.logRho[c.idx[j]]
		}
	}
	info, err := c.accept(rng, logR, info)
	if info.Accepted {
		c.logBound = logBoundNew
		for k := range c.nBright {
			c.logRho[c.order[k]] = c.logRhoNew[k]
		}
	}
	return info, err
}

type flyState struct {
	Order   []int32
	NBright int
}

// MarshalState saves the brightness: the bright-first order of the data
// (its order fixes the order of floating-point sums) and the bright count.
func (c *flyChain) MarshalState() ([]byte, error) {
	return chainstate.Encode(flyState{Order: c.order, NBright: c.nBright})
}

// UnmarshalState restores the brightness and recomputes log ρ_i of the
// bright data at θ.
func (c *flyChain) UnmarshalState(b []byte) error {
	var s flyState
	if err := chainstate.Decode(b, &s); err != nil {
		return err
	}
	if err := chainstate.CheckPerm("order", s.Order, len(c.order)); err != nil {
		return err
	}
	if s.NBright < 0 || s.NBright > len(c.order) {
		return fmt.Errorf("saved bright count %d, want in [0, N = %d]", s.NBright, len(c.order))
	}
	copy(c.order, s.Order)
	for k, i := range c.order {
		c.pos[i] = int32(k)
	}
	c.nBright = s.NBright
	for lo := 0; lo < c.nBright; lo += batchChunk {
		m := min(batchChunk, c.nBright-lo)
		for j := range m {
			c.idx[j] = int(c.order[lo+j])
		}
		if err := c.t.Gaps(c.gaps[:m], c.theta, c.idx[:m], c.bound); err != nil {
			return err
		}
		for j := range m {
			c.logRho[c.idx[j]] = logRhoOf(c.gaps[j])
		}
	}
	return nil
}

// A FlyMC transition may be abandoned within a chunk of its z-step's
// proposals or its θ-step's bright data. The z-step changes the
// brightness only after its reads (the cached ρ_i it writes of data it
// was brightening are read only once they are bright); the θ-step
// changes θ only after its reads, and abandonStep undoes the z-step
// before it, its swaps replayed in reverse.
func (c *flyChain) interruptible() bool { return true }

func (c *flyChain) abandonStep() {
	for k := len(c.swaps) - 2; k >= 0; k -= 2 {
		c.swap(int(c.swaps[k]), int(c.swaps[k+1]))
	}
	c.swaps, c.nBright = c.swaps[:0], c.nBright0
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ stepInterrupter = (*flyChain)(nil)

	_ Kernel        = FlyMC{}
	_ AcceptTarget  = FlyMC{}
	_ driverChain   = (*flyChain)(nil)
	_ ParamReporter = (*flyChain)(nil)
)

// The capabilities FlyMC declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k FlyMC) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k FlyMC) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k FlyMC) Proposer() Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k FlyMC) WithProposal(p Proposal) Kernel {
	k.Proposal = p
	return k
}

// WithQ returns k with Q v (q).
func (k FlyMC) WithQ(v float64) Kernel {
	k.Q = v
	return k
}

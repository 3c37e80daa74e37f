// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/prefault"
	"github.com/exactmh/exactmh/internal/prefetch"
	"github.com/exactmh/exactmh/internal/symm"
	"github.com/exactmh/exactmh/internal/vec"
)

// SMH is Scalable Metropolis–Hastings (Cornish et al. 2019): TFMH with
// Taylor control variates of order 1 (SMH-1) or 2 (SMH-2) around a centre
// θ̂, typically the MAP (FindMAP). It is exact for every centre; only its
// cost depends on the centre being near the posterior mass.
//
// Each energy is split as U_i = Û_i + R_i, Û_i its Taylor expansion at θ̂.
// The step factorises the acceptance into
//
//  1. a deterministic factor min(1, e^{−βΣ_i(Û_i(θ′) − Û_i(θ))}·prior and
//     proposal ratio), computed in O(d) (order 1) or O(d²) (order 2) from
//     sums precomputed at Start, and
//  2. one factor min(1, e^{−β(R_i(θ′) − R_i(θ))}) per datum, decided by
//     Poisson thinning as in TFMH: K ~ Poisson(βΣb_i·κ) data drawn ∝ b_i,
//     each rejecting with probability max(0, βr_i)/(βb_i·κ), where
//     κ = (‖θ − θ̂‖₁^{k+1} + ‖θ′ − θ̂‖₁^{k+1})/(k+1)! and b_i bounds every
//     (k+1)-th partial derivative of U_i on the support (TaylorBounder).
//
// Near θ̂ the remainders are tiny, so few data are drawn; far from it (or
// in high dimension, where ‖·‖₁ grows like d) κ explodes, and when the
// expected batch exceeds MaxRate the step is full MH instead, decided from
// θ and θ′ alone. Control variates assume a unimodal posterior: on the
// Gaussian mixture SMH-1 is worse than TFMH (TunaMH paper §5.2).
//
// Memory is O(N) beyond the data for energies implementing GLM
// (LogisticRegression, StudentTRegression, GLMEnergy or your own type),
// whose per-datum gradient and Hessian at θ̂ are f′_i(x_iᵀθ̂)·x_i and
// f″_i(x_iᵀθ̂)·x_ix_iᵀ: only the scalars are stored
// (the reference code stores N Hessians, O(N·d²)). Other energies with a
// Gradienter support order 1 with the N per-datum gradients stored (O(N·d)).
type SMH struct {
	// Order is the Taylor order, 1 or 2.
	Order int
	// Center is θ̂, the expansion point (typically FindMAP's Theta).
	Center []float64
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// MaxRate is the expected batch above which the step is full MH (0: N;
	// +Inf: never).
	MaxRate float64
	// KeepMinibatch keeps the minibatch steps even where the mid-warmup
	// comparison predicts full-batch MH faster (the default then runs as
	// MH and says so: see TunaMH); for studies of the kernel itself.
	KeepMinibatch bool
	// TrustBound skips the audit of the energy's Taylor bounds at Start:
	// every datum's remainder between θ0 and a few proposals from it (see
	// the package documentation, "Bounds"). Set it only for bounds known to
	// hold; steps still check every datum they draw.
	TrustBound bool

	// Test hooks (export_test.go), nil in every real kernel: the
	// control-variate term βΣ(Û_i(θ′) − Û_i(θ)) from β and the summed
	// Taylor difference (nil: β·dHat), and a transform of each datum's
	// remainder difference (nil: none).
	controlVariate func(beta, dHat float64) float64
	remainder      func(r float64) float64
}

// TaylorBounder is implemented by energies usable by SMH. A GLM that does
// not implement it gets GLMTaylorBounder.
type TaylorBounder interface {
	// TaylorBound returns b_i ≥ sup |∂^{k+1}U_i(θ)/∂θ_{j1}⋯∂θ_{j(k+1)}| over
	// the prior's support and all index tuples, for order k ∈ {1, 2}, in
	// untempered units.
	TaylorBound(order int, prior Prior) ([]float64, error)
}

// Name returns "SMH-1" or "SMH-2".
func (k SMH) Name() string { return fmt.Sprintf("SMH-%d", k.Order) }

// Exact returns true.
func (SMH) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's optimal rate
// (Roberts, Gelman and Gilks 1997), which no other rate clearly beats for
// SMH-1, nor, in ESS per second (its steps read less than a datum, so the
// step's fixed cost dominates), for SMH-2; TestTargetAcceptSweep (go test
// -run TestTargetAcceptSweep -sweep SMH-1 -v .) measures bulk ESS per datum
// evaluation across target rates.
func (SMH) DefaultTargetAccept() float64 { return 0.234 }

// Start precomputes the control variates at the centre and the alias
// table over b_i.
func (k SMH) Start(t *Target, theta0 []float64) (Chain, error) {
	name := k.Name()
	if k.Order != 1 && k.Order != 2 {
		return nil, fmt.Errorf("SMH: Order = %d, want 1 or 2", k.Order)
	}
	w, err := newWalk(name, t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	w.full = newFullEnergies(t.Dim())
	d, n := t.Dim(), t.N()
	if len(k.Center) != d {
		return nil, fmt.Errorf("%s: len(Center) = %d, want %d", name, len(k.Center), d)
	}
	if err := vec.FiniteVec(name+": Center", k.Center); err != nil {
		return nil, err
	}
	if math.IsInf(t.LogPrior(k.Center), -1) {
		return nil, fmt.Errorf("%s: Center = %v outside the prior's support", name, k.Center)
	}
	if k.MaxRate < 0 || math.IsNaN(k.MaxRate) {
		return nil, fmt.Errorf("%s: MaxRate = %v, want ≥ 0 (0: N, +Inf: never fall back)", name, k.MaxRate)
	}
	terms, err := shared(t.cache, fmt.Sprintf("smh/%d/%p", k.Order, &k.Center[0]), func() (*smhTerms, error) {
		return newSMHTerms(name, t, k.Order, k.Center)
	})
	if err != nil {
		return nil, err
	}
	c := &smhChain{k: k, walk: w, smhTerms: terms, seen: newDistinct(), maxRate: k.MaxRate,
		controlVariate: k.controlVariate, remainder: k.remainder}
	if c.controlVariate == nil {
		c.controlVariate = func(beta, dHat float64) float64 { return beta * dHat }
	}
	if c.remainder == nil {
		c.remainder = func(r float64) float64 { return r }
	}
	if !k.KeepMinibatch {
		c.rival = newMHRival(len(theta0))
	}
	if c.maxRate == 0 {
		c.maxRate = float64(n)
	}
	if c.fact = 2.0; k.Order == 2 {
		c.fact = 6
	}
	return c.audited(k.TrustBound)
}

// smhTerms is what SMH precomputes at the centre, read-only afterwards and
// so shared by the chains of a run: the Taylor bounds and their alias
// table, the summed gradient and Hessian, and per datum x_iᵀθ̂, f′, f″
// (GLMs) or the gradients (others).
type smhTerms struct {
	rec     []datumRecord[smhDatum] // per datum: alias column, b_i (untempered), Taylor terms
	sumB    float64
	center  []float64
	gradSum []float64 // Σ∇U_i(θ̂)
	hess    []float64 // Σ∇²U_i(θ̂), row-major d×d (order 2)
	// GLM energies keep their expansion in rec; others the per-datum
	// gradients at θ̂, N×d.
	glm   GLM
	conv  rowConverter // glm's, if its rows are not float64
	grads []float64

	// The rows (lx or lx32) of a logistic DenseGLM (denseLogistic):
	// remainderDiff computes their loss difference inline, bit for bit
	// model.LogisticRegression's Loss, instead of two calls through the GLM
	// interface that the compiler cannot inline. A type that embeds a
	// logistic regression and overrides Loss fails denseLogistic's check
	// and keeps its Loss.
	lx   []float64
	lx32 []float32

	// The rows and responses of the package's GLMs that keep them in
	// memory, for smhChain.prefetch, which only reads them: a user's type
	// embedding one reads its rows through the embedded type as well, but
	// is not matched, and is not prefetched. Without the responses for the
	// logistic regressions, whose y_i the records hold.
	mem rowStore
}

// smhDatum is SMH's terms of a datum, in its datumRecord: its expansion
// (b_i alone for an energy that is not a GLM) and, for the package's
// logistic regressions, its response y_i, which their inline loss reads
// from here rather than from another array. Padded so that a record is 64
// bytes, one cache line in an array of them (TestDatumRecordSizes).
type smhDatum struct {
	glmTaylor
	y float64
	_ float64
}

// glmTaylor is a GLM datum's expansion at the centre — z_i = x_iᵀθ̂,
// f′_i(z_i) and f″_i(z_i) (0 for order 1) — beside its remainder bound b_i:
// 32 bytes, within one cache line.
type glmTaylor struct{ b, zHat, f1, f2 float64 }

// diff returns Û_i(θ′) − Û_i(θ) (untempered) at z = x_iᵀθ, zn = x_iᵀθ′:
// f′_i·(z′ − z) + f″_i·((z′ − ẑ)² − (z − ẑ)²)/2.
func (g glmTaylor) diff(z, zn float64) float64 {
	a, b := zn-g.zHat, z-g.zHat
	return g.f1*(zn-z) + g.f2*(a*a-b*b)/2
}

// newSMHTerms computes SMH's terms at center: one pass over the data.
func newSMHTerms(name string, t *Target, order int, center []float64) (*smhTerms, error) {
	d, n := t.Dim(), t.N()
	tb, ok := taylorBounderOf(t.Energy())
	if !ok {
		return nil, fmt.Errorf("%s: %w: energy %T has no Taylor remainder bounds (implement TaylorBounder or GLM)", name, ErrNoBound, t.Energy())
	}
	b, err := tb.TaylorBound(order, t.Prior())
	if err != nil {
		return nil, within(name, err)
	}
	if len(b) != n {
		return nil, fmt.Errorf("%s: TaylorBound returned %d bounds for %d data", name, len(b), n)
	}
	for i, v := range b {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: Taylor bound b[%d] = %v, want finite > 0", name, i, v)
		}
	}
	table, err := alias.New(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &smhTerms{sumB: table.Total(), center: slices.Clone(center), gradSum: make([]float64, d)}
	c.rec = newRecords(table, func(i int) smhDatum { return smhDatum{glmTaylor: glmTaylor{b: b[i]}} })
	if glm, ok := t.Energy().(GLM); ok {
		c.glm = glm
		if order == 2 {
			c.hess = make([]float64, d*d)
		}
		acc := symm.RankAcc{H: c.hess, D: d}
		c.conv = rowConverterOf(glm)
		var y []float64 // the logistic regressions' responses, kept in the records
		if r, ok := denseLogistic(glm); ok {
			c.lx, c.lx32, y = r.X, r.X32, r.Y
		}
		c.mem = memRows(glm)
		if y != nil {
			c.mem.resp = nil
		}
		rows := newRowCursor(glm)
		for i := range n {
			row := rows.row(i)
			z := vec.Dot(row, c.center)
			f1, f2 := glm.LossDerivs(i, z)
			g := &c.rec[i].data
			g.zHat, g.f1 = z, f1
			if y != nil {
				g.y = y[i]
			}
			vec.Axpy(c.gradSum, f1, row)
			if order == 2 {
				g.f2 = f2
				acc.Add(row, f2)
			}
		}
		if order == 2 {
			acc.Flush()
			symm.Symmetrize(c.hess, d)
		}
		return c, nil
	}
	if order == 2 {
		return nil, fmt.Errorf("SMH-2 needs an energy implementing GLM for O(N) Hessians; %T does not", t.Energy())
	}
	g, ok := t.Energy().(Gradienter)
	if !ok {
		return nil, fmt.Errorf("%s: energy %T has no gradient (implement Gradienter)", name, t.Energy())
	}
	c.grads = prefault.Make[float64](n * d)
	idx, one := []int{0}, []float64{1}
	for i := range n {
		idx[0] = i
		g.AddGradient(c.grads[i*d:(i+1)*d], c.center, idx, one)
		for j := range d {
			c.gradSum[j] += c.grads[i*d+j]
		}
	}
	if err := vec.FiniteVec(name+": per-datum gradients at Center", c.gradSum); err != nil {
		return nil, err
	}
	return c, nil
}

type smhChain struct {
	k SMH
	walk
	rival     *mhRival // nil with KeepMinibatch
	*smhTerms          // shared by the run's chains
	maxRate   float64  // the expected batch above which a step is full MH (asMHRate: every step)
	fact      float64  // (k+1)!
	idx       [1]int
	ahead     [smhAhead]int     // a group of data drawn ahead (Step)
	coins     [smhAhead]float64 // and their thinning uniforms
	kappa     float64           // the step's κ = (‖θ − θ̂‖₁^{k+1} + ‖θ′ − θ̂‖₁^{k+1})/(k+1)!
	sink      float64           // prefetch's sum of what it read (see prefetch.Data)
	diff      [batchChunk]float64
	fullIdx   [batchChunk]int
	seen      distinct
	lastBatch int

	controlVariate func(beta, dHat float64) float64
	remainder      func(r float64) float64
}

// smhAhead is how many data SMH's step draws, and prefetches, before computing
// their remainders: enough misses in flight to cover most of a row's
// latency, few enough that a rejection early in the group wastes little.
const smhAhead = 16

// prefetch starts loading the records of the data idx (those of the data a
// draw kept are already in cache: drawRecords read them) and, for the
// package's GLMs with rows in memory (which it reaches without a call),
// their rows and the responses not in the records (internal/prefetch), so
// that their cache misses overlap, as prefetch.Blocks does for the batch
// gathers. What prefetch returns is stored in c.sink.
func (c *smhChain) prefetch(idx []int) {
	if c.glm == nil {
		return
	}
	c.sink = c.mem.prefetch(len(c.center), idx) + float64(prefetch.Rows(c.rec, 1, 1, idx))
}

// Params reports the order, Σb_i and, when warmup switched the chain to
// MH, the switch.
func (c *smhChain) Params() map[string]float64 {
	return c.rival.params(map[string]float64{"order": float64(c.k.Order), "sum_b": c.sumB})
}

// midWarmup switches the chain to full-batch MH, halfway through warmup,
// if MH is predicted faster (mhRival). SMH-2's steps also cost two
// quadratic forms in the summed Hessian, O(d²): d data's worth each.
func (c *smhChain) midWarmup(warmup Totals, _ bool) (warmupTurn, error) {
	if c.rival == nil {
		return warmupTurn{}, nil
	}
	cost := float64(minibatchStepCost)
	if c.k.Order == 2 {
		cost += 2 * float64(len(c.theta))
	}
	scale, switched, err := c.rival.compare(&c.walk, c.t, warmup, cost)
	if switched {
		c.maxRate = asMHRate // every step a full MH step
	}
	return restartAt(scale, switched), err
}

// MarshalState saves the switch to MH (nothing without one).
func (c *smhChain) MarshalState() ([]byte, error) { return c.rival.saveSwitch() }

// UnmarshalState restores it.
func (c *smhChain) UnmarshalState(b []byte) error {
	asMH, err := c.rival.restoreSwitch(b)
	if asMH {
		c.maxRate = asMHRate
	}
	return err
}

// quad returns (v − θ̂)ᵀH(v − θ̂) for the summed Hessian.
func (c *smhChain) quad(v []float64) float64 {
	d := len(v)
	var s float64
	for j := range d {
		vj := v[j] - c.center[j]
		var r float64
		for l := range d {
			r += c.hess[j*d+l] * (v[l] - c.center[l])
		}
		s += vj * r
	}
	return s
}

// l1 returns ‖v − θ̂‖₁.
func (c *smhChain) l1(v []float64) float64 {
	var s float64
	for j, x := range v {
		s += math.Abs(x - c.center[j])
	}
	return s
}

// Step makes one SMH transition: the factorised step (factorised) whose
// first factor is the prior and proposal's with the control variates',
// and whose per-datum factors are the Taylor remainders'.
func (c *smhChain) Step(rng *rand.Rand) (Info, error) {
	logExact, ok := c.propose(rng)
	if !ok {
		return Info{LogDensity: math.NaN()}, nil
	}
	order := float64(c.k.Order + 1)
	c.kappa = (math.Pow(c.l1(c.theta), order) + math.Pow(c.l1(c.next), order)) / c.fact
	rate := c.t.Beta() * c.sumB * c.kappa
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return Info{}, fmt.Errorf("expected batch βΣb·κ = %v (κ = %v) at θ = %v, θ′ = %v", rate, c.kappa, c.theta, c.next)
	}
	return c.factorised(rng, c, logExact, rate, c.maxRate, &c.seen, c.ahead[:], c.coins[:], &c.fullIdx, &c.diff)
}

// firstFactor returns the log of the control-variate factor,
// logExact − βΣ(Û_i(θ′) − Û_i(θ)) from the sums.
func (c *smhChain) firstFactor(logExact float64) (float64, int, error) {
	var dHat float64
	for j := range c.theta {
		dHat += c.gradSum[j] * (c.next[j] - c.theta[j])
	}
	if c.k.Order == 2 {
		dHat += (c.quad(c.next) - c.quad(c.theta)) / 2
	}
	return logExact - c.controlVariate(c.t.Beta(), dHat), 0, nil
}

// draw draws the data ∝ b_i and their thinning uniforms, their records'
// alias columns read in a loop of their own (drawRecords).
func (c *smhChain) draw(rng *rand.Rand, group []int, coins []float64) {
	drawRecords(rng, c.rec, group, coins)
}

// datumFactor returns datum i's change of Taylor remainder βR_i(θ′) −
// βR_i(θ) and its bound βb_iκ, checked against the rounding the
// difference may carry.
func (c *smhChain) datumFactor(i int) (float64, float64, error) {
	beta := c.t.Beta()
	r, du, b, err := c.remainderDiff(i, beta)
	if err != nil {
		return 0, 0, err
	}
	bound := beta * b * c.kappa
	if math.Abs(r) > bound*(1+boundTol)+1e-12*math.Abs(du) && math.Abs(r) > bound*(1+boundTol)+c.roundingSlack(i, c.theta, c.next, beta) {
		return 0, 0, fmt.Errorf("Taylor remainder: %w", diffViolation(i, r, bound, c.theta, c.next))
	}
	return r, bound, nil
}

// roundingSlack returns the rounding error that β(U_i(θ′) − U_i(θ)) and
// its Taylor part may carry at (θ, θ′) = (c.theta, c.next): each of
// U_i(θ) and U_i(θ′) is rounded relative to its own magnitude (a GLM's
// also relative to its terms, of the size of the linear predictors
// z = x_iᵀθ), and their difference keeps that error however small the
// difference is. A datum whose row is near zero (|x_i| ≈ 10⁻⁷) has
// U_i ≈ log 2 at every θ, so ΔU_i is rounded to about 10⁻¹⁶ while its
// remainder bound c_i·M is about 10⁻²⁴: a slack relative to |ΔU_i| would
// refuse the correct bound (TestSMHNearZeroRow). The checks call it only
// when the cheaper slack fails, so the step pays nothing for it; it
// evaluates U_i without counting the evaluations.
func (c *smhChain) roundingSlack(i int, theta, next []float64, beta float64) float64 {
	var u [2]float64
	idx := [1]int{i}
	c.t.energy.Energies(u[:1], theta, idx[:])
	c.t.energy.Energies(u[1:], next, idx[:])
	scale := math.Abs(u[0]) + math.Abs(u[1])
	if c.glm != nil {
		z, zn := c.rowDot2(i)
		scale += (1 + math.Abs(c.rec[i].data.y)) * (math.Abs(z) + math.Abs(zn))
	}
	return 1e-12 * beta * scale
}

// remainderDiff returns βR_i(θ′) − βR_i(θ), the change of datum i's
// Taylor remainder, βΔU_i = β(U_i(θ′) − U_i(θ)) and the bound b_i. A GLM datum's row is
// read once: z = x_iᵀθ and z′ = x_iᵀθ′ give both the loss difference
// f_i(z′) − f_i(z) and the Taylor part, where the Target's energy
// difference and taylorDiff would each compute them.
func (c *smhChain) remainderDiff(i int, beta float64) (r, du, b float64, err error) {
	if c.glm == nil {
		c.idx[0] = i
		if err := c.t.EnergyDiffs(c.diff[:1], c.theta, c.next, c.idx[:]); err != nil {
			return 0, 0, 0, err
		}
		du = -c.diff[0]
		return c.remainder(du - beta*c.taylorDiff(i)), du, c.rec[i].data.b, nil
	}
	if c.t.evals++; c.t.differ == nil {
		c.t.evals++ // counted as Target.EnergyDiffs counts it: two without a fused difference
	}
	g := &c.rec[i].data
	z, zn, df := c.lossDiff(i, g.y)
	du = beta * df
	if math.IsNaN(du) || math.IsInf(du, 0) {
		return 0, 0, 0, newEnergyError(i, c.theta, c.next, -du)
	}
	return c.remainder(du - beta*g.diff(z, zn)), du, g.b, nil
}

// lossDiff returns z = x_iᵀθ, z′ = x_iᵀθ′ and f_i(z′) − f_i(z) of a GLM
// datum, reading x_i once. For a logistic DenseGLM it is
// its Loss inlined (softplus(z) − y_i·z, the same expression, so the
// same bits), with y, datum i's response from its record: the two calls
// through the interface, which the compiler cannot inline, and softplus's
// unpredictable branch are a measurable part of SMH-2's time per datum
// (docs/scaling.md).
func (c *smhChain) lossDiff(i int, y float64) (z, zn, df float64) {
	switch {
	case c.lx != nil:
		d := len(c.theta)
		z, zn = vec.Dot2(c.lx[i*d:(i+1)*d], c.theta, c.next)
		return z, zn, logisticLossDiff(z, zn, y)
	case c.lx32 != nil:
		d := len(c.theta)
		z, zn = vec.Dot2Conv(c.lx32[i*d:(i+1)*d], c.theta, c.next)
		return z, zn, logisticLossDiff(z, zn, y)
	}
	z, zn = c.rowDot2(i)
	return z, zn, c.glm.Loss(i, zn) - c.glm.Loss(i, z)
}

// logisticLossDiff returns f(z′) − f(z) for LogisticRegression's loss
// f(z) = softplus(z) − y·z, bit for bit its Loss(i, z′) − Loss(i, z): each
// softplus in logisticLosses' form, without softplus's branch on the sign
// of z, which the CPU cannot predict (z and z′ straddle 0 as often as
// not), and the two exponentials before the two log1p, which then need
// not wait for each other.
func logisticLossDiff(z, zn, y float64) float64 {
	e, en := math.Exp(-math.Abs(z)), math.Exp(-math.Abs(zn))
	return (max(zn, 0) + math.Log1p(en) - y*zn) - (max(z, 0) + math.Log1p(e) - y*z)
}

// rowDot2 returns x_iᵀθ and x_iᵀθ′ of a GLM datum, reading x_i once.
func (c *smhChain) rowDot2(i int) (z, zn float64) {
	if c.conv != nil {
		return c.conv.rowDot2(i, c.theta, c.next)
	}
	return vec.Dot2(c.glm.Row(i), c.theta, c.next)
}

// taylorDiff returns Û_i(θ′) − Û_i(θ) (untempered).
func (c *smhChain) taylorDiff(i int) float64 {
	if c.glm != nil {
		return c.rec[i].data.diff(c.rowDot2(i))
	}
	d := len(c.theta)
	g := c.grads[i*d : (i+1)*d]
	var t float64
	for j := range g {
		t += g[j] * (c.next[j] - c.theta[j])
	}
	return t
}

// An SMH transition changes the chain only once decided: a cancelled
// full-batch step (fullMHStep) or minibatch leaves it as it was.
func (c *smhChain) interruptible() bool { return true }
func (c *smhChain) abandonStep()        {}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ stepInterrupter = (*smhChain)(nil)
	_ factorisedChain = (*smhChain)(nil)

	_ Kernel        = SMH{}
	_ AcceptTarget  = SMH{}
	_ driverChain   = (*smhChain)(nil)
	_ ParamReporter = (*smhChain)(nil)
	_ midWarmuper   = (*smhChain)(nil)
	_ fullMemoer    = (*smhChain)(nil)
)

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
	"github.com/exactmh/exactmh/internal/poisson"
)

// PoissonMH is the exact minibatch kernel of Zhang and De Sa (2019),
// "Poisson-minibatching for Gibbs sampling with convergence rate
// guarantees", in the Metropolis–Hastings form of the TunaMH paper (App. D,
// Algorithm 3, thinning form).
//
// It needs an EnergyRange (untempered, the kernel applies β; audited over
// all data at Start): βU_i(θ) ∈ [lo_i, lo_i + M_i] on the prior's
// support, so φ_i(θ) = lo_i + M_i − βU_i(θ) ∈ [0, M_i] and
// π(θ) ∝ exp(Σφ_i(θ)). With L = ΣM_i and the hyperparameter λ, each step
// draws Poisson counts s_i ~ Poisson(λM_i/L + φ_i(θ)) at the current θ
// only — by thinning B ~ Poisson(λ + L) draws i ∝ M_i — and accepts θ′ with
// ratio Π_i ((λM_i/L + φ_i(θ′))/(λM_i/L + φ_i(θ)))^{s_i}. The counts are
// kept as the sparse list of kept draws, never as a length-N vector.
//
// A step costs about λ + L evaluations at θ plus one per kept draw at θ′.
// The spectral-gap ratio to MH is at least e^{−1/e}·exp(−L²/max(λ+L, 2λ))
// (auxiliary-variable paper, Prop. 5), so λ must grow like L²: the
// convention here is λ = LambdaScale·L². On an untempered posterior L
// grows with N and λ + L soon exceeds N (a logistic regression with
// N = 10⁵ on a ball of radius 5 has λ + L ≈ 10¹⁰): the kernel cannot pay
// off there, and MaxBatch makes it a full-batch MH chain instead.
//
// On a posterior rewritten by ControlVariates over a Box or Ball prior it
// runs, like Poisson-MALA and Poisson-Barker, on the remainders
// R_i = U_i − Û_i and their EnergyRange, which is far narrower than the
// energies' when the support lies within a few tens of posterior sds of
// the expansion point. A remainder is of third order in x_iᵀ(θ − θ̂), so
// on a ball of radius r about θ̂ L grows like r³ instead of r; with r = k
// posterior sds (∝ 1/√N) it is about k³/√N times a constant, and falls as
// N grows: on a logistic regression with N = 10⁵, d = 10, L = 18 and a
// step reads 22 data at k ≈ 9 (ControlVariates gives the figures). On a
// wide support the remainders' range is still too large, and the kernel
// falls back to MH as above.
type PoissonMH struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1); warmup adapts it.
	Scale float64
	// LambdaScale sets λ = LambdaScale·L² (0: 0.01, the auxiliary-variable
	// paper's robust-regression value; it uses 0.0005 for its truncated
	// Gaussian). Ignored when Lambda > 0.
	LambdaScale float64
	// Lambda sets λ directly when positive.
	Lambda float64
	// Range is the energy range, in the untempered energy's units as
	// Posterior.EnergyRange returns it; the kernel multiplies Lo and Width
	// by β (nil: the posterior's).
	Range *EnergyRange
	// MaxBatch is the expected batch λ + L above which every step is a
	// full-batch MH step instead (Info.Fallback, Batch N), as TunaMH's
	// MaxBatch. Zero means N; +Inf never falls back. With the default λ
	// (Lambda and LambdaScale 0) and a finite MaxBatch the chain also
	// compares itself with full-batch MH halfway through warmup, as TunaMH
	// does, and runs as MH, saying so, where MH is predicted faster. λ + L does not depend
	// on θ, so the choice is made once, at Start, from the expected batch
	// alone — never from a drawn B — and the chain is exact either way.
	// Start refuses an expected batch above maxBatchOverN·N that MaxBatch
	// lets through: each step would read the data over a hundred times,
	// for a spectral gap no larger than MH's (Prop. 5), and a step cannot
	// be interrupted.
	MaxBatch float64
	// TrustBound skips the audit of the range at Start: every datum at θ0
	// and a few proposals from it (see the package documentation,
	// "Bounds"). Set it only for a range known to hold; steps still check
	// every datum they draw.
	TrustBound bool
	// Accept is the acceptance function (zero value: AcceptMetropolis,
	// min(1, r); AcceptBarker: r/(1 + r), exact too by the
	// auxiliary-variable paper's Prop. 10).
	Accept Acceptance

	// Test hooks (export_test.go), nil in every real kernel: the thinning
	// probability (nil: poissonKeep) and the weights the data are drawn
	// with (nil: M_i).
	keep    func(a, phi, width float64) float64
	weights func(width []float64) []float64
}

// Name returns "PoissonMH", or "PoissonMH (Barker)" with AcceptBarker.
func (k PoissonMH) Name() string { return k.Accept.nameWith("PoissonMH") }

// Exact returns true.
func (PoissonMH) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's optimal rate
// (Roberts, Gelman and Gilks 1997), which no other rate clearly beats for
// PoissonMH; TestTargetAcceptSweep (go test -run TestTargetAcceptSweep
// -sweep PoissonMH -v .) measures bulk ESS per datum evaluation across
// target rates.
func (PoissonMH) DefaultTargetAccept() float64 { return 0.234 }

// Start checks the range and builds the alias table over M_i.
func (k PoissonMH) Start(t *Target, theta0 []float64) (Chain, error) {
	w, err := newWalk("PoissonMH", t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	if err := k.Accept.check("PoissonMH"); err != nil {
		return nil, err
	}
	counts, err := newPoissonCounts("PoissonMH", t, k.Range, k.Lambda, k.LambdaScale, k.MaxBatch, k.keep, k.weights)
	if err != nil {
		return nil, err
	}
	if err := w.audit(k.TrustBound, counts.auditKey(), perPoint(counts.audit)); err != nil {
		return nil, err
	}
	pc := &poissonChain{prop: w.prop, counts: counts}
	if k.Lambda == 0 && k.LambdaScale == 0 && !counts.fallback && !math.IsInf(k.MaxBatch, 1) {
		// A λ the user set is theirs, and MaxBatch +Inf never falls back.
		pc.rival, pc.t = newMHRival(t.Dim()), t
	}
	ac := &auxChain[struct{}, *poissonCounts]{walk: w, scheme: pc, acc: k.Accept}
	pc.walk = &ac.walk
	return ac, nil
}

// poissonChain is PoissonMH as a scheme of the auxiliary-variable framework
// (Aux), Case 1: no ω1, the Proposal's move, ω2 the Poisson counts at θ.
type poissonChain struct {
	prop   Proposal
	counts *poissonCounts
	// rival is the mid-warmup comparison with full-batch MH (nil when the
	// user set λ, or when λ + L already exceeds MaxBatch); when it finds
	// MH faster every step is a full-batch step (counts.fallback).
	rival *mhRival
	walk  *walk // the auxChain's, for the comparison
	t     *Target
}

// Params reports λ and L, and the switch to MH if warmup made it.
func (c *poissonChain) Params() map[string]float64 {
	return c.rival.params(c.counts.params())
}

// midWarmup switches the chain to full-batch MH, halfway through warmup,
// if MH is predicted faster (mhRival): the same honesty for the default λ
// as for TunaMH's χ.
func (c *poissonChain) midWarmup(warmup Totals, _ bool) (warmupTurn, error) {
	if c.rival == nil {
		return warmupTurn{}, nil
	}
	scale, switched, err := c.rival.compare(c.walk, c.t, warmup, minibatchStepCost)
	if switched {
		c.counts.fallback = true
	}
	return restartAt(scale, switched), err
}

// fullMemo is the memo of the fallback steps, saved with checkpoints.
func (c *poissonChain) fullMemo() *fullEnergies { return &c.counts.full }

// MarshalState saves the switch to MH (nothing without one).
func (c *poissonChain) MarshalState() ([]byte, error) { return c.rival.saveSwitch() }

// UnmarshalState restores it.
func (c *poissonChain) UnmarshalState(b []byte) error {
	asMH, err := c.rival.restoreSwitch(b)
	if asMH {
		c.counts.fallback = true
	}
	return err
}

// DrawOmega1 draws nothing (Case 1).
func (c *poissonChain) DrawOmega1(*rand.Rand, []float64) (struct{}, error) { return struct{}{}, nil }

// Propose draws θ′ from the Proposal.
func (c *poissonChain) Propose(rng *rand.Rand, next, theta []float64, _ struct{}, scale float64) (float64, error) {
	return c.prop.Propose(rng, next, theta, scale), nil
}

// DrawOmega2 draws the Poisson counts s at θ (Algorithm 3, step 2); a
// falling-back chain draws nothing.
func (c *poissonChain) DrawOmega2(rng *rand.Rand, theta, _ []float64, _ struct{}) (*poissonCounts, error) {
	if c.counts.fallback {
		return c.counts, nil
	}
	return c.counts, c.counts.draw(rng, theta)
}

// LogRatio evaluates the counts at θ′: the ratio of step 3. A
// falling-back chain returns the exact Σ_i β(U_i(θ) − U_i(θ′)) instead.
func (c *poissonChain) LogRatio(theta, next []float64, _ struct{}, counts *poissonCounts, _ float64) (float64, error) {
	if counts.fallback {
		return counts.fullDiff(theta, next)
	}
	if err := counts.evalAt(next); err != nil {
		return 0, err
	}
	return counts.logRatio(), nil
}

// Report gives the Poisson count B and the distinct data drawn (N and
// Fallback for a full-batch step); nothing when θ′ left the support (the
// counts were not drawn).
func (c *poissonChain) Report(info Info) Info {
	info.Batch, info.Distinct, info.Fallback = c.counts.batch, c.counts.seen.Count, c.counts.batch > 0 && c.counts.fallback
	c.counts.batch, c.counts.seen.Count = 0, 0
	return info
}

// A PoissonMH transition changes the chain only once decided: an
// abandoned one leaves only the batch it recorded for Report.
func (c *poissonChain) interruptible() bool { return true }
func (c *poissonChain) abandonStep()        { c.counts.batch, c.counts.seen.Count = 0, 0 }

// poissonCounts holds the Poisson auxiliary variables shared by PoissonMH,
// Poisson-Barker and Poisson-MALA: the counts s_i ~ Poisson(λM_i/L + φ_i(θ))
// drawn at θ by thinning, kept as the multiset of kept draws with φ_i(θ),
// and φ_i(θ′) for the same draws once evaluated there.
type poissonCounts struct {
	who       string
	t         *Target
	lo, width []float64
	table     *alias.Table
	lambda    float64
	sumM      float64      // L = ΣM_i
	fallback  bool         // λ + L > MaxBatch: every step is full-batch
	full      fullEnergies // the fallback steps' memo

	batch          int       // B, the Poisson count of the last draw (N in a fallback)
	kept           []int     // the counts s as the multiset of kept draws
	phiOld, phiNew []float64 // φ_i(θ) and φ_i(θ′) for each kept draw
	idx            [batchChunk]int
	u              [batchChunk]float64
	w              [batchChunk]float64
	lo1, width1    [batchChunk]float64 // Lo_i and M_i of the drawn idx
	seen           distinct
	keep           func(a, phi, width float64) float64 // poissonKeep but in tests
}

// maxBatchOverN bounds the expected batch λ + L of a Poisson kernel that
// does not fall back, in units of N: beyond it Start returns an error.
const maxBatchOverN = 100

// poissonInitialRoom caps the room Start reserves for the kept draws; the
// buffers grow, amortised, with the batches actually drawn and keep their
// size, so that steady-state steps allocate nothing.
const poissonInitialRoom = 1 << 12

// newPoissonCounts builds the alias table ∝ M_i, chooses λ and decides,
// from λ + L and maxBatch alone, whether every step falls back to the full
// batch. keep and weights are PoissonMH's test hooks (nil: poissonKeep and
// M_i).
func newPoissonCounts(who string, t *Target, r *EnergyRange, lambda, lambdaScale, maxBatch float64,
	keep func(a, phi, width float64) float64, weights func([]float64) []float64) (*poissonCounts, error) {
	if maxBatch < 0 || math.IsNaN(maxBatch) {
		return nil, fmt.Errorf("%s: MaxBatch = %v, want ≥ 0 (0: N, +Inf: never fall back)", who, maxBatch)
	}
	r, err := energyRange(who, t, r)
	if err != nil {
		return nil, err
	}
	table, err := boundTable(who, "range widths M_i (EnergyRange.Width)", r.Width, t, false)
	if err != nil {
		return nil, err
	}
	sumM := table.Total()
	if weights != nil {
		if table, err = alias.New(weights(r.Width)); err != nil {
			return nil, err
		}
	}
	if keep == nil {
		keep = poissonKeep
	}
	switch {
	case lambda < 0 || math.IsNaN(lambda) || math.IsInf(lambda, 0):
		return nil, fmt.Errorf("%s: Lambda = %v, want finite ≥ 0 (0: LambdaScale·L²)", who, lambda)
	case lambdaScale < 0 || math.IsNaN(lambdaScale) || math.IsInf(lambdaScale, 0):
		return nil, fmt.Errorf("%s: LambdaScale = %v, want finite ≥ 0 (0: 0.01)", who, lambdaScale)
	case lambda == 0 && lambdaScale == 0:
		lambda = poissonLambdaScale * sumM * sumM
	case lambda == 0:
		lambda = lambdaScale * sumM * sumM
	}
	if err := poisson.Check(lambda + sumM); err != nil {
		return nil, fmt.Errorf("%s: batch mean λ + L: %w (λ = %v, L = %v)%s", who, err, lambda, sumM, betaNote(t))
	}
	if !(lambda > 0) {
		return nil, fmt.Errorf("%s: λ = %v, want > 0 (L = %v)%s", who, lambda, sumM, betaNote(t))
	}
	expect, n := lambda+sumM, float64(t.N())
	if maxBatch == 0 {
		maxBatch = n
	}
	p := &poissonCounts{who: who, t: t, lo: r.Lo, width: r.Width, table: table, lambda: lambda, sumM: sumM,
		fallback: expect > maxBatch, seen: newDistinct(), keep: keep, full: newFullEnergies(t.Dim())}
	if p.fallback {
		return p, nil // no Poisson draws: no room for them
	}
	if expect > maxBatchOverN*n {
		return nil, fmt.Errorf("%s: expected batch λ + L = %.4g (λ = %.4g, L = %.4g) is %.3g·N: each step would read the data %.3g times over; lower λ (Lambda, LambdaScale), temper the posterior, or let it fall back to full-batch MH (MaxBatch)",
			who, expect, lambda, sumM, expect/n, expect/n)
	}
	// Kept draws number at most B; room for B up to its mean + 10 sd covers
	// every step of a moderate batch, larger ones grow the buffers (append
	// doubles them) once, and growth is kept.
	room := int(min(expect+10*math.Sqrt(expect)+64, poissonInitialRoom))
	p.kept, p.phiOld, p.phiNew = make([]int, 0, room), make([]float64, 0, room), make([]float64, 0, room)
	return p, nil
}

// fullDiff returns the exact log likelihood ratio Σ_i β(U_i(θ) − U_i(θ′))
// of a fallback step, reading all N data, and records the batch.
func (p *poissonCounts) fullDiff(theta, next []float64) (float64, error) {
	p.batch, p.seen.Count = p.t.N(), p.t.N()
	return p.full.fallback(p.t, theta, next, p.fallback, &p.idx, &p.u)
}

// poissonKeep is the thinning probability (λM_i/L + φ_i(θ))/(λM_i/L + M_i)
// with which a draw of datum i is kept as one of its Poisson count s_i.
func poissonKeep(a, phi, width float64) float64 { return (a + phi) / (a + width) }

func (p *poissonCounts) params() map[string]float64 {
	return map[string]float64{"lambda": p.lambda, "L": p.sumM}
}

// a returns λM_i/L, the count's offset for datum i.
func (p *poissonCounts) a(i int) float64 { return p.lambda * p.width[i] / p.sumM }

// draw draws the counts at θ by thinning: B ~ Poisson(λ + L) draws i ∝ M_i,
// each kept with probability (λM_i/L + φ_i(θ))/(λM_i/L + M_i).
func (p *poissonCounts) draw(rng *rand.Rand, theta []float64) error {
	p.batch = poisson.Draw(rng, p.lambda+p.sumM)
	p.kept, p.phiOld = p.kept[:0], p.phiOld[:0]
	p.seen.Next()
	for done := 0; done < p.batch; {
		// A batch can be as large as MaxBatch (N by default): a cancelled
		// run stops within a chunk of it.
		if p.t.interrupted() {
			return errInterrupted
		}
		n := min(p.batch-done, batchChunk)
		idx := p.idx[:n]
		p.table.DrawInto(rng, idx, p.u[:n]) // u as scratch
		// The ranges in a loop of their own, so that their misses overlap.
		lo, width := p.lo1[:n], p.width1[:n]
		for j, i := range idx {
			lo[j], width[j] = p.lo[i], p.width[i]
		}
		for _, i := range idx {
			p.seen.Add(i)
		}
		if err := p.t.Energies(p.u[:n], theta, idx); err != nil {
			return err
		}
		for j, i := range idx {
			phi, err := p.phiOf(i, lo[j], width[j], p.u[j], theta)
			if err != nil {
				return err
			}
			if rng.Float64() < p.keep(p.lambda*width[j]/p.sumM, phi, width[j]) { // a(i)
				p.kept = append(p.kept, i)
				p.phiOld = append(p.phiOld, phi)
			}
		}
		done += n
	}
	return nil
}

// evalAt sets φ_i(θ′) for every kept draw.
func (p *poissonCounts) evalAt(next []float64) error {
	p.phiNew = p.phiNew[:0]
	for lo := 0; lo < len(p.kept); lo += batchChunk {
		if p.t.interrupted() {
			return errInterrupted
		}
		hi := min(lo+batchChunk, len(p.kept))
		if err := p.t.Energies(p.u[:hi-lo], next, p.kept[lo:hi]); err != nil {
			return err
		}
		for j, i := range p.kept[lo:hi] {
			phi, err := p.phi(i, p.u[j], next)
			if err != nil {
				return err
			}
			p.phiNew = append(p.phiNew, phi)
		}
	}
	return nil
}

// logRatio returns Σ_kept log((a_i + φ_i(θ′))/(a_i + φ_i(θ))), the log of
// π(θ′)P_θ′(s)/(π(θ)P_θ(s)) without the prior (after evalAt).
func (p *poissonCounts) logRatio() float64 {
	var r float64
	for k, i := range p.kept {
		a := p.a(i)
		r += math.Log1p(p.phiNew[k]/a) - math.Log1p(p.phiOld[k]/a)
	}
	return r
}

// addGradient adds the proxy gradient Σ_kept ∇φ_i(θ)/(a_i + φ_i(θ)) to g,
// with φ the values at θ (phiOld or phiNew): ∇φ_i = −β∇U_i, the gradient of
// log Π_i (a_i + φ_i(θ))^{s_i}, an unbiased-in-spirit estimate of
// ∇Σφ_i = ∇log π − ∇log prior.
func (p *poissonCounts) addGradient(g, theta, phi []float64) error {
	for lo := 0; lo < len(p.kept); lo += batchChunk {
		hi := min(lo+batchChunk, len(p.kept))
		w := p.w[:hi-lo]
		for j, i := range p.kept[lo:hi] {
			w[j] = -1 / (p.a(i) + phi[lo+j])
		}
		if err := p.t.AddGradient(g, theta, p.kept[lo:hi], w); err != nil {
			return err
		}
	}
	return nil
}

// phi returns φ_i = lo_i + M_i − βU_i, checking that it lies in [0, M_i]:
// outside, the thinning probabilities leave [0, 1] and the chain is no
// longer exact, so the step fails with the datum and numbers.
func (p *poissonCounts) phi(i int, u float64, theta []float64) (float64, error) {
	return p.phiOf(i, p.lo[i], p.width[i], u, theta)
}

// phiOf is phi with datum i's Lo_i = lo and M_i = width already read.
func (p *poissonCounts) phiOf(i int, lo, width, u float64, theta []float64) (float64, error) {
	phi := lo + width - u
	slack := boundTol * (math.Abs(lo) + width)
	if phi < -slack || phi > width+slack {
		v := &BoundViolation{Datum: i, Theta: slices.Clone(theta), Value: u, Lo: lo, Width: width,
			Ratio: math.Max(-phi, phi-width) / width}
		return 0, v
	}
	return min(max(phi, 0), width), nil
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel                             = PoissonMH{}
	_ AcceptTarget                       = PoissonMH{}
	_ AuxChain[struct{}, *poissonCounts] = (*poissonChain)(nil)
	_ schemeChain                        = (*poissonChain)(nil)
	_ midWarmuper                        = (*poissonChain)(nil)
	_ fullMemoer                         = (*poissonChain)(nil)
	_ stepInterrupter                    = (*poissonChain)(nil)
)

// The capabilities PoissonMH declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k PoissonMH) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k PoissonMH) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k PoissonMH) Proposer() Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k PoissonMH) WithProposal(p Proposal) Kernel {
	k.Proposal = p
	return k
}

// WithLambda returns k with Lambda v (λ).
func (k PoissonMH) WithLambda(v float64) Kernel {
	k.Lambda = v
	return k
}

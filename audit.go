// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// The audit of a minibatch kernel's bound at Start. The kernels check the
// bound of every datum they draw, but they draw data in proportion to their
// bounds: a c_i (or range width, or Taylor constant) far too small — or zero
// — is almost never drawn, so a bound wrong on rarely drawn data would go
// unnoticed while the chain samples the wrong distribution. The audit reads
// every datum instead, a few times, before the first step.

// auditScales are the multiples of the chain's initial step scale with which
// the audit proposes its points from θ0: a move of the proposal's own size,
// then larger ones.
var auditScales = [...]float64{1, 3, 10}

// auditSeed seeds the audit's own generator: the audit never draws from the
// chain's random stream, and a kernel's audit is the same on every run.
const auditSeed = 0x6175646974 // "audit"

// auditCheck checks a kernel's bound for every datum, through the audit's
// Target t (tempered energies; its evaluations are not the chain's): at
// theta alone when nexts is nil — the audit calls it so once, at θ0 — and
// otherwise for each pair (theta, nexts[k]) or at each nexts[k], in that
// order. It returns, for the first pair or point that fails, a
// *BoundViolation or *LowerBoundViolation for the worst datum found, or
// any other error (a non-finite energy) as is. A check may read the data
// once for all the pairs (diffAudit); perPoint makes one of a check of one
// pair at a time.
type auditCheck func(t *Target, theta []float64, nexts [][]float64) error

// perPoint is the auditCheck that calls check at theta alone when nexts is
// nil, else for each next in turn, stopping at the first error.
func perPoint(check func(t *Target, theta, next []float64) error) auditCheck {
	return func(t *Target, theta []float64, nexts [][]float64) error {
		if nexts == nil {
			return check(t, theta, nil)
		}
		for _, next := range nexts {
			if err := check(t, theta, next); err != nil {
				return err
			}
		}
		return nil
	}
}

// audit checks a minibatch kernel's bound over all N data before sampling —
// the one audit every such kernel's Start calls, with its own check. The
// points are θ0 and len(auditScales) proposals from θ0 drawn by the chain's
// Proposal (the isotropic RandomWalk for kernels that propose by their
// own rule) at multiples of the chain's initial scale, from a fixed
// generator of the audit's own, each moved into the prior's support
// (intoSupport); the pairs are (θ0, each proposal). Each check reads every
// datum once per point or pair (diffAudit once for all its pairs), through
// a Target of its own, so the chain's
// evaluation count and random stream are untouched. trust skips the audit
// (the kernels' TrustBound).
//
// key names the bound and check (a pointer to the bound's run-shared
// data): the chains of a run, and the automatic default's pilots and the
// run they choose for, share one audit of a bound — by the first chain to
// start, at its θ0 — since whether the bound holds does not depend on
// which chain asks (a kernel whose bound may differ per chain passes "").
func (w *walk) audit(trust bool, key string, check auditCheck) error {
	if trust {
		return nil
	}
	if key == "" || w.t.cache == nil {
		return w.auditNow(check)
	}
	_, err := shared(w.t.cache, "audit/"+key, func() (struct{}, error) { return struct{}{}, w.auditNow(check) })
	return err
}

// auditNow is audit without sharing: it checks the bound at this chain's
// θ0 and proposals from it.
func (w *walk) auditNow(check auditCheck) error {
	t, err := NewTarget(posteriorOf(w.t))
	if err != nil {
		return fmt.Errorf("%s: %w", w.name, err)
	}
	t.interrupt = w.t.interrupt // Start's cancellation stops the audit within a chunk
	prop := w.prop
	if prop == nil {
		prop = RandomWalk{}
	}
	fail := func(err error) error {
		if errors.Is(err, errInterrupted) {
			return err
		}
		var hint string
		var v *BoundViolation
		if b := t.Beta(); b < 1 && errors.As(err, &v) && holdsOverBeta(v, b) {
			hint = fmt.Sprintf(" (β = %g: bounds are in the untempered energy's units and the kernel multiplies them by β; this one would hold divided by β — was it multiplied by β already?)", b)
		}
		return fmt.Errorf("%s: bound audit before sampling, every datum at θ0 and %d proposals from it (set TrustBound to skip): %w%s",
			w.name, len(auditScales), err, hint)
	}
	if err := check(t, w.theta, nil); err != nil {
		return fail(err)
	}
	rng := rand.New(rand.NewPCG(auditSeed, 0))
	nexts := make([][]float64, 0, len(auditScales))
	for _, m := range auditScales {
		next := make([]float64, len(w.theta))
		prop.Propose(rng, next, w.theta, m*w.scale)
		if !intoSupport(t.prior, next, w.theta) {
			continue // only for an unusual prior with θ0 outside its support
		}
		nexts = append(nexts, next)
	}
	if err := check(t, w.theta, nexts); err != nil {
		return fail(err)
	}
	return nil
}

// holdsOverBeta reports whether the violated bound would hold divided by β:
// the sign of a bound given in tempered units to a kernel that applies β.
func holdsOverBeta(v *BoundViolation, beta float64) bool {
	if v.ThetaNew != nil {
		return v.Ratio*beta <= 1+boundTol
	}
	slack := boundTol * (math.Abs(v.Lo) + v.Width) / beta
	return v.Value >= v.Lo/beta-slack && v.Value <= (v.Lo+v.Width)/beta+slack
}

// auditAll runs f over all N data of t in chunks of batchChunk, f's index
// slice and scratch allocated once for the audit. Like the Target's own
// passes it returns errInterrupted, within a chunk, once the run is
// cancelled (Target.interrupt: Sample watches its context while the
// chains start, TestInterruptStartAudit).
func auditAll(t *Target, f func(idx []int, val []float64) error) error {
	return auditRange(t, 0, t.N(), f)
}

// auditRange is auditAll over the data [lo, hi).
func auditRange(t *Target, lo, hi int, f func(idx []int, val []float64) error) error {
	idx, val := make([]int, batchChunk), make([]float64, batchChunk)
	sp := memRows(t.energy).pass(t.d, lo, hi)
	defer sp.End()
	for start := lo; start < hi; start += batchChunk {
		if t.interrupted() {
			return errInterrupted
		}
		sp.At(start)
		m := min(batchChunk, hi-start)
		for j := range m {
			idx[j] = start + j
		}
		if err := f(idx[:m], val[:m]); err != nil {
			return err
		}
	}
	return nil
}

// worstViolation keeps the largest violation of a pass over the data and
// counts the violating data.
type worstViolation struct {
	v     *BoundViolation
	count int
}

func (w *worstViolation) add(v *BoundViolation) {
	w.count++
	if w.v == nil || v.Ratio > w.v.Ratio || math.IsNaN(v.Ratio) {
		w.v = v
	}
}

// merge adds o, a pass over data after w's, as if its violations had been
// added to w one by one.
func (w *worstViolation) merge(o *worstViolation) {
	if o.v != nil && (w.v == nil || o.v.Ratio > w.v.Ratio || math.IsNaN(o.v.Ratio)) {
		w.v = o.v
	}
	w.count += o.count
}

// err returns the worst violation, saying how many data violated their
// bounds, or nil.
func (w *worstViolation) err(n int) error {
	if w.v == nil {
		return nil
	}
	return fmt.Errorf("%d of %d data violate their bounds here; the worst: %w", w.count, n, w.v)
}

// auditKey names a tempered DiffBound's audit (diffAudit, the same for
// every kernel that uses it): the run shares the bound (diffBound).
func (b *DiffBound) auditKey() string { return fmt.Sprintf("diff/%p", b) }

// auditKey names the audit of the counts' tempered range, shared by the
// run as the alias table over its widths is.
func (p *poissonCounts) auditKey() string { return fmt.Sprintf("range/%p", &p.width[0]) }

// diffAudit checks a tempered DiffBound (TunaMH, TFMH) as their steps do:
// |β(U_i(θ) − U_i(θ′))| ≤ βc_i·M(θ, θ′) for every datum and every pair
// (θ, θ′_k), in one pass over the data for all the pairs (an energy that
// computes differences from one point to several shares the terms at θ:
// Target.energyDiffsFrom). It reports what checking the pairs one after
// the other would: the first pair that fails, with its first error or
// else its worst violation. A c_i = 0 passes only if the datum's energy is
// the same at both points.
func diffAudit(b *DiffBound) auditCheck {
	return func(t *Target, theta []float64, nexts [][]float64) error {
		if len(nexts) == 0 {
			return nil
		}
		np := len(nexts)
		ms := make([]float64, np)
		for k, next := range nexts {
			ms[k] = b.M(theta, next)
		}
		// In blocks, concurrently: on tall data this audit is most of a
		// minibatch kernel's Start.
		n := t.N()
		nb := passBlocks(n, 0)
		type part struct {
			worst []worstViolation
			errs  []error // each pair's first error in the block
			err   error
		}
		parts := make([]part, nb)
		forBlocks(nb, func(bl int) {
			pt := &parts[bl]
			pt.worst, pt.errs = make([]worstViolation, np), make([]error, np)
			bt := t
			if nb > 1 {
				if bt, pt.err = NewTarget(posteriorOf(t)); pt.err != nil {
					return
				}
				bt.interrupt = t.interrupt
			}
			diffs := make([][]float64, np)
			for k := range diffs {
				diffs[k] = make([]float64, batchChunk)
			}
			errs := make([]error, np)
			lo, hi := blockRange(bl, nb, n)
			pt.err = auditRange(bt, lo, hi, func(idx []int, _ []float64) error {
				for k := range diffs {
					diffs[k] = diffs[k][:len(idx)]
				}
				bt.energyDiffsFrom(diffs, theta, nexts, idx, errs)
				for k, diff := range diffs {
					if pt.errs[k] != nil {
						continue // the pair's pass would have stopped there
					}
					if errs[k] != nil {
						pt.errs[k] = errs[k]
						continue
					}
					for j, i := range idx {
						if mi := b.at(i) * ms[k]; math.Abs(diff[j]) > mi*(1+boundTol) {
							pt.worst[k].add(diffViolation(i, diff[j], mi, theta, nexts[k]))
						}
					}
				}
				return nil
			})
		})
		for b := range parts {
			if parts[b].err != nil {
				return parts[b].err
			}
		}
		for k := range nexts {
			var worst worstViolation
			for b := range parts {
				if err := parts[b].errs[k]; err != nil {
					return err
				}
				worst.merge(&parts[b].worst[k])
			}
			if err := worst.err(n); err != nil {
				return err
			}
		}
		return nil
	}
}

// audit checks PoissonMH's tempered range at a point (θ0, then each
// proposal) with the predicate its steps use (phi): βU_i(θ) ∈ [β·Lo_i,
// β·Lo_i + β·Width_i] for every datum. A width of 0 passes only if the
// datum's energy equals Lo_i there.
func (p *poissonCounts) audit(t *Target, theta, next []float64) error {
	at := next
	if next == nil {
		at = theta
	}
	var worst worstViolation
	err := auditAll(t, func(idx []int, u []float64) error {
		if err := t.Energies(u, at, idx); err != nil {
			return err
		}
		for j, i := range idx {
			if _, err := p.phi(i, u[j], at); err != nil {
				var v *BoundViolation
				if !errors.As(err, &v) {
					return err
				}
				if p.width[i] == 0 {
					v.Ratio = math.Inf(1)
				}
				worst.add(v)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return worst.err(t.N())
}

// flyAudit checks a FlyMC lower bound at a point (θ0, then each proposal):
// every tempered gap β(−U_i(θ) − log B_i(θ)) is ≥ 0 (Target.Gaps, as the
// z-step checks it); and from θ0 to the farthest proposal, the change of
// LogBoundSum is the change of Σ_i log B_i = Σ_i (−U_i − gap_i) — the sum
// enters the θ-step's acceptance ratio, where no per-datum check could
// ever catch it (a constant offset cancels there, so it is allowed). That
// costs a pass over the energies at both points, so it is made once.
func flyAudit(b FlyBound) auditCheck {
	var calls int
	var bound0, sum0, scale0 float64 // at θ0: βLogBoundSum, Σβ log B_i, its magnitude
	return perPoint(func(t *Target, theta, next []float64) error {
		at := next
		if next == nil {
			at = theta
		}
		calls++
		withSum := calls == 1 || calls == 1+len(auditScales) // θ0 and the last proposal
		var sum, scale float64                               // Σβ log B_i(at) = Σ(−βU_i − gap_i), Σ(|βU_i| + gap_i)
		err := auditAll(t, func(idx []int, v []float64) error {
			if err := t.Gaps(v, at, idx, b); err != nil {
				return err
			}
			if !withSum {
				return nil
			}
			for _, g := range v {
				sum -= g
				scale += g
			}
			if err := t.Energies(v, at, idx); err != nil {
				return err
			}
			for _, u := range v {
				sum -= u
				scale += math.Abs(u)
			}
			return nil
		})
		if err != nil || !withSum {
			return err
		}
		bound := t.Beta() * b.LogBoundSum(at)
		if next == nil {
			bound0, sum0, scale0 = bound, sum, scale
			return nil
		}
		if d := (bound - bound0) - (sum - sum0); !(math.Abs(d) <= 1e-9*(scale+scale0+1)) {
			return fmt.Errorf("β·FlyBound.LogBoundSum changes by %.12g from θ0 = %v to θ = %v, but the per-datum bounds' sum Σβ log B_i by %.12g: LogBoundSum is not their sum",
				bound-bound0, theta, at, sum-sum0)
		}
		return nil
	})
}

// audited audits SMH's Taylor bounds with the predicate its steps use: for
// every datum, the remainders' difference β(R_i(θ′) − R_i(θ0)) within
// βb_i·κ between θ0 and each proposal. It returns the chain, or the error
// and no chain.
func (c *smhChain) audited(trust bool) (Chain, error) {
	beta := c.t.Beta()
	order := float64(c.k.Order + 1)
	err := c.walk.audit(trust, fmt.Sprintf("smh/%p", &c.rec[0]), perPoint(func(t *Target, theta, next []float64) error {
		if next == nil {
			return nil
		}
		// taylorDiff reads the pair from the chain: theta is c.theta, by
		// audit's contract, and next is copied to c.next (free before the
		// first step).
		copy(c.next, next)
		next = c.next
		kappa := (math.Pow(c.l1(theta), order) + math.Pow(c.l1(next), order)) / c.fact
		var worst worstViolation
		err := auditAll(t, func(idx []int, diff []float64) error {
			if err := t.EnergyDiffs(diff, theta, next, idx); err != nil {
				return err
			}
			for j, i := range idx {
				cv := beta * c.taylorDiff(i)
				r := -diff[j] - cv
				bound := beta * c.rec[i].data.b * kappa
				// The slack for rounding is relative to both terms of r,
				// not to the energy difference alone as in the step: a
				// remainder that vanishes (the Gaussian loss's, order 2,
				// b_i = the smallest float64) leaves the rounding of its
				// terms, which the kernel, drawing ∝ b_i, never reads.
				// Where that fails, the rounding of U_i(θ) and U_i(θ′)
				// themselves (roundingSlack) decides.
				if math.Abs(r) > bound*(1+boundTol)+1e-9*(math.Abs(diff[j])+math.Abs(cv)) && math.Abs(r) > bound*(1+boundTol)+c.roundingSlack(i, theta, next, beta) {
					worst.add(diffViolation(i, r, bound, theta, next))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := worst.err(t.N()); err != nil {
			return fmt.Errorf("Taylor remainder: %w", err)
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return c, nil
}

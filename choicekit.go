// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
)

// The methods below serve a registered kernel's own path through the
// automatic default (KernelInfo.Choose): its pilots share the choice's run
// caches, as Choose's own do, and report to Settings.ChoiceProgress.

// Sample runs k on p as Sample does, sharing c's run cache for p (the
// bounds, tables and centre a kernel's Start builds once per run,
// Target.Shared), for a pilot of the automatic default.
func (c *Choice) Sample(ctx context.Context, p *Posterior, k Kernel, s *Settings) (*Result, error) {
	return sample(ctx, p, k, s, nil, c.cache(p))
}

// Progress reports a step of the automatic default to the
// Settings.ChoiceProgress function ctx carries, if any.
func (c *Choice) Progress(ctx context.Context, format string, args ...any) {
	choiceProgress(ctx, format, args...)
}

// Pilot runs k on p for one chain from init — warmup transitions, then
// the draws the automatic default's counted sampling budget allows — as
// Choose pilots its candidates, and returns its Candidate: ESSPerCost, or
// Partial's estimate for a pilot that did not finish, or Err with AtMost,
// a bound, where it made too few draws even for that or could not beat
// beat (ESS per 10⁶ counted evaluations; 0: nothing to beat), in at most
// 1/autoPilotShare of the transitions of the run Choose decides (at least
// autoPartialCap draws; 4,000 multilevel sweeps were half a default run).
// The Result is the pilot's chain (nil only when err is not). err is a
// failure of the kernel itself (no bound, a bound violated) or ctx's.
// Nothing is timed: Candidate.Time reports the pilot's CPU time.
func (c *Choice) Pilot(ctx context.Context, p *Posterior, k Kernel, init []float64, seed uint64, warmup int, beat float64) (Candidate, *Result, error) {
	m := Candidate{Name: k.Name()}
	g := newPilotGuard(p, k, warmup, beat, 1)
	if c.run > 0 {
		g.draws = min(autoPilotDraws, max(autoPartialCap, c.run/autoPilotShare-warmup))
	}
	out, err := runPilot(ctx, p, k, init, seed, warmup, g, c.cache(p))
	m.Time, m.Scale, m.Cost = out.cpu, out.scale, out.cost
	switch {
	case ctx.Err() != nil:
		return m, nil, ctx.Err()
	case err != nil && out.atMost == 0:
		return m, nil, err
	case err != nil:
		m.Err, m.AtMost = err.Error(), out.atMost
	default:
		m.ESSPerCost, m.EvalsPerStep, m.Partial = out.rate, out.evals, out.partial
	}
	return m, out.res, nil
}

// RateReason says how candidate m scored: its ESS per 10⁶ counted
// evaluations, and whether it was estimated from an unfinished pilot.
func (m Candidate) RateReason() string { return rateReason(m) }

// PilotFullBatch pilots on p from init, as Choose pilots its candidates,
// the full-batch kernels the automatic default always weighs (NUTS), each
// replaced by variant's form and name where variant is not nil (a
// non-centred NUTS), and adds their Candidates to c. A kernel is piloted
// only where its best possible rate, two effective draws per transition
// of its passes over the data (fullBatchBound), could beat beat ESS per
// 10⁶ counted evaluations. One whose pilot beats beat becomes c's Name and
// Kernel (with the step scale its warmup adapted) and its Reason "name
// (rate)"; the name of the last such is returned, "" if none beat beat.
func (c *Choice) PilotFullBatch(ctx context.Context, p *Posterior, init []float64, seed uint64, beat float64, variant func(KernelInfo) (string, Kernel)) (string, error) {
	won := ""
	for _, ki := range withRole(autoFull) {
		k, name := ki.New(nil), ki.Name
		if variant != nil {
			name, k = variant(ki)
		}
		n := Candidate{Name: name}
		if bound := fullBatchBound(p, k, ki.passes); bound < beat {
			n.Err = fmt.Sprintf("not piloted: a transition reads the data %.3g times, so at most ≈ %.4g ESS per 10⁶ evaluations (a bound)", ki.passes, bound)
			c.Candidates = append(c.Candidates, n)
			continue
		}
		choiceProgress(ctx, "pilot: %s", name)
		out, err := pilot(ctx, p, k, init, seed, autoPilotWarmup, beat, c.cache(p))
		n.Time, n.Scale, n.Cost = out.cpu, out.scale, out.cost
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			n.Err, n.AtMost = err.Error(), out.atMost
		default:
			n.ESSPerCost, n.EvalsPerStep, n.Partial = out.rate, out.evals, out.partial
			if out.rate > beat && out.rate > 0 {
				if scale := out.scale; scale > 0 {
					k, _ = withStep(k, nil, func(float64) float64 { return scale })
				}
				c.Name, c.Kernel = name, k
				c.Reason = fmt.Sprintf("%s (%s)", name, rateReason(n))
				won = name
			}
		}
		c.Candidates = append(c.Candidates, n)
	}
	return won, nil
}

// MinESS is the smallest of the bulk and tail ESS over the coordinates of
// r's draws (undefined ones left out; NaN when none is defined): what the
// automatic default scores a one-chain pilot by (minESS).
func (r *Result) MinESS() float64 { return minESS(r) }

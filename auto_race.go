// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/exactmh/exactmh/internal/pilotrace"
)

// The pilots' race (runPilots, package pilotrace; docs/automatic.md):
// checkpoints at First·autoRaceGrowth^k, First = autoRaceFirst of the
// sampling budget; drops at autoRaceMargin; the end at
// autoRaceIndifference.
const (
	autoRaceFirst        = 1.0 / 256
	autoRaceGrowth       = math.Sqrt2
	autoRaceMargin       = 1.1
	autoRaceIndifference = 1.5
)

// autoRaceNoDrop is TestAutoRaceDrops's mutant: a race that never drops.
var autoRaceNoDrop bool

// racer is one pilot of the race (pilotrace.Pilot): its chain runs in a
// goroutine of its own and pauses in its guard's Record at each
// checkpoint until the race resumes it, so one pilot runs at a time and
// where each pauses depends on its counts alone.
type racer struct {
	name           string
	guard          *pilotGuard
	run            func() (pilotOut, error)
	out            pilotOut
	err            error
	done           chan struct{}
	started, ended bool
	cpu            time.Duration // the CPU time of its advances (the process's, one pilot running)
	w              float64       // its datum evaluations' weight (newPilotGuard; 0: 1)
}

// newRacer returns the racer of c's kernel from init, on c.proxy where
// c has one (its evaluations weighted c.w), else on c.post.
func newRacer(ctx context.Context, name string, c autoCand, k Kernel, init []float64, seed uint64, choice *Choice) *racer {
	p, w := c.post, 0.0
	if c.proxy != nil {
		p, w = c.proxy, c.w
	}
	cache := choice.cache(p)
	g := newPilotGuard(p, k, autoPilotWarmup, 0, w)
	g.pause, g.resume = make(chan struct{}), make(chan bool)
	r := &racer{name: name, guard: g, done: make(chan struct{}), w: w}
	r.run = func() (pilotOut, error) { return runPilot(ctx, p, k, init, seed, autoPilotWarmup, g, cache) }
	return r
}

// timed adds the CPU time f takes (else its wall time) to r.cpu.
func (r *racer) timed(f func()) {
	t0, ok0 := cpuTime()
	w0 := time.Now()
	f()
	if t1, ok1 := cpuTime(); ok0 && ok1 {
		r.cpu += t1 - t0
	} else {
		r.cpu += time.Since(w0)
	}
}

// Advance runs the pilot to its next checkpoint, budget, or its end.
func (r *racer) Advance(budget float64) (s pilotrace.Score) {
	r.timed(func() {
		r.guard.next = budget
		if !r.started {
			r.started = true
			go func() {
				defer close(r.done)
				defer func() {
					if v := recover(); v != nil {
						r.err = fmt.Errorf("pilot %s panicked: %v", r.name, v)
					}
				}()
				r.out, r.err = r.run()
			}()
		} else {
			r.guard.resume <- true
		}
		select {
		case <-r.guard.pause:
			s = r.score()
		case <-r.done:
			r.ended = true
			s = r.final()
		}
	})
	return s
}

// SetBeat passes the race's beat on to the guard (pilotrace.Beater;
// pilotGuard.arm).
func (r *racer) SetBeat(beat float64) { r.guard.raceBeat = beat }

// Stop ends the pilot where it is.
func (r *racer) Stop() {
	if r.ended {
		return
	}
	if r.ended = true; !r.started {
		r.err = errors.New("not run") // stopped before its first checkpoint
		return
	}
	r.timed(func() {
		r.guard.resume <- false
		<-r.done
	})
}

// score is the paused pilot's estimate: from its sampling draws once it
// has autoPartialMin of them, else from its late warmup draws
// (partialScore), else only a bound, two effective draws a transition.
func (r *racer) score() pilotrace.Score {
	g := r.guard
	bound := pilotrace.Score{Upper: 2 * float64(g.steps) / g.cost * costPerRate}
	var rate, ess float64
	if len(g.samp) >= autoPartialMin*g.keep && g.sampleCost > 0 {
		ess = pilotrace.KeptESS(g.samp, g.keep)
		rate = ess / g.sampleCost * costPerRate
	} else {
		rate, ess, _ = g.partialScore()
	}
	if !(ess > 0) {
		return bound
	}
	lo, hi := pilotrace.Interval(rate, ess)
	return pilotrace.Score{Rate: rate, Lower: lo, Upper: hi}
}

// final is the score of a pilot that ended by itself.
func (r *racer) final() pilotrace.Score {
	s := pilotrace.Score{Done: true}
	switch {
	case r.err == nil:
		s.Rate = r.out.rate
		s.Lower, s.Upper = pilotrace.Interval(r.out.rate, r.out.ess)
	case r.out.atMost > 0:
		s.Upper = r.out.atMost
	}
	return s
}

// candidate returns the ended racer's Candidate.
func (r *racer) candidate() Candidate {
	m := Candidate{Name: r.name, Time: r.cpu, Scale: r.out.scale, Cost: r.out.cost, Subsample: r.w}
	if r.err != nil {
		m.Err, m.AtMost = r.err.Error(), r.out.atMost
		return m
	}
	m.ESSPerCost, m.EvalsPerStep, m.Partial = r.out.rate, max(r.w, 1)*r.out.evals, r.out.partial
	return m
}

// runPilots races the candidates' pilots (docs/automatic.md; package
// pilotrace), records them in choice.Candidates (best first) and returns
// the index in cands of the fastest, with choice.Reason saying how it won:
// the highest ESS per unit of counted cost among the pilots the race kept
// (measured, or estimated from an unfinished pilot's draws), or, when no
// pilot has either, the highest bound on it. A candidate with passes > 0
// races with its bound (fullBatchBound; pilotrace.Entry.Bound). With
// tails, an uncapped dense Crank–Nicolson winner races on beside its
// variants capped at autoTailCaps, at a handicap of 1/autoUncappedMargin;
// note says which was kept ("" when no such pilots ran).
func runPilots(ctx context.Context, choice *Choice, cands []autoCand, init []float64, seed uint64, tails bool) (best int, note string, err error) {
	n := float64(cands[0].post.Len())
	race := &pilotrace.Race{
		First:        autoRaceFirst * pilotBudgetScale[1] * max(autoPilotSampleCost, autoPilotSamplePasses*n),
		Growth:       autoRaceGrowth,
		Margin:       autoRaceMargin,
		Indifference: autoRaceIndifference,
	}
	if autoRaceNoDrop { // a test's mutant
		race.Margin, race.Indifference = math.Inf(1), 0
	}
	defer race.Close()
	var racers []*racer
	entry := make([]int, len(cands)) // race index of each candidate, -1 if not piloted
	for i, c := range cands {
		entry[i] = -1
		if c.skip != "" {
			choiceProgress(ctx, "pilot %d of %d: %s: %s", i+1, len(cands), c.name, c.skip)
			continue
		}
		r := newRacer(ctx, c.name, c, c.k, init, seed, choice)
		e := pilotrace.Entry{Start: func() pilotrace.Pilot {
			choiceProgress(ctx, "pilot %d of %d: %s", i+1, len(cands), c.name)
			return r
		}}
		if c.passes > 0 {
			e.Bound = fullBatchBound(c.post, c.k, c.passes)
		}
		if c.proxy != nil {
			e.Cheap = c.w // its pilot reads 1/w of what it prices
		}
		entry[i] = race.Add(e)
		racers = append(racers, r)
	}
	stop := func() bool { return ctx.Err() != nil }
	w := race.Run(stop) // (-1 when ctx is done: no tail pilots)
	// The tail pilots: the winner's capped variants.
	type tail struct {
		k     Kernel
		limit float64
		at    int // race index
	}
	var tailRuns []tail
	var tailSkipped []Candidate // caps not piloted (a milder cap was dropped)
	wc := -1
	for i, e := range entry {
		if e >= 0 && e == w {
			wc = i
		}
	}
	var cn *CrankNicolson
	if wc >= 0 && tails {
		cn, tails = cnProposal(cands[wc].k)
	}
	if tails && wc >= 0 && cn.MaxScale == 0 && cn.Nu == 0 && cn.dense() {
		race.SetHandicap(w, 1/autoUncappedMargin)
		c := cands[wc]
		for i, limit := range autoTailCaps {
			name := fmt.Sprintf("%s, ρ ≥ %.2g", c.name, math.Exp(-limit))
			if i > 0 && !tailNoNest {
				at := tailRuns[i-1].at
				if milder, lead := race.Score(at).Rate, race.Score(w).Rate/autoUncappedMargin; race.State(at) == pilotrace.Dropped || milder < lead {
					// The milder cap lost to the uncapped kernel: the
					// uncapped chain does not stick where its proposal
					// reaches too rarely, and a tighter cap only
					// shortens its moves.
					tailSkipped = append(tailSkipped, Candidate{Name: name, Err: fmt.Sprintf("not piloted: its milder cap ρ ≥ %.2g lost to the uncapped kernel (≈ %.4g ESS per 10⁶ evaluations against %.4g over %g), so the uncapped chain does not stick in a tail and a tighter cap only shortens its moves",
						math.Exp(-autoTailCaps[i-1]), milder, race.Score(w).Rate, autoUncappedMargin)})
					break
				}
			}
			v := *cn
			v.MaxScale = limit
			k, _ := withStep(c.k, &v, func(s float64) float64 { return min(s, limit) })
			r := newRacer(ctx, name, c, k, init, seed, choice)
			at := race.Add(pilotrace.Entry{Start: func() pilotrace.Pilot {
				choiceProgress(ctx, "tail pilot: %s", name)
				return r
			}})
			racers = append(racers, r)
			tailRuns = append(tailRuns, tail{k, limit, at})
			if !tailNoNest {
				race.Run(stop) // this cap's verdict before the next
			}
		}
		race.Run(stop)
	}
	if ctx.Err() != nil {
		return 0, "", ctx.Err()
	}
	race.Close()

	// The candidates, in cands' order, then the tail pilots.
	ms := make([]Candidate, 0, len(racers)+len(cands))
	for i, c := range cands {
		switch e := entry[i]; {
		case c.skip != "":
			ms = append(ms, Candidate{Name: c.name, Err: c.skip})
		case race.State(e) == pilotrace.Skipped:
			bound := fullBatchBound(c.post, c.k, c.passes)
			ms = append(ms, Candidate{Name: c.name, Err: fmt.Sprintf("not piloted: a transition reads the data %.3g times, so at most ≈ %.4g ESS per 10⁶ evaluations (a bound)", c.passes, bound)})
		default:
			ms = append(ms, racedCandidate(race, e, racers[e]))
		}
	}
	for _, t := range tailRuns {
		ms = append(ms, racedCandidate(race, t.at, racers[t.at]))
	}
	ms = append(ms, tailSkipped...) // after the tail pilots: best-len(cands) indexes tailRuns
	for _, m := range ms {
		if m.Cost == 0 { // not piloted: no rate to show beside the reason
			choiceProgress(ctx, "pilot %s: %s", m.Name, m.Err)
			continue
		}
		choiceProgress(ctx, "pilot %s: %.4g ESS per 10⁶ evaluations (%.3g evaluations, %v CPU) %s", m.Name, m.ESSPerCost, m.Cost, m.Time.Round(10*time.Millisecond), m.Err)
	}
	// The winner: the highest rate, else the highest bound, else NUTS.
	// Where tail pilots ran, the uncapped kernel and its capped variants
	// are one kernel: it is kept uncapped only at autoUncappedMargin times
	// the best capped rate, else the best capped variant stands for it, and
	// whichever stands is ranked with the other candidates at its own rate
	// (the margin decides between the variants, not against another kernel).
	best, bestBound, bestTail := -1, -1, -1
	uncapped := true
	if len(tailRuns) > 0 {
		for j := len(cands); j < len(ms); j++ {
			if ms[j].Err == "" && ms[j].ESSPerCost*autoUncappedMargin > ms[wc].ESSPerCost {
				uncapped = false
			}
		}
	}
	rateOf := func(j int) float64 {
		if len(tailRuns) > 0 && (j == wc && !uncapped || j >= len(cands) && uncapped) {
			return 0
		}
		return ms[j].ESSPerCost
	}
	for j, m := range ms {
		if m.Err != "" {
			if m.AtMost > 0 && j < len(cands) && (bestBound < 0 || m.AtMost > ms[bestBound].AtMost) {
				bestBound = j
			}
			continue
		}
		if best < 0 || rateOf(j) > rateOf(best) {
			best = j
		}
	}
	switch {
	case best >= 0 && rateOf(best) > 0:
		choice.Reason = rateReason(ms[best])
		if best >= len(cands) {
			bestTail, best = best-len(cands), wc
		}
	case bestBound >= 0:
		best = bestBound
		choice.Reason = fmt.Sprintf("no pilot had draws enough to measure; the highest bound on ESS per 10⁶ evaluations (%.4g)", ms[best].AtMost)
	default:
		best = len(cands) - 1 // NUTS, the safe full-batch sampler
		choice.Reason = "no pilot measured anything; NUTS, the safe full-batch sampler"
	}
	scale := ms[best].Scale
	if bestTail >= 0 {
		t := tailRuns[bestTail]
		cands[best].k, scale = t.k, ms[len(cands)+bestTail].Scale
		note = fmt.Sprintf("its Crank–Nicolson step scale capped at %g (ρ ≥ %.2g): uncapped it was less than %.3g times as fast (%.4g ESS per 10⁶ evaluations)",
			t.limit, math.Exp(-t.limit), autoUncappedMargin, ms[wc].ESSPerCost)
	} else if len(tailRuns) > 0 && best == wc {
		note = fmt.Sprintf("its Crank–Nicolson step scale uncapped, at least %.3g times as fast as with a cap", autoUncappedMargin)
	}
	if scale > 0 {
		cands[best].k, _ = withStep(cands[best].k, nil, func(float64) float64 { return scale })
	}
	if bestTail < 0 && !pilotNoSeed {
		if k, ok := seedFromPilot(cands[best].k, racers, entry[best]); ok {
			cands[best].k = k
			note = strings.TrimPrefix(note+"; its pilot's frozen warmup adaptation carried into the run (PilotSeeder)", "; ")
		}
	}
	choice.Candidates = append(choice.Candidates, ms...)
	sortCandidates(choice.Candidates)
	return best, note, nil
}

// tailNoNest, set by tests, is a mutant: every cap of autoTailCaps is
// piloted, together, whether or not a milder one was dropped
// (TestAutoTailNested).
var tailNoNest bool

// pilotNoSeed, set by tests, turns seedFromPilot off.
var pilotNoSeed bool

// seedFromPilot returns the winner's kernel k with its pilot chain's
// frozen adaptation (PilotSeeder), where k is one and its pilot (race
// entry e of racers) ran past its warmup; else k and false.
func seedFromPilot(k Kernel, racers []*racer, e int) (Kernel, bool) {
	ps, ok := k.(PilotSeeder)
	if !ok || e < 0 || e >= len(racers) {
		return k, false
	}
	res := racers[e].out.res
	if res == nil || len(res.runners) != 1 || len(res.Chains) != 1 || res.Chains[0].Len() == 0 {
		return k, false
	}
	return ps.FromPilot(res.runners[0].ch)
}

// racedCandidate returns the Candidate of race entry e, run by r: a
// dropped one's with an error giving its estimate and the leader's.
func racedCandidate(race *pilotrace.Race, e int, r *racer) Candidate {
	m := r.candidate()
	if race.State(e) != pilotrace.Dropped {
		return m
	}
	s := race.Score(e)
	m.Err = fmt.Sprintf("dropped by the race after %.3g evaluations: ≈ %.4g ESS per 10⁶ evaluations, at most %.4g, below the leading pilot's lower estimate %.4g",
		m.Cost, s.Rate, s.Upper, race.DroppedBy[e])
	m.AtMost, m.ESSPerCost, m.Partial = s.Upper, 0, 0
	return m
}

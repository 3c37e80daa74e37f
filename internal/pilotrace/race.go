// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package pilotrace schedules the automatic default's pilots as a race:
// the candidates run in rounds of growing counted budget, each one's ESS
// per unit of cost is estimated at its checkpoints with an interval, and a
// candidate whose upper estimate falls below the leader's lower estimate by
// a margin is dropped. The race ends as soon as the ranking is clear: one
// candidate left, every one left finished, or none left that could beat
// the leader by more than an indifference factor.
//
// Nothing here reads a clock: budgets are counts, and the order in which
// pilots advance depends on their counts and their entry order alone, so a
// race is deterministic given its pilots.
package pilotrace

import "math"

// Score is a pilot's estimate at a checkpoint, in ESS per unit of counted
// cost.
type Score struct {
	// Rate is the point estimate (0: none yet).
	Rate float64
	// Lower and Upper bound it: Interval's for an estimate from ESS
	// effective draws; Lower 0 and Upper a bound (two effective draws per
	// transition) for a pilot with too few draws to estimate.
	Lower, Upper float64
	// Done says the pilot ended by itself (its own budgets or draws): it
	// has nothing more to tell.
	Done bool
}

// Interval parameters: an ESS estimated as ess from one chain has a
// relative standard error of about √(IntervalVar/ess) (Sokal's 2(2M+1)/n
// for the windowed autocorrelation sum, with a window M of a few
// autocorrelation times: about 4/ESS), and Interval takes IntervalZ of them
// on the log scale either side.
const (
	IntervalVar = 4
	IntervalZ   = 2
)

// Interval returns the interval about rate, an ESS per unit of cost
// estimated from ess effective draws: rate·e^{∓z√(v/ess)}. With no
// defined ess or no rate it returns 0 and rate.
func Interval(rate, ess float64) (lo, hi float64) {
	if !(ess > 0) || !(rate > 0) {
		return 0, rate
	}
	f := math.Exp(IntervalZ * math.Sqrt(IntervalVar/ess))
	return rate / f, rate * f
}

// Pilot is one running pilot.
type Pilot interface {
	// Advance runs the pilot until its counted cost reaches budget or it
	// ends, and returns its score then.
	Advance(budget float64) Score
	// Stop ends the pilot where it is.
	Stop()
}

// Entry is a candidate of the race.
type Entry struct {
	// Start starts its pilot (it is not advanced yet).
	Start func() Pilot
	// Bound, if positive, is a bound on its rate known before it runs (a
	// full-batch kernel's two effective draws a transition): the entry
	// waits until the race before it is settled and is then skipped when
	// Bound times Margin is below the leader's lower estimate, joins when
	// Bound reaches the leader's upper estimate (it might win) or the
	// leader has ended, and otherwise waits while the leader runs on.
	Bound float64
	// Handicap multiplies its rates in every comparison (1 when 0): the
	// automatic default's uncapped Crank–Nicolson kernel must beat the
	// capped ones by a margin, so it races at 1/margin.
	Handicap float64
	// Cheap, when above 1, says that its pilot does 1/Cheap of the work
	// its counted cost prices (the automatic default's full-batch kernels
	// on a subsample proxy of 1/Cheap of the data). Such an entry with a
	// Bound joins where it would wait while the leader runs on, and the
	// race advances whichever alive entry's next checkpoint costs the
	// least work (its budget over Cheap): a few of the leader's
	// checkpoints' work buy the cheap entry its own estimate, which may
	// drop it or let it win, where waiting on its bound costs the leader's
	// pilot until its interval clears the bound (TestRaceCheapJoins).
	Cheap float64
}

// State is where an entry stands.
type State int

// The states of an entry.
const (
	Pending State = iota // not yet joined
	Alive                // racing
	Dropped              // stopped as unable to win
	Skipped              // its Gate refused it
	Stopped              // stopped when the race ended
)

// Race is a race of pilots.
type Race struct {
	// First is the first checkpoint's budget; the k-th is First·Growth^k.
	First float64
	// Growth is the factor between checkpoints (2 when 0). A pilot
	// advanced to its next checkpoint may spend up to Growth times what
	// the ranking needed: nearer 1, less is spent past the point where the
	// ranking became clear, for more checkpoints (each an ESS estimate).
	Growth float64
	// Margin: a candidate is dropped when its upper estimate times Margin
	// is below the leader's lower estimate.
	Margin float64
	// Indifference: the race ends when no candidate's upper estimate
	// exceeds the leader's lower estimate times Indifference (≥ Margin):
	// whichever wins then is within that factor of the best.
	Indifference float64

	entries []Entry
	state   []State
	pilots  []Pilot
	scores  []Score
	next    []int // each entry's next checkpoint
	// DroppedBy holds, for a dropped entry, the leader's lower estimate
	// (handicapped) that dropped it.
	DroppedBy []float64
}

// Add adds an entry to the race and returns its index.
func (r *Race) Add(e Entry) int {
	if e.Handicap == 0 {
		e.Handicap = 1
	}
	if !(e.Cheap > 1) {
		e.Cheap = 1
	}
	r.entries = append(r.entries, e)
	r.state = append(r.state, Pending)
	r.pilots = append(r.pilots, nil)
	r.scores = append(r.scores, Score{Upper: math.Inf(1)})
	r.next = append(r.next, 0)
	r.DroppedBy = append(r.DroppedBy, 0)
	return len(r.entries) - 1
}

// SetHandicap sets entry i's handicap.
func (r *Race) SetHandicap(i int, h float64) { r.entries[i].Handicap = h }

// State returns entry i's state.
func (r *Race) State(i int) State { return r.state[i] }

// Score returns entry i's last score.
func (r *Race) Score(i int) Score { return r.scores[i] }

// Checkpoints returns how many checkpoints entry i has passed.
func (r *Race) Checkpoints(i int) int { return r.next[i] }

// Run races the entries until every one has joined (or been refused) and
// the ranking is clear (settled), and returns the winner's index (-1 when
// no entry joined). stop, if not nil, is polled between checkpoints: when
// it returns true Run returns -1 at once (a cancelled context).
func (r *Race) Run(stop func() bool) int {
	for {
		if stop != nil && stop() {
			return -1
		}
		changed, wait := r.join()
		if changed {
			continue
		}
		i := -1
		switch {
		case wait:
			i = r.leader() // an entry with a Bound waits on it
		case !r.settled():
			i = r.pick()
		}
		if i < 0 {
			return r.Winner()
		}
		r.scores[i] = r.pilots[i].Advance(r.checkpoint(r.next[i]))
		r.next[i]++
		r.drop()
	}
}

// checkpoint returns the budget of checkpoint k, First·Growth^k.
func (r *Race) checkpoint(k int) float64 {
	if r.Growth == 0 {
		return r.First * math.Ldexp(1, k)
	}
	return r.First * math.Pow(r.Growth, float64(k))
}

// join starts the pending entries in order: one without a Bound at once,
// one with a Bound when the race is settled, as Entry.Bound says. It stops
// at the first entry that must wait, and reports whether it changed
// anything and whether an entry waits on the leader.
func (r *Race) join() (changed, wait bool) {
	for i, e := range r.entries {
		if r.state[i] != Pending {
			continue
		}
		if e.Bound > 0 {
			if !r.settled() {
				return changed, false
			}
			if l := r.leader(); l >= 0 {
				h := r.entries[l].Handicap
				lo, hi := r.scores[l].Lower*h, r.scores[l].Upper*h
				switch {
				case e.Bound*e.Handicap*r.Margin < lo:
					r.state[i] = Skipped
					changed = true
					continue
				case e.Bound*e.Handicap < hi && !r.scores[l].Done && e.Cheap == 1:
					return changed, true
				}
			}
		}
		r.state[i] = Alive
		r.pilots[i] = e.Start()
		changed = true
	}
	return changed, false
}

// settled reports whether the ranking among the alive entries is clear:
// every alive one has a score (one checkpoint passed, or done), and at
// most one is alive, or every alive one is done, or none could beat the
// leader by more than Indifference.
func (r *Race) settled() bool {
	alive, running := 0, 0
	for i, s := range r.state {
		if s != Alive {
			continue
		}
		if r.next[i] == 0 && !r.scores[i].Done {
			return false
		}
		alive++
		if !r.scores[i].Done {
			running++
		}
	}
	if alive <= 1 || running == 0 {
		return true
	}
	l := r.leader()
	lo := r.scores[l].Lower * r.entries[l].Handicap
	if !(lo > 0) {
		return false
	}
	for i, s := range r.state {
		if s == Alive && i != l && r.scores[i].Upper*r.entries[i].Handicap > lo*r.Indifference {
			return false
		}
	}
	return true
}

// leader returns the alive entry with the highest handicapped lower
// estimate (the first among equals; -1 if none is alive).
func (r *Race) leader() int {
	return r.bestAlive(func(sc Score) float64 { return sc.Lower })
}

// bestAlive returns the alive entry whose handicapped value of its score
// (by) is highest, the first among equals; -1 if none is alive. leader
// ranks by the lower estimate, Winner by the rate.
func (r *Race) bestAlive(by func(Score) float64) int {
	best, bestV := -1, 0.0
	for i, s := range r.state {
		if s != Alive {
			continue
		}
		if v := by(r.scores[i]) * r.entries[i].Handicap; best < 0 || v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// pick returns the alive, unfinished entry whose next checkpoint costs
// the least work, its budget over Entry.Cheap (the first among equals):
// with no cheap entries, the one with the fewest checkpoints passed; -1
// if none.
func (r *Race) pick() int {
	best := -1
	for i, s := range r.state {
		if s != Alive || r.scores[i].Done {
			continue
		}
		if best < 0 || r.work(i) < r.work(best) {
			best = i
		}
	}
	return best
}

// work returns the work of entry i's next checkpoint: its budget over
// Entry.Cheap.
func (r *Race) work(i int) float64 {
	return r.checkpoint(r.next[i]) / r.entries[i].Cheap
}

// drop stops every alive, running entry whose upper estimate times Margin
// is below the leader's lower estimate (handicaps applied).
func (r *Race) drop() {
	l := r.leader()
	if l < 0 {
		return
	}
	lo := r.scores[l].Lower * r.entries[l].Handicap
	if !(lo > 0) {
		return
	}
	for i, s := range r.state {
		if s != Alive || i == l || r.scores[i].Done {
			continue // a pilot that has ended costs nothing more
		}
		if r.scores[i].Upper*r.entries[i].Handicap*r.Margin < lo {
			r.pilots[i].Stop()
			r.state[i] = Dropped
			r.DroppedBy[i] = lo
		}
	}
}

// Winner returns the alive entry with the highest handicapped point
// estimate (the first among equals), -1 if none is alive.
func (r *Race) Winner() int {
	return r.bestAlive(func(sc Score) float64 { return sc.Rate })
}

// Close stops every alive entry's pilot (state Stopped). Entries stopped
// so keep their last score.
func (r *Race) Close() {
	for i, s := range r.state {
		if s == Alive {
			r.pilots[i].Stop()
			r.state[i] = Stopped
		}
	}
}

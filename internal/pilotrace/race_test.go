// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package pilotrace

import (
	"math"
	"testing"
)

// fake is a pilot whose ESS grows as rate × cost: at budget b it has
// ess = rate·b effective draws, its estimate is rate·(1 + noise) with the
// interval Interval gives, and it ends by itself at end.
type fake struct {
	rate, noise, end float64
	cost             float64
	stopped          bool
}

func (f *fake) Advance(b float64) Score {
	if f.stopped {
		panic("advanced after Stop")
	}
	f.cost = min(b, f.end)
	ess := f.rate * f.cost
	est := f.rate * (1 + f.noise)
	lo, hi := Interval(est, ess)
	return Score{Rate: est, Lower: lo, Upper: hi, Done: f.cost >= f.end}
}

func (f *fake) Stop() { f.stopped = true }

func newRace() *Race { return &Race{First: 1, Margin: 1.1, Indifference: 1.5} }

// TestRaceDropsClearLosers: of three pilots at rates 10, 2 and 1 ESS per
// unit (budgets to 4096 units each), the two slow ones are dropped within
// a few checkpoints, long before their budgets, and the fast one wins
// with far less than the budgets' total spent. Mutant: a race that never
// drops nor settles early (Margin and Indifference +Inf) spends the whole
// budgets, and the test says so.
func TestRaceDropsClearLosers(t *testing.T) {
	run := func(r *Race, fs []*fake) (int, float64) {
		for _, f := range fs {
			r.Add(Entry{Start: func() Pilot { return f }})
		}
		w := r.Run(nil)
		r.Close()
		var spent float64
		for _, f := range fs {
			spent += f.cost
		}
		return w, spent
	}
	mk := func() []*fake {
		return []*fake{{rate: 2, end: 4096}, {rate: 10, end: 4096}, {rate: 1, end: 4096}}
	}
	fs := mk()
	w, spent := run(newRace(), fs)
	if w != 1 {
		t.Fatalf("winner %d, want 1 (rate 10)", w)
	}
	if spent > 200 {
		t.Errorf("spent %g units of 3·4096 to rank rates 10, 2, 1", spent)
	}
	for i, f := range fs {
		if !f.stopped {
			t.Errorf("pilot %d not stopped", i)
		}
	}
	t.Logf("winner %d after %g units (costs %g, %g, %g)", w, spent, fs[0].cost, fs[1].cost, fs[2].cost)

	// Mutant: never drop, never settle early.
	r := newRace()
	r.Margin, r.Indifference = math.Inf(1), 0
	if _, spent := run(r, mk()); spent < 3*4096 {
		t.Errorf("mutant (no drops) spent %g, want the whole budgets: the test does not see drops", spent)
	}
}

// TestRaceClose: pilots within the indifference factor end the race once
// their intervals say neither is more than Indifference better; the higher
// point estimate wins. Two at rates 10 and 9.5 stop long before their
// budgets of 10⁶ units.
func TestRaceClose(t *testing.T) {
	r := newRace()
	a, b := &fake{rate: 10, end: 1e6}, &fake{rate: 9.5, end: 1e6}
	r.Add(Entry{Start: func() Pilot { return a }})
	r.Add(Entry{Start: func() Pilot { return b }})
	w := r.Run(nil)
	if w != 0 {
		t.Errorf("winner %d, want 0", w)
	}
	if a.cost+b.cost > 1e4 {
		t.Errorf("spent %g ranking two pilots within 5%%", a.cost+b.cost)
	}
	if r.State(0) != Alive || r.State(1) != Alive {
		t.Errorf("states %v %v, want both alive (neither dropped)", r.State(0), r.State(1))
	}
	r.Close()
	if !a.stopped || !b.stopped || r.State(1) != Stopped {
		t.Errorf("Close left a pilot running")
	}
}

// TestRaceBound: an entry with a Bound waits until the race before it is
// settled; it is skipped (never started) when its bound is below the
// leader's lower estimate, joins and wins when it is above the leader's
// rate, and while its bound lies within the leader's interval the leader
// runs on until its interval decides. Mutant: an entry admitted on the
// leader's first, wide interval (as a Gate consulted at once would be)
// runs although its bound is below the leader's rate.
func TestRaceBound(t *testing.T) {
	for _, tc := range []struct {
		bound   float64
		skipped bool
	}{{bound: 6, skipped: true}, {bound: 100, skipped: false}} {
		r := newRace()
		fast := &fake{rate: 10, end: 4096}
		full := &fake{rate: 50, end: 4096}
		started := false
		r.Add(Entry{Start: func() Pilot { return fast }})
		r.Add(Entry{Start: func() Pilot { started = true; return full }, Bound: tc.bound})
		w := r.Run(nil)
		r.Close()
		if got := r.State(1) == Skipped; got != tc.skipped || started == tc.skipped {
			t.Errorf("bound %g: skipped %v, started %v, want skipped %v", tc.bound, got, started, tc.skipped)
		}
		if want := map[bool]int{true: 0, false: 1}[tc.skipped]; w != want {
			t.Errorf("bound %g: winner %d, want %d", tc.bound, w, want)
		}
		if tc.skipped && r.Checkpoints(0) < 2 {
			t.Errorf("bound %g: the leader passed %d checkpoints: its first interval decided", tc.bound, r.Checkpoints(0))
		}
	}
}

// TestRaceHandicap: a pilot handicapped by 1/1.25 loses to one 1.1 times
// slower and wins against one 1.5 times slower, as the automatic
// default's uncapped Crank–Nicolson kernel must.
func TestRaceHandicap(t *testing.T) {
	for _, tc := range []struct {
		other float64
		want  int
	}{{10 / 1.1, 1}, {10 / 1.5, 0}} {
		r := newRace()
		a, b := &fake{rate: 10, end: 1 << 20}, &fake{rate: tc.other, end: 1 << 20}
		r.Add(Entry{Start: func() Pilot { return a }, Handicap: 1 / 1.25})
		r.Add(Entry{Start: func() Pilot { return b }})
		if w := r.Run(nil); w != tc.want {
			t.Errorf("other at %.3g: winner %d, want %d", tc.other, w, tc.want)
		}
		r.Close()
	}
}

// TestRaceLoneEntryMeasured: a race of one entry still advances it to its
// first checkpoint, so its winner has a score.
func TestRaceLoneEntryMeasured(t *testing.T) {
	r := newRace()
	f := &fake{rate: 3, end: 100}
	r.Add(Entry{Start: func() Pilot { return f }})
	if w := r.Run(nil); w != 0 || !(r.Score(0).Rate > 0) {
		t.Errorf("winner %d with score %+v, want 0 measured", w, r.Score(0))
	}
	r.Close()
}

// TestInterval: the interval narrows as 1/√ESS and is empty of meaning
// (0, rate) without an ESS.
func TestInterval(t *testing.T) {
	lo, hi := Interval(10, 400)
	if f := math.Exp(IntervalZ * math.Sqrt(IntervalVar/400.0)); math.Abs(hi/10-f) > 1e-12 || math.Abs(10/lo-f) > 1e-12 {
		t.Errorf("Interval(10, 400) = %g, %g", lo, hi)
	}
	if lo, hi := Interval(10, 0); lo != 0 || hi != 10 {
		t.Errorf("Interval(10, 0) = %g, %g", lo, hi)
	}
}

// budgets is a fake that records the budgets it is advanced to.
type budgets struct {
	fake
	seen []float64
}

func (b *budgets) Advance(x float64) Score {
	b.seen = append(b.seen, x)
	return b.fake.Advance(x)
}

// TestRaceGrowth: checkpoints are First·Growth^k (First·2^k when Growth is
// 0), and at Growth √2 a race of pilots at rates 10 and 2 is ranked for
// less than at 2: a pilot advanced past the point where the ranking
// became clear overshoots by at most Growth. Mutant: Growth ignored (the
// doubling) spends as much as Growth 2.
func TestRaceGrowth(t *testing.T) {
	run := func(growth float64) (float64, []float64) {
		r := newRace()
		r.Growth = growth
		a, b := &budgets{fake: fake{rate: 10, end: 1 << 20}}, &budgets{fake: fake{rate: 2, end: 1 << 20}}
		r.Add(Entry{Start: func() Pilot { return a }})
		r.Add(Entry{Start: func() Pilot { return b }})
		if w := r.Run(nil); w != 0 {
			t.Errorf("growth %g: winner %d, want 0", growth, w)
		}
		r.Close()
		return a.cost + b.cost, a.seen
	}
	doubling, seen := run(0)
	for k, x := range seen {
		if x != math.Ldexp(1, k) {
			t.Fatalf("Growth 0: checkpoint %d at %g, want %g", k, x, math.Ldexp(1, k))
		}
	}
	root, seen := run(math.Sqrt2)
	for k, x := range seen {
		if want := math.Pow(math.Sqrt2, float64(k)); math.Abs(x-want) > 1e-9*want {
			t.Fatalf("Growth √2: checkpoint %d at %g, want %g", k, x, want)
		}
	}
	t.Logf("spent %g at Growth 2, %g at √2", doubling, root)
	if !(root < doubling) {
		t.Errorf("Growth √2 spent %g, Growth 2 %g: want less", root, doubling)
	}
}

// TestRaceCheapJoins: a leader at 10 ESS per unit and a full-batch entry
// whose bound, 8, the leader's interval must clear before it could be
// skipped, though its pilot runs at 1. Marked Cheap (its pilot does 1/50
// of the work its cost prices, a subsample proxy's), the entry joins at
// once, is ranked below on its own estimate (dropped, or
// stopped when the race settles), and the leader stops far sooner;
// the leader still wins. Mutant: the same entry not marked cheap waits
// while the leader runs on until its lower estimate clears 8·Margin, and
// the leader's pilot costs several times more.
func TestRaceCheapJoins(t *testing.T) {
	run := func(cheap float64) (leader, slow *fake, r *Race, w int) {
		leader, slow = &fake{rate: 10, end: 1 << 20}, &fake{rate: 1, end: 1 << 20}
		r = newRace()
		r.Add(Entry{Start: func() Pilot { return leader }})
		r.Add(Entry{Start: func() Pilot { return slow }, Bound: 8, Cheap: cheap})
		w = r.Run(nil)
		r.Close()
		return leader, slow, r, w
	}
	leader, slow, r, w := run(50)
	if w != 0 {
		t.Fatalf("winner %d, want the leader", w)
	}
	if st := r.State(1); st != Dropped && st != Stopped || !(slow.cost > 0) {
		t.Errorf("cheap entry %v after %g, want it run and ranked below on its own estimate", st, slow.cost)
	}
	lm, _, rm, _ := run(0)
	if rm.State(1) != Skipped {
		t.Errorf("mutant: entry %v, want Skipped on its bound", rm.State(1))
	}
	if !(leader.cost*3 < lm.cost) {
		t.Errorf("leader's pilot cost %g with a cheap entry, %g with the entry waiting: want several times less", leader.cost, lm.cost)
	}
	if work := slow.cost / 50; !(work < leader.cost) {
		t.Errorf("the cheap entry did %g work, the leader %g", work, leader.cost)
	}
	t.Logf("leader %g (waiting: %g), cheap entry %g priced, %g work", leader.cost, lm.cost, slow.cost, slow.cost/50)
}

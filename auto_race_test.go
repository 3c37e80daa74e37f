// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestAutoRaceDrops: with checkpoints small enough for the pilots of a
// small logistic regression to reach them (pilotBudgetScale puts them in
// the regime of a large problem), the race drops the clearly slower
// pilots, listed with the reason, and the choice is the same on a second
// run (its pauses are counted). Under the mutant that never drops
// (autoRaceNoDrop), no candidate is dropped and the pilots cost more.
func TestAutoRaceDrops(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 3000, 3, 1)
	pilotBudgetScale[1] = 0.05
	defer func() { pilotBudgetScale = [2]float64{1, 1} }()
	choose := func() (*Choice, int, float64) {
		c, err := Choose(context.Background(), p, &Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		dropped, cost := 0, 0.0
		for _, m := range c.Candidates {
			if strings.HasPrefix(m.Err, "dropped by the race") {
				dropped++
			}
			cost += m.Cost
		}
		return c, dropped, cost
	}
	c, dropped, cost := choose()
	t.Logf("%d dropped, pilots' cost %.3g: %v", dropped, cost, c)
	if dropped == 0 {
		t.Errorf("no pilot dropped: %v", c)
	}
	if again, _, _ := choose(); again.String() != c.String() {
		t.Errorf("the choice changed between two runs:\n%v\n%v", c, again)
	}
	autoRaceNoDrop = true
	defer func() { autoRaceNoDrop = false }()
	mut, mdropped, mcost := choose()
	t.Logf("mutant: %d dropped, pilots' cost %.3g: %v", mdropped, mcost, mut)
	if mdropped != 0 || !(mcost > cost) {
		t.Errorf("mutant autoRaceNoDrop: %d dropped, cost %.3g against %.3g: the test does not see the drops", mdropped, mcost, cost)
	}
}

// TestPilotInit: the pilots start where Sample starts the run's first
// chain of a choice built on the Laplace approximation (LaplaceInits'
// draw for chain 0), not at the approximation's mode, from which a short
// pilot of a wide posterior reads its way out to the posterior's mass as
// a slow chain (docs/automatic.md). Mutant: starting at la.Mean fails.
func TestPilotInit(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 3000, 3, 1)
	got := pilotInit(la, p, 7)
	s := LaplaceInits(&Settings{Chains: 4, Seed: 7}, la, p)
	if !slices.Equal(got, s.Inits[0]) {
		t.Errorf("pilots start at %v, the run's first chain at %v", got, s.Inits[0])
	}
	if slices.Equal(got, la.Mean) {
		t.Errorf("pilots start at the mode %v", la.Mean)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"strings"
	"testing"
)

// TestRunSharesBounds checks that the chains of a run share one tempered
// bound and one alias table (SMH: all its terms at the centre) (issue: 4 TunaMH chains at N = 10⁷ held 2 GB
// of copies), while chains of separate runs do not, and that the draws are
// those of chains started alone (the golden draws check that bit for bit).
func TestRunSharesBounds(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 500, 3, 0.1)
	for _, k := range []Kernel{TunaMH{}, TFMH{}, SMH{Order: 2, Center: la.Mean}, PoissonMH{MaxBatch: 1e12}} {
		if _, ok := k.(PoissonMH); ok {
			b, err := NewCube(3, -5, 5)
			if err != nil {
				t.Fatal(err)
			}
			p = &Posterior{Energy: p.Energy, Prior: b, Beta: p.Beta}
		}
		res, err := Sample(context.Background(), p, k, &Settings{Chains: 3, Warmup: 10, Draws: 10, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		tables := map[any]bool{}
		for _, r := range res.runners {
			switch ch := r.ch.(type) {
			case *auxChain[struct{}, *tunaBatch]:
				tables[ch.scheme.(*tunaChain).draws.table] = true
			case *tfmhChain:
				tables[ch.draws.table] = true
			case *smhChain:
				tables[ch.smhTerms] = true
			case *auxChain[struct{}, *poissonCounts]:
				tables[ch.scheme.(*poissonChain).counts.table] = true
			default:
				t.Fatalf("%s: chain of type %T", k.Name(), ch)
			}
		}
		if len(tables) != 1 {
			t.Errorf("%s: %d alias tables for 3 chains, want 1 shared", k.Name(), len(tables))
		}
	}
}

// TestTunaTFMHShareTable: TunaMH and TFMH on one run cache — the automatic
// default's two pilots on the control variates, and the run after them —
// draw from one alias table over the same c_i, and TunaMH still refuses
// weights whose square overflows, which TFMH takes.
func TestTunaTFMHShareTable(t *testing.T) {
	_, cv, la := cvProblem(t, "logistic", 500, 3, 1)
	cache := newRunCache()
	start := func(k Kernel) Chain {
		tg, err := NewTarget(cv)
		if err != nil {
			t.Fatal(err)
		}
		tg.cache = cache
		ch, err := k.Start(tg, la.Mean)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	tuna := start(TunaMH{}).(*auxChain[struct{}, *tunaBatch]).scheme.(*tunaChain).draws.table
	tf := start(TFMH{}).(*tfmhChain).draws.table
	if tuna != tf {
		t.Error("TunaMH and TFMH on one run cache built two alias tables")
	}
	big := []float64{1e200, 1e200}
	tg := &Target{beta: 1, cache: newRunCache()}
	if _, err := boundTable("TFMH", "c", big, tg, false); err != nil {
		t.Fatalf("TFMH: %v", err)
	}
	if _, err := boundTable("TunaMH", "c", big, tg, true); err == nil || !strings.Contains(err.Error(), "grow with C²") {
		t.Fatalf("TunaMH after TFMH on the same weights: %v, want the C² error", err)
	}
}

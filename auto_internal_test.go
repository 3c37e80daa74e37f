// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"testing"
	"time"
)

// A pilot whose pace cannot reach the best pilot's ESS per second is
// stopped once pilotGuardSteps transitions show it, and not before.
func TestPilotGuard(t *testing.T) {
	canceled := false
	g := &pilotGuard{beat: 100, cancel: func() { canceled = true }}
	ev := &Event{Warmup: true, Iteration: pilotGuardSteps - 2, Elapsed: time.Second}
	g.Record(ev) // too early to judge
	if canceled {
		t.Fatal("stopped before pilotGuardSteps transitions")
	}
	ev.Iteration, ev.Elapsed = 9, 100*time.Millisecond // 20 ESS/s at most, but too soon to judge
	g.Record(ev)
	if canceled {
		t.Fatal("stopped before pilotGuardTime")
	}
	ev.Iteration, ev.Elapsed = 99, time.Second // 2·100/1 s = 200 ESS/s at most: may beat 100
	g.Record(ev)
	if canceled {
		t.Fatal("stopped a pilot that could still win")
	}
	ev.Iteration = 9 // 2·10/1 s = 20 ESS/s at most
	g.Record(ev)
	if !canceled || g.stopped != 20 || g.steps != 10 {
		t.Fatalf("not stopped at 20 ESS/s at most: canceled %v, bound %v after %d", canceled, g.stopped, g.steps)
	}
	free := &pilotGuard{cancel: func() { t.Fatal("a first pilot (nothing to beat) was stopped") }}
	free.Record(ev)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package distinct

import (
	"math/rand/v2"
	"testing"
)

// TestDistinctCounts checks the distinct-data set against a map over steps
// of very different sizes (so it grows mid-step), repeated indices, the
// largest index it supports and the step counter's wrap-around.
func TestDistinctCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := New()
	for step := range 300 {
		if step == 150 {
			d.step = ^uint32(0) // the next step wraps around
		}
		d.Next()
		want := map[int]bool{}
		n := rng.IntN(2000)
		if step%7 == 0 {
			n = rng.IntN(5)
		}
		span := 1 + rng.IntN(5000)
		for range n {
			i := rng.IntN(span)
			if rng.IntN(50) == 0 {
				i = 1<<32 - 2
			}
			d.Add(i)
			want[i] = true
		}
		if d.Count != len(want) {
			t.Fatalf("step %d: %d distinct counted, want %d (of %d draws over %d indices)", step, d.Count, len(want), n, span)
		}
	}
	if len(d.slot) > 8192 {
		t.Errorf("the set grew to %d slots for steps of at most 2000 draws", len(d.slot))
	}
}

// TestDistinctNoAllocs checks that steps no larger than an earlier one
// allocate nothing.
func TestDistinctNoAllocs(t *testing.T) {
	d := New()
	step := func() {
		d.Next()
		for i := range 500 {
			d.Add(i * 7919 % 100003)
		}
	}
	step()
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%v allocations per step, want 0", a)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package distinct counts the distinct data a minibatch step touches
// (Info.Distinct), for the kernels of the root package and of
// exactmh/multilevel alike.
package distinct

// Set counts the distinct data a step touches in an open-addressing
// set of the step's indices, each slot tagged with the step that wrote
// it: O(1) per draw, no clearing between steps, and memory (and cache
// footprint) proportional to the largest batch seen, not to N — a stamp
// per datum would cost 4 bytes per datum per chain (0.4 GB a chain at
// N = 10⁸) and a cache miss per draw. The set grows, allocating, only
// when a step touches more data than any before it, so steady-state steps
// allocate nothing.
type Set struct {
	slot []uint64 // step<<32 | (i+1); a slot of another step is empty
	step uint32
	// Count is the number of distinct data added since Next; a kernel
	// whose step reads every datum sets it to N.
	Count int
}

// New returns an empty set of 64 slots.
func New() Set { return Set{slot: make([]uint64, 64)} }

// NewSized returns an empty set that holds n data without growing.
func NewSized(n int) Set {
	s := New()
	for 2*n > len(s.slot) {
		s.slot = make([]uint64, 2*len(s.slot))
	}
	return s
}

// Next starts a new step.
func (d *Set) Next() {
	d.step++
	if d.step == 0 { // wrapped around: old tags could collide
		clear(d.slot)
		d.step = 1
	}
	d.Count = 0
}

// Add records datum i (0 ≤ i < 2³²−1).
func (d *Set) Add(i int) {
	if 2*(d.Count+1) > len(d.slot) {
		d.grow()
	}
	tag := uint64(d.step)<<32 | uint64(uint32(i+1))
	mask := uint64(len(d.slot) - 1)
	// Fibonacci hashing spreads consecutive indices over the table.
	for h := (uint64(i) * 0x9e3779b97f4a7c15) >> 32 & mask; ; h = (h + 1) & mask {
		switch s := d.slot[h]; {
		case s == tag:
			return
		case uint32(s>>32) != d.step:
			d.slot[h] = tag
			d.Count++
			return
		}
	}
}

// grow doubles the set, keeping the current step's entries.
func (d *Set) grow() {
	old := d.slot
	d.slot = make([]uint64, 2*len(old))
	d.Count = 0
	for _, s := range old {
		if uint32(s>>32) == d.step && s != 0 {
			d.Add(int(uint32(s)) - 1)
		}
	}
}

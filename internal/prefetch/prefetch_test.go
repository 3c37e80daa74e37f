// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefetch

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestRowsWithinBounds prefetches rows of every width up to several lines
// at the start and end of an array, of one-byte and eight-byte elements:
// nothing may fault (the fallback reads every line it names) or be
// reported by the race detector.
func TestRowsWithinBounds(t *testing.T) {
	x := make([]float64, 1000)
	b := make([]byte, 1000)
	for width := 1; width <= 40; width++ {
		n := len(x) / width
		idx := []int{0, n - 1, n / 2, n - 1}
		Rows(x, width, width, idx)
		Rows(b, width, width, idx)
		Rows(x, 1, width, []int{len(x) - width}) // overlapping rows, stride 1
	}
	if got := Rows(x, 1, 1, nil); got != 0 {
		t.Errorf("Rows over no rows = %d, want 0", got)
	}
	if got := Rows(x, 1, 0, []int{1}); got != 0 {
		t.Errorf("Rows of width 0 = %d, want 0", got)
	}
}

// TestReadLinesReadsEveryLine checks the fallback's reads: one byte per
// 64-byte line from each row's start, and its last byte.
func TestReadLinesReadsEveryLine(t *testing.T) {
	b := make([]byte, 1024)
	for i := range b {
		b[i] = 1
	}
	base := unsafe.Pointer(&b[0])
	cases := []struct {
		stride, size uintptr
		idx          []int
		want         uint64
	}{
		{8, 8, []int{0, 3, 5}, 6},          // one line each, plus its last byte
		{100, 80, []int{0, 2}, 2 * 3},      // offsets 0 and 64, and byte 79
		{100, 129, []int{1}, 4},            // 0, 64, 128 and byte 128
		{1, 1, []int{1023, 0, 512}, 2 * 3}, // a byte, read twice
	}
	for _, c := range cases {
		if got := readLines(base, c.stride, c.size, c.idx); got != c.want {
			t.Errorf("readLines(stride %d, size %d, %v) = %d, want %d", c.stride, c.size, c.idx, got, c.want)
		}
	}
	runtime.KeepAlive(b)
}

// BenchmarkRows is the cost of asking for 16 random rows of 80 bytes of
// a 800 MB array, in cache or not, from the caller's side: what a step
// spends before its arithmetic can start.
func BenchmarkRows(b *testing.B) {
	x := make([]float64, 10*1_000_000)
	idx := make([]int, 16)
	for k := range idx {
		idx[k] = (k * 7919) % 1_000_000
	}
	for b.Loop() {
		Rows(x, 10, 10, idx)
	}
}

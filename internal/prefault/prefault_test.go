// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefault

import "testing"

// TestMakeIsMake: Make returns a zeroed slice of the length asked for,
// below and above MinBytes, of several element sizes, that can be written
// in full.
func TestMakeIsMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, MinBytes/8 + 3, 3 * MinBytes / 8} {
		s := Make[float64](n)
		b := Make[int32](n)
		if len(s) != n || len(b) != n {
			t.Fatalf("Make(%d): lengths %d, %d", n, len(s), len(b))
		}
		for i := range s {
			if s[i] != 0 || b[i] != 0 {
				t.Fatalf("Make(%d)[%d] = %v, %v, want 0", n, i, s[i], b[i])
			}
			s[i], b[i] = float64(i), int32(i)
		}
	}
}

// TestPages: the whole pages inside a range.
func TestPages(t *testing.T) {
	for _, c := range []struct{ p, size, lo, n uintptr }{
		{0, pageSize, 0, pageSize},
		{1, pageSize, pageSize, 0},
		{1, 3 * pageSize, pageSize, 2 * pageSize},
		{pageSize, 2*pageSize + 5, pageSize, 2 * pageSize},
		{10, 5, pageSize, 0},
	} {
		if lo, n := pages(c.p, c.size); lo != c.lo || n != c.n {
			t.Errorf("pages(%d, %d) = %d, %d; want %d, %d", c.p, c.size, lo, n, c.lo, c.n)
		}
	}
}

// BenchmarkFill96MB is what Make saves: a fresh 96 MB array filled, with
// its pages populated first (Make) and without (make).
func BenchmarkFill96MB(b *testing.B) {
	const n = 12_000_000
	for _, c := range []struct {
		name string
		make func(int) []float64
	}{{"make", func(n int) []float64 { return make([]float64, n) }}, {"Make", Make[float64]}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				x := c.make(n)
				for i := range x {
					x[i] = 1
				}
			}
		})
	}
}

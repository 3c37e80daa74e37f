// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package hugemem

import "testing"

// Make returns zeroed, writable slices of the length asked for, small and
// large, after the heap has held other data.
func TestMake(t *testing.T) {
	junk := make([]float64, 3<<20)
	for i := range junk {
		junk[i] = 1
	}
	junk = nil
	for _, n := range []int{0, 1, 1000, Threshold/8 - 1, Threshold / 8, 3 << 20} {
		s := Make[float64](n)
		if len(s) != n {
			t.Fatalf("len %d, want %d", len(s), n)
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("n = %d: s[%d] = %v, want 0", n, i, v)
			}
			s[i] = float64(i)
		}
		for i, v := range s {
			if v != float64(i) {
				t.Fatalf("n = %d: s[%d] = %v after writing", n, i, v)
			}
		}
	}
	type pair struct {
		p float64
		a int32
	}
	s := Make[pair](1 << 20)
	s[len(s)-1].a = 7
	if s[0] != (pair{}) || s[len(s)-1].a != 7 {
		t.Fatal("struct slice not zeroed or not writable")
	}
}

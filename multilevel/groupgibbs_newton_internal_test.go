// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "testing"

// TestNewtonEveryFor checks the automatic default's Newton schedule: one
// sweep in cachedNewtonEvery where the fixed block's data fit the Newton
// update's cache (Chem97: 31,022 data, 2 fixed effects), one in
// DefaultNewtonEvery where the update reads its rows twice (the crossed
// synthetic row: 10⁷ data, 10 fixed effects), at the cache's edge exactly.
func TestNewtonEveryFor(t *testing.T) {
	for _, c := range []struct{ n, q, want int }{
		{31022, 2, cachedNewtonEvery},
		{10_000_000, 10, DefaultNewtonEvery},
		{newtonCacheMax / 4, 3, cachedNewtonEvery},
		{newtonCacheMax/4 + 1, 3, DefaultNewtonEvery},
	} {
		if got := newtonEveryFor(c.n, c.q); got != c.want {
			t.Errorf("N = %d, %d fixed effects: Newton every %d sweeps, want %d", c.n, c.q, got, c.want)
		}
	}
	if cachedNewtonEvery >= DefaultNewtonEvery {
		t.Errorf("cached Newton every %d, uncached %d: the cached update costs half as much", cachedNewtonEvery, DefaultNewtonEvery)
	}
}

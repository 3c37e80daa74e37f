// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "testing"

// TestGroupFits checks the count that keeps groupTab's int32 indexes from
// wrapping: two rows of 3 and 2 entries need 2 + (6 + 3) + (3 + 2) = 16
// indexes, so a limit of 16 fits and one of 15 does not (refillGroups then
// keeps the pairs).
func TestGroupFits(t *testing.T) {
	r := &augRows{ptr: []int{0, 3, 5}, col: []int32{0, 1, 2, 0, 3}, val: []float64{1, 1, 2, 1, 0.5}}
	if !groupFits(r, 16) {
		t.Errorf("groupFits(16) = false, want true: 16 indexes")
	}
	if groupFits(r, 15) {
		t.Errorf("groupFits(15) = true, want false: 16 indexes")
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build race

package multilevel_test

// raceEnabled: the race detector's instrumentation makes some values
// escape to the heap that do not otherwise, so allocation counts under
// -race say nothing about the code; the allocation assertions that the
// detector perturbs are skipped there (as the standard library's are).
const raceEnabled = true

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build race

package data

// raceEnabled: the race detector reserves terabytes of address space for
// its shadow memory, so a test binary built with it cannot run under
// ulimit -v.
const raceEnabled = true

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package exactmh

import "time"

// cpuTime reports false: the platform's CPU time is not read here, and the
// automatic default reports its pilots' wall time instead (Candidate.Time).
func cpuTime() (time.Duration, bool) { return 0, false }

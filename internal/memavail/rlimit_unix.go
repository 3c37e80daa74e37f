// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package memavail

import "syscall"

// addressSpaceLimit returns RLIMIT_AS (ulimit -v) in bytes, if one is set.
func addressSpaceLimit() (float64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) || r.Cur >= 1<<62 {
		return 0, false
	}
	return float64(r.Cur), true
}

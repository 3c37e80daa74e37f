// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefault

import "syscall"

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the
// syscall package does not name.
const madvPopulateWrite = 23

// populate faults in the pages [lo, lo+n) writable. Its error is dropped:
// an older kernel declines the advice (EINVAL), and the pages then fault
// in one at a time as they are written, as without it. The caller's slice
// keeps the memory alive across the call.
func populate(lo, n uintptr) {
	if n == 0 {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, lo, n, madvPopulateWrite) //nolint:errcheck // advice
}

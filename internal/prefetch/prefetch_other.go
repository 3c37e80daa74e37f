// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !amd64

package prefetch

import "unsafe"

// lines is readLines: there is no prefetch instruction to call.
func lines(base unsafe.Pointer, stride, size uintptr, idx []int) uint64 {
	return readLines(base, stride, size, idx)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefetch

import "unsafe"

// lines issues PREFETCHT0 for every 64-byte line of
// [base + idx[k]·stride, + size) (size ≥ 1), and returns 0.
//
//go:noescape
func lines(base unsafe.Pointer, stride, size uintptr, idx []int) uint64

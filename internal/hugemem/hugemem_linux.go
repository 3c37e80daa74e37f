// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build linux

package hugemem

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms Go
// supports on Linux with THP (x86-64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// supported: Make asks for huge pages here.
const supported = true

// advise marks the huge-page-aligned interior of s MADV_HUGEPAGE (THP in
// "madvise" mode backs only such regions) and then MADV_DONTNEED, which
// drops the small pages the runtime may already have faulted in while
// zeroing: the next touch of each aligned 2 MiB then faults in a zeroed
// huge page. s is fresh from make and so all zeros, which is what
// MADV_DONTNEED leaves in private anonymous memory. Errors (no THP, an
// old kernel) leave s as it is.
func advise[T any](s []T) {
	size := uintptr(len(s)) * unsafe.Sizeof(s[0])
	if size < Threshold {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (p + hugePage - 1) &^ (hugePage - 1)
	hi := (p + size) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-p)), hi-lo)
	if syscall.Madvise(b, syscall.MADV_HUGEPAGE) != nil {
		return
	}
	_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
}

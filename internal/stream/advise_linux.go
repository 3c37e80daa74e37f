// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stream

import (
	"os"
	"syscall"
	"unsafe"
)

const (
	willNeed = syscall.MADV_WILLNEED
	dontNeed = syscall.MADV_DONTNEED
	random   = syscall.MADV_RANDOM
	normal   = syscall.MADV_NORMAL
)

var pageSize = uintptr(os.Getpagesize())

// madvise advises the n bytes at p, page-aligned. Advice is a hint: an
// error (none is expected on a live mapping) changes nothing the pass
// computes, and is ignored.
func madvise(p unsafe.Pointer, n int, advice int) {
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), n), advice)
}

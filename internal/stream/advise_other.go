// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !linux

package stream

import (
	"os"
	"unsafe"
)

const (
	willNeed = 1
	dontNeed = 2
	random   = 3
	normal   = 4
)

var pageSize = uintptr(os.Getpagesize())

// madvise does nothing outside Linux.
func madvise(unsafe.Pointer, int, int) {}

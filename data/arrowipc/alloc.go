// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowipc

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// cappedAllocator is the Go allocator with a ceiling on any single
// allocation, derived from the file's size: a corrupted length in a file
// (a page's uncompressed size, a buffer's) would otherwise ask for
// gigabytes, and an allocation the system cannot back kills the process
// where no recover reaches. It panics instead, and the readers' recover
// turns that into an error.
type cappedAllocator struct {
	memory.Allocator
	max int
}

// newCappedAllocator allows any single allocation up to 64 MiB plus 64
// times the file's size: far more than a valid file's pages or batches
// need (a batch of 65,536 rows of 8-byte values is 512 KiB; a page of a
// Parquet column chunk decompresses to at most its row group's data),
// far less than what exhausts memory.
func newCappedAllocator(fileSize int64) *cappedAllocator {
	m := int64(64<<20) + 64*max(fileSize, 0)
	return &cappedAllocator{Allocator: memory.NewGoAllocator(), max: int(min(m, 1<<40))}
}

func (a *cappedAllocator) check(size int) {
	if size < 0 || size > a.max {
		panic(fmt.Sprintf("an allocation of %d bytes, more than a file of this size can need (%d)", size, a.max))
	}
}

func (a *cappedAllocator) Allocate(size int) []byte {
	a.check(size)
	return a.Allocator.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	return a.Allocator.Reallocate(size, b)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package prefault allocates the large arrays the package fills in full
// at set-up (alias tables, bound constants, Taylor records, design
// matrices) with their pages faulted in by one system call instead of one
// page fault per 4 KiB page as they are first written.
//
// Fresh memory costs a fault per page when first touched. On the virtual
// machines this package is measured on a fault costs about 20 µs — more
// than writing the page's 512 numbers — so filling a fresh 96 MB array
// took 0.54–0.64 s, of which 0.1 s was the writing; with the pages
// populated first (Linux's madvise(MADV_POPULATE_WRITE), 5.14 and later)
// it took 0.10–0.17 s (BenchmarkFill96MB). Package data found it first:
// the flights' 864 MB design took 3–4 s of faults written row by row and
// 0.2 s populated. The memory would be resident moments later in any
// case: the arrays are written in full. Elsewhere, or on a kernel that
// declines, Make is make.
package prefault

import "unsafe"

// MinBytes is the size from which Make populates: below it the faults
// are few.
const MinBytes = 1 << 20

// pageSize is the base page size the advice is aligned to.
const pageSize = 4 << 10

// Make returns make([]T, n), its pages populated when it is at least
// MinBytes long. T must hold no pointers (the arrays are plain numbers).
func Make[T any](n int) []T {
	s := make([]T, n)
	Populate(s)
	return s
}

// Populate populates the whole pages of s, a freshly allocated slice about
// to be written, when it is at least MinBytes long. It changes no value.
func Populate[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	if size := uintptr(len(s)) * unsafe.Sizeof(zero); size >= MinBytes {
		lo, m := pages(uintptr(unsafe.Pointer(unsafe.SliceData(s))), size)
		populate(lo, m)
	}
}

// pages returns the whole pages inside [p, p+size), as a start and a
// length (0 when there are none).
func pages(p, size uintptr) (lo, n uintptr) {
	lo = (p + pageSize - 1) &^ (pageSize - 1)
	hi := (p + size) &^ (pageSize - 1)
	if hi <= lo {
		return lo, 0
	}
	return lo, hi - lo
}

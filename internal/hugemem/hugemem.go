// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package hugemem allocates the large per-datum tables of the minibatch
// kernels (alias columns, tempered bound constants) so that, on Linux,
// they sit on transparent huge pages: a random read of such a table then
// costs a cache miss but rarely a TLB miss and page walk, which on 4 KiB
// pages is as expensive as the miss itself once the table outgrows the
// TLB's reach (a few MB).
//
// The memory is ordinary Go heap memory, collected as usual; only the
// kernel is asked (madvise) to back it with huge pages. On other systems,
// and for small tables, Make is make.
package hugemem

// Threshold is the size in bytes from which Make asks for huge pages:
// below it a table fits the TLB's reach on 4 KiB pages anyway.
const Threshold = 4 << 20

// Huge reports whether a table of the given size in bytes is large enough
// for Make to ask for huge pages on this system.
func Huge(bytes int) bool { return supported && bytes >= Threshold }

// Make returns a zeroed slice of n elements of T, like make([]T, n), backed
// by huge pages where the system allows when it spans at least Threshold
// bytes. T must hold no pointers (the memory is re-zeroed by the kernel
// behind the runtime's back before it is returned).
func Make[T any](n int) []T {
	s := make([]T, n)
	if n > 0 {
		advise(s)
	}
	return s
}

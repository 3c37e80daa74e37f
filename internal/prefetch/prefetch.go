// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package prefetch starts the loads of the rows a minibatch step is about
// to read, without waiting for them.
//
// A step draws its data at random from arrays far larger than the caches,
// so every row it reads is a cache (and TLB) miss. Met one row at a time
// inside the dependent arithmetic of each datum's energy, the misses
// follow one another; started together, they overlap. On amd64 the rows'
// cache lines are asked for with PREFETCHT0, which returns at once: the
// step's arithmetic on its first datum proceeds while the later data's
// lines arrive. A plain load of the lines would also start them together,
// but the processor can retire nothing past a load that misses, so the
// arithmetic would wait until every line had arrived. Elsewhere Rows reads
// one byte of every line, which gets the overlap of the misses but not the
// overlap with the arithmetic.
package prefetch

import "unsafe"

// Rows starts loading x[i·stride : i·stride+width] for every i in idx,
// and returns 0 or (without prefetch instructions, where it reads the
// lines) a sum of what it read, which the caller should store somewhere
// that is overwritten later, so that the reads are not dropped as dead.
// Every row must lie within x; width ≥ 1.
func Rows[T any](x []T, stride, width int, idx []int) uint64 {
	if len(idx) == 0 || width <= 0 {
		return 0
	}
	var zero T
	size := unsafe.Sizeof(zero)
	return lines(unsafe.Pointer(unsafe.SliceData(x)), uintptr(stride)*size, uintptr(width)*size, idx)
}

// readLines reads one byte of every 64-byte line of
// [base + idx[k]·stride, + size) (size ≥ 1), in a loop of independent
// loads, and returns their sum: lines without prefetch instructions.
func readLines(base unsafe.Pointer, stride, size uintptr, idx []int) uint64 {
	var s uint64
	for _, i := range idx {
		start := unsafe.Add(base, uintptr(i)*stride)
		for off := uintptr(0); off < size; off += 64 {
			s += uint64(*(*byte)(unsafe.Add(start, off)))
		}
		s += uint64(*(*byte)(unsafe.Add(start, size-1)))
	}
	return s
}

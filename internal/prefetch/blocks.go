// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefetch

import (
	"iter"
	"unsafe"
)

// blockBytes is how many bytes of rows the gather loops prefetch at once:
// well within L2, so that rows prefetched at the start of a block are still
// there when the block's energies are computed.
const blockBytes = 32 << 10

// blockRows returns the number of rows of d elements of the given size in
// bytes that the gather loops prefetch at once (at least one), for a gather
// of n rows: 1 when n ≤ 1, which is not prefetched, without the division.
func blockRows(n, d, size int) int {
	if n <= 1 {
		return 1
	}
	return max(1, blockBytes/(d*size))
}

// Blocks is the block loop of the gathers of the GLMs that keep their
// rows in x (d columns, row-major; y the responses): it walks idx in blocks
// of blockRows rows and yields the bounds lo, hi of each block idx[lo:hi],
// having first prefetched the block's rows with Data, so that the energies
// the loop body then computes over the block, each a chain of dependent
// arithmetic on one row, meet rows already in cache instead of one miss at
// a time. A block is blockBytes of rows, small enough to stay in L2 until
// the body reaches its last row.
//
// Data's sum is stored in dst[lo], a use that keeps its loads from
// being dropped as dead however Data is compiled; the body must
// set all of dst[lo:hi], which overwrites it. A gather of one row
// (len(idx) ≤ 1) is not prefetched, nor a block of consecutive rows (a
// full-batch pass), which the hardware prefetcher streams in anyway: there
// prefetching only read every line twice.
//
// Every call site inlines Blocks, its closure and the loop body, so
// ranging over it allocates nothing. It yields bounds, not the slice
// idx[lo:hi]: escape analysis (Go 1.26) takes a slice passed to yield as
// escaping, which would make idx escape from every gather.
func Blocks[T float32 | float64](dst []float64, x []T, d int, y []float64, idx []int) iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		blk := blockRows(len(idx), d, int(unsafe.Sizeof(x[0])))
		for lo := 0; lo < len(idx); lo += blk {
			hi := min(lo+blk, len(idx))
			if len(idx) > 1 && !Consecutive(idx[lo:hi]) {
				dst[lo] = Data(x, d, y, idx[lo:hi])
			}
			if !yield(lo, hi) {
				return
			}
		}
	}
}

// Consecutive reports whether idx is i, i+1, i+2, …: a stretch of rows in
// memory order. A random gather is told apart at its second index.
func Consecutive(idx []int) bool {
	for k := 1; k < len(idx); k++ {
		if idx[k] != idx[0]+k {
			return false
		}
	}
	return true
}

// Data starts loading the rows idx of the row-major matrix x (d
// columns) and their responses y_i, so that the CPU
// has the cache and TLB misses of many random rows outstanding at once
// instead of meeting them one row at a time inside the dependent
// arithmetic of the energies. It returns what Rows returns (0,
// or where it has to read the lines, their sum), which the caller stores
// where it will be overwritten. No value read plays a part in any result.
// A nil y (a kernel that keeps the responses with its own per-datum terms)
// is not prefetched.
func Data[T float32 | float64](x []T, d int, y []float64, idx []int) float64 {
	s := Rows(x, d, d, idx)
	if y != nil {
		s += Rows(y, 1, 1, idx)
	}
	return float64(s)
}

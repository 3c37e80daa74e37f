// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package stream advises the kernel during a sequential pass over rows
// that live in a read-only file mapping (a data.Store's or
// data.SparseStore's), so that a pass over a file larger than memory reads
// ahead in large windows and lets go of what it has read: before the pass
// reaches a window of 64 MiB it asks for the next one
// (MADV_WILLNEED: asynchronous read-ahead), and once it has passed a
// window it drops that window's pages from the process (MADV_DONTNEED:
// the pages stay in the page cache while memory allows, and a later read
// maps them again). The process's resident share of the file during a
// pass is then a few windows per goroutine, not the file.
//
// Only memory registered as such a mapping (Register, by package data)
// is advised: MADV_DONTNEED on anonymous memory would discard it, so rows
// on the Go heap, or anywhere else, are never touched.
package stream

import (
	"sync"
	"unsafe"
)

// window is the bytes of an array a pass reads ahead and then lets go:
// 64 MiB, tens of milliseconds of a pass, thousands of the disk's
// read-ahead units. A variable for the tests.
var window = 64 << 20

// region is a registered mapping: its first byte and length.
type region struct {
	base unsafe.Pointer
	n    uintptr
}

var (
	mu      sync.RWMutex
	regions []region
)

// Register records mem as a read-only shared file mapping, whose pages a
// pass may drop from the process and fault in again from the file. It
// returns the function that forgets it, to be called before mem is
// unmapped.
func Register(mem []byte) (unregister func()) {
	if len(mem) == 0 {
		return func() {}
	}
	r := region{unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem))}
	mu.Lock()
	regions = append(regions, r)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for k, q := range regions {
			if q == r {
				regions = append(regions[:k], regions[k+1:]...)
				return
			}
		}
	}
}

// mapped reports whether the n bytes at p lie in one registered mapping.
func mapped(p unsafe.Pointer, n uintptr) bool {
	mu.RLock()
	defer mu.RUnlock()
	a := uintptr(p)
	for _, r := range regions {
		b := uintptr(r.base)
		if a >= b && a-b <= r.n && n <= r.n-(a-b) {
			return true
		}
	}
	return false
}

// Array is an array of fixed-size rows a pass reads: its first byte and
// bytes a row. The zero Array is not advised.
type Array struct {
	base     unsafe.Pointer
	rowBytes int
}

// Rows returns the Array of x read in rows of per values, or the zero
// Array unless x lies in a registered mapping.
func Rows[T float32 | float64 | int32 | int64 | uint16](x []T, per int) Array {
	if len(x) == 0 || per <= 0 {
		return Array{}
	}
	size := int(unsafe.Sizeof(x[0]))
	p := unsafe.Pointer(unsafe.SliceData(x))
	if !mapped(p, uintptr(len(x)*size)) {
		return Array{}
	}
	return Array{base: p, rowBytes: per * size}
}

// Pass is one goroutine's sequential pass over rows lo … hi−1 of up to
// two arrays (X and y of a store). Its zero value, and a Pass of arrays
// none of which is mapped, does nothing.
type Pass struct {
	arrays [2]Array
	lo, hi int
	per    int // rows a window: Window bytes of the widest array
	next   int // the row at which At advises next
	freed  int // rows lo … freed−1 have been dropped
}

// NewPass returns the pass over rows lo … hi−1 of the arrays (zero
// Arrays are skipped), and asks for its first window.
func NewPass(lo, hi int, arrays ...Array) Pass {
	p := newPass(lo, hi, arrays)
	p.At(lo)
	return p
}

// newPass is NewPass without its first advice.
func newPass(lo, hi int, arrays []Array) Pass {
	var p Pass
	k, widest := 0, 0
	for _, a := range arrays {
		if a.base == nil || k == len(p.arrays) {
			continue
		}
		p.arrays[k] = a
		k++
		widest = max(widest, a.rowBytes)
	}
	if k == 0 || hi <= lo {
		return Pass{}
	}
	p.lo, p.hi, p.next, p.freed = lo, hi, lo, lo
	p.per = max(1, window/widest)
	return p
}

// At tells the pass it has reached row i (called at least once a
// window, rows in increasing order): on entering a window it asks for
// the next one and drops the one before the window it is in.
func (p *Pass) At(i int) {
	if p.per == 0 || i < p.next {
		return
	}
	w := (i - p.lo) / p.per
	start := p.lo + w*p.per
	p.next = min(p.hi, start+p.per)
	if w == 0 {
		p.advise(start, p.next, willNeed)
	}
	if p.next < p.hi {
		p.advise(p.next, min(p.hi, p.next+p.per), willNeed)
	}
	// The window before this one is kept (a pass may still hold a row of
	// it); those before are dropped.
	if drop := start - p.per; drop > p.freed {
		p.advise(p.freed, drop, dontNeed)
		p.freed = drop
	}
}

// End drops what the pass has not dropped yet.
func (p *Pass) End() {
	if p.per == 0 || p.freed >= p.hi {
		return
	}
	p.advise(p.freed, p.hi, dontNeed)
	p.freed = p.hi
}

// RandomReads advises rows lo … hi−1 of the arrays (zero Arrays are
// skipped) for a phase that reads a few rows scattered over them
// (MADV_RANDOM): a fault then reads its own page from the file, not the
// disk's read-ahead around it. Without it a strided subsample of rows
// 7,629 apart (FindMAP's first phase at N = 10⁹) reads about the whole
// file per pass over the subsample, one read-ahead unit a row. It returns
// the function that ends the phase: it drops the pages read from the
// process (MADV_DONTNEED) and gives the rows back the kernel's default
// advice (MADV_NORMAL). Like NewPass, it advises only registered mappings.
func RandomReads(lo, hi int, arrays ...Array) (done func()) {
	p := newPass(lo, hi, arrays)
	if p.per == 0 {
		return func() {}
	}
	p.advise(lo, hi, random)
	return func() {
		p.advise(lo, hi, dontNeed)
		p.advise(lo, hi, normal)
	}
}

// advise gives advice to rows a … b−1 of every array: WILLNEED over
// the pages they touch (and RANDOM and NORMAL, which only change how
// faults read), DONTNEED over the pages they fill (rows of the
// neighbouring windows or blocks may share the pages at the ends).
func (p *Pass) advise(a, b int, advice int) {
	for _, arr := range p.arrays {
		if arr.base == nil {
			continue
		}
		from := uintptr(arr.base) + uintptr(a*arr.rowBytes)
		to := uintptr(arr.base) + uintptr(b*arr.rowBytes)
		if advice != dontNeed {
			from &^= pageSize - 1
			to = (to + pageSize - 1) &^ (pageSize - 1)
		} else {
			from = (from + pageSize - 1) &^ (pageSize - 1)
			to &^= pageSize - 1
		}
		if to <= from {
			continue
		}
		off := int(from - uintptr(arr.base)) // may be negative: the page before the array
		madvise(unsafe.Add(arr.base, off), int(to-from), advice)
	}
}

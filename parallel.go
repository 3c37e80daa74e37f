// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Whole-data passes outside the chains (FindMAP's Newton sweeps, the
// Laplace Hessian, ControlVariates) split the data into contiguous blocks
// whose partial sums are added in block order. The number of blocks
// depends on N and the size of a partial sum only, never on the machine,
// so the result is the same bits with any number of CPUs; the blocks run
// on up to GOMAXPROCS goroutines.
// minBlockData is the fewest data a block holds: below it a pass is too
// short for goroutines to pay. A variable for the tests, which compare
// blocked passes with sequential ones on small data.
var minBlockData = 1 << 16

const (
	// maxBlocks bounds the blocks of a pass (and so the CPUs it uses).
	maxBlocks = 8
	// maxBlockFloats bounds the memory of the partial sums (32 MiB).
	maxBlockFloats = 1 << 22
)

// passBlocks returns the number of blocks of a pass over n data whose
// partial sums take perBlock float64s each (1: sequential).
func passBlocks(n, perBlock int) int {
	nb := min(maxBlocks, n/minBlockData)
	if perBlock > 0 {
		nb = min(nb, maxBlockFloats/perBlock)
	}
	return max(1, nb)
}

// blockRange returns block b's data [lo, hi) of nb blocks over n data.
func blockRange(b, nb, n int) (lo, hi int) {
	return b * n / nb, (b + 1) * n / nb
}

// forBlocks calls f(b) for b = 0 … nb−1 (none when nb = 0) on up to GOMAXPROCS goroutines and
// returns when all have returned. A panic in f is raised again in the
// caller's goroutine (where Sample's or the caller's recover sees it), the
// first block's if several panic.
func forBlocks(nb int, f func(b int)) {
	if nb == 1 {
		f(0)
		return
	}
	workers := min(nb, runtime.GOMAXPROCS(0))
	panics := make([]any, nb)
	var wg sync.WaitGroup
	var next atomic.Int64 // the next block to take
	for range workers {
		wg.Go(func() {
			for {
				b := int(next.Add(1) - 1)
				if b >= nb {
					return
				}
				func() {
					defer func() { panics[b] = recover() }()
					f(b)
				}()
			}
		})
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
}

// auditWhileBuilding runs audit (a bound's audit, itself in concurrent
// blocks) and build (the alias table over the same bound, one goroutine)
// at the same time, and returns audit's error, else
// build's, as running them in that order would. Only when N is large
// enough for the audit to run in blocks: below that both are quick.
func auditWhileBuilding(n int, audit, build func() error) error {
	if passBlocks(n, 0) == 1 || runtime.GOMAXPROCS(0) == 1 {
		if err := audit(); err != nil {
			return err
		}
		return build()
	}
	var buildErr error
	var buildPanic any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { buildPanic = recover() }()
		buildErr = build()
	}()
	auditErr := audit()
	<-done
	if buildPanic != nil {
		panic(buildPanic) // in the caller's goroutine, where Sample recovers it
	}
	if auditErr != nil {
		return auditErr
	}
	return buildErr
}

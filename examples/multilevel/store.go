// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/exactmh/exactmh"
	store "github.com/exactmh/exactmh/data"
	"github.com/exactmh/exactmh/examples/internal/memstat"
	"github.com/exactmh/exactmh/model"
)

// The scale mode (-store DIR): the data are written once, row by row, to a
// mapped sparse store (data.SparseStore: one CSR row per datum, the 10
// fixed effects and the datum's group's intercept and slope columns,
// float32 values with -float32), and the posterior is built over the
// mapping (model.NewMultilevelRows): no row is copied to the heap. The
// set-up's full passes read the mapping (its pages dropped now and then);
// GroupGibbs reads the rows it draws with pread (SetRowReaders), and the
// kept draws go to a file (-spool, spool.go), so while sampling the
// resident memory is the kernel's own tables.

// storePath returns the file of the data set of n data in groups groups.
func storePath(dir string, n, groups, lo, hi int, seed uint64, dtype store.DType) string {
	return filepath.Join(dir, fmt.Sprintf("multilevel_n%d_g%d_%d-%d_seed%d.%v.sparse", n, groups, lo, hi, seed, dtype))
}

// layout returns the columns of the model: the 10 fixed effects, then
// each group's intercept and slope on x1.
func layout(groups int) *store.SparseLayout {
	l := &store.SparseLayout{Fixed: []string{"Intercept"}}
	for j := range 9 {
		l.Fixed = append(l.Fixed, fmt.Sprintf("x%d", j+1))
	}
	f := store.SparseFactor{Name: "g", Intercept: true, Slopes: []string{"x1"}}
	for g := range groups {
		f.Levels = append(f.Levels, strconv.Itoa(g+1))
	}
	l.Factors = []store.SparseFactor{f}
	return l
}

// writeStore draws the data set and writes it to path, row by row.
func writeStore(path string, d *data, n, groups, lo, hi int, seed uint64, dtype store.DType) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var total int
	for _, s := range groupSizes(n, groups, lo, hi) {
		total += s
	}
	w, err := store.CreateSparseStore(path, total, 10+2*groups, dtype, false, layout(groups))
	if err != nil {
		return err
	}
	cols := make([]int32, 12)
	vals := make([]float64, 12)
	for j := range 10 {
		cols[j] = int32(j)
	}
	vals[0], vals[10] = 1, 1
	err = simulateRows(d, n, groups, lo, hi, seed, func(g int32, x []float64, y, _ float64) error {
		copy(vals[1:10], x)
		cols[10], cols[11] = 10+2*g, 11+2*g
		vals[11] = x[0]
		return w.WriteRow(cols, vals, y, 0)
	})
	if err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// dropPages keeps the store's mapped pages out of the resident set in
// set-up's full passes (sequential: a dropped page is not read again)
// until stop is called: every 2 ms it reads the process's file-backed
// resident memory (memstat.FileResident) and drops the mapping's pages
// (DropPages) once that has grown by more than dropAbove since the call.
// A fixed interval does not bound it: a pass over 10⁶ rows (107 MB)
// takes about 40 ms on two cores, so drops every 50 ms left the whole file
// resident at the end of each pass, on top of the heap GroupGibbs's tables
// were being built in. Without /proc (not Linux) it drops every 50 ms.
// Sampling reads no page of the mapping (GroupGibbs reads its rows with
// pread): stop is called when it begins.
func dropPages(st *store.SparseStore) (stop func()) {
	const dropAbove = 8 << 20
	done := make(chan struct{})
	var once sync.Once
	base, measured := memstat.FileResident()
	every := 2 * time.Millisecond
	if !measured {
		every = 50 * time.Millisecond
	}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if measured {
					if r, ok := memstat.FileResident(); ok && r-base <= dropAbove {
						continue
					}
				}
				if err := st.DropPages(); err != nil {
					fmt.Fprintln(os.Stderr, "multilevel:", err)
					return
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// fromStore opens (writing it first if absent) the store of the data set
// and returns its truth, the posterior over the mapped rows, the store
// and the stop of its page drops (dropPages, begun before the posterior's
// first pass over the rows).
func fromStore(dir string, n, groups, lo, hi int, seed uint64, f32 bool, say func(string, ...any)) (_ *data, _ *exactmh.Posterior, _ *store.SparseStore, stop func(), _ error) {
	dtype := store.Float64
	if f32 {
		dtype = store.Float32
	}
	path := storePath(dir, n, groups, lo, hi, seed, dtype)
	d := &data{}
	if _, err := os.Stat(path); err != nil {
		t0 := time.Now()
		if err := writeStore(path, d, n, groups, lo, hi, seed, dtype); err != nil {
			return nil, nil, nil, nil, err
		}
		say("store %s written in %.1fs", path, time.Since(t0).Seconds())
	} else {
		d.truth(n, groups, lo, hi, seed)
	}
	st, err := store.OpenSparseStore(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stop = dropPages(st)
	l := st.Layout()
	if l == nil || len(l.Factors) != 1 || len(l.Fixed) != 10 || l.Fixed[0] != "Intercept" {
		stop()
		st.Close()
		return nil, nil, nil, nil, fmt.Errorf("store %s: not a data set of this example (layout %+v)", path, l)
	}
	m := spec()
	m.Y = st.Y()
	for _, name := range l.Fixed[1:] {
		m.Fixed = append(m.Fixed, model.Covariate{Name: name})
	}
	f := &m.Factors[0]
	f.Levels = l.Factors[0].Levels
	var post *exactmh.Posterior
	// GroupGibbs reads the rows it draws with pread (SetRowReaders), not
	// through the mapping, whose pages would fill the resident set.
	readers := func() model.RowReader { return st.RowReader() }
	if f32 {
		post, err = model.NewMultilevelRows(m, model.SparseRows[float32]{N: st.N(), D: st.D(), RowPtr: st.RowPtr(), Col: st.Col(), Val: st.Val32()})
		if err == nil {
			post.Energy.(*model.SparseGLM[float32]).SetRowReaders(readers)
		}
	} else {
		post, err = model.NewMultilevelRows(m, model.SparseRows[float64]{N: st.N(), D: st.D(), RowPtr: st.RowPtr(), Col: st.Col(), Val: st.Val64()})
		if err == nil {
			post.Energy.(*model.SparseGLM[float64]).SetRowReaders(readers)
		}
	}
	if err != nil {
		stop()
		st.Close()
		return nil, nil, nil, nil, err
	}
	say("store %s: %s (N = %d, %d entries, %.1f bytes a row), mapped %v", path, memstat.GB(st.Size()), st.N(), st.NNZ(), float64(st.Size())/float64(st.N()), st.Mapped())
	return d, post, st, stop, nil
}

// memReport prints the memory of a run from a store: the peak resident
// set (getrusage's maxrss, which counts the mapped file's pages the
// process touched as well as its heap), the anonymous (heap) and
// file-backed parts when sampling began and at the end, and the Go heap
// in use when sampling began (after a collection: the kernel's tables).
func memReport(st *store.SparseStore, adv *memstat.Adviser, heap *runtime.MemStats) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	maxrss := ru.Maxrss << 10 // kB on Linux
	end := memstat.ProcStatus()
	size, n := st.Size(), float64(st.N())
	fmt.Printf("memory: data file %s (%.1f B a row); peak RSS (getrusage maxrss) %s = %.2f× the file\n",
		memstat.GB(size), float64(size)/n, memstat.GB(maxrss), float64(maxrss)/float64(size))
	if adv.Before != nil {
		fmt.Printf("memory: when sampling began RssAnon %s, RssFile %s (%s after EndFullPasses), Go heap in use %s (%.1f B a row); at the end RssAnon %s, RssFile %s\n",
			memstat.GB(adv.Before["RssAnon"]), memstat.GB(adv.Before["RssFile"]), memstat.GB(adv.After["RssFile"]),
			memstat.GB(int64(heap.HeapInuse)), float64(heap.HeapInuse)/n, memstat.GB(end["RssAnon"]), memstat.GB(end["RssFile"]))
	}
}

// writeHeapProfile writes the heap profile to path (go tool pprof
// -sample_index=inuse_space shows what holds the memory).
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "multilevel: -memprofile:", err)
	}
}

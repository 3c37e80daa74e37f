// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stream

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// TestPassReadsAndDrops maps a file of float32 rows, registers it, and
// passes over it with At once a row: every value read is the file's
// (the dropped windows fault in again), and an unregistered array — heap
// memory, which MADV_DONTNEED would zero — is never advised.
func TestPassReadsAndDrops(t *testing.T) {
	const per = 10
	defer func(w int) { window = w }(window)
	window = 1 << 20
	n := 3*window/(4*per) + 123 // three windows and a part
	want := make([]float32, n*per)
	for k := range want {
		want[k] = float32(k%1000) + 0.5
	}
	path := filepath.Join(t.TempDir(), "rows")
	if err := os.WriteFile(path, unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), 4*len(want)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4*len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	x := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), len(want))
	if a := Rows(x, per); a.base != nil {
		t.Fatal("an unregistered mapping was advised")
	}
	unregister := Register(mem)
	a := Rows(x, per)
	if a.base == nil {
		t.Fatal("a registered mapping is not advised")
	}
	for pass := range 2 {
		lo, hi := pass*n/3, n
		p := NewPass(lo, hi, a, Rows(want, per))
		if p.per != window/(4*per) {
			t.Fatalf("pass %d: %d rows a window, want %d", pass, p.per, window/(4*per))
		}
		for i := lo; i < hi; i++ {
			p.At(i)
			for j := range per {
				if x[i*per+j] != want[i*per+j] {
					t.Fatalf("pass %d: row %d, column %d: %v, want %v", pass, i, j, x[i*per+j], want[i*per+j])
				}
			}
		}
		if p.freed <= lo || p.freed >= hi {
			t.Errorf("pass %d over [%d, %d): dropped up to row %d before End", pass, lo, hi, p.freed)
		}
		p.End()
		if p.freed != hi {
			t.Errorf("pass %d: dropped up to row %d after End, want %d", pass, p.freed, hi)
		}
	}
	// The heap copy, never registered, is intact.
	for k := range want {
		if want[k] != float32(k%1000)+0.5 {
			t.Fatalf("heap value %d changed to %v", k, want[k])
		}
	}
	unregister()
	if a := Rows(x, per); a.base != nil {
		t.Error("an unregistered mapping is still advised")
	}
	var zero Pass
	zero.At(5)
	zero.End()
}

// TestRandomReads maps a file of float64 rows, registers it, and reads a
// strided subsample under RandomReads twice (the second time after done
// has dropped the pages, so they fault in again): every value is the
// file's, and a heap array given beside it — which MADV_DONTNEED would
// zero — is intact.
func TestRandomReads(t *testing.T) {
	const per, n, stride = 4, 50000, 997
	want := make([]float64, n*per)
	for k := range want {
		want[k] = float64(k%4099) - 0.25
	}
	path := filepath.Join(t.TempDir(), "rows")
	if err := os.WriteFile(path, unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), 8*len(want)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8*len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	x := unsafe.Slice((*float64)(unsafe.Pointer(&mem[0])), len(want))
	defer Register(mem)()
	for round := range 2 {
		done := RandomReads(0, n, Rows(x, per), Rows(want, per))
		for i := round; i < n; i += stride {
			for j := range per {
				if x[i*per+j] != want[i*per+j] {
					t.Fatalf("round %d: row %d, column %d: %v, want %v", round, i, j, x[i*per+j], want[i*per+j])
				}
			}
		}
		done()
	}
	for k := range want {
		if want[k] != float64(k%4099)-0.25 {
			t.Fatalf("heap value %d changed to %v", k, want[k])
		}
	}
	RandomReads(0, n)() // no arrays: nothing advised
}

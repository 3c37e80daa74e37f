//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package data

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/exactmh/exactmh/internal/stream"
)

// load maps the file read-only and shared: pages come from the page cache
// on first touch.
func (s *Store) load(f *os.File) error {
	b, _, err := mapFile(f, s.l.size)
	if err != nil {
		return err
	}
	s.mem, s.mmap = b, true
	return nil
}

// mapFile maps the first size bytes of f read-only, streamed with
// package stream (unmap forgets it), whose registry lets the set-up
// passes read the mapping ahead and drop what they have read.
func mapFile(f *os.File, size int) (mem []byte, mapped bool, err error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return b, false, err
	}
	streamed.Store(unsafe.SliceData(b), stream.Register(b))
	return b, true, nil
}

// streamed holds the unregister functions of mapFile's mappings, by
// their first byte.
var streamed sync.Map

// unmap forgets b in package stream, if mapFile streamed it, and unmaps
// it.
func unmap(b []byte) error {
	if f, ok := streamed.LoadAndDelete(unsafe.SliceData(b)); ok {
		f.(func())()
	}
	return syscall.Munmap(b)
}

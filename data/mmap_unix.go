//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package data

import (
	"os"
	"syscall"
)

// load maps the file read-only and shared: pages come from the page cache
// on first touch.
func (s *Store) load(f *os.File) error {
	b, err := syscall.Mmap(int(f.Fd()), 0, s.l.size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	s.mem, s.mmap = b, true
	return nil
}

// mapFile maps the first size bytes of f read-only.
func mapFile(f *os.File, size int) (mem []byte, mapped bool, err error) {
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	return b, err == nil, err
}

func unmap(b []byte) error { return syscall.Munmap(b) }

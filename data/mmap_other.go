//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package data

import "os"

// load reads the whole file: this platform has no syscall.Mmap.
func (s *Store) load(f *os.File) error { return s.readAll(f) }

// mapFile reads the first size bytes of f into 8-byte-aligned memory:
// this platform has no syscall.Mmap.
func mapFile(f *os.File, size int) (mem []byte, mapped bool, err error) {
	mem = alignedBytes(size)
	if _, err := f.ReadAt(mem, 0); err != nil {
		return nil, false, err
	}
	return mem, false, nil
}

func unmap([]byte) error { return nil }

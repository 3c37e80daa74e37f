//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package data

import "os"

// load reads the whole file: this platform has no syscall.Mmap.
func (s *Store) load(f *os.File) error { return s.readAll(f) }

func unmap([]byte) error { return nil }

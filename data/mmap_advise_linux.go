package data

import "syscall"

const (
	adviceDontNeed   = syscall.MADV_DONTNEED
	adviceRandom     = syscall.MADV_RANDOM
	adviceSequential = syscall.MADV_SEQUENTIAL
)

// advise is madvise(2) on the mapping.
func advise(b []byte, advice int) error { return syscall.Madvise(b, advice) }

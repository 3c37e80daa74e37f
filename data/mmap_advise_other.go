//go:build !linux

package data

const (
	adviceDontNeed = iota
	adviceRandom
	adviceSequential
)

// advise does nothing: the standard library offers madvise on Linux only.
func advise([]byte, int) error { return nil }

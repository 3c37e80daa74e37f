//go:build !(linux && (amd64 || arm64))

package data

// evict does nothing: posix_fadvise is called on Linux (amd64, arm64) only.
func evict(string) error { return nil }

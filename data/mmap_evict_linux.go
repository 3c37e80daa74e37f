//go:build linux && (amd64 || arm64)

package data

import (
	"os"
	"syscall"
)

// posixFadvDontNeed is POSIX_FADV_DONTNEED on Linux.
const posixFadvDontNeed = 4

// evict asks the kernel to drop the file's clean pages from the page cache
// (posix_fadvise(POSIX_FADV_DONTNEED) over the whole file).
func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, posixFadvDontNeed, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

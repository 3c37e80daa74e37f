// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package memavail says how much memory the process may still allocate,
// so that a request driven by the input (the draws a run keeps, the rows
// a file declares, the one-hot columns of a categorical term) is refused
// with an error before it is made: an allocation the system cannot back
// kills a Go process where no recover reaches ("fatal error: out of
// memory").
package memavail

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Headroom is the share of the available memory one input-driven request
// may take: the rest is for the data already held, the kernels and the
// garbage collector.
const Headroom = 0.7

// Available returns the bytes this process may still allocate: the
// smallest of the kernel's MemAvailable, the cgroup's memory.max less its
// memory.current, GOMEMLIMIT, and the address-space limit (ulimit -v)
// less the process's virtual size; ok is false when none can be read
// (then nothing should be checked).
func Available() (bytes float64, ok bool) {
	avail := math.Inf(1)
	if v, found := statusField("/proc/meminfo", "MemAvailable:"); found {
		avail = v
	}
	if max, err := readNumber("/sys/fs/cgroup/memory.max"); err == nil {
		if cur, err := readNumber("/sys/fs/cgroup/memory.current"); err == nil {
			avail = math.Min(avail, max-cur)
		}
	}
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 {
		avail = math.Min(avail, float64(lim))
	}
	if lim, ok := addressSpaceLimit(); ok {
		if vm, found := statusField("/proc/self/status", "VmSize:"); found {
			avail = math.Min(avail, math.Max(0, lim-vm))
		}
	}
	return avail, !math.IsInf(avail, 1)
}

// statusField returns a "Name:   123 kB" field of a /proc file in bytes.
func statusField(path, field string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, field) {
			continue
		}
		fs := strings.Fields(line[len(field):])
		if len(fs) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseFloat(fs[0], 64)
		return kb * 1024, err == nil
	}
	return 0, false
}

// readNumber reads a file holding one number ("max" is an error).
func readNumber(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
}

// ByteSize formats a number of bytes for a person.
func ByteSize(b float64) string {
	const unit = 1024
	switch {
	case b >= unit*unit*unit:
		return fmt.Sprintf("%.1f GiB", b/(unit*unit*unit))
	case b >= unit*unit:
		return fmt.Sprintf("%.1f MiB", b/(unit*unit))
	case b >= unit:
		return fmt.Sprintf("%.1f KiB", b/unit)
	}
	return fmt.Sprintf("%.0f B", b)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build linux

package hugemem

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestHugePagesBacked logs how much of a 64 MiB table the kernel backs
// with huge pages (AnonHugePages of its mappings in /proc/self/smaps). It
// only logs: THP may be off or out of huge pages on the machine.
func TestHugePagesBacked(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skip("no THP:", err)
	}
	s := Make[float64](8 << 20)
	for i := range s {
		s[i] = 1
	}
	lo := uintptr(unsafe.Pointer(&s[0]))
	hi := lo + uintptr(len(s))*8
	huge, err := anonHuge(lo, hi)
	if err != nil {
		t.Skip(err)
	}
	t.Logf("THP %s: %d of %d KiB on huge pages", strings.TrimSpace(string(mode)), huge, (hi-lo)>>10)
}

// anonHuge sums AnonHugePages (KiB) over the mappings overlapping [lo, hi).
func anonHuge(lo, hi uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total int
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var a, b uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &a, &b); n == 2 && strings.Contains(line, " ") {
			in = a < hi && b > lo
			continue
		}
		var kb int
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			fmt.Sscanf(strings.TrimPrefix(line, "AnonHugePages:"), "%d", &kb)
			total += kb
		}
	}
	return total, sc.Err()
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package memavail

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// TestAvailable checks that Linux reports some memory, and that under an
// address-space limit (ulimit -v, in a re-executed test binary) the
// figure is at most the limit.
func TestAvailable(t *testing.T) {
	avail, ok := Available()
	if os.Getenv("MEMAVAIL_LIMIT_KIB") != "" {
		kib, _ := strconv.ParseFloat(os.Getenv("MEMAVAIL_LIMIT_KIB"), 64)
		if !ok || avail > kib*1024 {
			t.Fatalf("under ulimit -v %.0f KiB: Available = %.0f, %v", kib, avail, ok)
		}
		return
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && (!ok || !(avail > 0)) {
		t.Errorf("Available = %v, %v with /proc/meminfo present", avail, ok)
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under ulimit -v")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("no bash for ulimit -v: %v", err)
	}
	const kib = 3 << 20
	cmd := exec.Command(bash, "-c", `ulimit -v "$1" && exec "$2" -test.run='^TestAvailable$'`, "bash", strconv.Itoa(kib), os.Args[0])
	cmd.Env = append(os.Environ(), "MEMAVAIL_LIMIT_KIB="+strconv.Itoa(kib))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("under ulimit -v: %v\n%s", err, out)
	}
}

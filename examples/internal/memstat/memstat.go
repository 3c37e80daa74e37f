// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package memstat reads a process's memory (/proc/self/status) for the
// examples that sample from a mapped store, and holds the Recorder that
// tells the store when the passes over every row are over.
package memstat

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/exactmh/exactmh"
)

// ProcStatus returns the memory fields of /proc/self/status (VmHWM,
// VmRSS, RssAnon, RssFile, …) in bytes: Linux only, empty elsewhere.
func ProcStatus() map[string]int64 {
	m := map[string]int64{}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
			m[k] = kb << 10
		}
	}
	return m
}

// GB formats a number of bytes.
func GB(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.0f kB", float64(b)/(1<<10))
}

// Adviser is a Recorder that calls Do once, when the first chain begins
// its sampling phase (the set-up's passes over every row are over: a
// store's EndFullPasses), recording ProcStatus just before and after in
// Before and After and Do's error in Err, and passes every event on to
// Inner. A nil Do does nothing.
type Adviser struct {
	Do            func() error
	Inner         exactmh.Recorder
	Before, After map[string]int64
	Err           error
	once          sync.Once
}

// Init passes the run's start on to Inner.
func (a *Adviser) Init(run exactmh.RunInfo) error {
	if a.Inner != nil {
		return a.Inner.Init(run)
	}
	return nil
}

// Record calls Do at the first draw of the sampling phase.
func (a *Adviser) Record(e *exactmh.Event) error {
	if !e.Warmup && a.Do != nil {
		a.once.Do(func() {
			a.Before = ProcStatus()
			a.Err = a.Do()
			a.After = ProcStatus()
		})
	}
	if a.Inner != nil {
		return a.Inner.Record(e)
	}
	return nil
}

// Finish passes the end of the run on to Inner.
func (a *Adviser) Finish(res *exactmh.Result) error {
	if f, ok := a.Inner.(exactmh.RunFinisher); ok {
		return f.Finish(res)
	}
	return nil
}

// FileResident returns the process's file-backed and shared resident
// memory in bytes (the third field of /proc/self/statm, in pages: RssFile
// plus RssShmem), a read cheap enough to poll every few milliseconds, and
// false where there is no /proc (not Linux).
func FileResident() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return 0, false
	}
	var pages int64
	if _, err := fmt.Sscan(f[2], &pages); err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

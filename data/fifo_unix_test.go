// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package data_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exactmh/exactmh/data"
)

// TestReadRefusesFIFO gives every reader and store a named pipe no process
// writes to: each refuses it as not a regular file, at once, rather than
// blocking in open(2) for ever (the guard below fails the test after a
// minute instead of hanging it).
func TestReadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"d.csv", "d.parquet", "d.arrow", "d.store", "d.sparse"} {
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		open := func() error {
			var err error
			switch name {
			case "d.store":
				_, err = data.OpenStore(path)
			case "d.sparse":
				_, err = data.OpenSparseStore(path)
			default:
				_, err = data.ReadFile(path, nil)
			}
			return err
		}
		done := make(chan error, 1)
		go func() { done <- open() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s, a named pipe: error %v, want one saying it is not a regular file", name, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s, a named pipe: still blocked after a minute", name)
		}
	}
}

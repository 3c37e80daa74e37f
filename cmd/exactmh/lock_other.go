// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package main

import "os"

// lockFile does nothing where there is no flock: two processes writing
// one output are not excluded there.
func lockFile(f *os.File) error { return nil }

func unlockFile(f *os.File) {}

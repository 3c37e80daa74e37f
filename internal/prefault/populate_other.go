// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !linux

package prefault

// populate does nothing: pages are populated ahead only on Linux.
func populate(lo, n uintptr) {}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !linux

package hugemem

// supported: Make is make here.
const supported = false

// advise does nothing: huge pages are asked for on Linux only.
func advise[T any]([]T) {}

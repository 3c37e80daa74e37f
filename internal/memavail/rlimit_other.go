// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package memavail

// addressSpaceLimit reports no limit where there is no RLIMIT_AS.
func addressSpaceLimit() (float64, bool) { return 0, false }

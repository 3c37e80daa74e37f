// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "github.com/exactmh/exactmh"

// init registers the package's kernels with exactmh (exactmh.Register), so
// that everything that ranges over exactmh.Kernels — the exactmh command's
// --kernel groupsmh and groupgibbs, the conformance, golden and fuzz
// tests — and the automatic default (GroupGibbs's Choose: the multilevel
// path) see them once the package is imported.
func init() {
	exactmh.Register(exactmh.KernelInfo{Name: "GroupSMH", CLI: "groupsmh", Family: exactmh.ControlVariateFamily,
		Exact: true, NeedsBound: true, NeedsMultilevel: true,
		New: func(c []float64) exactmh.Kernel { return GroupSMH{Center: c} }})
	exactmh.Register(exactmh.KernelInfo{Name: "GroupGibbs", CLI: "groupgibbs", Family: exactmh.ControlVariateFamily,
		Exact: true, NeedsBound: true, NeedsMultilevel: true,
		New:    func(c []float64) exactmh.Kernel { return GroupGibbs{Center: c} },
		Choose: choose})
}

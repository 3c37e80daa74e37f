// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import "github.com/exactmh/exactmh"

// init registers the package's kernels with exactmh (exactmh.Register),
// in this order after the exact ones, so that everything that ranges over
// exactmh.Kernels — the conformance, golden, fuzz and capability tests —
// sees them once the package is imported. They
// have no --kernel name (KernelInfo.CLI ""): the exactmh command offers
// only exact kernels.
func init() {
	exactmh.Register(exactmh.KernelInfo{Name: "AustereMH", Family: exactmh.MinibatchFamily,
		New: func([]float64) exactmh.Kernel { return AustereMH{} }})
	exactmh.Register(exactmh.KernelInfo{Name: "MHBT", Family: exactmh.MinibatchFamily,
		New: func([]float64) exactmh.Kernel { return MHBT{} }})
	exactmh.Register(exactmh.KernelInfo{Name: "MHminibatch", Family: exactmh.MinibatchFamily,
		New: func([]float64) exactmh.Kernel { return MHminibatch{} }})
	exactmh.Register(exactmh.KernelInfo{Name: "SGLD", Family: exactmh.MinibatchFamily, NeedsGradient: true,
		New: func([]float64) exactmh.Kernel { return SGLD{} }})
}

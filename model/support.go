// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/vec"
)

// linearRange returns the range of xᵀθ over a bounded prior's support.
func linearRange(x []float64, prior exactmh.Prior) (lo, hi float64, err error) {
	s, ok := prior.(exactmh.BoundedSupport)
	if !ok {
		return 0, 0, fmt.Errorf("exactmh: an energy range needs a bounded support (a BoundedSupport prior such as Box or Ball), have %T", prior)
	}
	lo, hi = s.LinearRange(x)
	return lo, hi, nil
}

// maxDist returns max ‖θ − y‖₂ over a bounded prior's support.
func maxDist(y []float64, prior exactmh.Prior) (float64, error) {
	s, ok := prior.(exactmh.BoundedSupport)
	if !ok {
		return 0, fmt.Errorf("exactmh: this bound needs a bounded support (a BoundedSupport prior such as Box or Ball), have %T", prior)
	}
	return s.MaxDist(y), nil
}

// checkPriorDim returns an error if a prior that knows its dimension has
// another than d.
func checkPriorDim(prior exactmh.Prior, d int) error {
	if dc, ok := prior.(interface{ CheckDim(d int) error }); ok {
		return dc.CheckDim(d)
	}
	return nil
}

// newRowReader returns a function that reads x_i of g as float64 for a
// set-up pass: a float32 model's row converted into one reused buffer
// (valid until the next read), any other GLM's Row.
func newRowReader(g exactmh.GLM) func(i int) []float64 {
	if r, ok := g.(interface{ float32Rows() *vec.Rows32 }); ok {
		rows, buf := r.float32Rows(), make([]float64, g.Dim())
		return func(i int) []float64 { return rows.ReadRow(buf, i) }
	}
	return g.Row
}

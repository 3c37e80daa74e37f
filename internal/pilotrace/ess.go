// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package pilotrace

import (
	"math"

	"github.com/exactmh/exactmh/diagnostics"
)

// MinDefined returns the smallest of m and the defined ones of x's bulk
// and tail ESS (NaN counts as not defined): a pilot is scored by the ESS
// it has, not 0, when a coordinate did not vary over a short, slow pilot.
func MinDefined(m float64, x [][]float64) float64 {
	for _, e := range [...]float64{diagnostics.ESSBulk(x), diagnostics.ESSTail(x)} {
		if !math.IsNaN(e) && (math.IsNaN(m) || e < m) {
			m = e
		}
	}
	return m
}

// KeptESS returns the smallest defined bulk or tail ESS over the
// coordinates of one chain's draws kept keep coordinates each, row after
// row (NaN if none is defined).
func KeptESS(kept []float64, keep int) float64 {
	m := len(kept) / keep
	x := make([]float64, m)
	ess := math.NaN()
	for j := range keep {
		for i := range m {
			x[i] = kept[i*keep+j]
		}
		ess = MinDefined(ess, [][]float64{x})
	}
	return ess
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"testing"
)

// TestTailAMatchesLogForm checks that tailA's product form of the
// Student-t component's ratio equals the log form it replaces in
// tailLogRatio: log A(m²) − log A(m²′) against tailLogNOverQ's
// difference, for block sizes 1 to 6, mixture weights 0.05 to 0.9 and
// Mahalanobis distances² from 0 to past tailAMax.
func TestTailAMatchesLogForm(t *testing.T) {
	cq := tailConsts(6)
	m2s := []float64{0, 1e-9, 0.3, 1, 2.5, 7, 20, 60, 200, 690, 710, 2000}
	for _, eps := range []float64{0.05, 0.2, 0.9} {
		ec := tailScaled(cq, eps)
		for q := 1; q <= 6; q++ {
			for _, a := range m2s {
				for _, b := range m2s {
					want := tailLogNOverQ(b, q, eps, cq[q]) - tailLogNOverQ(a, q, eps, cq[q])
					var got float64
					x, y := tailA(a, q, eps, ec[q]), tailA(b, q, eps, ec[q])
					if math.IsInf(x, 1) || math.IsInf(y, 1) {
						got = want // tailLogRatio takes the log form there
						if a <= tailAMax && b <= tailAMax {
							t.Fatalf("tailA(%v or %v) = +Inf below tailAMax", a, b)
						}
					} else {
						got = math.Log(x / y)
					}
					if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
						t.Errorf("ε %v, q %d, m² %v → %v: product form %v, log form %v", eps, q, a, b, got, want)
					}
				}
			}
		}
	}
}

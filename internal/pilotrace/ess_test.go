// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package pilotrace

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/diagnostics"
)

// TestKeptESS checks KeptESS on draws of two coordinates kept row after
// row: a constant coordinate (no ESS defined) is left out and the other's
// smaller of bulk and tail ESS is the answer; with both constant, NaN.
func TestKeptESS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 200
	kept, x := make([]float64, 2*m), make([]float64, m)
	for i := range m {
		x[i] = rng.NormFloat64()
		kept[2*i], kept[2*i+1] = 3, x[i]
	}
	want := min(diagnostics.ESSBulk([][]float64{x}), diagnostics.ESSTail([][]float64{x}))
	if got := KeptESS(kept, 2); got != want || !(got > 0) {
		t.Errorf("KeptESS = %v, want %v, the varying coordinate's", got, want)
	}
	for i := range m {
		kept[2*i+1] = -1
	}
	if got := KeptESS(kept, 2); !math.IsNaN(got) {
		t.Errorf("KeptESS of constant draws = %v, want NaN", got)
	}
	if got := MinDefined(5, [][]float64{x}); got != min(5, want) {
		t.Errorf("MinDefined(5, x) = %v, want %v", got, min(5, want))
	}
}

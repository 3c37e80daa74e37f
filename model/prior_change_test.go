// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"math"
	"testing"

	"github.com/exactmh/exactmh/model"
)

// TestPriorLogPriorChange: a one-coordinate change of Gaussian's and
// Flat's log density (LogPriorChange, localgibbs.CoordinatePrior) is the
// difference of LogPrior at the two points.
func TestPriorLogPriorChange(t *testing.T) {
	g, err := model.NewGaussian([]float64{1, -2, 0}, []float64{0.5, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, 1.7, -4}
	for j, x := range []float64{2.1, -5, 0.25} {
		moved := append([]float64(nil), theta...)
		moved[j] = x
		want := g.LogPrior(moved) - g.LogPrior(theta)
		if got := g.LogPriorChange(theta, j, x); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
			t.Errorf("Gaussian: θ_%d → %g: change %g, want %g", j, x, got, want)
		}
		if got := (model.Flat{}).LogPriorChange(theta, j, x); got != 0 {
			t.Errorf("Flat: change %g, want 0", got)
		}
	}
}

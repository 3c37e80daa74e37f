// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// CheckBound, CheckRange and CheckFlyBound sample a Box or Ball prior's
// support directly: they used to redraw whole Gaussian vectors until one
// fell inside, which in d = 50 (a standard normal vector lies in [−1, 1]⁵⁰
// with probability 5·10⁻⁹) never happened, and then blamed the centre.
func TestCheckersSampleHighDimensionalSupports(t *testing.T) {
	t.Parallel()
	const d = 50
	w := make([]float64, d)
	for j := range w {
		w[j] = math.Sin(float64(j + 1))
	}
	x, y := simulateLogistic(200, w, 9)
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	box, _ := model.NewCube(d, -1, 1)
	ball, _ := model.NewBall(d, 1, nil)
	for _, prior := range []exactmh.Prior{box, ball} {
		p := &exactmh.Posterior{Energy: e, Prior: prior}
		opt := &exactmh.CheckOptions{Points: 20, Seed: 3}
		db, err := p.DiffBound()
		if err != nil {
			t.Fatal(err)
		}
		if w, err := exactmh.CheckBound(p, db, opt); err != nil {
			t.Errorf("%T: CheckBound: %v", prior, err)
		} else if !(w.Ratio > 0 && w.Ratio <= 1) || !inside(prior, w.Theta) || !inside(prior, w.ThetaNew) {
			t.Errorf("%T: CheckBound: worst %+v, want a ratio in (0, 1] at points in the support", prior, w)
		}
		r, err := p.EnergyRange()
		if err != nil {
			t.Fatal(err)
		}
		if w, err := exactmh.CheckRange(p, r, opt); err != nil {
			t.Errorf("%T: CheckRange: %v", prior, err)
		} else if !inside(prior, w.Theta) {
			t.Errorf("%T: CheckRange at θ = %v outside the support", prior, w.Theta)
		}
		fb, err := exactmh.NewRangeFlyBound(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := exactmh.CheckFlyBound(p, fb, opt); err != nil {
			t.Errorf("%T: CheckFlyBound: %v", prior, err)
		}
		// A far too small bound is still caught there.
		for i := range db.C {
			db.C[i] /= 100
		}
		if _, err := exactmh.CheckBound(p, db, opt); err == nil {
			t.Errorf("%T: CheckBound accepted c_i/100", prior)
		}
	}
}

func inside(p exactmh.Prior, theta []float64) bool {
	return theta != nil && !math.IsInf(p.LogPrior(theta), -1)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
)

// doubledLogistic embeds a logistic regression and doubles its loss, so it
// inherits LossDeriv3 and LossBound4 that no longer belong to its loss.
type doubledLogistic struct{ *model.LogisticRegression }

func (e doubledLogistic) Loss(i int, z float64) float64 { return 2 * e.LogisticRegression.Loss(i, z) }

func (e doubledLogistic) LossDerivs(i int, z float64) (f1, f2 float64) {
	f1, f2 = e.LogisticRegression.LossDerivs(i, z)
	return 2 * f1, 2 * f2
}

func (e doubledLogistic) LossBound(i, k int, lo, hi float64) float64 {
	return 2 * e.LogisticRegression.LossBound(i, k, lo, hi)
}

func (e doubledLogistic) Energies(dst, theta []float64, idx []int) {
	e.LogisticRegression.Energies(dst, theta, idx)
	for k := range dst[:len(idx)] {
		dst[k] *= 2
	}
}

// TestControlVariatesOrderChoice checks which expansion ControlVariates
// takes: third order on a logistic regression with N = 4,000 and d = 20
// (the estimated batch, tens of data, falls by more than cvCubicGain);
// second order on a type whose inherited LossDeriv3 is not its loss's third
// derivative, at N = 20,000 and d = 5 (a batch under d data), and at
// d = 200 > cvCubicMaxDim.
func TestControlVariatesOrderChoice(t *testing.T) {
	build := func(n, d int, wrap bool) *exactmh.Posterior {
		p, _, la := userGLMPair(t, n, d)
		if wrap {
			p = &exactmh.Posterior{Energy: doubledLogistic{p.Energy.(*model.LogisticRegression)}, Prior: p.Prior}
			var err error
			if la, err = exactmh.FindLaplace(context.Background(), p, make([]float64, d), nil); err != nil {
				t.Fatal(err)
			}
		}
		cv, err := exactmh.ControlVariates(p, la)
		if err != nil {
			t.Fatal(err)
		}
		return cv
	}
	for _, c := range []struct {
		n, d  int
		wrap  bool
		order int
	}{{4000, 20, false, 3}, {4000, 20, true, 2}, {20000, 5, false, 2}, {4000, 200, false, 2}, {100000, 50, false, 2}} {
		if testing.Short() && c.n*c.d > 1e6 {
			continue // -short: the tall wide case (a Laplace fit over 5·10⁶ entries) runs without -short
		}
		if got := exactmh.CVOrder(build(c.n, c.d, c.wrap)); got != c.order {
			t.Errorf("N = %d, d = %d, doubled loss %v: order %d, want %d", c.n, c.d, c.wrap, got, c.order)
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "testing"

// TestDefaultInit: the origin where the prior holds it, else the centre of
// a Box or Ball support.
func TestDefaultInit(t *testing.T) {
	wide, _ := NewBox([]float64{-1, -1}, []float64{2, 2})
	box, _ := NewBox([]float64{1, -3}, []float64{2, -1})
	ball, _ := NewBall(2, 0.5, []float64{3, 4})
	for _, c := range []struct {
		p    Prior
		want []float64
	}{{nil, []float64{0, 0}}, {wide, []float64{0, 0}}, {box, []float64{1.5, -2}}, {ball, []float64{3, 4}}} {
		p := c.p
		if p == nil {
			p = (&Posterior{}).prior()
		}
		if got := defaultInit(p, 2); got[0] != c.want[0] || got[1] != c.want[1] {
			t.Errorf("%T: defaultInit = %v, want %v", c.p, got, c.want)
		}
	}
}

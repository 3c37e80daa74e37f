// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpNeg checks expNeg against math.Exp(−x): relative error at most
// 10⁻¹⁵ on a grid of [0, 700] and at random points, exactly 1 at 0, 0
// past 700, NaN for NaN.
func TestExpNeg(t *testing.T) {
	worst := 0.0
	check := func(x float64) {
		got, want := expNeg(x), math.Exp(-x)
		if e := math.Abs(got-want) / want; e > worst {
			worst = e
		}
	}
	for x := 0.0; x <= 700; x += 0.000731 {
		check(x)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(rng.Float64() * 40)
	}
	if worst > 1e-15 {
		t.Errorf("expNeg's largest relative error %.3g, want ≤ 1e-15", worst)
	}
	t.Logf("largest relative error %.3g", worst)
	if expNeg(0) != 1 || expNeg(701) != 0 || !math.IsNaN(expNeg(math.NaN())) {
		t.Errorf("expNeg(0) = %v, expNeg(701) = %v, expNeg(NaN) = %v", expNeg(0), expNeg(701), expNeg(math.NaN()))
	}
}

// BenchmarkExpNeg compares expNeg with math.Exp over the energy's range.
func BenchmarkExpNeg(b *testing.B) {
	xs := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = rng.Float64() * 5
	}
	b.Run("expNeg", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += expNeg(xs[i&1023])
		}
		_ = s
	})
	b.Run("math.Exp", func(b *testing.B) {
		var s float64
		for i := range b.N {
			s += math.Exp(-xs[i&1023])
		}
		_ = s
	})
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"math"
	"math/rand/v2"
	"testing"
)

// corrFitError returns the largest |P(X_nc + X_corr ≤ x) − logistic(x)|
// over a grid of x, X_nc ~ N(0, 1), X_corr ~ c (its cells treated as
// points), and the variance of c.
func corrFitError(c *correction) (maxErr, variance float64) {
	w := make([]float64, len(c.cum))
	prev := 0.0
	for j, v := range c.cum {
		w[j], prev = v-prev, v
	}
	var mean float64
	for j, y := range c.y {
		mean += w[j] * y
	}
	for j, y := range c.y {
		variance += w[j] * (y - mean) * (y - mean)
	}
	variance += c.h * c.h / 12
	for x := -15.0; x <= 15; x += 0.01 {
		var f float64
		for j, y := range c.y {
			f += w[j] * 0.5 * math.Erfc(-(x-y)/math.Sqrt2)
		}
		maxErr = max(maxErr, math.Abs(f-logistic(x)))
	}
	return maxErr, variance
}

// The correction distribution makes N(0, 1) + C close to the standard
// logistic: the CDFs within 2·10⁻³ everywhere, the variance near
// π²/3 − 1, and draws that follow it.
func TestBarkerCorrection(t *testing.T) {
	c, err := barkerCorrection()
	if err != nil {
		t.Fatal(err)
	}
	e, v := corrFitError(c)
	if e > 2e-3 || math.Abs(v-(math.Pi*math.Pi/3-1)) > 0.1 {
		t.Errorf("CDF error %.2g, variance %.4f (want ≤ 2e-3, π²/3 − 1 = %.4f)", e, v, math.Pi*math.Pi/3-1)
	}
	t.Logf("max CDF error %.2g, variance %.4f (π²/3 − 1 = %.4f)", e, v, math.Pi*math.Pi/3-1)
	if testing.Verbose() {
		for _, lam := range []float64{10, 1, 0.1, 1e-2, 1e-3} {
			c, err := fitCorrection(1, 0.05, 10, 20, lam)
			if err != nil {
				t.Fatal(err)
			}
			e, v := corrFitError(c)
			t.Logf("λ = %g: max CDF error %.2g, variance %.4f", lam, e, v)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	var below [3]int
	xs := []float64{-2, 0, 1}
	for range n {
		x := rng.NormFloat64() + c.draw(rng)
		for k, b := range xs {
			if x <= b {
				below[k]++
			}
		}
	}
	for k, b := range xs {
		p := float64(below[k]) / n
		if se := math.Sqrt(p * (1 - p) / n); math.Abs(p-logistic(b)) > 4*se+2e-3 {
			t.Errorf("P(X ≤ %v) = %.4f, logistic %.4f", b, p, logistic(b))
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/data"
)

// TestCombinedSeparation is issue 31 item 17's last part: a binary
// response separated by a combination of two or three columns, none of
// which separates it alone, under the flat prior: the likelihood has no
// maximum and the coefficients drift without bound. The warning names the
// combination's columns; data with overlap (a logistic response, or a
// separation broken by one row) get none.
func TestCombinedSeparation(t *testing.T) {
	build := func(n int, label func(rng *rand.Rand, x []float64) float64) *fitted {
		rng := rand.New(rand.NewPCG(7, 1))
		names := []string{"(Intercept)", "x1", "x2", "x3", "noise"}
		p := len(names)
		d := &data.Design{N: n, D: p, Names: names, YName: "y", X: make([]float64, n*p), Y: make([]float64, n)}
		for i := range n {
			row := d.X[i*p : (i+1)*p]
			row[0] = 1
			for a := 1; a < p; a++ {
				row[a] = rng.NormFloat64()
			}
			d.Y[i] = label(rng, row)
		}
		return &fitted{design: d}
	}
	step := func(v float64) float64 {
		if v > 0 {
			return 1
		}
		return 0
	}
	cases := []struct {
		name  string
		n     int
		label func(rng *rand.Rand, x []float64) float64
		want  []string // the columns named; nil: no warning
	}{
		{"two columns", 400, func(_ *rand.Rand, x []float64) float64 { return step(x[1] + x[2]) }, []string{`"x1"`, `"x2"`}},
		{"three columns and the intercept", 400, func(_ *rand.Rand, x []float64) float64 { return step(x[1] - 0.5*x[2] + 2*x[3] - 0.3) }, []string{`"x1"`, `"x2"`, `"x3"`}},
		{"quasi-complete: ties on the hyperplane", 400, func(rng *rand.Rand, x []float64) float64 {
			if rng.IntN(10) == 0 { // on x1 + x2 = 0, either class
				x[2] = -x[1]
				return float64(rng.IntN(2))
			}
			return step(x[1] + x[2])
		}, []string{`"x1"`, `"x2"`}},
		{"tall: 100,000 rows", 100_000, func(_ *rand.Rand, x []float64) float64 { return step(x[1] + x[2]) }, []string{`"x1"`, `"x2"`}},
		{"overlap: a logistic response", 400, func(rng *rand.Rand, x []float64) float64 {
			return step(1/(1+math.Exp(-(x[1]+x[2]))) - rng.Float64())
		}, nil},
		{"overlap: one row on the wrong side", 400, func() func(*rand.Rand, []float64) float64 {
			k := 0
			return func(_ *rand.Rand, x []float64) float64 {
				k++
				if k == 17 {
					return 1 - step(x[1]+x[2])
				}
				return step(x[1] + x[2])
			}
		}(), nil},
	}
	for _, c := range cases {
		m := build(c.n, c.label)
		got := identifiability(m, "logistic", "flat")
		joined := strings.Join(got, "\n")
		t.Logf("%s: %q", c.name, joined)
		if c.want == nil {
			if strings.Contains(joined, "separates") {
				t.Errorf("%s: a separation warning on data with overlap: %s", c.name, joined)
			}
			continue
		}
		if !strings.Contains(joined, "a combination of columns") {
			t.Errorf("%s: no warning of separation by a combination: %q", c.name, joined)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(joined, w) {
				t.Errorf("%s: column %s not named: %s", c.name, w, joined)
			}
		}
		if strings.Contains(joined, `"noise"`) {
			t.Errorf("%s: the noise column named: %s", c.name, joined)
		}
		if got := identifiability(m, "logistic", "normal:2"); len(got) != 0 {
			t.Errorf("%s: warnings under a proper prior: %q", c.name, got)
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package symm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/vec"
)

// denseRankFour is AddRankFour's dense loop, the reference its sparse path
// must equal bit for bit.
func denseRankFour(h []float64, x *[4][]float64, c *[4]float64, d int) {
	for a := range d {
		a0, a1, a2, a3 := c[0]*x[0][a], c[1]*x[1][a], c[2]*x[2][a], c[3]*x[3][a]
		for b := a; b < d; b++ {
			h[a*d+b] += a0*x[0][b] + a1*x[1][b] + a2*x[2][b] + a3*x[3][b]
		}
	}
}

// TestRankFourSparseBitForBit: on sparse rows (one-hot blocks beside dense
// columns, as in the flights design) AddRankFour, which then updates only
// the entries where some row is non-zero at both ends, leaves h bit for bit
// as the dense loop does, over many groups, for d on both sides of its
// thresholds, and where a c_r or a row entry is ±Inf or NaN (which the
// dense loop spreads as NaN and the sparse path must not hide).
func TestRankFourSparseBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{1, 7, 8, 13, 32, 64, 65, 100} {
		for _, density := range []float64{0, 0.05, 0.2, 0.6, 1} {
			for _, special := range []float64{0, math.Inf(1), math.Inf(-1), math.NaN()} {
				want := make([]float64, d*d)
				got := make([]float64, d*d)
				sparseGroups := 0
				for g := range 200 {
					var x [4][]float64
					var c [4]float64
					for r := range 4 {
						x[r] = make([]float64, d)
						x[r][0] = 1 // an intercept
						for j := 1; j < d; j++ {
							if rng.Float64() < density {
								x[r][j] = rng.NormFloat64()
							}
						}
						c[r] = rng.ExpFloat64()
					}
					if special != 0 && g == 100 {
						if rng.IntN(2) == 0 {
							c[rng.IntN(4)] = special
						} else {
							x[rng.IntN(4)][rng.IntN(d)] = special
						}
					}
					var cols [64]int
					if d <= 64 && d >= sparseRankMinD {
						if k := NonzeroUnion(&cols, x[0], x[1], x[2], x[3], &c); k >= 0 && k <= d*3/4 {
							sparseGroups++
						}
					}
					denseRankFour(want, &x, &c, d)
					AddRankFour(got, &x, &c, d)
				}
				for e := range want {
					if math.Float64bits(want[e]) != math.Float64bits(got[e]) {
						t.Fatalf("d = %d, density %v, special %v: h[%d] = %v, dense loop %v", d, density, special, e, got[e], want[e])
					}
				}
				if d >= sparseRankMinD && d <= 64 && density <= 0.05 && sparseGroups < 150 {
					t.Errorf("d = %d, density %v: the sparse path ran on %d of 200 groups, want most", d, density, sparseGroups)
				}
			}
		}
	}
}

// TestNonzeroUnion: the union of the four rows' non-zero columns,
// ascending, and −1 for a non-finite entry or c_r.
func TestNonzeroUnion(t *testing.T) {
	x := [4][]float64{{1, 0, 0, 0, 0}, {0, 0, 2, 0, 0}, {0, 0, 0, 0, -1}, {1, 0, 0, 0, 0}}
	c := [4]float64{1, 1, 1, 1}
	var cols [64]int
	k := NonzeroUnion(&cols, x[0], x[1], x[2], x[3], &c)
	if k != 3 || cols[0] != 0 || cols[1] != 2 || cols[2] != 4 {
		t.Errorf("union = %v, want [0 2 4]", cols[:max(k, 0)])
	}
	x[1][3] = math.Inf(1)
	if k := NonzeroUnion(&cols, x[0], x[1], x[2], x[3], &c); k != -1 {
		t.Errorf("with an infinite entry: %d, want −1", k)
	}
	x[1][3] = 0
	c[2] = math.NaN()
	if k := NonzeroUnion(&cols, x[0], x[1], x[2], x[3], &c); k != -1 {
		t.Errorf("with a NaN c: %d, want −1", k)
	}
}

// TestLtNormSqSparse: LtNormSq's sum over the non-zeros of a sparse x is
// ‖Lᵀx‖², as the dense dot products compute it, to rounding (1e-13
// relative), for d on both sides of its thresholds and densities on both
// sides of a half; and a dense x takes the dense products bit for bit.
func TestLtNormSqSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{3, 8, 9, 32, 64, 65} {
		lt := make([]float64, d*d)
		for a := range d {
			for b := a; b < d; b++ {
				lt[a*d+b] = rng.NormFloat64()
			}
		}
		dense := func(x []float64) float64 {
			var s2 float64
			for a := range d {
				v := vec.Dot(lt[a*d+a:a*d+d], x[a:])
				s2 += v * v
			}
			return s2
		}
		for _, density := range []float64{0, 0.1, 0.3, 0.5, 0.9} {
			for range 50 {
				x := make([]float64, d)
				for j := range x {
					if rng.Float64() < density {
						x[j] = rng.NormFloat64()
					}
				}
				got, want := LtNormSq(lt, x, d), dense(x)
				if math.Abs(got-want) > 1e-13*want {
					t.Fatalf("d = %d, x = %v: %v, dense %v", d, x, got, want)
				}
				if density >= 0.9 && got != want {
					t.Fatalf("d = %d, dense x: %v, dense products %v, want the same bits", d, got, want)
				}
			}
		}
	}
}

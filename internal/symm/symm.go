// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package symm holds the dense symmetric kernels the root's Hessian
// sweeps and control variates share: rank-one and rank-four updates of an
// upper triangle (with a path for rows that are mostly zero, bit for bit
// the dense loop's), and ‖Lᵀx‖² for a triangular factor.
package symm

import (
	"math"
	"math/bits"

	"github.com/exactmh/exactmh/internal/vec"
)

// RankAcc adds Σ c·xxᵀ to the upper triangle of the d×d row-major h, four
// rows at a time (AddRankFour), the rest by Flush.
type RankAcc struct {
	H    []float64
	D    int
	m    int
	rows [4][]float64
	c    [4]float64
}

// Add adds c·xxᵀ (x is kept until the next Flush or four Adds).
func (a *RankAcc) Add(x []float64, c float64) {
	a.rows[a.m], a.c[a.m] = x, c
	if a.m++; a.m == 4 {
		AddRankFour(a.H, &a.rows, &a.c, a.D)
		a.m = 0
	}
}

// Flush adds the rows still held.
func (a *RankAcc) Flush() {
	for r := range a.m {
		AddRankOne(a.H, a.rows[r], a.c[r], a.D)
	}
	a.m = 0
}

// AddUpper adds the upper triangle of the d×d row-major src to dst's.
func AddUpper(dst, src []float64, d int) {
	for a := range d {
		vec.Axpy(dst[a*d+a:a*d+d], 1, src[a*d+a:a*d+d])
	}
}

// Symmetrize copies the upper triangle of the d×d row-major h below the
// diagonal.
func Symmetrize(h []float64, d int) {
	for a := range d {
		for b := range a {
			h[a*d+b] = h[b*d+a]
		}
	}
}

// AddRankOne adds c·xxᵀ to the upper triangle of the d×d row-major h.
func AddRankOne(h, x []float64, c float64, d int) {
	if c == 0 {
		return
	}
	x = x[:d]
	for a, xa := range x {
		ca := c * xa
		hr := h[a*d+a : a*d+d]
		xs := x[a:]
		xs = xs[:len(hr)]
		for b, xb := range xs {
			hr[b] += ca * xb
		}
	}
}

// AddRankFour adds Σ_r c_r·x_rx_rᵀ over four rows x_r to the upper triangle
// of the d×d row-major h: each entry of h is loaded and stored once for
// four data, half again as fast as four calls of AddRankOne.
func AddRankFour(h []float64, x *[4][]float64, c *[4]float64, d int) {
	x0, x1, x2, x3 := x[0][:d], x[1][:d], x[2][:d], x[3][:d]
	if d <= 64 && d >= sparseRankMinD {
		var cols [64]int
		if k := NonzeroUnion(&cols, x0, x1, x2, x3, c); k >= 0 && k <= d*3/4 {
			addRankFourOn(h, x0, x1, x2, x3, c, d, cols[:k])
			return
		}
	}
	for a := range d {
		a0, a1, a2, a3 := c[0]*x0[a], c[1]*x1[a], c[2]*x2[a], c[3]*x3[a]
		hr := h[a*d+a : a*d+d]
		n := len(hr)
		y0, y1, y2, y3 := x0[a:a+n], x1[a:a+n], x2[a:a+n], x3[a:a+n]
		for b := range hr {
			hr[b] += a0*y0[b] + a1*y1[b] + a2*y2[b] + a3*y3[b]
		}
	}
}

// sparseRankMinD is the least d for which AddRankFour looks for zeros: below
// it the dense loop is as cheap as the scan.
const sparseRankMinD = 8

// NonzeroUnion stores in cols the columns, ascending, where any of the four
// rows (d ≤ 64 entries each) is non-zero, and returns how many; it returns
// −1 when a row entry or a c_r is not finite, where 0·∞ = NaN must reach h
// as the dense loop puts it there. It reads the entries' bits without a
// branch: in a one-hot design which columns are non-zero is random, and a
// branch on it would mispredict.
func NonzeroUnion(cols *[64]int, x0, x1, x2, x3 []float64, c *[4]float64) int {
	for _, v := range c {
		if v-v != 0 {
			return -1
		}
	}
	x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
	var mask, inf uint64
	for j, v := range x0 {
		b0, b1 := math.Float64bits(v), math.Float64bits(x1[j])
		b2, b3 := math.Float64bits(x2[j]), math.Float64bits(x3[j])
		mask |= min((b0|b1|b2|b3)<<1, 1) << j // ±0 are zero
		// An exponent of all ones (±Inf, NaN) carries into bit 11.
		inf |= (b0>>52&0x7ff + 1) | (b1>>52&0x7ff + 1) | (b2>>52&0x7ff + 1) | (b3>>52&0x7ff + 1)
	}
	if inf&0x800 != 0 {
		return -1
	}
	k := 0
	for ; mask != 0; mask &= mask - 1 {
		cols[k] = bits.TrailingZeros64(mask)
		k++
	}
	return k
}

// addRankFourOn is AddRankFour on rows that are zero outside cols (one-hot
// and other sparse designs: the flights' rows have 6 non-zeros of 32). An
// entry (a, b) of the update gets a non-zero term only where some row is
// non-zero at both a and b; every other entry of the dense loop adds an exact
// zero, which leaves h as it is. The entries it does touch it computes by
// the dense loop's expression, so h ends bit for bit the same.
func addRankFourOn(h, x0, x1, x2, x3 []float64, c *[4]float64, d int, cols []int) {
	for i, a := range cols {
		a0, a1, a2, a3 := c[0]*x0[a], c[1]*x1[a], c[2]*x2[a], c[3]*x3[a]
		hr := h[a*d : a*d+d]
		for _, b := range cols[i:] {
			hr[b] += a0*x0[b] + a1*x1[b] + a2*x2[b] + a3*x3[b]
		}
	}
}

// LtNormSq returns ‖Lᵀx‖² for the upper-triangular row-major Lᵀ = lt.
// Where at most half of x's d entries are non-zero (8 ≤ d ≤ 64: one-hot
// designs, such as the flights' 6 non-zeros of 32) it sums over those
// entries only, d·nnz products rather than d²/2: the same quantity, but
// summed in another order than the dense dot products, so its last bits
// may differ from theirs.
func LtNormSq(lt, x []float64, d int) float64 {
	x = x[:d]
	if d >= 8 && d <= 64 {
		var nz [64]int
		k := 0
		for j, v := range x {
			if v != 0 {
				nz[k] = j
				k++
			}
		}
		if k <= d/2 {
			var s2 float64
			first := 0 // nz[first:k] are the non-zeros at or after a
			for a := range d {
				for first < k && nz[first] < a {
					first++
				}
				if first == k {
					break // (Lᵀx)_a = 0 from here on
				}
				row := lt[a*d : a*d+d]
				var v float64
				for _, b := range nz[first:k] {
					v += row[b] * x[b]
				}
				s2 += v * v
			}
			return s2
		}
	}
	var s2 float64
	for a := range d {
		v := vec.Dot(lt[a*d+a:a*d+d], x[a:])
		s2 += v * v
	}
	return s2
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "math"

// expNegTab holds 2^{−j/256}, j < 256.
var expNegTab = func() (t [256]float64) {
	for j := range t {
		t[j] = math.Exp2(-float64(j) / 256)
	}
	return t
}()

// The Cody–Waite split of ln 2/256: expNegHi has its 22 low mantissa bits
// zero, so k·expNegHi is exact for k < 2²³ (x < 2²³·ln 2/256 ≈ 22,700).
const (
	expNegHi = 0x1.62e42fec00000p-9
	expNegLo = math.Ln2/256 - expNegHi
)

// expNeg returns e^{−x} for 0 ≤ x (0 past 700) to within a few ulp of
// math.Exp(−x) (TestExpNeg: relative 10⁻¹⁵): x = k·ln 2/256 + r with
// |r| ≤ ln 2/512, e^{−x} = 2^{−⌊k/256⌋}·2^{−(k mod 256)/256}·e^{−r}, the
// last by its Taylor polynomial of degree 4 (remainder r⁵/120 < 4·10⁻¹⁷), the
// power of two by the exponent's bits. The independence move's energy
// takes an exponential a row and this is about twice as fast as
// math.Exp there; pure arithmetic, branch-free but for the range.
func expNeg(x float64) float64 {
	if !(x <= 700) {
		if x > 700 {
			return 0
		}
		return math.NaN()
	}
	k := int(x*(256/math.Ln2) + 0.5)
	fk := float64(k)
	r := (x - fk*expNegHi) - fk*expNegLo
	p := 1 - r*(1-r*(0.5-r*(1.0/6-r*(1.0/24))))
	v := expNegTab[k&255] * p
	return math.Float64frombits(math.Float64bits(v) - uint64(k>>8)<<52)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv

import (
	"math"
	"strconv"
)

// pow10f holds the powers of ten a float64 represents exactly.
var pow10f = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// appendG appends strconv.AppendFloat(b, v, 'g', prec, 64), the same
// bytes (TestAppendGIsStrconv), for finite v and 1 ≤ prec ≤ 15: a draws
// file writes each value so, and strconv's exact digit generation is most
// of the cost of writing it. Where it can, appendG finds the prec digits
// in float64 arithmetic, by gDigits, and lays them out as strconv's 'g'
// does; elsewhere (zero, subnormals, magnitudes beyond 10^±22 of the
// digits, a value too near a rounding tie to settle) it calls strconv.
func appendG(b []byte, v float64, prec int) []byte {
	r, dp, ok := gDigits(v, prec)
	if !ok {
		return strconv.AppendFloat(b, v, 'g', prec, 64)
	}
	// The digits of r, prec of them, two at a time, without trailing
	// zeros (nd).
	var d [16]byte
	i := prec
	for ; i >= 2; i -= 2 {
		q := r / 100
		k := 2 * (r - 100*q)
		d[i-2], d[i-1] = digitPairs[k], digitPairs[k+1]
		r = q
	}
	if i == 1 {
		d[0] = byte('0' + r)
	}
	nd := prec
	for d[nd-1] == '0' {
		nd--
	}
	if v < 0 {
		b = append(b, '-')
	}
	// strconv's formatDigits for 'g' at a fixed precision: %e where the
	// exponent is below −4 or at least the precision (trailing zeros
	// trimmed), else %f.
	eprec := prec
	if eprec > nd && nd >= dp {
		eprec = nd
	}
	if exp := dp - 1; exp < -4 || exp >= eprec {
		b = append(b, d[0])
		if nd > 1 {
			b = append(b, '.')
			b = append(b, d[1:nd]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b = append(b, '-')
			exp = -exp
		} else {
			b = append(b, '+')
		}
		switch {
		case exp < 10:
			return append(b, '0', byte(exp)+'0')
		case exp < 100:
			return append(b, byte(exp/10)+'0', byte(exp%10)+'0')
		}
		return append(b, byte(exp/100)+'0', byte(exp/10)%10+'0', byte(exp%10)+'0')
	}
	p := prec
	if p > dp {
		p = nd
	}
	// %f with max(p − dp, 0) fraction digits: where there are any, p is
	// nd, so they are −dp zeros (dp < 0) and the digits from dp on.
	if dp > 0 {
		m := min(nd, dp)
		b = append(b, d[:m]...)
		for ; m < dp; m++ {
			b = append(b, '0')
		}
	} else {
		b = append(b, '0')
	}
	if p > dp {
		b = append(b, '.')
		for range -dp {
			b = append(b, '0')
		}
		b = append(b, d[max(dp, 0):nd]...)
	}
	return b
}

// digitPairs holds "00" … "99".
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// gMutant, a mutant of TestAppendGIsStrconv, settles values near a
// rounding tie in float64 arithmetic too.
var gMutant bool

// gDigits returns the prec significant decimal digits of |v|, rounded to
// nearest (ties to even) as strconv rounds the exact binary value, as the
// integer r in [10^(prec−1), 10^prec), and the decimal point's position
// dp: |v| ≈ r·10^(dp−prec). ok is false where it cannot be sure.
//
// y = |v|·10^k (or |v|/10^−k), with 10^|k| exact (|k| ≤ 22), is the exact
// product Y rounded once: |y − Y| ≤ ulp(y)/2 ≤ y·2⁻⁵³. k is chosen so that
// 10^(prec−1) ≤ y < 10^prec; the powers of ten there are exact, so Y is on
// the same side of them as y, or Y rounds to the same digits either way
// (Y just below 10^(prec−1) gives 10^prec at the exponent below). Y's
// rounding to an integer is y's wherever the fraction of y is further
// than y·2⁻⁵² from ½; nearer, ok is false.
func gDigits(v float64, prec int) (r uint64, dp int, ok bool) {
	be := int(math.Float64bits(v) >> 52 & 0x7ff)
	if be == 0 || be == 0x7ff || prec < 1 || prec > 15 {
		return 0, 0, false // zero, subnormal, ±Inf, NaN
	}
	a := math.Abs(v)
	// e ≈ ⌊log10 |v|⌋ from the binary exponent, corrected below.
	e := ((be - 1023) * 78913) >> 18
	lo, hi := pow10f[prec-1], pow10f[prec]
	var y float64
	for range 3 {
		k := prec - 1 - e
		switch {
		case k >= 0 && k < len(pow10f):
			y = a * pow10f[k]
		case k < 0 && -k < len(pow10f):
			y = a / pow10f[-k]
		default:
			return 0, 0, false
		}
		switch {
		case y < lo:
			e--
			continue
		case y >= hi:
			e++
			continue
		}
		r = uint64(y)
		f := y - float64(r)
		if d := f - 0.5; d <= y*0x1p-52 && d >= -y*0x1p-52 && !gMutant {
			return 0, 0, false
		}
		// Rounded: y + ½ is exact (y < 2⁵⁰, a multiple of its ulp) and
		// not an integer, so its integer part is r or r + 1 as f says.
		r = uint64(y + 0.5)
		if r == uint64(hi) {
			r /= 10
			e++
		}
		return r, e + 1, true
	}
	return 0, 0, false
}

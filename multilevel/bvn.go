// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "math"

// bvnGL holds Gauss–Legendre nodes x and weights w on [−1, 1] (half of
// each symmetric set) of 6, 12 and 20 points, the rules of Genz's BVNU.
var bvnGL = [3]struct{ x, w []float64 }{
	{
		x: []float64{0.9324695142031522, 0.6612093864662647, 0.2386191860831970},
		w: []float64{0.1713244923791705, 0.3607615730481384, 0.4679139345726904},
	},
	{
		x: []float64{0.9815606342467191, 0.9041172563704750, 0.7699026741943050, 0.5873179542866171, 0.3678314989981802, 0.1252334085114692},
		w: []float64{0.04717533638651177, 0.1069393259953183, 0.1600783285433464, 0.2031674267230659, 0.2334925365383547, 0.2491470458134029},
	},
	{
		x: []float64{0.9931285991850949, 0.9639719272779138, 0.9122344282513259, 0.8391169718222188, 0.7463319064601508,
			0.6360536807265150, 0.5108670019508271, 0.3737060887154196, 0.2277858511416451, 0.07652652113349733},
		w: []float64{0.01761400713915212, 0.04060142980038694, 0.06267204833410906, 0.08327674157670475, 0.1019301198172404,
			0.1181945319615184, 0.1316886384491766, 0.1420961093183821, 0.1491729864726037, 0.1527533871307259},
	},
}

// normCDF returns Φ(x).
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// fastCDF returns Φ(x) as e^{−F(x)} from negLogPhi's table (F's relative
// error below 7·10⁻¹⁶, expNeg's below 10⁻¹⁵, so Φ's absolute error below
// 10⁻¹⁵: F·Φ ≤ 1/e), normCDF outside the table's range: the product
// Φ(−h)Φ(−k) of Sheppard's formula (bvnUpper, bvnTable) and the pairs'
// derivatives (pairLoss) without erfc's two exponentials (TestBVN).
func fastCDF(x float64) float64 {
	if f, _, ok := negLogPhi(x); ok {
		return expNeg(f)
	}
	return normCDF(x)
}

// bvnUpper returns P(X > h, Y > k) for a standard bivariate normal of
// correlation r, |r| ≤ 1, by Genz's method (Statistics and Computing 14,
// 2004, "Numerical computation of rectangular bivariate and trivariate
// normal and t probabilities"; Drezner and Wesolowsky, J. Statist.
// Comput. Simul. 35, 1990): for |r| < 0.925 Sheppard's integral
// Φ(−h)Φ(−k) + (1/2π)∫_0^{asin r} exp(−(h² + k² − 2hk sin θ)/(2cos²θ)) dθ
// by Gauss–Legendre quadrature (6, 12 or 20 points as |r| grows; the
// exponent −(h² + k² − 2hk sin θ)/(2cos²θ) ≤ 0, so expNeg: within 10⁻¹⁵
// of math.Exp, TestExpNeg), above
// it the integral in √(1 − r²) with its singular part taken out
// analytically. Its absolute error is about 10⁻¹⁵ (TestBVN, against
// adaptive quadrature of ∫ φ(x)Φ((k − rx)/√(1 − r²)) dx); the probability
// is clamped to [0, 1]. Deterministic: the same inputs give the same bits.
func bvnUpper(h, k, r float64) float64 {
	switch {
	case math.IsInf(h, 1) || math.IsInf(k, 1):
		return 0
	case math.IsInf(h, -1):
		return normCDF(-k)
	case math.IsInf(k, -1):
		return normCDF(-h)
	case r == 0:
		return normCDF(-h) * normCDF(-k)
	}
	ar := math.Abs(r)
	gl := bvnRule(ar)
	const tp = 2 * math.Pi
	hk := h * k
	var bvn float64
	if ar < 0.925 {
		hs := (h*h + k*k) / 2
		asr := math.Asin(r) / 2
		for i, x := range gl.x {
			for _, xx := range [2]float64{1 - x, 1 + x} {
				sn := math.Sin(asr * xx)
				bvn += gl.w[i] * expNeg((hs-sn*hk)/(1-sn*sn))
			}
		}
		return min(max(bvn*asr/tp+fastCDF(-h)*fastCDF(-k), 0), 1)
	}
	if r < 0 {
		k, hk = -k, -hk
	}
	if ar < 1 {
		as := (1 - r) * (1 + r)
		a := math.Sqrt(as)
		bs := (h - k) * (h - k)
		asr := -(bs/as + hk) / 2
		c := (4 - hk) / 8
		d := (12 - hk) / 80
		if asr > -100 {
			bvn = a * math.Exp(asr) * (1 - c*(bs-as)*(1-d*bs)/3 + c*d*as*as)
		}
		if hk > -100 {
			b := math.Sqrt(bs)
			sp := math.Sqrt(tp) * normCDF(-b/a)
			bvn -= math.Exp(-hk/2) * sp * b * (1 - c*bs*(1-d*bs)/3)
		}
		a /= 2
		var sum float64
		for i, x := range gl.x {
			for _, xx := range [2]float64{1 - x, 1 + x} {
				xs := (a * xx) * (a * xx)
				asr := -(bs/xs + hk) / 2
				if asr <= -100 {
					continue
				}
				sp := 1 + c*xs*(1+5*d*xs)
				rs := math.Sqrt(1 - xs)
				ep := math.Exp(-(hk/2)*xs/((1+rs)*(1+rs))) / rs
				sum += gl.w[i] * math.Exp(asr) * (sp - ep)
			}
		}
		bvn = (a*sum - bvn) / tp
	}
	switch {
	case r > 0:
		bvn += normCDF(-max(h, k))
	case h >= k:
		bvn = -bvn
	default:
		var l float64
		if h < 0 {
			l = normCDF(k) - normCDF(h)
		} else {
			l = normCDF(-h) - normCDF(-k)
		}
		bvn = l - bvn
	}
	return min(max(bvn, 0), 1)
}

// bvnCDF returns Φ₂(h, k; r) = P(X ≤ h, Y ≤ k) for a standard bivariate
// normal of correlation r: bvnUpper(−h, −k, r) by symmetry.
func bvnCDF(h, k, r float64) float64 { return bvnUpper(-h, -k, r) }

// bvnTable is bvnCDF for |r| < 0.925 with the sines of Sheppard's
// integral's nodes kept for the last |r|: the collapsed pairs of a
// marginal scale move's evaluation (pairLoss) share |ρ| where their
// values agree (a random intercept's: v = 1), so a table is built once an
// evaluation and each pair costs the quadrature's exponentials alone. The
// same operations in the same order as bvnUpper's, so the same bits as
// bvnCDF (TestBVN); the zero value is ready.
type bvnTable struct {
	r, asr float64 // |r| and asin(|r|)/2 of the table (r = 0: none)
	n      int
	w, sn  [20]float64
}

// cdf returns bvnCDF(h, k, r).
func (b *bvnTable) cdf(h, k, r float64) float64 {
	ar := math.Abs(r)
	if !(ar < 0.925) || r == 0 || math.IsInf(h, 0) || math.IsInf(k, 0) {
		return bvnCDF(h, k, r)
	}
	if ar != b.r {
		gl := bvnRule(ar)
		b.r, b.asr, b.n = ar, math.Asin(ar)/2, 0
		for i, x := range gl.x {
			for _, xx := range [2]float64{1 - x, 1 + x} {
				b.w[b.n], b.sn[b.n] = gl.w[i], math.Sin(b.asr*xx)
				b.n++
			}
		}
	}
	h, k = -h, -k // bvnUpper(−h, −k, r)
	hk := h * k
	hs := (h*h + k*k) / 2
	asr := b.asr
	if r < 0 {
		asr = -asr // asin and sin are odd: sn(−r) = −sn(r)
	}
	var bvn float64
	for i, sn := range b.sn[:b.n] {
		snk := sn * hk
		if r < 0 {
			snk = -snk
		}
		bvn += b.w[i] * expNeg((hs-snk)/(1-sn*sn))
	}
	return min(max(bvn*asr/(2*math.Pi)+fastCDF(-h)*fastCDF(-k), 0), 1)
}

// bvnRule is Genz's Gauss–Legendre rule for |ρ| = ar: 6 points below 0.3,
// 12 below 0.75, 20 above.
func bvnRule(ar float64) *struct{ x, w []float64 } {
	switch {
	case ar < 0.3:
		return &bvnGL[0]
	case ar < 0.75:
		return &bvnGL[1]
	}
	return &bvnGL[2]
}

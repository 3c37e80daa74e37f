// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "math"

// The grid of negLogPhi's Taylor table: nodes t_j = phiLo + j/phiInv,
// j = 0 … phiNodes − 1, each with the degree-phiDeg Taylor polynomial
// of F(t) = −log Φ(t) about t_j.
const (
	phiLo    = -12 // the lowest node (below it the Mills series: probitLoss)
	phiHi    = 9   // the highest node (above it −log1p(−½erfc))
	phiInv   = 128 // nodes per unit of t
	phiDeg   = 8   // the polynomials' degree
	phiNodes = (phiHi-phiLo)*phiInv + 1
)

// phiTab holds the Taylor coefficients F_n = F⁽ⁿ⁾(t_j)/n!, n ≤ phiDeg,
// of F = −log Φ about each node t_j (phiNodes rows of phiDeg + 1).
var phiTab = phiTable()

// phiTable returns phiTab's coefficients (194 kB). F₀ = −log Φ(t_j) by
// erfc (normTail; −log Φ(t) for t ≤ 0, −log1p(−Q(t)) above); the others
// from λ = φ/Φ = −F′, whose
// ODE λ′ = −λ(t + λ) gives its Taylor coefficients L_n about t_j by the
// recursion (n + 1)L_{n+1} = −Σ_{k≤n} L_k M_{n−k}, M the coefficients of
// t + λ (M₀ = t_j + L₀, M₁ = 1 + L₁, M_m = L_m), and F_{n+1} = −L_n/(n + 1).
// λ(t_j) = φ(t_j)/Φ(t_j), t_j² exact on the grid.
func phiTable() []float64 {
	tab := make([]float64, phiNodes*(phiDeg+1))
	var L, M [phiDeg + 1]float64
	for j := range phiNodes {
		t := phiLo + float64(j)/phiInv
		row := tab[j*(phiDeg+1) : (j+1)*(phiDeg+1)]
		phi := normTail(-t)
		if t > 0 {
			row[0] = -math.Log1p(-normTail(t))
		} else {
			row[0] = -math.Log(phi)
		}
		L[0] = math.Exp(-t*t/2) / math.Sqrt(2*math.Pi) / phi
		M[0] = t + L[0]
		for n := 0; n < phiDeg-1; n++ {
			var s float64
			for k := 0; k <= n; k++ {
				s += L[k] * M[n-k]
			}
			L[n+1] = -s / float64(n+1)
			M[n+1] = L[n+1]
			if n == 0 {
				M[1] = 1 + L[1]
			}
		}
		for n := 1; n <= phiDeg; n++ {
			row[n] = -L[n-1] / float64(n)
		}
	}
	return tab
}

// normTail returns Q(t) = Φ(−t) = ½erfc(t/√2) with the rounding of
// x = t/√2 corrected: x − t/√2 = (x·√2 − t)/√2 exactly by FMA and √2's
// low part, and erfc(t/√2) = erfc(x) + (2/√π)e^{−x²}(x − t/√2) to first
// order (the next term ≈ x·(x − t/√2)², far below an ulp). Without it
// erfc's relative error grows as t²·2⁻⁵³ (10⁻¹⁴ at t = 9: TestNegLogPhi
// measures it); with it, erfc's own (≈ 1 ulp).
func normTail(t float64) float64 {
	const sqrt2Lo = -9.667293313452913e-17 // √2 − float64(√2)
	x := t / math.Sqrt2
	dx := (math.FMA(x, math.Sqrt2, -t) + x*sqrt2Lo) / math.Sqrt2
	return 0.5 * (math.Erfc(x) + 2/math.SqrtPi*math.Exp(-x*x)*dx)
}

// negLogPhi returns F(t) = −log Φ(t) and λ(t) = φ(t)/Φ(t) = −F′(t) for
// phiLo ≤ t ≤ phiHi (ok false outside, or NaN): the nearest node's
// Taylor polynomial in d = t − t_j, |d| ≤ 1/(2·phiInv), and its
// derivative, one pass of Horner's scheme. The truncation is about the
// series' next term F₉d⁹: where F behaves as Q(t) (t ≫ 1), F's
// derivatives as tⁿQ, so ≈ (t·|d|)⁹/9! relative, 2·10⁻¹⁹ at t = 9, |d| =
// 1/256; on the left F's derivatives past the second are bounded and F ≥
// log 2, so less. d is exact (t_j a
// multiple of 2⁻⁷ and |t| ≥ |d|), so the error is the table's F₀
// (normTail's erfc and log, ≈ 2 ulp) and Horner's rounding (≈ 1 ulp, the
// terms past F₀ small): TestNegLogPhi measures at most 7·10⁻¹⁶ relative
// against a math/big reference at 10⁵ points, where the erfc-based
// value's error reaches 10⁻¹⁴ (t/√2's rounding, growing as t²). About a
// quarter of the cost of erfc, log and λ's exponential
// (BenchmarkNegLogPhi); no allocation.
func negLogPhi(t float64) (f, lam float64, ok bool) { return negLogPhiCell(t, 0) }

// negLogPhiCell is negLogPhi with the polynomial of the node cell places
// above the nearest (its d kept), a mutant's (augHooks.phiCell, 32
// cells; TestNegLogPhi's, 1 cell), whose energy is off by about
// |F′|·cell/phiInv.
func negLogPhiCell(t float64, cell int) (f, lam float64, ok bool) {
	if !(t >= phiLo && t <= phiHi) {
		return 0, 0, false
	}
	j := int((t-phiLo)*phiInv + 0.5)
	d := t - (phiLo + float64(j)/phiInv)
	j = min(j+cell, phiNodes-1)
	c := phiTab[j*(phiDeg+1) : j*(phiDeg+1)+phiDeg+1 : j*(phiDeg+1)+phiDeg+1]
	p, dp := c[phiDeg], 0.0
	for n := phiDeg - 1; n >= 0; n-- {
		dp = dp*d + p
		p = p*d + c[n]
	}
	return p, -dp, true
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package polyagamma draws exact Pólya–Gamma variates PG(b, c) for integer
// b ≥ 1 and any real c: the latent variables of the logistic augmentation
// of N. G. Polson, J. G. Scott and J. Windle, "Bayesian inference for
// logistic models using Pólya–Gamma latent variables", JASA 108(504),
// 1339–1349, 2013 (PSW below), under which a logistic likelihood's
// conditional for the coefficients is Gaussian. An approximate draw
// (a truncated sum of gammas, a normal approximation at large b) would
// make a Gibbs step built on it inexact, so every draw here is exact.
//
// PG(1, c) is drawn as J*(1, z)/4 with z = |c|/2 (PSW §4), where
// J*(1, z) has the density cosh(z) e^{−z²x/2} f(x) and f is the density
// of J*(1, 0), an infinite alternating sum f(x) = Σₙ (−1)ⁿ aₙ(x) in two
// forms (PSW §4, from L. Devroye, "On exact simulation
// algorithms for some distributions related to Jacobi theta functions",
// Statistics & Probability Letters 79, 2251–2259, 2009):
//
//	aₙᴸ(x) = π(n+½) (2/(πx))^{3/2} exp(−2(n+½)²/x)   (used for x ≤ t)
//	aₙᴿ(x) = π(n+½) exp(−(n+½)²π²x/2)                (used for x > t)
//
// Both forms are exact for every x > 0; their terms decrease in n for
// x < 4/log 3 and x > log 3/π² respectively, so with the split at
// t = 0.64 (PSW §4; J. Windle, "Forecasting high-dimensional,
// time-varying variance-covariance matrices with high-frequency data and
// sampling Pólya–Gamma random variates for posterior distributions
// derived from logistic likelihoods", PhD thesis, UT Austin, 2013) each
// partial sum is an upper (n even) or lower (n odd) bound on f(x).
// Devroye's alternating series method (L. Devroye, Non-Uniform Random
// Variate Generation, 1986, §IV.5) proposes from the envelope
// e^{−z²x/2} a₀(x), a mixture of an exponential tail on (t, ∞) and an
// inverse-Gaussian IG(1/z, 1) truncated to (0, t), and accepts with the
// partial sums until the uniform is decided: exact, with an acceptance
// probability of at least 0.99919 at every z (PSW §4;
// TestAcceptanceRate). Near t = 0.64 that smallest rate over z is
// largest (0.999198, against 0.99913 at t = 0.6 and 0.99903 at t = 0.7).
// Below z = smallZ the proposal is the untilted envelope a₀(x) instead,
// with the tilt in the acceptance (drawSmall): more proposals, each
// cheaper, exact all the same.
package polyagamma

import (
	"math"
)

// trunc is Devroye's split point t between the left and right series and
// between the envelope's two pieces (PSW §4, Windle's thesis).
const trunc = 0.64

// Draw returns an exact PG(1, c) variate; PG(1, −c) = PG(1, c), and c = 0
// gives PG(1, 0). Its mean is tanh(c/2)/(2c) (1/4 at c = 0;
// TestMoments). c must be finite: at c = ±Inf or NaN the draw is NaN.
// Its uniforms and exponentials come from rng (Source: a concrete stream
// the caller seeds from its own). It allocates nothing (TestDrawAllocs).
func Draw(rng *Source, c float64) float64 {
	return draw(rng, c, exact)
}

// DrawSum returns an exact PG(b, c) variate for integer b ≥ 1, as the sum
// of b independent PG(1, c) variates (PG(b, c) is the b-fold convolution
// of PG(1, c) by PSW's definition), with the envelope's weight computed
// once for the b draws. It panics if b < 1.
func DrawSum(rng *Source, b int, c float64) float64 {
	if b < 1 {
		panic("polyagamma: DrawSum with b < 1")
	}
	z := 0.5 * math.Abs(c)
	if math.IsInf(z, 0) || math.IsNaN(z) {
		return math.NaN()
	}
	var s float64
	if z < smallZ {
		for range b {
			s += drawSmall(rng, z, exact)
		}
		return 0.25 * s
	}
	left := weight(z) // once for the b draws
	for range b {
		s += drawJ(rng, z, left, exact)
	}
	return 0.25 * s
}

// fault selects a deliberate error for the mutant tests; the sampler is
// fault exact. TestMutantsCaught catches faultWeight and faultNoTilt by
// moments and KS, TestAcceptDecision catches faultSign.
type fault int

const (
	exact            fault = iota
	faultWeight            // the envelope's mixture weight computed at t = 0.5, the pieces at t = 0.64
	faultSign              // the series' first correction added instead of subtracted
	faultNoTilt            // the truncated IG drawn as a truncated Lévy, without the e^{−z²x/2} tilt
	faultTabMap            // weight's table read with its interval mapped to [0, 1) instead of [−1, 1]
	faultTabScale          // weight's table value times 0.97
	faultSmallWeight       // drawSmall's mixture weight computed at t = 0.5, the pieces at t = 0.64
	faultSmallRight        // drawSmall's right piece drawn at the tilted rate K and tilted again
	faultReuseRaw          // the acceptance's uniform the piece's uniform itself, not rescaled (reuse)
	faultZigWedge          // Source.ExpFloat64 keeps every point of a layer's wedge, untested
)

// draw is Draw with a fault for the mutant tests.
func draw(rng *Source, c float64, m fault) float64 {
	z := 0.5 * math.Abs(c)
	if math.IsInf(z, 0) || math.IsNaN(z) {
		return math.NaN()
	}
	if z < smallZ && m != faultWeight && m != faultTabMap && m != faultTabScale {
		return 0.25 * drawSmall(rng, z, m)
	}
	var left float64
	switch m {
	case faultWeight:
		left = leftWeight(z, 0.5)
	case faultTabMap, faultTabScale:
		left = weightFault(z, m)
	default:
		left = weight(z)
	}
	return 0.25 * drawJ(rng, z, left, m)
}

// drawJ returns a J*(1, z) variate, given the envelope's left weight.
func drawJ(rng *Source, z, left float64, m fault) float64 {
	// K is the rate of the envelope's right piece: e^{−z²x/2} a₀ᴿ(x) =
	// (π/2) e^{−Kx}.
	k := math.Pi*math.Pi/8 + z*z/2
	for {
		var x, u float64
		if left >= 1 {
			x = truncIG(rng, z, m)
			u = rng.Float64()
		} else if u1 := rng.Float64(); u1 < left {
			x = truncIG(rng, z, m)
			u = reuse(u1, 0, left, m)
		} else {
			x = trunc + rng.ExpFloat64()/k
			u = reuse(u1, left, 1, m)
		}
		if accept(u, x, m) {
			return x
		}
	}
}

// reuse returns the acceptance's uniform from u1, the uniform that chose
// the envelope's piece, which lies in [lo, hi): (u1 − lo)/(hi − lo), a
// uniform on [0, 1) independent of the piece chosen and of x, which is
// drawn from the stream after it (the piece's choice reads only which
// side of the weight u1 fell). One uniform a proposal saved, exact but
// for the rescaled uniform's resolution, below 2⁻⁵¹ (hi − lo ≥ 1/4 in
// drawSmall, and in drawJ wherever the weight is not within 2⁻⁵¹ of 0
// or 1), as the decision u1 < w is up to w's rounding. The mutant
// faultReuseRaw takes u1 itself, which depends on the piece chosen.
func reuse(u1, lo, hi float64, m fault) float64 {
	if m == faultReuseRaw {
		return u1
	}
	return (u1 - lo) / (hi - lo)
}

// Below smallZ, drawSmall proposes from the untilted envelope a₀(x)
// (z = 0), whose mixture weight is the constant weight0, and applies the
// tilt e^{−z²x/2} in the acceptance; above, drawJ proposes from the
// tilted envelope e^{−z²x/2} a₀(x) with the weight at z. Both are exact;
// smallZ is where drawSmall's extra proposals (its acceptance falls with
// z as the envelope's mass M(z)/M(0)) cost more than the weight's
// evaluation and the tilt's separate uniform that it saves
// (BenchmarkDraw).
const smallZ = 0.6

// weight0 is the untilted envelope's left weight leftWeight(0, t), and
// weight0Half the faultSmallWeight mutant's, at t = 0.5.
var (
	weight0     = leftWeight(0, trunc)
	weight0Half = leftWeight(0, 0.5)
)

// drawSmall returns a J*(1, z) variate by proposing x from the untilted
// envelope a₀(x) — a truncated Lévy law on (0, t) with probability
// weight0, t + Exp(π²/8) otherwise — and accepting with probability
// e^{−y} f(x)/a₀(x), y = z²x/2: the target cosh(z) e^{−y} f(x) over the
// proposal's a₀(x), both up to constants, so the draw is exact for any z.
// One uniform u decides both factors: accept iff v = u·e^{y} ≤ f(x)/a₀(x),
// decided by accept's partial sums. e^{y} is bracketed before it is
// computed: 1 + y ≤ e^{y} ≤ 1 + y + y² for 0 ≤ y ≤ 1 (the Taylor
// remainder y²(1/2 + y/6 + …) ≤ y²(e − 2) there), so u(1 + y + y²) ≤
// squeeze accepts and u(1 + y) > 1 rejects (f ≤ a₀) without an
// exponential.
func drawSmall(rng *Source, z float64, m fault) float64 {
	const k0 = math.Pi * math.Pi / 8 // the right piece's untilted rate
	w0 := weight0
	if m == faultSmallWeight {
		w0 = weight0Half
	}
	h := 0.5 * z * z
	for {
		var x, u float64
		if u1 := rng.Float64(); u1 < w0 {
			x = truncLevy(rng)
			u = reuse(u1, 0, w0, m)
		} else {
			if m == faultSmallRight {
				x = trunc + rng.ExpFloat64()/(k0+h)
			} else {
				x = trunc + rng.ExpFloat64()/k0
			}
			u = reuse(u1, w0, 1, m)
		}
		y := h * x
		if m == faultNoTilt {
			y = 0
		}
		if y <= 1 {
			if u*(1+y+y*y) <= squeeze {
				return x
			}
			if u*(1+y) > 1 {
				continue
			}
		}
		v := u * math.Exp(y)
		if v <= 1 && accept(v, x, m) {
			return x
		}
	}
}

// truncLevy returns a draw of the Lévy law (IG with μ = ∞, λ = 1)
// truncated to (0, t): 1/N² with N a standard normal conditioned on
// N > a = 1/√t. N is drawn by the exponential rejection of C. P. Robert,
// "Simulation of truncated normal variables", Statistics and Computing
// 5, 121–125, 1995: N = a + E/λ with E ~ Exp(1), accepted with
// probability e^{−(N−λ)²/2}, i.e. when another Exp(1) exceeds (N−λ)²/2;
// the normal's density over the proposal's is largest at N = λ, so that is
// exact for λ ≥ a, and its acceptance is largest at λ = (a + √(a²+4))/2
// (levyRate): 0.895 at t = 0.64, against 0.723 at G. Marsaglia's λ = a
// (Technometrics 6, 1964).
func truncLevy(rng *Source) float64 {
	for {
		n := levyA + rng.ExpFloat64()/levyRate
		d := n - levyRate
		if rng.ExpFloat64() >= 0.5*d*d {
			return 1 / (n * n)
		}
	}
}

// levyA is truncLevy's a = 1/√t, levyRate its λ = (a + √(a²+4))/2.
var (
	levyA    = 1 / math.Sqrt(trunc)
	levyRate = (levyA + math.Sqrt(levyA*levyA+4)) / 2
)

// The envelope's left weight q/(p+q) (leftWeight) is a smooth function of
// z alone at the sampler's t, needed once per draw at a new z: weight
// reads it from a table of polynomial interpolants built at start-up from
// leftWeight, instead of leftWeight's two erfc and two exp. The table has
// weightPer intervals per unit z on [0, weightZ), each with the
// interpolant of degree weightDeg at its weightDeg+1 Chebyshev nodes,
// stored as a polynomial in s ∈ [−1, 1] across the interval and evaluated
// by Estrin's scheme (a shorter chain of dependent operations than
// Horner's or Clenshaw's). The table's weight is within 4.5·10⁻¹⁶ of the
// weight computed by mpmath to 40 digits, in w and in 1 − w
// (TestWeightTable, against testdata/weight_ref.txt): the decision
// Float64() < w is the exact weight's but for a probability of about
// 10⁻¹⁶ per draw, as with any float64 form of w. Beyond weightZ,
// 1 − w < 8·10⁻¹⁸ (1 − w decreases in z, TestWeightTable): the weight
// rounds to 1, and the left piece is always proposed, as Float64() < 1
// always is; drawJ then skips the uniform.
const (
	weightPer = 8
	weightDeg = 7 // weight's Estrin scheme is written for degree 7
	weightZ   = 12
)

// weightTab holds, per interval, the coefficients of the weight's
// interpolant as a polynomial in s ∈ [−1, 1] across the interval,
// constant term first.
var weightTab = buildWeightTab()

// buildWeightTab returns weightTab. Each interval's Chebyshev coefficients
// come from the discrete cosine transform of the weight at the Chebyshev
// nodes less its value at the interval's centre, and are converted to
// powers of s before the centre's value is added back to the constant
// term: the coefficients' rounding then scales with the weight's variation
// over the interval rather than with the weight itself, which keeps the
// interpolant within about one ulp of 1 where the weight is near 1.
func buildWeightTab() *[weightZ * weightPer][weightDeg + 1]float64 {
	const m = weightDeg + 1
	tab := new([weightZ * weightPer][m]float64)
	var f, c, tPrev, tCur, tNext [m]float64
	for i := range tab {
		fc := leftWeight((float64(i)+0.5)/weightPer, trunc)
		for j := range m {
			x := math.Cos(math.Pi * (float64(j) + 0.5) / m)
			f[j] = leftWeight((float64(i)+(x+1)/2)/weightPer, trunc) - fc
		}
		for k := range m {
			var s float64
			for j := range m {
				s += f[j] * math.Cos(math.Pi*float64(k)*(float64(j)+0.5)/m)
			}
			c[k] = 2 * s / m
		}
		c[0] /= 2
		// Σ c_k T_k(s) in powers of s, T_{k+1} = 2s·T_k − T_{k−1}.
		p := &tab[i]
		tPrev, tCur = [m]float64{0: 1}, [m]float64{1: 1}
		p[0] = c[0]
		p[1] = c[1]
		for k := 2; k < m; k++ {
			tNext = [m]float64{}
			for q := range m - 1 {
				tNext[q+1] = 2 * tCur[q]
			}
			for q := range m {
				tNext[q] -= tPrev[q]
				p[q] += c[k] * tNext[q]
			}
			tPrev, tCur = tCur, tNext
		}
		p[0] += fc
	}
	return tab
}

// weight returns the envelope's left weight q/(p+q) at the sampler's t
// for z ≥ 0 (leftWeight): by the table weightTab below weightZ, 1 above.
func weight(z float64) float64 {
	if !(z < weightZ) {
		return 1
	}
	u := z * weightPer
	i := int(u)
	return estrin7(&weightTab[i], 2*(u-float64(i))-1)
}

// estrin7 returns Σ_k c_k s^k for degree 7 by Estrin's scheme.
func estrin7(c *[weightDeg + 1]float64, s float64) float64 {
	s2 := s * s
	s4 := s2 * s2
	p01 := c[0] + c[1]*s
	p23 := c[2] + c[3]*s
	p45 := c[4] + c[5]*s
	p67 := c[6] + c[7]*s
	return (p01 + p23*s2) + (p45+p67*s2)*s4
}

// weightFault is weight with the table's faults for the mutant tests.
func weightFault(z float64, m fault) float64 {
	if !(z < weightZ) {
		return 1
	}
	u := z * weightPer
	i := int(u)
	s := 2*(u-float64(i)) - 1
	if m == faultTabMap {
		s = u - float64(i)
	}
	w := estrin7(&weightTab[i], s)
	if m == faultTabScale {
		w *= 0.97
	}
	return w
}

// leftWeight returns q/(p+q), the envelope's mass on (0, t) over its
// total, with the masses of PSW §4 (up to the common factor cosh z):
//
//	p = ∫_t^∞ e^{−z²x/2} a₀ᴿ(x) dx = π/(2K) e^{−Kt},  K = π²/8 + z²/2,
//	q = ∫_0^t e^{−z²x/2} a₀ᴸ(x) dx = 2 e^{−z} P(IG(1/z, 1) < t),
//
// and the inverse-Gaussian distribution function
// P(IG(μ, 1) < t) = Φ((t/μ − 1)/√t) + e^{2/μ} Φ(−(t/μ + 1)/√t), taken in
// logarithms so that no factor overflows at large z (at z = 0 it is the
// Lévy distribution's erfc(1/√(2t))).
//
// Below z = 40 (where e^{Kt} < e^{520} and Φ(−(tz+1)/√t) > 10⁻²⁴⁰, both
// far from overflow and underflow) it takes q/p directly, with two
// exponentials and two erfc; above, in logarithms (logMasses).
// TestLeftWeightForms compares the two forms.
func leftWeight(z, t float64) float64 {
	if z < 40 {
		k := math.Pi*math.Pi/8 + z*z/2
		st := math.Sqrt(t)
		ez := math.Exp(z)
		phiA := 0.5 * math.Erfc((1-t*z)/(st*math.Sqrt2))
		phiB := 0.5 * math.Erfc((t*z+1)/(st*math.Sqrt2))
		// q/p = (4K/π) e^{Kt} (e^{−z} Φ(a) + e^{z} Φ(b)).
		r := 4 * k / math.Pi * math.Exp(k*t) * (phiA/ez + phiB*ez)
		return r / (1 + r)
	}
	logp, logq := logMasses(z, t)
	return 1 / (1 + math.Exp(logp-logq))
}

// logMasses returns log p and log q of leftWeight, with no overflow or
// underflow at any finite z.
func logMasses(z, t float64) (logp, logq float64) {
	k := math.Pi*math.Pi/8 + z*z/2
	logp = math.Log(math.Pi/(2*k)) - k*t
	st := math.Sqrt(t)
	a := (t*z - 1) / st
	b := -(t*z + 1) / st
	logq = math.Ln2 - z + math.Log(math.Exp(logPhi(a))+math.Exp(2*z+logPhi(b)))
	return logp, logq
}

// truncIG returns a draw of IG(μ = 1/z, λ = 1) truncated to (0, t), the
// envelope's left piece (PSW's supplement). For μ > t it draws the
// truncated Lévy law (z = 0; truncLevy) and accepts
// with probability e^{−z²x/2}, the tilt from Lévy to IG; for μ ≤ t it
// draws IG(μ, 1) by J. R. Michael, W. R. Schucany and R. W. Haas,
// "Generating random variates using transformations with multiple
// roots", The American Statistician 30, 1976, until the draw is below t.
func truncIG(rng *Source, z float64, m fault) float64 {
	if z*trunc < 1 { // μ = 1/z > t
		for {
			x := truncLevy(rng)
			// Accept with probability e^{−y}, y = z²x/2, first by the
			// squeeze e^{−y} ≥ 1 − y.
			y := 0.5 * z * z * x
			if u := rng.Float64(); m == faultNoTilt || u <= 1-y || u <= math.Exp(-y) {
				return x
			}
		}
	}
	mu := 1 / z
	for {
		y := rng.NormFloat64()
		w := 0.5 * mu * y * y
		// The smaller root μ + μ²y²/2 − (μ/2)√(4μy² + μ²y⁴), written
		// μ/(1 + w + √(w(2+w))) to keep its precision at large μy².
		x := mu / (1 + w + math.Sqrt(w*(2+w)))
		if rng.Float64()*(mu+x) > mu {
			x = mu * mu / x
		}
		if x < trunc {
			return x
		}
	}
}

// squeeze is accept's bound on the first partial sum.
var squeeze = 1 - 3*max(math.Exp(-4/trunc), math.Exp(-math.Pi*math.Pi*trunc)) - 1e-12

// accept reports whether the proposal x is accepted given the uniform u:
// whether u·a₀(x) ≤ f(x), decided by the partial sums of f's series in
// units of a₀(x) (a draw of x from the envelope and of u·a₀(x) is the
// alternating series method of Devroye 1986, §IV.5). The ratios are
//
//	aₙᴸ/a₀ᴸ = (2n+1) exp(−2n(n+1)/x),  aₙᴿ/a₀ᴿ = (2n+1) exp(−n(n+1)π²x/2),
//
// so no term underflows at small x. Before any term, the squeeze: a₁/a₀
// is largest at x = t on either side, 3e^{−4/t} on the left and
// 3e^{−π²t} on the right, so u ≤ 1 − 3 max(e^{−4/t}, e^{−π²t}) (less a
// margin of 10⁻¹² for rounding) implies u ≤ 1 − a₁/a₀ and acceptance:
// the same decision as the series', without an exponential, for about
// 99.4% of proposals (TestAcceptDecision, TestAcceptRandom).
func accept(u, x float64, m fault) bool {
	if u <= squeeze {
		return true
	}
	s := 1.0
	for n := 1; ; n++ {
		nn := float64(n * (n + 1))
		var r float64
		if x <= trunc {
			r = float64(2*n+1) * math.Exp(-2*nn/x)
		} else {
			r = float64(2*n+1) * math.Exp(-nn*math.Pi*math.Pi*x/2)
		}
		if n&1 == 1 {
			if m == faultSign && n == 1 {
				s += r
			} else {
				s -= r
			}
			if u <= s {
				return true
			}
		} else {
			s += r
			if u > s {
				return false
			}
		}
	}
}

// logPhi returns log Φ(x) for the standard normal distribution function
// Φ, with full relative precision for x ≪ 0: by erfc down to x = −25
// and, below, by the continued fraction of Mills's ratio
// Φ(x)/φ(x) = 1/(|x| + 1/(|x| + 2/(|x| + 3/(|x| + …)))) (Abramowitz and
// Stegun 26.2.14), whose 40 levels are exact to rounding for |x| ≥ 25.
func logPhi(x float64) float64 {
	if x > -25 {
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	return logPhiTail(-x)
}

// logPhiTail returns log Φ(−a) for a ≥ 25 by the continued fraction of
// logPhi (TestLogPhiTail compares it with erfc where both are exact).
func logPhiTail(a float64) float64 {
	f := a
	for k := 40; k >= 1; k-- {
		f = a + float64(k)/f
	}
	return -0.5*a*a - 0.5*math.Log(2*math.Pi) - math.Log(f)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package polyagamma

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// testCs are the tilts c of the moment and distribution tests: PG(1, 0);
// the envelope's truncated Lévy branch (z = c/2 < 1/t = 1.5625) up to
// c = 3, where its tilt e^{−z²x/2} is strongest; and the
// inverse-Gaussian branch out to c = 500, where PG(1, c) concentrates
// near 1/(2c). The weight's table (weight) serves c < 2·weightZ = 24,
// and c = 12 and 23.9 are in its upper range; above, the weight is 1.
var testCs = []float64{0, 0.1, 1, 3, 5, 12, 23.9, 50, 500, 1.19}

// pgMean is E PG(1, c) = tanh(c/2)/(2c), 1/4 at c = 0 (PSW).
func pgMean(c float64) float64 {
	if c < 1e-4 {
		return 0.25 - c*c/96
	}
	return math.Tanh(c/2) / (2 * c)
}

// pgVar is Var PG(1, c) = (sinh c − c)/(4c³ cosh²(c/2)) (from
// the cumulant generating function), written
// (2 tanh(c/2) − c sech²(c/2))/(4c³) for large c and by the series
// (sinh c − c)/c³ = Σ_{j≥1} c^{2j−2}/(2j+1)! for small c; 1/24 at c = 0.
func pgVar(c float64) float64 {
	sech := 1 / math.Cosh(c/2)
	if c < 0.5 {
		s, term := 0.0, 1.0/6
		for j := 1; j < 12; j++ {
			s += term
			term *= c * c / float64((2*j+2)*(2*j+3))
		}
		return s * sech * sech / 4
	}
	return (2*math.Tanh(c/2) - c*sech*sech) / (4 * c * c * c)
}

// cumulant returns the r-th cumulant of PG(1, c) from its representation
// PG(1, c) = (1/(2π²)) Σ_k g_k/d_k, d_k = (k−½)² + c²/(4π²), g_k ~ Exp(1)
// independent (PSW's definition): κ_r = (r−1)!/(2π²)^r Σ_k d_k^{−r}. The sum
// runs to k = 10⁶ and adds its tail by the midpoint rule,
// Σ_{k>N} d_k^{−r} ≈ ∫_N^∞ (u² + a²)^{−r} du with a = c/(2π).
func cumulant(r int, c float64) float64 {
	const n = 1000000
	a2 := c * c / (4 * math.Pi * math.Pi)
	var s float64
	for k := n; k >= 1; k-- {
		u := float64(k) - 0.5
		inv := 1 / (u*u + a2)
		p := inv
		for range r - 1 {
			p *= inv
		}
		s += p
	}
	// Tail integral by Simpson's rule on u = N/v, v ∈ (0, 1]:
	// ∫_N^∞ (u²+a²)^{−r} du = ∫_0^1 N v^{−2} ((N/v)² + a²)^{−r} dv.
	const m = 2000
	f := func(v float64) float64 {
		if v == 0 {
			if r == 1 {
				return 1 / float64(n)
			}
			return 0
		}
		u := float64(n) / v
		return float64(n) / (v * v) * math.Pow(u*u+a2, -float64(r))
	}
	var tail float64
	for i := 0; i <= m; i++ {
		w := 2.0
		if i == 0 || i == m {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		tail += w * f(float64(i)/m)
	}
	s += tail / (3 * m)
	fact := 1.0
	for j := 2; j < r; j++ {
		fact *= float64(j)
	}
	return fact * s / math.Pow(2*math.Pi*math.Pi, float64(r))
}

// TestClosedForms checks pgMean and pgVar against the first two
// cumulants of the sum-of-exponentials representation.
func TestClosedForms(t *testing.T) {
	for _, c := range append([]float64{1e-6, 0.3, 0.7}, testCs...) {
		if m, k1 := pgMean(c), cumulant(1, c); math.Abs(m-k1) > 1e-9*m {
			t.Errorf("c = %g: mean %.15g, series %.15g", c, m, k1)
		}
		if v, k2 := pgVar(c), cumulant(2, c); math.Abs(v-k2) > 1e-9*v {
			t.Errorf("c = %g: variance %.15g, series %.15g", c, v, k2)
		}
	}
}

// momentZ draws n variates of draw at c and returns the z-scores of the
// sample mean against pgMean and of the sample variance against pgVar;
// the variance's standard error is √((κ₄ + 2κ₂²)/n) (μ₄ − σ⁴ with
// μ₄ = κ₄ + 3κ₂²). Deviations from the mean are accumulated.
func momentZ(rng *Source, c float64, n int, m fault) (zMean, zVar float64) {
	mu, v := pgMean(c), pgVar(c)
	var s, s2 float64
	for range n {
		d := draw(rng, c, m) - mu
		s += d
		s2 += d * d
	}
	fn := float64(n)
	dm := s / fn
	sv := s2/fn - dm*dm
	k4 := cumulant(4, c)
	zMean = dm / math.Sqrt(v/fn)
	zVar = (sv - v) / math.Sqrt((k4+2*v*v)/fn)
	return zMean, zVar
}

// TestMoments: the mean and variance of 200,000 draws at each c in testCs
// within 4.5 standard errors of tanh(c/2)/(2c) and
// (sinh c − c)/(4c³ cosh²(c/2)).
func TestMoments(t *testing.T) {
	for i, c := range testCs {
		rng := testSource(uint64(i), 41)
		zm, zv := momentZ(rng, c, 200000, exact)
		t.Logf("c = %g: z(mean) = %.2f, z(var) = %.2f", c, zm, zv)
		if math.Abs(zm) > 4.5 || math.Abs(zv) > 4.5 {
			t.Errorf("c = %g: z(mean) = %.2f, z(var) = %.2f", c, zm, zv)
		}
	}
}

// TestNegativeAndHugeC: PG(1, −c) is PG(1, c), and at c = 10⁶ and 10¹²
// (where the envelope's weights underflow unless taken in logarithms) the
// draws are finite, positive and have the mean 1/(2c) within 4.5
// standard errors.
func TestNegativeAndHugeC(t *testing.T) {
	for i, c := range []float64{-3, 1e6, 1e12} {
		rng := testSource(uint64(i), 43)
		const n = 50000
		mu, v := pgMean(math.Abs(c)), pgVar(math.Abs(c))
		var s float64
		for range n {
			x := Draw(rng, c)
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("c = %g: draw %v", c, x)
			}
			s += x - mu
		}
		if z := s / n / math.Sqrt(v/n); math.Abs(z) > 4.5 {
			t.Errorf("c = %g: z(mean) = %.2f", c, z)
		}
	}
	if x := Draw(testSource(1, 1), math.NaN()); !math.IsNaN(x) {
		t.Errorf("Draw at NaN = %v, want NaN", x)
	}
}

// TestDrawSum: PG(3, 1) has mean 3·E PG(1, 1) and variance 3·Var PG(1, 1)
// (within 4.5 standard errors over 100,000 draws), DrawSum with b = 1
// gives Draw's draws, and b < 1 panics.
func TestDrawSum(t *testing.T) {
	const b, c, n = 3, 1.0, 100000
	rng := testSource(5, 41)
	mu, v := b*pgMean(c), b*pgVar(c)
	var s, s2 float64
	for range n {
		d := DrawSum(rng, b, c) - mu
		s += d
		s2 += d * d
	}
	dm := s / n
	sv := s2/n - dm*dm
	k4 := b * cumulant(4, c)
	zm := dm / math.Sqrt(v/n)
	zv := (sv - v) / math.Sqrt((k4+2*v*v)/n)
	if math.Abs(zm) > 4.5 || math.Abs(zv) > 4.5 {
		t.Errorf("PG(3, 1): z(mean) = %.2f, z(var) = %.2f", zm, zv)
	}
	// DrawSum with b = 1 is Draw, draw for draw, from the same stream.
	r1, r2 := testSource(9, 9), testSource(9, 9)
	for i := range 1000 {
		c := float64(i) * 0.05
		if a, b := DrawSum(r1, 1, c), Draw(r2, c); a != b {
			t.Fatalf("c = %g: DrawSum(1) = %v, Draw = %v", c, a, b)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("DrawSum with b = 0 did not panic")
		}
	}()
	DrawSum(rng, 0, c)
}

// logCosh is log cosh z for z ≥ 0 without overflow.
func logCosh(z float64) float64 {
	return z + math.Log1p(math.Exp(-2*z)) - math.Ln2
}

// cdfLeft is P(J*(1, z) ≤ x) by the left series integrated term by term:
// cosh(z) ∫_0^x e^{−z²s/2} aₙᴸ(s) ds = 2 cosh(z) e^{−(2n+1)z}
// P(IG((2n+1)/z, (2n+1)²) ≤ x), with the inverse-Gaussian distribution
// function Φ((xz − m)/√x) + e^{2mz} Φ(−(xz + m)/√x), m = 2n+1.
func cdfLeft(x, z float64) float64 {
	lc := logCosh(z)
	sx := math.Sqrt(x)
	var s float64
	for n := 0; n < 200; n++ {
		m := float64(2*n + 1)
		term := 2 * (math.Exp(lc-m*z+logPhi((x*z-m)/sx)) + math.Exp(lc+m*z+logPhi(-(x*z+m)/sx)))
		if n&1 == 1 {
			s -= term
		} else {
			s += term
		}
		if term < 1e-20 {
			break
		}
	}
	return s
}

// survRight is P(J*(1, z) > x) by the right series integrated term by
// term: cosh(z) Σₙ (−1)ⁿ π(n+½) e^{−Kₙx}/Kₙ, Kₙ = (n+½)²π²/2 + z²/2.
func survRight(x, z float64) float64 {
	lc := logCosh(z)
	var s float64
	for n := 0; n < 100000; n++ {
		h := float64(n) + 0.5
		kn := h*h*math.Pi*math.Pi/2 + z*z/2
		term := math.Pi * h * math.Exp(lc-kn*x) / kn
		if n&1 == 1 {
			s -= term
		} else {
			s += term
		}
		if term < 1e-20 {
			break
		}
	}
	return s
}

// cdfPG is P(PG(1, c) ≤ y) = P(J*(1, c/2) ≤ 4y), by the left series up to
// x = 4y = 1 and the right one above.
func cdfPG(y, c float64) float64 {
	x, z := 4*y, math.Abs(c)/2
	if x <= 0 {
		return 0
	}
	if x <= 1 {
		return cdfLeft(x, z)
	}
	return 1 - survRight(x, z)
}

// TestSeriesCDF checks the reference distribution function the KS test
// uses: its two series agree where both converge (x from 0.2 to 3), it
// rises from 0 to 1, and ∫_0^∞ P(PG(1, c) > y) dy is the mean pgMean(c).
func TestSeriesCDF(t *testing.T) {
	for _, c := range testCs {
		z := c / 2
		for _, x := range []float64{0.2, 0.5, 0.64, 1, 2, 3} {
			l, r := cdfLeft(x, z), 1-survRight(x, z)
			if math.Abs(l-r) > 1e-12 {
				t.Errorf("c = %g, x = %g: left series %.15g, right %.15g", c, x, l, r)
			}
		}
		// The mean by the trapezoidal rule on a log grid over y around
		// the scale of PG(1, c).
		mu := pgMean(c)
		lo, hi := math.Log(mu*1e-4), math.Log(mu*200)
		const m = 40000
		h := (hi - lo) / m
		mean := mu * 1e-4 // P(PG > y) ≈ 1 below the grid
		prev := -1.0
		for i := 0; i <= m; i++ {
			y := math.Exp(lo + float64(i)*h)
			f := cdfPG(y, c)
			if f < prev-1e-14 || f < -1e-14 || f > 1+1e-14 {
				t.Fatalf("c = %g: F(%g) = %g after %g", c, y, f, prev)
			}
			prev = f
			w := 1.0
			if i == 0 || i == m {
				w = 0.5
			}
			mean += w * h * y * (1 - f)
		}
		if math.Abs(mean-mu) > 1e-6*mu {
			t.Errorf("c = %g: ∫(1 − F) = %.10g, mean %.10g", c, mean, mu)
		}
	}
}

// ksP returns the one-sample Kolmogorov–Smirnov statistic of xs against
// cdf and its asymptotic p-value with Stephens's correction
// λ = (√n + 0.12 + 0.11/√n) D. xs is sorted in place.
func ksP(xs []float64, cdf func(float64) float64) (d, p float64) {
	slices.Sort(xs)
	n := float64(len(xs))
	for i, x := range xs {
		f := cdf(x)
		d = max(d, f-float64(i)/n, float64(i+1)/n-f)
	}
	lam := (math.Sqrt(n) + 0.12 + 0.11/math.Sqrt(n)) * d
	for k := 1; k <= 100; k++ {
		sign := 1.0
		if k%2 == 0 {
			sign = -1
		}
		p += 2 * sign * math.Exp(-2*float64(k*k)*lam*lam)
	}
	return d, min(max(p, 0), 1)
}

// ksDraws draws n variates at c and returns the KS statistic and p-value
// against the series distribution function cdfPG.
func ksDraws(rng *Source, c float64, n int, m fault) (d, p float64) {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = draw(rng, c, m)
	}
	return ksP(xs, func(y float64) float64 { return cdfPG(y, c) })
}

// TestKS: 20,000 draws at each c in testCs against the exact series
// distribution function; each p-value above 10⁻⁴.
func TestKS(t *testing.T) {
	for i, c := range testCs {
		rng := testSource(uint64(i), 42)
		d, p := ksDraws(rng, c, 20000, exact)
		t.Logf("c = %g: D = %.4f, p = %.3g", c, d, p)
		if p < 1e-4 {
			t.Errorf("c = %g: KS D = %.4f, p = %.3g", c, d, p)
		}
	}
}

// TestMutantsCaught: each deliberate fault of the sampler fails the
// moment or KS checks at some c in testCs by a wide margin (|z| > 6 or
// p < 10⁻⁸), with the same sample sizes as TestMoments and TestKS; the c
// are tried in order until one catches it.
func TestMutantsCaught(t *testing.T) {
	for _, m := range []fault{faultWeight, faultNoTilt, faultTabMap, faultTabScale, faultSmallWeight, faultSmallRight, faultReuseRaw} {
		var worstZ, worstP = 0.0, 1.0
		where := ""
		for i, c := range testCs {
			rng := testSource(uint64(i), 44)
			zm, zv := momentZ(rng, c, 200000, m)
			_, p := ksDraws(rng, c, 20000, m)
			if z := max(math.Abs(zm), math.Abs(zv)); z > worstZ {
				worstZ = z
				where = fmt.Sprintf("c = %g: z(mean) = %.1f, z(var) = %.1f", c, zm, zv)
			}
			worstP = min(worstP, p)
			if worstZ > 6 || worstP < 1e-8 {
				break // caught
			}
		}
		t.Logf("mutant %d: largest |z| at %s; smallest KS p = %.3g", m, where, worstP)
		if worstZ <= 6 && worstP >= 1e-8 {
			t.Errorf("mutant %d not caught: largest |z| %.2f (%s), smallest KS p %.3g", m, worstZ, where, worstP)
		}
	}
}

// TestWeightTable: the table's weight (weight) is within 4.5·10⁻¹⁶ of
// the envelope's left weight computed by mpmath at 60 digits
// (testdata/weight_ref.py: z = 0 to 40 in steps of 1/80 and 400
// pseudo-random z), in w and in 1 − w; within 4.5·10⁻¹⁶ of leftWeight at
// 200,000 z in [0, weightZ] (both within rounding of the exact weight);
// and the exact 1 − w decreases in z along the reference grid and is below
// 2⁻⁵⁴ (half an ulp of 1) from weightZ on, so the weight rounds to 1 there.
func TestWeightTable(t *testing.T) {
	ref := readWeightRef(t)
	var worst, wz float64
	prev, prevZ := 1.0, -1.0
	for _, r := range ref {
		z, w, cw := r[0], r[1], r[2]
		got := weight(z)
		if d := max(math.Abs(got-w), math.Abs((1-got)-cw)); d > worst {
			worst, wz = d, z
		}
		if z >= weightZ && cw >= 0x1p-54 {
			t.Errorf("z = %g: 1 − w = %.3g, not below 2⁻⁵⁴", z, cw)
		}
		if z > prevZ {
			if cw >= prev && cw > 0 {
				t.Errorf("1 − w does not decrease at z = %g: %.17g after %.17g", z, cw, prev)
			}
			prev, prevZ = cw, z
		}
	}
	t.Logf("largest error against mpmath: %.3g at z = %g", worst, wz)
	if worst > 4.5e-16 {
		t.Errorf("weight off the mpmath reference by %.3g at z = %g", worst, wz)
	}
	worst = 0
	for i := range 200001 {
		z := float64(i) * weightZ / 200000
		if d := math.Abs(weight(z) - leftWeight(z, trunc)); d > worst {
			worst, wz = d, z
		}
	}
	t.Logf("largest difference from leftWeight: %.3g at z = %g", worst, wz)
	if worst > 4.5e-16 {
		t.Errorf("weight off leftWeight by %.3g at z = %g", worst, wz)
	}
}

// readWeightRef returns the rows (z, w, 1 − w) of testdata/weight_ref.txt.
func readWeightRef(t *testing.T) [][3]float64 {
	b, err := os.ReadFile("testdata/weight_ref.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out [][3]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 3 {
			t.Fatalf("weight_ref.txt: bad line %q", line)
		}
		var r [3]float64
		for i := range r {
			if r[i], err = strconv.ParseFloat(fs[i], 64); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	if len(out) < 3000 {
		t.Fatalf("weight_ref.txt: %d rows", len(out))
	}
	return out
}

// acceptRate returns 1/(cosh(z)(p+q)), with p and q of leftWeight.
func acceptRate(z float64) float64 {
	logp, logq := logMasses(z, trunc)
	hi, lo := max(logp, logq), min(logp, logq)
	return math.Exp(-logCosh(z) - hi - math.Log1p(math.Exp(lo-hi)))
}

// seriesRatio returns f(x)/a₀(x) for x on the left of t by the right
// series and on the right of t by the left one (each form of f is exact
// at every x > 0, PSW §4): the opposite forms from accept's, so
// that the two computations share no expression. Terms are summed until
// below 10⁻²⁰ of a₀.
func seriesRatio(x float64) float64 {
	var f, a0 float64
	for n := 0; n < 100000; n++ {
		h := float64(n) + 0.5
		var a float64
		if x <= trunc {
			a = math.Pi * h * math.Exp(-h*h*math.Pi*math.Pi*x/2)
		} else {
			a = math.Pi * h * math.Pow(2/(math.Pi*x), 1.5) * math.Exp(-2*h*h/x)
		}
		if n == 0 {
			a0 = a
		}
		if n&1 == 1 {
			f -= a
		} else {
			f += a
		}
		if a < 1e-20*a0 && n > 2 {
			break
		}
	}
	// a₀ in accept's form.
	if x <= trunc {
		return f / (math.Pi / 2 * math.Pow(2/(math.Pi*x), 1.5) * math.Exp(-0.5/x))
	}
	return f / (math.Pi / 2 * math.Exp(-math.Pi*math.Pi*x/8))
}

// TestAcceptDecision: accept(u, x) decides u ≤ f(x)/a₀(x) exactly — it
// accepts at u = ρ(x) − 10⁻⁹ and rejects at ρ(x) + 10⁻⁹, with ρ from
// seriesRatio — at x from 0.05 to 4 (around t = 0.64 the first
// correction a₁/a₀ is largest, about 0.006, and a₂/a₀ about 4·10⁻⁸). The
// mutant faultSign (the first correction added instead of subtracted)
// draws from the envelope, within total variation 1 − 0.9992 of PG(1, c)
// and so below what TestMoments and TestKS resolve (about 4·10⁷ draws
// would be needed); this test catches it.
func TestAcceptDecision(t *testing.T) {
	caught := false
	for i := 0; i <= 400; i++ {
		x := 0.05 + float64(i)*(4-0.05)/400
		rho := seriesRatio(x)
		if !(rho > 0 && rho <= 1+1e-12) {
			t.Fatalf("x = %g: f/a₀ = %g", x, rho)
		}
		if !accept(rho-1e-9, x, exact) || accept(rho+1e-9, x, exact) {
			t.Errorf("x = %g: accept around f/a₀ = %.12f: %v below, %v above", x, rho, accept(rho-1e-9, x, exact), accept(rho+1e-9, x, exact))
		}
		if accept(rho+1e-9, x, faultSign) {
			caught = true
		}
	}
	if !caught {
		t.Errorf("the sign mutant decided as the sampler at every x")
	}
	// At the split the two forms of ρ agree with accept's (x = t uses the
	// left form, just above it the right).
	for _, x := range []float64{trunc, math.Nextafter(trunc, 1)} {
		if !accept(seriesRatio(x)-1e-9, x, exact) || accept(seriesRatio(x)+1e-9, x, exact) {
			t.Errorf("x = %v: accept wrong at the split", x)
		}
	}
}

// TestAcceptRandom: at 200,000 random pairs (x, u) — x log-uniform on
// (0.1, 4), u uniform — accept(u, x) decides u ≤ f(x)/a₀(x), ρ from
// seriesRatio, wherever u is more than 10⁻¹⁰ from ρ: the squeeze and the
// series in accept give the series' decision. (Outside (0.1, 4) the
// opposite form's terms are far larger than f, and its cancellation
// would blur ρ by more than that margin; there a₁/a₀ < 10⁻¹⁶ anyway.)
func TestAcceptRandom(t *testing.T) {
	rng := testSource(3, 46)
	for range 200000 {
		x := 0.1 * math.Exp(rng.Float64()*math.Log(40))
		u := rng.Float64()
		rho := seriesRatio(x)
		if math.Abs(u-rho) < 1e-10 {
			continue
		}
		if got := accept(u, x, exact); got != (u <= rho) {
			t.Fatalf("x = %v, u = %v: accept %v, f/a₀ = %.15g", x, u, got, rho)
		}
	}
}

// TestLeftWeightForms: leftWeight's direct form (z < 40) agrees with the
// logarithmic one to 10⁻¹³ relative in the weight, and in 1 − weight to
// 10⁻¹³ relative plus 4·10⁻¹⁶ (the rounding of 1 − w near w = 1), at
// z from 0 to 40 in steps of 0.01, at the sampler's t and the mutant's.
func TestLeftWeightForms(t *testing.T) {
	for _, tt := range []float64{trunc, 0.5} {
		for i := 0; i < 4000; i++ {
			z := float64(i) * 0.01
			logp, logq := logMasses(z, tt)
			want := 1 / (1 + math.Exp(logp-logq))
			wantC := 1 / (1 + math.Exp(logq-logp))
			got := leftWeight(z, tt)
			if math.Abs(got-want) > 1e-13*want || math.Abs((1-got)-wantC) > 1e-13*wantC+4e-16 {
				t.Errorf("t = %g, z = %g: direct %.17g, logarithmic %.17g", tt, z, got, want)
			}
		}
	}
}

// TestAcceptanceRate: the outer accept–reject step accepts with
// probability 1/(cosh(z)(p+q)), the target's mass over the envelope's
// (the target's e^{−z²x/2} f(x) integrates to 1/cosh z); over z from 0
// to 20 in steps of 0.001 and at z = 100 and 10⁴ it is at least 0.99919,
// PSW's bound (its minimum, 0.999198, is near z = 1.38), so a draw
// costs about one proposal.
func TestAcceptanceRate(t *testing.T) {
	zs := []float64{100, 1e4}
	for i := 0; i <= 20000; i++ {
		zs = append(zs, float64(i)*0.001)
	}
	for _, z := range zs {
		if rate := acceptRate(z); rate < 0.99919 || rate > 1 {
			t.Errorf("z = %g: acceptance rate %.6f", z, rate)
		}
	}
}

// TestLogPhiTail compares the continued fraction with erfc where erfc is
// exact to rounding (arguments 10 to 26), and logPhi is continuous at its
// switch, x = −25.
func TestLogPhiTail(t *testing.T) {
	for _, a := range []float64{10, 15, 20, 25, 26} {
		want := math.Log(0.5 * math.Erfc(a/math.Sqrt2))
		if got := logPhiTail(a); math.Abs(got-want) > 1e-13*math.Abs(want) {
			t.Errorf("log Φ(−%g) = %.17g, erfc gives %.17g", a, got, want)
		}
	}
	if a, b := logPhi(-25+1e-12), logPhi(-25); math.Abs(a-b) > 1e-9 {
		t.Errorf("logPhi jumps at −25: %.17g, %.17g", a, b)
	}
}

// TestDrawAllocs: Draw allocates nothing.
func TestDrawAllocs(t *testing.T) {
	rng := testSource(1, 2)
	var s float64
	if a := testing.AllocsPerRun(1000, func() { s += Draw(rng, 1.3) }); a != 0 {
		t.Errorf("Draw allocates %v times", a)
	}
}

// BenchmarkDraw: ns per PG(1, c) draw at c = 0, 1 and 10.
func BenchmarkDraw(b *testing.B) {
	for _, c := range []float64{0, 1, 10} {
		b.Run(fmt.Sprintf("c=%g", c), func(b *testing.B) {
			rng := testSource(1, 2)
			var s float64
			for b.Loop() {
				s += Draw(rng, c)
			}
			if s < 0 {
				b.Fatal(s)
			}
		})
	}
}

// BenchmarkDrawMixed: ns per PG(1, c) draw with c changing every draw, as
// in a sweep over data: c cycles through 4,096 values c = 2·N(0, 1)·|N(0, 1)|
// (fixed seed; median |c| about 0.9, 5% beyond 5.6).
func BenchmarkDrawMixed(b *testing.B) {
	rng := testSource(1, 2)
	cs := make([]float64, 4096)
	for i := range cs {
		cs[i] = 2 * rng.NormFloat64() * math.Abs(rng.NormFloat64())
	}
	var s float64
	i := 0
	for b.Loop() {
		s += Draw(rng, cs[i&4095])
		i++
	}
	if s < 0 {
		b.Fatal(s)
	}
}

// BenchmarkDrawSum: ns per PG(4, 1) draw (four PG(1, 1) draws sharing
// the envelope's weight).
func BenchmarkDrawSum(b *testing.B) {
	rng := testSource(1, 2)
	var s float64
	for b.Loop() {
		s += DrawSum(rng, 4, 1)
	}
	if s < 0 {
		b.Fatal(s)
	}
}

// BenchmarkDrawPaths: ns per J*(1, z) draw by each of the sampler's two
// proposals, drawSmall's untilted envelope and drawJ's tilted one, at
// z across smallZ, from which smallZ is chosen.
func BenchmarkDrawPaths(b *testing.B) {
	for _, z := range []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5} {
		b.Run(fmt.Sprintf("small/z=%g", z), func(b *testing.B) {
			rng := testSource(1, 2)
			var s float64
			for b.Loop() {
				s += drawSmall(rng, z, exact)
			}
			if s < 0 {
				b.Fatal(s)
			}
		})
		b.Run(fmt.Sprintf("tilted/z=%g", z), func(b *testing.B) {
			rng := testSource(1, 2)
			var s float64
			for b.Loop() {
				s += drawJ(rng, z, weight(z), exact)
			}
			if s < 0 {
				b.Fatal(s)
			}
		})
	}
}

// BenchmarkDrawLogitEta: ns per PG(1, c) draw with c = η of a logistic
// model like the real suite's contraception set (c cycles through 4,096
// values −0.5 + 0.8·N(0, 1), fixed seed: most of them below 2·smallZ);
// cpu-ns/op is the process's user + system CPU per draw (run pinned with
// GOMAXPROCS=1).
func BenchmarkDrawLogitEta(b *testing.B) {
	rng := testSource(1, 2)
	cs := make([]float64, 4096)
	for i := range cs {
		cs[i] = -0.5 + 0.8*rng.NormFloat64()
	}
	var s float64
	i := 0
	cpu := processCPU()
	for b.Loop() {
		s += Draw(rng, cs[i&4095])
		i++
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	if s < 0 {
		b.Fatal(s)
	}
}

// processCPU returns the process's user + system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// refPrec is the math/big reference's precision in bits.
const refPrec = 384

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

// bigExp returns e^x: e^{x/2^m} by its Taylor series (|x/2^m| < 2⁻⁸,
// 40 terms: below 2⁻⁴⁰⁰), squared m times (m ≤ 20 bits lost of 384).
func bigExp(x *big.Float) *big.Float {
	r := new(big.Float).SetPrec(refPrec).Set(x)
	m := 0
	for r.Sign() != 0 && r.MantExp(nil) > -8 {
		r.SetMantExp(r, -1)
		m++
	}
	sum, term := bf(1), bf(1)
	for n := 1; n <= 40; n++ {
		term.Mul(term, r)
		term.Quo(term, bf(float64(n)))
		sum.Add(sum, term)
	}
	for range m {
		sum.Mul(sum, sum)
	}
	return sum
}

// bigLog returns log y, y > 0, by Newton's iteration z ← z + 2(y − e^z)/
// (y + e^z) (cubic) from the float64 logarithm of y's mantissa and exponent.
func bigLog(y *big.Float) *big.Float {
	mant := new(big.Float)
	e := y.MantExp(mant)
	m, _ := mant.Float64()
	z := bf(math.Log(m) + float64(e)*math.Ln2)
	for range 4 {
		ez := bigExp(z)
		num := new(big.Float).SetPrec(refPrec).Sub(y, ez)
		den := new(big.Float).SetPrec(refPrec).Add(y, ez)
		num.Quo(num, den)
		num.SetMantExp(num, 1)
		z.Add(z, num)
	}
	return z
}

// bigPhiDensity returns φ(t) = e^{−t²/2}/√(2π).
func bigPhiDensity(t float64) *big.Float {
	tt := bf(t)
	tt.Mul(tt, tt)
	tt.SetMantExp(tt, -1)
	tt.Neg(tt)
	p := bigExp(tt)
	pi, _ := new(big.Float).SetPrec(refPrec).SetString("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651")
	s := new(big.Float).SetPrec(refPrec).Sqrt(pi.Mul(pi, bf(2)))
	return p.Quo(p, s)
}

// refPhi returns Φ(t) and Q = 1 − Φ(t) = Φ(−t) in high precision: for |t| ≤
// 6 by the series Φ(t) = ½ + φ(t)Σ t^{2n+1}/(2n+1)!! (A&S 26.2.11), beyond
// by Laplace's continued fraction of the tail Φ(−x) = φ(x)/(x + 1/(x + 2/(x
// + 3/(x + …)))) (A&S 26.2.14), 400 levels (x > 6: remainder far below
// 10⁻⁴⁰; TestRefPhi checks the two agree where they meet).
func refPhi(t float64, useCF bool) (phi, q *big.Float) {
	if !useCF {
		sum, term := bf(0), bf(t)
		t2 := bf(t)
		t2.Mul(t2, t2) // exactly: t² in float64 would be rounded
		for n := 0; n < 2000; n++ {
			sum.Add(sum, term)
			term.Mul(term, t2)
			term.Quo(term, bf(float64(2*n+3)))
			if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-refPrec-8 {
				break
			}
		}
		sum.Mul(sum, bigPhiDensity(t))
		phi = new(big.Float).SetPrec(refPrec).Add(bf(0.5), sum)
		q = new(big.Float).SetPrec(refPrec).Sub(bf(0.5), sum)
		return phi, q
	}
	x := math.Abs(t)
	cf := bf(x)
	for k := 400; k >= 1; k-- {
		cf.Quo(bf(float64(k)), cf)
		cf.Add(cf, bf(x))
	}
	tail := bigPhiDensity(x)
	tail.Quo(tail, cf)
	rest := new(big.Float).SetPrec(refPrec).Sub(bf(1), tail)
	if t < 0 {
		return tail, rest
	}
	return rest, tail
}

// refNegLogPhi returns −log Φ(t) and λ(t) = φ(t)/Φ(t) in high precision,
// rounded to float64: −log1p(−Q) by its series where Q = Φ(−t) < 10⁻⁶.
func refNegLogPhi(t float64) (f, lam float64) {
	phi, q := refPhi(t, math.Abs(t) > 6)
	var fb *big.Float
	if qf, _ := q.Float64(); t > 0 && qf < 1e-6 {
		// −log(1 − Q) = Q + Q²/2 + Q³/3 + …
		fb = bf(0)
		pw := new(big.Float).SetPrec(refPrec).Set(q)
		for n := 1; n <= 30; n++ {
			fb.Add(fb, new(big.Float).SetPrec(refPrec).Quo(pw, bf(float64(n))))
			pw.Mul(pw, q)
		}
	} else {
		fb = bigLog(phi)
		fb.Neg(fb)
	}
	f, _ = fb.Float64()
	l := bigPhiDensity(t)
	lam, _ = l.Quo(l, phi).Float64()
	return f, lam
}

// TestRefPhi checks the reference itself: its series and continued
// fraction agree to 10⁻³⁰ (relative, in Φ and in 1 − Φ) where they meet
// (|t| from 5 to 8), and Φ(0) = ½, −log Φ(0) = log 2 to the last bit.
func TestRefPhi(t *testing.T) {
	for _, x := range []float64{-8, -7, -6, -5.5, -5, 5, 5.5, 6, 7, 8} {
		p1, q1 := refPhi(x, false)
		p2, q2 := refPhi(x, true)
		for _, c := range [][2]*big.Float{{p1, p2}, {q1, q2}} {
			d := new(big.Float).Sub(c[0], c[1])
			d.Quo(d, c[1])
			if r, _ := d.Float64(); math.Abs(r) > 1e-30 {
				t.Errorf("t = %v: series and continued fraction differ by %.3g relative", x, r)
			}
		}
	}
	if f, _ := refNegLogPhi(0); f != math.Ln2 {
		t.Errorf("−log Φ(0) = %v, want log 2 = %v", f, math.Ln2)
	}
}

// phiPoints returns TestNegLogPhi's points: n uniform on [lo, hi] and
// each node of negLogPhi's grid, the midpoints between nodes (where the
// nearest node switches) with their neighbouring floats, the grid's ends,
// 0 and ±tiny.
func phiPoints(n int, lo, hi float64) []float64 {
	rng := rand.New(rand.NewPCG(7, 8))
	var ts []float64
	for range n {
		ts = append(ts, lo+(hi-lo)*rng.Float64())
	}
	step := 1
	if testing.Short() {
		step = 16
	}
	for j := 0; j < phiNodes; j += step {
		tj := phiLo + float64(j)/phiInv
		mid := tj + 0.5/phiInv
		ts = append(ts, tj)
		if j < phiNodes-1 {
			ts = append(ts, mid, math.Nextafter(mid, -100), math.Nextafter(mid, 100))
		}
	}
	return append(ts, phiLo, phiHi, math.Nextafter(phiLo, 0), math.Nextafter(phiHi, 0), 0, 1e-300, -1e-300, 2e-9, -2e-9)
}

// TestNegLogPhi checks negLogPhi's −log Φ(t) against the math/big
// reference (refNegLogPhi) at 10⁵ points of its range [−12, 9] and its
// switch points (phiPoints): relative error at most 7·10⁻¹⁶ (3 ulp), no
// worse than the erfc-based value's (−log(½erfc(−t/√2)),
// −log1p(−½erfc(t/√2))) largest on the same points (10⁻¹⁴ near t = 9:
// t/√2's rounding, which normTail corrects in the table); λ = φ/Φ to 10⁻¹⁴ relative (it
// feeds the proposal alone); outside the range ok is false. The mutant
// negLogPhiCell(t, 1) (the next cell's polynomial) is caught: its largest error
// above 10⁻⁴.
func TestNegLogPhi(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	ts := phiPoints(n, phiLo, phiHi)
	var worst, worstErfc, worstLam, worstMut float64
	var at float64
	for _, x := range ts {
		want, wantLam := refNegLogPhi(x)
		f, lam, ok := negLogPhi(x)
		if !ok {
			t.Fatalf("negLogPhi(%v): not ok", x)
		}
		if e := math.Abs(f-want) / want; e > worst {
			worst, at = e, x
		}
		var fe float64
		if x > 0 {
			fe = -math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
		} else {
			fe = -math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		}
		worstErfc = max(worstErfc, math.Abs(fe-want)/want)
		worstLam = max(worstLam, math.Abs(lam-wantLam)/wantLam)
		fm, _, _ := negLogPhiCell(x, 1)
		worstMut = max(worstMut, math.Abs(fm-want)/want)
	}
	t.Logf("%d points: largest relative error of −log Φ %.3g (at t = %v), erfc's %.3g; of λ %.3g; the mutant's %.3g",
		len(ts), worst, at, worstErfc, worstLam, worstMut)
	if worst > 7e-16 || worst > worstErfc {
		t.Errorf("−log Φ's largest relative error %.3g, want ≤ 7e-16 and ≤ erfc's %.3g", worst, worstErfc)
	}
	if worstLam > 1e-14 {
		t.Errorf("λ's largest relative error %.3g, want ≤ 1e-14", worstLam)
	}
	if worstMut < 1e-4 {
		t.Errorf("the next-cell mutant's largest error %.3g, want it caught (> 1e-4)", worstMut)
	}
	for _, x := range []float64{math.Nextafter(phiLo, -100), math.Nextafter(phiHi, 100), -40, 40, math.NaN(), math.Inf(1)} {
		if _, _, ok := negLogPhi(x); ok {
			t.Errorf("negLogPhi(%v) ok outside [%v, %v]", x, phiLo, phiHi)
		}
	}
	if a := testing.AllocsPerRun(100, func() { negLogPhi(ts[0]) }); a != 0 {
		t.Errorf("negLogPhi allocates %v times", a)
	}
}

// BenchmarkNegLogPhi compares negLogPhi (−log Φ and λ) with the erfc-based
// energy and λ by one exponential of it (probitLoss's fall-back) on the
// range of a probit sweep's t.
func BenchmarkNegLogPhi(b *testing.B) {
	ts := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ts {
		ts[i] = 2 * rng.NormFloat64()
	}
	b.Run("table", func(b *testing.B) {
		var s float64
		for i := range b.N {
			f, lam, _ := negLogPhi(ts[i&1023])
			s += f + lam
		}
		_ = s
	})
	b.Run("erfc", func(b *testing.B) {
		var s float64
		for i := range b.N {
			t := ts[i&1023]
			var f float64
			if t > 0 {
				f = -math.Log1p(-0.5 * math.Erfc(t/math.Sqrt2))
			} else {
				f = -math.Log(0.5 * math.Erfc(-t/math.Sqrt2))
			}
			s += f + proposalExp(f-t*t/2)/math.Sqrt(2*math.Pi)
		}
		_ = s
	})
}

// BenchmarkFastCDF compares fastCDF with normCDF (erfc).
func BenchmarkFastCDF(b *testing.B) {
	ts := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range ts {
		ts[i] = 2 * rng.NormFloat64()
	}
	for _, c := range []struct {
		name string
		f    func(float64) float64
	}{{"fastCDF", fastCDF}, {"normCDF", normCDF}} {
		b.Run(c.name, func(b *testing.B) {
			var s float64
			for i := range b.N {
				s += c.f(ts[i&1023])
			}
			_ = s
		})
	}
}

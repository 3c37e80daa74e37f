// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// quad returns ∫_a^b f by composite 20-point Gauss–Legendre quadrature
// on n equal panels (bvnGL's nodes).
func quad(f func(float64) float64, a, b float64, n int) float64 {
	gl := bvnGL[2]
	hw := (b - a) / float64(n) / 2
	var s float64
	for p := range n {
		mid := a + (2*float64(p)+1)*hw
		for i, x := range gl.x {
			s += gl.w[i] * (f(mid-hw*x) + f(mid+hw*x))
		}
	}
	return s * hw
}

// bvnQuad returns Φ₂(h, k; r) = ∫_{−∞}^h φ(x)Φ((k − rx)/√(1 − r²)) dx by
// quad over [−40, h] (φ below −40 is under 10⁻³⁴⁷).
func bvnQuad(h, k, r float64) float64 {
	sr := math.Sqrt((1 - r) * (1 + r))
	f := func(x float64) float64 {
		return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) * normCDF((k-r*x)/sr)
	}
	lo := -40.0
	if h <= lo {
		return 0
	}
	return quad(f, lo, h, 4000)
}

// TestBVN checks bvnCDF against bvnQuad to 10⁻¹³ absolute over a grid of
// h, k in [−6, 6] and r across each of Genz's three rules and both signs
// (|r| up to 0.99), and the probit pair identity it serves (pairs
// integrated out of the marginal scale move): ∫ N(u; 0, τ²)·Φ(a₁ + c₁u)·
// Φ(a₂ + c₂u) du = Φ₂(a₁/s₁, a₂/s₂; c₁c₂τ²/(s₁s₂)), s_k² = 1 + c_k²τ², by
// quadrature in u, and that the product of the marginals (r = 0) and the
// wrong sign of r miss it; and that bvnTable.cdf gives bvnCDF's bits.
func TestBVN(t *testing.T) {
	var worst float64
	for _, r := range []float64{-0.99, -0.95, -0.9, -0.8, -0.5, -0.2, -0.01, 0.01, 0.2, 0.5, 0.7, 0.8, 0.9, 0.93, 0.95, 0.99} {
		for _, h := range []float64{-6, -3, -1.5, -0.3, 0, 0.4, 1, 2.5, 6} {
			for _, k := range []float64{-6, -2.2, -0.7, 0, 0.3, 1.1, 3, 6} {
				got, want := bvnCDF(h, k, r), bvnQuad(h, k, r)
				if d := math.Abs(got - want); d > worst {
					worst = d
				}
				if !(math.Abs(got-want) < 1e-13) {
					t.Errorf("Φ₂(%v, %v; %v) = %.17g, quadrature %.17g (off %.3g)", h, k, r, got, want, got-want)
				}
			}
		}
	}
	t.Logf("largest |Φ₂ − quadrature| %.3g", worst)
	// bvnTable: the same bits as bvnCDF, its table kept or rebuilt.
	var tab bvnTable
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 20000 {
		r := 2*rng.Float64() - 1
		if n%3 != 0 {
			r = math.Copysign(0.69, r)
		}
		h, k := 4*rng.NormFloat64(), 4*rng.NormFloat64()
		if got, want := tab.cdf(h, k, r), bvnCDF(h, k, r); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("bvnTable.cdf(%v, %v, %v) = %v, bvnCDF %v", h, k, r, got, want)
		}
	}
	for _, c := range []struct{ a1, a2, c1, c2, tau float64 }{
		{0.3, -0.5, 1, 1, 1.5}, {-1.2, -0.4, 1, -1, 0.8}, {2, 1, 0.5, 2, 1.2}, {-0.1, 0.2, -1, -1, 2.5},
	} {
		t2 := c.tau * c.tau
		s1, s2 := math.Sqrt(1+c.c1*c.c1*t2), math.Sqrt(1+c.c2*c.c2*t2)
		r := c.c1 * c.c2 * t2 / (s1 * s2)
		f := func(u float64) float64 {
			return math.Exp(-u*u/(2*t2)) / math.Sqrt(2*math.Pi*t2) * normCDF(c.a1+c.c1*u) * normCDF(c.a2+c.c2*u)
		}
		want := quad(f, -40*c.tau, 40*c.tau, 4000)
		got := bvnCDF(c.a1/s1, c.a2/s2, r)
		if !(math.Abs(got-want) < 1e-13) {
			t.Errorf("pair %+v: Φ₂ %.17g, ∫ over u %.17g", c, got, want)
		}
		if p, n := bvnCDF(c.a1/s1, c.a2/s2, 0), bvnCDF(c.a1/s1, c.a2/s2, -r); !(math.Abs(p-want) > 1e-3 && math.Abs(n-want) > 1e-3) {
			t.Errorf("pair %+v: the product of marginals %v or −ρ %v is as near %v", c, p, n, want)
		}
	}
}

// TestPairLoss checks the collapsed pair's energy pairLoss against
// −log Φ₂ of its definition and its two derivatives in s against central
// differences (relative 10⁻⁵), for each pair of labels, both signs of the
// values and k_t = 0 and 0.3.
func TestPairLoss(t *testing.T) {
	for _, y := range [][2]bool{{true, true}, {true, false}, {false, true}, {false, false}} {
		for _, v := range [][2]float64{{1, 1}, {0.7, -1.3}} {
			c := &augChain{r: []float64{0.3, -0.7}, off: []float64{0.1, 0.2}, y: y[:]}
			for _, kt := range []float64{0, 0.3} {
				for _, s := range []float64{-0.5, 0, 0.4} {
					const tau2 = 2.0
					f := func(s float64) (l, d1, d2 float64) {
						return c.pairLoss(0, 1, v[0], v[1], math.Exp(kt*s), kt, tau2*math.Exp(2*s))
					}
					l, d1, d2 := f(s)
					// The definition: t_k = σ_k m_k/s_k, ρ = σ₁σ₂v₁v₂τ²/(s₁s₂).
					t2 := tau2 * math.Exp(2*s)
					var tk [2]float64
					sg := 1.0
					var sk [2]float64
					for k := range 2 {
						sk[k] = math.Sqrt(1 + v[k]*v[k]*t2)
						m := c.off[k] + math.Exp(kt*s)*c.r[k]
						if !y[k] {
							m, sg = -m, -sg
						}
						tk[k] = m / sk[k]
					}
					want := -math.Log(bvnCDF(tk[0], tk[1], sg*v[0]*v[1]*t2/(sk[0]*sk[1])))
					if math.Abs(l-want) > 1e-14 {
						t.Errorf("y %v v %v kt %v s %v: l = %v, want %v", y, v, kt, s, l, want)
					}
					const e = 1e-4
					lp, _, _ := f(s + e)
					lm, _, _ := f(s - e)
					fd1, fd2 := (lp-lm)/(2*e), (lp-2*l+lm)/(e*e)
					if math.Abs(d1-fd1) > 1e-5*(1+math.Abs(d1)) || math.Abs(d2-fd2) > 1e-5*(1+math.Abs(d2)) {
						t.Errorf("y %v v %v kt %v s %v: derivatives %v, %v; differences %v, %v", y, v, kt, s, d1, d2, fd1, fd2)
					}
				}
			}
		}
	}
}

// TestDrawPairsStops checks drawPairs' way out: a pair whose second
// datum is never accepted (a NaN latent mean) stops after pairTries
// proposals with an error naming the level, its coordinate and τ, and
// leaves the effect as it was; the same pair with finite means is redrawn
// with no error, the same draw for the same stream.
func TestDrawPairsStops(t *testing.T) {
	term := func() *asisTerm {
		return &asisTerm{
			gaussTerm: gaussTerm{logTau: 1},
			pCol:      []int32{0},
			pRow:      []int32{0, 1},
			pVal:      []float64{1, 1},
		}
	}
	draw := func(off []float64, seed uint64) (*augChain, float64) {
		c := &augChain{
			gaussChain: &gaussChain{theta: []float64{0.25, math.Log(1.5)}},
			off:        off,
			r:          []float64{0, 0},
			y:          []bool{true, false},
		}
		c.drawPairs(rand.New(rand.NewPCG(seed, 3)), term(), 1)
		return c, c.theta[0]
	}
	c, u := draw([]float64{0.3, math.NaN()}, 1)
	if c.pairErr == nil {
		t.Fatal("a pair with a NaN latent mean was redrawn without an error")
	}
	if u != 0.25 {
		t.Errorf("the effect moved to %v on the error path, want it left at 0.25", u)
	}
	for _, want := range []string{"level 0", "coordinate 0", "1048576 tries", "τ = 1.5"} {
		if !strings.Contains(c.pairErr.Error(), want) {
			t.Errorf("error %q does not say %q", c.pairErr, want)
		}
	}
	c, u = draw([]float64{0.3, -0.2}, 1)
	if c.pairErr != nil {
		t.Fatalf("finite pair: %v", c.pairErr)
	}
	if _, u2 := draw([]float64{0.3, -0.2}, 1); u == 0.25 || u2 != u {
		t.Errorf("finite pair: effect %v, again %v; want a new value, the same for the same stream", u, u2)
	}
}

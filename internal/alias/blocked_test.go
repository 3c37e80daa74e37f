// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package alias

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestUpIsSmallestCodeAbove checks Up against its definition on numbers
// across the grid's range, below it and at its ends: Value(Up(c)) ≥ c, and
// the code below is < c (Up rounds up to the next code, no further), so a
// bound coded by Up stays a bound and loosens by at most 2^−8 of itself.
func TestUpIsSmallestCodeAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cs := []float64{0, math.SmallestNonzeroFloat64, 0x1p-134, 0x1p-130, 0x1p-126, 1, 1.5, 1 + 0x1p-52, MaxValue, math.Nextafter(MaxValue, 0)}
	for range 200000 {
		cs = append(cs, math.Ldexp(1+rng.Float64(), rng.IntN(278)-150))
	}
	for _, c := range cs {
		q, ok := Up(c)
		if !ok {
			t.Fatalf("Up(%v) not ok", c)
		}
		if v := Value(q); !(v >= c) {
			t.Fatalf("Up(%v) = %#x, Value %v < c", c, q, v)
		}
		if q > 0 && !(Value(q-1) < c) {
			t.Fatalf("Up(%v) = %#x is not the smallest: Value(q−1) = %v ≥ c", c, q, Value(q-1))
		}
		if c >= 0x1p-126 && Value(q) > c*(1+0x1p-8) {
			t.Fatalf("Up(%v) = %v, more than 2^−8 above", c, Value(q))
		}
	}
	for _, c := range []float64{-1, math.NaN(), math.Inf(1), math.Nextafter(MaxValue, math.Inf(1)), math.MaxFloat64} {
		if q, ok := Up(c); ok {
			t.Errorf("Up(%v) = %#x, ok; want not ok", c, q)
		}
	}
	for q := range uint16(0xffff) {
		if !(Value(q+1) > Value(q)) {
			t.Fatalf("Value(%#x) = %v ≤ Value(%#x) = %v: codes not ordered", q+1, Value(q+1), q, Value(q))
		}
	}
}

// blockedChiSquare draws n indices (by Draw, or by DrawInto in groups of
// 17) and returns the chi-square statistic against Prob, its degrees of
// freedom, and whether a zero code was drawn.
func blockedChiSquare(t *testing.T, tab *Blocked, codes []uint16, n int, seed uint64, into bool) (stat float64, df int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	counts := make([]float64, len(codes))
	idx, u := make([]int, 17), make([]float64, 17)
	for k := 0; k < n; {
		if into {
			m := min(len(idx), n-k)
			tab.DrawInto(rng, idx[:m], u)
			for _, i := range idx[:m] {
				counts[i]++
			}
			k += m
		} else {
			counts[tab.Draw(rng)]++
			k++
		}
	}
	df = -1
	for i, c := range counts {
		if codes[i] == 0 {
			if c != 0 {
				t.Fatalf("drew index %d of weight 0 %v times", i, c)
			}
			continue
		}
		e := tab.Prob(i) * float64(n)
		stat += (c - e) * (c - e) / e
		df++
	}
	return stat, df
}

// testCodes returns n codes: weights exponential over three decades,
// a tenth of them zero, and one block all zero.
func testCodes(n int, seed uint64) []uint16 {
	rng := rand.New(rand.NewPCG(seed, 1))
	codes := make([]uint16, n)
	for i := range codes {
		if rng.IntN(10) > 0 && (i < BlockSize || i >= 2*BlockSize) {
			codes[i], _ = Up(math.Pow(10, 3*rng.Float64()) * rng.ExpFloat64())
		}
	}
	return codes
}

// TestBlockedDistribution draws from Blocked, by Draw and by DrawInto, and
// tests the counts against Value(code)/Σ at level 0.001, on codes with
// zeros, an all-zero block and a last block of 7.
func TestBlockedDistribution(t *testing.T) {
	for _, n := range []int{1, 5, BlockSize, 3*BlockSize + 7, 40 * BlockSize} {
		codes := testCodes(n, uint64(n))
		if n <= 2*BlockSize {
			codes[0] = 1000 // the all-zero block would leave nothing
		}
		tab, err := NewBlocked(codes, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, q := range codes {
			sum += Value(q)
		}
		if math.Abs(tab.Total()-sum) > 1e-12*sum {
			t.Errorf("N = %d: Total %v, Σ Value %v", n, tab.Total(), sum)
		}
		for _, into := range []bool{false, true} {
			stat, df := blockedChiSquare(t, tab, codes, 200*n+20000, uint64(n)+9, into)
			if df == 0 {
				continue
			}
			if limit := (distuv.ChiSquared{K: float64(df)}).Quantile(0.999); stat > limit {
				t.Errorf("N = %d, DrawInto %v: chi-square %.1f > %.1f (df %d)", n, into, stat, limit, df)
			}
		}
		if e := tab.ExpectedTrials(); !(e >= 1 && e <= BlockSize) {
			t.Errorf("N = %d: expected trials %v, want in [1, %d]", n, e, BlockSize)
		}
	}
}

// TestBlockedEnvelopeMutants checks that the test hook's wrong envelopes
// change the law (what the kernels' mutants rely on): no rejection (0)
// and an envelope at the block's smallest positive code both fail the
// chi-square test by far.
func TestBlockedEnvelopeMutants(t *testing.T) {
	codes := testCodes(20*BlockSize, 11)
	for name, env := range map[string]func([]uint16) uint16{
		"no rejection": func([]uint16) uint16 { return 0 },
		"envelope at the smallest code": func(b []uint16) uint16 {
			m := uint16(0xffff)
			for _, q := range b {
				if q > 0 {
					m = min(m, q)
				}
			}
			return m
		},
	} {
		tab, err := NewBlocked(codes, env)
		if err != nil {
			t.Fatal(err)
		}
		stat, df := blockedChiSquare(t, tab, codes, 100000, 12, true)
		if limit := (distuv.ChiSquared{K: float64(df)}).Quantile(0.999); stat < 10*limit {
			t.Errorf("%s: chi-square %.1f, want far above %.1f (df %d)", name, stat, limit, df)
		}
	}
}

func TestBlockedErrors(t *testing.T) {
	for _, codes := range [][]uint16{nil, {0}, make([]uint16, 100)} {
		if _, err := NewBlocked(codes, nil); err == nil {
			t.Errorf("NewBlocked(%d codes, all 0) = nil error", len(codes))
		}
	}
}

// BenchmarkBlockedDrawInto and BenchmarkTableDrawInto draw 16 indices at
// a time from 10⁷ weights, the compact sampler against the alias table over
// the same (decoded) weights: testCodes', which spread over three decades
// within a block, so that the rejection makes many trials (reported).
func BenchmarkBlockedDrawInto(b *testing.B) {
	codes := testCodes(10_000_000, 5)
	tab, err := NewBlocked(codes, nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	idx, u := make([]int, 16), make([]float64, 16)
	for b.Loop() {
		tab.DrawInto(rng, idx, u)
	}
	b.ReportMetric(tab.ExpectedTrials(), "trials/draw")
}

func BenchmarkTableDrawInto(b *testing.B) {
	codes := testCodes(10_000_000, 5)
	w := make([]float64, len(codes))
	for i, q := range codes {
		w[i] = Value(q)
	}
	tab, err := New(w)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	idx, u := make([]int, 16), make([]float64, 16)
	for b.Loop() {
		tab.DrawInto(rng, idx, u)
	}
}

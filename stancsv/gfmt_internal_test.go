// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package stancsv

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// gValue returns a test value of one of several kinds: normal draws at
// every decimal scale, values at and next to powers of ten, rounding ties
// of the p-digit decimals and their neighbours, integers, arbitrary bit
// patterns (subnormals, ±0, ±Inf and NaN among them).
func gValue(r *rand.Rand, p int) float64 {
	sign := float64(1 - 2*r.IntN(2))
	switch r.IntN(6) {
	case 0:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
	case 1: // at and beside 10^k
		v := math.Pow(10, float64(r.IntN(60)-30))
		for range r.IntN(3) {
			v = math.Nextafter(v, math.Inf(2*r.IntN(2)-1))
		}
		return sign * v
	case 2: // (n + ½)·10^(k−p+1) with n of p digits: a tie, or near one
		n := math.Pow(10, float64(p-1)) * (1 + 9*r.Float64())
		v := (math.Floor(n) + 0.5) * math.Pow(10, float64(r.IntN(30)-15))
		for range r.IntN(3) {
			v = math.Nextafter(v, math.Inf(2*r.IntN(2)-1))
		}
		return sign * v
	case 3: // exact binary ties: odd multiples of a power of two
		return sign * math.Ldexp(float64(2*r.IntN(1<<20)+1), r.IntN(40)-40)
	case 4:
		return sign * float64(r.IntN(2000000))
	}
	return math.Float64frombits(r.Uint64())
}

// TestAppendGIsStrconv checks appendG against strconv.AppendFloat(v, 'g',
// p) byte for byte at every precision 1 … 15 (and 6, the files' default,
// the most), on gValue's values. The mutant gMutant (no fallback near a
// rounding tie) must be caught.
func TestAppendGIsStrconv(t *testing.T) {
	trials := 3_000_000
	if testing.Short() {
		trials = 300_000
	}
	run := func(trials int) (bad int, first string) {
		r := rand.New(rand.NewPCG(31, 32))
		var got, want []byte
		for i := range trials {
			p := 6
			if i%2 == 0 {
				p = 1 + r.IntN(15)
			}
			v := gValue(r, p)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			got, want = appendG(got[:0], v, p), strconv.AppendFloat(want[:0], v, 'g', p, 64)
			if string(got) != string(want) {
				if bad == 0 {
					first = strconv.FormatFloat(v, 'g', -1, 64) + " at " + strconv.Itoa(p) + " digits: " + string(got) + ", strconv " + string(want)
				}
				bad++
			}
		}
		return bad, first
	}
	if bad, first := run(trials); bad > 0 {
		t.Fatalf("%d of %d values differ from strconv; first %s", bad, trials, first)
	}
	gMutant = true
	bad, first := run(min(trials, 300_000))
	gMutant = false
	if bad == 0 {
		t.Errorf("mutant gMutant: every value as strconv writes it, want some caught")
	} else {
		t.Logf("mutant gMutant caught: %d values differ; first %s", bad, first)
	}
}

// TestAppendGFast checks that appendG's own path, not strconv, writes
// the values of a draws file: at least 99% of normal draws at scales
// 10⁻⁶ … 10⁶.
func TestAppendGFast(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	fast := 0
	for range 10000 {
		if _, _, ok := gDigits(r.NormFloat64()*math.Pow(10, float64(r.IntN(13)-6)), 6); ok {
			fast++
		}
	}
	if fast < 9900 {
		t.Errorf("%d of 10000 values by gDigits, want at least 9900", fast)
	}
}

// BenchmarkAppendG is a draw's value written at 6 digits, by appendG and
// by strconv.
func BenchmarkAppendG(b *testing.B) {
	r := rand.New(rand.NewPCG(35, 36))
	v := make([]float64, 4096)
	for i := range v {
		v[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2))
	}
	buf := make([]byte, 0, 64)
	b.Run("appendG", func(b *testing.B) {
		i := 0
		for b.Loop() {
			buf = appendG(buf[:0], v[i&4095], 6)
			i++
		}
	})
	b.Run("strconv", func(b *testing.B) {
		i := 0
		for b.Loop() {
			buf = strconv.AppendFloat(buf[:0], v[i&4095], 'g', 6, 64)
			i++
		}
	})
}

// FuzzAppendG checks appendG against strconv's %g, byte for byte, on any
// float64 bit pattern and any precision 1…17 (.ci/run fuzzes it).
func FuzzAppendG(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 0.5, 1e-300, 123456.5, 9.9999995, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(math.Float64bits(v), uint8(6))
	}
	f.Fuzz(func(t *testing.T, bits uint64, p uint8) {
		v, prec := math.Float64frombits(bits), 1+int(p%17)
		got := string(appendG(nil, v, prec))
		if want := strconv.FormatFloat(v, 'g', prec, 64); got != want {
			t.Fatalf("appendG(%v, %d) = %q, strconv %q", v, prec, got, want)
		}
	})
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package polyagamma

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testSource returns a Source seeded from rand's PCG(a, b).
func testSource(a, b uint64) *Source {
	return NewSource(rand.New(rand.NewPCG(a, b)))
}

// expStats draws n Exp(1) variates from src and returns the KS p-value
// against 1 − e^{−x}, the KS p-value of the variates above 0.5 (where the
// wedges of the upper layers lie) against their conditional
// distribution 1 − e^{−(x−0.5)}, and the z of the mean and of the
// variance against 1 and 1 (the variance of X is 1, of (X − 1)² is 8).
func expStats(src *Source, n int) (p, pUpper, zMean, zVar float64) {
	xs := make([]float64, n)
	var s, s2 float64
	for i := range xs {
		x := src.ExpFloat64()
		xs[i] = x
		s += x
		s2 += (x - 1) * (x - 1)
	}
	nf := float64(n)
	zMean = (s/nf - 1) / math.Sqrt(1/nf)
	zVar = (s2/nf - 1) / math.Sqrt(8/nf)
	var up []float64
	for _, x := range xs {
		if x > 0.5 {
			up = append(up, x)
		}
	}
	_, p = ksP(xs, func(x float64) float64 { return -math.Expm1(-x) })
	_, pUpper = ksP(up, func(x float64) float64 { return -math.Expm1(-(x - 0.5)) })
	return p, pUpper, zMean, zVar
}

// TestSourceExp checks Source's ziggurat exponential (ExpFloat64):
// 10⁶ draws against Exp(1) by KS (all and above 0.5) and by the mean and
// variance (|z| < 4.5, p > 10⁻⁴), and the tail layer's draws beyond
// zigR (about e^{−7.7}·10⁶ ≈ 450) by their mean excess 1; the mutant
// faultZigWedge (every wedge point kept) caught at p < 10⁻⁸ or |z| > 6.
// Also that the tables partition the density: every layer's width
// times its height equals zigV to 10⁻¹², and a source reseeded from the
// same rng repeats its stream.
func TestSourceExp(t *testing.T) {
	for i := 1; i < 255; i++ {
		// Layer i+1 spans the heights f(x_{i+1}) to f(x_i), of width x_{i+1}.
		if a := zigW[i+1] * (1 << 32) * (zigF[i] - zigF[i+1]); math.Abs(a-zigV) > 1e-12 {
			t.Fatalf("layer %d: area %.15g, want %.15g", i+1, a, zigV)
		}
	}
	src := testSource(7, 8)
	n := 1_000_000
	p, pu, zm, zv := expStats(src, n)
	t.Logf("exact: KS p %.3g, above 0.5 p %.3g, z(mean) %.2f, z(var) %.2f", p, pu, zm, zv)
	if p < 1e-4 || pu < 1e-4 || math.Abs(zm) > 4.5 || math.Abs(zv) > 4.5 {
		t.Errorf("ExpFloat64: KS p %.3g, above 0.5 p %.3g, z(mean) %.2f, z(var) %.2f", p, pu, zm, zv)
	}
	var tail, nt float64
	for range 4 * n {
		if x := src.ExpFloat64(); x > zigR {
			tail += x - zigR
			nt++
		}
	}
	if zt := (tail/nt - 1) * math.Sqrt(nt); nt < 1000 || math.Abs(zt) > 4.5 {
		t.Errorf("ExpFloat64's tail beyond %g: %v draws of mean excess %.3f (z %.2f)", zigR, nt, tail/nt, zt)
	}
	bad := testSource(7, 8)
	bad.m = faultZigWedge
	p, pu, zm, zv = expStats(bad, n)
	t.Logf("faultZigWedge: KS p %.3g, above 0.5 p %.3g, z(mean) %.2f, z(var) %.2f", p, pu, zm, zv)
	if !(min(p, pu) < 1e-8 || max(math.Abs(zm), math.Abs(zv)) > 6) {
		t.Errorf("faultZigWedge not caught: KS p %.3g, above 0.5 p %.3g, z(mean) %.2f, z(var) %.2f", p, pu, zm, zv)
	}
	r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	a, b := NewSource(r1), NewSource(r2)
	for range 100 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("two Sources seeded from the same stream differ")
		}
	}
	a.Seed(r1)
	b.Seed(r2)
	if a.Float64() != b.Float64() {
		t.Fatal("two Sources reseeded from the same stream differ")
	}
}

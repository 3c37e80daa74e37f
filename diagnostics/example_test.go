// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/diagnostics"
)

// ar1 returns m independent stationary AR(1) chains of n draws with
// coefficient phi and unit marginal variance.
func ar1(rng *rand.Rand, m, n int, phi float64) [][]float64 {
	x := make([][]float64, m)
	for c := range x {
		x[c] = make([]float64, n)
		v := rng.NormFloat64()
		for t := range x[c] {
			v = phi*v + math.Sqrt(1-phi*phi)*rng.NormFloat64()
			x[c][t] = v
		}
	}
	return x
}

// ESSBulk, RHat and MCSEMean take x[chain][iteration]; here four
// independent AR(1) chains.
func ExampleESSBulk() {
	rng := rand.New(rand.NewPCG(3, 3))
	x := ar1(rng, 4, 2000, 0.9)
	// For AR(1) with φ = 0.9 the ESS is about S(1−φ)/(1+φ) = 8000/19 ≈ 421.
	ess := diagnostics.ESSBulk(x)
	fmt.Println(ess > 300 && ess < 600, diagnostics.RHat(x) < 1.01)
	// Output: true true
}

// Chains that disagree: one of four is shifted by one posterior sd, and
// R-hat rises above 1.01.
func ExampleRHat() {
	rng := rand.New(rand.NewPCG(1, 1))
	x := ar1(rng, 4, 1000, 0.5)
	fmt.Printf("mixed: R-hat < 1.01: %v\n", diagnostics.RHat(x) < 1.01)
	for t := range x[3] {
		x[3][t]++
	}
	fmt.Printf("one chain shifted: R-hat > 1.01: %v\n", diagnostics.RHat(x) > 1.01)
	// A constant quantity has no R-hat.
	fmt.Println(diagnostics.RHat([][]float64{{2, 2, 2, 2}, {2, 2, 2, 2}}))
	// Output:
	// mixed: R-hat < 1.01: true
	// one chain shifted: R-hat > 1.01: true
	// NaN
}

// The accuracy measures compare a histogram of draws with the truth;
// counts and probabilities are both accepted.
func ExampleTotalVariation() {
	counts := []float64{30, 50, 20}
	truth := []float64{0.25, 0.5, 0.25}
	fmt.Printf("TV %.3f\n", diagnostics.TotalVariation(counts, truth))
	fmt.Printf("symmetric KL %.4f\n", diagnostics.SymmetricKL(counts, truth, 1e-13))
	fmt.Printf("MSE of the mean estimate %.4f\n", diagnostics.MSE([]float64{1.1, -0.9}, []float64{1, -1}))
	// Output:
	// TV 0.050
	// symmetric KL 0.0101
	// MSE of the mean estimate 0.0100
}

// Package poisson draws exact Poisson variates for means from 0 to MaxMean,
// with no normal approximation at any mean: the minibatch kernels' batch
// sizes are Poisson, and an approximate count would make them inexact.
//
// Means below 10 use inversion by sequential search; larger means use
// Hörmann's transformed rejection with squeeze, PTRS (W. Hörmann, "The
// transformed rejection method for generating Poisson random variables",
// Insurance: Mathematics and Economics 12, 1993), which is exact for every
// mean and takes about 1.1 uniform pairs per draw.
package poisson

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxMean is the largest mean Draw accepts. PTRS is exact at any mean; the
// limit keeps counts far inside int and float64's exact integers.
const MaxMean = 1e12

// Check returns an error unless 0 ≤ mean ≤ MaxMean.
func Check(mean float64) error {
	if !(mean >= 0 && mean <= MaxMean) {
		return fmt.Errorf("poisson: mean %v, want in [0, %g]", mean, MaxMean)
	}
	return nil
}

// Draw returns a Poisson(mean) variate. The mean must satisfy Check (a bad
// mean returns 0 for negative or NaN means and is the caller's bug: kernels
// check their means once, where they can report them).
func Draw(rng *rand.Rand, mean float64) int {
	switch {
	case !(mean > 0):
		return 0
	case mean < 10:
		return inversion(rng, mean)
	}
	return ptrs(rng, mean)
}

// inversion searches the CDF from 0: P(0) = e^{−μ}, P(k) = P(k−1)·μ/k.
func inversion(rng *rand.Rand, mean float64) int {
	u := rng.Float64()
	p := math.Exp(-mean)
	cdf := p
	k := 0
	for u > cdf {
		k++
		p *= mean / float64(k)
		cdf += p
		if p == 0 && k > int(mean) {
			// u lies in the last ulps that rounding left uncovered: start
			// again rather than return a count beyond the tail.
			u = rng.Float64()
			p, cdf, k = math.Exp(-mean), math.Exp(-mean), 0
		}
	}
	return k
}

// ptrs is Hörmann's algorithm PTRS (1993), steps 1–4.
func ptrs(rng *rand.Rand, mean float64) int {
	slam := math.Sqrt(mean)
	loglam := math.Log(mean)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invAlpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		v := rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + mean + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invAlpha)-math.Log(a/(us*us)+b) <= -mean+k*loglam-lg {
			return int(k)
		}
	}
}

// Package poisson draws exact Poisson variates for means from 0 to MaxMean,
// with no normal approximation at any mean: the minibatch kernels' batch
// sizes are Poisson, and an approximate count would make them inexact.
//
// Means below 10 use inversion by sequential search; larger means use
// Hörmann's transformed rejection with squeeze, PTRS (W. Hörmann, "The
// transformed rejection method for generating Poisson random variables",
// Insurance: Mathematics and Economics 12(1), 39–45, 1993), the algorithm of
// numpy's random_poisson_ptrs. PTRS is exact for every mean ≥ 10 and takes
// about 1.1 uniform pairs per draw. Its final acceptance test compares with
// log p(k) = −μ + k log μ − log k!, which in that naive form cancels
// catastrophically for large μ (at μ = 10¹² the three terms are ~3·10¹³ and
// the result is O(10), so it would carry an absolute error of ~10⁻²); it is
// evaluated instead in Loader's form −stirlerr(k) − bd0(k, μ) − ½ log(2πk)
// (C. Loader, "Fast and accurate computation of binomial probabilities",
// 2000), which keeps full relative precision at every mean.
package poisson

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxMean is the largest mean Draw accepts: 10¹² on 64-bit platforms
// (MaxInt/2 on 32-bit ones). PTRS itself is exact at any mean; the limit
// keeps every count far inside int. An accepted count k satisfies
// log p(k) ≥ log V − log(a/u_s² + b) + log(1/α) ≥ −37 − 85 (V ≥ 2⁻⁵³,
// u_s ≥ 2⁻⁵³), which bounds k − μ by about 16√μ ≈ 1.6·10⁷ at μ = 10¹².
const MaxMean = min(1e12, math.MaxInt/2)

// Check returns an error unless 0 ≤ mean ≤ MaxMean (so it rejects negative,
// NaN and infinite means).
func Check(mean float64) error {
	if !(mean >= 0 && mean <= MaxMean) {
		return fmt.Errorf("poisson: mean %v, want in [0, %g]", mean, float64(MaxMean))
	}
	return nil
}

// Draw returns a Poisson(mean) variate; Draw(rng, 0) is 0. It allocates
// nothing. Draw panics if Check(mean) fails: callers check their means once,
// where they can report them, and a bad mean reaching Draw is a bug.
func Draw(rng *rand.Rand, mean float64) int {
	switch {
	case mean == 0:
		return 0
	case !(mean > 0 && mean <= MaxMean):
		panic(fmt.Sprintf("poisson: Draw with mean %v outside [0, %g]", mean, float64(MaxMean)))
	case mean < 10:
		return inversion(rng, mean)
	}
	return ptrs(rng, mean)
}

// inversion searches the CDF from 0: P(0) = e^{−μ}, P(k) = P(k−1)·μ/k.
func inversion(rng *rand.Rand, mean float64) int {
	p0 := math.Exp(-mean)
	u := rng.Float64()
	p, cdf, k := p0, p0, 0
	for u > cdf {
		k++
		p *= mean / float64(k)
		cdf += p
		if p == 0 {
			// u lies in the last ulps below 1 that the rounded CDF left
			// uncovered: draw again rather than return a count beyond the
			// tail (this conditions on an event of probability ~1e−16).
			u = rng.Float64()
			p, cdf, k = p0, p0, 0
		}
	}
	return k
}

// ptrs is Hörmann's algorithm PTRS (1993), steps 1–4, for mean ≥ 10.
func ptrs(rng *rand.Rand, mean float64) int {
	slam := math.Sqrt(mean)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	logInvAlpha := math.Log(1.1239 + 1.1328/(b-3.4))
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		// V uniform on (0, 1] rather than [0, 1): log V is finite, and
		// P(V ≤ x) ≤ x on the grid, so no count of negligible probability
		// is ever accepted through V = 0.
		v := 1 - rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + mean + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		if math.Log(v)+logInvAlpha-math.Log(a/(us*us)+b) <= logPMF(k, mean) {
			return int(k)
		}
	}
}

const ln2Pi = 1.8378770664093454835606594728112 // log(2π)

// logPMF returns log P(K = k) for K ~ Poisson(mean), k a non-negative
// integer and mean > 0, with full relative precision at every mean (Loader
// 2000): log p(k) = −stirlerr(k) − bd0(k, μ) − ½ log(2πk).
func logPMF(k, mean float64) float64 {
	if k == 0 {
		return -mean
	}
	return -stirlerr(k) - bd0(k, mean) - 0.5*(ln2Pi+math.Log(k))
}

// stirlerr returns log n! − (n + ½) log n + n − ½ log(2π), the error of
// Stirling's formula, for an integer n ≥ 1.
func stirlerr(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		// Small n: the direct form loses only a few ulps of log n! ≤ 28.
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*ln2Pi
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 returns x log(x/m) + m − x ≥ 0 without cancellation when x ≈ m, by
// the series 2x Σ v^{2j+1}/(2j+1) − (x − m)v, v = (x − m)/(x + m).
func bd0(x, m float64) float64 {
	if math.Abs(x-m) < 0.1*(x+m) {
		v := (x - m) / (x + m)
		s := (x - m) * v
		ej := 2 * x * v
		v *= v
		for j := 3.0; j < 1000; j += 2 {
			ej *= v
			s1 := s + ej/j
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/m) + m - x
}

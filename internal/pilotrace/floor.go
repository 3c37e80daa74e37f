// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package pilotrace

import (
	"math"
	"math/rand/v2"
	"slices"
)

// StepFloor returns the median over draws θ ~ draw (a Gaussian
// approximation's draws, from PCG(seed, 0xf1002)) of sumC·dist(θ, θ′),
// θ′ = θ + L·z·step/‖z‖ with z standard normal in d dimensions and L the
// approximation's lower-triangular covariance factor (its entries chol):
// a step of whitened length step in a random direction. sumC·dist is an
// exact minibatch kernel's C·M, the fewest data it reads a transition on
// average (TFMH's Poisson mean, the lower term of TunaMH's χC²M² + C·M),
// so the median is a floor on its batch at that step.
func StepFloor(d, draws int, seed uint64, step, sumC float64, draw func(*rand.Rand, []float64) []float64, chol func(a, b int) float64, dist func(theta, thetaNew []float64) float64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0xf1002))
	theta, next, z := make([]float64, d), make([]float64, d), make([]float64, d)
	ms := make([]float64, draws)
	for k := range ms {
		draw(rng, theta)
		// u = L z is a step whose whitened norm is ‖z‖: scale z to step.
		var zz float64
		for j := range z {
			z[j] = rng.NormFloat64()
			zz += z[j] * z[j]
		}
		f := step / math.Sqrt(zz)
		for a := range d {
			var s float64
			for b := 0; b <= a; b++ {
				s += chol(a, b) * z[b]
			}
			next[a] = theta[a] + f*s
		}
		ms[k] = sumC * dist(theta, next)
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}

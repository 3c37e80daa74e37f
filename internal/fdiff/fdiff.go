// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package fdiff is exactmh's central differences: the Hessian of an energy
// or prior without one, from its gradient, and the check that a Hessian is
// finite.
package fdiff

import (
	"fmt"
	"math"
	"slices"
)

// FiniteUpper reports the first non-finite entry of the upper triangle
// of h.
func FiniteUpper(h []float64, d int, theta []float64) error {
	for a := range d {
		for b := a; b < d; b++ {
			if v := h[a*d+b]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("exactmh: Hessian entry (%d, %d) is %v at θ = %v", a, b, v, theta)
			}
		}
	}
	return nil
}

// Step returns the central-difference step for coordinate j at θ:
// ε^{1/3}·max(1, |θ_j|), which balances the truncation error O(h²) of a
// central difference against the rounding error O(ε/h) of the gradient,
// made exactly representable so that (θ + h) − (θ − h) = 2h.
func Step(theta []float64, j int) float64 {
	h := relStep * math.Max(1, math.Abs(theta[j]))
	return (theta[j] + h) - theta[j]
}

// relStep is ε^{1/3}, the relative step of central differences.
var relStep = math.Cbrt(0x1p-52)

// Jacobian sets the upper triangle of h to the symmetrised central
// differences of grad: h_ab = ½[(g_b(θ + h_a e_a) − g_b(θ − h_a e_a))/2h_a +
// (g_a(θ + h_b e_b) − g_a(θ − h_b e_b))/2h_b]. grad sets its first argument
// to a gradient; it is called 2d times.
func Jacobian(h, theta []float64, grad func(g, theta []float64) error) error {
	d := len(theta)
	x := slices.Clone(theta)
	gp, gm := make([]float64, d), make([]float64, d)
	jac := make([]float64, d*d) // row a: ∂g/∂θ_a
	for a := range d {
		step := Step(theta, a)
		x[a] = theta[a] + step
		if err := grad(gp, x); err != nil {
			return err
		}
		x[a] = theta[a] - step
		if err := grad(gm, x); err != nil {
			return err
		}
		x[a] = theta[a]
		for b := range d {
			jac[a*d+b] = (gp[b] - gm[b]) / (2 * step)
		}
	}
	for a := range d {
		for b := a; b < d; b++ {
			h[a*d+b] += (jac[a*d+b] + jac[b*d+a]) / 2
		}
	}
	return nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package testgen

import (
	"math"
	"math/rand/v2"
)

// CustomMultilevel is a multilevel logistic regression written as a user
// would write it: an Energy with EnergyDiffs, a gradient and a dense
// Hessian, no GLM contract and no multilevel prior (issue 43's custom
// row: the root's TestAutoUnfinishedPilotScored and examples/defaultrows).
// θ holds P fixed effects, then one effect per group; datum i's linear
// predictor is x_iᵀβ + u_{g(i)}. Its DiffBound, which needs the root's
// types, is each caller's: DiffC gives the constants.
type CustomMultilevel struct {
	N, P, G int
	X       []float64 // N×P, row-major
	Grp     []int
	Y       []float64
}

// NewCustomMultilevel draws n data of p standard normal features in g
// groups (datum i in group i mod g), β ~ N(0, 0.5²) and u ~ N(0, 0.7²)
// from PCG(43, 1).
func NewCustomMultilevel(n, p, g int) *CustomMultilevel {
	rng := rand.New(rand.NewPCG(43, 1))
	e := &CustomMultilevel{N: n, P: p, G: g, X: make([]float64, n*p), Grp: make([]int, n), Y: make([]float64, n)}
	beta := make([]float64, p)
	for j := range beta {
		beta[j] = 0.5 * rng.NormFloat64()
	}
	u := make([]float64, g)
	for j := range u {
		u[j] = 0.7 * rng.NormFloat64()
	}
	for i := range n {
		e.Grp[i] = i % g
		z := u[e.Grp[i]]
		for j := range p {
			e.X[i*p+j] = rng.NormFloat64()
			z += e.X[i*p+j] * beta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			e.Y[i] = 1
		}
	}
	return e
}

// Len is N.
func (e *CustomMultilevel) Len() int { return e.N }

// Dim is P + G.
func (e *CustomMultilevel) Dim() int { return e.P + e.G }

func (e *CustomMultilevel) lin(i int, theta []float64) float64 {
	z := theta[e.P+e.Grp[i]]
	for j, v := range e.X[i*e.P : (i+1)*e.P] {
		z += v * theta[j]
	}
	return z
}

// softplus is log(1 + eᶻ), stably.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

func (e *CustomMultilevel) loss(i int, z float64) float64 { return softplus(z) - e.Y[i]*z }

// Energies sets dst[k] to datum idx[k]'s logistic loss at θ.
func (e *CustomMultilevel) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.loss(i, e.lin(i, theta))
	}
}

// EnergyDiffs sets dst[k] to datum idx[k]'s loss at θ minus that at θ′.
func (e *CustomMultilevel) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.loss(i, e.lin(i, theta)) - e.loss(i, e.lin(i, thetaNew))
	}
}

// AddGradient adds the w-weighted gradients of the data idx at θ to grad.
func (e *CustomMultilevel) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		r := w[k] * (1/(1+math.Exp(-e.lin(i, theta))) - e.Y[i])
		for j, v := range e.X[i*e.P : (i+1)*e.P] {
			grad[j] += r * v
		}
		grad[e.P+e.Grp[i]] += r
	}
}

// AddHessian adds the w-weighted Hessians of the data idx at θ to the
// upper triangle of the dense row-major h.
func (e *CustomMultilevel) AddHessian(h, theta []float64, idx []int, w []float64) {
	d := e.Dim()
	for k, i := range idx {
		s := 1 / (1 + math.Exp(-e.lin(i, theta)))
		c := w[k] * s * (1 - s)
		row := e.X[i*e.P : (i+1)*e.P]
		gj := e.P + e.Grp[i]
		for a, va := range row {
			for b := a; b < e.P; b++ {
				h[a*d+b] += c * va * row[b]
			}
			h[a*d+gj] += c * va
		}
		h[gj*d+gj] += c
	}
}

// DiffC returns the DiffBound constants ‖(x_i, 1)‖: |f(z) − f(z′)| ≤
// |z − z′| ≤ ‖(x_i, 1)‖·‖θ − θ′‖ for the logistic loss, whose derivative
// lies in [−1, 1].
func (e *CustomMultilevel) DiffC() []float64 {
	c := make([]float64, e.N)
	for i := range c {
		s := 1.0
		for _, v := range e.X[i*e.P : (i+1)*e.P] {
			s += v * v
		}
		c[i] = math.Sqrt(s)
	}
	return c
}

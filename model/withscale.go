// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"

	"github.com/exactmh/exactmh"
)

// WithScale is the prior of a model whose last coordinate is the log of
// a positive parameter — GaussianRegression's log σ, NegBinomialRegression's
// log φ — and whose other coordinates have the prior Base:
//
//	log p(θ) = log Base(θ[:d−1]) + log Scale(e^{θ[d−1]}) + θ[d−1],
//
// the last term the Jacobian of the log transform (ScalePrior's density
// in ℓ = log σ includes it). A nil Base is flat. It implements
// exactmh.PriorGradienter, exactmh.PriorHessianer (through Base's, if it
// has them; a Base without a gradient makes the gradient of the first
// d − 1 coordinates 0, as a Box's is) and the dimension check.
type WithScale struct {
	Base  exactmh.Prior
	Scale ScalePrior

	// noJacobian drops the Jacobian term (a mutant of the kit tests).
	noJacobian bool
}

// jacobian is the Jacobian's term: 1 or, in the mutant, 0.
func (p *WithScale) jacobian() float64 {
	if p.noJacobian {
		return 0
	}
	return 1
}

// Unwrap returns Base, the prior of the other coordinates
// (multilevel.ScaledPrior: a Gaussian multilevel model's layout is
// Base's).
func (p *WithScale) Unwrap() exactmh.Prior { return p.Base }

// LogPrior returns log p(θ).
func (p *WithScale) LogPrior(theta []float64) float64 {
	d := len(theta) - 1
	l := theta[d]
	f, _, _ := p.Scale.logDensity(l)
	f -= (1 - p.jacobian()) * l
	if p.Base != nil {
		f += p.Base.LogPrior(theta[:d])
	}
	return f
}

// AddLogPriorGradient adds ∇log p(θ) to grad.
func (p *WithScale) AddLogPriorGradient(grad, theta []float64) {
	d := len(theta) - 1
	_, d1, _ := p.Scale.logDensity(theta[d])
	grad[d] += d1 - (1 - p.jacobian())
	if g, ok := p.Base.(exactmh.PriorGradienter); ok {
		g.AddLogPriorGradient(grad[:d], theta[:d])
	}
}

// AddLogPriorHessian adds ∇²log p(θ) to the upper triangle of h
// (len(θ)² row-major). Base's Hessian is written into scratch memory and
// copied (the Laplace approximation calls it, not the kernels' steps).
func (p *WithScale) AddLogPriorHessian(h, theta []float64) {
	D := len(theta)
	d := D - 1
	_, _, d2 := p.Scale.logDensity(theta[d])
	h[d*D+d] += d2
	if ph, ok := p.Base.(exactmh.PriorHessianer); ok {
		sub := make([]float64, d*d)
		ph.AddLogPriorHessian(sub, theta[:d])
		for a := range d {
			for b := a; b < d; b++ {
				h[a*D+b] += sub[a*d+b]
			}
		}
	}
}

// CheckDim checks the scale prior and that Base has dimension d − 1.
func (p *WithScale) CheckDim(d int) error {
	if err := p.Scale.check(); err != nil {
		return fmt.Errorf("exactmh: WithScale: %w", err)
	}
	if d < 1 {
		return fmt.Errorf("exactmh: WithScale: dimension %d, want ≥ 1 (the last coordinate the log scale)", d)
	}
	if p.Base == nil {
		return nil
	}
	return checkPriorDim(p.Base, d-1)
}

// String describes the prior on the scale.
func (p *WithScale) String() string { return p.Scale.String() }

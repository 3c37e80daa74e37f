// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"

	"github.com/exactmh/exactmh/internal/vec"
)

// Laplace is the independent double-exponential prior
// θ_j ~ Laplace(Mean[j], Scale[j]), density e^{−|θ_j − μ_j|/b_j}/(2b_j): the
// Bayesian lasso's prior, and the one of the FlyMC robust-regression toy.
type Laplace struct {
	Mean, Scale []float64
	logNorm     float64
}

// NewLaplace returns the prior θ_j ~ Laplace(mean[j], scale[j])
// independently.
func NewLaplace(mean, scale []float64) (*Laplace, error) {
	if len(mean) == 0 || len(mean) != len(scale) {
		return nil, fmt.Errorf("exactmh: NewLaplace: len(mean) = %d, len(scale) = %d, want equal and > 0", len(mean), len(scale))
	}
	if err := vec.FiniteVec("NewLaplace: mean", mean); err != nil {
		return nil, err
	}
	l := &Laplace{Mean: append([]float64(nil), mean...), Scale: append([]float64(nil), scale...)}
	for j, b := range scale {
		if !(b > 0) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("exactmh: NewLaplace: scale[%d] = %v, want finite > 0", j, b)
		}
		if math.IsInf(2*b, 1) {
			l.logNorm -= math.Ln2 + math.Log(b) // log(2b) without overflow
		} else {
			l.logNorm -= math.Log(2 * b)
		}
	}
	return l, nil
}

// NewIsoLaplace returns the prior θ_j ~ Laplace(0, scale) for j < d.
func NewIsoLaplace(d int, scale float64) (*Laplace, error) {
	if err := vec.CheckDim("NewIsoLaplace", d); err != nil {
		return nil, err
	}
	s := make([]float64, d)
	for j := range s {
		s[j] = scale
	}
	return NewLaplace(make([]float64, d), s)
}

// LogPrior returns the normalised log density.
func (l *Laplace) LogPrior(theta []float64) float64 {
	lp := l.logNorm
	for j, v := range theta {
		lp -= math.Abs(v-l.Mean[j]) / l.Scale[j]
	}
	return lp
}

// AddLogPriorGradient adds −sign(θ_j − μ_j)/b_j to grad: the gradient away
// from the kinks, and 0 (a subgradient) exactly at θ_j = μ_j.
func (l *Laplace) AddLogPriorGradient(grad, theta []float64) {
	for j, v := range theta {
		switch {
		case v > l.Mean[j]:
			grad[j] -= 1 / l.Scale[j]
		case v < l.Mean[j]:
			grad[j] += 1 / l.Scale[j]
		}
	}
}

// AddLogPriorHessian adds nothing: log p is piecewise linear, so its
// second derivative is 0 away from the kinks θ_j = μ_j (and undefined on
// them: a posterior mode on a kink is not a smooth maximum, and a Laplace
// approximation there is poor; FindLaplace says so).
func (l *Laplace) AddLogPriorHessian(_, _ []float64) {}

func (l *Laplace) CheckDim(d int) error {
	if len(l.Mean) != d || len(l.Scale) != d {
		return fmt.Errorf("exactmh: Laplace prior has dimension %d (Scale %d), energy has %d", len(l.Mean), len(l.Scale), d)
	}
	return nil
}

// MinNormSubgradient is what FindMAP asks of a prior with kinks: at a coordinate on
// its kink (|θ_j − μ_j| ≤ 10⁻⁹(1 + |μ_j|)) the log prior's subdifferential is
// [−1/b_j, 1/b_j], so the smallest subgradient shrinks the likelihood's
// gradient toward zero by 1/b_j.
func (l *Laplace) MinNormSubgradient(theta, g []float64) {
	for j, v := range theta {
		if math.Abs(v-l.Mean[j]) > 1e-9*(1+math.Abs(l.Mean[j])) {
			continue
		}
		a := 1 / l.Scale[j]
		gl := g[j] // remove whatever prior gradient was added at θ_j
		switch {
		case v > l.Mean[j]:
			gl += a
		case v < l.Mean[j]:
			gl -= a
		}
		g[j] = math.Copysign(math.Max(math.Abs(gl)-a, 0), gl)
	}
}

// ModeWarnings says where θ is on a kink of the density, where it is not
// differentiable and a Gaussian approximation is poor (FindLaplace
// reports it).
func (l *Laplace) ModeWarnings(theta []float64) []string {
	var w []string
	for j, v := range theta {
		if math.Abs(v-l.Mean[j]) <= 1e-9*(1+math.Abs(l.Mean[j])) {
			w = append(w, fmt.Sprintf("θ̂[%d] = %.3g is on the Laplace prior's kink at %v: the log density is not differentiable there, and the Gaussian approximation is poor", j, v, l.Mean[j]))
		}
	}
	return w
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Prior is the prior density of θ. Kernels evaluate it exactly at every step
// (it is O(d) and never subsampled). LogPrior returns −Inf outside the
// support, which rejects a proposal before any datum is touched; truncated
// targets are expressed this way. Implementations must be safe for
// concurrent use.
type Prior interface {
	// LogPrior returns log p(θ) up to an additive constant, or −Inf outside
	// the support.
	LogPrior(theta []float64) float64
}

// flat is the prior of a Posterior whose Prior is nil: log p(θ) = 0.
type flat struct{}

func (flat) LogPrior([]float64) float64         { return 0 }
func (flat) AddLogPriorGradient(_, _ []float64) {}
func (flat) AddLogPriorHessian(_, _ []float64)  {}

// PriorGradienter is an optional capability of a Prior, needed by gradient
// kernels.
type PriorGradienter interface {
	// AddLogPriorGradient adds ∇log p(θ) to grad (θ inside the support).
	AddLogPriorGradient(grad, theta []float64)
}

// dimChecker is a Prior that knows its dimension (package model's priors
// do): Posterior.Validate and the bounds call CheckDim, so that a prior
// built for another d is an error, not an index out of range.
type dimChecker interface {
	CheckDim(d int) error
}

// Posterior is the target of a run: π(θ) ∝ prior(θ)·exp(−β Σ_i U_i(θ)).
//
// The zero values of its optional fields do the right thing: a nil Prior is
// Flat, and Beta 0 means β = 1 (no tempering).
type Posterior struct {
	// Energy holds the data and the per-datum energies U_i. Required.
	Energy Energy
	// Prior is evaluated exactly at every step. nil means Flat.
	Prior Prior
	// Beta is the tempering factor β > 0 (the TunaMH and PoissonMH
	// experiments use β = 1e-4 or 1e-5). 0 means 1.
	Beta float64
	// Names, if not nil, names the d coordinates of θ (one each, unique,
	// non-empty, without ',', '#', newlines or a trailing "__", so that they
	// are Stan CSV column names). They label Result.Summary's rows and the
	// package stancsv's columns; the package data's Design.Names are such
	// names. nil: theta[1] … theta[d].
	Names []string
}

// Validate reports whether the posterior is usable: a non-nil Energy with
// N > 0 and d > 0, a prior of the same dimension, and a finite β ≥ 0.
func (p *Posterior) Validate() error {
	if p == nil {
		return errors.New("exactmh: nil Posterior")
	}
	if p.Energy == nil {
		return errors.New("exactmh: Posterior.Energy is nil")
	}
	if n := p.Energy.Len(); n <= 0 {
		return fmt.Errorf("exactmh: Posterior.Energy has N = %d data, want > 0", n)
	}
	d := p.Energy.Dim()
	if d <= 0 || d > MaxDim {
		return fmt.Errorf("exactmh: Posterior.Energy has dimension %d, want in [1, MaxDim = %d]", d, MaxDim)
	}
	if !(p.Beta >= 0) || math.IsInf(p.Beta, 0) {
		return fmt.Errorf("exactmh: Posterior.Beta = %v, want finite ≥ 0 (0 means 1)", p.Beta)
	}
	if c, ok := p.Prior.(dimChecker); ok {
		if err := c.CheckDim(d); err != nil {
			return err
		}
	}
	return checkNames(p.Names, d)
}

// checkNames checks Posterior.Names against the dimension d.
func checkNames(names []string, d int) error {
	if names == nil {
		return nil
	}
	if len(names) != d {
		return fmt.Errorf("exactmh: Posterior.Names has %d names for dimension %d", len(names), d)
	}
	seen := make(map[string]int, d)
	for j, n := range names {
		if n == "" || strings.ContainsAny(n, ",#\n\r") || strings.HasSuffix(n, "__") {
			return fmt.Errorf("exactmh: Posterior.Names[%d] = %q: want a non-empty name without ',', '#', newlines or a trailing \"__\"", j, n)
		}
		if i, dup := seen[n]; dup {
			return fmt.Errorf("exactmh: Posterior.Names[%d] = Posterior.Names[%d] = %q: names must be unique", i, j, n)
		}
		seen[n] = j
	}
	return nil
}

// Dim returns the dimension of θ.
func (p *Posterior) Dim() int { return p.Energy.Dim() }

// Len returns the number of data N.
func (p *Posterior) Len() int { return p.Energy.Len() }

// beta returns the effective tempering factor.
func (p *Posterior) beta() float64 {
	if p.Beta == 0 {
		return 1
	}
	return p.Beta
}

// prior returns the effective prior.
func (p *Posterior) prior() Prior {
	if p.Prior == nil {
		return flat{}
	}
	return p.Prior
}

// LogDensity returns log prior(θ) − β Σ_i U_i(θ), the unnormalised log
// posterior, reading every datum. It returns an error for a θ of the wrong
// dimension or a non-finite energy.
func (p *Posterior) LogDensity(theta []float64) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return 0, err
	}
	if len(theta) != t.d {
		return 0, fmt.Errorf("exactmh: LogDensity: len(θ) = %d, want %d", len(theta), t.d)
	}
	lp := t.LogPrior(theta)
	if math.IsInf(lp, -1) {
		return lp, nil
	}
	u, err := t.TotalEnergy(theta)
	if err != nil {
		return 0, err
	}
	return lp - u, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math"
	"slices"
	"strings"

	"github.com/exactmh/exactmh"
)

// Small helpers the kernels share with the root package's, written against
// its exported surface.

// chunk is the number of data a kernel's own exact loop reads between two
// polls of Target.Interrupted (the root's Target polls as often).
const chunk = 512

// boundTol is the relative slack allowed for rounding when a bound is
// checked (as the root package's kernels allow).
const boundTol = 1e-9

// shared is Target.Shared, typed.
func shared[T any](t *exactmh.Target, key string, build func() (T, error)) (T, error) {
	v, err := t.Shared(key, func() (any, error) { return build() })
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// taylor is a GLM datum's expansion at the centre — z_i = x_iᵀθ̂,
// f′_i(z_i) and f″_i(z_i) — beside its remainder bound b_i: 32 bytes,
// within one cache line (as SMH's).
type taylor struct{ b, zHat, f1, f2 float64 }

// diff returns Û_i(θ′) − Û_i(θ) (untempered) at z = x_iᵀθ, zn = x_iᵀθ′:
// f′_i·(z′ − z) + f″_i·((z′ − ẑ)² − (z − ẑ)²)/2.
func (g taylor) diff(z, zn float64) float64 {
	a, b := zn-g.zHat, z-g.zHat
	return g.f1*(zn-z) + g.f2*(a*a-b*b)/2
}

// diffViolation reports datum i whose remainder difference d between θ
// and θ′ exceeds its bound: the kernel's probabilities would leave [0, 1]
// and the chain be inexact, so the step fails with the numbers.
func diffViolation(i int, d, bound float64, theta, next []float64) *exactmh.BoundViolation {
	return &exactmh.BoundViolation{Datum: i, Theta: slices.Clone(theta), ThetaNew: slices.Clone(next),
		Value: math.Abs(d), Bound: bound, Ratio: math.Abs(d) / bound}
}

// newEnergyError reports datum i's non-finite energy difference v between
// θ and θ′.
func newEnergyError(i int, theta, thetaNew []float64, v float64) *exactmh.EnergyError {
	e := &exactmh.EnergyError{Datum: i, Theta: slices.Clone(theta), Value: v}
	if thetaNew != nil {
		e.ThetaNew = slices.Clone(thetaNew)
	}
	return e
}

// within prefixes another layer's error with who, dropping the package
// prefix an exported function put on it (the API boundary adds it once);
// errors.Is and errors.As still see the original.
func within(who string, err error) error {
	if err == nil {
		return nil
	}
	return &innerError{who: who, err: err}
}

type innerError struct {
	who string
	err error
}

func (e *innerError) Error() string {
	return e.who + ": " + strings.TrimPrefix(strings.TrimPrefix(e.err.Error(), "exactmh: "), "multilevel: ")
}
func (e *innerError) Unwrap() error { return e.err }

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// newtonParts returns the exact Hessians of the energy and the prior, or
// why Newton's method does not apply.
func newtonParts(t *Target) (Hessianer, PriorHessianer, string) {
	hs := t.hessianer()
	if hs == nil {
		return nil, nil, fmt.Sprintf("energy %T implements neither Hessianer nor GLM", t.Energy())
	}
	switch t.Prior().(type) {
	case projector:
		return nil, nil, fmt.Sprintf("prior %T: the mode may lie on its boundary", t.Prior())
	case kinked:
		return nil, nil, fmt.Sprintf("prior %T: the mode may lie on a kink", t.Prior())
	}
	ph, ok := t.Prior().(PriorHessianer)
	if !ok {
		return nil, nil, fmt.Sprintf("prior %T does not implement PriorHessianer", t.Prior())
	}
	return hs, ph, ""
}

// newtonPoint is a point of the Newton search with everything computed
// there: f = −log π, its gradient and Hessian, the Newton step and the
// decrement gᵀ(H + τI)⁻¹g.
type newtonPoint struct {
	theta []float64
	f     float64
	g, h  []float64 // h: upper triangle of the d×d Hessian, row-major
	step  []float64 // −(H + τI)⁻¹g
	dec   float64   // gᵀ(H + τI)⁻¹g = −gᵀ step (twice the decrement)
	shift float64   // τ, 0 where H is positive definite
	// approx: h sums a subsample of the data (see newtonSearch's stride)
	approx bool
}

func newNewtonPoint(d int) *newtonPoint {
	return &newtonPoint{theta: make([]float64, d), g: make([]float64, d), h: make([]float64, d*d), step: make([]float64, d)}
}

// newtonCond is the condition number above which a Cholesky factor of the
// Hessian is treated as singular and the Hessian shifted.
const newtonCond = 1e14

// direction sets the Newton step and decrement of pt. Where H is not
// positive definite (or numerically singular) it factorises H + τI with τ
// from 10⁻³·max|H_jj| up by factors of 10 (Nocedal & Wright, Algorithm
// 3.3), which still gives a descent direction.
func (pt *newtonPoint) direction() error {
	d := len(pt.g)
	var chol mat.Cholesky
	pt.shift = 0
	if !chol.Factorize(mat.NewSymDense(d, pt.h)) || chol.Cond() > newtonCond {
		var scale float64
		for j := range d {
			scale = math.Max(scale, math.Abs(pt.h[j*d+j]))
		}
		tau := 1e-3 * math.Max(scale, 1e-300)
		shifted := make([]float64, d*d)
		for ; ; tau *= 10 {
			if math.IsInf(tau, 1) {
				return fmt.Errorf("exactmh: no positive definite shift of the Hessian at θ = %v", pt.theta)
			}
			copy(shifted, pt.h)
			for j := range d {
				shifted[j*d+j] += tau
			}
			if chol.Factorize(mat.NewSymDense(d, shifted)) && chol.Cond() <= newtonCond {
				break
			}
		}
		pt.shift = tau
	}
	p := mat.NewVecDense(d, pt.step)
	if err := chol.SolveVecTo(p, mat.NewVecDense(d, pt.g)); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return err
		}
	}
	for j := range pt.step {
		pt.step[j] = -pt.step[j]
	}
	pt.dec = -dot(pt.g, pt.step)
	return nil
}

// newtonSearch runs damped Newton from best.Theta and leaves the best point
// in best. It returns the exact Hessian of −log π at best.Theta (upper
// triangle) when the search converged.
//
// An iteration evaluates f, g and H at the full Newton step θ + p in one
// pass (a GLM) and takes it if it satisfies the Armijo condition
// f(θ + p) ≤ f(θ) − 10⁻⁴·gᵀ(H + τI)⁻¹g, or if f rose by no more than the
// rounding of a log density summed over many data while the decrement fell
// (near the mode the change of f drowns in rounding, the decrement does
// not). Otherwise it backtracks by energies alone, to the minimiser of the
// quadratic through f(θ), its slope and the last trial, kept within
// [0.1, 0.5] of the last step, and evaluates g and H only where it stops.
func newtonSearch(ctx context.Context, t *Target, hs Hessianer, ph PriorHessianer, best *MAP, set MAPSettings) ([]float64, error) {
	d := t.Dim()
	prior := make([]float64, d*d)
	// Far from the mode (decrement above newtonNear) a GLM's Hessian sums
	// every stride-th datum's rank-one term (times stride): at d = 32
	// those d² terms cost ten times the rest of a pass, and a Hessian good
	// to a fraction of a percent steers the damped steps as well as the
	// exact one. Near the mode, where Newton converges quadratically only
	// with the exact Hessian, and for the Hessian the Laplace
	// approximation is built on, every datum counts.
	stride := 1
	if d >= newtonSubsampleDim {
		stride = max(1, t.N()/newtonHessianRows)
	}
	eval := func(pt *newtonPoint) error {
		clear(pt.g)
		clear(pt.h)
		lp := t.LogPrior(pt.theta)
		if math.IsInf(lp, -1) {
			return errOutside
		}
		u, passes, err := t.newtonSweep(hs, pt.h, pt.g, pt.theta, stride)
		pt.approx = stride > 1
		best.Passes += passes
		if err != nil {
			return err
		}
		pt.f = u - lp
		// Subtract ∇log p and ∇²log p.
		for j := range pt.g {
			pt.g[j] = -pt.g[j]
		}
		if err := t.AddLogPriorGradient(pt.g, pt.theta); err != nil {
			return err
		}
		for j := range pt.g {
			pt.g[j] = -pt.g[j]
		}
		clear(prior)
		ph.AddLogPriorHessian(prior, pt.theta)
		for a := range d {
			for b := a; b < d; b++ {
				pt.h[a*d+b] -= prior[a*d+b]
			}
		}
		if err := finiteHessian(pt.h, d, pt.theta); err != nil {
			return err
		}
		return pt.direction()
	}
	energy := func(theta []float64) (float64, error) {
		lp := t.LogPrior(theta)
		if math.IsInf(lp, -1) {
			return math.Inf(1), nil
		}
		best.Passes++
		u, err := t.TotalEnergy(theta)
		return u - lp, err
	}

	cur, trial := newNewtonPoint(d), newNewtonPoint(d)
	copy(cur.theta, best.Theta)
	if err := eval(cur); err != nil {
		return nil, fmt.Errorf("exactmh: FindMAP: %w", err)
	}
	report := func() {
		copy(best.Theta, cur.theta)
		best.LogDensity = -cur.f
		best.GradNorm = math.Sqrt(dot(cur.g, cur.g))
		best.Decrement = math.NaN()
		if cur.shift == 0 {
			best.Decrement = cur.dec / 2
		}
	}
	// exact re-evaluates the current point with the exact Hessian.
	exact := func() error {
		stride = 1
		if err := eval(cur); err != nil {
			return fmt.Errorf("exactmh: FindMAP: %w", err)
		}
		return nil
	}
	const armijo = 1e-4
	for {
		report()
		if cur.shift == 0 && cur.dec/2 < newtonNear {
			stride = 1 // near the mode: exact Hessians from here on
		}
		if cur.shift == 0 && cur.dec/2 <= set.Tol || maxAbs(cur.g) < set.GradTol {
			if cur.approx {
				if err := exact(); err != nil {
					return nil, err
				}
				continue // judged again with the exact Hessian
			}
			return cur.h, nil // (H not positive definite is for the caller)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, err)
		}
		if best.Iterations >= set.MaxIterations {
			return nil, fmt.Errorf("exactmh: FindMAP did not converge in %d Newton iterations (‖∇‖ = %.3g, decrement %.3g)", best.Iterations, best.GradNorm, cur.dec/2)
		}
		best.Iterations++

		// The full step, with f, g and H in one pass.
		for j := range d {
			trial.theta[j] = cur.theta[j] + cur.step[j]
		}
		var trialErr error
		ft := math.Inf(1)
		if err := eval(trial); err == nil {
			ft = trial.f
		} else {
			trialErr = err
		}
		accept := trialErr == nil && (ft <= cur.f-armijo*cur.dec ||
			ft <= cur.f+logDensityNoise(cur.f) && trial.shift == 0 && trial.dec < cur.dec)
		if !accept && cur.shift == 0 && cur.dec/2 <= logDensityNoise(cur.f) {
			// The gain left is below the rounding of f, and the full step
			// did not reduce the decrement: the rounding floor. Backtracking
			// could only waste passes.
			if cur.approx {
				if err := exact(); err != nil {
					return nil, err
				}
				continue
			}
			return cur.h, nil
		}
		// Backtrack by energies alone.
		floor := false
		for step, last := 1.0, ft; !accept; {
			next := 0.5 * step
			if q := last - cur.f + cur.dec*step; q > 0 && !math.IsInf(last, 0) {
				next = cur.dec * step * step / (2 * q)
			}
			step = min(max(next, 0.1*step), 0.5*step)
			if step < 1e-10 {
				if cur.shift == 0 && cur.dec/2 <= logDensityNoise(cur.f) {
					floor = true // the rounding floor of f: converged
					break
				}
				err := fmt.Errorf("exactmh: FindMAP: the line search found no decrease along the Newton direction at θ = %v (‖∇‖ = %.3g, decrement %.3g)", cur.theta, best.GradNorm, cur.dec/2)
				if trialErr != nil {
					err = fmt.Errorf("%w; the full step failed with: %w", err, trialErr)
				}
				return nil, err
			}
			for j := range d {
				trial.theta[j] = cur.theta[j] + step*cur.step[j]
			}
			f, err := energy(trial.theta)
			if err != nil {
				f = math.Inf(1)
			}
			last = f
			if f <= cur.f-armijo*step*cur.dec {
				if err := eval(trial); err != nil {
					return nil, fmt.Errorf("exactmh: FindMAP: %w", err)
				}
				accept = true
			}
		}
		if floor {
			if !cur.approx {
				return cur.h, nil
			}
			if err := exact(); err != nil {
				return nil, err
			}
			continue
		}
		cur, trial = trial, cur
	}
}

// While Newton is far from the mode (decrement above newtonNear nats) a
// GLM of dimension newtonSubsampleDim or more has its Hessian summed over
// about newtonHessianRows data (newtonSearch): its relative error is then
// a fraction of a percent, and the d² terms of the other data, most of a
// pass's arithmetic in such dimensions, are skipped.
const (
	newtonHessianRows  = 1 << 17
	newtonSubsampleDim = 12
	newtonNear         = 1.0
)

// errOutside is the error of a Newton evaluation outside the prior's
// support (a user's PriorHessianer with a bounded support).
var errOutside = errors.New("θ is outside the prior's support")

// maxAbs returns max_j |v_j|.
func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

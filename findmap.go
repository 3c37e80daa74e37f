// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/optimize"
)

// MAPSettings configure FindMAP. A nil *MAPSettings or zero fields mean the
// defaults.
type MAPSettings struct {
	// GradTol stops the search when every component of the gradient of the
	// log posterior is below it in magnitude (0: 1e-6).
	GradTol float64
	// MaxIterations bounds the L-BFGS iterations (0: 1000).
	MaxIterations int
}

// MAP is the result of FindMAP.
type MAP struct {
	// Theta is the best point found.
	Theta []float64
	// LogDensity is log prior(θ) − βΣU_i(θ) at Theta.
	LogDensity float64
	// GradNorm is the Euclidean norm of ∇ log posterior at Theta.
	GradNorm float64
	// Iterations is the number of L-BFGS iterations.
	Iterations int
	// Evals and GradEvals count the datum energy and gradient evaluations.
	Evals, GradEvals int64
}

// FindMAP returns the maximum a posteriori point of p by L-BFGS
// (gonum/optimize) from init, on the full tempered log posterior: every
// evaluation reads all N data. It is what the MAP-based kernels need: SMH's
// control-variate centre, FlyMC's tuning point (FlyMC.TightAt) and a start
// for any chain (Settings.Init).
//
// The energy must implement Gradienter and the prior PriorGradienter (all the
// ready-made ones do). Outside a bounded prior's support the objective is
// +Inf, so the line search backs off from the boundary; a MAP on the boundary
// is approached but not reached. The search converges when the gradient is
// below MAPSettings.GradTol, when the objective stops changing, or when the
// line search can no longer improve it with ‖∇‖ ≤ 10⁻³ (the rounding floor
// of a gradient summed over many data). If the search stops without converging —
// the iteration limit, a non-finite value, a cancelled ctx — FindMAP returns
// the best point found together with an error saying why.
func FindMAP(ctx context.Context, p *Posterior, init []float64, s *MAPSettings) (*MAP, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	d, n := t.Dim(), t.N()
	if len(init) != d {
		return nil, fmt.Errorf("exactmh: FindMAP: len(init) = %d, want %d", len(init), d)
	}
	if !t.HasGradient() {
		return nil, fmt.Errorf("exactmh: FindMAP needs gradients: energy %T must implement Gradienter and prior %T PriorGradienter", p.Energy, t.Prior())
	}
	var set MAPSettings
	if s != nil {
		set = *s
	}
	if set.GradTol < 0 || math.IsNaN(set.GradTol) || set.MaxIterations < 0 {
		return nil, fmt.Errorf("exactmh: FindMAP: GradTol = %v, MaxIterations = %d, want ≥ 0", set.GradTol, set.MaxIterations)
	}
	if set.GradTol == 0 {
		set.GradTol = 1e-6
	}
	if set.MaxIterations == 0 {
		set.MaxIterations = 1000
	}
	if lp := t.LogPrior(init); math.IsInf(lp, -1) || math.IsNaN(lp) {
		return nil, fmt.Errorf("exactmh: FindMAP: init = %v is outside the prior's support", init)
	}

	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	best := &MAP{Theta: slices.Clone(init), LogDensity: math.Inf(-1)}
	var evalErr error
	// f(θ) = βΣU_i(θ) − log prior(θ), the negative log posterior.
	f := func(theta []float64) float64 {
		lp := t.LogPrior(theta)
		if math.IsInf(lp, -1) {
			return math.Inf(1)
		}
		u, err := t.TotalEnergy(theta)
		if err != nil {
			evalErr = err
			return math.NaN()
		}
		if v := lp - u; v > best.LogDensity {
			best.LogDensity = v
			copy(best.Theta, theta)
		}
		return u - lp
	}
	grad := func(g, theta []float64) {
		clear(g)
		if math.IsInf(t.LogPrior(theta), -1) {
			return // outside the support f is +Inf; any finite gradient will do
		}
		if err := t.AddGradient(g, theta, idx, nil); err != nil {
			evalErr = err
		}
		// g holds β∇ΣU; subtract ∇log prior.
		for j := range g {
			g[j] = -g[j]
		}
		if err := t.AddLogPriorGradient(g, theta); err != nil {
			evalErr = err
		}
		for j := range g {
			g[j] = -g[j]
		}
	}
	res, err := optimize.Minimize(optimize.Problem{Func: f, Grad: grad},
		slices.Clone(init),
		&optimize.Settings{
			GradientThreshold: set.GradTol,
			MajorIterations:   set.MaxIterations,
			Converger:         &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-12, Iterations: 50},
			Recorder:          ctxRecorder{ctx},
		},
		&optimize.LBFGS{})

	// Report the best point seen, with its gradient.
	g := make([]float64, d)
	grad(g, best.Theta)
	best.GradNorm = math.Sqrt(dot(g, g))
	best.Evals, best.GradEvals = t.Evals(), t.GradEvals()
	if res != nil {
		best.Iterations = res.Stats.MajorIterations
	}
	switch {
	case ctx.Err() != nil:
		return best, fmt.Errorf("exactmh: FindMAP stopped after %d iterations: %w", best.Iterations, ctx.Err())
	case evalErr != nil:
		return best, fmt.Errorf("exactmh: FindMAP: %w", evalErr)
	case err != nil && best.GradNorm <= stallGrad:
		// The line search can make no further progress this close to the
		// optimum: rounding of the summed gradient, not a failure.
		return best, nil
	case err != nil:
		return best, fmt.Errorf("exactmh: FindMAP: %w (‖∇‖ = %.3g after %d iterations)", err, best.GradNorm, best.Iterations)
	case res.Status == optimize.IterationLimit:
		return best, fmt.Errorf("exactmh: FindMAP did not converge in %d iterations (‖∇‖ = %.3g)", best.Iterations, best.GradNorm)
	}
	return best, nil
}

// stallGrad is the gradient norm below which a line search that cannot
// improve is taken as converged.
const stallGrad = 1e-3

// ctxRecorder stops gonum's optimiser when ctx is done.
type ctxRecorder struct{ ctx context.Context }

func (r ctxRecorder) Init() error { return nil }
func (r ctxRecorder) Record(*optimize.Location, optimize.Operation, *optimize.Stats) error {
	if err := r.ctx.Err(); err != nil {
		return errors.Join(errMAPCanceled, err)
	}
	return nil
}

var errMAPCanceled = errors.New("canceled")

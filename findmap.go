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
// +Inf, so the line search backs off from the boundary; a MAP on the
// boundary is approached to within rounding and returned without error, with
// a GradNorm that need not be small. The search converges when the gradient is
// below MAPSettings.GradTol, when the objective stops changing, or when the
// line search can no longer improve it with ‖∇‖ ≤ max(10⁻³, 10⁻⁸‖∇ at
// init‖) (the rounding floor of a gradient summed over many data). If the
// search stops without converging — the iteration limit, a non-finite value,
// a cancelled ctx — FindMAP returns the best point found together with an
// error saying why.
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
		if t.grad == nil {
			return nil, fmt.Errorf("exactmh: FindMAP needs gradients: energy %T implements neither Gradienter nor GLM", p.Energy)
		}
		return nil, fmt.Errorf("exactmh: FindMAP needs gradients: prior %T does not implement PriorGradienter", t.Prior())
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

	idx := allIndices(n)
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
			if evalErr == nil {
				evalErr = err
			}
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
		if err := t.AddGradient(g, theta, idx, nil); err != nil && evalErr == nil {
			evalErr = err
		}
		// g holds β∇ΣU; subtract ∇log prior.
		for j := range g {
			g[j] = -g[j]
		}
		if err := t.AddLogPriorGradient(g, theta); err != nil && evalErr == nil {
			evalErr = err
		}
		for j := range g {
			g[j] = -g[j]
		}
	}
	f(best.Theta) // the start is the best point until a better one is seen
	// The gradient's size at the start sets the scale of its rounding floor.
	g0 := make([]float64, d)
	grad(g0, best.Theta)
	startNorm := math.Sqrt(dot(g0, g0))
	res, err := optimize.Minimize(optimize.Problem{Func: f, Grad: grad},
		slices.Clone(init),
		&optimize.Settings{
			GradientThreshold: set.GradTol,
			MajorIterations:   set.MaxIterations,
			Converger:         &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-12, Iterations: 50},
			Recorder:          ctxRecorder{ctx},
		},
		&optimize.LBFGS{})

	// Report the best point seen, with its gradient (for priors with kinks,
	// the smallest subgradient).
	g := make([]float64, d)
	grad(g, best.Theta)
	if k, ok := t.Prior().(kinked); ok {
		for j := range g { // g is ∇f = −∇log π: flip to the log posterior's
			g[j] = -g[j]
		}
		k.minNormSubgradient(best.Theta, g)
	}
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
	case err != nil && best.GradNorm <= max(stallGrad, 1e-8*startNorm):
		// The line search can make no further progress this close to the
		// optimum: rounding of the summed gradient, not a failure.
		return best, nil
	case err != nil && isProjectable(t.Prior()):
		// L-BFGS stalls against the edge of a box or ball when the mode lies
		// on it: finish by projected gradient ascent.
		if perr := projectedAscent(ctx, t, best, set); perr != nil {
			return best, perr
		}
		best.Evals, best.GradEvals = t.Evals(), t.GradEvals()
		return best, nil
	case err != nil:
		return best, fmt.Errorf("exactmh: FindMAP: %w (‖∇‖ = %.3g after %d iterations)", err, best.GradNorm, best.Iterations)
	case res.Status == optimize.IterationLimit:
		return best, fmt.Errorf("exactmh: FindMAP did not converge in %d iterations (‖∇‖ = %.3g)", best.Iterations, best.GradNorm)
	}
	return best, nil
}

// kinked is a prior with points of non-differentiability (Laplace): at a
// kink, optimality is a zero subgradient, not a zero gradient.
type kinked interface {
	// minNormSubgradient replaces g, a gradient of the log posterior at θ,
	// by the smallest-norm element of its subdifferential.
	minNormSubgradient(theta, g []float64)
}

// projector is a prior whose support has a cheap Euclidean projection.
type projector interface {
	project(theta []float64)
}

func isProjectable(p Prior) bool { _, ok := p.(projector); return ok }

// project clamps θ into the box.
func (b *Box) project(theta []float64) {
	for j := range theta {
		theta[j] = min(max(theta[j], b.Lo[j]), b.Hi[j])
	}
}

// project scales θ − centre back onto the ball (shrunk by a few ulps so the
// result is inside despite rounding).
func (b *Ball) project(theta []float64) {
	var s float64
	for j, v := range theta {
		if len(b.Center) > 0 {
			v -= b.Center[j]
		}
		s += v * v
	}
	r := math.Sqrt(s)
	if r <= b.Radius {
		return
	}
	f := b.Radius / r * (1 - 1e-12)
	for j := range theta {
		c := 0.0
		if len(b.Center) > 0 {
			c = b.Center[j]
		}
		theta[j] = c + (theta[j]-c)*f
	}
}

// projectedAscent improves best by projected gradient ascent with
// backtracking (Armijo) until a step changes θ by less than 10⁻¹⁰
// relative: the way to a mode on the boundary of a box or ball.
func projectedAscent(ctx context.Context, t *Target, best *MAP, set MAPSettings) error {
	proj := t.Prior().(projector)
	d := len(best.Theta)
	g, trial := make([]float64, d), make([]float64, d)
	idx := allIndices(t.N())
	theta := best.Theta
	logPi := func(v []float64) (float64, error) {
		u, err := t.TotalEnergy(v)
		return t.LogPrior(v) - u, err
	}
	grad := func(v []float64) error {
		clear(g)
		if err := t.AddGradient(g, v, idx, nil); err != nil {
			return err
		}
		for j := range g {
			g[j] = -g[j]
		}
		return t.AddLogPriorGradient(g, v)
	}
	lp, err := logPi(theta)
	if err != nil {
		return err
	}
	step := 1.0
	for it := range 20 * set.MaxIterations {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("exactmh: FindMAP stopped: %w", err)
		}
		if err := grad(theta); err != nil {
			return err
		}
		norm := math.Sqrt(dot(g, g))
		if norm == 0 {
			break
		}
		if it == 0 {
			step = 1 / norm
		}
		moved := false
		for ; step > 1e-300; step /= 2 {
			for j := range trial {
				trial[j] = theta[j] + step*g[j]
			}
			proj.project(trial)
			lt, err := logPi(trial)
			if err != nil {
				return err
			}
			var dec float64
			for j := range trial {
				dec += g[j] * (trial[j] - theta[j])
			}
			if lt >= lp+1e-4*dec && lt >= lp {
				var change, size float64
				for j := range trial {
					change += (trial[j] - theta[j]) * (trial[j] - theta[j])
					size += theta[j] * theta[j]
				}
				copy(theta, trial)
				lp = lt
				moved = change > 1e-20*(1+size)
				step *= 2
				break
			}
		}
		if !moved {
			break
		}
		best.Iterations++
	}
	best.LogDensity = lp
	if err := grad(theta); err != nil {
		return err
	}
	best.GradNorm = math.Sqrt(dot(g, g))
	return nil
}

// allIndices returns 0, …, n−1.
func allIndices(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// stallGrad is the gradient norm below which a line search that cannot
// improve is taken as converged (or 10⁻⁸ of the gradient at the start, if
// larger: on big data the summed gradient's rounding floor grows with it).
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

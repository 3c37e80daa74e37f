// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package newton is the one damped Newton loop of the module: it
// minimises f over R^n from the callers' f, gradient and factored
// Hessian (dense or sparse: a Factor, as internal/precision's Hessian
// types are), with the acceptance rule, damping, stopping rule and
// iteration cap a Policy states. FindMAP and FindLaplace (the root's
// newtonSearch), the Laplace-EM centre of package multilevel (the
// effects' mode given the scales) and its backfitting centre (one
// block's step at a time, in a Gauss–Seidel sweep of its own) call it.
package newton

import (
	"context"
	"math"

	"github.com/exactmh/exactmh/internal/vec"
)

// Factor is the Hessian H of f at a point, which it factors, as H itself
// or a positive definite substitute (H + τI, a diagonal), and solves with.
// precision.DenseHessian and precision.SparseHessian are two.
type Factor interface {
	// Factor factors H, or its substitute, and returns 0 where it
	// factored H itself and a positive number (τ of H + τI, 1 for
	// another substitute) where it did not.
	Factor() (shift float64, err error)
	// Solve sets dst to the factored matrix's inverse times b.
	Solve(dst, b []float64) error
}

// Point is a point of the search: X, f(X), and where Derived the
// gradient G, the Hessian's factor, the Newton step Step = −H⁻¹G and the
// decrement Dec = −GᵀStep (twice the predicted decrease), H the factored
// matrix (with Shift > 0 where that is not f's Hessian).
type Point struct {
	X, G, Step []float64
	F          float64
	Dec        float64
	Shift      float64
	Hess       Factor
	// Derived says that G, Step, Dec and Shift hold at X.
	Derived bool
}

// NewtonPoint returns pt: a Point is a Pointer.
func (pt *Point) NewtonPoint() *Point { return pt }

// Direction factors pt.Hess and sets the Newton step and decrement from
// pt.G, then marks pt Derived. Solving for G and negating gives the bits
// of solving for −G: IEEE rounding is symmetric in sign.
func (pt *Point) Direction() error {
	tau, err := pt.Hess.Factor()
	if err != nil {
		return err
	}
	pt.Shift = tau
	if err := pt.Hess.Solve(pt.Step, pt.G); err != nil {
		return err
	}
	for j := range pt.Step {
		pt.Step[j] = -pt.Step[j]
	}
	pt.Dec = -vec.Dot(pt.G, pt.Step)
	pt.Derived = true
	return nil
}

// Pointer is a caller's point type, which carries a Point and whatever
// else the caller's evaluation records there (*Point itself is one).
type Pointer interface{ NewtonPoint() *Point }

// Problem is the objective f: Eval sets, at pt's X, f (F), the gradient
// (G) and the factored Hessian's Newton step (through Point.Direction);
// Value returns f(x) alone, +Inf (or an error) where f is not defined.
// The loop calls Value only to search along a step (not under
// LineSearch None).
type Problem[P Pointer] interface {
	Eval(pt P) error
	Value(x []float64) (float64, error)
}

// LineSearch is how a step that the acceptance rule refuses is shortened.
type LineSearch int

const (
	// Quadratic backtracks to the minimiser of the quadratic through
	// f(x), its slope −Dec and the last trial, kept within [0.1, 0.5] of
	// the last step length (Nocedal & Wright, §3.5).
	Quadratic LineSearch = iota
	// Halve halves the step length.
	Halve
	// None takes the step without evaluating f: its length is 1, or
	// MaxStep/max_j|Step_j| where that is smaller.
	None
)

// Floor is what the search does where the gain the step predicts,
// Dec/2, is within the rounding of f (Policy.Noise): there the change of
// f, a sum over many data, drowns in rounding and cannot be seen to
// descend.
type Floor int

const (
	// FloorStop (with Fused): a full step that raises f by no more than
	// its rounding is accepted if it lowers the decrement (which does not
	// drown), and a point at the floor (Shift 0) whose full step is
	// refused, or whose line search finds no decrease, is converged.
	FloorStop Floor = iota
	// FloorFullStep takes the full step at the floor without testing f.
	FloorFullStep
)

// Policy is the rules of one damped Newton search.
type Policy struct {
	// Armijo is c of the sufficient-decrease rule f(x + λp) ≤ f(x) −
	// c·λ·Dec; 0 accepts any f(x + λp) ≤ f(x).
	Armijo float64
	// LineSearch is the damping of a refused step; MinStep the step
	// length below which the line search gives up (NoDecrease).
	LineSearch LineSearch
	MinStep    float64
	// MaxStep, under LineSearch None, bounds max_j |λ·Step_j|.
	MaxStep float64
	// Fused evaluates the full step with Eval (f, gradient and Hessian:
	// one pass over a GLM's data) before deciding on it; otherwise trials
	// are evaluated with Value and the accepted point with Eval at the
	// next iteration.
	Fused bool
	// Noise is the rounding of f's value, nil for none; Floor what is
	// done within it.
	Noise func(f float64) float64
	Floor Floor
	// The search has converged where Shift is 0 and Dec/2 ≤ DecTol, or
	// max_j |G_j| < GradTol, or max_j |Step_j| < StepTol (NaN, or 0 for
	// the last two, never holds).
	DecTol, GradTol, StepTol float64
	// MaxIterations is the cap on Search.Iterations.
	MaxIterations int
}

// Outcome is why a search stopped.
type Outcome int

const (
	// Converged: the stopping rule held, or the rounding floor of f.
	Converged Outcome = iota
	// MaxIterations: Search.Iterations reached Policy.MaxIterations.
	MaxIterations
	// NoDecrease: the line search found no acceptable step longer than
	// MinStep; the error, if any, is why the full step's Eval failed.
	NoDecrease
	// Stopped: the context was done; the error is its Err.
	Stopped
	// Failed: an evaluation at the current point or an accepted one
	// failed; the error is its.
	Failed
)

// Search is one damped Newton search over Problem under Policy.
type Search[P Pointer] struct {
	Problem Problem[P]
	Policy  Policy
	// Iterations counts the steps taken, from its value at the call: the
	// cap applies to it.
	Iterations int
	// Lambda is the length of the last step taken.
	Lambda float64
	// Report, if not nil, is called with each point the search stands at
	// once it is Derived.
	Report func(pt P)
}

// Minimize runs the search from cur, whose X and F are set (and its
// derivatives, if Derived), using trial as the other point's storage,
// and returns the point it stopped at with the outcome. The two points
// swap roles as steps are taken, so the one returned is either.
//
// An iteration makes cur Derived (Eval) if it is not, stops if the
// stopping rule holds, and otherwise tries the step x + λ·Step from λ = 1
// (or, under None, takes it): a trial is accepted by the sufficient
// decrease rule (Policy.Armijo) or the rounding-floor rules (Floor), and
// a refused one is shortened by LineSearch until one is accepted or λ
// falls below MinStep.
func (s *Search[P]) Minimize(ctx context.Context, cur, trial P) (P, Outcome, error) {
	pol := &s.Policy
	for {
		c := cur.NewtonPoint()
		if !c.Derived {
			if s.Iterations >= pol.MaxIterations {
				return cur, MaxIterations, nil
			}
			if err := ctx.Err(); err != nil {
				return cur, Stopped, err
			}
			if err := s.Problem.Eval(cur); err != nil {
				return cur, Failed, err
			}
		}
		if s.Report != nil {
			s.Report(cur)
		}
		if c.Shift == 0 && c.Dec/2 <= pol.DecTol || maxAbs(c.G) < pol.GradTol || maxAbs(c.Step) < pol.StepTol {
			return cur, Converged, nil
		}
		if err := ctx.Err(); err != nil {
			return cur, Stopped, err
		}
		if s.Iterations >= pol.MaxIterations {
			return cur, MaxIterations, nil
		}
		s.Iterations++
		t := trial.NewtonPoint()
		t.Derived = false
		floor := pol.Noise != nil && c.Dec/2 <= pol.Noise(c.F)

		if pol.LineSearch == None || pol.Floor == FloorFullStep && floor {
			// The step without a test of f.
			lambda := 1.0
			if pol.LineSearch == None {
				if size := maxAbs(c.Step); pol.MaxStep > 0 && size > pol.MaxStep {
					lambda = pol.MaxStep / size
				}
				s.move(t, c, lambda)
				t.F = math.NaN()
			} else {
				s.move(t, c, lambda)
				f, err := s.Problem.Value(t.X)
				if err != nil {
					return cur, Failed, err
				}
				t.F = f
			}
			cur, trial = trial, cur
			continue
		}

		// The full step: f alone, or (Fused) f, g and H in one evaluation.
		s.move(t, c, 1)
		var trialErr error
		ft := math.Inf(1)
		if pol.Fused {
			if err := s.Problem.Eval(trial); err == nil {
				ft = t.F
			} else {
				trialErr = err
				t.Derived = false
			}
		} else if f, err := s.Problem.Value(t.X); err == nil {
			ft = f
		}
		accept := trialErr == nil && (pol.sufficient(ft, c, 1) ||
			pol.Fused && pol.Floor == FloorStop && pol.Noise != nil && ft <= c.F+pol.Noise(c.F) && t.Shift == 0 && t.Dec < c.Dec)
		if !accept && pol.Floor == FloorStop && c.Shift == 0 && floor {
			// The gain left is below the rounding of f, and the full step
			// did not reduce the decrement: the rounding floor.
			// Backtracking could only waste evaluations.
			return cur, Converged, nil
		}
		if accept && !pol.Fused {
			t.F = ft
		}
		// Backtrack by values alone.
		for lambda, last := 1.0, ft; !accept; {
			next := 0.5 * lambda
			if pol.LineSearch == Quadratic {
				if q := last - c.F + c.Dec*lambda; q > 0 && !math.IsInf(last, 0) {
					next = c.Dec * lambda * lambda / (2 * q)
				}
				next = min(max(next, 0.1*lambda), 0.5*lambda)
			}
			lambda = next
			if lambda < pol.MinStep {
				if pol.Floor == FloorStop && c.Shift == 0 && floor {
					return cur, Converged, nil // the rounding floor of f
				}
				return cur, NoDecrease, trialErr
			}
			s.move(t, c, lambda)
			f, err := s.Problem.Value(t.X)
			if err != nil {
				f = math.Inf(1)
			}
			last = f
			if pol.sufficient(f, c, lambda) {
				if pol.Fused {
					if err := s.Problem.Eval(trial); err != nil {
						return cur, Failed, err
					}
				} else {
					t.F, t.Derived = f, false
				}
				accept = true
			}
		}
		cur, trial = trial, cur
	}
}

// move sets t.X = c.X + λ·c.Step and records λ (at λ = 1 the bits of
// c.X + c.Step: 1·s is s).
func (s *Search[P]) move(t, c *Point, lambda float64) {
	s.Lambda = lambda
	for j, x := range c.X {
		t.X[j] = x + lambda*c.Step[j]
	}
}

// sufficient is the acceptance rule for f(x + λp) = f.
func (pol *Policy) sufficient(f float64, c *Point, lambda float64) bool {
	if pol.Armijo == 0 {
		return f <= c.F
	}
	return f <= c.F-pol.Armijo*lambda*c.Dec
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// Funcs is a Problem of two functions, for a caller whose evaluation is
// a closure over its own state (as http.HandlerFunc is a Handler).
type Funcs struct {
	EvalFunc  func(pt *Point) error
	ValueFunc func(x []float64) (float64, error)
}

// Eval calls f.EvalFunc.
func (f Funcs) Eval(pt *Point) error { return f.EvalFunc(pt) }

// Value calls f.ValueFunc.
func (f Funcs) Value(x []float64) (float64, error) { return f.ValueFunc(x) }

// FactorFuncs is a Factor of two functions: FactorFunc factors H itself
// (Factor returns shift 0) and SolveFunc solves with it.
type FactorFuncs struct {
	FactorFunc func() error
	SolveFunc  func(dst, b []float64)
}

// Factor calls f.FactorFunc and returns shift 0.
func (f FactorFuncs) Factor() (float64, error) { return 0, f.FactorFunc() }

// Solve calls f.SolveFunc.
func (f FactorFuncs) Solve(dst, b []float64) error {
	f.SolveFunc(dst, b)
	return nil
}

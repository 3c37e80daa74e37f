// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package newton

import (
	"context"
	"errors"
	"math"
	"testing"
)

// diag is a diagonal Hessian: Factor is exact, Solve divides.
type diag struct{ d []float64 }

func (h *diag) Factor() (float64, error) { return 0, nil }
func (h *diag) Solve(dst, b []float64) error {
	for j, v := range b {
		dst[j] = v / h.d[j]
	}
	return nil
}

// hyperbola is f(x) = Σ_j √(1 + x_j²): convex, minimum n at 0, and pure
// Newton (x ↦ −x³) diverges from |x_j| > 1, so a search from there
// converges only through its damping. values counts Value's calls; inf
// makes Value +Inf everywhere, fail Eval fail.
type hyperbola struct {
	values    int // Value's calls
	evals     int // Eval's
	inf, fail bool
}

func (p *hyperbola) point(n int) *Point {
	return &Point{X: make([]float64, n), G: make([]float64, n), Step: make([]float64, n), Hess: &diag{make([]float64, n)}}
}

func (p *hyperbola) Value(x []float64) (float64, error) {
	p.values++
	if p.inf {
		return math.Inf(1), nil
	}
	var f float64
	for _, v := range x {
		f += math.Sqrt(1 + v*v)
	}
	return f, nil
}

func (p *hyperbola) Eval(pt *Point) error {
	p.evals++
	if p.fail {
		return errors.New("outside")
	}
	pt.F = 0
	h := pt.Hess.(*diag)
	for j, v := range pt.X {
		r := math.Sqrt(1 + v*v)
		pt.F += r
		pt.G[j] = v / r
		h.d[j] = 1 / (r * r * r)
	}
	return pt.Direction()
}

// armijoPolicy is the root's newtonSearch rule; halvePolicy the
// Laplace-EM centre's.
var (
	armijoPolicy = Policy{Armijo: 1e-4, LineSearch: Quadratic, MinStep: 1e-10, Fused: true,
		Noise: func(f float64) float64 { return 1e-12 * (1 + math.Abs(f)) }, Floor: FloorStop, DecTol: 1e-20, GradTol: 1e-12, MaxIterations: 100}
	halvePolicy = Policy{LineSearch: Halve, MinStep: 1e-10, Noise: func(f float64) float64 { return 1e-12 * math.Abs(f) },
		Floor: FloorFullStep, DecTol: math.NaN(), StepTol: 1e-12, MaxIterations: 100}
)

// TestMinimize checks that each policy converges to the minimum from
// where undamped Newton diverges, with the evaluations its rule implies.
func TestMinimize(t *testing.T) {
	for _, c := range []struct {
		name string
		pol  Policy
	}{{"armijo", armijoPolicy}, {"halve", halvePolicy}} {
		t.Run(c.name, func(t *testing.T) {
			p := &hyperbola{}
			cur, trial := p.point(3), p.point(3)
			copy(cur.X, []float64{2, -3, 1.5})
			if c.pol.Fused {
				if err := p.Eval(cur); err != nil {
					t.Fatal(err)
				}
			}
			var damped bool
			s := Search[*Point]{Problem: p, Policy: c.pol}
			s.Report = func(*Point) { damped = damped || s.Iterations > 0 && s.Lambda < 1 }
			pt, out, err := s.Minimize(context.Background(), cur, trial)
			if out != Converged || err != nil {
				t.Fatalf("outcome %d, err %v after %d iterations", out, err, s.Iterations)
			}
			for j, v := range pt.X {
				if math.Abs(v) > 1e-8 {
					t.Errorf("x[%d] = %g, want 0", j, v)
				}
			}
			if !damped {
				t.Error("no step was damped: undamped Newton diverges from this start")
			}
			if s.Iterations > 30 {
				t.Errorf("%d iterations", s.Iterations)
			}
		})
	}
}

// TestArmijoRefuses checks the acceptance rule: from x = 0.9 the full
// step (to −0.729) lowers f by 0.108 of a decrement of 1.09, which any
// decrease and c = 10⁻⁴ accept and c = 0.5 refuses.
func TestArmijoRefuses(t *testing.T) {
	for _, c := range []struct {
		armijo float64
		full   bool
	}{{0, true}, {1e-4, true}, {0.5, false}} {
		p := &hyperbola{}
		cur, trial := p.point(1), p.point(1)
		cur.X[0] = 0.9
		pol := halvePolicy
		pol.Armijo, pol.MaxIterations = c.armijo, 1
		s := Search[*Point]{Problem: p, Policy: pol}
		if _, out, err := s.Minimize(context.Background(), cur, trial); out != MaxIterations || err != nil {
			t.Fatalf("c = %g: outcome %d, err %v", c.armijo, out, err)
		}
		if got := s.Lambda == 1; got != c.full {
			t.Errorf("c = %g: step length %g, want the full step %v", c.armijo, s.Lambda, c.full)
		}
	}
}

// TestQuadraticBacktrack checks the first backtracking step of the
// Quadratic rule: from x = 2 the full step (to −8) is refused, and the
// next trial is the minimiser Dec/(2(f(x+p) − f(x) + Dec)) of the
// quadratic through f(x), its slope −Dec and f(x+p), inside [0.1, 0.5].
func TestQuadraticBacktrack(t *testing.T) {
	p := &hyperbola{}
	cur, trial := p.point(1), p.point(1)
	cur.X[0] = 2
	if err := p.Eval(cur); err != nil {
		t.Fatal(err)
	}
	ft, _ := p.Value([]float64{cur.X[0] + cur.Step[0]})
	want := cur.Dec / (2 * (ft - cur.F + cur.Dec))
	pol := armijoPolicy
	pol.MaxIterations = 1
	s := Search[*Point]{Problem: p, Policy: pol}
	if _, out, err := s.Minimize(context.Background(), cur, trial); out != MaxIterations || err != nil {
		t.Fatalf("outcome %d, err %v", out, err)
	}
	if want <= 0.1 || want >= 0.5 || s.Lambda != want {
		t.Errorf("step length %g, want %g (inside [0.1, 0.5])", s.Lambda, want)
	}
}

// TestNoDecrease checks that halving gives up below MinStep after
// exactly the trials 1, ½, …, 2⁻³³ (2⁻³⁴ < 10⁻¹⁰), and the quadratic
// rule after fewer (it shortens by at least 2 a trial).
func TestNoDecrease(t *testing.T) {
	for _, c := range []struct {
		pol  Policy
		want int
	}{{halvePolicy, 34}} {
		p := &hyperbola{}
		cur, trial := p.point(2), p.point(2)
		copy(cur.X, []float64{0.5, 0.5})
		if err := p.Eval(cur); err != nil {
			t.Fatal(err)
		}
		p.inf = true
		s := Search[*Point]{Problem: p, Policy: c.pol}
		pt, out, err := s.Minimize(context.Background(), cur, trial)
		if out != NoDecrease || err != nil || pt != cur {
			t.Fatalf("outcome %d, err %v, moved %v", out, err, pt != cur)
		}
		if p.values != c.want {
			t.Errorf("%d trials, want %d", p.values, c.want)
		}
	}
}

// TestFloorStop checks the rounding floor: with f's rounding above the
// decrement and the full step refused, the search has converged (and
// under FloorFullStep the step is taken untested).
func TestFloorStop(t *testing.T) {
	huge := func(float64) float64 { return 1e6 }
	p := &hyperbola{}
	cur, trial := p.point(1), p.point(1)
	cur.X[0] = 0.5
	if err := p.Eval(cur); err != nil {
		t.Fatal(err)
	}
	p.inf, p.fail = true, true
	pol := armijoPolicy
	pol.Noise = huge
	s := Search[*Point]{Problem: p, Policy: pol}
	if pt, out, err := s.Minimize(context.Background(), cur, trial); out != Converged || err != nil || pt != cur {
		t.Errorf("FloorStop: outcome %d, err %v, moved %v", out, err, pt != cur)
	}
	if p.values != 0 {
		t.Errorf("FloorStop: %d trials backtracking at the floor", p.values)
	}
	p.fail = false // Value stays +Inf: FloorFullStep does not look
	pol = halvePolicy
	pol.Noise, pol.MaxIterations = huge, 1
	cur.Derived = false
	s = Search[*Point]{Problem: p, Policy: pol}
	pt, out, err := s.Minimize(context.Background(), cur, trial)
	if out != MaxIterations || err != nil || math.Abs(pt.X[0]+0.125) > 1e-12 {
		t.Errorf("FloorFullStep: outcome %d, err %v, x = %g, want the full step to −0.125", out, err, pt.X[0])
	}
}

// TestNoLineSearch checks None: one step, shortened to MaxStep in its
// largest coordinate, without a Value.
func TestNoLineSearch(t *testing.T) {
	p := &hyperbola{}
	cur, trial := p.point(2), p.point(2)
	copy(cur.X, []float64{2, 0.5})
	pol := Policy{LineSearch: None, MaxStep: 1, DecTol: math.NaN(), MaxIterations: 1}
	s := Search[*Point]{Problem: p, Policy: pol}
	pt, out, err := s.Minimize(context.Background(), cur, trial)
	if out != MaxIterations || err != nil || pt != trial {
		t.Fatalf("outcome %d, err %v", out, err)
	}
	// Newton's step is −x(1 + x²): (−10, −0.625), shortened by 10.
	if want := []float64{1, 0.4375}; math.Abs(pt.X[0]-want[0]) > 1e-12 || math.Abs(pt.X[1]-want[1]) > 1e-12 || math.Abs(s.Lambda-0.1) > 1e-12 {
		t.Errorf("x = %v, λ = %g, want %v, 0.1", pt.X, s.Lambda, want)
	}
	if p.values != 0 || p.evals != 1 {
		t.Errorf("%d Values and %d Evals, want none and one (none at the point the cap stops at)", p.values, p.evals)
	}
}

// TestStopped checks that a done context stops the search with its error.
func TestStopped(t *testing.T) {
	p := &hyperbola{}
	cur, trial := p.point(1), p.point(1)
	cur.X[0] = 2
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := Search[*Point]{Problem: p, Policy: halvePolicy}
	if _, out, err := s.Minimize(ctx, cur, trial); out != Stopped || !errors.Is(err, context.Canceled) {
		t.Errorf("outcome %d, err %v", out, err)
	}
}

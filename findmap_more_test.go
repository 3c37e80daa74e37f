// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

// More FindMAP tests beside findmap_test.go: the tempered mixture of the tgm
// example, tempering against prior scale, the Laplace prior, and the error
// paths findmap_test.go leaves out (no energy gradient, a non-finite energy,
// a context cancelled mid-run).

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// checkMAPResult checks the bookkeeping of a result: LogDensity is the log
// posterior at Theta and the counts are whole sweeps over the data.
func checkMAPResult(t *testing.T, name string, p *exactmh.Posterior, m *exactmh.MAP) {
	t.Helper()
	want, err := p.LogDensity(m.Theta)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if math.Abs(m.LogDensity-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: LogDensity = %.12g, Posterior.LogDensity(Theta) = %.12g", name, m.LogDensity, want)
	}
	n := int64(p.Len())
	if m.Evals <= 0 || m.GradEvals <= 0 || m.Evals%n != 0 || m.GradEvals%n != 0 {
		t.Errorf("%s: Evals = %d, GradEvals = %d, want positive multiples of N = %d", name, m.Evals, m.GradEvals, n)
	}
}

// The truncated Gaussian mixture of examples/tgm at its β = 1e-4, on 20 000
// data instead of a million: from (0.5, 0) the search finds a mode and stays
// in the box.
func TestMAPTemperedMixture(t *testing.T) {
	p := boxedMixture(t, rand.New(rand.NewPCG(1, 0)), 20000, 1e-4)
	box := p.Prior.(*model.Box)
	m, err := exactmh.FindMAP(context.Background(), p, []float64{0.5, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !box.Contains(m.Theta) {
		t.Fatalf("MAP %v outside the box", m.Theta)
	}
	near := func(a, b float64) bool { return math.Hypot(m.Theta[0]-a, m.Theta[1]-b) < 0.1 }
	if !near(0, 1) && !near(1, -1) {
		t.Errorf("MAP %v is near neither mode (0, 1) nor (1, −1)", m.Theta)
	}
	checkStationary(t, "tempered mixture", p, m.Theta, 1e-6)
	checkMAPResult(t, "tempered mixture", p, m)
	t.Logf("θ̂ = %.4f, ‖∇‖ = %.2g, %d iterations, %d evaluations", m.Theta, m.GradNorm, m.Iterations, m.Evals)
}

// Tempering scales the likelihood against the prior: β·ΣU + ‖θ‖²/(2s²) is
// β times ΣU + ‖θ‖²/(2βs²), so the MAP at β with prior N(0, s²) is the
// untempered MAP with prior N(0, βs²).
func TestMAPTemperingVersusPriorScale(t *testing.T) {
	lr := simLogistic(t, 2000, 5, 11)
	const beta, sd = 0.01, 2.0
	wide, _ := model.NewIsoGaussian(5, sd)
	narrow, _ := model.NewIsoGaussian(5, sd*math.Sqrt(beta))
	set := &exactmh.MAPSettings{GradTol: 1e-9}
	a, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr, Prior: wide, Beta: beta}, make([]float64, 5), set)
	if err != nil {
		t.Fatal(err)
	}
	b, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr, Prior: narrow}, make([]float64, 5), set)
	if err != nil {
		t.Fatal(err)
	}
	var diff, size float64
	for j := range a.Theta {
		diff = math.Max(diff, math.Abs(a.Theta[j]-b.Theta[j]))
		size = math.Max(size, math.Abs(b.Theta[j]))
	}
	if diff > 1e-7 {
		t.Errorf("MAP at β = %v, sd %v: %v; at β = 1, sd %v: %v (differ by %.2g)", beta, sd, a.Theta, sd*math.Sqrt(beta), b.Theta, diff)
	}
	// The prior must matter here, or the test shows nothing.
	flat, _ := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr}, make([]float64, 5), set)
	var shrink float64
	for j := range flat.Theta {
		shrink = math.Max(shrink, math.Abs(flat.Theta[j]-b.Theta[j]))
	}
	if shrink < 100*diff || shrink < 1e-3 {
		t.Errorf("the prior moves the MAP by only %.2g (tempering agreement %.2g)", shrink, diff)
	}
	t.Logf("max |difference| %.2g, max |θ̂| %.3f, prior shrinkage %.3g", diff, size, shrink)
}

// The Laplace prior: the robust-regression toy of the HIPS FlyMC tests
// (three data, ν = 4, scale 2.2), whose MAP is away from the kinks, and a
// Gaussian mean whose MAP is the soft-thresholded data mean.
func TestMAPLaplacePrior(t *testing.T) {
	e, err := model.NewStudentTRegression([]float64{-0.7, -0.8, -1.1, 1.5, -0.2, -0.2}, []float64{0.5, 1.6, -3}, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoLaplace(2, 2.2)
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	var first []float64
	for _, init := range [][]float64{{0, 0}, {1, 1}, {-1, 2}} {
		m, err := exactmh.FindMAP(context.Background(), p, init, nil)
		if err != nil {
			t.Fatalf("from %v: %v", init, err)
		}
		checkStationary(t, "HIPS robust regression", p, m.Theta, 1e-5)
		checkMAPResult(t, "HIPS robust regression", p, m)
		if first == nil {
			first = m.Theta
			t.Logf("θ̂ = %.6f, ‖∇‖ = %.2g", m.Theta, m.GradNorm)
		} else if math.Hypot(m.Theta[0]-first[0], m.Theta[1]-first[1]) > 1e-5 {
			t.Errorf("from %v: MAP %v, from (0, 0): %v", init, m.Theta, first)
		}
	}

	// y_i ~ N(θ, 1), θ ~ Laplace(0, b): the MAP is sign(ȳ)·max(|ȳ| − 1/(Nb), 0).
	lap, _ := model.NewIsoLaplace(1, 1)
	one := mat.NewSymDense(1, []float64{1})
	g, _ := model.NewGaussianMean([]float64{1, 2, 3}, 1, one)
	for _, init := range []float64{-1, 0, 4} {
		m, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: g, Prior: lap}, []float64{init}, nil)
		if err != nil {
			t.Fatalf("from %v: %v", init, err)
		}
		if want := 2 - 1.0/3; math.Abs(m.Theta[0]-want) > 1e-9 {
			t.Errorf("from %v: MAP %.12f, want %.12f", init, m.Theta[0], want)
		}
	}
	// With ȳ = 0.1 the MAP is the kink θ = 0 itself, where no gradient
	// vanishes: FindMAP measures optimality by the smallest subgradient.
	g0, _ := model.NewGaussianMean([]float64{0.1, -0.5, 0.7}, 1, one)
	m, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: g0, Prior: lap}, []float64{1}, nil)
	if err != nil || m == nil || math.Abs(m.Theta[0]) > 1e-9 || m.GradNorm > 1e-9 {
		t.Fatalf("MAP at the kink: %+v (err %v), want θ = 0 with a zero subgradient", m, err)
	}
	t.Logf("MAP at the kink: θ = %.3g, ‖∇‖ = %.3g, err = %v", m.Theta[0], m.GradNorm, err)
}

// noGradEnergy hides every method of an energy but Len, Dim and Energies.
type noGradEnergy struct{ exactmh.Energy }

// nanGradEnergy is a one-datum energy that is NaN everywhere, with a gradient
// that is zero (nanGrad false) or NaN (nanGrad true).
type nanGradEnergy struct{ nanGrad bool }

func (nanGradEnergy) Len() int { return 1 }
func (nanGradEnergy) Dim() int { return 1 }
func (nanGradEnergy) Energies(dst, _ []float64, idx []int) {
	for k := range idx {
		dst[k] = math.NaN()
	}
}
func (e nanGradEnergy) AddGradient(grad, _ []float64, _ []int, _ []float64) {
	if e.nanGrad {
		grad[0] = math.NaN()
	}
}

func TestMAPMoreErrors(t *testing.T) {
	lr := simLogistic(t, 100, 2, 1)
	_, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: noGradEnergy{lr}}, []float64{0, 0}, nil)
	if err == nil {
		t.Error("energy without a gradient: no error")
	} else {
		t.Logf("energy without a gradient: %v", err)
	}

	m, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: nanGradEnergy{}}, []float64{0.5}, nil)
	var ee *exactmh.EnergyError
	if !errors.As(err, &ee) || ee.Datum != 0 || !math.IsNaN(ee.Value) {
		t.Errorf("NaN energy: err = %v, want an *EnergyError for datum 0", err)
	}
	if m == nil || len(m.Theta) != 1 || m.Theta[0] != 0.5 {
		t.Errorf("NaN energy: result %+v, want the start point", m)
	}
	t.Logf("NaN energy: %v", err)
	if _, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: nanGradEnergy{nanGrad: true}}, []float64{0.5}, nil); err == nil {
		t.Error("NaN energy and gradient: no error")
	} else {
		t.Logf("NaN energy and gradient: %v", err)
	}

	bad, _ := model.NewGaussian([]float64{0, 0}, []float64{1, 1})
	if _, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr, Prior: bad, Beta: math.Inf(1)}, []float64{0, 0}, nil); err == nil {
		t.Error("β = +Inf: no error")
	}
	if _, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr}, []float64{0, 0}, &exactmh.MAPSettings{MaxIterations: -1}); err == nil {
		t.Error("MaxIterations = −1: no error")
	}
}

// cancellingLogistic cancels its context on the after-th call of Energies
// or EnergiesAndGradient (L-BFGS reads a logistic regression's energies
// with its gradient), or, with derivs set, of LossDerivs (the Newton search
// reads a GLM through Loss and LossDerivs).
type cancellingLogistic struct {
	*model.LogisticRegression
	calls, after int
	derivs       bool
	cancel       context.CancelFunc
}

// DenseRows returns no rows: cancellingLogistic is no DenseGLM, so every
// evaluation goes through its methods, which count them (a DenseGLM's may
// be inlined).
func (*cancellingLogistic) DenseRows() exactmh.DenseRows { return exactmh.DenseRows{} }

func (c *cancellingLogistic) Energies(dst, theta []float64, idx []int) {
	if c.calls++; !c.derivs && c.calls == c.after {
		c.cancel()
	}
	c.LogisticRegression.Energies(dst, theta, idx)
}

func (c *cancellingLogistic) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	if c.calls++; !c.derivs && c.calls == c.after {
		c.cancel()
	}
	c.LogisticRegression.EnergiesAndGradient(dst, grad, theta, idx, w)
}

func (c *cancellingLogistic) LossDerivs(i int, z float64) (f1, f2 float64) {
	if c.calls++; c.derivs && c.calls == c.after {
		c.cancel()
	}
	return c.LogisticRegression.LossDerivs(i, z)
}

// A context cancelled while the search runs stops it with ctx's error and
// the best point so far, which is better than the start: for L-BFGS after
// four evaluations of f, for Newton during its third pass over the data.
func TestMAPCancelMidRun(t *testing.T) {
	lr := simLogistic(t, 2000, 5, 7)
	for _, c := range []struct {
		method exactmh.MAPMethod
		after  int
		derivs bool
	}{
		// Energies sees chunks of 512 data: four calls per evaluation of f.
		{exactmh.MAPLBFGS, 4 * 4, false},
		{exactmh.MAPNewton, 2*2000 + 100, true},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e := &cancellingLogistic{LogisticRegression: lr, after: c.after, derivs: c.derivs, cancel: cancel}
		p := &exactmh.Posterior{Energy: e}
		init := make([]float64, 5)
		set := &exactmh.MAPSettings{Method: c.method}
		m, err := exactmh.FindMAP(ctx, p, init, set)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v: err = %v, want context.Canceled", c.method, err)
		}
		if m == nil {
			t.Fatalf("%v: no result", c.method)
		}
		l0, _ := p.LogDensity(init)
		if !(m.LogDensity > l0) {
			t.Errorf("%v: best log density %v, start %v: want an improvement", c.method, m.LogDensity, l0)
		}
		full, _ := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr}, init, set)
		if m.Iterations >= full.Iterations || !(m.LogDensity < full.LogDensity) {
			t.Errorf("%v: cancelled run: %d iterations, log density %v; full run %d, %v", c.method, m.Iterations, m.LogDensity, full.Iterations, full.LogDensity)
		}
		checkMAPResult(t, "cancelled", &exactmh.Posterior{Energy: lr}, m)
		t.Logf("%v: %v: %d iterations, log density %.3f (start %.3f, MAP %.3f)", c.method, err, m.Iterations, m.LogDensity, l0, full.LogDensity)
	}
}

// A start near the edge of a ball whose interior holds the mode: the line
// search backs off from the +Inf outside and finds the interior MAP.
func TestMAPBallBackoff(t *testing.T) {
	lr := simLogistic(t, 2000, 3, 5)
	free, err := exactmh.FindMAP(context.Background(), &exactmh.Posterior{Energy: lr}, make([]float64, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	ball, _ := model.NewBall(3, 3, nil)
	if !ball.Contains(free.Theta) {
		t.Fatalf("unconstrained MAP %v is outside the ball", free.Theta)
	}
	p := &exactmh.Posterior{Energy: lr, Prior: ball}
	init := []float64{0, 2.999, 0}
	m, err := exactmh.FindMAP(context.Background(), p, init, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range m.Theta {
		if math.Abs(m.Theta[j]-free.Theta[j]) > 1e-5 {
			t.Errorf("from %v: MAP %v, unconstrained %v", init, m.Theta, free.Theta)
			break
		}
	}
	checkMAPResult(t, "ball", p, m)
}

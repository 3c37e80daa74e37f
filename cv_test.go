// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/logit"
	"gonum.org/v1/gonum/mat"
)

// cvProblem returns a logistic or Student-t regression posterior of N data
// in d dimensions with a Gaussian prior, its Laplace approximation and its
// control-variate rewrite.
func cvProblem(t *testing.T, model string, n, d int, beta float64) (p, cv *Posterior, la *LaplaceApprox) {
	t.Helper()
	return cvProblemOrder(t, model, n, d, beta, cvCubicAuto)
}

// cvProblemOrder is cvProblem with the rewrite's expansion order chosen by
// mode.
func cvProblemOrder(t *testing.T, model string, n, d int, beta float64, mode cvCubicMode) (p, cv *Posterior, la *LaplaceApprox) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(d)))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	for i := range y {
		var z float64
		for j := range d {
			z += x[i*d+j] * float64(j%3-1)
		}
		switch model {
		case "logistic":
			if rng.Float64() < logit.Sigmoid(z) {
				y[i] = 1
			}
		default:
			y[i] = z + rng.NormFloat64()
		}
	}
	var e Energy
	var err error
	if model == "logistic" {
		e, err = NewLogisticRegression(x, y, d)
	} else {
		e, err = NewStudentTRegression(x, y, d, 4)
	}
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	p = &Posterior{Energy: e, Prior: prior, Beta: beta}
	la, err = FindLaplace(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err = controlVariates(p, la, mode, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cv.Energy.(*cvEnergy).cuber != nil, mode == cvCubicAlways; mode != cvCubicAuto && got != want {
		t.Fatalf("mode %d: third order %v", mode, got)
	}
	return p, cv, la
}

// cvOrders are the two expansion orders the control-variate tests run.
var cvOrders = []cvCubicMode{cvCubicNever, cvCubicAlways}

// TestControlVariatesSameTarget checks that the rewrite, of either order,
// changes the log density only by a constant and the gradient not at all,
// at points near and far from θ̂.
func TestControlVariatesSameTarget(t *testing.T) {
	for _, mode := range cvOrders {
		for _, model := range []string{"logistic", "studentt"} {
			for _, beta := range []float64{1, 0.01} {
				p, cv, la := cvProblemOrder(t, model, 500, 7, beta, mode)
				d := p.Dim()
				rng := rand.New(rand.NewPCG(1, 2))
				ref, err := p.LogDensity(la.Mean)
				if err != nil {
					t.Fatal(err)
				}
				refCV, err := cv.LogDensity(la.Mean)
				if err != nil {
					t.Fatal(err)
				}
				tp, err := NewTarget(p)
				if err != nil {
					t.Fatal(err)
				}
				tc, err := NewTarget(cv)
				if err != nil {
					t.Fatal(err)
				}
				for k := range 50 {
					theta := make([]float64, d)
					spread := math.Pow(10, float64(k%4)-2) // 0.01 … 10 sds of a unit-scale posterior
					for j := range theta {
						theta[j] = la.Mean[j] + spread*rng.NormFloat64()*math.Sqrt(la.CovChol.At(j, j)*la.CovChol.At(j, j))
					}
					a, err := p.LogDensity(theta)
					if err != nil {
						t.Fatal(err)
					}
					b, err := cv.LogDensity(theta)
					if err != nil {
						t.Fatal(err)
					}
					if diff := (b - refCV) - (a - ref); math.Abs(diff) > 1e-9*(1+math.Abs(a-ref)) {
						t.Errorf("mode %d, %s β=%v: log density moved by %v (original %v) at spread %v", mode, model, beta, b-refCV, a-ref, spread)
					}
					// −∇log π = β∇ΣU − ∇log p, from each posterior's parts.
					g1, g2 := make([]float64, d), make([]float64, d)
					pg1, pg2 := make([]float64, d), make([]float64, d)
					if _, err := tp.TotalEnergyAndGradient(g1, theta); err != nil {
						t.Fatal(err)
					}
					if err := tp.AddLogPriorGradient(pg1, theta); err != nil {
						t.Fatal(err)
					}
					if _, err := tc.TotalEnergyAndGradient(g2, theta); err != nil {
						t.Fatal(err)
					}
					if err := tc.AddLogPriorGradient(pg2, theta); err != nil {
						t.Fatal(err)
					}
					for j := range g1 {
						g1[j] -= pg1[j]
						g2[j] -= pg2[j]
					}
					for j := range g1 {
						if math.Abs(g1[j]-g2[j]) > 1e-8*(1+math.Abs(g1[j])) {
							t.Errorf("mode %d, %s β=%v: gradient[%d] %v, rewrite %v", mode, model, beta, j, g1[j], g2[j])
						}
					}
				}
			}
		}
	}
}

// TestControlVariatesBound checks the remainder DiffBound of either order
// on sampled pairs near θ̂ and far from it, and that it is not loose by
// orders of magnitude near the posterior mass. At third order a bound a
// quarter of M₄ (the mutant) is caught.
func TestControlVariatesBound(t *testing.T) {
	for _, mode := range cvOrders {
		for _, model := range []string{"logistic", "studentt"} {
			p, cv, la := cvProblemOrder(t, model, 2000, 12, 1, mode)
			b, err := cv.DiffBound()
			if err != nil {
				t.Fatal(err)
			}
			sd := math.Sqrt(la.CovChol.At(0, 0) * la.CovChol.At(0, 0))
			for _, spread := range []float64{0.3 * sd, 3 * sd, 1} {
				v, err := CheckBound(cv, b, &CheckOptions{Points: 60, Center: la.Mean, Spread: spread, Seed: 4})
				if err != nil {
					t.Fatalf("mode %d, %s, spread %v: %v", mode, model, spread, err)
				}
				t.Logf("mode %d, %s, spread %.3g: worst |ΔR_i|/(c_i M) = %.3f (datum %d)", mode, model, spread, v.Ratio, v.Datum)
				if mode != cvCubicAlways || spread != 1 {
					continue
				}
				quarter := &DiffBound{C: b.C, Metric: func(x, y []float64) float64 { return b.Metric(x, y) / 4 }}
				var viol *BoundViolation
				if _, err := CheckBound(cv, quarter, &CheckOptions{Points: 60, Center: la.Mean, Spread: spread, Seed: 4}); !errors.As(err, &viol) {
					t.Errorf("%s: a quarter of the third-order bound is not caught (%v)", model, err)
				} else {
					t.Logf("%s: mutant bound caught: %v", model, err)
				}
			}
			// The bound's scale near the posterior mass: C·M for pairs a
			// proposal would make, against the N of a full pass.
			m := b.M(la.Mean, la.Mean) // 0 at the centre
			if m != 0 {
				t.Errorf("%s: M(θ̂, θ̂) = %v, want 0", model, m)
			}
			_ = p
		}
	}
}

// TestControlVariatesRounding checks that pairs within rounding of θ̂ do
// not trip the bound check through cancellation in R_i(θ) − R_i(θ′).
func TestControlVariatesRounding(t *testing.T) {
	for _, mode := range cvOrders {
		testControlVariatesRounding(t, mode)
	}
}

func testControlVariatesRounding(t *testing.T, mode cvCubicMode) {
	_, cv, la := cvProblemOrder(t, "logistic", 300, 5, 1, mode)
	e := cv.Energy.(*cvEnergy)
	b, err := cv.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	d, n := e.Dim(), e.Len()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	dst := make([]float64, n)
	for k := range 200 {
		th, th2 := make([]float64, d), make([]float64, d)
		h := math.Pow(10, -float64(4+k%10))
		for j := range th {
			th[j] = la.Mean[j] + h*rng.NormFloat64()
			th2[j] = la.Mean[j] + h*rng.NormFloat64()
		}
		e.EnergyDiffs(dst, th, th2, idx)
		m := b.M(th, th2)
		for i, v := range dst {
			if math.Abs(v) > b.C[i]*m*(1+boundTol) {
				t.Fatalf("h = %g: datum %d: |ΔR| = %g > c_i M = %g", h, i, math.Abs(v), b.C[i]*m)
			}
		}
	}
}

// TestControlVariatesErrors checks what ControlVariates refuses.
func TestControlVariatesErrors(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 100, 3, 1)
	if _, err := ControlVariates(p, nil); err == nil {
		t.Error("nil Laplace approximation accepted")
	}
	g, err := NewGaussianMean([]float64{1, 2, 3}, 1, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ControlVariates(&Posterior{Energy: g}, la); !errors.Is(err, ErrNoBound) {
		t.Errorf("non-GLM energy: %v, want ErrNoBound", err)
	}
	la2 := *la
	la2.Mean = []float64{1}
	if _, err := ControlVariates(p, &la2); err == nil {
		t.Error("Laplace approximation of the wrong dimension accepted")
	}
	box, err := NewBox([]float64{-1, -1, -1}, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	la3 := *la
	la3.Mean = []float64{5, 0, 0}
	if _, err := ControlVariates(&Posterior{Energy: p.Energy, Prior: box}, &la3); err == nil {
		t.Error("θ̂ outside the support accepted")
	}
}

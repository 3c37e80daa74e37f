package exactmh_test

import (
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

func TestLaplacePrior(t *testing.T) {
	l, err := model.NewLaplace([]float64{0.5}, []float64{2.2})
	if err != nil {
		t.Fatal(err)
	}
	// The density integrates to 1 (trapezoid on ±60 scales).
	var sum float64
	const h = 1e-3
	for x := -132.0; x <= 133; x += h {
		sum += math.Exp(l.LogPrior([]float64{x})) * h
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("density integrates to %.8f", sum)
	}
	// The gradient matches central differences away from the kink.
	for _, x := range []float64{-3, 0.2, 0.6, 4} {
		g := []float64{0}
		l.AddLogPriorGradient(g, []float64{x})
		fd := (l.LogPrior([]float64{x + 1e-6}) - l.LogPrior([]float64{x - 1e-6})) / 2e-6
		if math.Abs(g[0]-fd) > 1e-6 {
			t.Errorf("gradient at %v: %v, want %v", x, g[0], fd)
		}
	}
	g := []float64{0}
	l.AddLogPriorGradient(g, []float64{0.5})
	if g[0] != 0 {
		t.Errorf("subgradient at the kink %v, want 0", g[0])
	}
	for name, f := range map[string]func() error{
		"zero scale": func() error { _, err := model.NewLaplace([]float64{0}, []float64{0}); return err },
		"lengths":    func() error { _, err := model.NewLaplace([]float64{0, 1}, []float64{1}); return err },
		"nan mean":   func() error { _, err := model.NewLaplace([]float64{math.NaN()}, []float64{1}); return err },
		"dimension":  func() error { _, err := model.NewIsoLaplace(0, 1); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	e, _ := model.NewGaussianMean([]float64{1, 2}, 2, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	iso, _ := model.NewIsoLaplace(3, 1)
	if err := (&exactmh.Posterior{Energy: e, Prior: iso}).Validate(); err == nil {
		t.Error("a 3-d Laplace prior on a 2-d energy validated")
	}
}

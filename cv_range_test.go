// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/vec"
)

// cvBoundedProblem returns a GLM posterior of N data in d dimensions on a
// bounded support (a Box or a Ball around the origin), its Laplace
// approximation at the MAP and its control-variate rewrite, with
// ControlVariates storing the expansion (recompute false) or recomputing it
// from the rows (true).
func cvBoundedProblem(t *testing.T, model, support string, n, d int, recompute bool) (p, cv *Posterior, la *LaplaceApprox) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(d)+7))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		var z float64
		for j := range d {
			z += x[i*d+j] * 0.4 * float64(j%3-1)
		}
		switch model {
		case "logistic":
			if rng.Float64() < logit.Sigmoid(z) {
				y[i] = 1
			}
		case "poisson":
			y[i] = float64(poissonDraw(rng, math.Exp(z)))
		default:
			y[i] = z + rng.NormFloat64()
		}
	}
	var e Energy
	var err error
	switch model {
	case "logistic":
		e, err = NewLogisticRegression(x, y, d)
	case "poisson":
		e, err = NewGLM(x, y, d, PoissonFamily{})
	default:
		e, err = NewStudentTRegression(x, y, d, 4)
	}
	if err != nil {
		t.Fatal(err)
	}
	var prior Prior
	if support == "box" {
		prior, err = NewCube(d, -1, 1.5)
	} else {
		prior, err = NewBall(d, 1.5, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	p = &Posterior{Energy: e, Prior: prior}
	la, err = FindLaplace(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	old := cvRecordLimit
	if recompute {
		cvRecordLimit = 0
	}
	defer func() { cvRecordLimit = old }()
	cv, err = ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	if (cv.Energy.(*cvEnergy).at == nil) != recompute {
		t.Fatalf("recompute %v, stored expansion %v", recompute, cv.Energy.(*cvEnergy).at != nil)
	}
	return p, cv, la
}

// poissonDraw draws a Poisson variate of mean mu by counting arrivals.
func poissonDraw(rng *rand.Rand, mu float64) int {
	k := 0
	for s := rng.ExpFloat64(); s < mu; s += rng.ExpFloat64() {
		k++
	}
	return k
}

// extremeLine returns θ(s), s ∈ [0, 1], in the support with x_iᵀθ(s)
// sweeping [lo_i, hi_i] of linearRange: the segment between the corners of
// a Box that minimise and maximise xᵀθ, or the diameter of a Ball along x.
func extremeLine(x []float64, prior Prior) func(dst []float64, s float64) {
	if lo, hi, ok := BoxBounds(prior); ok {
		return func(dst []float64, s float64) {
			for j, v := range x {
				a, c := lo[j], hi[j]
				if v < 0 {
					a, c = c, a
				}
				dst[j] = a + s*(c-a)
			}
		}
	}
	if r, ok := BallRadius(prior); ok {
		nx := vec.Norm2(x)
		return func(dst []float64, s float64) {
			f := (2*s - 1) * r * (1 - 1e-12) / nx
			for j, v := range x {
				dst[j] = f * v
			}
		}
	}
	panic("extremeLine: not a Box or Ball")
}

// rangeViolation returns how far R_i(θ) lies outside [Lo_i, Lo_i + W_i],
// relative to W_i (≤ 0 inside).
func rangeViolation(u, lo, w float64) float64 {
	return math.Max(lo-u, u-(lo+w)) / math.Max(w, 1e-300)
}

// TestControlVariatesEnergyRange checks the remainders' EnergyRange on a
// Box and a Ball, for the logistic, Poisson and Student-t losses, with the
// expansion stored and recomputed: the two give the same range bit for
// bit; every R_i lies in its range at points drawn in the support
// (CheckRange) and on each datum's extreme line, where x_iᵀθ sweeps all of
// [lo_i, hi_i] and the range is nearly attained (it is tight: the values
// there span most of each width); and the same range with every width
// shrunk by 20% about its centre (a mutant) is caught.
func TestControlVariatesEnergyRange(t *testing.T) {
	const n, d = 300, 3
	for _, model := range []string{"logistic", "poisson", "studentt"} {
		for _, support := range []string{"box", "ball"} {
			_, cv, la := cvBoundedProblem(t, model, support, n, d, false)
			_, cvRe, _ := cvBoundedProblem(t, model, support, n, d, true)
			r, err := cv.EnergyRange()
			if err != nil {
				t.Fatalf("%s on a %s: %v", model, support, err)
			}
			rRe, err := cvRe.EnergyRange()
			if err != nil {
				t.Fatalf("%s on a %s, recomputed: %v", model, support, err)
			}
			if !slices.Equal(r.Lo, rRe.Lo) || !slices.Equal(r.Width, rRe.Width) {
				t.Errorf("%s on a %s: the ranges from the stored and the recomputed expansion differ", model, support)
			}
			for _, p := range []*Posterior{cv, cvRe} {
				v, err := CheckRange(p, r, &CheckOptions{Points: 100, Center: la.Mean, Spread: 2, Seed: 5})
				if err != nil {
					t.Errorf("%s on a %s: %v", model, support, err)
				} else if v.Ratio > 0 {
					t.Errorf("%s on a %s: CheckRange's worst ratio %v > 0", model, support, v.Ratio)
				}
			}
			// The extreme lines, 65 points each, for every datum.
			e := cv.Energy.(*cvEnergy)
			prior := supportOf(cv.Prior)
			theta := make([]float64, d)
			mutLo, mutW := slices.Clone(r.Lo), slices.Clone(r.Width)
			for i := range mutLo {
				mutLo[i] += 0.1 * mutW[i]
				mutW[i] *= 0.8
			}
			var worst, worstMut float64 = math.Inf(-1), math.Inf(-1)
			var worstSpan = math.Inf(1)
			var span float64
			for i := range n {
				line := extremeLine(e.Row(i), prior)
				umin, umax := math.Inf(1), math.Inf(-1)
				for k := range 65 {
					line(theta, float64(k)/64)
					if !inSupport(cv.Prior, theta) {
						t.Fatalf("extreme line left the support at %v", theta)
					}
					u := e.Loss(i, e.rowDot(i, theta))
					umin, umax = min(umin, u), max(umax, u)
					worst = max(worst, rangeViolation(u, r.Lo[i], r.Width[i]))
					worstMut = max(worstMut, rangeViolation(u, mutLo[i], mutW[i]))
				}
				s := (umax - umin) / r.Width[i]
				worstSpan = min(worstSpan, s)
				span += s / n
			}
			t.Logf("%s on a %s: attained span of the widths: mean %.3f, least %.3f; worst excess %.2g; 20%%-shrunk mutant's worst excess %.3f",
				model, support, span, worstSpan, worst, worstMut)
			if worst > boundTol {
				t.Errorf("%s on a %s: a remainder left its range by %v of the width on an extreme line", model, support, worst)
			}
			if span < 0.9 {
				t.Errorf("%s on a %s: the extreme lines span %.3f of the widths on average, want ≥ 0.9 (a loose range)", model, support, span)
			}
			if !(worstMut > boundTol) {
				t.Errorf("%s on a %s: the 20%%-shrunk range was not caught (worst excess %v)", model, support, worstMut)
			}
			// The kernel refuses the mutant when it draws a datum outside its
			// range: run from a corner of the support, where the remainders
			// are far from 0, with TrustBound off, its audit sees it.
			mut := &EnergyRange{Lo: mutLo, Width: mutW}
			tg, err := NewTarget(cv)
			if err != nil {
				t.Fatal(err)
			}
			corner := make([]float64, d)
			extremeLine(e.Row(0), prior)(corner, 1)
			if _, err := (PoissonMH{Range: mut, Lambda: 1, MaxBatch: math.Inf(1)}).Start(tg, corner); err == nil {
				t.Errorf("%s on a %s: PoissonMH's audit at a corner passed the 20%%-shrunk range", model, support)
			} else if !strings.Contains(err.Error(), "range") {
				t.Errorf("%s on a %s: PoissonMH's audit: %v, want a range violation", model, support, err)
			}
		}
	}
}

// TestControlVariatesEnergyRangeErrors checks that an unbounded base prior
// has no range, and says which prior.
func TestControlVariatesEnergyRangeErrors(t *testing.T) {
	_, cv, _ := cvProblem(t, "logistic", 100, 3, 1)
	_, err := cv.EnergyRange()
	if err == nil {
		t.Fatal("a control-variate posterior on a Gaussian prior has an energy range")
	}
	if msg := err.Error(); !strings.Contains(msg, "bounded support") || !strings.Contains(msg, "*model.Gaussian (the base prior") {
		t.Errorf("error %q names neither the need nor the base prior", msg)
	}
	tg, err := NewTarget(cv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (PoissonMH{}).Start(tg, make([]float64, 3)); err == nil || !strings.Contains(err.Error(), "bounded support") {
		t.Errorf("PoissonMH on it: %v, want the bounded-support error", err)
	}
}

// TestSupportOfWrappedPrior checks that the support helpers see through
// ControlVariates' prior to its base prior's Box or Ball, and leave an
// unwrapped prior alone.
func TestSupportOfWrappedPrior(t *testing.T) {
	const d = 3
	for _, support := range []string{"box", "ball"} {
		p, cv, _ := cvBoundedProblem(t, "logistic", support, 50, d, false)
		if _, ok := cv.Prior.(*cvGradPrior); !ok {
			t.Fatalf("%s: the rewrite's prior is %T, want *cvGradPrior", support, cv.Prior)
		}
		if supportOf(cv.Prior) != p.Prior || supportOf(p.Prior) != p.Prior {
			t.Fatalf("%s: supportOf(%T) = %T", support, cv.Prior, supportOf(cv.Prior))
		}
		x := []float64{0.3, -1.2, 2}
		lo, hi, err := linearRange(x, p.Prior)
		if err != nil {
			t.Fatal(err)
		}
		lo2, hi2, err := linearRange(x, cv.Prior)
		if err != nil || lo2 != lo || hi2 != hi {
			t.Errorf("%s: linearRange through the wrapper [%v, %v] (%v), want [%v, %v]", support, lo2, hi2, err, lo, hi)
		}
		if zlo, zhi := glmZRange(x, cv.Prior); zlo != lo || zhi != hi {
			t.Errorf("%s: glmZRange through the wrapper [%v, %v], want [%v, %v]", support, zlo, zhi, lo, hi)
		}
		m, err := maxDist(x, p.Prior)
		if err != nil {
			t.Fatal(err)
		}
		if m2, err := maxDist(x, cv.Prior); err != nil || m2 != m {
			t.Errorf("%s: maxDist through the wrapper %v (%v), want %v", support, m2, err, m)
		}
		far, far2 := []float64{7, -9, 11}, []float64{7, -9, 11}
		okBase, okCV := intoSupport(p.Prior, far, make([]float64, d)), intoSupport(cv.Prior, far2, make([]float64, d))
		if !okBase || !okCV || !slices.Equal(far, far2) {
			t.Errorf("%s: intoSupport through the wrapper %v (%v), base %v (%v)", support, far2, okCV, far, okBase)
		}
		edge := slices.Clone(far)
		if support == "box" {
			_, hi, _ := BoxBounds(p.Prior)
			edge[0] = hi[0]
		} else {
			r, _ := BallRadius(p.Prior)
			s := r / vec.Norm2(edge)
			for j := range edge {
				edge[j] *= s
			}
		}
		if w, w2 := supportWarnings(p.Prior, edge), supportWarnings(cv.Prior, edge); len(w) == 0 || !slices.Equal(w, w2) {
			t.Errorf("%s: boundary warnings through the wrapper %q, base %q", support, w2, w)
		}
	}
	g, _ := NewIsoGaussian(d, 1)
	if _, _, err := linearRange([]float64{1, 2, 3}, g); err == nil || strings.Contains(err.Error(), "base prior") {
		t.Errorf("linearRange on a Gaussian prior: %v, want the unwrapped error", err)
	}
}

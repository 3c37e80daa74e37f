// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/logit"
	"github.com/exactmh/exactmh/internal/vec"
	"gonum.org/v1/gonum/mat"
)

// testEnergies returns one posterior per ready-made energy, each on a bounded
// support so that every bound applies.
func testEnergies(t *testing.T) map[string]*exactmh.Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d = 60, 3
	x := make([]float64, n*d)
	y01 := make([]float64, n)
	yr := make([]float64, n)
	for i := range n {
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
		}
		if rng.Float64() < 0.5 {
			y01[i] = 1
		}
		yr[i] = x[i*d] + x[i*d+1] + 2*rng.NormFloat64()
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	lr, err := NewLogisticRegression(x, y01, d)
	must(err)
	st, err := NewStudentTRegression(x, yr, d, 4)
	must(err)
	sigma := mat.NewSymDense(d, []float64{2, 0.5, 0.1, 0.5, 1, 0.2, 0.1, 0.2, 0.5})
	gm, err := NewGaussianMean(x, d, sigma)
	must(err)
	mx := make([]float64, n)
	for i := range mx {
		mx[i] = rng.NormFloat64() * 2
	}
	mix, err := NewGaussianMixture(mx, 2)
	must(err)
	ball, err := NewBall(d, 3, nil)
	must(err)
	cube, err := NewCube(d, -3, 3)
	must(err)
	square, err := NewCube(2, -3, 3)
	must(err)
	return map[string]*exactmh.Posterior{
		"logistic/ball":  {Energy: lr, Prior: ball, Beta: 0.5},
		"logistic/cube":  {Energy: lr, Prior: cube},
		"studentt/ball":  {Energy: st, Prior: ball},
		"studentt/cube":  {Energy: st, Prior: cube, Beta: 1e-2},
		"gaussian/ball":  {Energy: gm, Prior: ball},
		"gaussian/cube":  {Energy: gm, Prior: cube, Beta: 3},
		"mixture/square": {Energy: mix, Prior: square},
	}
}

func TestEnergyDiffsMatchEnergies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for name, p := range testEnergies(t) {
		e := p.Energy
		d := e.Dim()
		idx := []int{0, 5, 7, e.Len() - 1, 5}
		a, b := make([]float64, d), make([]float64, d)
		for j := range a {
			a[j], b[j] = rng.NormFloat64(), rng.NormFloat64()
		}
		ua, ub, diff := make([]float64, len(idx)), make([]float64, len(idx)), make([]float64, len(idx))
		e.Energies(ua, a, idx)
		e.Energies(ub, b, idx)
		e.(exactmh.EnergyDiffer).EnergyDiffs(diff, a, b, idx)
		for k := range idx {
			if want := ua[k] - ub[k]; math.Abs(diff[k]-want) > 1e-10*(1+math.Abs(want)) {
				t.Errorf("%s: EnergyDiffs[%d] = %v, want %v", name, k, diff[k], want)
			}
		}
	}
}

// TestFusedEnergiesAndGradient: every ready-made EnergyGradienter's fused
// pass gives the energies of Energies and adds the gradient of AddGradient,
// at points where either mixture component dominates and where they tie.
func TestFusedEnergiesAndGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	fused := 0
	for name, p := range testEnergies(t) {
		e := p.Energy
		eg, ok := e.(exactmh.EnergyGradienter)
		if !ok {
			continue
		}
		fused++
		d := e.Dim()
		idx := []int{0, 3, 9, e.Len() - 1, 3}
		w := []float64{0.5, -1, 2, 1, 3}
		for trial := range 20 {
			theta := make([]float64, d)
			for j := range theta {
				theta[j] = 3 * rng.NormFloat64()
			}
			if trial == 0 {
				clear(theta) // the mixture's components coincide
			}
			want, got := make([]float64, len(idx)), make([]float64, len(idx))
			wantGrad, gotGrad := make([]float64, d), make([]float64, d)
			for j := range d {
				wantGrad[j], gotGrad[j] = float64(j), float64(j) // both add to what is there
			}
			e.Energies(want, theta, idx)
			e.(exactmh.Gradienter).AddGradient(wantGrad, theta, idx, w)
			eg.EnergiesAndGradient(got, gotGrad, theta, idx, w)
			for k := range idx {
				if math.Abs(got[k]-want[k]) > 1e-12*(1+math.Abs(want[k])) {
					t.Errorf("%s at %v: U[%d] = %v fused, %v alone", name, theta, k, got[k], want[k])
				}
			}
			for j := range d {
				if math.Abs(gotGrad[j]-wantGrad[j]) > 1e-12*(1+math.Abs(wantGrad[j])) {
					t.Errorf("%s at %v: ∂_%d = %v fused, %v alone", name, theta, j, gotGrad[j], wantGrad[j])
				}
			}
		}
	}
	if fused < 3 {
		t.Errorf("%d ready-made energies fuse energies and gradient, want the logistic, Student-t and mixture", fused)
	}
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for name, p := range testEnergies(t) {
		e := p.Energy
		d := e.Dim()
		idx := []int{1, 2, 9}
		w := []float64{0.5, -1, 2}
		theta := make([]float64, d)
		for j := range theta {
			theta[j] = rng.NormFloat64()
		}
		grad := make([]float64, d)
		e.(exactmh.Gradienter).AddGradient(grad, theta, idx, w)
		f := func(th []float64) float64 {
			u := make([]float64, len(idx))
			e.Energies(u, th, idx)
			var s float64
			for k := range u {
				s += w[k] * u[k]
			}
			return s
		}
		const h = 1e-6
		for j := range d {
			tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
			tp[j] += h
			tm[j] -= h
			fd := (f(tp) - f(tm)) / (2 * h)
			if math.Abs(grad[j]-fd) > 1e-5*(1+math.Abs(fd)) {
				t.Errorf("%s: ∂_%d = %v, finite difference %v", name, j, grad[j], fd)
			}
		}
	}
}

func TestLogisticNumericallyStable(t *testing.T) {
	e, err := NewLogisticRegression([]float64{1, -1}, []float64{1, 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []float64{-1e6, -800, -40, 0, 40, 800, 1e6} {
		u := make([]float64, 2)
		e.Energies(u, []float64{th}, []int{0, 1})
		// Both data have margin th: U = softplus(−th).
		want := logit.Softplus(-th)
		for k, v := range u {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v-want) > 1e-12*(1+want) {
				t.Errorf("θ = %v: U_%d = %v, want %v", th, k, v, want)
			}
		}
	}
	if got := logit.Softplus(-1000); got != 0 && !(got > 0 && got < 1e-300) {
		t.Errorf("softplus(−1000) = %v", got)
	}
}

func TestReadyMadeBoundsHold(t *testing.T) {
	for name, p := range testEnergies(t) {
		b, err := p.DiffBound()
		if err != nil {
			t.Fatalf("%s: DiffBound: %v", name, err)
		}
		opt := &exactmh.CheckOptions{Points: 100, Spread: 2, Seed: 7}
		if w, err := exactmh.CheckBound(p, b, opt); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if w.Ratio > 1 || w.Ratio < 0.05 {
			t.Errorf("%s: worst |ΔU|/(c·M) = %v, want in (0.05, 1]: bound should be valid and not absurdly loose", name, w.Ratio)
		}
		r, err := p.EnergyRange()
		if err != nil {
			t.Fatalf("%s: EnergyRange: %v", name, err)
		}
		if _, err := exactmh.CheckRange(p, r, opt); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckBoundCatchesWrongBound(t *testing.T) {
	p := testEnergies(t)["studentt/ball"]
	b, err := p.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.C {
		b.C[i] *= 0.2
	}
	w, err := exactmh.CheckBound(p, b, &exactmh.CheckOptions{Points: 100, Spread: 2})
	var v *exactmh.BoundViolation
	if !errors.As(err, &v) || v.Datum < 0 || v.Ratio <= 1 || v.Theta == nil || v.ThetaNew == nil {
		t.Fatalf("CheckBound with c_i/5: err = %v, worst = %+v; want a BoundViolation naming datum and pair", err, w)
	}
	r, err := p.EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Width {
		r.Width[i] *= 0.01
	}
	if _, err := exactmh.CheckRange(p, r, &exactmh.CheckOptions{Points: 100, Spread: 2}); !errors.As(err, &v) {
		t.Fatalf("CheckRange with Width/100: err = %v, want a BoundViolation", err)
	}
}

func TestPaperBounds(t *testing.T) {
	// TunaMH App. J.3: on [−3, 3]², c_i = √(((2|x|+9)/σ²)² + ((|x|+6)/σ²)²),
	// whatever β (bounds are untempered; the kernels apply β).
	mix, _ := NewGaussianMixture([]float64{-1.5, 0, 2}, 2)
	sq, _ := NewCube(2, -3, 3)
	b, err := (&exactmh.Posterior{Energy: mix, Prior: sq, Beta: 1e-4}).DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{-1.5, 0, 2} {
		want := math.Hypot((2*math.Abs(x)+9)/2, (math.Abs(x)+6)/2)
		if math.Abs(b.C[i]-want) > 1e-15*want {
			t.Errorf("mixture c_%d = %v, want %v", i, b.C[i], want)
		}
	}
	// Auxiliary-variable paper App. D.2: on ‖θ‖ ≤ R, M_i = (ν+1)/2·log(1 + (|y|+‖x‖R)²/ν).
	st, _ := NewStudentTRegression([]float64{3, 4}, []float64{2}, 2, 4)
	ball, _ := NewBall(2, 15, nil)
	r, err := (&exactmh.Posterior{Energy: st, Prior: ball}).EnergyRange()
	if err != nil {
		t.Fatal(err)
	}
	if want := 2.5 * math.Log1p((2+5*15.0)*(2+5*15.0)/4); r.Lo[0] != 0 || math.Abs(r.Width[0]-want) > 1e-12 {
		t.Errorf("Student-t range = [%v, +%v], want [0, +%v]", r.Lo[0], r.Width[0], want)
	}
}

func TestConstructorErrors(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		err  error
	}{
		{"LR no data", func() error { _, err := NewLogisticRegression(nil, nil, 2); return err }()},
		{"LR bad length", func() error { _, err := NewLogisticRegression([]float64{1, 2, 3}, []float64{1}, 2); return err }()},
		{"LR bad label", func() error { _, err := NewLogisticRegression([]float64{1, 2}, []float64{2}, 2); return err }()},
		{"LR NaN x", func() error { _, err := NewLogisticRegression([]float64{1, nan}, []float64{1}, 2); return err }()},
		{"LR d=0", func() error { _, err := NewLogisticRegression([]float64{1}, []float64{1}, 0); return err }()},
		{"t nu", func() error { _, err := NewStudentTRegression([]float64{1}, []float64{1}, 1, 0); return err }()},
		{"t NaN y", func() error { _, err := NewStudentTRegression([]float64{1}, []float64{nan}, 1, 4); return err }()},
		{"gauss cov", func() error {
			_, err := NewGaussianMean([]float64{1, 2}, 2, mat.NewSymDense(2, []float64{1, 2, 2, 1}))
			return err
		}()},
		{"gauss dim", func() error {
			_, err := NewGaussianMean([]float64{1, 2}, 2, mat.NewSymDense(1, []float64{1}))
			return err
		}()},
		{"mixture sigma", func() error { _, err := NewGaussianMixture([]float64{1}, -1); return err }()},
		{"box", func() error { _, err := NewBox([]float64{1}, []float64{0}); return err }()},
		{"ball", func() error { _, err := NewBall(2, 0, nil); return err }()},
		{"gaussian prior", func() error { _, err := NewGaussian([]float64{0}, []float64{0}); return err }()},
		{"nil energy", (&exactmh.Posterior{}).Validate()},
		{"beta", (&exactmh.Posterior{Energy: &GaussianMixture{x: []float64{1}, sigma2: 1}, Beta: -1}).Validate()},
		{"prior dim", func() error {
			b, _ := NewCube(3, 0, 1)
			return (&exactmh.Posterior{Energy: &GaussianMixture{x: []float64{1}, sigma2: 1}, Prior: b}).Validate()
		}()},
		{"unbounded range", func() error {
			e, _ := NewLogisticRegression([]float64{1}, []float64{1}, 1)
			_, err := (&exactmh.Posterior{Energy: e}).EnergyRange()
			return err
		}()},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPriors(t *testing.T) {
	box, _ := NewBox([]float64{0, -1}, []float64{2, 1})
	if got := box.LogPrior([]float64{1, 0}); math.Abs(got+math.Log(4)) > 1e-15 {
		t.Errorf("box log prior = %v, want −log 4", got)
	}
	if !math.IsInf(box.LogPrior([]float64{3, 0}), -1) {
		t.Error("box: outside not −Inf")
	}
	ball, _ := NewBall(2, 2, []float64{1, 1})
	if got := ball.LogPrior([]float64{1, 2}); math.Abs(got+math.Log(4*math.Pi)) > 1e-14 {
		t.Errorf("ball log prior = %v, want −log(4π)", got)
	}
	if !math.IsInf(ball.LogPrior([]float64{-1.5, 1}), -1) {
		t.Error("ball: outside not −Inf")
	}
	g, _ := NewGaussian([]float64{1}, []float64{2})
	if got, want := g.LogPrior([]float64{3}), -0.5-math.Log(2)-0.5*math.Log(2*math.Pi); math.Abs(got-want) > 1e-15 {
		t.Errorf("gaussian log prior = %v, want %v", got, want)
	}
}

// TestDotKernels checks the assembly-backed inner products and updates
// against plain loops on both sides of shortVec, and softplusSigmoid
// against softplus and sigmoid bit for bit.
func TestDotKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, d := range []int{1, 2, 15, 16, 17, 50, 101} {
		a, b, c, y := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
		for j := range a {
			a[j], b[j], c[j], y[j] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		}
		var ab, ac, scale float64
		for j := range a {
			ab += a[j] * b[j]
			ac += a[j] * c[j]
			scale += math.Abs(a[j] * b[j])
		}
		tol := 1e-14 * scale
		if got := vec.Dot(a, b); math.Abs(got-ab) > tol {
			t.Errorf("d=%d: dot = %v, loop %v", d, got, ab)
		}
		if g1, g2 := vec.Dot2(a, b, c); math.Abs(g1-ab) > tol || math.Abs(g2-ac) > 1e-14*(scale+math.Abs(ac))*10 {
			t.Errorf("d=%d: dot2 = %v, %v, loops %v, %v", d, g1, g2, ab, ac)
		}
		want := append([]float64(nil), y...)
		for j := range want {
			want[j] += 0.7 * a[j]
		}
		vec.Axpy(y, 0.7, a)
		for j := range y {
			if math.Abs(y[j]-want[j]) > 1e-15*(1+math.Abs(want[j])) {
				t.Errorf("d=%d: axpy[%d] = %v, loop %v", d, j, y[j], want[j])
			}
		}
	}
	for _, z := range []float64{-800, -40, -1, -1e-300, 0, 1e-300, 0.5, 3, 40, 800} {
		sp, s := logit.SoftplusSigmoid(z)
		if sp != logit.Softplus(z) || s != logit.Sigmoid(z) {
			t.Errorf("softplusSigmoid(%v) = %v, %v; softplus, sigmoid = %v, %v", z, sp, s, logit.Softplus(z), logit.Sigmoid(z))
		}
	}
}

// TestLogisticGroupsBitForBit checks the logistic energies computed a group
// of data at a time (logisticLosses, logisticLossDiffs, logisticLossSlopes)
// against softplus and softplusSigmoid datum by datum, bit for bit, for
// float64 and float32 rows: gathers of 1, 63, 64, 65 and 300 data, linear
// predictors from −800 to 800 (both signs, exp underflowing) and 0.
func TestLogisticGroupsBitForBit(t *testing.T) {
	const n, d = 500, 3
	rng := rand.New(rand.NewPCG(8, 9))
	x, x32, y := make([]float64, n*d), make([]float32, n*d), make([]float64, n)
	for i := range n {
		scale := math.Pow(10, 3*rng.Float64()-1) // |z| from about 0.1 to 800
		for j := range d {
			v := float32(scale * rng.NormFloat64())
			x[i*d+j], x32[i*d+j] = float64(v), v
		}
		if i == 7 {
			for j := range d {
				x[i*d+j], x32[i*d+j] = 0, 0 // z = 0
			}
		}
		y[i] = float64(rng.IntN(2))
	}
	e64, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	e32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	theta, next := []float64{0.7, -1.1, 0.4}, []float64{-0.3, 0.9, 1.2}
	type logistic interface {
		Energies(dst, theta []float64, idx []int)
		EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64)
		EnergyDiffs(dst, theta, thetaNew []float64, idx []int)
	}
	for name, e := range map[string]logistic{"float64": e64, "float32": e32} {
		for _, size := range []int{1, 63, 64, 65, 300} {
			idx, w := make([]int, size), make([]float64, size)
			for k := range idx {
				idx[k], w[k] = rng.IntN(n), rng.Float64()
			}
			idx[0] = 7
			got, diffs, withGrad := make([]float64, size), make([]float64, size), make([]float64, size)
			grad, wantGrad := make([]float64, d), make([]float64, d)
			e.Energies(got, theta, idx)
			e.EnergyDiffs(diffs, theta, next, idx)
			e.EnergiesAndGradient(withGrad, grad, theta, idx, w)
			for k, i := range idx {
				row := x[i*d : (i+1)*d]
				z, zn := vec.Dot(row, theta), vec.Dot(row, next)
				want := logit.Softplus(z) - y[i]*z
				wantDiff := logit.Softplus(z) - logit.Softplus(zn) - y[i]*(z-zn)
				sp, s := logit.SoftplusSigmoid(z)
				vec.Axpy(wantGrad, w[k]*(s-y[i]), row)
				if got[k] != want || withGrad[k] != sp-y[i]*z || diffs[k] != wantDiff {
					t.Errorf("%s, %d data, datum %d (z = %g): energy %v, %v with the gradient, want %v; difference %v, want %v",
						name, size, i, z, got[k], withGrad[k], want, diffs[k], wantDiff)
				}
			}
			for j := range grad {
				if grad[j] != wantGrad[j] {
					t.Errorf("%s, %d data: gradient[%d] = %v, want %v", name, size, j, grad[j], wantGrad[j])
				}
			}
		}
	}
}

// TestMixtureGroupsBitForBit checks the mixture's batch methods, which
// compute a group of data at a time, against u and the responsibilities
// datum by datum, bit for bit: both components dominant, equal log
// kernels, far tails, gathers of 1, 64 and 130 data.
func TestMixtureGroupsBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	x := make([]float64, 400)
	for i := range x {
		x[i] = 3 * rng.NormFloat64()
	}
	x[0], x[1] = 0.25, 40 // a1 = a2 at θ = (0, 0.5); both kernels underflow-far
	e, err := NewGaussianMixture(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	theta, next := []float64{0, 0.5}, []float64{1.3, -2.1}
	s2 := e.Sigma2()
	for _, size := range []int{1, 64, 130} {
		idx, w := make([]int, size), make([]float64, size)
		for k := range idx {
			idx[k], w[k] = rng.IntN(len(x)), rng.Float64()
		}
		idx[0] = size % 2 // datum 0 or 1
		got, diffs, withGrad := make([]float64, size), make([]float64, size), make([]float64, size)
		grad := make([]float64, 2)
		e.Energies(got, theta, idx)
		e.EnergyDiffs(diffs, theta, next, idx)
		e.EnergiesAndGradient(withGrad, grad, theta, idx, w)
		var g0, g1 float64
		for k, i := range idx {
			want := e.u(x[i], theta[0], theta[1])
			wantDiff := want - e.u(x[i], next[0], next[1])
			if got[k] != want || withGrad[k] != want || diffs[k] != wantDiff {
				t.Errorf("%d data, datum %d: energy %v, %v with the gradient, want %v; difference %v, want %v",
					size, i, got[k], withGrad[k], want, diffs[k], wantDiff)
			}
			r1, r2 := x[i]-theta[0], x[i]-theta[0]-theta[1]
			a1, a2 := -r1*r1/(2*s2), -r2*r2/(2*s2)
			var p1, p2 float64
			if a1 >= a2 {
				p1 = 1 / (1 + math.Exp(a2-a1))
				p2 = math.Exp(a2-a1) * p1
			} else {
				p2 = 1 / (1 + math.Exp(a1-a2))
				p1 = math.Exp(a1-a2) * p2
			}
			g0 -= w[k] * (p1*r1 + p2*r2) / s2
			g1 -= w[k] * p2 * r2 / s2
		}
		if grad[0] != g0 || grad[1] != g1 {
			t.Errorf("%d data: gradient %v, want %v", size, grad, []float64{g0, g1})
		}
	}
}

// BenchmarkMixtureEnergies is a full-batch pass of the tempered mixture's
// energies (and with the gradient), as MH and MALA make one per step.
func BenchmarkMixtureEnergies(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 1<<14)
	for i := range x {
		x[i] = 0.5*float64(rng.IntN(2)) + rng.NormFloat64()
	}
	e, err := NewGaussianMixture(x, 2)
	if err != nil {
		b.Fatal(err)
	}
	idx, w := make([]int, len(x)), make([]float64, len(x))
	for i := range idx {
		idx[i], w[i] = i, 1
	}
	dst, grad, theta := make([]float64, len(x)), make([]float64, 2), []float64{0.1, 0.4}
	b.Run("energies", func(b *testing.B) {
		for b.Loop() {
			e.Energies(dst, theta, idx)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/datum")
	})
	b.Run("gradient", func(b *testing.B) {
		for b.Loop() {
			e.EnergiesAndGradient(dst, grad, theta, idx, w)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/datum")
	})
}

// TestLossAndDerivs: the logistic loss's fused loss and derivatives, which
// the Newton sweep takes, are Loss and LossDerivs bit for bit (the sweep's
// sums, and so ControlVariates' reuse of them, rely on it).
func TestLossAndDerivs(t *testing.T) {
	zs := []float64{-800, -40, -1, -1e-300, 0, 1e-300, 0.5, 3, 40, 800}
	x := make([]float64, 2)
	y := []float64{0, 1}
	lr, err := NewLogisticRegression(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		for _, z := range zs {
			f, f1, f2 := lr.lossAndDerivs(i, z)
			g1, g2 := lr.LossDerivs(i, z)
			if f != lr.Loss(i, z) || f1 != g1 || f2 != g2 {
				t.Errorf("y = %v, z = %v: fused %v, %v, %v; Loss, LossDerivs %v, %v, %v",
					y[i], z, f, f1, f2, lr.Loss(i, z), g1, g2)
			}
		}
	}
}

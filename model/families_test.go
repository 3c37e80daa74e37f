// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// gaussData returns n rows of an intercept and d−1 standard normal
// covariates and responses x_iᵀβ + σ·ε_i.
func gaussData(rng *rand.Rand, n int, beta []float64, sigma float64) (x, y []float64) {
	d := len(beta)
	x, y = make([]float64, n*d), make([]float64, n)
	for i := range n {
		x[i*d] = 1
		for j := 1; j < d; j++ {
			x[i*d+j] = rng.NormFloat64()
		}
		for j := range d {
			y[i] += x[i*d+j] * beta[j]
		}
		y[i] += sigma * rng.NormFloat64()
	}
	return x, y
}

// TestGaussianRegressionEnergy checks the sufficient-statistic energy
// against the sum of the per-datum Gaussian energies s + (y_i − x_iᵀβ)²
// e^{−2s}/2, and its gradient and Hessian against central differences,
// with XᵀX regular (the β̂-centred form) and singular (a repeated column:
// the raw form).
func TestGaussianRegressionEnergy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, singular := range []bool{false, true} {
		x, y := gaussData(rng, 50, []float64{1, -2, 0.5}, 1.3)
		d := 3
		if singular {
			for i := range 50 {
				x[i*d+2] = 2 * x[i*d+1]
			}
		}
		e, err := model.NewGaussianRegression(x, y, d)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := e.LeastSquares(); ok == singular {
			t.Errorf("singular %v: LeastSquares ok = %v", singular, ok)
		}
		direct := func(th []float64) float64 {
			var u float64
			for i := range 50 {
				r := y[i]
				for j := range d {
					r -= x[i*d+j] * th[j]
				}
				u += th[d] + 0.5*r*r*math.Exp(-2*th[d])
			}
			return u
		}
		for range 5 {
			th := make([]float64, d+1)
			for j := range th {
				th[j] = rng.NormFloat64()
			}
			var u [1]float64
			e.Energies(u[:], th, []int{0})
			if want := direct(th); math.Abs(u[0]-want) > 1e-9*math.Abs(want) {
				t.Errorf("singular %v: U(%v) = %v, want %v", singular, th, u[0], want)
			}
			grad := make([]float64, d+1)
			e.AddGradient(grad, th, []int{0}, []float64{1})
			h := make([]float64, (d+1)*(d+1))
			e.AddHessian(h, th, []int{0}, []float64{1})
			const eps = 1e-5
			for j := range d + 1 {
				tp, tm := append([]float64{}, th...), append([]float64{}, th...)
				tp[j] += eps
				tm[j] -= eps
				if fd := (direct(tp) - direct(tm)) / (2 * eps); math.Abs(fd-grad[j]) > 1e-5*(1+math.Abs(fd)) {
					t.Errorf("singular %v: ∂U/∂θ%d = %v, want %v", singular, j, grad[j], fd)
				}
				gp, gm := make([]float64, d+1), make([]float64, d+1)
				e.AddGradient(gp, tp, []int{0}, []float64{1})
				e.AddGradient(gm, tm, []int{0}, []float64{1})
				for k := j; k < d+1; k++ {
					if fd := (gp[k] - gm[k]) / (2 * eps); math.Abs(fd-h[j*(d+1)+k]) > 1e-5*(1+math.Abs(fd)) {
						t.Errorf("singular %v: ∂²U/∂θ%d∂θ%d = %v, want %v", singular, j, k, h[j*(d+1)+k], fd)
					}
				}
			}
		}
	}
}

// gaussQuadrature returns the exact posterior means and sds of (β, log σ)
// under a flat prior on β and the scale prior sp on σ: integrating β out,
// p(s | y) ∝ exp(−(N − d)s − RSS·e^{−2s}/2)·p_σ(e^s)·e^s, by quadrature on
// a fine grid; β | s ~ N(β̂, e^{2s}(XᵀX)⁻¹), so E β = β̂ and
// Var β_j = E[e^{2s}]·(XᵀX)⁻¹_jj.
func gaussQuadrature(t *testing.T, x []float64, n, d int, e *model.GaussianRegression, sp model.ScalePrior) (mean, sd []float64) {
	t.Helper()
	bhat, rss, ok := e.LeastSquares()
	if !ok {
		t.Fatal("singular design")
	}
	logp := func(s float64) float64 {
		f, _, _ := model.ScaleLogDensity(sp, s)
		return -float64(n-d)*s - rss*math.Exp(-2*s)/2 + f
	}
	s0 := 0.5 * math.Log(rss/float64(n-d))
	const m = 40001
	lo, hi := s0-3, s0+3
	h := (hi - lo) / (m - 1)
	ref := logp(s0)
	var z, m1, m2, e2 float64
	for k := range m {
		s := lo + float64(k)*h
		w := math.Exp(logp(s) - ref)
		z += w
		m1 += w * s
		m2 += w * s * s
		e2 += w * math.Exp(2*s)
	}
	m1, m2, e2 = m1/z, m2/z, e2/z
	xtx := mat.NewSymDense(d, nil)
	for i := range n {
		for a := range d {
			for b := a; b < d; b++ {
				xtx.SetSym(a, b, xtx.At(a, b)+x[i*d+a]*x[i*d+b])
			}
		}
	}
	var inv mat.SymDense
	var chol mat.Cholesky
	chol.Factorize(xtx)
	chol.InverseTo(&inv)
	mean, sd = make([]float64, d+1), make([]float64, d+1)
	for j := range d {
		mean[j], sd[j] = bhat[j], math.Sqrt(e2*inv.At(j, j))
	}
	mean[d], sd[d] = m1, math.Sqrt(m2-m1*m1)
	return mean, sd
}

// momentZ returns the largest |z| of the means and variances of r's
// draws against mean and sd (CheckMoments's statistics) and its
// coordinate.
func momentZ(r *exactmh.Result, mean, sd []float64) (zmax float64, at int) {
	for j := range mean {
		x := r.Samples(j)
		sq := make([][]float64, len(x))
		var m, v float64
		var n int
		for c, ch := range x {
			sq[c] = make([]float64, len(ch))
			for i, xi := range ch {
				m += xi
				sq[c][i] = (xi - mean[j]) * (xi - mean[j])
				v += sq[c][i]
				n++
			}
		}
		m /= float64(n)
		v /= float64(n)
		for _, z := range []float64{(m - mean[j]) / diagnostics.MCSEMean(x), (v - sd[j]*sd[j]) / diagnostics.MCSEMean(sq)} {
			if math.Abs(z) > math.Abs(zmax) {
				zmax, at = z, j
			}
		}
	}
	return zmax, at
}

// TestGaussianRegressionMoments samples the posterior of a Gaussian
// linear model with σ unknown (N = 30, an intercept and two covariates,
// σ = 1.3; flat prior on β, brms's half-t(3, 0, 2.5) on σ) with NUTS on
// the sufficient-statistic energy — the route the automatic default
// takes — and compares every coordinate's mean and variance with the
// exact ones (gaussQuadrature), within 4.5 Monte Carlo standard errors.
// Mutants, which must be caught: the Jacobian of log σ dropped, and the
// likelihood's N·log σ term counting N − 3 data.
func TestGaussianRegressionMoments(t *testing.T) {
	const n, d = 30, 3
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := gaussData(rng, n, []float64{1, -2, 0.5}, 1.3)
	sp := model.HalfStudentT(3, 2.5)
	run := func(mutate func(*model.GaussianRegression, *model.WithScale)) (*exactmh.Result, []float64, []float64) {
		e, err := model.NewGaussianRegression(x, y, d)
		if err != nil {
			t.Fatal(err)
		}
		mean, sd := gaussQuadrature(t, x, n, d, e, sp)
		prior := &model.WithScale{Scale: sp}
		if mutate != nil {
			mutate(e, prior)
		}
		p := &exactmh.Posterior{Energy: e, Prior: prior}
		c, err := exactmh.Choose(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "NUTS" {
			t.Fatalf("the automatic default chose %s (%s), want NUTS on the sufficient statistics", c.Name, c.Reason)
		}
		r, err := exactmh.Sample(context.Background(), p, c.Kernel,
			&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		return r, mean, sd
	}
	r, mean, sd := run(nil)
	if err := mcmctest.CheckMoments(r, mean, sd, 4.5); err != nil {
		t.Fatal(err)
	}
	z, j := momentZ(r, mean, sd)
	t.Logf("exact model: largest |z| %.2f (θ%d); E log σ = %.4f, sd %.4f", z, j, mean[d], sd[d])
	for _, m := range []struct {
		name   string
		mutate func(*model.GaussianRegression, *model.WithScale)
	}{
		{"Jacobian of log σ dropped", func(_ *model.GaussianRegression, p *model.WithScale) { model.MutateNoJacobian(p) }},
		{"N·log σ counting N − 3", func(e *model.GaussianRegression, _ *model.WithScale) { model.MutateGaussianN(e, n-d) }},
	} {
		r, mean, sd := run(m.mutate)
		err := mcmctest.CheckMoments(r, mean, sd, 4.5)
		z, j := momentZ(r, mean, sd)
		if !mcmctest.ShowsBias(err) {
			t.Errorf("mutant %q passes: largest |z| %.2f (θ%d)", m.name, z, j)
			continue
		}
		t.Logf("mutant %q caught: z = %.1f (θ%d)", m.name, z, j)
	}
}

// gaussSBCModel draws β ~ N(0, 1)³ (an intercept and two covariates),
// σ from its half-normal(1) prior and N = 25 data given them, and poses
// the posterior with every parameter unknown on the sufficient-statistic
// energy; mutate, if set, alters it (a mutant).
type gaussSBCModel struct {
	mutate func(*model.GaussianRegression, *model.WithScale)
}

func (m gaussSBCModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	const n, d = 25, 3
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = rng.NormFloat64()
	}
	sigma := math.Abs(rng.NormFloat64())
	x, y := gaussData(rng, n, beta, sigma)
	e, err := model.NewGaussianRegression(x, y, d)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	base, err := model.NewIsoGaussian(d, 1)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	prior := &model.WithScale{Base: base, Scale: model.HalfNormal(1)}
	if m.mutate != nil {
		m.mutate(e, prior)
	}
	theta := append(beta, math.Log(sigma))
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	mode, _, _ := e.LeastSquares()
	mode = append(append([]float64{}, mode...), math.Log(sigma))
	sd := []float64{0.3, 0.3, 0.3, 0.2}
	return theta, mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}, nil
}

// TestGaussianRegressionSBC is simulation-based calibration of NUTS on
// the sufficient-statistic energy with β and σ all unknown (200
// replicates, 19 draws each): every coordinate's ranks uniform at
// Bonferroni level 0.01. The mutant whose likelihood's N·log σ term
// counts 15 of the 25 data must be rejected at 0.01 (the Jacobian
// mutant is caught by TestGaussianRegressionMoments).
func TestGaussianRegressionSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	nuts := func(mcmctest.Problem) exactmh.Kernel { return &exactmh.NUTS{} }
	r, err := mcmctest.SBC(gaussSBCModel{}, nuts, &mcmctest.SBCOptions{Replicates: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SBC p-values %.3g (thin %d)", r.P, r.Thin)
	if r.Reject(0.01) {
		t.Errorf("SBC rejects uniformity: p = %.3g", r.P)
	}
	mut, err := mcmctest.SBC(gaussSBCModel{mutate: func(e *model.GaussianRegression, _ *model.WithScale) { model.MutateGaussianN(e, 15) }},
		nuts, &mcmctest.SBCOptions{Replicates: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mutant N·log σ counting 15 of 25 data: SBC p-values %.3g", mut.P)
	if !mut.Reject(0.01) {
		t.Errorf("SBC misses the mutant counting 15 of 25 data: p = %.3g", mut.P)
	}
}

// meanVar returns the mean and variance of coordinate j's draws and
// their Monte Carlo standard errors.
func meanVar(r *exactmh.Result, j int) (m, v, seM, seV float64) {
	x := r.Samples(j)
	var n int
	for _, ch := range x {
		for _, xi := range ch {
			m += xi
			n++
		}
	}
	m /= float64(n)
	sq := make([][]float64, len(x))
	for c, ch := range x {
		sq[c] = make([]float64, len(ch))
		for i, xi := range ch {
			sq[c][i] = (xi - m) * (xi - m)
			v += sq[c][i]
		}
	}
	v /= float64(n)
	return m, v, diagnostics.MCSEMean(x), diagnostics.MCSEMean(sq)
}

// compareZ returns the largest two-sample |z| of the means and variances
// of r's draws against ref's (both runs' Monte Carlo errors counted), and
// its coordinate.
func compareZ(r, ref *exactmh.Result) (zmax float64, at int) {
	for j := range r.Dim {
		m, v, sm, sv := meanVar(r, j)
		m0, v0, sm0, sv0 := meanVar(ref, j)
		for _, z := range []float64{(m - m0) / math.Hypot(sm, sm0), (v - v0) / math.Hypot(sv, sv0)} {
			if !(math.Abs(z) <= math.Abs(zmax)) {
				zmax, at = z, j
			}
		}
	}
	return zmax, at
}

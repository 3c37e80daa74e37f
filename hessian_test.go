// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// negLogPostGrad returns ∇(−log π)(θ) = β·Σ∇U_i − ∇log p from the energy's
// own Gradienter and the prior's gradient, independently of the package's
// Hessian code.
func negLogPostGrad(t *testing.T, p *exactmh.Posterior, theta []float64) []float64 {
	t.Helper()
	gr, ok := p.Energy.(exactmh.Gradienter)
	if !ok {
		t.Fatalf("%T has no gradient", p.Energy)
	}
	n := p.Len()
	idx, w := make([]int, n), make([]float64, n)
	beta := p.Beta
	if beta == 0 {
		beta = 1
	}
	for i := range idx {
		idx[i], w[i] = i, beta
	}
	g := make([]float64, len(theta))
	gr.AddGradient(g, theta, idx, w)
	if p.Prior != nil {
		lp := make([]float64, len(theta))
		p.Prior.(exactmh.PriorGradienter).AddLogPriorGradient(lp, theta)
		for j := range g {
			g[j] -= lp[j]
		}
	}
	return g
}

// fdHessian is the central difference of negLogPostGrad with step h in
// every coordinate (not symmetrised).
func fdHessian(t *testing.T, p *exactmh.Posterior, theta []float64, h float64) *mat.Dense {
	d := len(theta)
	H := mat.NewDense(d, d, nil)
	x := append([]float64(nil), theta...)
	for a := range d {
		x[a] = theta[a] + h
		gp := negLogPostGrad(t, p, x)
		x[a] = theta[a] - h
		gm := negLogPostGrad(t, p, x)
		x[a] = theta[a]
		for b := range d {
			H.Set(a, b, (gp[b]-gm[b])/(2*h))
		}
	}
	return H
}

// maxRelDiff returns max |A_ab − B_ab| / max |B_ab|.
func maxRelDiff(a mat.Matrix, b mat.Matrix) float64 {
	r, c := b.Dims()
	var diff, size float64
	for i := range r {
		for j := range c {
			diff = math.Max(diff, math.Abs(a.At(i, j)-b.At(i, j)))
			size = math.Max(size, math.Abs(b.At(i, j)))
		}
	}
	return diff / size
}

// hessianCases are a posterior for every ready-made model and GLM family,
// with a point at which to take the Hessian.
func hessianCases(t *testing.T) []struct {
	name  string
	p     *exactmh.Posterior
	theta []float64
} {
	lr := simLogistic(t, 500, 4, 3)
	gauss4, _ := model.NewIsoGaussian(4, 1.5)
	rng := rand.New(rand.NewPCG(4, 4))
	x, y := make([]float64, 400*3), make([]float64, 400)
	for i := range y {
		for j := range 3 {
			x[i*3+j] = rng.NormFloat64()
		}
		y[i] = x[i*3] - x[i*3+2] + 2*rng.NormFloat64()
	}
	st, _ := model.NewStudentTRegression(x, y, 3, 3)
	sigma := mat.NewSymDense(3, []float64{1, 0.3, 0, 0.3, 2, 0.4, 0, 0.4, 1.5})
	ym := make([]float64, 50*3)
	for k := range ym {
		ym[k] = rng.NormFloat64() + 1
	}
	gm, _ := model.NewGaussianMean(ym, 3, sigma)
	prior3, _ := model.NewGaussian([]float64{0, 1, -1}, []float64{0.5, 2, 1})
	mx := make([]float64, 300)
	for i := range mx {
		mx[i] = math.Sqrt2*rng.NormFloat64() + float64(rng.IntN(2))
	}
	mix, _ := model.NewGaussianMixture(mx, 2)
	box, _ := model.NewCube(2, -3, 3)
	lap, _ := model.NewIsoLaplace(2, 1)
	cases := []struct {
		name  string
		p     *exactmh.Posterior
		theta []float64
	}{
		{"logistic, Gaussian prior, β = 0.5", &exactmh.Posterior{Energy: lr, Prior: gauss4, Beta: 0.5}, []float64{0.3, -0.2, 0.5, 1}},
		{"Student-t, flat", &exactmh.Posterior{Energy: st}, []float64{0.8, 0.1, -0.9}},
		{"Student-t far from the data", &exactmh.Posterior{Energy: st}, []float64{5, -3, 2}},
		{"Gaussian mean, Gaussian prior", &exactmh.Posterior{Energy: gm, Prior: prior3}, []float64{0.9, 1.2, 0.8}},
		{"mixture, box", &exactmh.Posterior{Energy: mix, Prior: box, Beta: 0.1}, []float64{0.2, 0.7}},
		{"mixture near the other mode", &exactmh.Posterior{Energy: mix, Prior: box}, []float64{1.1, -0.8}},
		{"mixture, Laplace prior", &exactmh.Posterior{Energy: mix, Prior: lap}, []float64{-0.5, 2}},
	}
	for _, fam := range []string{"gaussian", "poisson", "probit", "cloglog"} {
		c := simGLM(fam, 300, 5)
		cases = append(cases, struct {
			name  string
			p     *exactmh.Posterior
			theta []float64
		}{"NewGLM " + fam, &exactmh.Posterior{Energy: c.energy(t), Prior: func() exactmh.Prior { g, _ := model.NewIsoGaussian(2, 3); return g }()}, []float64{0.4, -0.5}})
	}
	return cases
}

// The exact Hessian of every ready-made model and GLM family agrees with
// central differences of its gradient.
func TestHessianVersusGradient(t *testing.T) {
	for _, c := range hessianCases(t) {
		h, err := c.p.Hessian(c.theta)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		fd := fdHessian(t, c.p, c.theta, 1e-5)
		t.Logf("%s: relative difference %.2g, H00 = %.4g", c.name, maxRelDiff(h, fd), h.At(0, 0))
		if r := maxRelDiff(h, fd); r > 1e-8 {
			t.Errorf("%s: Hessian %v, central differences %v (max relative difference %.2g)",
				c.name, mat.Formatted(h, mat.Squeeze()), mat.Formatted(fd, mat.Squeeze()), r)
		}
		// Without an exact Hessian (the energy's other methods hidden),
		// Posterior.Hessian differentiates the gradient itself.
		gr := c.p.Energy.(exactmh.Gradienter)
		num, err := (&exactmh.Posterior{Energy: gradOnly{c.p.Energy, gr}, Prior: c.p.Prior, Beta: c.p.Beta}).Hessian(c.theta)
		if err != nil {
			t.Fatalf("%s, numerical: %v", c.name, err)
		}
		if r := maxRelDiff(num, h); r > 1e-6 {
			t.Errorf("%s: numerical Hessian differs from the exact one by %.2g relative", c.name, r)
		}
	}
}

// gradOnly is an energy with a gradient and nothing else: no GLM methods,
// no Hessian.
type gradOnly struct {
	exactmh.Energy
	g exactmh.Gradienter
}

func (e gradOnly) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.g.AddGradient(grad, theta, idx, w)
}

// gradPrior is a prior with a gradient and no Hessian.
type gradPrior struct{ g *model.Gaussian }

func (p gradPrior) LogPrior(theta []float64) float64 { return p.g.LogPrior(theta) }
func (p gradPrior) AddLogPriorGradient(g, theta []float64) {
	p.g.AddLogPriorGradient(g, theta)
}

// The priors' Hessians: Gaussian −diag(1/SD²), the others 0; a prior
// without one is differentiated numerically.
func TestPriorHessians(t *testing.T) {
	e, _ := model.NewGaussianMean([]float64{0.5, -0.5}, 2, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	g, _ := model.NewGaussian([]float64{0, 1}, []float64{0.5, 2})
	box, _ := model.NewCube(2, -1, 1)
	ball, _ := model.NewBall(2, 1, nil)
	lap, _ := model.NewIsoLaplace(2, 1)
	theta := []float64{0.2, 0.3}
	// One datum: the energy's Hessian is the identity.
	for _, c := range []struct {
		name  string
		prior exactmh.Prior
		diag  [2]float64
	}{
		{"flat", nil, [2]float64{1, 1}},
		{"Gaussian", g, [2]float64{1 + 4, 1 + 0.25}},
		{"Gaussian without a Hessian", gradPrior{g}, [2]float64{1 + 4, 1 + 0.25}},
		{"box", box, [2]float64{1, 1}},
		{"ball", ball, [2]float64{1, 1}},
		{"Laplace", lap, [2]float64{1, 1}},
	} {
		h, err := (&exactmh.Posterior{Energy: e, Prior: c.prior}).Hessian(theta)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(h.At(0, 0)-c.diag[0]) > 1e-8 || math.Abs(h.At(1, 1)-c.diag[1]) > 1e-8 || math.Abs(h.At(0, 1)) > 1e-8 {
			t.Errorf("%s: H = %v, want diag%v", c.name, mat.Formatted(h, mat.Squeeze()), c.diag)
		}
	}
}

func TestHessianErrors(t *testing.T) {
	lr := simLogistic(t, 50, 2, 1)
	ball, _ := model.NewBall(2, 1, nil)
	_, err := (&exactmh.Posterior{Energy: noGradEnergy{lr}}).Hessian([]float64{0, 0})
	if !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("energy without gradient or Hessian: err = %v, want ErrNoGradient", err)
	}
	_, err = (&exactmh.Posterior{Energy: lr, Prior: noGradPrior{}}).Hessian([]float64{0, 0})
	if !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("prior without gradient or Hessian: err = %v, want ErrNoGradient", err)
	}
	for name, f := range map[string]func() error{
		"wrong length": func() error { _, err := (&exactmh.Posterior{Energy: lr}).Hessian([]float64{0}); return err },
		"outside support": func() error {
			_, err := (&exactmh.Posterior{Energy: lr, Prior: ball}).Hessian([]float64{2, 0})
			return err
		},
		"nil posterior": func() error { _, err := (*exactmh.Posterior)(nil).Hessian([]float64{0}); return err },
		"non-finite": func() error {
			_, err := (&exactmh.Posterior{Energy: nanGradEnergy{nanGrad: true}}).Hessian([]float64{0})
			return err
		},
	} {
		err := f()
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "exactmh: ") || strings.Count(err.Error(), "exactmh:") != 1 {
			t.Errorf("%s: %q, want one exactmh: prefix", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// glmCase is a simulated GLM with d = 2 covariates x_ij ~ N(0, 0.5²) and
// true coefficients (0.5, −0.3), so that z_i stays moderate.
type glmCase struct {
	name   string
	family model.GLMFamily
	x, y   []float64
	// direct is f(y, z) written out independently of the family's code.
	direct func(y, z float64) float64
}

var glmTrue = []float64{0.5, -0.3}

// simGLM draws n responses of the named family.
func simGLM(name string, n int, seed uint64) glmCase {
	rng := rand.New(rand.NewPCG(seed, 17))
	const d = 2
	x, y := make([]float64, n*d), make([]float64, n)
	c := glmCase{name: name, x: x, y: y}
	for i := range n {
		var z float64
		for j := range d {
			x[i*d+j] = 0.5 * rng.NormFloat64()
			z += x[i*d+j] * glmTrue[j]
		}
		switch name {
		case "gaussian":
			y[i] = z + 0.5*rng.NormFloat64()
		case "poisson":
			// Knuth's sampler: the rates e^z are small here.
			l, p := math.Exp(-math.Exp(z)), 1.0
			for p *= rng.Float64(); p > l; p *= rng.Float64() {
				y[i]++
			}
		case "probit", "cloglog":
			if name == "probit" && z+rng.NormFloat64() > 0 {
				y[i] = 1
			}
			if name == "cloglog" && rng.Float64() < -math.Expm1(-math.Exp(z)) {
				y[i] = 1
			}
		}
	}
	switch name {
	case "gaussian":
		c.family = model.GaussianFamily{Sigma: 0.5}
		c.direct = func(y, z float64) float64 { return (y - z) * (y - z) / (2 * 0.25) }
	case "poisson":
		c.family = model.PoissonFamily{}
		c.direct = func(y, z float64) float64 { return math.Exp(z) - y*z }
	case "probit":
		c.family = model.ProbitFamily{}
		c.direct = func(y, z float64) float64 {
			if y == 0 {
				z = -z
			}
			return -math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
		}
	case "cloglog":
		c.family = cloglogFamily{}
		c.direct = func(y, z float64) float64 {
			if y == 0 {
				return math.Exp(z)
			}
			return -math.Log(1 - math.Exp(-math.Exp(z)))
		}
	}
	return c
}

func (c glmCase) energy(t testing.TB) *model.GLMEnergy {
	t.Helper()
	e, err := model.NewGLM(c.x, c.y, 2, c.family)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var readyFamilies = []string{"gaussian", "poisson", "probit"}

// Energies, differences and gradients of the ready-made families agree
// with the direct formulas and with finite differences.
func TestGLMFamilyEnergies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range append(readyFamilies, "cloglog") {
		c := simGLM(name, 200, 3)
		e := c.energy(t)
		n := e.Len()
		idx := make([]int, n)
		w := make([]float64, n)
		for i := range idx {
			idx[i], w[i] = i, 1
		}
		u, u2, diff := make([]float64, n), make([]float64, n), make([]float64, n)
		for range 20 {
			th := []float64{2 * rng.NormFloat64(), 2 * rng.NormFloat64()}
			th2 := []float64{th[0] + 0.3*rng.NormFloat64(), th[1] + 0.3*rng.NormFloat64()}
			e.Energies(u, th, idx)
			e.Energies(u2, th2, idx)
			e.EnergyDiffs(diff, th, th2, idx)
			for i := range n {
				row := e.Row(i)
				z := row[0]*th[0] + row[1]*th[1]
				if want := c.direct(c.y[i], z); math.Abs(u[i]-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s: U_%d(%v) = %.17g, direct %.17g", name, i, th, u[i], want)
				}
				if u[i] != e.Loss(i, z) {
					t.Fatalf("%s: Energies and Loss disagree for datum %d: %v vs %v", name, i, u[i], e.Loss(i, z))
				}
				if want := u[i] - u2[i]; math.Abs(diff[i]-want) > 1e-12*(1+math.Abs(u[i])) {
					t.Fatalf("%s: ΔU_%d = %.17g, want %.17g", name, i, diff[i], want)
				}
			}
			// Gradient of Σ U_i by central differences.
			g := make([]float64, 2)
			e.AddGradient(g, th, idx, w)
			sum := func(v []float64) float64 {
				e.Energies(u2, v, idx)
				var s float64
				for _, x := range u2 {
					s += x
				}
				return s
			}
			for j := range 2 {
				const h = 1e-6
				up, dn := append([]float64(nil), th...), append([]float64(nil), th...)
				up[j] += h
				dn[j] -= h
				fd := (sum(up) - sum(dn)) / (2 * h)
				if math.Abs(g[j]-fd) > 1e-5*(1+math.Abs(fd)) {
					t.Errorf("%s: ∂ΣU/∂θ%d at %v = %.10g, finite difference %.10g", name, j, th, g[j], fd)
				}
			}
			// The fused energies-and-gradient agree bit for bit.
			g2, u3 := make([]float64, 2), make([]float64, n)
			e.EnergiesAndGradient(u3, g2, th, idx, w)
			if g2[0] != g[0] || g2[1] != g[1] {
				t.Errorf("%s: EnergiesAndGradient gradient %v, AddGradient %v", name, g2, g)
			}
			for i := range n {
				if u3[i] != u[i] {
					t.Fatalf("%s: EnergiesAndGradient U_%d = %v, Energies %v", name, i, u3[i], u[i])
				}
			}
		}
	}
}

// The derivatives of every family agree with finite differences of its loss
// over a wide range of z, including the probit's far tails, and stay below
// the family's global bounds.
func TestGLMFamilyDerivatives(t *testing.T) {
	fams := map[string]model.GLMFamily{
		"gaussian": model.GaussianFamily{Sigma: 0.7}, "poisson": model.PoissonFamily{},
		"probit": model.ProbitFamily{}, "cloglog": cloglogFamily{},
	}
	for name, f := range fams {
		for _, y := range []float64{0, 1, 3} {
			if y == 3 && (name == "probit" || name == "cloglog") {
				continue
			}
			lo, hi := -40.0, 40.0
			if name == "poisson" || name == "cloglog" {
				lo, hi = -10, 4
			}
			var worst3 float64
			for z := lo; z <= hi; z += 0.01 {
				f1, f2 := f.LossDerivs(y, z)
				h := 1e-5 * math.Max(1, math.Abs(z))
				fd1 := (f.Loss(y, z+h) - f.Loss(y, z-h)) / (2 * h)
				a, _ := f.LossDerivs(y, z+h)
				b, _ := f.LossDerivs(y, z-h)
				fd2 := (a - b) / (2 * h)
				_, c := f.LossDerivs(y, z+h)
				_, d := f.LossDerivs(y, z-h)
				fd3 := (c - d) / (2 * h)
				scale := 1 + math.Abs(f.Loss(y, z))
				if math.Abs(f1-fd1) > 1e-6*scale {
					t.Fatalf("%s, y = %v, z = %v: f′ = %.12g, finite difference %.12g", name, y, z, f1, fd1)
				}
				if math.Abs(f2-fd2) > 1e-6*(1+math.Abs(f1)) {
					t.Fatalf("%s, y = %v, z = %v: f″ = %.12g, finite difference %.12g", name, y, z, f2, fd2)
				}
				// Each derivative lies below the bound over a small interval
				// around z and below the global bound where there is one.
				for k, v := range []float64{f1, f2, fd3} {
					for _, b := range []float64{f.LossBound(y, k+1, z-0.01, z+0.01), f.LossBound(y, k+1, math.Inf(-1), math.Inf(1))} {
						if math.Abs(v) > b*(1+1e-6)+1e-9 {
							t.Fatalf("%s, y = %v, z = %v: |f^(%d)| = %.12g above its bound %.12g", name, y, z, k+1, math.Abs(v), b)
						}
					}
					if b := f.LossBound(y, 3, math.Inf(-1), math.Inf(1)); k == 2 && !math.IsInf(b, 1) && b > 0 {
						worst3 = math.Max(worst3, math.Abs(v)/b)
					}
				}
			}
			if worst3 > 0 {
				t.Logf("%s, y = %v: largest |f‴|/(global bound) %.4f", name, y, worst3)
			}
		}
	}
	// Extreme arguments: finite losses (or +Inf where e^z overflows), never NaN.
	p := model.ProbitFamily{}
	if v := p.Loss(1, -40); math.Abs(v-804.60844201375378817) > 1e-12*804 {
		t.Errorf("probit −log Φ(−40) = %.17g, want 804.60844201375378817", v)
	}
	if v := p.Loss(0, 1e6); !(v > 4.9e11 && v < 5.1e11) {
		t.Errorf("probit −log Φ(−10⁶) = %v, want ≈ 5·10¹¹", v)
	}
	if v := p.Loss(1, 40); !(v >= 0 && v < 1e-300) {
		t.Errorf("probit −log Φ(40) = %v, want a tiny non-negative number", v)
	}
	if f1, f2 := p.LossDerivs(1, -1e3); math.Abs(f1+1000.001) > 1e-2 || !(f2 > 0.99999 && f2 <= 1) {
		t.Errorf("probit derivatives at −1000: %v, %v, want ≈ −1000, 1", f1, f2)
	}
	q := model.PoissonFamily{}
	if v := q.Loss(2, 800); !math.IsInf(v, 1) {
		t.Errorf("Poisson loss at z = 800 is %v, want +Inf", v)
	}
	if v := q.Loss(0, math.Inf(-1)); v != 0 {
		t.Errorf("Poisson loss of a zero count at z = −Inf is %v, want 0", v)
	}
	if v := q.Loss(3, -800); v != 2400 {
		t.Errorf("Poisson loss at z = −800, y = 3 is %v, want 2400", v)
	}
}

// The ready-made families' bounds hold (CheckBound, CheckRange,
// CheckFlyBound) on bounded supports, and the unbounded cases fail with an
// error naming the datum.
func TestGLMFamilyBounds(t *testing.T) {
	ball, _ := model.NewBall(2, 2, nil)
	box, _ := model.NewBox([]float64{-1, -2}, []float64{2, 1})
	gp, _ := model.NewIsoGaussian(2, 3)
	for _, name := range readyFamilies {
		c := simGLM(name, 200, 4)
		e := c.energy(t)
		for _, prior := range []exactmh.Prior{ball, box} {
			p := &exactmh.Posterior{Energy: e, Prior: prior}
			opt := &exactmh.CheckOptions{Points: 200, Spread: 1.5, Seed: 3}
			db, err := p.DiffBound()
			if err != nil {
				t.Fatalf("%s, %T: %v", name, prior, err)
			}
			worst, err := exactmh.CheckBound(p, db, opt)
			if err != nil {
				t.Errorf("%s, %T: %v", name, prior, err)
			} else if worst.Ratio < 0.1 {
				t.Errorf("%s, %T: DiffBound loose: largest |ΔU|/(c_i M) = %.3f", name, prior, worst.Ratio)
			}
			r, err := p.EnergyRange()
			if err != nil {
				t.Fatalf("%s, %T: %v", name, prior, err)
			}
			wr, err := exactmh.CheckRange(p, r, opt)
			if err != nil {
				t.Errorf("%s, %T: %v", name, prior, err)
			}
			// The generic Lipschitz range holds too and is no narrower.
			lip, err := exactmh.GLMEnergyRange(e, prior)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exactmh.CheckRange(p, lip, opt); err != nil {
				t.Errorf("%s, %T: GLMEnergyRange: %v", name, prior, err)
			}
			for i := range r.Width {
				if lip.Width[i] < r.Width[i]*(1-1e-12) {
					t.Fatalf("%s: Lipschitz width %v below the exact %v for datum %d", name, lip.Width[i], r.Width[i], i)
				}
			}
			for _, at := range [][]float64{nil, {0.4, -0.2}} {
				fb, err := e.FlyBound(at, prior)
				if err != nil {
					t.Fatalf("%s, %T: %v", name, prior, err)
				}
				v, err := exactmh.CheckFlyBound(p, fb, opt)
				var gap float64
				if v != nil {
					gap = v.Gap
				}
				if err != nil {
					t.Errorf("%s, %T, at %v: %v", name, prior, at, err)
				}
				t.Logf("%s, %T, tight at %v: DiffBound ratio %.3f, range %.3g, smallest FlyMC gap %.3g", name, prior, at, worst.Ratio, wr.Ratio, gap)
			}
		}
		// On an unbounded support.
		p := &exactmh.Posterior{Energy: e, Prior: gp}
		_, errD := p.DiffBound()
		_, errR := p.EnergyRange()
		_, errT := e.TaylorBound(2, gp)
		_, errF := e.FlyBound(nil, gp)
		if errR == nil {
			t.Errorf("%s: EnergyRange on an unbounded support: no error", name)
		}
		switch name {
		case "gaussian", "probit": // f′ unbounded; f″, f‴ bounded
			if errT != nil || errF != nil {
				t.Errorf("%s: Taylor or FlyMC bound on ℝ²: %v, %v", name, errT, errF)
			}
		case "poisson": // every derivative unbounded
			if errT == nil || errF == nil {
				t.Errorf("poisson: Taylor or FlyMC bound on ℝ² without error")
			}
		}
		if errD == nil || !strings.Contains(errD.Error(), "datum 0") || !strings.Contains(errD.Error(), "BoundedSupport") {
			t.Errorf("%s: DiffBound on ℝ²: %v, want an error naming datum 0 and the bounded support it needs", name, errD)
		}
		t.Logf("%s on ℝ²: %v", name, errD)
	}
	// The Gaussian's FlyMC bound is exact: every gap is FlyMC's margin.
	c := simGLM("gaussian", 200, 4)
	e := c.energy(t)
	fb, _ := e.FlyBound([]float64{0.5, -0.3}, nil)
	v, err := exactmh.CheckFlyBound(&exactmh.Posterior{Energy: e}, fb, &exactmh.CheckOptions{Center: []float64{0.5, -0.3}, Spread: 0.2})
	if err != nil || v.Gap > 1.1e-6 {
		t.Fatalf("Gaussian FlyMC bound: smallest gap %v (%v), want the margin 1e-6", v, err)
	}
}

// The Taylor remainder bounds of the families hold at random points
// (remainder/bound ≤ 1) and are not wildly loose, measured as
// TestTaylorBounds does.
func TestGLMTaylorBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	ball, _ := model.NewBall(2, 1.5, nil)
	for _, name := range append(readyFamilies, "cloglog") {
		c := simGLM(name, 100, 5)
		e := c.energy(t)
		var prior exactmh.Prior
		if name == "poisson" || name == "cloglog" {
			prior = ball // the Poisson and cloglog bounds need a bounded support
		}
		for _, order := range []int{1, 2} {
			b, err := e.TaylorBound(order, prior)
			if err != nil {
				t.Fatal(err)
			}
			worst, worstAbs := 0.0, 0.0
			for range 200 {
				center, th := make([]float64, 2), make([]float64, 2)
				for {
					for j := range 2 {
						center[j] = 2*rng.Float64() - 1
						th[j] = center[j] + 0.5*rng.NormFloat64()
					}
					if prior == nil || ball.Contains(center) && ball.Contains(th) {
						break
					}
				}
				l1 := math.Abs(th[0]-center[0]) + math.Abs(th[1]-center[1])
				fact := 2.0
				if order == 2 {
					fact = 6
				}
				for i := range e.Len() {
					r := taylorRemainder(e, i, center, th, order)
					worstAbs = math.Max(worstAbs, math.Abs(r))
					worst = math.Max(worst, math.Abs(r)/(b[i]*math.Pow(l1, float64(order+1))/fact))
				}
			}
			if name == "gaussian" && order == 2 {
				// The remainder is 0; only the finite differences' rounding is left.
				if worstAbs > 1e-6 {
					t.Errorf("gaussian, order 2: remainder %.3g, want 0", worstAbs)
				}
				continue
			}
			if worst > 1+1e-6 {
				t.Errorf("%s, order %d: remainder reaches %.3f × its bound", name, order, worst)
			}
			if worst < 0.05 {
				t.Errorf("%s, order %d: bound loose, remainder at most %.4f × it", name, order, worst)
			}
			t.Logf("%s, order %d: largest remainder/bound %.3f", name, order, worst)
		}
	}
}

// postMeanCheck compares the posterior means of two runs within k standard
// errors of their difference.
func postMeanCheck(t *testing.T, name string, a, b *exactmh.Result, k float64) {
	t.Helper()
	for j := range 2 {
		ma, mb := mean(flatten(a.Samples(j))), mean(flatten(b.Samples(j)))
		se := math.Hypot(diagnostics.MCSEMean(a.Samples(j)), diagnostics.MCSEMean(b.Samples(j)))
		if !(math.Abs(ma-mb) <= k*se) {
			t.Errorf("%s θ%d: %s mean %.4f vs %s %.4f (se %.4f)", name, j, a.Kernel, ma, b.Kernel, mb, se)
		}
		if ess := diagnostics.ESSBulk(a.Samples(j)); ess < 100 {
			t.Errorf("%s θ%d: %s bulk ESS %.0f < 100", name, j, a.Kernel, ess)
		}
	}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// SMH-2 and MH agree on every family's posterior, from FindMAP's centre;
// on the Gaussian (conjugate) family both match the exact posterior.
func TestGLMFamilySampling(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a statistical check of every family (13,000 transitions each); runs without -short")
	}
	ctx := context.Background()
	gp, _ := model.NewIsoGaussian(2, 3)
	ball, _ := model.NewBall(2, 3, nil)
	for _, name := range readyFamilies {
		c := simGLM(name, 300, 7)
		e := c.energy(t)
		var prior exactmh.Prior = gp
		if name == "poisson" {
			prior = ball
		}
		p := &exactmh.Posterior{Energy: e, Prior: prior}
		m, err := exactmh.FindMAP(ctx, p, []float64{0, 0}, nil)
		if err != nil {
			t.Fatalf("%s: FindMAP: %v", name, err)
		}
		set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 4000, Seed: 8, Init: m.Theta}
		smh, err := exactmh.Sample(ctx, p, exactmh.SMH{Order: 2, Center: m.Theta}, set)
		if err != nil {
			t.Fatalf("%s: SMH-2: %v", name, err)
		}
		mh, err := exactmh.Sample(ctx, p, exactmh.MH{}, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 8000, Seed: 9, Init: m.Theta})
		if err != nil {
			t.Fatal(err)
		}
		postMeanCheck(t, name, smh, mh, 4)
		t.Logf("%s: MAP %.4f, SMH-2 accept %.3f, mean batch %.3f", name, m.Theta, smh.Sampling().AcceptRate(), smh.Sampling().MeanBatch())
		if name != "gaussian" {
			continue
		}
		// Conjugate: N(0, 3²I) prior, σ = 0.5 noise.
		var a [2][2]float64
		var rhs [2]float64
		for i := range e.Len() {
			row := e.Row(i)
			for j := range 2 {
				rhs[j] += row[j] * c.y[i] / 0.25
				for l := range 2 {
					a[j][l] += row[j] * row[l] / 0.25
				}
			}
		}
		a[0][0] += 1.0 / 9
		a[1][1] += 1.0 / 9
		det := a[0][0]*a[1][1] - a[0][1]*a[1][0]
		cov := [2][2]float64{{a[1][1] / det, -a[0][1] / det}, {-a[1][0] / det, a[0][0] / det}}
		mu := []float64{cov[0][0]*rhs[0] + cov[0][1]*rhs[1], cov[1][0]*rhs[0] + cov[1][1]*rhs[1]}
		sd := []float64{math.Sqrt(cov[0][0]), math.Sqrt(cov[1][1])}
		for j := range 2 {
			if math.Abs(m.Theta[j]-mu[j]) > 1e-5 {
				t.Errorf("gaussian: MAP θ%d = %.8f, posterior mean %.8f", j, m.Theta[j], mu[j])
			}
		}
		fly, err := exactmh.Sample(ctx, p, exactmh.FlyMC{TightAt: m.Theta}, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*exactmh.Result{smh, mh, fly} {
			if err := mcmctest.CheckMoments(r, mu, sd, 4); err != nil {
				t.Errorf("gaussian %s: %v", r.Kernel, err)
			}
		}
		t.Logf("gaussian FlyMC-MAP: mean bright %.4f (the bound is exact)", fly.Sampling().MeanBatch())
	}
}

func TestNewGLMErrors(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	for name, tc := range map[string]struct {
		x, y []float64
		f    model.GLMFamily
		want string
	}{
		"nil family":   {x, []float64{0, 1}, nil, "nil family"},
		"short x":      {x[:3], []float64{0, 1}, model.ProbitFamily{}, "len(X) = 3"},
		"NaN y":        {x, []float64{0, math.NaN()}, model.ProbitFamily{}, "y[1]"},
		"probit label": {x, []float64{0, 2}, model.ProbitFamily{}, "y[1] = 2"},
		"count":        {x, []float64{1.5, 2}, model.PoissonFamily{}, "y[0] = 1.5"},
		"negative":     {x, []float64{1, -1}, model.PoissonFamily{}, "y[1] = -1"},
		"σ = 0":        {x, []float64{1, -1}, model.GaussianFamily{}, "σ = 0"},
		"σ = NaN":      {x, []float64{1, -1}, model.GaussianFamily{Sigma: math.NaN()}, "σ = NaN"},
	} {
		_, err := model.NewGLM(tc.x, tc.y, 2, tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	// Generic bounds fail clearly on bad input.
	e, _ := model.NewGLM(x, []float64{0, 1}, 2, model.ProbitFamily{})
	if _, err := exactmh.GLMTaylorBounder(e).TaylorBound(3, nil); err == nil {
		t.Error("GLMTaylorBound order 3: no error")
	}
	if _, err := exactmh.GLMFlyBound(e, []float64{1}, nil); err == nil {
		t.Error("GLMFlyBound with a short at: no error")
	}
	b3, _ := model.NewBall(3, 1, nil)
	if _, err := exactmh.GLMDiffBound(e, b3); err == nil {
		t.Error("GLMDiffBound with a 3-d ball for a 2-d model: no error")
	}
	if _, err := exactmh.GLMEnergyRange(e, nil); err == nil {
		t.Error("GLMEnergyRange without a bounded support: no error")
	}
}

// The ready-made GLMs satisfy the contract consistently: Loss agrees with
// Energies bit for bit, LossDerivs with AddGradient, and SMH finds them
// through the GLM interface.
func TestReadyMadeGLMContract(t *testing.T) {
	lr := simLogistic(t, 100, 2, 3)
	ty := make([]float64, 100)
	for i := range ty {
		row := lr.Row(i)
		ty[i] = row[0] - row[1] + math.Sin(float64(i))
	}
	x := make([]float64, 0, 200)
	for i := range 100 {
		x = append(x, lr.Row(i)...)
	}
	st, err := model.NewStudentTRegression(x, ty, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	pr := simGLM("probit", 100, 3).energy(t)
	for _, g := range []exactmh.GLM{lr, st, pr} {
		th := []float64{0.7, -1.3}
		u := make([]float64, 1)
		for i := range g.Len() {
			g.Energies(u, th, []int{i})
			row := g.Row(i)
			z := row[0]*th[0] + row[1]*th[1]
			if u[0] != g.Loss(i, z) {
				t.Fatalf("%T: U_%d = %v, Loss %v", g, i, u[0], g.Loss(i, z))
			}
			grad := make([]float64, 2)
			g.(exactmh.Gradienter).AddGradient(grad, th, []int{i}, []float64{1})
			f1, _ := g.LossDerivs(i, z)
			for j := range 2 {
				if math.Abs(grad[j]-f1*row[j]) > 1e-13*(1+math.Abs(grad[j])) {
					t.Fatalf("%T: ∇U_%d = %v, f′·x = %v", g, i, grad, f1)
				}
			}
			for k := 1; k <= 3; k++ {
				if b := g.LossBound(i, k, -1, 1); !(b >= 0) {
					t.Fatalf("%T: LossBound(%d, %d) = %v", g, i, k, b)
				}
			}
		}
	}
}

// The contract's error when the loss has no bound names the model and datum.
func TestGLMUnboundedError(t *testing.T) {
	e := simGLM("poisson", 10, 1).energy(t)
	_, err := exactmh.Sample(context.Background(), &exactmh.Posterior{Energy: e}, exactmh.TunaMH{},
		&exactmh.Settings{Chains: 1, Draws: 10, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "datum 0") {
		t.Errorf("TunaMH on a Poisson GLM on ℝ²: %v, want an error naming datum 0", err)
	}
	var bv *exactmh.BoundViolation
	if errors.As(err, &bv) {
		t.Errorf("unexpected bound violation %v", bv)
	}
}

// tallProbit is tallLogistic's data (N = 10⁵, d = 50, ball prior, β = 10⁻³)
// under the probit family through NewGLM.
func tallProbit(b *testing.B) *exactmh.Posterior {
	p := tallLogistic(b)
	lr := p.Energy.(*model.LogisticRegression)
	x, y := make([]float64, 0, lr.Len()*lr.Dim()), make([]float64, lr.Len())
	for i := range lr.Len() {
		x = append(x, lr.Row(i)...)
		y[i] = lr.Label(i)
	}
	e, err := model.NewGLM(x, y, lr.Dim(), model.ProbitFamily{})
	if err != nil {
		b.Fatal(err)
	}
	p.Energy = e
	return p
}

func BenchmarkTunaMHStepProbitGLM(b *testing.B) {
	benchmarkKernel(b, tallProbit(b), exactmh.TunaMH{Scale: 0.02})
}

func BenchmarkFlyMCStepProbitGLM(b *testing.B) {
	benchmarkKernel(b, tallProbit(b), exactmh.FlyMC{Scale: 0.02, Q: 0.1})
}

// flatten concatenates the chains' draws.
func flatten(x [][]float64) []float64 {
	var out []float64
	for _, c := range x {
		out = append(out, c...)
	}
	return out
}

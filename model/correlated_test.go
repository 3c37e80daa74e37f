// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// corrModel is a multilevel model with one correlated factor of q effects
// (an intercept and q − 1 slopes) over g levels and one independent
// factor, n data.
func corrModel(t *testing.T, q, g int, eta float64) (*MultilevelPrior, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 40
	m := &Multilevel{Family: LogisticFamily{}, Y: make([]float64, n), Intercept: true}
	f := Factor{Name: "g", Index: make([]int32, n), Tau: HalfNormal(1.5), Correlated: true, LKJ: eta}
	h := Factor{Name: "h", Index: make([]int32, n), Tau: HalfStudentT(3, 1), Slopes: []Covariate{{Name: "w", Values: make([]float64, n)}}}
	for k := 1; k < q; k++ {
		f.Slopes = append(f.Slopes, Covariate{Name: "x" + string(rune('0'+k)), Values: make([]float64, n)})
	}
	for i := range n {
		f.Index[i] = int32(i % g)
		h.Index[i] = int32(i % 3)
		for _, s := range f.Slopes {
			s.Values[i] = rng.NormFloat64()
		}
		h.Slopes[0].Values[i] = rng.NormFloat64()
		m.Y[i] = float64(i % 2)
	}
	m.Factors = []Factor{f, h}
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	return post.Prior.(*MultilevelPrior), post.Names
}

// corrTheta returns a θ with every coordinate N(0, sd²).
func corrTheta(rng *rand.Rand, d int, sd float64) []float64 {
	th := make([]float64, d)
	for j := range th {
		th[j] = sd * rng.NormFloat64()
	}
	return th
}

// omegaOf returns Ω from y by Stan's transform written out on its own
// (no shared code with cholCorr but the formulas).
func omegaOf(y []float64, q int) *mat.SymDense {
	l := mat.NewDense(q, q, nil)
	l.Set(0, 0, 1)
	k := 0
	for i := 1; i < q; i++ {
		rest := 1.0
		for j := range i {
			z := math.Tanh(y[k])
			k++
			l.Set(i, j, z*math.Sqrt(rest))
			rest -= l.At(i, j) * l.At(i, j)
		}
		l.Set(i, i, math.Sqrt(rest))
	}
	o := mat.NewSymDense(q, nil)
	o.SymOuterK(1, l)
	return o
}

// directLogPrior is the correlated factor's log density in (log τ, y, u)
// written the long way: each level's log N(u_g | 0, Σ) by Σ's inverse and
// determinant, (η − 1)·log det Ω, and log|det ∂Ω/∂y| by central
// differences of the map from y to Ω's strict lower triangle.
func directLogPrior(t *testing.T, p *MultilevelPrior, theta []float64) float64 {
	t.Helper()
	f := p.corrs[0]
	q := f.q
	y := theta[f.cor : f.cor+f.nCor()]
	o := omegaOf(y, q)
	sig := mat.NewSymDense(q, nil)
	for a := range q {
		for b := range q {
			sig.SetSym(a, b, math.Exp(theta[f.logTau[a]]+theta[f.logTau[b]])*o.At(a, b))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sig) {
		t.Fatal("Σ not positive definite")
	}
	var lp float64
	u := mat.NewVecDense(q, nil)
	x := mat.NewVecDense(q, nil)
	for g := range f.g {
		for a := range q {
			u.SetVec(a, theta[f.start+g*q+a])
		}
		if err := ch.SolveVecTo(x, u); err != nil {
			t.Fatal(err)
		}
		lp += -mat.Dot(u, x)/2 - ch.LogDet()/2
	}
	var cho mat.Cholesky
	cho.Factorize(o)
	lp += (f.eta - 1) * cho.LogDet()
	m := f.nCor()
	jac := mat.NewDense(m, m, nil)
	yy := append([]float64(nil), y...)
	for c := range m {
		const h = 1e-6
		yy[c] = y[c] + h
		op := omegaOf(yy, q)
		yy[c] = y[c] - h
		om := omegaOf(yy, q)
		yy[c] = y[c]
		r := 0
		for i := 1; i < q; i++ {
			for j := range i {
				jac.Set(r, c, (op.At(i, j)-om.At(i, j))/(2*h))
				r++
			}
		}
	}
	lp += math.Log(math.Abs(mat.Det(jac)))
	for _, lt := range f.logTau {
		d, _, _ := HalfNormal(1.5).logDensity(theta[lt])
		lp += d
	}
	return lp
}

// TestCorrelatedPriorDensity checks the correlated factor's part of
// LogPrior against directLogPrior (normal densities by Σ's inverse and
// determinant, the LKJ density on Ω with the transform's Jacobian by
// finite differences) for q = 2, 3 and 4 and η = 1, 2.5: the difference
// between two random θ's equal to 10⁻⁶ (the other factor's part held
// fixed).
func TestCorrelatedPriorDensity(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, q := range []int{2, 3, 4} {
		for _, eta := range []float64{1, 2.5} {
			p, _ := corrModel(t, q, 5, eta)
			a := corrTheta(rng, p.d, 0.8)
			for trial := range 5 {
				b := corrTheta(rng, p.d, 0.8)
				// Only the correlated factor's coordinates differ.
				f := p.corrs[0]
				for j := range b {
					inFactor := j >= f.start && j < f.start+f.g*f.q || j >= f.cor && j < f.cor+f.nCor()
					for _, lt := range f.logTau {
						inFactor = inFactor || j == lt
					}
					if !inFactor {
						b[j] = a[j]
					}
				}
				got := p.LogPrior(b) - p.LogPrior(a)
				want := directLogPrior(t, p, b) - directLogPrior(t, p, a)
				if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
					t.Errorf("q = %d, η = %v, trial %d: log prior ratio %v, direct %v", q, eta, trial, got, want)
				}
			}
		}
	}
}

// TestCorrelatedPriorDerivatives checks AddLogPriorGradient against
// central differences of LogPrior (relative 10⁻⁶), SparseHessian against
// central differences of the gradient (10⁻⁴) on every entry of both
// triangles, EffectPrecision against Σ⁻¹ and Correlations against Ω, for
// q = 2 and 3.
func TestCorrelatedPriorDerivatives(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, q := range []int{2, 3} {
		p, names := corrModel(t, q, 4, 1.7)
		th := corrTheta(rng, p.d, 0.7)
		grad := make([]float64, p.d)
		p.AddLogPriorGradient(grad, th)
		x := append([]float64(nil), th...)
		for j := range p.d {
			const h = 1e-6
			x[j] = th[j] + h
			lp := p.LogPrior(x)
			x[j] = th[j] - h
			lm := p.LogPrior(x)
			x[j] = th[j]
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-grad[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("q = %d: ∂/∂%s = %v, finite difference %v", q, names[j], grad[j], fd)
			}
		}
		hs, err := p.SparseHessian(th)
		if err != nil {
			t.Fatal(err)
		}
		gp, gm := make([]float64, p.d), make([]float64, p.d)
		for j := range p.d {
			const h = 1e-5
			clear(gp)
			clear(gm)
			x[j] = th[j] + h
			p.AddLogPriorGradient(gp, x)
			x[j] = th[j] - h
			p.AddLogPriorGradient(gm, x)
			x[j] = th[j]
			for i := range p.d {
				fd := -(gp[i] - gm[i]) / (2 * h)
				if got := hs.At(i, j); math.Abs(fd-got) > 1e-4*math.Max(1, math.Abs(fd)) {
					t.Errorf("q = %d: ∂²/∂%s∂%s = %v, finite difference %v", q, names[i], names[j], got, fd)
				}
			}
		}
		f := p.corrs[0]
		o := omegaOf(th[f.cor:f.cor+f.nCor()], q)
		prec := make([]float64, q*q)
		if !p.EffectPrecision(0, th, prec) {
			t.Fatal("EffectPrecision: not positive definite")
		}
		sig := mat.NewDense(q, q, nil)
		for a := range q {
			for b := range q {
				sig.Set(a, b, math.Exp(th[f.logTau[a]]+th[f.logTau[b]])*o.At(a, b))
			}
		}
		var inv mat.Dense
		if err := inv.Inverse(sig); err != nil {
			t.Fatal(err)
		}
		for a := range q {
			for b := range q {
				if w := inv.At(a, b); math.Abs(prec[a*q+b]-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("q = %d: Σ⁻¹[%d,%d] = %v, want %v", q, a, b, prec[a*q+b], w)
				}
			}
		}
		cor := make([]float64, f.nCor())
		cn := p.Correlations(0, th, cor)
		k := 0
		for i := 1; i < q; i++ {
			for j := range i {
				if math.Abs(cor[k]-o.At(i, j)) > 1e-12 {
					t.Errorf("q = %d: %s = %v, want Ω[%d,%d] = %v", q, cn[k], cor[k], i, j, o.At(i, j))
				}
				k++
			}
		}
		if q == 2 && cn[0] != "cor_g__Intercept__x1" {
			t.Errorf("the correlation's name %q, want cor_g__Intercept__x1", cn[0])
		}
		if !strings.HasPrefix(names[f.cor], "atanh_cpc_g__Intercept__x1") {
			t.Errorf("θ[%d] named %q, want atanh_cpc_g__Intercept__x1", f.cor, names[f.cor])
		}
	}
}

// TestCorrelatedErrors checks NewMultilevel's refusals of a correlated
// factor it cannot fit: one effect, LKJ without Correlated, η < 0.
func TestCorrelatedErrors(t *testing.T) {
	base := func() *Multilevel {
		return &Multilevel{Family: LogisticFamily{}, Y: []float64{0, 1}, Intercept: true,
			Factors: []Factor{{Name: "g", Index: []int32{0, 1}, Tau: HalfNormal(1), Correlated: true}}}
	}
	for name, mod := range map[string]func(*Multilevel){
		"one effect":             func(m *Multilevel) {},
		"LKJ without Correlated": func(m *Multilevel) { m.Factors[0].Correlated, m.Factors[0].LKJ = false, 2 },
		"negative η": func(m *Multilevel) {
			m.Factors[0].LKJ = -1
			m.Factors[0].Slopes = []Covariate{{Name: "x", Values: []float64{1, 2}}}
		},
	} {
		m := base()
		mod(m)
		if _, err := NewMultilevel(m); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestCorrelatedPriorAllocs checks that LogPrior and AddLogPriorGradient
// of a correlated factor allocate nothing.
func TestCorrelatedPriorAllocs(t *testing.T) {
	p, _ := corrModel(t, 3, 4, 1)
	th := corrTheta(rand.New(rand.NewPCG(1, 1)), p.d, 0.5)
	grad := make([]float64, p.d)
	if a := testing.AllocsPerRun(10, func() { p.LogPrior(th); p.AddLogPriorGradient(grad, th) }); a != 0 {
		t.Errorf("%v allocations per evaluation", a)
	}
}

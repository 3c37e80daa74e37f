// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"gonum.org/v1/gonum/stat/distuv"
)

var (
	_ exactmh.Prior           = (*MultilevelPrior)(nil)
	_ exactmh.PriorGradienter = (*MultilevelPrior)(nil)
	_ sparseHessianer         = (*MultilevelPrior)(nil)
)

// smallMultilevel is a model with an intercept, two fixed covariates, a
// factor "school" (4 levels, intercept and slope on x1, half-t prior) and
// a crossed factor "rater" (3 unnamed levels, intercept only, exponential
// prior), with normal priors on two of the three fixed effects.
func smallMultilevel(rng *rand.Rand, n int, fam GLMFamily, f32 bool) *Multilevel {
	m := &Multilevel{
		Family:    fam,
		Y:         make([]float64, n),
		Intercept: true,
		Fixed:     []Covariate{{"x1", make([]float64, n)}, {"x2", make([]float64, n)}},
		FixedSD:   []float64{0, 2, 0.5},
		FixedMean: []float64{0, 0.3, -0.1},
		Factors: []Factor{
			{Name: "school", Index: make([]int32, n), Levels: []string{"A", "B", "C", "D"},
				Slopes: []Covariate{{"x1", nil}}, Tau: HalfStudentT(3, 1)},
			{Name: "rater", Index: make([]int32, n), Tau: Exponential(2)},
		},
		Float32: f32,
	}
	m.Factors[0].Slopes[0].Values = m.Fixed[0].Values
	for i := range n {
		m.Fixed[0].Values[i] = rng.NormFloat64()
		m.Fixed[1].Values[i] = float64(rng.IntN(2)) // a 0/1 covariate: zeros not stored
		m.Factors[0].Index[i] = int32(rng.IntN(4))
		m.Factors[1].Index[i] = int32(rng.IntN(3))
		m.Y[i] = float64(rng.IntN(2))
	}
	return m
}

// TestMultilevelNames checks the layout of θ through the parameter names.
func TestMultilevelNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	post, err := NewMultilevel(smallMultilevel(rng, 50, LogisticFamily{}, false))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Intercept", "x1", "x2",
		"u_school[A]", "u_school_x1[A]", "u_school[B]", "u_school_x1[B]",
		"u_school[C]", "u_school_x1[C]", "u_school[D]", "u_school_x1[D]",
		"u_rater[1]", "u_rater[2]", "u_rater[3]",
		"log_tau_school", "log_tau_school_x1", "log_tau_rater"}
	if !slices.Equal(post.Names, want) {
		t.Fatalf("names\n%q\nwant\n%q", post.Names, want)
	}
	if d := post.Energy.Dim(); d != len(want) {
		t.Fatalf("Dim() = %d, want %d", d, len(want))
	}
	p := post.Prior.(*MultilevelPrior)
	if p.NumFixed() != 3 || p.NumTerms() != 3 {
		t.Fatalf("NumFixed, NumTerms = %d, %d, want 3, 3", p.NumFixed(), p.NumTerms())
	}
	// Blocks: the fixed effects, one block per level of each factor, the
	// log scales in none.
	wantBlocks := []int32{0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, -1, -1, -1}
	if b := p.Blocks(); !slices.Equal(b, wantBlocks) {
		t.Errorf("Blocks() = %v, want %v", b, wantBlocks)
	}
	for k, w := range []struct {
		factor, term                  string
		start, stride, levels, logTau int
	}{{"school", "", 3, 2, 4, 14}, {"school", "x1", 4, 2, 4, 15}, {"rater", "", 11, 1, 3, 16}} {
		f, tm, s, st, g, lt := p.Term(k)
		if f != w.factor || tm != w.term || s != w.start || st != w.stride || g != w.levels || lt != w.logTau {
			t.Errorf("Term(%d) = %q %q %d %d %d %d, want %+v", k, f, tm, s, st, g, lt, w)
		}
	}
}

// TestMultilevelRows checks every datum's linear predictor against the
// model's formula, float64 and float32 rows.
func TestMultilevelRows(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(2, 2))
		m := smallMultilevel(rng, 200, LogisticFamily{}, f32)
		m.Offset = make([]float64, len(m.Y))
		for i := range m.Offset {
			m.Offset[i] = rng.NormFloat64()
		}
		post, err := NewMultilevel(m)
		if err != nil {
			t.Fatal(err)
		}
		theta := randomTheta(rng, post.Energy.Dim())
		eta := func(i int) float64 {
			x1, x2 := m.Fixed[0].Values[i], m.Fixed[1].Values[i]
			if f32 {
				x1 = float64(float32(x1))
			}
			s, r := int(m.Factors[0].Index[i]), int(m.Factors[1].Index[i])
			return m.Offset[i] + theta[0] + theta[1]*x1 + theta[2]*x2 +
				theta[3+2*s] + theta[4+2*s]*x1 + theta[11+r]
		}
		for i := range m.Y {
			var got float64
			switch e := post.Energy.(type) {
			case *SparseGLM[float64]:
				got = e.Eta(i, theta)
			case *SparseGLM[float32]:
				got = e.Eta(i, theta)
			default:
				t.Fatalf("energy %T", post.Energy)
			}
			if !near(got, eta(i), 1e-14) {
				t.Fatalf("float32 %v: η_%d = %v, want %v", f32, i, got, eta(i))
			}
		}
	}
}

// refLogPrior is the model's log prior density computed from gonum's
// distributions: normal β (where an SD is set), normal effects, the
// scale's density (twice the symmetric law's on τ > 0) and the log
// Jacobian log τ.
func refLogPrior(m *Multilevel, p *MultilevelPrior, theta []float64) float64 {
	var s float64
	for j, sd := range m.FixedSD {
		if sd > 0 {
			s += distuv.Normal{Mu: m.FixedMean[j], Sigma: sd}.LogProb(theta[j])
		}
	}
	for k := range p.NumTerms() {
		_, _, start, stride, g, lt := p.Term(k)
		tau := math.Exp(theta[lt])
		for l := range g {
			s += distuv.Normal{Sigma: tau}.LogProb(theta[start+l*stride])
		}
		var lp float64
		switch tp := p.terms[k].prior; tp.kind {
		case halfNormalKind:
			lp = math.Log(2) + distuv.Normal{Sigma: tp.scale}.LogProb(tau)
		case halfStudentTKind:
			lp = math.Log(2) + distuv.StudentsT{Sigma: tp.scale, Nu: tp.df}.LogProb(tau)
		case exponentialKind:
			lp = distuv.Exponential{Rate: tp.scale}.LogProb(tau)
		}
		s += lp + theta[lt]
	}
	return s
}

// checkPriorDerivs checks the multilevel prior's gradient against central
// differences of LogPrior and its sparse Hessian against central
// differences of the gradient at th0.
func checkPriorDerivs(t *testing.T, post *exactmh.Posterior, th0 []float64) {
	t.Helper()
	p := post.Prior.(*MultilevelPrior)
	d := len(th0)
	grad := make([]float64, d)
	p.AddLogPriorGradient(grad, th0)
	const h = 1e-6
	for j := range d {
		tp, tm := slices.Clone(th0), slices.Clone(th0)
		tp[j] += h
		tm[j] -= h
		if fd := (p.LogPrior(tp) - p.LogPrior(tm)) / (2 * h); !near(grad[j], fd, 1e-6) {
			t.Errorf("∂log p/∂θ_%d (%s) = %v, central difference %v", j, post.Names[j], grad[j], fd)
		}
	}
	hs, err := p.SparseHessian(th0)
	if err != nil {
		t.Fatal(err)
	}
	hm := denseOf(t, hs)
	for b := range d {
		tp, tm := slices.Clone(th0), slices.Clone(th0)
		tp[b] += h
		tm[b] -= h
		gp, gm := make([]float64, d), make([]float64, d)
		p.AddLogPriorGradient(gp, tp)
		p.AddLogPriorGradient(gm, tm)
		for a := range d {
			fd := -(gp[a] - gm[a]) / (2 * h)
			if !near(hm[a][b], fd, 1e-6) {
				t.Errorf("∇²(−log p)[%s][%s] = %v, central difference %v", post.Names[a], post.Names[b], hm[a][b], fd)
			}
		}
	}
}

// TestMultilevelPrior checks the prior against gonum's densities (up to
// the constant, through differences), its gradient against central
// differences of LogPrior and its sparse Hessian against central
// differences of the gradient, for each scale prior.
func TestMultilevelPrior(t *testing.T) {
	for _, sp := range []ScalePrior{HalfNormal(0.7), HalfStudentT(3, 1.5), HalfStudentT(1, 0.5), Exponential(2)} {
		t.Run(sp.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			m := smallMultilevel(rng, 40, LogisticFamily{}, false)
			m.Factors[0].Tau = sp
			post, err := NewMultilevel(m)
			if err != nil {
				t.Fatal(err)
			}
			p := post.Prior.(*MultilevelPrior)
			d := post.Energy.Dim()
			th0 := randomTheta(rng, d)
			ref0, lp0 := refLogPrior(m, p, th0), p.LogPrior(th0)
			for range 5 {
				th := randomTheta(rng, d)
				if got, want := p.LogPrior(th)-lp0, refLogPrior(m, p, th)-ref0; !near(got, want, 1e-12) {
					t.Fatalf("log p(θ) − log p(θ₀) = %v, gonum's densities %v", got, want)
				}
			}
			checkPriorDerivs(t, post, th0)
		})
	}
}

// TestMultilevelErrors checks that malformed models are errors naming what
// is wrong.
func TestMultilevelErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(m *Multilevel)
		want string
	}{
		{"no factor", func(m *Multilevel) { m.Factors = nil }, "no grouping factor"},
		{"no tau prior", func(m *Multilevel) { m.Factors[1].Tau = ScalePrior{} }, "no prior on τ"},
		{"bad tau scale", func(m *Multilevel) { m.Factors[1].Tau = HalfNormal(-1) }, "want finite > 0"},
		{"bad df", func(m *Multilevel) { m.Factors[1].Tau = HalfStudentT(0, 1) }, "ν = 0"},
		{"index out of range", func(m *Multilevel) { m.Factors[0].Index[7] = 4 }, "Index[7] = 4"},
		{"negative index", func(m *Multilevel) { m.Factors[1].Index[3] = -1 }, "Index[3] = -1"},
		{"short index", func(m *Multilevel) { m.Factors[1].Index = m.Factors[1].Index[:5] }, "len(Index) = 5"},
		{"duplicate level", func(m *Multilevel) { m.Factors[0].Levels[1] = "A" }, `"u_school[A]"`},
		{"NaN covariate", func(m *Multilevel) { m.Fixed[1].Values[2] = math.NaN() }, "value 2"},
		{"short slope", func(m *Multilevel) { m.Factors[0].Slopes[0].Values = make([]float64, 3) }, "3 values"},
		{"FixedSD length", func(m *Multilevel) { m.FixedSD = []float64{1} }, "len(FixedSD) = 1"},
		{"negative SD", func(m *Multilevel) { m.FixedSD[2] = -1 }, "FixedSD[2]"},
		{"bad label", func(m *Multilevel) { m.Y[4] = 3 }, "y[4]"},
		{"no terms", func(m *Multilevel) { m.Factors[1].NoIntercept = true }, "neither an intercept nor a slope"},
		{"comma name", func(m *Multilevel) { m.Fixed[0].Name = "a,b" }, "without ','"},
		{"no family", func(m *Multilevel) { m.Family = nil }, "nil Family"},
	} {
		rng := rand.New(rand.NewPCG(4, 4))
		m := smallMultilevel(rng, 30, LogisticFamily{}, false)
		c.edit(m)
		_, err := NewMultilevel(m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := NewMultilevel(nil); err == nil {
		t.Error("nil model: no error")
	}
}

// TestMultilevelNUTSRecovers simulates a Gaussian random-intercept and
// random-slope model with known σ (N = 2000, 40 groups, τ = (0.8, 0.4))
// and checks that full-batch NUTS on the posterior NewMultilevel builds
// converges (R-hat ≤ 1.05: the global intercept and the group intercepts share a direction the data do not identify, which 4 × 400 draws cross slowly) and recovers β and τ: each true value within
// four posterior standard deviations of the posterior mean.
func TestMultilevelNUTSRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("a full-batch NUTS run of 4 × 400 draws")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	const n, groups = 2000, 40
	beta := []float64{0.5, -1, 0.3}
	tau := []float64{0.8, 0.4}
	u := make([][2]float64, groups)
	for g := range u {
		u[g] = [2]float64{tau[0] * rng.NormFloat64(), tau[1] * rng.NormFloat64()}
	}
	m := &Multilevel{
		Family:    GaussianFamily{Sigma: 1},
		Y:         make([]float64, n),
		Intercept: true,
		Fixed:     []Covariate{{"x1", make([]float64, n)}, {"x2", make([]float64, n)}},
		Factors: []Factor{{Name: "g", Index: make([]int32, n), Slopes: []Covariate{{"x1", nil}},
			Tau: HalfNormal(1)}},
	}
	m.Factors[0].Slopes[0].Values = m.Fixed[0].Values
	for i := range n {
		x1, x2, g := rng.NormFloat64(), rng.NormFloat64(), rng.IntN(groups)
		m.Fixed[0].Values[i], m.Fixed[1].Values[i], m.Factors[0].Index[i] = x1, x2, int32(g)
		m.Y[i] = beta[0] + beta[1]*x1 + beta[2]*x2 + u[g][0] + u[g][1]*x1 + rng.NormFloat64()
	}
	post, err := NewMultilevel(m)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exactmh.Sample(context.Background(), post, &exactmh.NUTS{},
		&exactmh.Settings{Chains: 4, Warmup: 400, Draws: 400, Seed: 7, Init: make([]float64, post.Energy.Dim())})
	if err != nil {
		t.Fatal(err)
	}
	sum := res.Summary()
	truth := map[string]float64{"Intercept": beta[0], "x1": beta[1], "x2": beta[2],
		"log_tau_g": math.Log(tau[0]), "log_tau_g_x1": math.Log(tau[1])}
	for g := range 5 {
		truth[post.Names[3+2*g]] = u[g][0]
	}
	for _, ps := range sum.Params {
		if ps.RHat > 1.05 {
			t.Errorf("%s: R-hat %.3f > 1.05", ps.Name, ps.RHat)
		}
		if v, ok := truth[ps.Name]; ok {
			if z := (ps.Mean - v) / ps.SD; math.Abs(z) > 4 {
				t.Errorf("%s: posterior mean %.3f (sd %.3f), true %.3f: %.1f sd away", ps.Name, ps.Mean, ps.SD, v, z)
			}
			t.Logf("%-14s mean %7.3f sd %.3f true %7.3f R-hat %.3f ESS %4.0f", ps.Name, ps.Mean, ps.SD, v, ps.RHat, ps.ESSBulk)
		}
	}
}

// TestScaleLogConditional checks that ScaleTerm and ScaleLogConditional
// give each uncorrelated log scale's full conditional: their differences
// in that coordinate equal LogPrior's at random θ for every scale prior,
// and ScaleTerm refuses the coordinates that are no such scale (the fixed
// effects, the effects, a correlated factor's scales and correlations).
func TestScaleLogConditional(t *testing.T) {
	for _, sp := range []ScalePrior{HalfNormal(0.7), HalfStudentT(3, 1.5), Exponential(2), Gamma(2, 1)} {
		t.Run(sp.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 8))
			m := smallMultilevel(rng, 40, LogisticFamily{}, false)
			m.Factors[1].Tau = sp
			post, err := NewMultilevel(m)
			if err != nil {
				t.Fatal(err)
			}
			p := post.Prior.(*MultilevelPrior)
			d := post.Energy.Dim()
			scales := map[int]bool{}
			for tm := range p.NumTerms() {
				_, _, _, _, _, lt := p.Term(tm)
				scales[lt] = true
			}
			for range 5 {
				th := randomTheta(rng, d)
				for j := range d {
					g, ss, ok := p.ScaleTerm(th, j)
					if ok != scales[j] {
						t.Fatalf("ScaleTerm(θ, %d) ok = %t, want %t", j, ok, scales[j])
					}
					if !ok {
						continue
					}
					lp0, c0 := p.LogPrior(th), p.ScaleLogConditional(j, th[j], g, ss)
					x := slices.Clone(th)
					for range 4 {
						x[j] = th[j] + 2*rng.NormFloat64()
						if got, want := p.ScaleLogConditional(j, x[j], g, ss)-c0, p.LogPrior(x)-lp0; !near(got, want, 1e-10) {
							t.Fatalf("coordinate %d at %v: conditional's difference %v, LogPrior's %v", j, x[j], got, want)
						}
					}
				}
			}
		})
	}
	cp, _ := corrModel(t, 3, 4, 2)
	th := corrTheta(rand.New(rand.NewPCG(2, 2)), cp.d, 0.5)
	for j := range cp.d {
		if _, _, ok := cp.ScaleTerm(th, j); ok && slices.ContainsFunc(cp.corrs, func(c corrFactor) bool { return slices.Contains(c.logTau, j) }) {
			t.Fatalf("ScaleTerm accepts coordinate %d, a correlated factor's log scale", j)
		}
	}
}

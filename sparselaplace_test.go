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
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/sparse"
)

// riLogistic is a random-intercept logistic regression written as a user
// would: θ = (β_1…β_p, u_1…u_G), η_i = x_iᵀβ + u_{g(i)}, U_i the logistic
// loss. It implements Gradienter, the dense Hessianer (so that the dense
// FindLaplace runs exact Newton on it, for comparison) and
// SparseHessianer: the fixed effects' block is dense, each group's
// intercept is coupled to itself and the fixed effects.
type riLogistic struct {
	p, g int
	x    []float64 // N×p row-major
	grp  []int
	y    []float64
}

func newRILogistic(rng *rand.Rand, n, p, g int) *riLogistic {
	m := &riLogistic{p: p, g: g, x: make([]float64, n*p), grp: make([]int, n), y: make([]float64, n)}
	beta := make([]float64, p)
	for j := range beta {
		beta[j] = 0.5 * rng.NormFloat64()
	}
	u := make([]float64, g)
	for k := range u {
		u[k] = 0.8 * rng.NormFloat64()
	}
	for i := range n {
		row := m.x[i*p : (i+1)*p]
		row[0] = 1
		for j := 1; j < p; j++ {
			row[j] = rng.NormFloat64()
		}
		m.grp[i] = i % g
		eta := u[m.grp[i]]
		for j, v := range row {
			eta += v * beta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			m.y[i] = 1
		}
	}
	return m
}

func (m *riLogistic) Len() int { return len(m.y) }
func (m *riLogistic) Dim() int { return m.p + m.g }

func (m *riLogistic) eta(i int, theta []float64) float64 {
	e := theta[m.p+m.grp[i]]
	for j, v := range m.x[i*m.p : (i+1)*m.p] {
		e += v * theta[j]
	}
	return e
}

func (m *riLogistic) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		z := m.eta(i, theta)
		// log(1 + e^z) − y·z
		dst[k] = math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - m.y[i]*z
	}
}

func (m *riLogistic) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		r := w[k] * (1/(1+math.Exp(-m.eta(i, theta))) - m.y[i])
		for j, v := range m.x[i*m.p : (i+1)*m.p] {
			grad[j] += r * v
		}
		grad[m.p+m.grp[i]] += r
	}
}

// curv returns f″(η_i) = σ(η)(1 − σ(η)).
func (m *riLogistic) curv(i int, theta []float64) float64 {
	s := 1 / (1 + math.Exp(-m.eta(i, theta)))
	return s * (1 - s)
}

func (m *riLogistic) AddHessian(h, theta []float64, idx []int, w []float64) {
	d := m.Dim()
	for k, i := range idx {
		c := w[k] * m.curv(i, theta)
		x := m.x[i*m.p : (i+1)*m.p]
		gj := m.p + m.grp[i]
		for a, va := range x {
			for b := a; b < m.p; b++ {
				h[a*d+b] += c * va * x[b]
			}
			h[a*d+gj] += c * va
		}
		h[gj*d+gj] += c
	}
}

func (m *riLogistic) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	t := sparse.NewTriplet(m.Dim())
	for i := range m.y {
		c := m.curv(i, theta)
		x := m.x[i*m.p : (i+1)*m.p]
		gj := m.p + m.grp[i]
		for a, va := range x {
			for b := a; b < m.p; b++ {
				t.Add(b, a, c*va*x[b])
			}
			t.Add(gj, a, c*va)
		}
		t.Add(gj, gj, c)
	}
	return t.SymCSC()
}

// riPrior is N(0, 10²) on the fixed effects and N(0, τ²) on the group
// intercepts, τ known: a diagonal sparse Hessian of −log p.
type riPrior struct {
	p, g int
	tau  float64
}

func (r riPrior) sd(j int) float64 {
	if j < r.p {
		return 10
	}
	return r.tau
}

func (r riPrior) LogPrior(theta []float64) float64 {
	var s float64
	for j, v := range theta {
		s -= v * v / (2 * r.sd(j) * r.sd(j))
	}
	return s
}

func (r riPrior) AddLogPriorGradient(grad, theta []float64) {
	for j, v := range theta {
		grad[j] -= v / (r.sd(j) * r.sd(j))
	}
}

func (r riPrior) AddLogPriorHessian(h, theta []float64) {
	d := len(theta)
	for j := range theta {
		h[j*d+j] -= 1 / (r.sd(j) * r.sd(j))
	}
}

func (r riPrior) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	t := sparse.NewTriplet(len(theta))
	for j := range theta {
		t.Add(j, j, 1/(r.sd(j)*r.sd(j)))
	}
	return t.SymCSC()
}

func riPosterior(seed uint64, n, p, g int) *exactmh.Posterior {
	rng := rand.New(rand.NewPCG(seed, 1))
	return &exactmh.Posterior{Energy: newRILogistic(rng, n, p, g), Prior: riPrior{p: p, g: g, tau: 0.8}}
}

// FindLaplace's sparse path agrees with its dense one (exact Newton on
// the same energy through Hessianer) on a random-intercept logistic
// regression: the mode, log det H, the log evidence, LogProb and the
// precision entry by entry.
func TestFindLaplaceSparseMatchesDense(t *testing.T) {
	for _, beta := range []float64{1, 0.5} {
		post := riPosterior(1, 3000, 3, 40)
		post.Beta = beta
		d := post.Dim()
		ctx := context.Background()
		sl, err := exactmh.FindLaplace(ctx, post, make([]float64, d), nil)
		if err != nil {
			t.Fatal(err)
		}
		dl, err := exactmh.FindLaplace(ctx, denseView(post), make([]float64, d), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !dl.ExactHessian || dl.MAP.Method != exactmh.MAPNewton {
			t.Fatalf("dense Laplace: exact Hessian %v, method %v", dl.ExactHessian, dl.MAP.Method)
		}
		for j := range d {
			if math.Abs(sl.Mean[j]-dl.Mean[j]) > 1e-7 {
				t.Errorf("β = %v: mode[%d] = %.10g, dense %.10g", beta, j, sl.Mean[j], dl.Mean[j])
			}
			for k := range d {
				if a, b := sl.SparsePrecision.At(j, k), dl.Precision.At(j, k); math.Abs(a-b) > 1e-8*(1+math.Abs(b)) {
					t.Fatalf("β = %v: H[%d][%d] = %v, dense %v", beta, j, k, a, b)
				}
			}
		}
		if math.Abs(sl.LogDetCov-dl.LogDetCov) > 1e-8*math.Abs(dl.LogDetCov) {
			t.Errorf("β = %v: LogDetCov %.12g, dense %.12g", beta, sl.LogDetCov, dl.LogDetCov)
		}
		if math.Abs(sl.LogEvidence-dl.LogEvidence) > 1e-7*math.Abs(dl.LogEvidence) {
			t.Errorf("β = %v: LogEvidence %.12g, dense %.12g", beta, sl.LogEvidence, dl.LogEvidence)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		x := sl.Rand(rng, nil)
		if a, b := sl.LogProb(x), dl.LogProb(x); math.Abs(a-b) > 1e-7*(1+math.Abs(b)) {
			t.Errorf("β = %v: LogProb %.12g, dense %.12g", beta, a, b)
		}
		if sl.MAP.Decrement > 1e-10 || sl.MAP.Iterations == 0 {
			t.Errorf("β = %v: decrement %v after %d iterations", beta, sl.MAP.Decrement, sl.MAP.Iterations)
		}
		at, err := exactmh.LaplaceAt(post, sl.Mean)
		if err != nil {
			t.Fatal(err)
		}
		if at.LogDetCov != sl.LogDetCov || at.LogDensity != sl.LogDensity {
			t.Errorf("LaplaceAt: LogDetCov %v, LogDensity %v, want %v, %v", at.LogDetCov, at.LogDensity, sl.LogDetCov, sl.LogDensity)
		}
	}
}

// denseView is post with the energy's SparseHessian hidden, so that
// FindLaplace takes the dense path (exact Newton through Hessianer).
func denseView(post *exactmh.Posterior) *exactmh.Posterior {
	e := post.Energy.(*riLogistic)
	return &exactmh.Posterior{Energy: struct {
		exactmh.Energy
		exactmh.Gradienter
		exactmh.Hessianer
	}{e, e, e}, Prior: post.Prior, Beta: post.Beta}
}

// patternFlip returns a sparse Hessian whose pattern depends on θ: a
// contract violation FindLaplace's sparse path reports.
type patternFlip struct{ *riLogistic }

func (p patternFlip) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	h, err := p.riLogistic.SparseHessian(theta)
	if err != nil || theta[0] == 0 {
		return h, err
	}
	t := sparse.NewTriplet(h.N)
	t.Add(h.N-1, h.N-2, 0) // two groups' intercepts: not in the pattern
	return sparse.Add(1, h, 0, mustSym(t))
}

func mustSym(t *sparse.Triplet) *sparse.SymCSC {
	a, err := t.SymCSC()
	if err != nil {
		panic(err)
	}
	return a
}

// nanHessian returns a Hessian with a NaN entry.
type nanHessian struct{ *riLogistic }

func (p nanHessian) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	h, err := p.riLogistic.SparseHessian(theta)
	if err == nil {
		h.Val[len(h.Val)/2] = math.NaN()
	}
	return h, err
}

// indefiniteHessian returns −H: not positive definite at the mode.
type indefiniteHessian struct{ *riLogistic }

func (p indefiniteHessian) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	h, err := p.riLogistic.SparseHessian(theta)
	if err == nil {
		h.Scale(-1e3)
	}
	return h, err
}

func TestFindLaplaceSparseErrors(t *testing.T) {
	ctx := context.Background()
	post := riPosterior(3, 500, 2, 10)
	e := post.Energy.(*riLogistic)
	d := post.Dim()
	cases := map[string]struct {
		p    *exactmh.Posterior
		init []float64
		want string
	}{
		"wrong init":            {post, make([]float64, d-1), "len(init)"},
		"NaN init":              {post, append(make([]float64, d-1), math.NaN()), "NaN"},
		"NaN Hessian":           {&exactmh.Posterior{Energy: nanHessian{e}, Prior: post.Prior}, make([]float64, d), "want finite"},
		"pattern changes":       {&exactmh.Posterior{Energy: patternFlip{e}, Prior: post.Prior}, make([]float64, d), "pattern changed"},
		"not positive definite": {&exactmh.Posterior{Energy: indefiniteHessian{e}, Prior: post.Prior}, make([]float64, d), ""},
	}
	// Two identical covariates under a flat prior: the posterior is flat
	// along their difference.
	col := newRILogistic(rand.New(rand.NewPCG(3, 1)), 500, 3, 10)
	for i := range col.y {
		col.x[i*3+2] = col.x[i*3+1]
	}
	cases["collinear covariates, flat prior"] = struct {
		p    *exactmh.Posterior
		init []float64
		want string
	}{&exactmh.Posterior{Energy: col}, make([]float64, col.Dim()), "not positive definite"}
	for name, c := range cases {
		_, err := exactmh.FindLaplace(ctx, c.p, c.init, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.want)
		}
	}
	// Under a flat prior the intercept and the group intercepts are not
	// identified (their sum is): the Hessian is singular at the mode.
	if _, err := exactmh.FindLaplace(ctx, &exactmh.Posterior{Energy: e}, make([]float64, d), nil); err == nil || !strings.Contains(err.Error(), "not positive definite") {
		t.Errorf("random intercepts and an intercept under a flat prior: err = %v, want the singular Hessian reported", err)
	}
	// Without the fixed intercept the data identify every parameter: a
	// flat prior, nil or model.Flat, is then fine.
	r := rand.New(rand.NewPCG(3, 2))
	for i := range e.y {
		e.x[i*e.p] = r.NormFloat64()
	}
	if _, err := exactmh.FindLaplace(ctx, &exactmh.Posterior{Energy: e}, make([]float64, d), nil); err != nil {
		t.Errorf("nil (flat) prior: %v", err)
	}
	if _, err := exactmh.FindLaplace(ctx, &exactmh.Posterior{Energy: e, Prior: model.Flat{}}, make([]float64, d), nil); err != nil {
		t.Errorf("model.Flat prior: %v", err)
	}
	if _, err := exactmh.LaplaceAt(&exactmh.Posterior{Energy: indefiniteHessian{e}, Prior: post.Prior}, make([]float64, d)); err == nil || !strings.Contains(err.Error(), "not positive definite") {
		t.Errorf("LaplaceAt at an indefinite Hessian: err = %v", err)
	}
}

// A search stopped by its iteration limit or a cancelled context returns
// the best point found with an error saying why, and no factor.
func TestFindLaplaceSparseStops(t *testing.T) {
	post := riPosterior(4, 1000, 2, 20)
	d := post.Dim()
	la, err := exactmh.FindLaplace(context.Background(), post, make([]float64, d), &exactmh.MAPSettings{MaxIterations: 1})
	if err == nil || !strings.Contains(err.Error(), "did not converge in 1 Newton iterations") {
		t.Errorf("MaxIterations 1: err = %v", err)
	}
	if la == nil || la.MAP == nil || la.SparseFactor != nil || la.MAP.Iterations != 1 {
		t.Errorf("MaxIterations 1: result %+v, want the point after one iteration and no factor", la)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := exactmh.FindLaplace(ctx, post, make([]float64, d), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	if _, err := exactmh.FindLaplace(context.Background(), post, make([]float64, d), &exactmh.MAPSettings{Tol: -1}); err == nil {
		t.Error("Tol = −1 accepted")
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/internal/vec"
)

// TestStridedGLM: the subsample view of FindMAP's presearch is datum
// i·stride of the GLM, through Energies, the contract's gradient and,
// for float32 rows, the rowConverter the Newton sweep reads; and its
// Newton sweep is the whole GLM's restricted to those data, weighted by
// the stride.
func TestStridedGLM(t *testing.T) {
	const n, d, stride = 103, 3, 5
	x, x32, y := testgen.BinaryRows(rand.New(rand.NewPCG(7, 7)), n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	lr32, err := NewLogisticRegression32(x32, y, d)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, -0.7, 1.1}
	for _, g := range []GLM{lr, lr32} {
		s := newStridedGLM(g, stride)
		var view GLM = s
		if s.conv != nil {
			view = stridedRows{s}
			if _, ok := view.(rowConverter); !ok {
				t.Fatal("the float32 subsample is not a rowConverter")
			}
		} else if _, ok := view.(rowConverter); ok {
			t.Fatal("the float64 subsample claims a rowConverter")
		}
		if s.Len() != 21 {
			t.Fatalf("%T: %d data in the subsample, want 21", g, s.Len())
		}
		idx := []int{0, 4, 20}
		w := []float64{1, 2, -1}
		got, want := make([]float64, 3), make([]float64, 3)
		view.Energies(got, theta, idx)
		g.Energies(want, theta, []int{0, 20, 100})
		grad, wantGrad := make([]float64, d), make([]float64, d)
		glmGradient{view}.AddGradient(grad, theta, idx, w) // the Target's gradient of a GLM
		g.(Gradienter).AddGradient(wantGrad, theta, []int{0, 20, 100}, w)
		for k := range 3 {
			if math.Abs(got[k]-want[k]) > 1e-12 || math.Abs(grad[k]-wantGrad[k]) > 1e-12 {
				t.Errorf("%T: U %v, want %v; ∇ %v, want %v", g, got, want, grad, wantGrad)
				break
			}
		}
		// The sweep of the subsample tempered by the stride is the
		// stride-weighted sum over data 0, 5, …, 100.
		st, err := NewTarget(&Posterior{Energy: view, Beta: stride})
		if err != nil {
			t.Fatal(err)
		}
		h, gr := make([]float64, d*d), make([]float64, d)
		f, _, err := st.newtonSweep(st.hessianer(), h, gr, theta)
		if err != nil {
			t.Fatal(err)
		}
		var wantF float64
		wantG, wantH := make([]float64, d), make([]float64, d*d)
		for i := 0; i < n; i += stride {
			xi := g.Row(i)
			z := vec.Dot(xi, theta)
			f1, f2 := g.LossDerivs(i, z)
			wantF += stride * g.Loss(i, z)
			for a := range d {
				wantG[a] += stride * f1 * xi[a]
				for b := a; b < d; b++ {
					wantH[a*d+b] += stride * f2 * xi[a] * xi[b]
				}
			}
		}
		if math.Abs(f-wantF) > 1e-9*math.Abs(wantF) {
			t.Errorf("%T: sweep f = %v, want %v", g, f, wantF)
		}
		for a := range d {
			if math.Abs(gr[a]-wantG[a]) > 1e-9*(1+math.Abs(wantG[a])) {
				t.Errorf("%T: sweep ∇[%d] = %v, want %v", g, a, gr[a], wantG[a])
			}
			for b := a; b < d; b++ {
				if math.Abs(h[a*d+b]-wantH[a*d+b]) > 1e-9*(1+math.Abs(wantH[a*d+b])) {
					t.Errorf("%T: sweep H[%d][%d] = %v, want %v", g, a, b, h[a*d+b], wantH[a*d+b])
				}
			}
		}
	}
}

// TestBlockedPasses: the passes split into blocks (parallel.go) — the
// Newton sweep and ControlVariates' construction — give what one
// sequential pass gives: the same c_i and K_i bit for bit (including K_i
// that differ between data, under a box), sums within rounding.
func TestBlockedPasses(t *testing.T) {
	const n, d = 3000, 4
	rng := rand.New(rand.NewPCG(9, 9))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = float64(rng.IntN(4))
	}
	// A Poisson GLM: under a box K_i = sup e^z over datum i's range.
	lr, err := NewGLM(x, y, d, PoissonFamily{})
	if err != nil {
		t.Fatal(err)
	}
	box, err := NewCube(d, -0.5, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	p := &Posterior{Energy: lr, Prior: box}
	la, err := LaplaceAt(p, []float64{0.1, -0.1, 0.05, 0})
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.3, -0.2, 0.1, 0.4}
	run := func(minData int) (f float64, g, h []float64, cv *cvEnergy, cvp *cvPrior) {
		old := minBlockData
		minBlockData = minData
		defer func() { minBlockData = old }()
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		g, h = make([]float64, d), make([]float64, d*d)
		if f, _, err = tg.newtonSweep(tg.hessianer(), h, g, theta); err != nil {
			t.Fatal(err)
		}
		q, err := ControlVariates(p, la)
		if err != nil {
			t.Fatal(err)
		}
		return f, g, h, q.Energy.(*cvEnergy), q.Prior.(*cvGradPrior).cvPrior
	}
	f1, g1, h1, e1, p1 := run(1 << 30)
	f6, g6, h6, e6, p6 := run(500)
	if passBlocks(n, d*d+d) != 1 {
		t.Fatal("the default block size splits 3000 data")
	}
	close := func(what string, a, b []float64) {
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1e-11*(1+math.Abs(a[j])) {
				t.Errorf("%s[%d]: sequential %v, blocked %v", what, j, a[j], b[j])
			}
		}
	}
	close("f", []float64{f1}, []float64{f6})
	close("∇", g1, g6)
	close("H", h1, h6)
	close("Σf′x", p1.grad, p6.grad)
	close("Σf″xxᵀ", p1.hess, p6.hess)
	if e1.k3.v == nil {
		t.Fatal("K_i are all equal under the box: the test needs them to differ")
	}
	for i := range n {
		if e1.c[i] != e6.c[i] || e1.bound3(i) != e6.bound3(i) || e1.at[i] != e6.at[i] {
			t.Fatalf("datum %d: c %v vs %v, K %v vs %v", i, e1.c[i], e6.c[i], e1.bound3(i), e6.bound3(i))
		}
	}
}

// TestNewtonSearchFallback: the Newton search given a start to go back to
// (the presearch's) keeps its own start when the log posterior is higher
// there, and otherwise — or where it cannot be evaluated — starts from
// the other, reaching the same mode at the cost of one more pass.
func TestNewtonSearchFallback(t *testing.T) {
	const n, d = 400, 3
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(4, 4)), n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(&Posterior{Energy: lr, Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	hs, ph, why := newtonParts(tg)
	if why != "" {
		t.Fatal(why)
	}
	search := func(start []float64, alt *newtonStart) *MAP {
		best := &MAP{Theta: slices.Clone(start), LogDensity: math.Inf(-1)}
		if _, err := newtonSearch(context.Background(), &denseNewton{t: tg, hs: hs, ph: ph, best: best}, best, MAPSettings{Tol: 1e-16, GradTol: 1e-6, MaxIterations: 100}, alt); err != nil {
			t.Fatal(err)
		}
		return best
	}
	near, far := []float64{0.1, 0.1, 0.1}, []float64{30, -30, 30}
	plain, fromFar := search(near, nil), search(far, nil)
	kept := search(near, &newtonStart{theta: far, f: math.Inf(1)})
	back := search(far, &newtonStart{theta: near, f: math.Inf(-1)})
	nan := search(far, &newtonStart{theta: near, f: math.NaN()})
	if kept.Passes != plain.Passes || kept.Iterations != plain.Iterations {
		t.Errorf("kept its start: %d passes, %d iterations; alone %d, %d", kept.Passes, kept.Iterations, plain.Passes, plain.Iterations)
	}
	if back.Passes != plain.Passes+1 || back.Iterations != plain.Iterations || nan.Passes != back.Passes {
		t.Errorf("went back: %d passes, %d iterations (NaN: %d passes); from there alone %d, %d",
			back.Passes, back.Iterations, nan.Passes, plain.Passes, plain.Iterations)
	}
	if fromFar.Iterations <= plain.Iterations {
		t.Fatalf("from far: %d iterations, from near %d: the test cannot tell the starts apart", fromFar.Iterations, plain.Iterations)
	}
	for j := range d {
		if kept.Theta[j] != plain.Theta[j] || back.Theta[j] != plain.Theta[j] {
			t.Fatalf("modes %v, %v, want %v", kept.Theta, back.Theta, plain.Theta)
		}
	}
}

// TestGLMStartEnergy: the presearch's energy at the start is the Target's
// TotalEnergy, at θ = 0 (from the losses at z = 0 alone) as elsewhere,
// tempered, with the evaluations counted.
func TestGLMStartEnergy(t *testing.T) {
	const n, d = 1300, 3
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(6, 6)), n, d)
	for _, g := range cvSumsGLMs(t, n, d) {
		for _, e := range []GLM{g, mustLogistic(t, x, y, d)} {
			tg, err := NewTarget(&Posterior{Energy: e, Beta: 0.7})
			if err != nil {
				t.Fatal(err)
			}
			for _, theta := range [][]float64{{0, 0, 0}, {0.2, 0, -0.1}} {
				want, err := tg.TotalEnergy(theta)
				if err != nil {
					t.Fatal(err)
				}
				before := tg.Evals()
				got, err := glmStartEnergy(tg, e, theta)
				if err != nil || math.Abs(got-want) > 1e-12*math.Abs(want) || tg.Evals()-before != n {
					t.Errorf("%T at %v: %v (%v), TotalEnergy %v; %d evaluations", e, theta, got, err, want, tg.Evals()-before)
				}
			}
		}
	}
}

func mustLogistic(t *testing.T, x, y []float64, d int) GLM {
	t.Helper()
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	return lr
}

// TestFindMAPWide: on a wide GLM (d = 80, N = 8000: a subsample of every
// 5th datum) FindMAP's Newton search with subsampled and frozen Hessians
// (newtonWide) finds the exact search's mode to 10⁻⁸ relative (as
// TestFindMAPNewtonVersusLBFGS; both stop at max |∇| < 10⁻⁶), and returns the exact Hessian of −log π at it (bit for bit
// the sweep's there) with the data's sums for ControlVariates — in at
// most two exact Hessian passes where the exact search alone sums one an
// iteration. Under a Gaussian prior and flat (the wide rows' prior).
func TestFindMAPWide(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 80, N = 8000")
	}
	const n, d = 8000, 80
	x, y := testgen.WideLogistic(rand.New(rand.NewPCG(8, 8)), n, d)
	lr := mustLogistic(t, x, y, d)
	gauss, err := NewIsoGaussian(d, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range []*Posterior{{Energy: lr}, {Energy: lr, Prior: gauss}} {
		name := []string{"flat", "Gaussian"}[k]
		m, pt, err := findMAP(context.Background(), p, make([]float64, d), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		hs, ph, why := newtonParts(tg)
		if why != "" {
			t.Fatal(why)
		}
		ref := &MAP{Theta: make([]float64, d), LogDensity: math.Inf(-1)}
		if _, err := newtonSearch(context.Background(), &denseNewton{t: tg, hs: hs, ph: ph, best: ref}, ref, MAPSettings{Tol: 1e-16, GradTol: 1e-6, MaxIterations: 100}, nil); err != nil {
			t.Fatal(err)
		}
		var diff, size float64
		for j := range d {
			diff = math.Max(diff, math.Abs(m.Theta[j]-ref.Theta[j]))
			size = math.Max(size, math.Abs(ref.Theta[j]))
		}
		if diff > 1e-8*size {
			t.Errorf("%v: mode differs from the exact search's by %.3g relative", name, diff/size)
		}
		if pt == nil || pt.dg == nil || !slices.Equal(pt.X, m.Theta) {
			t.Fatalf("%v: no exact point with the data's sums at the mode", name)
		}
		if !(m.Decrement <= 1e-16) && !(maxAbsTest(pt.G) < 1e-6) {
			t.Errorf("%v: decrement %.3g, max |∇| %.3g: not converged", name, m.Decrement, maxAbsTest(pt.G))
		}
		// The exact Hessian at the mode, summed afresh.
		w := (&denseNewton{t: tg, hs: hs, ph: ph, best: &MAP{}}).point()
		copy(w.X, m.Theta)
		if err := (&denseNewton{t: tg, hs: hs, ph: ph, best: &MAP{}}).Eval(w); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w.h, pt.h) {
			t.Errorf("%v: the returned Hessian is not the exact Hessian at the mode", name)
		}
		// Exact Hessian passes: the subsample's sweeps read N/5 each.
		sub := m.HessEvals - 2*n
		if sub < 0 || sub > int64(m.Iterations)*n/5 || ref.Iterations < 4 {
			t.Errorf("%v: %d Hessian evaluations in %d iterations (the exact search alone: %d iterations, %d passes)", name, m.HessEvals, m.Iterations, ref.Iterations, ref.Passes)
		}
		t.Logf("%v: %d iterations, %d passes, %d Hessian evaluations; the exact search alone %d iterations, %d passes (a Hessian each); differ by %.2g relative",
			name, m.Iterations, m.Passes, m.HessEvals, ref.Iterations, ref.Passes, diff/size)
	}
}

func maxAbsTest(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
	"github.com/exactmh/exactmh/sparse"
)

// sparseHessianer is the root package's SparseHessianer contract.
type sparseHessianer = exactmh.SparseHessianer

var (
	_ exactmh.Energy           = (*SparseGLM[float64])(nil)
	_ exactmh.EnergyDiffer     = (*SparseGLM[float64])(nil)
	_ exactmh.Gradienter       = (*SparseGLM[float64])(nil)
	_ exactmh.EnergyGradienter = (*SparseGLM[float64])(nil)
	_ exactmh.DiffBounder      = (*SparseGLM[float64])(nil)
	_ exactmh.TaylorBounder    = (*SparseGLM[float64])(nil)
	_ sparseHessianer          = (*SparseGLM[float64])(nil)
	_ exactmh.Energy           = (*SparseGLM[float32])(nil)
	_ exactmh.EnergyDiffer     = (*SparseGLM[float32])(nil)
	_ exactmh.Gradienter       = (*SparseGLM[float32])(nil)
	_ sparseHessianer          = (*SparseGLM[float32])(nil)
	_ multilevel.SparseRowGLM  = (*SparseGLM[float64])(nil)
	_ multilevel.SparseRowGLM  = (*SparseGLM[float32])(nil)
	_ GLMFamily                = LogisticFamily{}
	_ GLMValidator             = LogisticFamily{}
	_ GLMLossRanger            = LogisticFamily{}
)

// randomRows returns n sparse rows of dimension d with the structure of a
// multilevel design: p dense leading columns, then one entry in each of
// two blocks of columns (two crossed factors), some rows with an extra
// random column. dense is the same matrix row-major.
func randomRows(rng *rand.Rand, n, d, p int) (SparseRows[float64], []float64) {
	r := SparseRows[float64]{N: n, D: d, RowPtr: make([]int, n+1)}
	dense := make([]float64, n*d)
	half := p + (d-p)/2
	for i := range n {
		cols := make([]int, 0, p+3)
		for j := range p {
			cols = append(cols, j)
		}
		cols = append(cols, p+rng.IntN(half-p), half+rng.IntN(d-half))
		if rng.IntN(3) == 0 {
			c := p + rng.IntN(d-p)
			if c != cols[p] && c != cols[p+1] {
				cols = append(cols, c)
			}
		}
		sortInts(cols)
		for _, c := range cols {
			v := rng.NormFloat64() * 0.7
			r.Col = append(r.Col, int32(c))
			r.Val = append(r.Val, v)
			dense[i*d+c] = v
		}
		r.RowPtr[i+1] = len(r.Col)
	}
	return r, dense
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j-1] > a[j]; j-- {
			a[j-1], a[j] = a[j], a[j-1]
		}
	}
}

// familyCase is a family with responses drawn for linear predictors z.
type familyCase struct {
	name   string
	family GLMFamily
	draw   func(rng *rand.Rand, z float64) float64
}

func familyCases() []familyCase {
	bern := func(p float64, rng *rand.Rand) float64 {
		if rng.Float64() < p {
			return 1
		}
		return 0
	}
	return []familyCase{
		{"logistic", LogisticFamily{}, func(rng *rand.Rand, z float64) float64 { return bern(sigmoid(z), rng) }},
		{"probit", ProbitFamily{}, func(rng *rand.Rand, z float64) float64 { return bern(0.5*math.Erfc(-z/math.Sqrt2), rng) }},
		{"poisson", PoissonFamily{}, func(rng *rand.Rand, z float64) float64 { return float64(poissonDraw(rng, math.Exp(z))) }},
		{"gaussian", GaussianFamily{Sigma: 0.8}, func(rng *rand.Rand, z float64) float64 { return z + 0.8*rng.NormFloat64() }},
	}
}

func poissonDraw(rng *rand.Rand, mu float64) int {
	l, k, p := math.Exp(-mu), 0, 1.0
	for {
		p *= rng.Float64()
		if p < l {
			return k
		}
		k++
	}
}

// sparseAndDense returns a SparseGLM with offsets and the dense GLM of the
// same data, whose last column holds the offsets (its coefficient is held
// at 1 by denseTheta).
func sparseAndDense(t *testing.T, rng *rand.Rand, fc familyCase, n, d, p int) (*SparseGLM[float64], *GLMEnergy, []float64) {
	t.Helper()
	rows, dense := randomRows(rng, n, d, p)
	off := make([]float64, n)
	y := make([]float64, n)
	theta := randomTheta(rng, d)
	x1 := make([]float64, n*(d+1))
	for i := range n {
		off[i] = 0.3 * rng.NormFloat64()
		copy(x1[i*(d+1):], dense[i*d:(i+1)*d])
		x1[i*(d+1)+d] = off[i]
	}
	e, err := NewSparseGLM(rows, y, off, fc.family)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		y[i] = fc.draw(rng, e.Eta(i, theta))
	}
	if _, err := NewSparseGLM(rows, y, off, fc.family); err != nil {
		t.Fatal(err)
	}
	g, err := NewGLM(x1, y, d+1, fc.family)
	if err != nil {
		t.Fatal(err)
	}
	return e, g, theta
}

func randomTheta(rng *rand.Rand, d int) []float64 {
	th := make([]float64, d)
	for j := range th {
		th[j] = 0.5 * rng.NormFloat64()
	}
	return th
}

func denseTheta(theta []float64) []float64 { return append(append([]float64(nil), theta...), 1) }

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*(1+math.Max(math.Abs(a), math.Abs(b)))
}

// TestSparseGLMAgainstDense checks every evaluation of the SparseGLM of
// every family against exactmh's dense GLM of the same data (NewGLM, the
// offset a column with coefficient 1): energies, differences, gradients.
func TestSparseGLMAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, p = 300, 40, 4
	for _, fc := range familyCases() {
		t.Run(fc.name, func(t *testing.T) {
			e, g, theta := sparseAndDense(t, rng, fc, n, d, p)
			theta2 := randomTheta(rng, d)
			idx := make([]int, 50)
			for k := range idx {
				idx[k] = rng.IntN(n)
			}
			w := make([]float64, len(idx))
			for k := range w {
				w[k] = rng.Float64()
			}
			got, want := make([]float64, len(idx)), make([]float64, len(idx))
			e.Energies(got, theta, idx)
			g.Energies(want, denseTheta(theta), idx)
			for k := range got {
				if !near(got[k], want[k], 1e-12) {
					t.Fatalf("Energies[%d] (datum %d) = %v, dense %v", k, idx[k], got[k], want[k])
				}
			}
			e.EnergyDiffs(got, theta, theta2, idx)
			g.EnergyDiffs(want, denseTheta(theta), denseTheta(theta2), idx)
			for k := range got {
				if !near(got[k], want[k], 1e-11) {
					t.Fatalf("EnergyDiffs[%d] (datum %d) = %v, dense %v", k, idx[k], got[k], want[k])
				}
			}
			gs, gd := make([]float64, d), make([]float64, d+1)
			e.AddGradient(gs, theta, idx, w)
			g.AddGradient(gd, denseTheta(theta), idx, w)
			for j := range gs {
				if !near(gs[j], gd[j], 1e-11) {
					t.Fatalf("AddGradient[%d] = %v, dense %v", j, gs[j], gd[j])
				}
			}
			ge := make([]float64, d)
			e.EnergiesAndGradient(got, ge, theta, idx, w)
			e.Energies(want, theta, idx)
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("EnergiesAndGradient energy %d = %v, Energies %v", k, got[k], want[k])
				}
			}
			for j := range ge {
				if ge[j] != gs[j] {
					t.Fatalf("EnergiesAndGradient gradient %d = %v, AddGradient %v", j, ge[j], gs[j])
				}
			}
		})
	}
}

// TestSparseGLMGradientFiniteDiff checks ∇Σ_iU_i against central
// differences of the energies, every family.
func TestSparseGLMGradientFiniteDiff(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d, p = 200, 24, 3
	for _, fc := range familyCases() {
		t.Run(fc.name, func(t *testing.T) {
			e, _, theta := sparseAndDense(t, rng, fc, n, d, p)
			idx := make([]int, n)
			w := make([]float64, n)
			for i := range idx {
				idx[i], w[i] = i, 1
			}
			grad := make([]float64, d)
			e.AddGradient(grad, theta, idx, w)
			total := func(th []float64) float64 {
				u := make([]float64, n)
				e.Energies(u, th, idx)
				var s float64
				for _, v := range u {
					s += v
				}
				return s
			}
			const h = 1e-5
			for j := range d {
				tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
				tp[j] += h
				tm[j] -= h
				fd := (total(tp) - total(tm)) / (2 * h)
				if !near(grad[j], fd, 1e-6) {
					t.Errorf("∂U/∂θ_%d = %v, central difference %v", j, grad[j], fd)
				}
			}
		})
	}
}

// denseOf returns the full symmetric matrix of a SymCSC, checking its
// structure on the way: lower triangle, rows strictly ascending.
func denseOf(t *testing.T, h *sparse.SymCSC) [][]float64 {
	t.Helper()
	if len(h.ColPtr) != h.N+1 || h.ColPtr[0] != 0 || h.ColPtr[h.N] != len(h.RowIdx) || len(h.RowIdx) != len(h.Val) {
		t.Fatalf("SymCSC shape: N = %d, len(ColPtr) = %d, ColPtr[N] = %d, len(RowIdx) = %d, len(Val) = %d", h.N, len(h.ColPtr), h.ColPtr[len(h.ColPtr)-1], len(h.RowIdx), len(h.Val))
	}
	m := make([][]float64, h.N)
	for j := range m {
		m[j] = make([]float64, h.N)
	}
	for j := range h.N {
		prev := j - 1
		for q := h.ColPtr[j]; q < h.ColPtr[j+1]; q++ {
			r := h.RowIdx[q]
			if r <= prev || r >= h.N {
				t.Fatalf("column %d: row %d after %d, want strictly ascending in [%d, %d)", j, r, prev, j, h.N)
			}
			prev = r
			m[r][j], m[j][r] = h.Val[q], h.Val[q]
		}
	}
	return m
}

// TestSparseGLMHessian checks SparseHessian against Σ_i f″x_ix_iᵀ from the
// dense rows and against central differences of the gradient, and its
// pattern against the rows' outer products (no pair missing, none extra).
func TestSparseGLMHessian(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d, p = 150, 30, 3
	for _, fc := range familyCases() {
		t.Run(fc.name, func(t *testing.T) {
			e, g, theta := sparseAndDense(t, rng, fc, n, d, p)
			h, err := e.SparseHessian(theta)
			if err != nil {
				t.Fatal(err)
			}
			m := denseOf(t, h)
			want := make([][]float64, d)
			inPattern := make([][]bool, d)
			for j := range want {
				want[j] = make([]float64, d)
				inPattern[j] = make([]bool, d)
			}
			for i := range n {
				row := g.Row(i)
				_, f2 := g.LossDerivs(i, e.Eta(i, theta))
				for a := range d {
					for b := range d {
						if row[a] != 0 && row[b] != 0 {
							want[a][b] += f2 * row[a] * row[b]
							inPattern[a][b] = true
						}
					}
				}
			}
			stored := make([][]bool, d)
			for j := range stored {
				stored[j] = make([]bool, d)
			}
			for j := range d {
				for q := h.ColPtr[j]; q < h.ColPtr[j+1]; q++ {
					stored[h.RowIdx[q]][j] = true
				}
			}
			for a := range d {
				for b := range a + 1 {
					if stored[a][b] != inPattern[a][b] {
						t.Fatalf("H[%d][%d] stored = %v, in some row's outer product = %v", a, b, stored[a][b], inPattern[a][b])
					}
					if !near(m[a][b], want[a][b], 1e-12) {
						t.Fatalf("H[%d][%d] = %v, Σ f″x_ix_iᵀ = %v", a, b, m[a][b], want[a][b])
					}
				}
			}
			// Finite differences of the full gradient.
			all := make([]int, n)
			w := make([]float64, n)
			for i := range all {
				all[i], w[i] = i, 1
			}
			gradAt := func(th []float64) []float64 {
				gr := make([]float64, d)
				e.AddGradient(gr, th, all, w)
				return gr
			}
			const step = 1e-5
			for b := 0; b < d; b += 5 {
				tp, tm := append([]float64(nil), theta...), append([]float64(nil), theta...)
				tp[b] += step
				tm[b] -= step
				gp, gm := gradAt(tp), gradAt(tm)
				for a := range d {
					fd := (gp[a] - gm[a]) / (2 * step)
					if !near(m[a][b], fd, 1e-5) {
						t.Errorf("H[%d][%d] = %v, central difference of the gradient %v", a, b, m[a][b], fd)
					}
				}
			}
			// A second call returns the same pattern in new slices.
			h2, err := e.SparseHessian(theta)
			if err != nil {
				t.Fatal(err)
			}
			h2.RowIdx[0] = -1
			if h3, _ := e.SparseHessian(theta); h3.RowIdx[0] != h.RowIdx[0] {
				t.Fatalf("modifying a returned Hessian changed the next: RowIdx[0] = %d, want %d", h3.RowIdx[0], h.RowIdx[0])
			}
		})
	}
}

// TestSparseGLM32 checks the float32 rows against the float64 rows holding
// the same (rounded) values: every evaluation agrees to rounding.
func TestSparseGLM32(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, d, p = 200, 20, 3
	rows, _ := randomRows(rng, n, d, p)
	r32 := SparseRows[float32]{N: n, D: d, RowPtr: rows.RowPtr, Col: rows.Col, Val: make([]float32, len(rows.Val))}
	for k, v := range rows.Val {
		r32.Val[k] = float32(v)
		rows.Val[k] = float64(r32.Val[k])
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(2))
	}
	e64, err := NewSparseGLM(rows, y, nil, LogisticFamily{})
	if err != nil {
		t.Fatal(err)
	}
	e32, err := NewSparseGLM(r32, y, nil, LogisticFamily{})
	if err != nil {
		t.Fatal(err)
	}
	theta, theta2 := randomTheta(rng, d), randomTheta(rng, d)
	idx := []int{0, 5, 7, 199, 5}
	w := []float64{1, 2, 0.5, 1, 1}
	a, b := make([]float64, len(idx)), make([]float64, len(idx))
	e64.EnergyDiffs(a, theta, theta2, idx)
	e32.EnergyDiffs(b, theta, theta2, idx)
	for k := range a {
		if !near(a[k], b[k], 1e-14) {
			t.Fatalf("EnergyDiffs[%d]: float32 rows %v, float64 %v", k, b[k], a[k])
		}
	}
	g64, g32 := make([]float64, d), make([]float64, d)
	e64.AddGradient(g64, theta, idx, w)
	e32.AddGradient(g32, theta, idx, w)
	for j := range g64 {
		if !near(g64[j], g32[j], 1e-14) {
			t.Fatalf("AddGradient[%d]: float32 rows %v, float64 %v", j, g32[j], g64[j])
		}
	}
	h64, _ := e64.SparseHessian(theta)
	h32, _ := e32.SparseHessian(theta)
	for q := range h64.Val {
		if h64.RowIdx[q] != h32.RowIdx[q] || !near(h64.Val[q], h32.Val[q], 1e-14) {
			t.Fatalf("Hessian entry %d: float32 rows (%d, %v), float64 (%d, %v)", q, h32.RowIdx[q], h32.Val[q], h64.RowIdx[q], h64.Val[q])
		}
	}
}

// TestSparseGLMBounds checks DiffBound and TaylorBound against the dense
// GLM's generic bounds (no offset, so the z-ranges agree) on an unbounded
// and a Box support, and that an unbounded Poisson support is an error
// naming the datum.
func TestSparseGLMBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, d, p = 100, 16, 2
	rows, dense := randomRows(rng, n, d, p)
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(2))
	}
	box, err := NewBox(fill(d, -2), fill(d, 3))
	if err != nil {
		t.Fatal(err)
	}
	ball, err := NewBall(d, 2.5, fill(d, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []GLMFamily{LogisticFamily{}, ProbitFamily{}} {
		e, err := NewSparseGLM(rows, y, nil, fam)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGLM(dense, y, d, fam)
		if err != nil {
			t.Fatal(err)
		}
		for _, prior := range []exactmh.Prior{box, ball, Flat{}} {
			name := fmt.Sprintf("%T/%T", fam, prior)
			if _, isFlat := prior.(Flat); !isFlat || fam == GLMFamily(LogisticFamily{}) {
				got, err := e.DiffBound(prior)
				if err != nil {
					t.Fatalf("%s: DiffBound: %v", name, err)
				}
				want, err := exactmh.GLMDiffBound(g, prior)
				if err != nil {
					t.Fatalf("%s: GLMDiffBound: %v", name, err)
				}
				for i := range got.C {
					if !near(got.C[i], want.C[i], 1e-12) {
						t.Fatalf("%s: DiffBound c_%d = %v, dense %v", name, i, got.C[i], want.C[i])
					}
				}
			}
			for order := 1; order <= 2; order++ {
				got, err := e.TaylorBound(order, prior)
				if err != nil {
					t.Fatalf("%s: TaylorBound(%d): %v", name, order, err)
				}
				want, err := exactmh.GLMTaylorBounder(g).TaylorBound(order, prior)
				if err != nil {
					t.Fatalf("%s: GLMTaylorBound(%d): %v", name, order, err)
				}
				for i := range got {
					if !near(got[i], want[i], 1e-12) {
						t.Fatalf("%s: TaylorBound(%d) b_%d = %v, dense %v", name, order, i, got[i], want[i])
					}
				}
			}
		}
	}
	counts := make([]float64, n)
	e, err := NewSparseGLM(rows, counts, nil, PoissonFamily{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.DiffBound(Flat{}); err == nil || !strings.Contains(err.Error(), "datum 0") {
		t.Fatalf("Poisson DiffBound on a flat prior: err = %v, want an error naming datum 0", err)
	}
	if _, err := e.DiffBound(box); err != nil {
		t.Fatalf("Poisson DiffBound on a Box: %v", err)
	}
}

func fill(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestLogisticFamily checks the family's derivatives against central
// differences of its loss and its bounds against the suprema on a grid.
func TestLogisticFamily(t *testing.T) {
	var f LogisticFamily
	const h = 1e-5
	f3 := func(y, z float64) float64 {
		_, a := f.LossDerivs(y, z+h)
		_, b := f.LossDerivs(y, z-h)
		return (a - b) / (2 * h)
	}
	for _, y := range []float64{0, 1} {
		for _, z := range []float64{-40, -3, -0.5, 0, 0.7, 4, 40} {
			f1, f2 := f.LossDerivs(y, z)
			fd1 := (f.Loss(y, z+h) - f.Loss(y, z-h)) / (2 * h)
			a, _ := f.LossDerivs(y, z+h)
			b, _ := f.LossDerivs(y, z-h)
			fd2 := (a - b) / (2 * h)
			if !near(f1, fd1, 1e-7) || !near(f2, fd2, 1e-7) {
				t.Errorf("y = %v, z = %v: f′, f″ = %v, %v, central differences %v, %v", y, z, f1, f2, fd1, fd2)
			}
		}
		for _, iv := range [][2]float64{{-5, -1}, {-1, 2}, {0.5, 3}, {math.Inf(-1), math.Inf(1)}} {
			lo, hi := iv[0], iv[1]
			var s1, s2, s3 float64
			glo, ghi := math.Max(lo, -30), math.Min(hi, 30)
			for k := 0; k <= 6000; k++ {
				z := glo + (ghi-glo)*float64(k)/6000
				f1, f2 := f.LossDerivs(y, z)
				s1, s2, s3 = math.Max(s1, math.Abs(f1)), math.Max(s2, f2), math.Max(s3, math.Abs(f3(y, z)))
			}
			for k, s := range []float64{s1, s2, s3} {
				if b := f.LossBound(y, k+1, lo, hi); s > b*(1+1e-6) {
					t.Errorf("y = %v on [%v, %v]: sup|f^(%d)| ≥ %v on a grid, LossBound %v", y, lo, hi, k+1, s, b)
				}
			}
			if !math.IsInf(lo, 0) {
				mn, mx := f.LossRange(y, lo, hi)
				for k := 0; k <= 100; k++ {
					v := f.Loss(y, lo+(hi-lo)*float64(k)/100)
					if v < mn-1e-12 || v > mx+1e-12 {
						t.Errorf("y = %v: f(%v) = %v outside LossRange [%v, %v]", y, lo+(hi-lo)*float64(k)/100, v, mn, mx)
					}
				}
			}
		}
	}
	// The loss is the root's logistic regression energy.
	zs := []float64{-800, -3, 0, 0.25, 5, 800}
	for _, y := range []float64{0, 1} {
		lr, err := NewLogisticRegression(zs, fill(len(zs), y), 1)
		if err != nil {
			t.Fatal(err)
		}
		u := make([]float64, len(zs))
		lr.Energies(u, []float64{1}, []int{0, 1, 2, 3, 4, 5})
		for k, z := range zs {
			if got := f.Loss(y, z); !near(got, u[k], 1e-15) {
				t.Errorf("Loss(%v, %v) = %v, LogisticRegression %v", y, z, got, u[k])
			}
		}
	}
	if err := f.Validate([]float64{0, 1, 0.5}); err == nil || !strings.Contains(err.Error(), "y[2]") {
		t.Errorf("Validate(0.5): %v, want an error naming y[2]", err)
	}
}

// TestSparseGLMErrors checks that malformed inputs are errors that say
// what is wrong, not crashes.
func TestSparseGLMErrors(t *testing.T) {
	ok := func() SparseRows[float64] {
		return SparseRows[float64]{N: 2, D: 3, RowPtr: []int{0, 2, 3}, Col: []int32{0, 2, 1}, Val: []float64{1, 2, 3}}
	}
	for _, c := range []struct {
		name string
		edit func(r *SparseRows[float64], y, off *[]float64)
		want string
	}{
		{"unsorted", func(r *SparseRows[float64], _, _ *[]float64) { r.Col[0], r.Col[1] = 2, 0 }, "strictly ascending"},
		{"column out of range", func(r *SparseRows[float64], _, _ *[]float64) { r.Col[2] = 3 }, "row 1"},
		{"negative column", func(r *SparseRows[float64], _, _ *[]float64) { r.Col[2] = -1 }, "row 1"},
		{"row pointers", func(r *SparseRows[float64], _, _ *[]float64) { r.RowPtr[1] = 4 }, "row 0"},
		{"short RowPtr", func(r *SparseRows[float64], _, _ *[]float64) { r.RowPtr = r.RowPtr[:2] }, "len(RowPtr)"},
		{"NaN value", func(r *SparseRows[float64], _, _ *[]float64) { r.Val[1] = math.NaN() }, "not finite"},
		{"zero D", func(r *SparseRows[float64], _, _ *[]float64) { r.D = 0 }, "D = 0"},
		{"short y", func(_ *SparseRows[float64], y, _ *[]float64) { *y = (*y)[:1] }, "len(y)"},
		{"short offset", func(_ *SparseRows[float64], _, off *[]float64) { *off = []float64{0} }, "len(offset)"},
		{"Inf offset", func(_ *SparseRows[float64], _, off *[]float64) { *off = []float64{0, math.Inf(1)} }, "offset[1]"},
		{"bad label", func(_ *SparseRows[float64], y, _ *[]float64) { (*y)[1] = 2 }, "y[1]"},
	} {
		r, y := ok(), []float64{0, 1}
		var off []float64
		c.edit(&r, &y, &off)
		_, err := NewSparseGLM(r, y, off, LogisticFamily{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	e, err := NewSparseGLM(ok(), []float64{0, 1}, nil, LogisticFamily{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SparseHessian([]float64{1}); err == nil {
		t.Error("SparseHessian of a θ of the wrong length: no error")
	}
	if _, err := e.TaylorBound(3, nil); err == nil {
		t.Error("TaylorBound(3): no error")
	}
	if _, err := NewSparseGLM(ok(), []float64{0, 1}, nil, nil); err == nil {
		t.Error("nil family: no error")
	}
}

// TestSparseGLMAllocs checks that the per-step evaluations allocate
// nothing.
func TestSparseGLMAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rows, _ := randomRows(rng, 100, 20, 3)
	y := make([]float64, 100)
	e, err := NewSparseGLM(rows, y, nil, LogisticFamily{})
	if err != nil {
		t.Fatal(err)
	}
	theta, theta2 := randomTheta(rng, 20), randomTheta(rng, 20)
	idx, w := []int{3, 50, 99}, []float64{1, 1, 1}
	dst, grad := make([]float64, 3), make([]float64, 20)
	var ee exactmh.Energy = e
	if a := testing.AllocsPerRun(100, func() {
		e.EnergyDiffs(dst, theta, theta2, idx)
		ee.Energies(dst, theta, idx)
		e.AddGradient(grad, theta, idx, w)
	}); a != 0 {
		t.Errorf("%v allocations per evaluation, want 0", a)
	}
}

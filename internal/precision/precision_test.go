// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package precision

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/sparse"
	"gonum.org/v1/gonum/mat"
)

// tridiag returns the d×d tridiagonal precision with 2 + j/d on the
// diagonal and −0.9 off it, sparse and dense.
func tridiag(d int) (*sparse.SymCSC, *mat.SymDense) {
	tr := sparse.NewTriplet(d)
	h := mat.NewSymDense(d, nil)
	for j := range d {
		tr.Add(j, j, 2+float64(j)/float64(d))
		h.SetSym(j, j, 2+float64(j)/float64(d))
		if j > 0 {
			tr.Add(j, j-1, -0.9)
			h.SetSym(j, j-1, -0.9)
		}
	}
	a, err := tr.SymCSC()
	if err != nil {
		panic(err)
	}
	return a, h
}

// The dense and the sparse Factor of the same precision agree on every
// method: Solve, LogDet, InverseDiag and Quad to rounding, Covariance
// with gonum's inverse, and Normal's draws in their covariance (Monte
// Carlo, 4 standard errors).
func TestFactorsAgree(t *testing.T) {
	const d = 7
	a, h := tridiag(d)
	chol, err := sparse.Factorize(a)
	if err != nil {
		t.Fatal(err)
	}
	var cov mat.SymDense
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		t.Fatal("not positive definite")
	}
	if err := ch.InverseTo(&cov); err != nil {
		t.Fatal(err)
	}
	dense, err := NewDenseCov("test", &cov)
	if err != nil {
		t.Fatal(err)
	}
	l, err := CovChol(h)
	if err != nil {
		t.Fatal(err)
	}
	c := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			c[i*d+j] = l.At(i, j)
		}
	}
	fromPrec := NewDense(c, dense.Prec)
	sp := &Sparse{Prec: a, Chol: chol}
	rng := rand.New(rand.NewPCG(1, 2))
	b, mu, v := make([]float64, d), make([]float64, d), make([]float64, d)
	for j := range b {
		b[j], mu[j], v[j] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
	}
	want := mat.NewVecDense(d, nil)
	if err := ch.SolveVecTo(want, mat.NewVecDense(d, b)); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]Factor{"dense": dense, "from precision": fromPrec, "sparse": sp} {
		if f.Dim() != d {
			t.Errorf("%s: Dim %d", name, f.Dim())
		}
		x := make([]float64, d)
		f.Solve(x, b)
		for j := range d {
			if math.Abs(x[j]-want.AtVec(j)) > 1e-12*(1+math.Abs(want.AtVec(j))) {
				t.Errorf("%s: Solve[%d] = %v, want %v", name, j, x[j], want.AtVec(j))
			}
		}
		if got := f.LogDet(); math.Abs(got-ch.LogDet()) > 1e-12*math.Abs(ch.LogDet()) {
			t.Errorf("%s: LogDet %v, want %v", name, got, ch.LogDet())
		}
		diag := make([]float64, d)
		f.InverseDiag(diag)
		full := Covariance(f)
		for j := range d {
			if math.Abs(diag[j]-cov.At(j, j)) > 1e-12*cov.At(j, j) {
				t.Errorf("%s: InverseDiag[%d] = %v, want %v", name, j, diag[j], cov.At(j, j))
			}
			for k := range d {
				if math.Abs(full.At(j, k)-cov.At(j, k)) > 1e-12 {
					t.Errorf("%s: Covariance[%d][%d] = %v, want %v", name, j, k, full.At(j, k), cov.At(j, k))
				}
			}
		}
		diff := mat.NewVecDense(d, nil)
		diff.SubVec(mat.NewVecDense(d, v), mat.NewVecDense(d, mu))
		wq := mat.Inner(diff, h, diff)
		if q := f.Quad(v, mu); math.Abs(q-wq) > 1e-12*wq {
			t.Errorf("%s: Quad %v, want %v", name, q, wq)
		}
		// Normal: E[ξξᵀ] = H⁻¹, entry by entry within 4 standard errors.
		const n = 20000
		sum := make([]float64, d*d)
		for range n {
			f.Normal(rng, x)
			for j := range d {
				for k := range d {
					sum[j*d+k] += x[j] * x[k]
				}
			}
		}
		for j := range d {
			for k := range d {
				m, s := cov.At(j, k), math.Sqrt((cov.At(j, j)*cov.At(k, k)+cov.At(j, k)*cov.At(j, k))/n)
				if got := sum[j*d+k] / n; math.Abs(got-m) > 4*s {
					t.Errorf("%s: E[ξ_%d ξ_%d] = %v, want %v ± %v", name, j, k, got, m, s)
				}
			}
		}
	}
	// A mutant: a factor of the wrong precision (H scaled by 2) fails
	// the same Monte Carlo check, so the check has power.
	a2 := a.Clone()
	a2.Scale(2)
	chol2, _ := sparse.Factorize(a2)
	wrong := &Sparse{Prec: a2, Chol: chol2}
	x := make([]float64, d)
	var s00 float64
	const n = 20000
	for range n {
		wrong.Normal(rng, x)
		s00 += x[0] * x[0]
	}
	if se := math.Sqrt(2 * cov.At(0, 0) * cov.At(0, 0) / n); math.Abs(s00/n-cov.At(0, 0)) <= 4*se {
		t.Errorf("the mutant's variance %v passed as %v ± %v", s00/n, cov.At(0, 0), se)
	}
}

// Normal and Quad allocate nothing (the proposals' steps call them).
func TestFactorNoAllocs(t *testing.T) {
	a, h := tridiag(6)
	chol, err := sparse.Factorize(a)
	if err != nil {
		t.Fatal(err)
	}
	var cov mat.SymDense
	var ch mat.Cholesky
	ch.Factorize(h)
	if err := ch.InverseTo(&cov); err != nil {
		t.Fatal(err)
	}
	dense, err := NewDenseCov("test", &cov)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x, mu := make([]float64, 6), make([]float64, 6)
	for _, f := range []Factor{dense, &Sparse{Prec: a, Chol: chol}} {
		if n := testing.AllocsPerRun(50, func() { f.Normal(rng, x); _ = f.Quad(x, mu) }); n != 0 {
			t.Errorf("%T: %v allocations", f, n)
		}
	}
}

// The shifted factorisations: a positive definite Hessian needs no
// shift; an indefinite one gets τ > 0 with H + τI positive definite,
// dense and sparse alike, and a descent direction.
func TestHessianShift(t *testing.T) {
	a, h := tridiag(5)
	up := make([]float64, 25)
	for i := range 5 {
		for j := i; j < 5; j++ {
			up[i*5+j] = h.At(i, j)
		}
	}
	dh := &DenseHessian{D: 5, H: up}
	sh := &SparseHessian{H: a}
	for name, hs := range map[string]Hessian{"dense": dh, "sparse": sh} {
		if tau, err := hs.Factor(); err != nil || tau != 0 {
			t.Errorf("%s: positive definite H: τ = %v, err = %v", name, tau, err)
		}
	}
	neg := make([]float64, 25)
	for i := range neg {
		neg[i] = -up[i]
	}
	an := a.Clone()
	an.Scale(-1)
	g := []float64{1, -2, 0.5, 3, -1}
	for name, hs := range map[string]Hessian{"dense": &DenseHessian{D: 5, H: neg}, "sparse": &SparseHessian{H: an}} {
		tau, err := hs.Factor()
		if err != nil || !(tau > 0) {
			t.Fatalf("%s: indefinite H: τ = %v, err = %v", name, tau, err)
		}
		p := make([]float64, 5)
		if err := hs.Solve(p, g); err != nil {
			t.Fatal(err)
		}
		var dec float64
		for j := range g {
			dec += g[j] * p[j]
		}
		if !(dec > 0) {
			t.Errorf("%s: gᵀ(H + τI)⁻¹g = %v, want > 0 (a descent direction)", name, dec)
		}
	}
	if sh.NotPD != nil {
		t.Errorf("sparse: NotPD %v after a positive definite factor", sh.NotPD)
	}
}

// crankNicolsonByQuads is the Crank–Nicolson move as Normal and two Quads
// make it: θ′ = μ + ρ(θ − μ) + s·Cz, ratio (Quad(θ′) − Quad(θ))/2.
func crankNicolsonByQuads(f Factor, rng *rand.Rand, dst, theta, mu []float64, rho, s float64) float64 {
	f.Normal(rng, dst)
	for j, m := range mu {
		dst[j] = m + rho*(theta[j]-m) + s*dst[j]
	}
	return (f.Quad(dst, mu) - f.Quad(theta, mu)) / 2
}

// Dense.CrankNicolsonStep, the whitened move, is the move Normal and two
// Quads make from the same standard normals: the same θ′ and the same log
// proposal ratio to rounding, at d = 3 (below vec.ShortVec, scalar dots)
// and d = 40 (gonum's assembly dots), for a local move (ρ = 0.99), an
// independence-like one (ρ = 0.05) and an antithetic one (ρ = −0.5); it
// allocates nothing. A mutant with the ratio's sign flipped, or u′ built
// from z alone (ρ dropped), is caught by the comparison.
func TestDenseCrankNicolsonStep(t *testing.T) {
	for _, d := range []int{3, 40} {
		rng := rand.New(rand.NewPCG(5, uint64(d)))
		a := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		var cov mat.SymDense
		cov.SymOuterK(1, a)
		for i := range d {
			cov.SetSym(i, i, cov.At(i, i)+0.1*float64(d))
		}
		f, err := NewDenseCov("test", &cov)
		if err != nil {
			t.Fatal(err)
		}
		theta, mu := make([]float64, d), make([]float64, d)
		for j := range theta {
			mu[j], theta[j] = rng.NormFloat64(), 3*rng.NormFloat64()
		}
		got, want := make([]float64, d), make([]float64, d)
		for _, rho := range []float64{0.99, 0.05, -0.5} {
			s := math.Sqrt(1 - rho*rho)
			for k := range 20 {
				r1 := f.CrankNicolsonStep(rand.New(rand.NewPCG(uint64(k), 9)), got, theta, mu, rho, s)
				r2 := crankNicolsonByQuads(f, rand.New(rand.NewPCG(uint64(k), 9)), want, theta, mu, rho, s)
				for j := range d {
					if math.Abs(got[j]-want[j]) > 1e-10*(1+math.Abs(want[j])) {
						t.Fatalf("d = %d, ρ = %v: θ′[%d] = %v, by Normal and Quads %v", d, rho, j, got[j], want[j])
					}
				}
				if math.Abs(r1-r2) > 1e-9*(1+math.Abs(r2)) {
					t.Fatalf("d = %d, ρ = %v: log ratio %v, by Normal and Quads %v", d, rho, r1, r2)
				}
			}
		}
		if n := testing.AllocsPerRun(50, func() { f.CrankNicolsonStep(rng, got, theta, mu, 0.5, math.Sqrt(0.75)) }); n != 0 {
			t.Errorf("d = %d: %v allocations", d, n)
		}
	}
}

// BenchmarkCrankNicolsonStep compares, at d = 20, 200 and 500, the
// whitened move (Dense.CrankNicolsonStep) with the same move by Normal
// and two Quads.
func BenchmarkCrankNicolsonStep(b *testing.B) {
	for _, d := range []int{20, 200, 500} {
		rng := rand.New(rand.NewPCG(1, uint64(d)))
		a := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		var cov mat.SymDense
		cov.SymOuterK(1, a)
		for i := range d {
			cov.SetSym(i, i, cov.At(i, i)+float64(d))
		}
		f, err := NewDenseCov("bench", &cov)
		if err != nil {
			b.Fatal(err)
		}
		theta, mu, dst := make([]float64, d), make([]float64, d), make([]float64, d)
		for j := range theta {
			theta[j] = rng.NormFloat64()
		}
		b.Run(fmt.Sprintf("whitened/d=%d", d), func(b *testing.B) {
			for b.Loop() {
				f.CrankNicolsonStep(rng, dst, theta, mu, 0.5, math.Sqrt(0.75))
			}
		})
		b.Run(fmt.Sprintf("quads/d=%d", d), func(b *testing.B) {
			for b.Loop() {
				crankNicolsonByQuads(f, rng, dst, theta, mu, 0.5, math.Sqrt(0.75))
			}
		})
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package sparse

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomSPD returns a random sparse symmetric positive definite matrix of
// order n with about density·n² off-diagonal entries, made positive
// definite by diagonal dominance, and its dense copy.
func randomSPD(rng *rand.Rand, n int, density float64) (*SymCSC, *mat.SymDense) {
	t := NewTriplet(n)
	rowSum := make([]float64, n)
	for i := range n {
		for j := range i {
			if rng.Float64() < density {
				v := rng.NormFloat64()
				t.Add(i, j, v)
				rowSum[i] += math.Abs(v)
				rowSum[j] += math.Abs(v)
			}
		}
	}
	for i := range n {
		t.Add(i, i, rowSum[i]+0.5+rng.Float64())
	}
	a, err := t.SymCSC()
	if err != nil {
		panic(err)
	}
	return a, dense(a)
}

func dense(a *SymCSC) *mat.SymDense {
	d := mat.NewSymDense(a.N, nil)
	for j := range a.N {
		for p := a.ColPtr[j]; p < a.ColPtr[j+1]; p++ {
			d.SetSym(a.RowIdx[p], j, a.Val[p])
		}
	}
	return d
}

// arrow returns the Hessian pattern of a multilevel model: p fixed effects
// (a dense block) coupled to G groups of q random effects each (dense q×q
// blocks), and k variance parameters coupled to their groups' effects,
// with values that make it positive definite.
func arrow(rng *rand.Rand, p, g, q, k int) *SymCSC {
	n := p + g*q + k
	t := NewTriplet(n)
	diag := make([]float64, n)
	add := func(i, j int) {
		v := 0.1 * rng.NormFloat64()
		t.Add(i, j, v)
		diag[i] += math.Abs(v)
		diag[j] += math.Abs(v)
	}
	for i := range p {
		for j := range i {
			add(i, j)
		}
	}
	for gi := range g {
		base := p + gi*q
		for a := range q {
			for b := range a {
				add(base+a, base+b)
			}
			for f := range p {
				add(base+a, f)
			}
			if k > 0 {
				add(base+a, p+g*q+a%k)
			}
		}
	}
	for i := range n {
		t.Add(i, i, diag[i]+1+rng.Float64())
	}
	a, err := t.SymCSC()
	if err != nil {
		panic(err)
	}
	return a
}

// crossed returns the Hessian pattern of two crossed grouping factors with
// g1 and g2 levels and m distinct (level, level) pairs observed, plus p
// fixed effects coupled to everything.
func crossed(rng *rand.Rand, p, g1, g2, m int) *SymCSC {
	n := p + g1 + g2
	t := NewTriplet(n)
	diag := make([]float64, n)
	add := func(i, j int) {
		v := 0.1 * rng.NormFloat64()
		t.Add(i, j, v)
		diag[i] += math.Abs(v)
		diag[j] += math.Abs(v)
	}
	for i := range p {
		for j := range i {
			add(i, j)
		}
	}
	for i := p; i < n; i++ {
		for f := range p {
			add(i, f)
		}
	}
	seen := map[[2]int]bool{}
	for len(seen) < m {
		a, b := rng.IntN(g1), rng.IntN(g2)
		if seen[[2]int{a, b}] {
			continue
		}
		seen[[2]int{a, b}] = true
		add(p+g1+b, p+a)
	}
	for i := range n {
		t.Add(i, i, diag[i]+1+rng.Float64())
	}
	a, err := t.SymCSC()
	if err != nil {
		panic(err)
	}
	return a
}

// checkAgainstDense factors a and compares log det, solves and the
// reconstruction PᵀLLᵀP with gonum's dense Cholesky.
func checkAgainstDense(t *testing.T, name string, a *SymCSC, perm []int) {
	t.Helper()
	s, err := Analyze(a, perm)
	if err != nil {
		t.Fatalf("%s: Analyze: %v", name, err)
	}
	c, err := s.Factor(a)
	if err != nil {
		t.Fatalf("%s: Factor: %v", name, err)
	}
	n := a.N
	d := dense(a)
	var ch mat.Cholesky
	if !ch.Factorize(d) {
		t.Fatalf("%s: gonum: not positive definite", name)
	}
	if got, want := c.LogDet(), ch.LogDet(); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: LogDet = %.15g, gonum %.15g", name, got, want)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]float64, n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	x := make([]float64, n)
	c.Solve(x, b, make([]float64, n))
	var xd mat.VecDense
	if err := ch.SolveVecTo(&xd, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if math.Abs(x[i]-xd.AtVec(i)) > 1e-10*(1+math.Abs(xd.AtVec(i))) {
			t.Fatalf("%s: Solve[%d] = %.15g, gonum %.15g", name, i, x[i], xd.AtVec(i))
		}
	}
	// In place (dst == b).
	y := append([]float64(nil), b...)
	c.Solve(y, y, make([]float64, n))
	for i := range n {
		if y[i] != x[i] {
			t.Fatalf("%s: in-place Solve[%d] = %v, want %v", name, i, y[i], x[i])
		}
	}
	// LLᵀ = PAPᵀ entry by entry.
	l := c.L()
	ld := mat.NewDense(n, n, nil)
	for j := range n {
		for p := l.ColPtr[j]; p < l.ColPtr[j+1]; p++ {
			ld.Set(l.RowIdx[p], j, l.Val[p])
		}
	}
	var llt mat.Dense
	llt.Mul(ld, ld.T())
	pp := s.Perm()
	for i := range n {
		for j := range n {
			if got, want := llt.At(i, j), d.At(pp[i], pp[j]); math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
				t.Fatalf("%s: (LLᵀ)[%d][%d] = %v, (PAPᵀ) %v", name, i, j, got, want)
			}
		}
	}
}

func TestCholeskyAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5, 10, 40, 120} {
		for _, density := range []float64{0, 0.02, 0.1, 0.5, 1} {
			a, _ := randomSPD(rng, n, density)
			checkAgainstDense(t, "random", a, nil)
			id := make([]int, n)
			for i := range id {
				id[i] = i
			}
			checkAgainstDense(t, "random natural order", a, id)
			checkAgainstDense(t, "random reversed order", a, reversed(id))
		}
	}
	checkAgainstDense(t, "arrow", arrow(rng, 4, 30, 2, 2), nil)
	checkAgainstDense(t, "crossed", crossed(rng, 3, 20, 15, 60), nil)
}

func reversed(s []int) []int {
	r := make([]int, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// TestMinDegreeArrow: under MinDegree the factor of a multilevel model's
// arrow pattern has no fill (every group's block is eliminated before the
// fixed effects and variance parameters, whose block is already dense),
// while the natural order (fixed effects first) fills it in completely.
func TestMinDegreeArrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range []int{10, 200, 2000} {
		a := arrow(rng, 10, g, 2, 0)
		s, err := Analyze(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.FactorNNZ() != a.NNZ() {
			t.Errorf("G = %d: nnz(L) = %d under MinDegree, want nnz(A) = %d (no fill)", g, s.FactorNNZ(), a.NNZ())
		}
		id := make([]int, a.N)
		for i := range id {
			id[i] = i
		}
		nat, err := Analyze(a, id)
		if err != nil {
			t.Fatal(err)
		}
		if nat.FactorNNZ() <= 10*a.NNZ() && g >= 200 {
			t.Errorf("G = %d: nnz(L) = %d in natural order, want the fixed-effects-first fill (≫ nnz(A) = %d)", g, nat.FactorNNZ(), a.NNZ())
		}
	}
}

// TestMinDegreeCrossed: on crossed factors the ordering's factor has less
// fill than the natural order's.
func TestMinDegreeCrossed(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := crossed(rng, 5, 200, 100, 800)
	s, err := Analyze(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]int, a.N)
	for i := range id {
		id[i] = i
	}
	nat, err := Analyze(a, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.FactorNNZ() >= nat.FactorNNZ() {
		t.Errorf("nnz(L) = %d under MinDegree, %d in natural order; want less", s.FactorNNZ(), nat.FactorNNZ())
	}
	checkAgainstDense(t, "crossed 200×100", a, nil)
}

// TestNormalInto: the draw equals PᵀL⁻ᵀz for the z the same stream gives
// (drawn from the last pivot to the first), and its sample covariance
// times H is near the identity.
func TestNormalInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a := arrow(rng, 3, 8, 2, 1)
	c, err := Factorize(a)
	if err != nil {
		t.Fatal(err)
	}
	n := a.N
	got := make([]float64, n)
	c.NormalInto(rand.New(rand.NewPCG(9, 9)), got)
	z := make([]float64, n)
	r := rand.New(rand.NewPCG(9, 9))
	for j := n - 1; j >= 0; j-- {
		z[j] = r.NormFloat64()
	}
	c.SolveLT(z)
	for k, v := range c.Symbolic().Perm() {
		if math.Abs(got[v]-z[k]) > 1e-12*(1+math.Abs(z[k])) {
			t.Fatalf("NormalInto[%d] = %v, PᵀL⁻ᵀz %v", v, got[v], z[k])
		}
	}
	// E[x xᵀ] H = I: check diag of the sample covariance against H⁻¹.
	const m = 40000
	cov := make([]float64, n*n)
	x := make([]float64, n)
	for range m {
		c.NormalInto(r, x)
		for i := range n {
			for j := range n {
				cov[i*n+j] += x[i] * x[j] / m
			}
		}
	}
	var ch mat.Cholesky
	ch.Factorize(dense(a))
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for j := range n {
			want := inv.At(i, j)
			se := math.Sqrt((inv.At(i, i)*inv.At(j, j) + want*want) / m)
			if math.Abs(cov[i*n+j]-want) > 5*se {
				t.Errorf("cov[%d][%d] = %.4g, H⁻¹ %.4g (se %.2g)", i, j, cov[i*n+j], want, se)
			}
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { c.NormalInto(r, x) }); allocs != 0 {
		t.Errorf("NormalInto allocates %v times, want 0", allocs)
	}
	w := make([]float64, n)
	if allocs := testing.AllocsPerRun(100, func() { c.Solve(x, x, w) }); allocs != 0 {
		t.Errorf("Solve allocates %v times, want 0", allocs)
	}
}

func TestRefactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	a, _ := randomSPD(rng, 30, 0.2)
	c, err := Factorize(a)
	if err != nil {
		t.Fatal(err)
	}
	b := a.Clone()
	for p := range b.Val {
		b.Val[p] *= 1 + 0.1*rng.Float64()
	}
	if err := c.Refactor(b); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = c.Refactor(b) }); allocs != 0 {
		t.Errorf("Refactor allocates %v times, want 0", allocs)
	}
	fresh, err := Factorize(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.LogDet() != fresh.LogDet() {
		t.Errorf("refactored LogDet %v, fresh %v", c.LogDet(), fresh.LogDet())
	}
	// A different pattern is an error.
	other, _ := randomSPD(rng, 30, 0.3)
	if err := c.Refactor(other); err == nil || !strings.Contains(err.Error(), "analysed pattern") {
		t.Errorf("Refactor with another pattern: err = %v", err)
	}
	// Not positive definite: an error naming the pivot, and the factor is
	// usable again afterwards.
	neg := b.Clone()
	neg.Scale(-1)
	if err := c.Refactor(neg); err == nil || !strings.Contains(err.Error(), "not positive definite") {
		t.Errorf("Refactor(−A): err = %v", err)
	}
	if err := c.Refactor(b); err != nil || c.LogDet() != fresh.LogDet() {
		t.Errorf("Refactor after a failure: err = %v, LogDet %v, want %v", err, c.LogDet(), fresh.LogDet())
	}
	// A value that is not finite, in the analysed pattern: an error that
	// says so (Check's), not a pivot's.
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		bad := b.Clone()
		bad.Val[len(bad.Val)/2] = v
		if err := c.Refactor(bad); err == nil || !strings.Contains(err.Error(), "finite") {
			t.Errorf("Refactor with an entry %v: err = %v", v, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	good := func() *SymCSC {
		return &SymCSC{N: 2, ColPtr: []int{0, 2, 3}, RowIdx: []int{0, 1, 1}, Val: []float64{2, 1, 2}}
	}
	cases := map[string]func(a *SymCSC){
		"negative N":     func(a *SymCSC) { a.N = -1 },
		"short ColPtr":   func(a *SymCSC) { a.ColPtr = a.ColPtr[:2] },
		"ColPtr[0]":      func(a *SymCSC) { a.ColPtr[0] = 1 },
		"decreasing":     func(a *SymCSC) { a.ColPtr[1] = 4 },
		"short RowIdx":   func(a *SymCSC) { a.RowIdx = a.RowIdx[:2] },
		"upper triangle": func(a *SymCSC) { a.RowIdx[2] = 0 },
		"out of range":   func(a *SymCSC) { a.RowIdx[1] = 2 },
		"unsorted":       func(a *SymCSC) { a.RowIdx[0], a.RowIdx[1] = 1, 0 },
		"NaN":            func(a *SymCSC) { a.Val[1] = math.NaN() },
	}
	if _, err := Factorize(good()); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range cases {
		a := good()
		mutate(a)
		if _, err := Factorize(a); err == nil {
			t.Errorf("%s: Factorize succeeded", name)
		}
		if _, err := Add(1, a, 1, good()); err == nil {
			t.Errorf("%s: Add succeeded", name)
		}
	}
	if _, err := Factorize(nil); err == nil {
		t.Error("Factorize(nil) succeeded")
	}
	if _, err := Analyze(good(), []int{0, 0}); err == nil {
		t.Error("Analyze with a repeated perm succeeded")
	}
	if _, err := Analyze(good(), []int{0}); err == nil {
		t.Error("Analyze with a short perm succeeded")
	}
	tr := NewTriplet(2)
	tr.Add(2, 0, 1)
	if _, err := tr.SymCSC(); err == nil {
		t.Error("Triplet out of range succeeded")
	}
	if _, err := NewTriplet(MaxFill + 1).SymCSC(); err == nil {
		t.Error("a Triplet of order MaxFill+1 succeeded")
	}
	tr = NewTriplet(2)
	tr.Add(1, 0, math.Inf(1))
	if _, err := tr.SymCSC(); err == nil {
		t.Error("Triplet with Inf succeeded")
	}
	// Order 0 is a valid, empty factorisation.
	z, err := Factorize(&SymCSC{N: 0, ColPtr: []int{0}, RowIdx: []int{}, Val: []float64{}})
	if err != nil || z.LogDet() != 0 {
		t.Errorf("order 0: err = %v, LogDet %v", err, z.LogDet())
	}
}

func TestTripletAndAdd(t *testing.T) {
	tr := NewTriplet(3)
	tr.Add(0, 0, 1)
	tr.Add(0, 2, 2) // upper: stored as (2, 0)
	tr.Add(2, 0, 3) // summed with it
	tr.Add(1, 1, 0) // a stored zero
	a, err := tr.SymCSC()
	if err != nil {
		t.Fatal(err)
	}
	if a.NNZ() != 3 || a.At(0, 2) != 5 || a.At(2, 0) != 5 || a.At(1, 1) != 0 || a.At(2, 2) != 0 {
		t.Errorf("Triplet: %+v", a)
	}
	rng := rand.New(rand.NewPCG(12, 13))
	x, xd := randomSPD(rng, 25, 0.1)
	y, yd := randomSPD(rng, 25, 0.2)
	s, err := Add(2, x, -0.5, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		for j := range 25 {
			if got, want := s.At(i, j), 2*xd.At(i, j)-0.5*yd.At(i, j); math.Abs(got-want) > 1e-14 {
				t.Fatalf("Add (%d, %d) = %v, want %v", i, j, got, want)
			}
		}
	}
	// MulVec and Quad against dense.
	v := make([]float64, 25)
	m := make([]float64, 25)
	for i := range v {
		v[i], m[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	got := make([]float64, 25)
	x.MulVec(got, v)
	var want mat.VecDense
	want.MulVec(xd, mat.NewVecDense(25, v))
	diff := make([]float64, 25)
	for i := range v {
		if math.Abs(got[i]-want.AtVec(i)) > 1e-12 {
			t.Fatalf("MulVec[%d] = %v, want %v", i, got[i], want.AtVec(i))
		}
		diff[i] = v[i] - m[i]
	}
	dv := mat.NewVecDense(25, diff)
	if q, w := x.Quad(v, m), mat.Inner(dv, xd, dv); math.Abs(q-w) > 1e-10*math.Abs(w) {
		t.Errorf("Quad = %v, want %v", q, w)
	}
	if !x.SamePattern(x.Clone()) || x.SamePattern(y) {
		t.Error("SamePattern")
	}
}

// TestInverseDiag: Takahashi's diagonal of H⁻¹ equals gonum's inverse's.
func TestInverseDiag(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for _, a := range []*SymCSC{arrow(rng, 4, 30, 2, 2), crossed(rng, 3, 20, 15, 60), func() *SymCSC { a, _ := randomSPD(rng, 50, 0.3); return a }()} {
		c, err := Factorize(a)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, a.N)
		c.InverseDiag(got)
		var ch mat.Cholesky
		ch.Factorize(dense(a))
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		for i := range a.N {
			if want := inv.At(i, i); math.Abs(got[i]-want) > 1e-10*want {
				t.Fatalf("(H⁻¹)[%d][%d] = %v, gonum %v", i, i, got[i], want)
			}
		}
	}
}

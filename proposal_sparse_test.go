// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/sparse"
)

// tridiagPrecision is the sparse precision D⁻¹RD⁻¹, D = diag(1.3·sd), R
// tridiagonal with 1 on the diagonal and −0.3 beside it (positive
// definite: its eigenvalues are at least 0.4).
func tridiagPrecision(sd []float64) *sparse.SymCSC {
	t := sparse.NewTriplet(len(sd))
	for j, s := range sd {
		t.Add(j, j, 1/(1.69*s*s))
		if j > 0 {
			t.Add(j, j-1, -0.3/(1.69*s*sd[j-1]))
		}
	}
	return mustSym(t)
}

// denseInverse returns a⁻¹ as a dense matrix.
func denseInverse(t *testing.T, a *sparse.SymCSC) *mat.SymDense {
	t.Helper()
	d := mat.NewSymDense(a.N, nil)
	for j := range a.N {
		for k := j; k < a.N; k++ {
			d.SetSym(j, k, a.At(j, k))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(d) {
		t.Fatal("precision not positive definite")
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

// The sparse Crank–Nicolson proposal returns exactly log q(θ|θ′) −
// log q(θ′|θ) for its Gaussian transition density
// N(θ′; μ + ρ(θ − μ), (1 − ρ²)H⁻¹), at random pairs and scales, and its
// random-walk steps return 0.
func TestSparseCrankNicolsonProposalRatio(t *testing.T) {
	mean := []float64{1, -2, 0.5, 3}
	prec := tridiagPrecision([]float64{2, 1, 0.2, 0.7})
	cov := denseInverse(t, prec)
	cn, err := exactmh.NewCrankNicolsonSparse(mean, prec)
	if err != nil {
		t.Fatal(err)
	}
	if cn.Walk != 0.1 {
		t.Errorf("Walk = %v, want 0.1, as NewCrankNicolson's", cn.Walk)
	}
	cn.Walk = 0
	rng := rand.New(rand.NewPCG(1, 2))
	theta, next := make([]float64, 4), make([]float64, 4)
	for range 200 {
		scale := math.Exp(4*rng.Float64() - 3)
		for j := range theta {
			theta[j] = mean[j] + 3*rng.NormFloat64()*math.Sqrt(cov.At(j, j))
		}
		got := cn.Propose(rng, next, theta, scale)
		want := logTransition(t, theta, next, mean, cov, scale) - logTransition(t, next, theta, mean, cov, scale)
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("scale %v: log proposal ratio %v, want %v", scale, got, want)
		}
	}
	cn.Walk = 1
	for range 20 {
		if r := cn.Propose(rng, next, theta, 0.4); r != 0 {
			t.Fatalf("random-walk step: log ratio %v, want 0", r)
		}
	}
	if s := cn.String(); !strings.HasPrefix(s, "CrankNicolson(d=4, nnzL=") {
		t.Errorf("String() = %q", s)
	}
}

// The moves have the covariance they should: the Crank–Nicolson chain
// started in N(μ, H⁻¹) stays there, and the random-walk steps' increments
// have covariance (2.38²/d)·H⁻¹. Proposing allocates nothing.
func TestSparseCrankNicolsonMoments(t *testing.T) {
	mean := []float64{1, -2, 0.5}
	prec := tridiagPrecision([]float64{2, 1, 0.2})
	cov := denseInverse(t, prec)
	cn, err := exactmh.NewCrankNicolsonSparse(mean, prec)
	if err != nil {
		t.Fatal(err)
	}
	cn.Walk = 0
	walker := *cn
	walker.Walk = 1
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	x := slicesClone(mean)
	next := make([]float64, 3)
	theta := []float64{0.3, 0.1, -0.2}
	sumC, sumW := mat.NewSymDense(3, nil), mat.NewSymDense(3, nil)
	stepW := 2.38 * 2.38 / 3
	for range n {
		cn.Propose(rng, next, x, 0.3)
		copy(x, next)
		walker.Propose(rng, next, theta, 0.3)
		for j := range 3 {
			for k := j; k < 3; k++ {
				sumC.SetSym(j, k, sumC.At(j, k)+(x[j]-mean[j])*(x[k]-mean[k])/n)
				sumW.SetSym(j, k, sumW.At(j, k)+(next[j]-theta[j])*(next[k]-theta[k])/(stepW*n))
			}
		}
	}
	for j := range 3 {
		for k := range 3 {
			tol := 0.03 * math.Sqrt(cov.At(j, j)*cov.At(k, k))
			if math.Abs(sumW.At(j, k)-cov.At(j, k)) > tol {
				t.Errorf("walk step: increment cov[%d][%d]·d/2.38² = %.4f, want %.4f", j, k, sumW.At(j, k), cov.At(j, k))
			}
			if math.Abs(sumC.At(j, k)-cov.At(j, k)) > 2*tol {
				t.Errorf("stationary cov[%d][%d] = %.4f, want %.4f", j, k, sumC.At(j, k), cov.At(j, k))
			}
		}
	}
	cn.Walk = 0.5
	if a := testing.AllocsPerRun(1000, func() { cn.Propose(rng, next, x, 0.3) }); a != 0 {
		t.Errorf("Propose allocates %v times per call, want 0", a)
	}
}

// sparseCN is the sparse Crank–Nicolson proposal around the problem's mode
// with the precision tridiagPrecision(pb.SD).
func sparseCN(pb problem) *exactmh.CrankNicolson {
	cn, err := exactmh.NewCrankNicolsonSparse(pb.Mode, tridiagPrecision(pb.SD))
	if err != nil {
		panic(err)
	}
	return cn
}

// sparseWalk is the random walk shaped by tridiagPrecision(pb.SD)⁻¹.
func sparseWalk(pb problem) *exactmh.GaussianWalk {
	w, err := exactmh.NewGaussianWalkSparse(tridiagPrecision(pb.SD))
	if err != nil {
		panic(err)
	}
	return w
}

// The sparse Gaussian walk's increments have covariance scale²·H⁻¹ and
// log ratio 0, without allocating.
func TestSparseGaussianWalkMoments(t *testing.T) {
	prec := tridiagPrecision([]float64{2, 1, 0.2})
	cov := denseInverse(t, prec)
	w, err := exactmh.NewGaussianWalkSparse(prec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 200000
	theta, next := []float64{0.3, 0.1, -0.2}, make([]float64, 3)
	sum := mat.NewSymDense(3, nil)
	for range n {
		if r := w.Propose(rng, next, theta, 0.5); r != 0 {
			t.Fatalf("log ratio %v, want 0", r)
		}
		for j := range 3 {
			for k := j; k < 3; k++ {
				sum.SetSym(j, k, sum.At(j, k)+(next[j]-theta[j])*(next[k]-theta[k])/(0.25*n))
			}
		}
	}
	for j := range 3 {
		for k := range 3 {
			if tol := 0.03 * math.Sqrt(cov.At(j, j)*cov.At(k, k)); math.Abs(sum.At(j, k)-cov.At(j, k)) > tol {
				t.Errorf("increment cov[%d][%d]/scale² = %.4f, want %.4f", j, k, sum.At(j, k), cov.At(j, k))
			}
		}
	}
	if a := testing.AllocsPerRun(1000, func() { w.Propose(rng, next, theta, 0.5) }); a != 0 {
		t.Errorf("Propose allocates %v times per call, want 0", a)
	}
	if _, err := exactmh.NewGaussianWalkSparse(&sparse.SymCSC{N: 1}); err == nil {
		t.Error("a malformed precision was accepted")
	}
}

// halfRatio returns half the log proposal ratio: a proposal correction
// that is wrong by a factor, rather than in sign.
type halfRatio struct{ q exactmh.Proposal }

func (h halfRatio) Propose(rng *rand.Rand, dst, theta []float64, s float64) float64 {
	return h.q.Propose(rng, dst, theta, s) / 2
}

// TestSparseCrankNicolsonKit runs MH with the sparse Crank–Nicolson
// proposal (its default fraction of random-walk steps) through the
// conformance kit — moments, SBC, no allocation per step, checkpoints,
// workers, info — on the conjugate Gaussian and, under SMH-2, on the
// logistic regression; the proposal ratio flipped or halved must be
// caught. TunaMH with the sparse Gaussian walk runs on the Gaussian mean
// on a box (moments, SBC and the structural checks).
func TestSparseCrankNicolsonKit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the kit's statistical checks of the sparse proposal; runs without -short")
	}
	cases := []mcmctest.Case{
		{Name: "MH sparse Crank–Nicolson", Exact: true,
			Kernel: func(pb problem) exactmh.Kernel { return exactmh.MH{Proposal: sparseCN(pb), Scale: pb.Scale} },
			Mutants: mutants{
				"flipped proposal ratio": func(pb problem) exactmh.Kernel {
					return exactmh.MH{Proposal: flipRatio{sparseCN(pb)}, Scale: pb.Scale}
				},
				"halved proposal ratio": func(pb problem) exactmh.Kernel {
					return exactmh.MH{Proposal: halfRatio{sparseCN(pb)}, Scale: pb.Scale}
				},
			}},
		{Name: "TunaMH sparse Gaussian walk", NeedsRange: true, Exact: true,
			Kernel: func(pb problem) exactmh.Kernel {
				return exactmh.TunaMH{Proposal: sparseWalk(pb), Scale: pb.Scale}
			}},
		{Name: "SMH-2 sparse Crank–Nicolson", NeedsGLM: true, Exact: true,
			Kernel: func(pb problem) exactmh.Kernel {
				return exactmh.SMH{KeepMinibatch: true, Order: 2, Center: pb.Mode, Proposal: sparseCN(pb), Scale: pb.Scale}
			}},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { mcmctest.Check(t, c) })
	}
}

// MH with the sparse Crank–Nicolson proposal from FindSparseLaplace on a
// random-intercept logistic regression (d = 43) agrees with MH with the
// dense CrankNicolson from FindLaplace: every posterior mean within 5
// Monte Carlo standard errors of the two runs combined, and a high
// acceptance (the posterior is close to its Laplace approximation).
func TestSparseCrankNicolsonMatchesDense(t *testing.T) {
	if testing.Short() {
		t.Skip("two 4-chain runs")
	}
	post := riPosterior(5, 2000, 3, 40)
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
	scn, err := sl.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	dcn, err := dl.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	set := &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 2000, Seed: 11, Init: sl.Mean}
	rs, err := exactmh.Sample(ctx, post, exactmh.MH{Proposal: scn}, set)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := exactmh.Sample(ctx, post, exactmh.MH{Proposal: dcn}, set)
	if err != nil {
		t.Fatal(err)
	}
	if a := rs.Sampling().AcceptRate(); a < 0.5 {
		t.Errorf("sparse Crank–Nicolson acceptance %.3f, want ≥ 0.5", a)
	}
	ss, sd := rs.Summary(), rd.Summary()
	var worst float64
	for j := range d {
		a, b := ss.Params[j], sd.Params[j]
		z := math.Abs(a.Mean-b.Mean) / math.Hypot(a.MCSE, b.MCSE)
		worst = math.Max(worst, z)
		if z > 5 {
			t.Errorf("θ[%d]: sparse %.4f ± %.4f, dense %.4f ± %.4f", j, a.Mean, a.MCSE, b.Mean, b.MCSE)
		}
	}
	t.Logf("acceptance sparse %.3f dense %.3f; largest mean difference %.2f MCSE", rs.Sampling().AcceptRate(), rd.Sampling().AcceptRate(), worst)
}

func TestSparseCrankNicolsonErrors(t *testing.T) {
	prec := tridiagPrecision([]float64{1, 1})
	if _, err := exactmh.NewCrankNicolsonSparse([]float64{0}, prec); err == nil {
		t.Error("a mean of the wrong length was accepted")
	}
	if _, err := exactmh.NewCrankNicolsonSparse([]float64{math.NaN(), 0}, prec); err == nil {
		t.Error("a NaN mean was accepted")
	}
	neg := prec.Clone()
	neg.Scale(-1)
	if _, err := exactmh.NewCrankNicolsonSparse([]float64{0, 0}, neg); err == nil || !strings.Contains(err.Error(), "not positive definite") {
		t.Errorf("a negative definite precision: err = %v", err)
	}
	if _, err := exactmh.NewCrankNicolsonSparse([]float64{0, 0}, &sparse.SymCSC{N: 2}); err == nil {
		t.Error("a malformed precision was accepted")
	}
	p := logisticPosterior() // d = 2
	for _, walk := range []float64{-0.1, 1.5, math.NaN()} {
		cn, err := exactmh.NewCrankNicolsonSparse([]float64{0, 0}, prec)
		if err != nil {
			t.Fatal(err)
		}
		cn.Walk = walk
		_, err = exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 1, Draws: 1})
		if err == nil || !strings.Contains(err.Error(), "Walk") {
			t.Errorf("Walk = %v: error %v, want one naming Walk", walk, err)
		}
	}
	three, err := exactmh.NewCrankNicolsonSparse([]float64{0, 0, 0}, tridiagPrecision([]float64{1, 1, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: three}, &exactmh.Settings{Chains: 1, Draws: 1}); err == nil {
		t.Error("a 3-d sparse CrankNicolson was accepted for a 2-d posterior")
	}
	// The Student-t moves need the dense factor: Nu > 0 is refused, naming Nu.
	tcn, err := exactmh.NewCrankNicolsonSparse([]float64{0, 0}, prec)
	if err != nil {
		t.Fatal(err)
	}
	tcn.Nu = 4
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: tcn}, &exactmh.Settings{Chains: 1, Draws: 1}); err == nil || !strings.Contains(err.Error(), "Nu") {
		t.Errorf("sparse CrankNicolson with Nu = 4: error %v, want one naming Nu", err)
	}
}

// BenchmarkSparseCrankNicolson measures one proposal (Walk = 0.1) against
// the dense CrankNicolson around the same Gaussian: the precision of a
// random-intercept-and-slope model with p = 10 fixed effects and G groups,
// d = 10 + 2G. The dense proposal is built for d ≤ 5,010 only: its two
// d×d matrices take 16d² bytes (1.6 GB at d = 10⁴) and building them
// O(d³) time.
func BenchmarkSparseCrankNicolson(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, g := range []int{250, 1000, 2500, 5000} {
		prec := arrowPrecision(rng, 10, g, 2)
		d := prec.N
		mean := make([]float64, d)
		theta := make([]float64, d)
		for j := range theta {
			theta[j] = 0.1 * rng.NormFloat64()
		}
		dst := make([]float64, d)
		scn, err := exactmh.NewCrankNicolsonSparse(mean, prec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("sparse/d=%d", d), func(b *testing.B) {
			r := rand.New(rand.NewPCG(2, 2))
			b.ReportAllocs()
			for b.Loop() {
				scn.Propose(r, dst, theta, 0.5)
			}
			b.ReportMetric(float64(prec.NNZ()), "nnzH")
		})
		if d > 5010 {
			continue
		}
		cov := mat.NewSymDense(d, nil)
		ch, err := sparse.Factorize(prec)
		if err != nil {
			b.Fatal(err)
		}
		col, work := make([]float64, d), make([]float64, d)
		for j := range d {
			clear(col)
			col[j] = 1
			ch.Solve(col, col, work)
			for k := j; k < d; k++ {
				cov.SetSym(j, k, col[k])
			}
		}
		dcn, err := exactmh.NewCrankNicolson(mean, cov)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("dense/d=%d", d), func(b *testing.B) {
			r := rand.New(rand.NewPCG(2, 2))
			b.ReportAllocs()
			for b.Loop() {
				dcn.Propose(r, dst, theta, 0.5)
			}
		})
	}
}

// arrowPrecision is a positive definite matrix with the pattern of a
// multilevel model's Hessian: a dense p×p block for the fixed effects,
// dense q×q blocks for each of G groups, each coupled to the fixed effects.
func arrowPrecision(rng *rand.Rand, p, g, q int) *sparse.SymCSC {
	n := p + g*q
	t := sparse.NewTriplet(n)
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
			for c := range a {
				add(base+a, base+c)
			}
			for f := range p {
				add(base+a, f)
			}
		}
	}
	for i := range n {
		t.Add(i, i, diag[i]+1)
	}
	return mustSym(t)
}

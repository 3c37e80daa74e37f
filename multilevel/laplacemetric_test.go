// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
	"gonum.org/v1/gonum/mat"
)

// TestLaplaceMetricAlgebra checks every operation of the sparse Laplace
// metric against dense algebra on its mass matrix M, H and after Rescale
// S⁻¹HS⁻¹: ½pᵀM⁻¹p, M⁻¹v, rᵀMr, the factor F with FFᵀ = M⁻¹ (MulChol,
// MulCholT = Fᵀ, SolveChol = F⁻¹), and the covariances of Momentum (M)
// and Noise (M⁻¹) through their linear maps; none allocates.
func TestLaplaceMetricAlgebra(t *testing.T) {
	const n = 30
	h, ops, err := multilevel.LaplaceMetricDense(n, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("H", func(t *testing.T) { checkMetricAlgebra(t, h, ops) })
	// Rescaled to variances v: M⁻¹ = S H⁻¹ S with S_jj = √(v_j/(H⁻¹)_jj).
	var hinv mat.Dense
	hh := mat.NewDense(n, n, nil)
	for i := range n {
		hh.SetRow(i, h[i])
	}
	if err := hinv.Inverse(hh); err != nil {
		t.Fatal(err)
	}
	v, sc := make([]float64, n), make([]float64, n)
	for j := range v {
		v[j] = 0.1 + float64(j%7)
		sc[j] = math.Sqrt(v[j] / hinv.At(j, j))
	}
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range n {
			m[i][j] = h[i][j] / (sc[i] * sc[j])
		}
	}
	r := ops.(interface {
		Rescale([]float64) exactmh.MetricOps
	}).Rescale(v)
	t.Run("rescaled", func(t *testing.T) { checkMetricAlgebra(t, m, r) })
}

func checkMetricAlgebra(t *testing.T, h [][]float64, ops exactmh.MetricOps) {
	n := len(h)
	hd := mat.NewSymDense(n, nil)
	for i := range n {
		for j := range n {
			hd.SetSym(i, j, h[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(hd) {
		t.Fatal("H not positive definite")
	}
	var hinv mat.SymDense
	if err := ch.InverseTo(&hinv); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]float64, n)
	for j := range v {
		v[j] = rng.NormFloat64()
	}
	vv := mat.NewVecDense(n, v)
	var hv, hiv mat.VecDense
	hv.MulVec(hd, vv)
	hiv.MulVec(&hinv, vv)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("KineticEnergy", ops.KineticEnergy(v), mat.Dot(vv, &hiv)/2)
	near("MassNorm", ops.MassNorm(v), mat.Dot(vv, &hv))
	dst := make([]float64, n)
	ops.MulInvMass(dst, v)
	for j := range n {
		near("MulInvMass", dst[j], hiv.AtVec(j))
	}
	// Columns of the linear maps: Momentum's M_p with M_p M_pᵀ = H, Noise's
	// M_n with M_n M_nᵀ = H⁻¹, MulChol's F with FFᵀ = H⁻¹, and F⁻¹F = I,
	// FᵀF⁻ᵀ… through MulCholT(SolveChol) = I.
	colsOf := func(f func(dst, e []float64)) *mat.Dense {
		m := mat.NewDense(n, n, nil)
		for k := range n {
			e := make([]float64, n)
			e[k] = 1
			out := make([]float64, n)
			f(out, e)
			m.SetCol(k, out)
		}
		return m
	}
	inPlace := func(g func([]float64)) func(dst, e []float64) {
		return func(dst, e []float64) { copy(dst, e); g(dst) }
	}
	checkCov := func(what string, m *mat.Dense, want mat.Matrix) {
		t.Helper()
		var c mat.Dense
		c.Mul(m, m.T())
		for i := range n {
			for j := range n {
				near(what, c.At(i, j), want.At(i, j))
			}
		}
	}
	checkCov("Momentum covariance", colsOf(inPlace(ops.Momentum)), hd)
	checkCov("Noise covariance", colsOf(inPlace(ops.Noise)), &hinv)
	f := colsOf(ops.MulChol)
	checkCov("MulChol FFᵀ", f, &hinv)
	ft := colsOf(ops.MulCholT)
	for i := range n {
		for j := range n {
			near("MulCholT = Fᵀ", ft.At(i, j), f.At(j, i))
		}
	}
	finv := colsOf(ops.SolveChol)
	var id mat.Dense
	id.Mul(finv, f)
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			near("SolveChol·MulChol", id.At(i, j), want)
		}
	}
	// SolveChol in place.
	w := append([]float64(nil), v...)
	ops.SolveChol(w, w)
	want := make([]float64, n)
	ops.SolveChol(want, v)
	for j := range n {
		near("SolveChol in place", w[j], want[j])
	}
	if a := testing.AllocsPerRun(100, func() {
		ops.Momentum(dst)
		_ = ops.KineticEnergy(v)
		ops.MulInvMass(dst, v)
		_ = ops.MassNorm(v)
		ops.SolveChol(dst, v)
	}); a != 0 && !raceEnabled {
		t.Errorf("%v allocations per leapfrog's metric operations, want 0", a)
	}
}

// laplaceCase is the kit row of non-centred NUTS with the sparse Laplace
// metric at the problem's centre, its log scales in H.
func laplaceKernel(tauInL bool, mutant int) func(pb mcmctest.Problem) exactmh.Kernel {
	return func(pb mcmctest.Problem) exactmh.Kernel {
		k, err := multilevel.LaplaceNUTS(pb.Posterior, pb.Mode, pb.Scale, tauInL, mutant)
		if err != nil {
			panic(err)
		}
		return k
	}
}

// TestLaplaceNUTSKit proves non-centred NUTS with the sparse Laplace
// metric through the kit on the multilevel target with τ unknown: SBC on
// every coordinate, log τ included (pairwise and the walk do not apply:
// no proposal; the moments have no closed form), allocations, info,
// workers and checkpoints. Its mutant, the momentum drawn through the
// factor's transpose, passes the kit's SBC (200 replicates) and is caught
// by TestLaplaceNUTSMoments.
func TestLaplaceNUTSKit(t *testing.T) {
	if testing.Short() {
		t.Skip("the kit's SBC: long")
	}
	mcmctest.Check(t, mcmctest.Case{Name: "NUTS-NC-Laplace", NeedsMultilevel: true, NeedsGradient: true, Exact: true,
		Multilevel: mlSlopes, Metric: exactmh.MetricUnit,
		Kernel: laplaceKernel(true, multilevel.MetricMutantNone)})
}

// TestLaplaceNUTSMoments checks the means and variances of every
// coordinate (β, effects, log τ) of NUTS-NC-Laplace against a long
// NUTS-NC run (the diagonal metric, proven by the root's kit) on a
// random-intercept-and-slope logistic design with τ unknown, and that
// the mutant whose momentum is drawn through the factor's transpose
// (covariance M⁻¹, not M) shows a bias there.
func TestLaplaceNUTSMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("long runs")
	}
	_, pb, err := mlSlopes.Draw(rand.New(rand.NewPCG(7, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := exactmh.Sample(context.Background(), pb.Posterior, exactmh.NUTS{NonCentred: true},
		&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 5000, Seed: 1, Init: pb.Mode})
	if err != nil {
		t.Fatal(err)
	}
	d := pb.Posterior.Dim()
	mean, sd := make([]float64, d), make([]float64, d)
	for j := range d {
		var s, ss float64
		var n int
		for _, ch := range ref.Samples(j) {
			for _, v := range ch {
				s += v
				ss += v * v
				n++
			}
		}
		mean[j] = s / float64(n)
		sd[j] = math.Sqrt(ss/float64(n) - mean[j]*mean[j])
	}
	run := func(mutant int) error {
		k, err := multilevel.LaplaceNUTS(pb.Posterior, pb.Mode, 0, true, mutant)
		if err != nil {
			t.Fatal(err)
		}
		k.MaxDepth = 6 // the mutant's trajectories would run to depth 10
		res, err := exactmh.Sample(context.Background(), pb.Posterior, k,
			&exactmh.Settings{Chains: 4, Warmup: 500, Draws: 1500, Seed: 2, Init: pb.Mode})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("mutant %d: step %.3g", mutant, res.Chains[0].Scale)
		return mcmctest.CheckMoments(res, mean, sd, 5)
	}
	if err := run(multilevel.MetricMutantNone); err != nil {
		t.Errorf("NUTS-NC-Laplace: %v", err)
	}
	if err := run(multilevel.MetricMutantMomentumTranspose); !mcmctest.ShowsBias(err) {
		t.Errorf("mutant momentum through the factor's transpose not caught by the moments: %v", err)
	}
}

// TestNUTSLaplaceAllocsAndErrors checks that a NUTS-NC-Laplace transition
// allocates nothing (every leapfrog's metric operations included) and that
// NUTSLaplace refuses a centre of the wrong dimension.
func TestNUTSLaplaceAllocsAndErrors(t *testing.T) {
	_, pb, err := mlSlopes.Draw(rand.New(rand.NewPCG(7, 1)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := multilevel.NUTSLaplace(pb.Posterior, pb.Mode)
	if err != nil {
		t.Fatal(err)
	}
	k.Scale = 0.2
	a, err := mcmctest.AllocsPerStep(k, pb.Posterior, pb.Mode, 200)
	if err != nil {
		t.Fatal(err)
	}
	if a != 0 && !raceEnabled {
		t.Errorf("%v allocations per transition, want 0", a)
	}
	if _, err := multilevel.NUTSLaplace(pb.Posterior, pb.Mode[1:]); err == nil {
		t.Error("a centre of the wrong dimension accepted")
	}
}

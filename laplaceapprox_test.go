// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// On a conjugate Gaussian (full Σ, Gaussian prior, tempered) the Laplace
// approximation is the exact posterior; so is the one from a numerical
// Hessian, to its accuracy.
func TestLaplaceConjugate(t *testing.T) {
	sigma := mat.NewSymDense(3, []float64{1, 0.3, 0, 0.3, 2, 0.4, 0, 0.4, 1.5})
	g, err := mcmctest.ConjugateGaussian(400, []float64{1, -2, 0.5}, sigma, []float64{0, 1, 0}, []float64{0.5, 2, 0.1}, 0.3, 3)
	if err != nil {
		t.Fatal(err)
	}
	la, err := exactmh.FindLaplace(context.Background(), g.Posterior, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !la.ExactHessian || la.MAP.Method != exactmh.MAPNewton || la.Passes != la.MAP.Passes || len(la.Warnings) != 0 {
		t.Errorf("exact %v, method %v, passes %d (MAP %d), warnings %q", la.ExactHessian, la.MAP.Method, la.Passes, la.MAP.Passes, la.Warnings)
	}
	checkGaussian(t, "exact", la, g.Mean, g.Cov, 1e-10, 1e-10)

	// An energy without a Hessian: L-BFGS, then central differences.
	num, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: gradOnly{g.Energy, g.Energy}, Prior: g.Posterior.Prior, Beta: g.Posterior.Beta}, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if num.ExactHessian || num.MAP.Method != exactmh.MAPLBFGS || num.Passes != num.MAP.Passes+2*3 {
		t.Errorf("numerical: exact %v, method %v, passes %d (MAP %d)", num.ExactHessian, num.MAP.Method, num.Passes, num.MAP.Passes)
	}
	checkGaussian(t, "numerical", num, g.Mean, g.Cov, 1e-6, 1e-6)

	// LaplaceAt the mode agrees with FindLaplace.
	at, err := exactmh.LaplaceAt(g.Posterior, la.Mean)
	if err != nil {
		t.Fatal(err)
	}
	if at.MAP != nil || math.Abs(at.LogDensity-la.LogDensity) > 1e-9*math.Abs(la.LogDensity) || math.Abs(at.LogEvidence-la.LogEvidence) > 1e-9 {
		t.Errorf("LaplaceAt: log density %v, evidence %v; FindLaplace: %v, %v", at.LogDensity, at.LogEvidence, la.LogDensity, la.LogEvidence)
	}
	checkGaussian(t, "LaplaceAt", at, g.Mean, g.Cov, 1e-10, 1e-10)
}

// checkGaussian compares the approximation's mean, covariance (both from
// Covariance and from CovChol) and SD with the given ones, and checks that
// CovChol is lower triangular and Precision its inverse.
func checkGaussian(t *testing.T, name string, la *exactmh.LaplaceApprox, mean []float64, cov mat.Symmetric, tolMean, tolCov float64) {
	t.Helper()
	d := len(mean)
	for j := range d {
		if sd := math.Sqrt(cov.At(j, j)); math.Abs(la.Mean[j]-mean[j]) > tolMean*math.Max(1, math.Abs(mean[j])) {
			t.Errorf("%s: mean[%d] = %.12g, want %.12g (sd %.3g)", name, j, la.Mean[j], mean[j], sd)
		}
	}
	var llt mat.Dense
	llt.Mul(la.CovChol, la.CovChol.T())
	if r := maxRelDiff(la.Covariance(), cov); r > tolCov {
		t.Errorf("%s: covariance %v, want %v (relative difference %.2g)", name, mat.Formatted(la.Covariance(), mat.Squeeze()), mat.Formatted(cov, mat.Squeeze()), r)
	}
	if r := maxRelDiff(&llt, cov); r > tolCov {
		t.Errorf("%s: LLᵀ differs from the covariance by %.2g relative", name, r)
	}
	if _, kind := la.CovChol.Triangle(); kind != mat.Lower {
		t.Errorf("%s: CovChol is not lower triangular", name)
	}
	sd := la.SD()
	for j := range d {
		if want := math.Sqrt(cov.At(j, j)); math.Abs(sd[j]-want) > tolCov*want {
			t.Errorf("%s: SD[%d] = %.10g, want %.10g", name, j, sd[j], want)
		}
	}
	var prod mat.Dense
	prod.Mul(la.Precision, &llt)
	if r := maxRelDiff(&prod, eye(d)); r > 100*tolCov {
		t.Errorf("%s: H·LLᵀ = %v, want I", name, mat.Formatted(&prod, mat.Squeeze()))
	}
}

func eye(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for j := range d {
		m.Set(j, j, 1)
	}
	return m
}

// Cases known without sampling: the log-rate of Poisson counts under a
// flat prior (mode log(S/N), variance 1/S), the intercept of a logistic
// regression (mode logit(ȳ), variance 1/(N ȳ(1 − ȳ))), and the Laplace
// evidence of a one-dimensional Gaussian, exact, against quadrature.
func TestLaplaceKnownCases(t *testing.T) {
	counts := []float64{3, 0, 2, 5, 1, 4, 2, 2}
	ones := make([]float64, len(counts))
	for i := range ones {
		ones[i] = 1
	}
	pois, _ := model.NewGLM(ones, counts, 1, model.PoissonFamily{})
	la, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: pois}, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const s, n = 19.0, 8.0
	// The default Tol leaves the mode within √(2·10⁻¹⁶) ≈ 1.4·10⁻⁸ sd.
	if math.Abs(la.Mean[0]-math.Log(s/n)) > 1e-8*la.SD()[0] || math.Abs(la.Covariance().At(0, 0)*s-1) > 1e-8 {
		t.Errorf("Poisson log-rate: N(%.10g, %.10g), want N(%.10g, %.10g)", la.Mean[0], la.Covariance().At(0, 0), math.Log(s/n), 1/s)
	}

	labels := make([]float64, 1000)
	for i := range 300 {
		labels[i] = 1
	}
	x := make([]float64, 1000)
	for i := range x {
		x[i] = 1
	}
	lr, _ := model.NewLogisticRegression(x, labels, 1)
	la, err = exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: lr}, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, sd := math.Log(0.3/0.7), 1/math.Sqrt(1000*0.3*0.7); math.Abs(la.Mean[0]-want) > 1e-8*sd || math.Abs(la.SD()[0]/sd-1) > 1e-8 {
		t.Errorf("logistic intercept: mean %.10g, sd %.10g; want %.10g, %.10g", la.Mean[0], la.SD()[0], want, 1/math.Sqrt(1000*0.3*0.7))
	}

	// y_i ~ N(θ, 1), θ ~ N(0, 2²), tempered by β = 0.5: log ∫ π by the
	// trapezoid rule on ±12 standard deviations.
	one := mat.NewSymDense(1, []float64{1})
	gm, _ := model.NewGaussianMean([]float64{0.3, 1.7, 2.2, 0.9}, 1, one)
	prior, _ := model.NewGaussian([]float64{0}, []float64{2})
	p := &exactmh.Posterior{Energy: gm, Prior: prior, Beta: 0.5}
	la, err = exactmh.FindLaplace(context.Background(), p, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd := la.SD()[0]
	var sum float64
	const steps = 20000
	h := 24 * sd / steps
	for k := 0; k <= steps; k++ {
		th := la.Mean[0] - 12*sd + float64(k)*h
		v, _ := p.LogDensity([]float64{th})
		w := 1.0
		if k == 0 || k == steps {
			w = 0.5
		}
		sum += w * math.Exp(v-la.LogDensity)
	}
	if quad := la.LogDensity + math.Log(sum*h); math.Abs(quad-la.LogEvidence) > 1e-9 {
		t.Errorf("log evidence %.12g, quadrature %.12g", la.LogEvidence, quad)
	}
	// LogProb is the normalised Gaussian log density.
	if got, want := la.LogProb([]float64{la.Mean[0] + sd}), -0.5*math.Log(2*math.Pi)-math.Log(sd)-0.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("LogProb one sd from the mean: %v, want %v", got, want)
	}
}

// Draws from Rand have the approximation's moments.
func TestLaplaceRand(t *testing.T) {
	prior, _ := model.NewIsoGaussian(3, 2)
	p := &exactmh.Posterior{Energy: simLogistic(t, 300, 3, 12), Prior: prior}
	la, err := exactmh.FindLaplace(context.Background(), p, make([]float64, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 40000
	draws := mat.NewDense(n, 3, nil)
	x := make([]float64, 3)
	for i := range n {
		draws.SetRow(i, la.Rand(rng, x))
	}
	cov := la.Covariance()
	for j := range 3 {
		col := mat.Col(nil, j, draws)
		var m, v float64
		for _, c := range col {
			m += c / n
		}
		for _, c := range col {
			v += (c - m) * (c - m) / (n - 1)
		}
		sd := math.Sqrt(cov.At(j, j))
		if math.Abs(m-la.Mean[j]) > 5*sd/math.Sqrt(n) || math.Abs(v/cov.At(j, j)-1) > 5*math.Sqrt(2.0/n) {
			t.Errorf("θ[%d]: draws have mean %.5f, variance %.5g; want %.5f, %.5g", j, m, v, la.Mean[j], cov.At(j, j))
		}
	}
	if got := la.Rand(rng, nil); len(got) != 3 {
		t.Errorf("Rand(nil) returned %d values", len(got))
	}
}

// A flat prior with two identical covariates leaves their difference
// unidentified: the Hessian is singular along (1, −1)/√2 and FindLaplace
// says so, with the mode and the direction.
func TestLaplaceNotPositiveDefinite(t *testing.T) {
	base := simLogistic(t, 500, 2, 6)
	x, y := make([]float64, 500*3), make([]float64, 500)
	for i := range y {
		row := base.Row(i)
		x[i*3], x[i*3+1], x[i*3+2] = row[0], row[0], row[1]
		y[i] = base.Label(i)
	}
	lr, _ := model.NewLogisticRegression(x, y, 3)
	la, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: lr}, make([]float64, 3), nil)
	var ih *exactmh.IndefiniteHessianError
	if !errors.As(err, &ih) {
		t.Fatalf("err = %v, want an *IndefiniteHessianError", err)
	}
	if la == nil || la.Precision == nil || la.MAP == nil || la.CovChol != nil {
		t.Errorf("result %+v: want the MAP and the precision, no factor", la)
	}
	if math.Abs(math.Abs(ih.Direction[0]-ih.Direction[1])-math.Sqrt2) > 1e-6 || math.Abs(ih.Direction[2]) > 1e-6 ||
		math.Abs(ih.MinEigenvalue) > 1e-8*ih.MaxEigenvalue || len(ih.Theta) != 3 {
		t.Errorf("eigenvalues %.3g … %.3g, direction %.4f at %.4f", ih.MinEigenvalue, ih.MaxEigenvalue, ih.Direction, ih.Theta)
	}
	if !strings.HasPrefix(err.Error(), "exactmh: FindLaplace: ") || !strings.Contains(err.Error(), "eigenvector") {
		t.Errorf("error %q", err)
	}
	t.Logf("%v", err)

	// At a saddle point of the mixture (between its modes, θ2 = 0 is a
	// ridge) the Hessian is indefinite.
	rng := rand.New(rand.NewPCG(2, 2))
	mx := make([]float64, 2000)
	for i := range mx {
		mx[i] = math.Sqrt2*rng.NormFloat64() + float64(rng.IntN(2))
	}
	mix, _ := model.NewGaussianMixture(mx, 2)
	_, err = exactmh.LaplaceAt(&exactmh.Posterior{Energy: mix}, []float64{0.5, 0})
	if !errors.As(err, &ih) || ih.MinEigenvalue >= 0 {
		t.Errorf("mixture at (0.5, 0): err = %v, want a negative eigenvalue", err)
	}
	t.Logf("%v", err)
}

// Modes on a ball's boundary or a Laplace prior's kink give a warning; a
// missing gradient is ErrNoGradient.
func TestLaplaceWarningsAndErrors(t *testing.T) {
	e := simLogistic(t, 2000, 3, 9)
	ball, _ := model.NewBall(3, 0.2, nil)
	la, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: e, Prior: ball}, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Warnings) != 1 || !strings.Contains(la.Warnings[0], "boundary") {
		t.Errorf("mode on the sphere: warnings %q", la.Warnings)
	}
	t.Logf("ball: %s", la.Warnings)

	box, _ := model.NewCube(3, -0.1, 0.5)
	la, err = exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: e, Prior: box}, []float64{0, 0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Warnings) == 0 {
		t.Errorf("mode %v on the box's edge: no warning", la.Mean)
	}
	t.Logf("box: mode %.4f, %s", la.Mean, la.Warnings)

	lap, _ := model.NewIsoLaplace(1, 1)
	g0, _ := model.NewGaussianMean([]float64{0.1, -0.5, 0.7}, 1, mat.NewSymDense(1, []float64{1}))
	la, err = exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: g0, Prior: lap}, []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(la.Warnings) != 1 || !strings.Contains(la.Warnings[0], "kink") {
		t.Errorf("mode on the kink: warnings %q", la.Warnings)
	}

	lr := simLogistic(t, 100, 2, 1)
	if _, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: noGradEnergy{lr}}, []float64{0, 0}, nil); !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("FindLaplace without a gradient: err = %v, want ErrNoGradient", err)
	}
	if _, err := exactmh.LaplaceAt(&exactmh.Posterior{Energy: noGradEnergy{lr}}, []float64{0, 0}); !errors.Is(err, exactmh.ErrNoGradient) {
		t.Errorf("LaplaceAt without a gradient: err = %v, want ErrNoGradient", err)
	}
	if _, err := exactmh.LaplaceAt(&exactmh.Posterior{Energy: lr}, []float64{0}); err == nil {
		t.Error("LaplaceAt, wrong length: no error")
	}
	la, err = exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: lr}, []float64{0, 0}, &exactmh.MAPSettings{MaxIterations: 1, GradTol: 1e-15, Tol: 1e-30})
	if err == nil || la == nil || la.MAP == nil || la.Precision != nil {
		t.Errorf("MAP not converged: %+v, %v", la, err)
	}
	t.Logf("%v", err)
}

func ExampleFindLaplace() {
	// y_i ~ N(θ, 1) with the prior θ ~ N(0, 10²): the posterior is
	// N(Σy/(N + 0.01), 1/(N + 0.01)), and the Laplace approximation is it.
	e, err := model.NewGaussianMean([]float64{1, 2, 6}, 1, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		fmt.Println(err)
		return
	}
	prior, _ := model.NewGaussian([]float64{0}, []float64{10})
	la, err := exactmh.FindLaplace(context.Background(), &exactmh.Posterior{Energy: e, Prior: prior}, []float64{0}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("θ ≈ N(%.4f, %.4f²) by %v; exact N(%.4f, %.4f²)\n", la.Mean[0], la.SD()[0], la.MAP.Method, 9/3.01, 1/math.Sqrt(3.01))
	// Output: θ ≈ N(2.9900, 0.5764²) by Newton; exact N(2.9900, 0.5764²)
}

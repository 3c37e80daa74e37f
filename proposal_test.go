// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

// testCov is a correlated 3×3 covariance with very different scales.
func testCov() *mat.SymDense {
	return mat.NewSymDense(3, []float64{
		4, 1.2, -0.1,
		1.2, 1, 0.05,
		-0.1, 0.05, 0.04,
	})
}

// The Crank–Nicolson proposal returns exactly log q(θ|θ′) − log q(θ′|θ)
// for its Gaussian transition density N(θ′; μ + ρ(θ − μ), (1 − ρ²)Σ), at
// random pairs and scales: the ratio the acceptance step relies on.
func TestCrankNicolsonProposalRatio(t *testing.T) {
	mean := []float64{1, -2, 0.5}
	cov := testCov()
	cn, err := exactmh.NewCrankNicolson(mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	theta, next := make([]float64, 3), make([]float64, 3)
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
}

// logTransition returns log N(to; μ + ρ(from − μ), (1 − ρ²)Σ), ρ = e^{−scale}.
func logTransition(t *testing.T, to, from, mean []float64, cov *mat.SymDense, scale float64) float64 {
	t.Helper()
	rho := math.Exp(-scale)
	mu := make([]float64, len(mean))
	for j := range mu {
		mu[j] = mean[j] + rho*(from[j]-mean[j])
	}
	var c mat.SymDense
	c.ScaleSym(1-rho*rho, cov)
	n, ok := distmv.NewNormal(mu, &c, nil)
	if !ok {
		t.Fatal("covariance not positive definite")
	}
	return n.LogProb(to)
}

// Both proposals move with the covariance they were given: the Gaussian
// walk's increments have covariance scale²Σ; Crank–Nicolson started in
// N(μ, Σ) stays there (its draws' mean and covariance are μ and Σ).
func TestPreconditionedProposalMoments(t *testing.T) {
	mean := []float64{1, -2, 0.5}
	cov := testCov()
	gw, err := exactmh.NewGaussianWalk(cov)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := exactmh.NewCrankNicolson(mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	theta, next := []float64{0.3, 0.1, -0.2}, make([]float64, 3)
	sumW, sumC := mat.NewSymDense(3, nil), mat.NewSymDense(3, nil)
	meanC := make([]float64, 3)
	x := slicesClone(mean)
	for range n {
		if r := gw.Propose(rng, next, theta, 0.5); r != 0 {
			t.Fatalf("GaussianWalk log ratio %v, want 0", r)
		}
		cn.Propose(rng, next, x, 0.3)
		copy(x, next)
		for j := range 3 {
			meanC[j] += x[j] / n
		}
		for j := range 3 {
			for k := j; k < 3; k++ {
				sumC.SetSym(j, k, sumC.At(j, k)+(x[j]-mean[j])*(x[k]-mean[k])/n)
			}
		}
		gw.Propose(rng, next, theta, 0.5)
		for j := range 3 {
			for k := j; k < 3; k++ {
				sumW.SetSym(j, k, sumW.At(j, k)+(next[j]-theta[j])*(next[k]-theta[k])/(0.25*n))
			}
		}
	}
	for j := range 3 {
		for k := range 3 {
			tol := 0.03 * math.Sqrt(cov.At(j, j)*cov.At(k, k))
			if math.Abs(sumW.At(j, k)-cov.At(j, k)) > tol {
				t.Errorf("GaussianWalk increment cov[%d][%d] = %.4f, want %.4f", j, k, sumW.At(j, k), cov.At(j, k))
			}
			// The CN chain is autocorrelated (ρ = e^{−0.3}): wider tolerance.
			if math.Abs(sumC.At(j, k)-cov.At(j, k)) > 2*tol {
				t.Errorf("Crank–Nicolson stationary cov[%d][%d] = %.4f, want %.4f", j, k, sumC.At(j, k), cov.At(j, k))
			}
		}
		if math.Abs(meanC[j]-mean[j]) > 0.05*math.Sqrt(cov.At(j, j)) {
			t.Errorf("Crank–Nicolson stationary mean[%d] = %.4f, want %.4f", j, meanC[j], mean[j])
		}
	}
}

func slicesClone(x []float64) []float64 { return append([]float64(nil), x...) }

// MH with a Crank–Nicolson proposal around the posterior's own Gaussian is
// exact whatever the Gaussian: around the exact posterior of a conjugate
// model it accepts every move; around a deliberately wrong Gaussian it still
// has the right moments; and with the proposal ratio's sign flipped (a
// mutant) it is biased.
func TestCrankNicolsonExactness(t *testing.T) {
	g, err := mcmctest.ConjugateGaussian(400, []float64{0.5, -1}, mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2}),
		[]float64{0, 0}, []float64{3, 3}, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	sd := g.SD()
	exactCov := mat.NewSymDense(2, nil)
	exactCov.CopySym(g.Cov)
	at := func(mean []float64, cov mat.Symmetric) exactmh.Proposal {
		cn, err := exactmh.NewCrankNicolson(mean, cov)
		if err != nil {
			t.Fatal(err)
		}
		return cn
	}
	set := &exactmh.Settings{Chains: 4, Warmup: 300, Draws: 3000, Seed: 9, Init: g.Mean}
	res, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Proposal: at(g.Mean, exactCov)}, set)
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Sampling().AcceptRate(); a < 0.999 {
		t.Errorf("around the exact posterior: acceptance %.4f, want 1", a)
	}
	if err := mcmctest.CheckMoments(res, g.Mean, sd, 4); err != nil {
		t.Error(err)
	}
	// Around a Gaussian shifted by one sd and twice as wide.
	off := []float64{g.Mean[0] + sd[0], g.Mean[1] - sd[1]}
	wide := mat.NewSymDense(2, nil)
	wide.ScaleSym(4, exactCov)
	res, err = exactmh.Sample(context.Background(), g.Posterior, exactmh.MH{Proposal: at(off, wide)}, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmctest.CheckMoments(res, g.Mean, sd, 4); err != nil {
		t.Error(err)
	}
	t.Logf("around a wrong Gaussian: acceptance %.3f", res.Sampling().AcceptRate())
	// The mutant: the proposal ratio with the wrong sign.
	bad := flipRatio{at(off, wide)}
	k := exactmh.MH{Proposal: bad, Scale: res.Chains[0].Scale}
	fixed := &exactmh.Settings{Chains: 4, Warmup: 300, NoAdapt: true, Draws: 3000, Seed: 9, Init: g.Mean}
	res, err = exactmh.Sample(context.Background(), g.Posterior, k, fixed)
	if err != nil {
		t.Fatal(err)
	}
	if err := mcmctest.CheckMoments(res, g.Mean, sd, 6); !mcmctest.ShowsBias(err) {
		t.Errorf("Crank–Nicolson with the proposal ratio flipped is not shown biased: %v", err)
	} else {
		t.Logf("flipped ratio: %v", err)
	}
}

func TestProposalErrors(t *testing.T) {
	if _, err := exactmh.NewGaussianWalk(mat.NewSymDense(2, []float64{1, 2, 2, 1})); err == nil {
		t.Error("NewGaussianWalk accepted an indefinite covariance")
	}
	if _, err := exactmh.NewCrankNicolson([]float64{0}, mat.NewSymDense(2, []float64{1, 0, 0, 1})); err == nil {
		t.Error("NewCrankNicolson accepted a mean of the wrong length")
	}
	if _, err := exactmh.NewCrankNicolson([]float64{math.NaN(), 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1})); err == nil {
		t.Error("NewCrankNicolson accepted a NaN mean")
	}
	gw, _ := exactmh.NewGaussianWalk(mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	p := logisticPosterior() // d = 2
	wrong, _ := exactmh.NewGaussianWalk(mat.NewSymDense(3, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}))
	if _, err := exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: wrong}, &exactmh.Settings{Chains: 1, Draws: 1}); err == nil {
		t.Error("a 3-d GaussianWalk was accepted for a 2-d posterior")
	}
	if _, err := exactmh.Sample(context.Background(), p, exactmh.TunaMH{Proposal: gw}, &exactmh.Settings{Chains: 1, Draws: 10}); err != nil {
		t.Errorf("TunaMH with a GaussianWalk: %v", err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
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
	cn.Walk = 0 // every step a Crank–Nicolson move
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
	return logTransitionRho(t, to, from, mean, cov, math.Exp(-scale))
}

// logTransitionRho is logTransition at a given ρ.
func logTransitionRho(t *testing.T, to, from, mean []float64, cov *mat.SymDense, rho float64) float64 {
	t.Helper()
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

// The antithetic Crank–Nicolson move (CrankNicolson.Antithetic) uses
// ρ = −e^{−min(scale, MaxScale)} (Rho) and returns exactly
// log q(θ|θ′) − log q(θ′|θ) for its transition density
// N(θ′; μ + ρ(θ − μ), (1 − ρ²)Σ) at random pairs and scales; started in
// N(μ, Σ) its moves keep mean μ and covariance Σ and have lag-one
// cross-covariance ρΣ, negative: the anticorrelation that raises ESS of
// means. String records it. (Its exactness in a chain: the kit's row "MH
// antithetic Crank–Nicolson", TestConformance.)
func TestCrankNicolsonAntithetic(t *testing.T) {
	mean := []float64{1, -2, 0.5}
	cov := testCov()
	cn, err := exactmh.NewCrankNicolson(mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	cn.Walk, cn.Antithetic, cn.MaxScale = 0, true, math.Ln2
	rng := rand.New(rand.NewPCG(5, 6))
	theta, next := make([]float64, 3), make([]float64, 3)
	for range 200 {
		scale := math.Exp(4*rng.Float64() - 3)
		rho := cn.Rho(scale)
		if want := -math.Exp(-min(scale, math.Ln2)); math.Abs(rho-want) > 1e-15 {
			t.Fatalf("Rho(%v) = %v, want %v", scale, rho, want)
		}
		for j := range theta {
			theta[j] = mean[j] + 3*rng.NormFloat64()*math.Sqrt(cov.At(j, j))
		}
		got := cn.Propose(rng, next, theta, scale)
		want := logTransitionRho(t, theta, next, mean, cov, rho) - logTransitionRho(t, next, theta, mean, cov, rho)
		if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("scale %v: log proposal ratio %v, want %v", scale, got, want)
		}
	}
	const n = 50000
	var ch mat.Cholesky
	ch.Factorize(cov)
	var l mat.TriDense
	ch.LTo(&l)
	var sum, sq, cross [3]float64
	z := mat.NewVecDense(3, nil)
	for range n {
		for j := range 3 {
			z.SetVec(j, rng.NormFloat64())
		}
		z.MulVec(&l, z)
		for j := range 3 {
			theta[j] = mean[j] + z.AtVec(j)
		}
		cn.Propose(rng, next, theta, 5) // capped: ρ = −½
		for j := range 3 {
			sum[j] += next[j] - mean[j]
			sq[j] += (next[j] - mean[j]) * (next[j] - mean[j])
			cross[j] += (next[j] - mean[j]) * (theta[j] - mean[j])
		}
	}
	for j := range 3 {
		v := cov.At(j, j)
		sd := math.Sqrt(v / n)
		if m := sum[j] / n; math.Abs(m) > 5*sd {
			t.Errorf("θ′_%d − μ_%d: mean %.4g, want 0 ± %.2g", j, j, m, 5*sd)
		}
		if q, tol := sq[j]/n, 5*v*math.Sqrt(2.0/n); math.Abs(q-v) > tol {
			t.Errorf("coordinate %d: variance %.4g, want %.4g ± %.2g", j, q, v, tol)
		}
		// Var((θ′ − μ)(θ − μ)) = v²(1 + ρ²) for jointly Gaussian pairs.
		if c, tol := cross[j]/n, 5*v*math.Sqrt(1.25/n); math.Abs(c+v/2) > tol {
			t.Errorf("coordinate %d: lag-one covariance %.4g, want −½·%.4g ± %.2g", j, c, v, tol)
		}
	}
	if got, want := cn.String(), "CrankNicolson(d=3, walk=0, max_scale=0.6931471805599453, antithetic)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
}

// Both proposals move with the covariance they were given: the Gaussian
// walk's increments have covariance scale²Σ; Crank–Nicolson started in
// N(μ, Σ) stays there (its draws' mean and covariance are μ and Σ); the
// Crank–Nicolson proposal's random-walk steps (Walk = 1: all of them) have
// increments of covariance (2.38²/d)·Σ and log ratio 0.
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
	if cn.Walk != 0.1 {
		t.Errorf("NewCrankNicolson: Walk = %v, want 0.1", cn.Walk)
	}
	cn.Walk = 0
	walker := *cn
	walker.Walk = 1
	sumCW := mat.NewSymDense(3, nil)
	stepCW := 2.38 * 2.38 / 3
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 50000
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
		if r := walker.Propose(rng, next, theta, 0.3); r != 0 {
			t.Fatalf("Crank–Nicolson random-walk step: log ratio %v, want 0", r)
		}
		for j := range 3 {
			for k := j; k < 3; k++ {
				sumCW.SetSym(j, k, sumCW.At(j, k)+(next[j]-theta[j])*(next[k]-theta[k])/(stepCW*n))
			}
		}
	}
	for j := range 3 {
		for k := range 3 {
			tol := 0.03 * math.Sqrt(cov.At(j, j)*cov.At(k, k))
			if math.Abs(sumW.At(j, k)-cov.At(j, k)) > tol {
				t.Errorf("GaussianWalk increment cov[%d][%d] = %.4f, want %.4f", j, k, sumW.At(j, k), cov.At(j, k))
			}
			if math.Abs(sumCW.At(j, k)-cov.At(j, k)) > tol {
				t.Errorf("Crank–Nicolson walk step: increment cov[%d][%d]·d/2.38² = %.4f, want %.4f", j, k, sumCW.At(j, k), cov.At(j, k))
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
	if testing.Short() {
		t.Skip("-short: a statistical check of moments and a mutant; runs without -short")
	}
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
		cn.Walk = 0 // the Crank–Nicolson moves alone (their random-walk steps: TestCrankNicolsonWalkHeavyTail)
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
	for _, walk := range []float64{-0.1, 1.5, math.NaN()} {
		cn, err := exactmh.NewCrankNicolson([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
		if err != nil {
			t.Fatal(err)
		}
		cn.Walk = walk
		_, err = exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 1, Draws: 1})
		if err == nil || !strings.Contains(err.Error(), "Walk") {
			t.Errorf("CrankNicolson.Walk = %v: error %v, want one naming Walk", walk, err)
		}
	}
}

// tDist3 is the energy of one datum whose posterior, under a flat prior, is
// Student's t with 3 degrees of freedom: U(θ) = 2·log(1 + θ²/3). Its
// Laplace approximation, N(0, 3/4), has far lighter tails.
type tDist3 struct{}

func (tDist3) Len() int { return 1 }
func (tDist3) Dim() int { return 1 }
func (tDist3) Energies(dst, theta []float64, idx []int) {
	for k := range idx {
		dst[k] = 2 * math.Log1p(theta[0]*theta[0]/3)
	}
}

// cnMutantWalk is CrankNicolson around N(0, v) in one dimension whose
// random-walk steps (a fraction w) wrongly return the Crank–Nicolson log
// ratio log N(θ; 0, v) − log N(θ′; 0, v) instead of 0.
type cnMutantWalk struct {
	cn   *exactmh.CrankNicolson // Walk = 0
	v, w float64
}

func (m cnMutantWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if rng.Float64() < m.w {
		dst[0] = theta[0] + 2.38*math.Sqrt(m.v)*rng.NormFloat64()
		return (dst[0]*dst[0] - theta[0]*theta[0]) / (2 * m.v)
	}
	return m.cn.Propose(rng, dst, theta, scale)
}

// On a target with heavier tails than the Gaussian it is built around,
// MH with CrankNicolson's default fraction of random-walk steps has the
// target's tail probability; the Crank–Nicolson moves alone stay for
// thousands of steps where the target's ratio to the Gaussian is high (the
// chain is not geometrically ergodic), with the walk for about a hundred;
// a random-walk
// step with the wrong log ratio (a mutant) is shown biased.
func TestCrankNicolsonWalkHeavyTail(t *testing.T) {
	if testing.Short() {
		t.Skip("slow statistical check (tail probabilities of long MH runs, with a mutant): runs without -short")
	}
	post := &exactmh.Posterior{Energy: tDist3{}}
	cn, err := exactmh.NewCrankNicolson([]float64{0}, mat.NewSymDense(1, []float64{0.75}))
	if err != nil {
		t.Fatal(err)
	}
	const t975 = 3.182446305284263 // P(|θ| > t975) = 0.05 for t with 3 degrees of freedom
	// run returns the tail indicator's summary and the longest stay.
	run := func(p exactmh.Proposal) (exactmh.ParamSummary, int) {
		t.Helper()
		set := &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 100000, Seed: 5}
		res, err := exactmh.Sample(context.Background(), post, exactmh.MH{Proposal: p, Scale: 1}, set)
		if err != nil {
			t.Fatal(err)
		}
		x := make([][]float64, len(res.Chains))
		longest := 0
		for c, ch := range res.Chains {
			stay := 0
			for k := range ch.Len() {
				theta := res.Draw(c, k)[0]
				if k > 0 && theta == res.Draw(c, k-1)[0] {
					stay++
					longest = max(longest, stay)
				} else {
					stay = 1
				}
				in := 0.0
				if math.Abs(theta) > t975 {
					in = 1
				}
				x[c] = append(x[c], in)
			}
		}
		return exactmh.SummarizeParam("|θ| > t975", x, 1), longest
	}
	mixed, mixedStay := run(cn)
	t.Logf("Walk = %v: P(|θ| > t975) = %.4f ± %.4f (want 0.05), bulk ESS %.0f, longest stay %d", cn.Walk, mixed.Mean, mixed.MCSE, mixed.ESSBulk, mixedStay)
	if math.Abs(mixed.Mean-0.05) > 4*mixed.MCSE {
		t.Errorf("Walk = %v: P(|θ| > t975) = %.4f ± %.4f, want 0.05", cn.Walk, mixed.Mean, mixed.MCSE)
	}
	pure := *cn
	pure.Walk = 0
	alone, aloneStay := run(&pure)
	t.Logf("Walk = 0: P(|θ| > t975) = %.4f ± %.4f, bulk ESS %.0f, longest stay %d", alone.Mean, alone.MCSE, alone.ESSBulk, aloneStay)
	// Over seeds 1–7 the longest stays were 85–129 steps with the walk and
	// 642–14,355 without.
	if !(aloneStay > 4*mixedStay) {
		t.Errorf("longest stay %d steps with Walk = %v and %d without: want the Crank–Nicolson moves alone to stay at least 4× longer", mixedStay, cn.Walk, aloneStay)
	}
	bad, _ := run(cnMutantWalk{&pure, 0.75, 0.1})
	t.Logf("mutant: P(|θ| > t975) = %.4f ± %.4f", bad.Mean, bad.MCSE)
	// The mutant's walk targets π/N(0, v), which is not integrable: its
	// chains leave for good (the indicator is then constant, MCSE NaN).
	if biased := bad.Mean > 0.5 || math.Abs(bad.Mean-0.05) > 6*bad.MCSE; !biased {
		t.Errorf("random-walk steps with the Crank–Nicolson log ratio are not shown biased: P(|θ| > t975) = %.4f ± %.4f", bad.Mean, bad.MCSE)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// mlCorr is a multilevel logistic regression with correlated random
// effects for GroupGibbs's kit: an intercept and q − 1 covariates x1, …
// with β ~ N(0, 1), one factor of G groups (group 0 holding about half
// the data) with a random intercept and a random slope on each covariate,
// u_g ~ N(0, diag(τ)·Ω·diag(τ)), τ_k ~ half-normal(1), Ω ~ LKJ(η): every
// parameter unknown. θ = (β, u_0, …, u_{G−1}, log τ, y) with y Stan's
// unconstrained correlation coordinates. With trials the response is
// binomial instead: k_i successes of n_i trials, n_i uniform on 1…10,
// logit link (BinomialFamily, the trials as weights, as mlBinomKit in
// package model).
type mlCorr struct {
	n, groups, q int
	eta          float64
	trials       bool
	// probit: Bernoulli rows with the probit link (Φ) instead of the
	// logit (not with trials).
	probit bool
	// ignoreTrials (a mutant, with trials) drops the weights: each row
	// one trial with response k_i/n_i.
	ignoreTrials bool
	// dropLKJJacobian builds the posterior without the LKJ transform's
	// log Jacobian (lkjJacobianDropped).
	dropLKJJacobian bool
}

func (m mlCorr) nCor() int { return m.q * (m.q - 1) / 2 }
func (m mlCorr) dim() int  { return m.q + m.groups*m.q + m.q + m.nCor() }

// build returns the posterior for data drawn at θ.
func (m mlCorr) build(rng *rand.Rand, theta []float64) (*exactmh.Posterior, error) {
	q := m.q
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, m.n), Intercept: true,
		FixedSD: make([]float64, q)}
	if m.trials {
		ml.Family = model.BinomialFamily{Link: model.LogisticFamily{}}
		ml.Weights = make([]float64, m.n)
	}
	if m.probit {
		ml.Family = model.ProbitFamily{}
	}
	f := model.Factor{Name: "g", Index: make([]int32, m.n), Tau: model.HalfNormal(1), Correlated: true, LKJ: m.eta}
	for k := 1; k < q; k++ {
		c := model.Covariate{Name: "x" + strconv.Itoa(k), Values: make([]float64, m.n)}
		ml.Fixed = append(ml.Fixed, c)
		f.Slopes = append(f.Slopes, c)
	}
	for k := range ml.FixedSD {
		ml.FixedSD[k] = 1
	}
	for i := range m.n {
		g := i % m.groups
		if i >= m.n/2 && rng.IntN(2) == 0 {
			g = 0
		}
		f.Index[i] = int32(g)
		z := theta[0] + theta[q+g*q]
		for k := 1; k < q; k++ {
			x := rng.NormFloat64()
			f.Slopes[k-1].Values[i] = x
			z += (theta[k] + theta[q+g*q+k]) * x
		}
		if m.probit {
			if rng.Float64() < 0.5*math.Erfc(-z/math.Sqrt2) {
				ml.Y[i] = 1
			}
			continue
		}
		if !m.trials {
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				ml.Y[i] = 1
			}
			continue
		}
		tr, k := 1+rng.IntN(10), 0
		for range tr {
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				k++
			}
		}
		ml.Y[i], ml.Weights[i] = float64(k)/float64(tr), float64(tr)
	}
	if m.ignoreTrials {
		ml.Weights = nil
	}
	ml.Factors = []model.Factor{f}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, err
	}
	if m.dropLKJJacobian {
		p.Prior = lkjJacobianDropped{p.Prior.(*model.MultilevelPrior), m.q, m.dim() - m.nCor()}
	}
	return p, nil
}

// truth draws θ from the prior: LKJ(η) by its canonical partial
// correlations, independent with z_ij ~ 2·Beta(α_j, α_j) − 1, α_j = η +
// (q − 2 − j)/2 (Lewandowski, Kurowicka and Joe 2009, the C-vine), L by
// Stan's transform of them and u_g = D·L·ε.
func (m mlCorr) truth(rng *rand.Rand) []float64 {
	q, d := m.q, m.dim()
	theta := make([]float64, d)
	for k := range q {
		theta[k] = rng.NormFloat64()
	}
	tau := make([]float64, q)
	lt := q + m.groups*q
	for k := range tau {
		tau[k] = math.Abs(rng.NormFloat64())
		theta[lt+k] = math.Log(tau[k])
	}
	l := make([]float64, q*q)
	l[0] = 1
	c := lt + q
	for i := 1; i < q; i++ {
		rest := 1.0
		for j := range i {
			a := m.eta + float64(q-2-j)/2
			z := 2*betaDraw(rng, a) - 1
			theta[c] = math.Atanh(z)
			c++
			l[i*q+j] = z * math.Sqrt(rest)
			rest -= l[i*q+j] * l[i*q+j]
		}
		l[i*q+i] = math.Sqrt(rest)
	}
	eps := make([]float64, q)
	for g := range m.groups {
		for k := range eps {
			eps[k] = rng.NormFloat64()
		}
		for i := range q {
			var s float64
			for j := 0; j <= i; j++ {
				s += l[i*q+j] * eps[j]
			}
			theta[q+g*q+i] = tau[i] * s
		}
	}
	return theta
}

// betaDraw draws Beta(a, a) as X/(X + Y), X, Y ~ Gamma(a, 1).
func betaDraw(rng *rand.Rand, a float64) float64 {
	x, y := gammaDraw(rng, a), gammaDraw(rng, a)
	return x / (x + y)
}

// gammaDraw draws Gamma(a, 1) (Marsaglia and Tsang 2000; a < 1 by
// Gamma(a + 1)·U^{1/a}).
func gammaDraw(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		return gammaDraw(rng, a+1) * math.Pow(rng.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if math.Log(u) < x*x/2+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// Draw implements mcmctest.Model.
func (m mlCorr) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta := m.truth(rng)
	p, err := m.build(rng, theta)
	if err != nil {
		return nil, mcmctest.Problem{}, err
	}
	pb, err := pilotProblem(p, rng.Uint64())
	return theta, pb, err
}

// lkjJacobianDropped is a MultilevelPrior with q ≤ 3 correlated effects
// whose y (from θ[cor]) lack the LKJ transform's log Jacobian Σ log(1 −
// z_ij²) + ½·log(1 − z_20²) (q = 3): the mutant "LKJ Jacobian dropped".
type lkjJacobianDropped struct {
	*model.MultilevelPrior
	q, cor int
}

func (p lkjJacobianDropped) LogPrior(theta []float64) float64 {
	s := p.MultilevelPrior.LogPrior(theta)
	y := theta[p.cor:]
	for _, v := range y {
		z := math.Tanh(v)
		s -= math.Log1p(-z * z)
	}
	if p.q == 3 {
		z := math.Tanh(y[1])
		s -= math.Log1p(-z*z) / 2
	}
	return s
}

func (p lkjJacobianDropped) AddLogPriorGradient(grad, theta []float64) {
	p.MultilevelPrior.AddLogPriorGradient(grad, theta)
	for k, v := range theta[p.cor:] {
		grad[p.cor+k] += 2 * math.Tanh(v)
	}
	if p.q == 3 {
		grad[p.cor+1] += math.Tanh(theta[p.cor+1])
	}
}

// TestGroupGibbsCorrelated compares GroupGibbs's posterior means and
// standard deviations on correlated random effects (q = 2: N = 600, 12
// groups; q = 3: N = 900, 10 groups; η = 1 and 2; and q = 2 binomial with
// 1–10 trials per row, N = 400, 10 groups, η = 1) with full-batch
// non-centred NUTS's — every mean within 4.5 combined Monte Carlo
// standard errors, every SD ratio in [0.85, 1.18] ([0.7, 1.4] for the
// log scales) — and checks that each mutant is caught (some |z| > 6 or SD
// ratio outside [0.7, 1.4]): the blocks' proposals with Σ⁻¹ replaced by
// the diagonal diag(τ⁻²); the posterior without the LKJ transform's
// Jacobian (Bernoulli rows; the binomial row shares that prior); and, on
// the binomial row, the trials ignored.
func TestGroupGibbsCorrelated(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and GroupGibbs runs of 4 chains")
	}
	for _, kit := range []mlCorr{{n: 600, groups: 12, q: 2, eta: 1}, {n: 900, groups: 10, q: 3, eta: 2},
		{n: 400, groups: 10, q: 2, eta: 1, trials: true}} {
		name := "q=" + strconv.Itoa(kit.q)
		if kit.trials {
			name += "_binomial"
		}
		t.Run(name, func(t *testing.T) { testGroupGibbsCorrelated(t, name, kit) })
	}
}

// testGroupGibbsCorrelated is TestGroupGibbsCorrelated on one kit.
func testGroupGibbsCorrelated(t *testing.T, name string, kit mlCorr) {
	rng := rand.New(rand.NewPCG(uint64(kit.q), 9))
	theta := kit.truth(rng)
	p, err := kit.build(rng, theta)
	if err != nil {
		t.Fatal(err)
	}
	rs, mode, sd := nutsReferenceNonCentred(t, p, 300, 750)
	pb := mcmctest.Problem{Posterior: p, Mode: mode, SD: sd}
	z, zn, lr, ln, res := gibbsMoments(t, p, gibbsKernel(pb, 0), rs, mode, 3000)
	t.Logf("%s: GroupGibbs: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); data per sweep %.1f of N = %d, min bulk ESS %.0f",
		name, z, zn, lr, ln, res.Sampling().MeanBatch(), p.Len(), minESS(res.Summary()))
	if math.Abs(z) > 4.5 || lr > math.Log(1.18) {
		t.Errorf("%s: GroupGibbs disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", name, z, zn, lr, ln)
	}
	// The binomial row's data (5.5 trials a row) outweigh the prior more
	// than Bernoulli rows do, so its diagonal mutant's bias is smaller and
	// is measured on twice the draws.
	mutDraws := 2000
	if kit.trials {
		mutDraws = 4000
	}
	z, zn, lr, ln, _ = gibbsMoments(t, p, multilevel.GroupGibbsCorrDiagonal(gibbsKernel(pb, 0)), rs, mode, mutDraws)
	reportMutant(t, name, "Σ⁻¹ replaced by the diagonal", math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
	// mutant rebuilds the kit's posterior, the same θ and data, as mut.
	mutant := func(mut mlCorr) *exactmh.Posterior {
		rd := rand.New(rand.NewPCG(uint64(kit.q), 9))
		pd, err := mut.build(rd, mut.truth(rd))
		if err != nil {
			t.Fatal(err)
		}
		if pd.Len() != p.Len() || pd.Names[len(pd.Names)-1] != p.Names[len(p.Names)-1] {
			t.Fatal("the mutant's model differs")
		}
		return pd
	}
	if kit.trials {
		ign := kit
		ign.ignoreTrials = true
		z, zn, lr, ln, _ = gibbsMoments(t, mutant(ign), gibbsKernel(pb, 0), rs, mode, 2000)
		reportMutant(t, name, "trials ignored", math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
		return
	}
	drop := kit
	drop.dropLKJJacobian = true
	pd := mutant(drop)
	// Without the Jacobian the posterior of y is improper for η = 1
	// (flat in y's tails): the chain drifts to |y| where tanh rounds to
	// ±1 and Σ is singular, and the run fails — caught as surely as a
	// moment off.
	if _, err := exactmh.Sample(context.Background(), pd, gibbsKernel(pb, 0),
		&exactmh.Settings{Chains: 4, Warmup: 200, Draws: 2000, Seed: 2, Init: mode}); err != nil {
		t.Logf("%s: mutant %q caught: the run fails: %.200s", name, "LKJ Jacobian dropped", err)
		return
	}
	z, zn, lr, ln, _ = gibbsMoments(t, pd, gibbsKernel(pb, 0), rs, mode, 2000)
	reportMutant(t, name, "LKJ Jacobian dropped", math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
}

// TestGroupGibbsCorrelatedSBC runs simulation-based calibration of
// GroupGibbs with every parameter unknown (β, u, log τ, the correlation
// coordinates) on correlated random effects: q = 2 (N = 200, 6 groups,
// η = 1), q = 3 (N = 300, 6 groups, η = 2) and q = 2 binomial with 1–10
// trials per row (N = 150, 6 groups, η = 1), 100 replicates each, ranks
// uniform at level 10⁻³. The replicates' Ω are drawn by the C-vine
// (mlCorr.truth), independently of the model's density.
func TestGroupGibbsCorrelatedSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 100 replicates, each with a NUTS pilot")
	}
	t.Run("q=2", func(t *testing.T) { gibbsSBC(t, mlCorr{n: 200, groups: 6, q: 2, eta: 1}, 0, 11) })
	t.Run("q=3", func(t *testing.T) { gibbsSBC(t, mlCorr{n: 300, groups: 6, q: 3, eta: 2}, 0, 12) })
	t.Run("q=2_binomial", func(t *testing.T) {
		gibbsSBC(t, mlCorr{n: 150, groups: 6, q: 2, eta: 1, trials: true}, 0, 13)
	})
}

// TestGroupGibbsCorrelatedStructural runs the kit's structural checks on
// GroupGibbs with correlated effects (q = 3, and q = 2 binomial with
// trials, the weighted energy): no allocation per sweep, Info's counts,
// checkpoint and resume, results independent of the number of workers;
// and Start's refusal of a prior whose correlated effects are not the
// N(0, Σ) its EffectPrecision says.
func TestGroupGibbsCorrelatedStructural(t *testing.T) {
	for _, kit := range []mlCorr{{n: 300, groups: 6, q: 3, eta: 1}, {n: 200, groups: 6, q: 2, eta: 1, trials: true}} {
		rng := rand.New(rand.NewPCG(21, 22))
		p, err := kit.build(rng, kit.truth(rng))
		if err != nil {
			t.Fatal(err)
		}
		pb, err := pilotProblem(p, 3)
		if err != nil {
			t.Fatal(err)
		}
		k := gibbsKernel(pb, 0)
		name := "GroupGibbs on correlated effects, q = " + strconv.Itoa(kit.q)
		if kit.trials {
			name += ", binomial"
		}
		checkStructural(t, name, k, p, pb.Mode, 500)
		if kit.trials {
			continue
		}
		wrong := *p
		wrong.Prior = wrongPrecision{p.Prior.(*model.MultilevelPrior)}
		if _, err := exactmh.Sample(context.Background(), &wrong, k, &exactmh.Settings{Chains: 1, Draws: 1, Init: pb.Mode}); err == nil || !strings.Contains(err.Error(), "not N(0, Σ)") {
			t.Errorf("a prior whose EffectPrecision is not its density's: error %v, want one saying the prior is not N(0, Σ)", err)
		}
	}
}

// wrongPrecision is a MultilevelPrior whose EffectPrecision reports
// diag(τ⁻²), not its density's Σ⁻¹.
type wrongPrecision struct{ *model.MultilevelPrior }

func (p wrongPrecision) EffectPrecision(c int, theta, prec []float64) bool {
	if !p.MultilevelPrior.EffectPrecision(c, theta, prec) {
		return false
	}
	terms, _ := p.Correlated(c)
	q := len(terms)
	for a := range q {
		_, _, _, _, _, lt := p.Term(terms[a])
		for b := range q {
			prec[a*q+b] = 0
		}
		prec[a*q+a] = math.Exp(-2 * theta[lt])
	}
	return true
}

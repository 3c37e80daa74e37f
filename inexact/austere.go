// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/exactmh/exactmh"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// AustereMH is the approximate MH test of Korattikara, Chen and Welling
// (2014), "Austerity in MCMC land". It is INEXACT: its chain converges to a
// distribution that differs from the posterior, by an amount that depends
// on ε and the problem and that does not vanish with longer runs (TunaMH
// paper §2.1, Fig. 1: on the App. J.1 walk its bias grows with the number of
// states). It is here so that its cost and bias can be measured against the
// exact kernels.
//
// MH accepts θ′ iff the mean log-likelihood ratio l̄ = (1/N)Σ_i l_i,
// l_i = βU_i(θ) − βU_i(θ′), exceeds μ0 = (1/N)·log[u·prior(θ)q(θ′|θ)/
// (prior(θ′)q(θ|θ′))]. AustereMH estimates l̄ from data drawn without
// replacement, m at a time, and stops as soon as a one-sided Student-t test
// is confident: with the sample standard deviation s_l (divisor n − 1) and
// the finite-population factor, s = s_l/√n·√(1 − (n−1)/(N−1)),
// t = |l̄ − μ0|/s and δ = 1 − F_{n−1}(t); it decides when δ < ε, or with all
// N data (then exactly). Info.Batch is the number of data used.
type AustereMH struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal exactmh.Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// Epsilon is the single-test error level ε (0: 0.01, as in the TunaMH
	// paper's App. J.1).
	Epsilon float64
	// BatchSize is m, the data added per test (0: 30, as there; capped
	// at N).
	BatchSize int
}

// Name returns "AustereMH".
func (AustereMH) Name() string { return "AustereMH" }

// Exact returns false: the sequential test makes errors that bias the chain.
func (AustereMH) Exact() bool { return false }

// Start validates the test's parameters.
func (k AustereMH) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	w, err := exactmh.NewWalk("AustereMH", t, k.Proposal, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	eps := k.Epsilon
	if eps == 0 {
		eps = 0.01
	}
	if !(eps > 0 && eps < 0.5) {
		return nil, fmt.Errorf("AustereMH: Epsilon = %v, want in (0, 0.5)", k.Epsilon)
	}
	m := k.BatchSize
	if m == 0 {
		m = 30
	}
	if m < 2 {
		return nil, fmt.Errorf("AustereMH: BatchSize = %d, want ≥ 2 (0: 30)", k.BatchSize)
	}
	n := t.N()
	m = min(m, n)
	c := &austereChain{Walk: w, t: t, theta: w.Position(), next: w.Next(), eps: eps, m: m, perm: identity(n), crit: make([]float64, (n+m-1)/m+1)}
	for j := range c.crit {
		c.crit[j] = math.NaN()
	}
	return c, nil
}

type austereChain struct {
	*exactmh.Walk
	t           *exactmh.Target
	theta, next []float64 // θ and θ′, the Walk's
	eps         float64
	m           int
	perm        []int     // the data, partially shuffled as they are drawn
	crit        []float64 // the critical t value of the j-th test (lazily)
	diff        [chunk]float64
}

// Params reports ε and m.
func (c *austereChain) Params() map[string]float64 {
	return map[string]float64{"epsilon": c.eps, "m": float64(c.m)}
}

// Step makes one AustereMH transition.
func (c *austereChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	info := exactmh.Info{AcceptProb: math.NaN(), LogDensity: math.NaN()}
	if _, ok := c.Propose(rng); !ok {
		info.AcceptProb = 0
		return info, nil
	}
	// The test of (1/N)Σ l_i > μ0 replaces the MH decision.
	logU := math.Log(rng.Float64())
	logPriorNext, logPrior, logQ := c.Parts()
	accept, n, err := c.test(rng, logU-(logPriorNext-logPrior)-logQ)
	if err != nil {
		return exactmh.Info{}, err
	}
	info.Batch, info.Distinct = n, n
	if accept {
		copy(c.theta, c.next)
		info.Accepted = true
	}
	return info, nil
}

// test runs the sequential test of l̄ > μ0 = threshold/N and returns the
// decision and the number of data used.
func (c *austereChain) test(rng *rand.Rand, threshold float64) (bool, int, error) {
	bigN := len(c.perm)
	mu0 := threshold / float64(bigN)
	// Welford running mean and sum of squared deviations of the l_i.
	var n int
	var mean, m2 float64
	for j := 0; ; j++ {
		// Draw the next m data without replacement.
		hi := min(n+c.m, bigN)
		shuffleRange(rng, c.perm, n, hi)
		for lo := n; lo < hi; lo += chunk {
			top := min(lo+chunk, hi)
			if err := c.t.EnergyDiffs(c.diff[:top-lo], c.theta, c.next, c.perm[lo:top]); err != nil {
				return false, 0, err
			}
			for _, l := range c.diff[:top-lo] { // l_i = βU_i(θ) − βU_i(θ′)
				n++
				d := l - mean
				mean += d / float64(n)
				m2 += d * (l - mean)
			}
		}
		if n == bigN {
			return mean > mu0, n, nil // all the data: the exact decision
		}
		sl := math.Sqrt(m2 / float64(n-1))
		s := sl / math.Sqrt(float64(n)) * math.Sqrt(1-float64(n-1)/float64(bigN-1))
		t := math.Abs(mean-mu0) / s
		if t > c.critical(j, n) { // δ = 1 − F_{n−1}(t) < ε
			return mean > mu0, n, nil
		}
	}
}

// critical returns the t value with 1 − F_{n−1}(t) = ε for the j-th test,
// computed once.
func (c *austereChain) critical(j, n int) float64 {
	if v := c.crit[j]; !math.IsNaN(v) {
		return v
	}
	v := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - c.eps)
	c.crit[j] = v
	return v
}

// TestError returns, for AustereMH's sequential test, the
// probability of a wrong decision and the expected fraction of the data
// read (Appendix A of the austerity paper, eqs. 18–19),
// for the standardised mean μ_std = (μ − μ0)√(N−1)/σ_l, first-batch
// fraction π1 = m/N and single-test level ε. It follows the appendix's
// model — the test statistics form a Gaussian random walk (Prop. 2) and
// each test compares |z_j| with G = Φ⁻¹(1 − ε) — and integrates it by
// dynamic programming on a grid of L = 400 points in [−G, G], O(L²J) for
// J = ⌈1/π1⌉ tests. The last test, with all the data, is exact. At
// μ_std = 0 the error is (1 − P(all data read))/2, the worst case.
func (AustereMH) TestError(muStd, pi1, eps float64) (errProb, dataFraction float64, err error) {
	if math.IsNaN(muStd) || math.IsInf(muStd, 0) {
		return 0, 0, fmt.Errorf("inexact: AustereMH.TestError: μ_std = %v, want finite", muStd)
	}
	if !(pi1 > 0 && pi1 <= 1) || !(eps > 0 && eps < 0.5) {
		return 0, 0, fmt.Errorf("inexact: AustereMH.TestError: π1 = %v, ε = %v, want π1 in (0, 1] and ε in (0, 0.5)", pi1, eps)
	}
	jMax := int(math.Ceil(1/pi1 - 1e-12))
	if jMax > 100000 {
		return 0, 0, fmt.Errorf("inexact: AustereMH.TestError: π1 = %v means %d tests, want at most 10⁵", pi1, jMax)
	}
	if jMax == 1 {
		return 0, 1, nil // one test with all the data: exact
	}
	g := distuv.UnitNormal.Quantile(1 - eps)
	const L = 400
	h := 2 * g / float64(L)
	z := make([]float64, L) // cell midpoints in [−G, G]
	for k := range z {
		z[k] = -g + (float64(k)+0.5)*h
	}
	pi := func(j int) float64 { return math.Min(1, float64(j)*pi1) }
	// A wrong decision crosses the bound on the side opposite to μ − μ0.
	wrongLow := muStd >= 0
	mass := make([]float64, L) // P(z_j in cell k, not yet stopped)
	next := make([]float64, L)
	// The first test: z_1 ~ N(μ_std√(π1/(1 − π1)), 1).
	m1 := muStd * math.Sqrt(pi1/(1-pi1))
	lo, hi := distuv.UnitNormal.CDF(-g-m1), 1-distuv.UnitNormal.CDF(g-m1)
	if wrongLow {
		errProb = lo
	} else {
		errProb = hi
	}
	dataFraction = pi1 * (lo + hi)
	for k := range z {
		mass[k] = distuv.UnitNormal.CDF(z[k]+h/2-m1) - distuv.UnitNormal.CDF(z[k]-h/2-m1)
	}
	for j := 2; j < jMax; j++ {
		pj, pp := pi(j), pi(j-1)
		sd := math.Sqrt((pj - pp) / (pj * (1 - pp)))
		drift := muStd * (pj - pp) / ((1 - pp) * math.Sqrt(pj*(1-pj)))
		rho := math.Sqrt(pp / pj * (1 - pj) / (1 - pp))
		clear(next)
		var below, above float64
		for k, w := range mass {
			if w == 0 {
				continue
			}
			mean := drift + rho*z[k]
			below += w * distuv.UnitNormal.CDF((-g-mean)/sd)
			above += w * (1 - distuv.UnitNormal.CDF((g-mean)/sd))
			for l := range next {
				a := (z[l] - h/2 - mean) / sd
				b := (z[l] + h/2 - mean) / sd
				next[l] += w * (distuv.UnitNormal.CDF(b) - distuv.UnitNormal.CDF(a))
			}
		}
		if wrongLow {
			errProb += below
		} else {
			errProb += above
		}
		dataFraction += pj * (below + above)
		mass, next = next, mass
	}
	var rest float64
	for _, w := range mass {
		rest += w
	}
	return errProb, dataFraction + rest, nil // the rest reads all the data
}

// MarshalState saves the permutation the minibatches are drawn from.
func (c *austereChain) MarshalState() ([]byte, error) { return chainstate.Encode(c.perm) }

// UnmarshalState restores it.
func (c *austereChain) UnmarshalState(b []byte) error { return chainstate.RestorePerm(b, c.perm) }

// The contracts this file's kernel and chain satisfy.
var (
	_ exactmh.Kernel        = AustereMH{}
	_ driverChain           = (*austereChain)(nil)
	_ exactmh.ParamReporter = (*austereChain)(nil)
)

// The capabilities AustereMH declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k AustereMH) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k AustereMH) WithScale(s float64) exactmh.Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k AustereMH) Proposer() exactmh.Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k AustereMH) WithProposal(p exactmh.Proposal) exactmh.Kernel {
	k.Proposal = p
	return k
}

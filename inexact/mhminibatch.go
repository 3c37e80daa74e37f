// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// MHminibatch is the minibatch acceptance test of Seita, Pan, Chen and
// Canny (2017), "An efficient minibatch acceptance test for
// Metropolis-Hastings" — the MHminibatch baseline of the TunaMH paper's
// Fig. 1 and Fig. 5. It is INEXACT: on the TunaMH paper's App. J.1 walk its
// chain's law differs from the target by an amount that grows with the
// number of states (mhminibatch_test.go shows the up and down acceptance
// rates differ where detailed balance needs them equal), and no run length
// removes that.
//
// Barker's test accepts θ′ iff Δ + X_log > 0, X_log ~ Logistic(0, 1),
// Δ = Σ_i l_i + log[p(θ′)q(θ|θ′)/(p(θ)q(θ′|θ))], l_i = βU_i(θ) − βU_i(θ′).
// MHminibatch estimates Δ from m data drawn without replacement,
// Δ* = mean_b(N·l_i) + (prior and proposal part), with variance
// s² = var_b(N·l_i)/b, and writes X_log ≈ X_nc + X_corr: when s² < σ² = 1
// it draws X_nc ~ N(0, 1 − s²) and X_corr from the correction
// distribution C (N(0, 1) convolved with C is close to the logistic; C is
// fitted once, by regularised least squares on a grid as in the authors'
// code) and accepts iff Δ* + X_nc + X_corr > 0, treating the minibatch
// noise of Δ* as exactly N(0, s²). Otherwise it adds m more data and
// repeats. As in the authors' experiment code (not in the paper's
// Algorithm 1, whose Berry–Esseen stopping rule the code does not
// implement either), it decides by the sign of Δ* alone once |Δ*|/s >
// Delta; this implementation reads Delta = 5 as the "δ = 5" of the TunaMH
// paper's App. J.1 (its δ has no other meaning in Seita et al.'s code).
// With all N data read Δ* is exact and the test is Barker's, exactly.
//
// Info.Batch is the number of data read; Info.AcceptProb is the logistic
// 1/(1 + e^{−Δ*}) of the estimate (0 or 1 when the sign decides).
type MHminibatch struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal exactmh.Proposal
	// Scale is the initial step scale (0: 0.1).
	Scale float64
	// BatchSize is m, the data added per round (0: 30, the TunaMH paper's
	// App. J.1; capped at N; at least 2).
	BatchSize int
	// Delta is the |Δ*|/s beyond which the sign of Δ* decides (0: 5).
	Delta float64
}

// Name returns "MHminibatch".
func (MHminibatch) Name() string { return "MHminibatch" }

// Exact returns false: the test's Gaussian approximation of the minibatch
// noise (and the fitted correction) bias the chain.
func (MHminibatch) Exact() bool { return false }

// Start validates the test's parameters.
func (k MHminibatch) Start(t *exactmh.Target, theta0 []float64) (exactmh.Chain, error) {
	w, err := exactmh.NewWalk("MHminibatch", t, k.Proposal, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	m := k.BatchSize
	if m == 0 {
		m = 30
	}
	if m < 2 {
		return nil, fmt.Errorf("MHminibatch: BatchSize = %d, want ≥ 2 (0: 30)", k.BatchSize)
	}
	delta := k.Delta
	if delta == 0 {
		delta = 5
	}
	if !(delta > 0) {
		return nil, fmt.Errorf("MHminibatch: Delta = %v, want > 0 (0: 5)", k.Delta)
	}
	corr, err := barkerCorrection()
	if err != nil {
		return nil, fmt.Errorf("MHminibatch: %w", err)
	}
	n := t.N()
	return &mhmbChain{Walk: w, t: t, theta: w.Position(), next: w.Next(), m: min(m, n), delta: delta, perm: identity(n), corr: corr}, nil
}

type mhmbChain struct {
	*exactmh.Walk
	t           *exactmh.Target
	theta, next []float64 // θ and θ′, the Walk's
	m           int
	delta       float64
	perm        []int // the data, partially shuffled as they are drawn
	corr        *correction
	diff        [chunk]float64
}

// MarshalState saves the permutation the minibatches are drawn from.
func (c *mhmbChain) MarshalState() ([]byte, error) { return chainstate.Encode(c.perm) }

// UnmarshalState restores it.
func (c *mhmbChain) UnmarshalState(b []byte) error { return chainstate.RestorePerm(b, c.perm) }

// Params reports m and Delta.
func (c *mhmbChain) Params() map[string]float64 {
	return map[string]float64{"m": float64(c.m), "delta": c.delta}
}

// Step makes one MHminibatch transition.
func (c *mhmbChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	info := exactmh.Info{AcceptProb: 0, LogDensity: math.NaN()}
	logExact, ok := c.Propose(rng)
	if !ok {
		return info, nil
	}
	bigN := len(c.perm)
	fn := float64(bigN)
	var n int
	var mean, m2 float64 // Welford over Λ_i = N·l_i
	for {
		hi := min(n+c.m, bigN)
		shuffleRange(rng, c.perm, n, hi)
		for lo := n; lo < hi; lo += chunk {
			top := min(lo+chunk, hi)
			if err := c.t.EnergyDiffs(c.diff[:top-lo], c.theta, c.next, c.perm[lo:top]); err != nil {
				return exactmh.Info{}, err
			}
			for _, l := range c.diff[:top-lo] {
				n++
				v := fn * l
				d := v - mean
				mean += d / float64(n)
				m2 += d * (v - mean)
			}
		}
		info.Batch, info.Distinct = n, n
		est := mean + logExact // Δ*
		if n == bigN {
			// Barker's test on the exact Δ.
			u := rng.Float64()
			info.AcceptProb = logistic(est)
			return c.decide(est+math.Log(u)-math.Log1p(-u) > 0, info), nil
		}
		s2 := m2 / float64(n-1) / float64(n)
		if s := math.Sqrt(s2); s > 0 && math.Abs(est) > c.delta*s {
			if est > 0 {
				info.AcceptProb = 1
			}
			return c.decide(est > 0, info), nil
		}
		if s2 < 1 {
			x := est + math.Sqrt(1-s2)*rng.NormFloat64() + c.corr.draw(rng)
			info.AcceptProb = logistic(est)
			return c.decide(x > 0, info), nil
		}
	}
}

func (c *mhmbChain) decide(accept bool, info exactmh.Info) exactmh.Info {
	if accept {
		copy(c.theta, c.next)
		info.Accepted = true
	}
	// The logistic of a decided estimate is in (0, 1): keep Info honest
	// where it rounds to 0 or 1.
	switch {
	case info.Accepted && info.AcceptProb == 0:
		info.AcceptProb = math.SmallestNonzeroFloat64
	case !info.Accepted && info.AcceptProb == 1:
		info.AcceptProb = 1 - 1e-16
	}
	return info
}

// logistic returns 1/(1 + e^{−x}).
func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// correction is a distribution C on a grid whose convolution with N(0, 1)
// approximates the standard logistic: a piecewise-uniform density on the
// cells [y_j − h/2, y_j + h/2] with masses w_j.
type correction struct {
	y   []float64 // cell centres
	cum []float64 // cumulative masses, cum[len−1] = 1
	h   float64
}

// draw returns a draw from C.
func (c *correction) draw(rng *rand.Rand) float64 {
	u := rng.Float64()
	j := sort.SearchFloat64s(c.cum, u)
	j = min(j, len(c.cum)-1)
	return c.y[j] + c.h*(rng.Float64()-0.5)
}

var (
	barkerCorrOnce sync.Once
	barkerCorr     *correction
	barkerCorrErr  error
)

// barkerCorrection returns the correction distribution for σ = 1, fitted
// on first use.
func barkerCorrection() (*correction, error) {
	barkerCorrOnce.Do(func() { barkerCorr, barkerCorrErr = fitCorrection(1, 0.05, 10, 20, 0.1) })
	return barkerCorr, barkerCorrErr
}

// fitCorrection fits the masses w_j ≥ 0 of C on the grid y_j = j·h,
// |y_j| ≤ yMax, so that Σ_j w_j Φ((x_i − y_j)/σ) ≈ 1/(1 + e^{−x_i}) on
// x_i = i·h, |x_i| ≤ xMax: ridge least squares (MᵀM + λI)w = Mᵀv, as
// Seita et al.'s genNormToLog script does, then negative masses set to 0
// and the rest normalised.
func fitCorrection(sigma, h, yMax, xMax, lambda float64) (*correction, error) {
	ny, nx := 2*int(math.Round(yMax/h))+1, 2*int(math.Round(xMax/h))+1
	y := make([]float64, ny)
	for j := range y {
		y[j] = (float64(j) - float64(ny/2)) * h
	}
	m := mat.NewDense(nx, ny, nil)
	v := mat.NewVecDense(nx, nil)
	for i := range nx {
		x := (float64(i) - float64(nx/2)) * h
		v.SetVec(i, logistic(x))
		for j, yj := range y {
			m.Set(i, j, 0.5*math.Erfc(-(x-yj)/(sigma*math.Sqrt2)))
		}
	}
	a := mat.NewSymDense(ny, nil)
	a.SymOuterK(1, m.T())
	for j := range ny {
		a.SetSym(j, j, a.At(j, j)+lambda)
	}
	var rhs, w mat.VecDense
	rhs.MulVec(m.T(), v)
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return nil, errors.New("the correction fit's normal equations are not positive definite")
	}
	if err := ch.SolveVecTo(&w, &rhs); err != nil {
		return nil, fmt.Errorf("correction fit: %w", err)
	}
	cum := make([]float64, ny)
	var s float64
	for j := range ny {
		s += max(w.AtVec(j), 0)
		cum[j] = s
	}
	for j := range cum {
		cum[j] /= s
	}
	return &correction{y: y, cum: cum, h: h}, nil
}

// The contracts this file's kernel and chain satisfy.
var (
	_ exactmh.Kernel        = MHminibatch{}
	_ driverChain           = (*mhmbChain)(nil)
	_ exactmh.ParamReporter = (*mhmbChain)(nil)
)

// The capabilities MHminibatch declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k MHminibatch) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k MHminibatch) WithScale(s float64) exactmh.Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k MHminibatch) Proposer() exactmh.Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k MHminibatch) WithProposal(p exactmh.Proposal) exactmh.Kernel {
	k.Proposal = p
	return k
}

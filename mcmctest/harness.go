// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
)

// SwapProposal proposes B from A and A from B, with log proposal ratio LogQ
// for the move A → B (and −LogQ for B → A). A chain using it lives on {A, B}
// and makes independent accept/reject decisions from each point, which is
// what Pairwise measures. Setting LogQ ≠ 0 checks that a kernel applies the
// proposal ratio with the right sign.
type SwapProposal struct {
	A, B []float64
	LogQ float64
}

// Propose implements exactmh.Proposal.
func (s SwapProposal) Propose(_ *rand.Rand, dst, theta []float64, _ float64) float64 {
	if slices.Equal(theta, s.A) {
		copy(dst, s.B)
		return s.LogQ
	}
	copy(dst, s.A)
	return -s.LogQ
}

// PairResult is the outcome of a pairwise detailed-balance check.
type PairResult struct {
	FromA, AccA int     // decisions from A and how many accepted
	FromB, AccB int     // decisions from B and how many accepted
	Want        float64 // log π(B)q(A|B) − log π(A)q(B|A)
	Got         float64 // log(â(A→B)/â(B→A))
	SE          float64 // standard error of Got (delta method)
	Z           float64 // (Got − Want)/SE
}

// String summarises the counts, the ratios and z.
func (r PairResult) String() string {
	return fmt.Sprintf("a(A→B) = %d/%d, a(B→A) = %d/%d: log ratio %.4f ± %.4f, want %.4f (z = %.2f)",
		r.AccA, r.FromA, r.AccB, r.FromB, r.Got, r.SE, r.Want, r.Z)
}

// Pairwise runs the chain that newKernel(SwapProposal{A, B, logQ}) starts at
// A for steps transitions and compares the acceptance ratio with the target
// ratio. newKernel must build the kernel under test around the given
// proposal. The chain is driven directly (not through Sample) with the seed.
func Pairwise(p *exactmh.Posterior, newKernel func(exactmh.Proposal) exactmh.Kernel, a, b []float64, logQ float64, steps int, seed uint64) (PairResult, error) {
	return pairwise(p, p, newKernel, a, b, logQ, steps, seed)
}

// pairwise is Pairwise with the target ratio taken from truth and the chain
// run on p (a rewrite of truth that must have the same target).
func pairwise(truth, p *exactmh.Posterior, newKernel func(exactmh.Proposal) exactmh.Kernel, a, b []float64, logQ float64, steps int, seed uint64) (PairResult, error) {
	var r PairResult
	la, err := truth.LogDensity(a)
	if err != nil {
		return r, err
	}
	lb, err := truth.LogDensity(b)
	if err != nil {
		return r, err
	}
	r.Want = lb - la + logQ
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return r, err
	}
	k := newKernel(SwapProposal{A: a, B: b, LogQ: logQ})
	ch, err := k.Start(t, a)
	if err != nil {
		return r, err
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	for range steps {
		atA := slices.Equal(ch.Position(), a)
		info, err := ch.Step(rng)
		if err != nil {
			return r, err
		}
		if atA {
			r.FromA++
			if info.Accepted {
				r.AccA++
			}
		} else {
			r.FromB++
			if info.Accepted {
				r.AccB++
			}
		}
	}
	pa := float64(r.AccA) / float64(r.FromA)
	pb := float64(r.AccB) / float64(r.FromB)
	r.Got = math.Log(pa / pb)
	// Var log p̂ ≈ (1 − p)/(n p) for a binomial proportion.
	r.SE = math.Sqrt((1-pa)/(float64(r.FromA)*pa) + (1-pb)/(float64(r.FromB)*pb))
	switch {
	case r.AccA == 0 || r.AccB == 0:
		r.Z = math.Inf(1)
	case r.SE == 0:
		r.Z = 0
		if math.Abs(r.Got-r.Want) > 1e-9 {
			r.Z = math.Inf(1)
		}
	default:
		r.Z = (r.Got - r.Want) / r.SE
	}
	return r, nil
}

// Linear is the energy of the App. J.1 random walk, U_i(θ) = θ·x_i/N on a
// scalar θ, with its Lipschitz bound |U_i(θ) − U_i(θ')| = (|x_i|/N)·|θ − θ'|.
type Linear struct {
	X []float64
}

// Len returns N.
func (e *Linear) Len() int { return len(e.X) }

// Dim returns 1.
func (e *Linear) Dim() int { return 1 }

// Energies sets dst[k] = θ·x_i/N.
func (e *Linear) Energies(dst, theta []float64, idx []int) {
	n := float64(len(e.X))
	for k, i := range idx {
		dst[k] = theta[0] * e.X[i] / n
	}
}

// EnergyDiffs sets dst[k] = (θ − θ')·x_i/N.
func (e *Linear) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	n := float64(len(e.X))
	for k, i := range idx {
		dst[k] = (theta[0] - thetaNew[0]) * e.X[i] / n
	}
}

// DiffBound implements exactmh.DiffBounder: c_i = |x_i|/N, M = |θ − θ'|
// (tight: it holds with equality).
func (e *Linear) DiffBound(exactmh.Prior) (*exactmh.DiffBound, error) {
	n := float64(len(e.X))
	c := make([]float64, len(e.X))
	for i, x := range e.X {
		c[i] = math.Abs(x) / n
	}
	return &exactmh.DiffBound{C: c}, nil
}

// EnergyRange implements exactmh.EnergyRanger on a box prior: U_i ranges
// between the energies at the box's ends.
func (e *Linear) EnergyRange(prior exactmh.Prior) (*exactmh.EnergyRange, error) {
	box, ok := prior.(*model.Box)
	if !ok {
		return nil, fmt.Errorf("mcmctest: Linear needs a *model.Box prior for its range, got %T", prior)
	}
	n := float64(len(e.X))
	r := &exactmh.EnergyRange{Lo: make([]float64, len(e.X)), Width: make([]float64, len(e.X))}
	for i, x := range e.X {
		a, b := box.Lo[0]*x/n, box.Hi[0]*x/n
		r.Lo[i], r.Width[i] = math.Min(a, b), math.Abs(b-a)
	}
	return r, nil
}

// AddGradient adds Σ w_k x_i/N.
func (e *Linear) AddGradient(grad, _ []float64, idx []int, w []float64) {
	n := float64(len(e.X))
	for k, i := range idx {
		grad[0] += w[k] * e.X[i] / n
	}
}

// RandomWalk returns the target of the TunaMH paper's App. J.1: 5000 data at
// −1 and 1000 at 5 (Σx_i = 0), U_i(θ) = θ·x_i/N, on the states
// θ ∈ {0, …, K−1} expressed as the box prior [0, K−1] with LatticeProposal.
// The target is uniform.
func RandomWalk(k int) (*exactmh.Posterior, *Linear, error) {
	return randomWalk(k, 1000)
}

// randomWalk is RandomWalk with 5m data at −1 and m at 5.
func randomWalk(k, m int) (*exactmh.Posterior, *Linear, error) {
	x := make([]float64, 6*m)
	for i := range x {
		x[i] = -1
		if i >= 5*m {
			x[i] = 5
		}
	}
	box, err := model.NewCube(1, 0, float64(k-1))
	if err != nil {
		return nil, nil, err
	}
	e := &Linear{X: x}
	return &exactmh.Posterior{Energy: e, Prior: box}, e, nil
}

// LatticeProposal proposes θ ± 1 with probability ½ each. It is symmetric;
// moves off the lattice {0, …, K−1} fall outside the box prior and are
// rejected, so the exact stationary law is uniform. (The paper's lazy walk
// stays with probability ½; that only slows the chain down.)
type LatticeProposal struct{}

// Propose implements exactmh.Proposal.
func (LatticeProposal) Propose(rng *rand.Rand, dst, theta []float64, _ float64) float64 {
	if rng.Uint64()&1 == 0 {
		dst[0] = theta[0] + 1
	} else {
		dst[0] = theta[0] - 1
	}
	return 0
}

// StationaryTV returns the total-variation distance to uniform of
// ν(k) ∝ (up/down)^k on {0, …, K−1}: the stationary law of a kernel whose
// acceptance probability is up for every move k → k+1 and down for every
// move k+1 → k (TunaMH paper App. A).
func StationaryTV(up, down float64, k int) float64 {
	logR := math.Log(up / down)
	// Normalise in log space: ν(k) = exp(k·logR − logZ).
	w := make([]float64, k)
	mx := math.Inf(-1)
	for i := range w {
		w[i] = float64(i) * logR
		mx = math.Max(mx, w[i])
	}
	var z float64
	for i := range w {
		w[i] = math.Exp(w[i] - mx)
		z += w[i]
	}
	var tv float64
	for _, v := range w {
		tv += math.Abs(v/z - 1/float64(k))
	}
	return tv / 2
}

// HistogramTV returns the total-variation distance to uniform on
// {0, …, K−1} of the empirical law of the draws (which must be integers in
// range; others count as mass outside, which adds to the distance).
func HistogramTV(draws [][]float64, k int) float64 {
	counts := make([]float64, k)
	var n, outside float64
	for _, ch := range draws {
		for _, v := range ch {
			n++
			i := int(math.Round(v))
			if i < 0 || i >= k || float64(i) != v {
				outside++
				continue
			}
			counts[i]++
		}
	}
	tv := outside / n
	for _, c := range counts {
		tv += math.Abs(c/n - 1/float64(k))
	}
	return tv / 2
}

// Gaussian is a conjugate Gaussian target: data y_i ~ N(θ, Σ), prior
// θ ~ N(PriorMean, diag(PriorSD²)), tempering β; the posterior is Gaussian
// with Mean and Cov.
type Gaussian struct {
	Posterior *exactmh.Posterior
	Energy    *model.GaussianMean
	Mean      []float64
	Cov       *mat.SymDense
}

// SD returns the posterior standard deviations.
func (g *Gaussian) SD() []float64 {
	sd := make([]float64, len(g.Mean))
	for j := range sd {
		sd[j] = math.Sqrt(g.Cov.At(j, j))
	}
	return sd
}

// ConjugateGaussian draws n data from N(trueMean, Σ) with the seed and
// returns the target with its closed-form posterior:
// Λ = Λ0 + βN·Σ⁻¹, mean = Λ⁻¹(Λ0 μ0 + βΣ⁻¹ Σ_i y_i).
func ConjugateGaussian(n int, trueMean []float64, sigma *mat.SymDense, priorMean, priorSD []float64, beta float64, seed uint64) (*Gaussian, error) {
	d := len(trueMean)
	rng := rand.New(rand.NewPCG(seed, 99))
	var chol mat.Cholesky
	if !chol.Factorize(sigma) {
		return nil, fmt.Errorf("mcmctest: Σ is not positive definite")
	}
	var l mat.TriDense
	chol.LTo(&l)
	y := make([]float64, n*d)
	z := make([]float64, d)
	sum := make([]float64, d)
	for i := range n {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		for a := range d {
			v := trueMean[a]
			for b := 0; b <= a; b++ {
				v += l.At(a, b) * z[b]
			}
			y[i*d+a] = v
			sum[a] += v
		}
	}
	e, err := model.NewGaussianMean(y, d, sigma)
	if err != nil {
		return nil, err
	}
	prior, err := model.NewGaussian(priorMean, priorSD)
	if err != nil {
		return nil, err
	}
	b := beta
	if b == 0 {
		b = 1
	}
	prec := e.Precision()
	lam := mat.NewSymDense(d, nil)
	for a := range d {
		for c := a; c < d; c++ {
			v := b * float64(n) * prec.At(a, c)
			if a == c {
				v += 1 / (priorSD[a] * priorSD[a])
			}
			lam.SetSym(a, c, v)
		}
	}
	rhs := mat.NewVecDense(d, nil)
	for a := range d {
		var s float64
		for c := range d {
			s += prec.At(a, c) * sum[c]
		}
		rhs.SetVec(a, priorMean[a]/(priorSD[a]*priorSD[a])+b*s)
	}
	var lc mat.Cholesky
	if !lc.Factorize(lam) {
		return nil, fmt.Errorf("mcmctest: posterior precision is not positive definite")
	}
	var mean mat.VecDense
	if err := lc.SolveVecTo(&mean, rhs); err != nil {
		return nil, err
	}
	cov := mat.NewSymDense(d, nil)
	if err := lc.InverseTo(cov); err != nil {
		return nil, err
	}
	return &Gaussian{
		Posterior: &exactmh.Posterior{Energy: e, Prior: prior, Beta: beta},
		Energy:    e,
		Mean:      mean.RawVector().Data,
		Cov:       cov,
	}, nil
}

// CheckMoments compares the mean and variance of every coordinate of the
// draws with the truth: each must lie within k Monte Carlo standard errors
// (diagnostics.MCSEMean of the draws, and of the squared deviations for
// the variance). It returns a *MomentError describing every coordinate that
// does not (Biased), and every coordinate with a bulk ESS below 100
// (LowESS): a chain that barely moves has meaningless standard errors and
// must not pass.
func CheckMoments(r *exactmh.Result, mean, sd []float64, k float64) error {
	var msgs []string
	e := &MomentError{}
	for j := range mean {
		x := r.Samples(j)
		if ess := diagnostics.ESSBulk(x); !(ess >= 100) {
			e.LowESS = append(e.LowESS, fmt.Sprintf("θ%d: bulk ESS %.3g < 100, too few effective draws to check", j, ess))
			continue
		}
		var m float64
		var n int
		for _, ch := range x {
			for _, v := range ch {
				m += v
				n++
			}
		}
		m /= float64(n)
		if se := diagnostics.MCSEMean(x); !(math.Abs(m-mean[j]) <= k*se) {
			msgs = append(msgs, fmt.Sprintf("θ%d: mean %.5g, want %.5g ± %g·%.3g (z = %.2f)", j, m, mean[j], k, se, (m-mean[j])/se))
		}
		sq := make([][]float64, len(x))
		var v float64
		for c, ch := range x {
			sq[c] = make([]float64, len(ch))
			for i, xi := range ch {
				sq[c][i] = (xi - mean[j]) * (xi - mean[j])
				v += sq[c][i]
			}
		}
		v /= float64(n)
		want := sd[j] * sd[j]
		if se := diagnostics.MCSEMean(sq); !(math.Abs(v-want) <= k*se) {
			msgs = append(msgs, fmt.Sprintf("θ%d: variance %.5g, want %.5g ± %g·%.3g (z = %.2f)", j, v, want, k, se, (v-want)/se))
		}
	}
	e.Biased = msgs
	if e.Biased != nil || e.LowESS != nil {
		return e
	}
	return nil
}

// MomentError is CheckMoments' error.
type MomentError struct {
	Biased []string // moments outside k standard errors
	LowESS []string // coordinates with too few effective draws to check
}

// Error lists the biased moments and the coordinates with too few
// effective draws.
func (e *MomentError) Error() string {
	return fmt.Sprintf("mcmctest: moments off: %v %v", e.Biased, e.LowESS)
}

// ShowsBias reports whether err is a *MomentError with at least one moment
// outside its tolerance (not merely too few effective draws): what a
// deliberately wrong kernel must produce.
func ShowsBias(err error) bool {
	var m *MomentError
	return errors.As(err, &m) && len(m.Biased) > 0
}

// BoxedGaussian is a Gaussian-mean target with a flat prior on a box at
// ±width posterior standard deviations around the posterior mean — a
// bounded support, which the minibatch kernels' bounds need. With width 6
// or more the truncation moves the moments by less than 1e-7 sd, so Mean
// and Cov are those of the untruncated flat-prior posterior (the
// conjugate posterior with a prior of sd 1e6). Data: n draws from
// N(trueMean, Σ) with the seed; tempering β.
func BoxedGaussian(n int, trueMean []float64, sigma *mat.SymDense, beta, width float64, seed uint64) (*Gaussian, error) {
	d := len(trueMean)
	wide := make([]float64, d)
	for j := range wide {
		wide[j] = 1e6
	}
	g, err := ConjugateGaussian(n, trueMean, sigma, make([]float64, d), wide, beta, seed)
	if err != nil {
		return nil, err
	}
	lo, hi := make([]float64, d), make([]float64, d)
	for j, sd := range g.SD() {
		lo[j], hi[j] = g.Mean[j]-width*sd, g.Mean[j]+width*sd
	}
	box, err := model.NewBox(lo, hi)
	if err != nil {
		return nil, err
	}
	g.Posterior = &exactmh.Posterior{Energy: g.Energy, Prior: box, Beta: beta}
	return g, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Model is a Bayesian model that SBC draws from: a prior over θ and a
// distribution of data given θ.
type Model interface {
	// Draw draws θ from the prior and then a data set given θ, and returns
	// θ with the problem of sampling the posterior given those data (its
	// Proposal and Scale unset).
	Draw(rng *rand.Rand) (theta []float64, pb Problem, err error)
}

// GaussianModel is the conjugate Gaussian-mean model:
// θ ~ N(PriorMean, diag(PriorSD²)) and N data y_i ~ N(θ, Sigma). Its
// posterior is Gaussian (ConjugateGaussian), with its mean as the Problem's
// Mode.
type GaussianModel struct {
	N                  int
	Sigma              *mat.SymDense
	PriorMean, PriorSD []float64
}

// Draw implements Model.
func (m GaussianModel) Draw(rng *rand.Rand) ([]float64, Problem, error) {
	theta := make([]float64, len(m.PriorMean))
	for j := range theta {
		theta[j] = m.PriorMean[j] + m.PriorSD[j]*rng.NormFloat64()
	}
	g, err := ConjugateGaussian(m.N, theta, m.Sigma, m.PriorMean, m.PriorSD, 1, rng.Uint64())
	if err != nil {
		return nil, Problem{}, err
	}
	return theta, Problem{Posterior: g.Posterior, Mode: g.Mean, SD: g.SD()}, nil
}

// BoxModel is the Gaussian-mean model on a bounded support: θ uniform on the
// box [Lo, Hi] and N data y_i ~ N(θ, Sigma). The posterior is the
// flat-prior Gaussian posterior truncated to the box; the Problem's Mode is
// that Gaussian's mean moved into the box coordinate by coordinate (near the
// mode; at it when the box does not cut), its SD the Gaussian's standard
// deviations. The minibatch kernels' bounds (EnergyRange, DiffBound) exist
// on it.
type BoxModel struct {
	N      int
	Sigma  *mat.SymDense
	Lo, Hi []float64
}

// Draw implements Model.
func (m BoxModel) Draw(rng *rand.Rand) ([]float64, Problem, error) {
	d := len(m.Lo)
	theta := make([]float64, d)
	for j := range theta {
		theta[j] = m.Lo[j] + (m.Hi[j]-m.Lo[j])*rng.Float64()
	}
	wide := make([]float64, d)
	for j := range wide {
		wide[j] = 1e6
	}
	g, err := ConjugateGaussian(m.N, theta, m.Sigma, make([]float64, d), wide, 1, rng.Uint64())
	if err != nil {
		return nil, Problem{}, err
	}
	box, err := model.NewBox(m.Lo, m.Hi)
	if err != nil {
		return nil, Problem{}, err
	}
	mode := make([]float64, d)
	for j := range mode {
		mode[j] = min(max(g.Mean[j], m.Lo[j]), m.Hi[j])
	}
	return theta, Problem{Posterior: &exactmh.Posterior{Energy: g.Energy, Prior: box}, Mode: mode, SD: g.SD()}, nil
}

// LogisticModel is Bayesian logistic regression: θ ~ N(0, PriorSD²·I) in
// Dim dimensions — or, if Box > 0, θ uniform on the cube [−Box, Box]^Dim
// (an model.Box prior) — N features x_i ~ N(0, I) and labels
// y_i ∈ {0, 1} with P(y_i = 1) = σ(x_iᵀθ). The Problem's Mode is the MAP
// (exactmh.FindMAP, which may lie on the cube's boundary), its SD the
// standard deviations of the Laplace approximation there. Its energy has
// every bound exactmh offers for a GLM (Taylor bounds of order 1 and 2,
// tunable FlyMC bounds) and, on the cube, the energy ranges and DiffBounds
// of a bounded support too, for its control-variate rewrite as well.
type LogisticModel struct {
	N, Dim  int
	PriorSD float64
	Box     float64
}

// Draw implements Model.
func (m LogisticModel) Draw(rng *rand.Rand) ([]float64, Problem, error) {
	d := m.Dim
	theta := make([]float64, d)
	for j := range theta {
		if m.Box > 0 {
			theta[j] = m.Box * (2*rng.Float64() - 1)
		} else {
			theta[j] = m.PriorSD * rng.NormFloat64()
		}
	}
	x, y := make([]float64, m.N*d), make([]float64, m.N)
	for i := range m.N {
		var z float64
		for j := range d {
			x[i*d+j] = rng.NormFloat64()
			z += x[i*d+j] * theta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	e, err := model.NewLogisticRegression(x, y, d)
	if err != nil {
		return nil, Problem{}, err
	}
	if m.Box > 0 {
		box, err := model.NewCube(d, -m.Box, m.Box)
		if err != nil {
			return nil, Problem{}, err
		}
		pb, err := laplaceBoxProblem(&exactmh.Posterior{Energy: e, Prior: box})
		return theta, pb, err
	}
	prior, err := model.NewIsoGaussian(d, m.PriorSD)
	if err != nil {
		return nil, Problem{}, err
	}
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	pb, err := laplaceProblem(p)
	return theta, pb, err
}

// MultilevelModel is a random-intercept logistic regression with τ
// unknown, the target of Case.NeedsMultilevel: fixed effects β (an
// intercept and a slope on x_i ~ N(0, 1)) ~ N(0, 1), Groups groups — the
// first half of the data round robin, the second half in group 0, so
// that group 0 holds more than half the data and every other group
// N/(2·Groups) — effects u_g ~
// N(0, τ²), τ ~ half-normal(1) with log τ sampled, y_i ~
// Bernoulli(σ(β₀ + β₁x_i + u_g)) — model.NewMultilevel's posterior over
// θ = (β₀, β₁, u_0, …, u_{G−1}, log τ). With few data per group the
// centred posterior is a funnel in (u, log τ) for the small groups. It has no mode, so the
// Problem's Mode is model.MultilevelCenter's Laplace-EM centre (the data's
// alone: it does not depend on the drawn θ), its SD the conditional
// standard deviations there.
//
// With Slope, each group has a random slope on x too, u′_g ~ N(0, τ′²)
// with its own scale: θ = (β₀, β₁, u_0, u′_0, …, u_{G−1}, u′_{G−1}, log τ,
// log τ′).
type MultilevelModel struct {
	N, Groups int
	Slope     bool
}

// Draw implements Model.
func (m MultilevelModel) Draw(rng *rand.Rand) ([]float64, Problem, error) {
	if m.N < 1 || m.Groups < 1 {
		return nil, Problem{}, fmt.Errorf("mcmctest: MultilevelModel N = %d, Groups = %d: want ≥ 1", m.N, m.Groups)
	}
	q := 1 // effects per group
	if m.Slope {
		q = 2
	}
	d := 2 + q*m.Groups + q
	theta := make([]float64, d)
	theta[0], theta[1] = rng.NormFloat64(), rng.NormFloat64()
	tau := make([]float64, q)
	for k := range q {
		tau[k] = math.Abs(rng.NormFloat64())
		theta[d-q+k] = math.Log(tau[k])
	}
	for g := range m.Groups {
		for k := range q {
			theta[2+q*g+k] = tau[k] * rng.NormFloat64()
		}
	}
	ml := &model.Multilevel{Family: model.LogisticFamily{}, Y: make([]float64, m.N), Intercept: true,
		Fixed: []model.Covariate{{Name: "x", Values: make([]float64, m.N)}}, FixedSD: []float64{1, 1},
		Factors: []model.Factor{{Name: "g", Index: make([]int32, m.N), Tau: model.HalfNormal(1)}}}
	x := ml.Fixed[0].Values
	if m.Slope {
		ml.Factors[0].Slopes = []model.Covariate{{Name: "x", Values: x}}
	}
	for i := range m.N {
		g := i % m.Groups
		if i >= m.N/2 {
			g = 0
		}
		x[i] = rng.NormFloat64()
		ml.Factors[0].Index[i] = int32(g)
		z := theta[0] + theta[1]*x[i] + theta[2+q*g]
		if m.Slope {
			z += theta[3+q*g] * x[i]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			ml.Y[i] = 1
		}
	}
	p, err := model.NewMultilevel(ml)
	if err != nil {
		return nil, Problem{}, err
	}
	center, sd, err := model.MultilevelCenter(context.Background(), p, 0)
	if err != nil {
		return nil, Problem{}, err
	}
	return theta, Problem{Posterior: p, Mode: center, SD: sd}, nil
}

// laplaceBoxProblem is laplaceProblem for a posterior on a Box, whose MAP
// may lie on the boundary, where central differences of the log density
// would step outside the support: the SDs come from exactmh.LaplaceAt,
// the exact Hessian of the energy (a uniform prior adds none).
func laplaceBoxProblem(p *exactmh.Posterior) (Problem, error) {
	d := p.Dim()
	m, err := exactmh.FindMAP(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		return Problem{}, err
	}
	la, err := exactmh.LaplaceAt(p, m.Theta)
	if err != nil {
		return Problem{}, err
	}
	sd := make([]float64, d)
	for j := range sd {
		var s float64
		for k := 0; k <= j; k++ {
			s += la.CovChol.At(j, k) * la.CovChol.At(j, k)
		}
		sd[j] = math.Sqrt(s)
	}
	return Problem{Posterior: p, Mode: m.Theta, SD: sd}, nil
}

// laplaceProblem returns the problem of p with the MAP as Mode and the
// Laplace approximation's standard deviations as SD (the Hessian of the
// log posterior by central differences).
func laplaceProblem(p *exactmh.Posterior) (Problem, error) {
	d := p.Dim()
	m, err := exactmh.FindMAP(context.Background(), p, make([]float64, d), nil)
	if err != nil {
		return Problem{}, err
	}
	mode := m.Theta
	f := func(x []float64) float64 {
		v, err := p.LogDensity(x)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	h := mat.NewSymDense(d, nil)
	x := make([]float64, d)
	for a := range d {
		for b := a; b < d; b++ {
			ea, eb := 1e-4*math.Max(1, math.Abs(mode[a])), 1e-4*math.Max(1, math.Abs(mode[b]))
			val := func(sa, sb float64) float64 {
				copy(x, mode)
				x[a] += sa * ea
				x[b] += sb * eb
				return f(x)
			}
			v := (val(1, 1) - val(1, -1) - val(-1, 1) + val(-1, -1)) / (4 * ea * eb)
			h.SetSym(a, b, -v)
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		return Problem{}, fmt.Errorf("mcmctest: the log posterior's Hessian at the MAP %v is not negative definite", mode)
	}
	cov := mat.NewSymDense(d, nil)
	if err := chol.InverseTo(cov); err != nil {
		return Problem{}, err
	}
	sd := make([]float64, d)
	for j := range sd {
		sd[j] = math.Sqrt(cov.At(j, j))
	}
	return Problem{Posterior: p, Mode: mode, SD: sd}, nil
}

// SBCOptions configures SBC. The zero value of a field does the right thing.
type SBCOptions struct {
	// Replicates is the number of (θ, data) pairs drawn (0: 100).
	Replicates int
	// Draws is L, the thinned posterior draws per replicate: ranks take
	// the L+1 values 0, …, L (0: 19).
	Draws int
	// Bins is the number of bins of the chi-square test; it must divide
	// L+1 (0: 10).
	Bins int
	// Thin is the number of transitions per kept draw. 0: twice the
	// integrated autocorrelation time τ measured on a pilot run (the
	// number of draws over the smallest bulk ESS), rounded up — for an
	// autoregressive chain the correlation 2τ transitions apart is about
	// e⁻⁴ ≈ 0.02 — and an error if that exceeds MaxThin.
	Thin int
	// MaxThin bounds the chosen Thin (0: 200).
	MaxThin int
	// Scale is the step scale of every replicate's chain (0: the scale the
	// pilot run's warmup adapted to, or the kernel's default if its
	// chains are not Tunable).
	Scale float64
	// TargetAccept is the pilot warmup's target acceptance rate (0: the
	// kernel's default: its DefaultTargetAccept method, see exactmh.AcceptTarget).
	TargetAccept float64
	// Metric is the pilot warmup's Settings.Metric, for kernels with an
	// inverse mass matrix (exactmh.MetricAdapter): the chains of the
	// replicates get the metric the pilot's first chain estimated along
	// with its step scale.
	Metric exactmh.MetricKind
	// Seed seeds everything: replicate r draws its θ, its data and its
	// chain from the PCG stream (Seed, r).
	Seed uint64

	metric *exactmh.Metric // the pilot's metric, set with Scale from the pilot
}

// SBCResult is the outcome of SBC.
type SBCResult struct {
	// Ranks[j][r] is the rank of θ_j among the draws of replicate r, in
	// 0, …, Draws (ties with θ broken at random).
	Ranks [][]int
	// Counts[j][b] is the number of replicates whose rank of θ_j falls in
	// bin b.
	Counts [][]int
	// ChiSq[j] is the chi-square statistic of Counts[j] against uniform
	// (Bins − 1 degrees of freedom) and P[j] its p-value.
	ChiSq, P []float64
	// Thin and Scale are those used.
	Thin  int
	Scale float64
}

// MinP returns the smallest p-value over the coordinates.
func (r *SBCResult) MinP() float64 {
	m := 1.0
	for _, p := range r.P {
		m = math.Min(m, p)
	}
	return m
}

// Reject reports whether the ranks' uniformity is rejected at level alpha
// with a Bonferroni correction over the coordinates: some p-value below
// alpha/d.
func (r *SBCResult) Reject(alpha float64) bool {
	return r.MinP() < alpha/float64(len(r.P))
}

// String summarises the rank histograms and p-values.
func (r *SBCResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SBC, thin %d, scale %.3g:", r.Thin, r.Scale)
	for j := range r.P {
		fmt.Fprintf(&b, " θ%d ranks %v χ² = %.1f p = %.3g;", j, r.Counts[j], r.ChiSq[j], r.P[j])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// SBC runs simulation-based calibration (Talts, Betancourt, Simpson,
// Vehtari and Gelman, 2018) of the kernel newKernel builds: for each
// replicate it draws θ and data from the model, starts the kernel's chain
// at θ and keeps every Thin-th of Draws·Thin transitions. θ given the data
// is an exact posterior draw, so the chain is stationary from its first
// transition, with no warmup to distort it; for an exact kernel the rank of
// θ_j among the kept draws is then uniform on 0, …, Draws, up to the
// dependence between θ and draws Thin transitions apart, which the
// pilot-chosen thinning makes negligible. A kernel whose stationary law is
// not the posterior — too wide, too narrow, shifted, wrong near a
// boundary — makes the ranks pile up at the ends or in the middle, which the
// chi-square test over Bins bins sees: Reject(alpha) then has power, and for
// an exact kernel it has probability at most about alpha.
//
// A pilot run (two chains of 500 warmup transitions and 1000 draws, on a
// problem drawn from the stream (Seed, Replicates)) gives the step scale —
// with the metric estimated with it, for kernels that have one — and the
// thinning unless opt sets them. newKernel receives each replicate's
// problem with Scale set (and Proposal nil).
func SBC(m Model, newKernel func(Problem) exactmh.Kernel, opt *SBCOptions) (*SBCResult, error) {
	var o SBCOptions
	if opt != nil {
		o = *opt
	}
	if err := o.fill(); err != nil {
		return nil, err
	}
	if o.Scale == 0 || o.Thin == 0 {
		scale, thin, metric, err := sbcPilot(m, newKernel, &o)
		if err != nil {
			return nil, err
		}
		if o.Scale == 0 {
			o.Scale, o.metric = scale, &metric
		}
		if o.Thin == 0 {
			o.Thin = thin
		}
	}
	return sbcRun(m, newKernel, &o)
}

// fill sets the defaults of the zero fields and checks the others.
func (o *SBCOptions) fill() error {
	if o.Replicates == 0 {
		o.Replicates = 100
	}
	if o.Draws == 0 {
		o.Draws = 19
	}
	if o.Bins == 0 {
		o.Bins = 10
	}
	if o.MaxThin == 0 {
		o.MaxThin = 200
	}
	switch {
	case o.Replicates < 0 || o.Draws < 0 || o.Thin < 0 || o.MaxThin < 0 || o.Bins < 2 || o.Scale < 0 || math.IsNaN(o.Scale):
		return fmt.Errorf("mcmctest: SBC: bad options %+v", *o)
	case (o.Draws+1)%o.Bins != 0:
		return fmt.Errorf("mcmctest: SBC: %d bins do not divide the %d possible ranks", o.Bins, o.Draws+1)
	}
	return nil
}

// sbcRun runs SBC with the scale and thinning of o, which fill has
// completed (a zero Scale is the kernel's default; Thin must be set).
func sbcRun(m Model, newKernel func(Problem) exactmh.Kernel, o *SBCOptions) (*SBCResult, error) {
	var r *SBCResult
	for rep := range o.Replicates {
		rng := rand.New(rand.NewPCG(o.Seed, uint64(rep)))
		theta, pb, err := m.Draw(rng)
		if err != nil {
			return nil, fmt.Errorf("mcmctest: SBC: replicate %d: %w", rep, err)
		}
		if r == nil {
			d := len(theta)
			r = &SBCResult{Ranks: make([][]int, d), Counts: make([][]int, d), ChiSq: make([]float64, d), P: make([]float64, d),
				Thin: o.Thin, Scale: o.Scale}
			for j := range d {
				r.Ranks[j] = make([]int, o.Replicates)
				r.Counts[j] = make([]int, o.Bins)
			}
		}
		pb.Scale = o.Scale
		t, err := exactmh.NewTarget(pb.Posterior)
		if err != nil {
			return nil, err
		}
		ch, err := newKernel(pb).Start(t, theta)
		if err != nil {
			return nil, fmt.Errorf("mcmctest: SBC: replicate %d: %w", rep, err)
		}
		if ma, ok := ch.(exactmh.MetricAdapter); ok && o.metric != nil {
			if err := ma.SetMetric(*o.metric); err != nil {
				return nil, fmt.Errorf("mcmctest: SBC: replicate %d: %w", rep, err)
			}
		}
		less, ties := make([]int, len(theta)), make([]int, len(theta))
		for range o.Draws {
			for range o.Thin {
				if _, err := ch.Step(rng); err != nil {
					return nil, fmt.Errorf("mcmctest: SBC: replicate %d: %w", rep, err)
				}
			}
			for j, v := range ch.Position() {
				switch {
				case v < theta[j]:
					less[j]++
				case v == theta[j]:
					ties[j]++
				}
			}
		}
		for j := range theta {
			rank := less[j] + rng.IntN(ties[j]+1)
			r.Ranks[j][rep] = rank
			r.Counts[j][rank*o.Bins/(o.Draws+1)]++
		}
	}
	if r == nil {
		return nil, errors.New("mcmctest: SBC: no replicates")
	}
	want := float64(o.Replicates) / float64(o.Bins)
	for j := range r.Counts {
		for _, c := range r.Counts[j] {
			r.ChiSq[j] += (float64(c) - want) * (float64(c) - want) / want
		}
		r.P[j] = distuv.ChiSquared{K: float64(o.Bins - 1)}.Survival(r.ChiSq[j])
	}
	return r, nil
}

// sbcPilot adapts the step scale (and the metric of kernels with one) on
// one drawn problem and measures the integrated autocorrelation time at
// that scale.
func sbcPilot(m Model, newKernel func(Problem) exactmh.Kernel, o *SBCOptions) (scale float64, thin int, metric exactmh.Metric, err error) {
	rng := rand.New(rand.NewPCG(o.Seed, uint64(o.Replicates)))
	theta, pb, err := m.Draw(rng)
	if err != nil {
		return 0, 0, metric, fmt.Errorf("mcmctest: SBC: pilot: %w", err)
	}
	pb.Scale = o.Scale
	const chains, draws = 2, 1000
	res, err := exactmh.Sample(context.Background(), pb.Posterior, newKernel(pb), &exactmh.Settings{
		Chains: chains, Warmup: 500, Draws: draws, Seed: o.Seed, Init: theta, TargetAccept: o.TargetAccept, Metric: o.Metric})
	if err != nil {
		return 0, 0, metric, fmt.Errorf("mcmctest: SBC: pilot: %w", err)
	}
	metric = res.Chains[0].Metric
	for _, c := range res.Chains {
		scale += c.Scale / chains
	}
	if math.IsNaN(scale) {
		scale = 0
	}
	ess := math.Inf(1)
	for j := range res.Dim {
		ess = math.Min(ess, diagnostics.ESSBulk(res.Samples(j)))
	}
	tau := chains * draws / ess
	if !(tau < float64(o.MaxThin)/2) {
		return 0, 0, metric, fmt.Errorf("mcmctest: SBC: the pilot chain's autocorrelation time is %.3g transitions (bulk ESS %.3g of %d draws): thinning by 2τ would exceed MaxThin = %d", tau, ess, chains*draws, o.MaxThin)
	}
	return scale, max(1, int(math.Ceil(2*tau))), metric, nil
}

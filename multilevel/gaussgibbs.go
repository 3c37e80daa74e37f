// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/sparse"
)

// GaussianStatistics is the energy of a Gaussian linear model with its
// noise sd σ unknown, held as its sufficient statistics
// (model.SparseGaussianRegression): θ = (w, log σ), w the D coefficients
// of the rows, and
//
//	U(w, s) = N·s + Q(w)·e^{−2s}/2,  Q(w) = r₀ − 2bᵀw + wᵀMw,
//
// M = XᵀX (lower triangle), b = Xᵀ(y − o), r₀ = ‖y − o‖². The slices are
// the energy's own: read, never written. With a prior that is a
// ScaledPrior over a Layout of dimension D it is the Gaussian multilevel
// model with σ estimated, which GroupGibbs samples by exact Gibbs draws
// (gaussgibbs.go).
type GaussianStatistics interface {
	exactmh.Energy
	GaussianStatistics() (m *sparse.SymCSC, b []float64, r0 float64, n int)
}

// ScaledPrior is a prior whose last coordinate is the log of a positive
// parameter and whose others have the prior Unwrap returns
// (model.WithScale).
type ScaledPrior interface {
	exactmh.Prior
	Unwrap() exactmh.Prior
}

// gaussianOf returns the layout and sufficient statistics of a Gaussian
// multilevel model with σ estimated: a GaussianStatistics energy of
// dimension D + 1 under a ScaledPrior whose base is a multilevel Layout of
// dimension D with a sparse Hessian.
func gaussianOf(e exactmh.Energy, p exactmh.Prior) (Layout, GaussianStatistics, bool) {
	gs, ok := e.(GaussianStatistics)
	if !ok {
		return nil, nil, false
	}
	sp, ok := p.(ScaledPrior)
	if !ok {
		return nil, nil, false
	}
	lay, ok := sp.Unwrap().(Layout)
	if !ok || lay.NumTerms() == 0 {
		return nil, nil, false
	}
	if _, ok := sp.Unwrap().(exactmh.SparseHessianer); !ok {
		return nil, nil, false
	}
	_, b, _, _ := gs.GaussianStatistics()
	if len(lay.Blocks()) != len(b) || gs.Dim() != len(b)+1 {
		return nil, nil, false
	}
	return lay, gs, true
}

// IsGaussian reports whether p is a Gaussian multilevel model with σ
// estimated (a GaussianStatistics energy under a ScaledPrior over a
// Layout), which GroupGibbs samples by the exact Gibbs sweep of
// gaussgibbs.go and the automatic default chooses GroupGibbs for.
func IsGaussian(p *exactmh.Posterior) bool {
	_, _, ok := gaussianOf(p.Energy, p.Prior)
	return ok
}

// gaussHooks are the test hooks of the Gaussian sweep (mutants, set from
// export tests; zero in every real kernel).
type gaussHooks struct {
	// sigmaShape adds to the shape N/2 of σ⁻²'s Gamma draw (−D/2: the
	// residual degrees of freedom of least squares).
	sigmaShape float64
	// precSigmaPow, if nonzero, scales M by σ^{−precSigmaPow} in the
	// precision factored instead of σ⁻² (1: M/σ).
	precSigmaPow float64
	// corrDiag factors the effects' precision with a correlated factor's
	// Σ⁻¹ replaced by diag(τ⁻²) (the acceptance still the true prior's).
	corrDiag bool
	// corrNCOff leaves out the correlated factors' non-centred move
	// (gaussgibbs_corrnc.go; exact); corrNCJacobianOff1 (a mutant) takes
	// its Jacobian |det L|^G one power short.
	corrNCOff, corrNCJacobianOff1 bool
	// termNCOff leaves out the independent terms' non-centred scale move
	// (termNC; exact, and the augmentation sweeps' setting: they
	// interweave instead); termNCJacobianOff1 (a mutant) takes its
	// Jacobian τ^G one power short.
	termNCOff, termNCJacobianOff1 bool
}

// gaussTerm is one random-effect term: its effects θ[start + g·stride],
// g < levels, and its log scale θ[logTau].
type gaussTerm struct{ start, stride, levels, logTau int }

// gaussChain is GroupGibbs's chain on a Gaussian multilevel model with σ
// estimated. One transition is a sweep of three exact updates, none of
// which reads a datum (the sufficient statistics M, b, r₀ are all the data
// say):
//
//  1. the location vector w = (β, u) given σ and the scales τ, jointly:
//     its full conditional is Gaussian with precision
//     P = βM/σ² + diag(τ_t⁻²) on the effects + H_F on the other
//     coordinates (the fixed effects and fixed-scale effects: the
//     prior's Hessian there, at the chain's start) and P·mean =
//     βb/σ² + H_F θ̂_F − ∇_F(−log p)(θ̂), drawn as mean + PᵀL⁻ᵀz
//     from the sparse Cholesky factor of P (its symbolic analysis done
//     once: P's pattern is fixed). Where the prior of the fixed effects is
//     Gaussian (flat or normal: model.NewMultilevel's) this is their
//     exact conditional and the draw is always kept; for another prior
//     the draw is an independence proposal from its second-order
//     expansion, accepted with the ratio of the prior to that expansion
//     (exact for any prior);
//  2. log σ given w: the proposal σ⁻² ~ Gamma(βN/2, βQ(w)/2) is the
//     likelihood's factor in log σ exactly, so it is accepted with the
//     prior ratio p(σ′)/p(σ) (the prior's density in log σ, Jacobian
//     included), by Metropolis–Hastings;
//  3. each log τ_t given its G_t effects: the proposal τ⁻² ~ Gamma(G_t/2,
//     Σ_g u_g²/2), the effects' Gaussian factor exactly, accepted with the
//     ratio of the rest of the prior (τ's own prior and Jacobian); a
//     correlated factor's log τ_k and correlation coordinates by slice
//     sampling of the prior (gaussgibbs_corr.go, where update 1's
//     diag(τ_t⁻²) is Σ⁻¹ per level block).
//
// A sweep costs the factorisation of P (its fill: O(nnz(M)) for one
// factor of nested groups) and O(nnz(M) + d), flat in N. Proven by
// TestGaussGibbsMoments (against NUTS) and TestGaussGibbsSBC, with the
// mutants of gaussHooks caught.
type gaussChain struct {
	t     *exactmh.Target
	prior exactmh.Prior
	beta  float64 // tempering
	hooks gaussHooks
	m     *sparse.SymCSC
	b     []float64
	r0, n float64
	d, dw int // len(θ), D
	// known: σ = 1 known, θ = w with no log σ coordinate (d = D): the
	// Gaussian model given the latent variables of the probit
	// augmentation (gaussaug.go), whose b changes every sweep.
	known  bool
	base   exactmh.Prior // the prior of w (the ScaledPrior's Unwrap, or the prior itself when known)
	theta  []float64
	next   []float64
	eff    []int // the coordinates in w the rows hold (Blocks ≥ 0)
	terms  []gaussTerm
	tauOf  []int // per position of eff: its term's log scale coordinate, or −1
	centre []float64
	gF     []float64 // per position: ∂(−log p)/∂θ at the centre on F, 0 on R
	hF     *sparse.SymCSC
	pv     *sparse.SymCSC // P over eff
	pBase  []float64      // H_F's part of P's values
	mK     []int          // M's entries within eff
	mPos   []int          // their position in P
	diagR  []int          // per R position a: P's diagonal entry, or −1
	chol   *sparse.Cholesky
	rhs    []float64
	mean   []float64
	work   []float64
	mw     []float64 // M·w scratch (length D)
	lp     float64   // log prior at θ
	// fresh: chol and mean are the conditional of w at θ's scales and the
	// current statistics (drawW draws from them without refactoring).
	fresh bool
	// corrNC: each correlated factor's non-centred move
	// (gaussgibbs_corrnc.go), ncMw its scratch M·w, corrNCN and corrNCT
	// the coordinates it moved and tried.
	corrNC           []corrNC
	ncMw             []float64
	corrNCN, corrNCT int64
	// termNC: each independent term's non-centred scale move (the
	// Gaussian sweep's), termNCN/termNCT its moves made and tried.
	termNC           []termNC
	termNCN, termNCT int64
	// The correlated factors (gaussgibbs_corr.go) and, per position of
	// eff, whether it is one of their effects.
	corr    []*gaussCorr
	corrEff []bool
	// schur, where set, draws update 1 with one term's levels
	// eliminated (gaussgibbs_schur.go) when the factor is not fresh.
	schur *schur
}

// startGauss returns GroupGibbs's chain on a Gaussian multilevel model
// with σ estimated (gaussianOf), positioned at θ0, with the expansion of
// the fixed effects' prior at centre (θ0 when nil).
func startGauss(name string, t *exactmh.Target, lay Layout, gs GaussianStatistics, theta0, centre []float64, hooks gaussHooks) (*gaussChain, error) {
	m, b, r0, n := gs.GaussianStatistics()
	if n < 2 || !(r0 >= 0) {
		return nil, fmt.Errorf("%s: Gaussian statistics of N = %d data with r₀ = %v: want N ≥ 2 and r₀ ≥ 0", name, n, r0)
	}
	c, err := newGaussChain(name, t, lay, t.Prior().(ScaledPrior).Unwrap(), m, b, false, theta0, centre, hooks)
	if err != nil {
		return nil, err
	}
	c.r0, c.n = r0, float64(n)
	return c, nil
}

// newGaussChain returns the Gaussian sweep's chain over the effects of
// lay given M and b (read, never written: the caller may change b's
// values between sweeps), base the prior of the D coordinates of w; θ has
// a last coordinate log σ unless known (σ = 1).
func newGaussChain(name string, t *exactmh.Target, lay Layout, base exactmh.Prior, m *sparse.SymCSC, b []float64, known bool, theta0, centre []float64, hooks gaussHooks) (*gaussChain, error) {
	D := len(b)
	if m.N != D {
		return nil, fmt.Errorf("%s: the Gaussian statistics' M is %d×%d, want %d×%d", name, m.N, m.N, D, D)
	}
	if centre == nil {
		centre = theta0
	}
	d := D + 1
	if known {
		d = D
	}
	if len(centre) != d {
		return nil, fmt.Errorf("%s: len(Center) = %d, want %d", name, len(centre), d)
	}
	c := &gaussChain{t: t, prior: t.Prior(), base: base, known: known, beta: t.Beta(), hooks: hooks, m: m, b: b,
		d: d, dw: D, theta: slices.Clone(theta0), next: slices.Clone(theta0), centre: slices.Clone(centre)}
	blocks := lay.Blocks()
	idx := make([]int, D)
	for j, bl := range blocks {
		idx[j] = -1
		if bl >= 0 {
			idx[j] = len(c.eff)
			c.eff = append(c.eff, j)
		}
	}
	ne := len(c.eff)
	c.tauOf = make([]int, ne)
	for a := range c.tauOf {
		c.tauOf[a] = -1
	}
	isScale := make([]bool, D)
	corrTerm, err := c.findCorr(name, lay, idx, isScale)
	if err != nil {
		return nil, err
	}
	for k := range lay.NumTerms() {
		f, tn, start, stride, levels, logTau := lay.Term(k)
		if logTau < 0 || logTau >= D || blocks[logTau] >= 0 {
			return nil, fmt.Errorf("%s: term %s/%s's log scale θ[%d] is not a coordinate no row holds", name, f, tn, logTau)
		}
		isScale[logTau] = true
		for g := range levels {
			j := start + g*stride
			if j < 0 || j >= D || idx[j] < 0 {
				return nil, fmt.Errorf("%s: term %s/%s's effect %d at θ[%d] is not a coordinate the rows hold", name, f, tn, g, j)
			}
			c.tauOf[idx[j]] = logTau
		}
		if !corrTerm[k] {
			c.terms = append(c.terms, gaussTerm{start, stride, levels, logTau})
		}
	}
	for j, bl := range blocks {
		if bl < 0 && !isScale[j] {
			return nil, fmt.Errorf("%s: θ[%d] is held by no row and is no term's log scale or correlation coordinate: the Gaussian sweep has no update for it", name, j)
		}
	}
	// The prior's expansion on F (every effect coordinate that is not a
	// random term's) at the centre.
	hp, err := t.SparseHessianOf(base.(exactmh.SparseHessianer), c.centre[:D])
	if err != nil {
		return nil, fmt.Errorf("%s: the prior's Hessian at the centre: %w", name, err)
	}
	grad := make([]float64, d)
	if err := t.AddLogPriorGradient(grad, c.centre); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.gF = make([]float64, ne)
	inF := func(j int) bool { return j < D && idx[j] >= 0 && c.tauOf[idx[j]] < 0 }
	for a, j := range c.eff {
		if inF(j) {
			c.gF[a] = -grad[j]
		}
	}
	// P's pattern: M's, H_F's, the diagonal and each correlated level's
	// q×q block, over eff.
	tr := sparse.NewTriplet(ne)
	for a := range ne {
		tr.Add(a, a, 0)
	}
	c.corrPattern(idx, tr)
	for j := range D {
		for k := m.ColPtr[j]; k < m.ColPtr[j+1]; k++ {
			if i := m.RowIdx[k]; idx[i] >= 0 && idx[j] >= 0 {
				tr.Add(idx[i], idx[j], 0)
			}
		}
	}
	hf := sparse.NewTriplet(ne)
	for a := range ne {
		hf.Add(a, a, 0)
	}
	for j := range hp.N {
		for k := hp.ColPtr[j]; k < hp.ColPtr[j+1]; k++ {
			if i := hp.RowIdx[k]; inF(i) && inF(j) {
				hf.Add(idx[i], idx[j], hp.Val[k])
				tr.Add(idx[i], idx[j], 0)
			}
		}
	}
	if c.hF, err = hf.SymCSC(); err != nil {
		return nil, err
	}
	if c.pv, err = tr.SymCSC(); err != nil {
		return nil, err
	}
	c.pBase = make([]float64, c.pv.NNZ())
	for j := range ne {
		for k := c.hF.ColPtr[j]; k < c.hF.ColPtr[j+1]; k++ {
			c.pBase[entry(c.pv, c.hF.RowIdx[k], j)] += c.hF.Val[k]
		}
	}
	for j := range D {
		for k := m.ColPtr[j]; k < m.ColPtr[j+1]; k++ {
			if i := m.RowIdx[k]; idx[i] >= 0 && idx[j] >= 0 {
				c.mK = append(c.mK, k)
				c.mPos = append(c.mPos, entry(c.pv, idx[i], idx[j]))
			}
		}
	}
	c.corrPositions(idx)
	c.diagR = make([]int, ne)
	for a := range ne {
		c.diagR[a] = -1
		if c.tauOf[a] >= 0 && !c.corrEff[a] {
			c.diagR[a] = entry(c.pv, a, a)
		}
	}
	// The analysis depends on P's pattern alone: shared by every chain
	// (and the automatic default's counts) whose P has it.
	sym, err := shared(t, "gaussgibbs/symbolic/"+patternKey(c.pv), func() (*sparse.Symbolic, error) {
		return sparse.Analyze(c.pv, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: the analysis of the effects' precision: %w", name, err)
	}
	if err := c.fill(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if c.chol, err = sym.Factor(c.pv); err != nil {
		return nil, fmt.Errorf("%s: the effects' precision at θ0 (a fixed effect with a flat prior that no datum determines?): %w", name, err)
	}
	c.rhs, c.mean, c.work = make([]float64, ne), make([]float64, ne), make([]float64, ne)
	c.mw = make([]float64, D)
	if !hooks.corrNCOff {
		c.startCorrNC()
	}
	if !hooks.termNCOff {
		c.startTermNC()
	}
	c.lp = t.LogPrior(c.theta)
	if math.IsInf(c.lp, -1) || math.IsNaN(c.lp) {
		return nil, fmt.Errorf("%s: θ0 outside the prior's support (log prior %v)", name, c.lp)
	}
	return c, nil
}

// patternKey returns a key of a's pattern: its order, its number of
// entries and an FNV-1a hash of its column pointers and row indices. A
// Symbolic shared under it that did not have a's pattern (a hash
// collision) would make every factorisation fail with the patterns named
// (sparse.Cholesky.Refactor checks them), never factor a wrong matrix.
func patternKey(a *sparse.SymCSC) string {
	h := uint64(14695981039346656037)
	mix := func(v int) {
		for range 8 {
			h ^= uint64(v & 0xff)
			h *= 1099511628211
			v >>= 8
		}
	}
	for _, p := range a.ColPtr {
		mix(p)
	}
	for _, i := range a.RowIdx {
		mix(i)
	}
	return fmt.Sprintf("%d/%d/%016x", a.N, a.NNZ(), h)
}

// entry returns the position of entry (i, j) of a's pattern (i ≥ j).
func entry(a *sparse.SymCSC, i, j int) int {
	if i < j {
		i, j = j, i
	}
	lo, hi := a.ColPtr[j], a.ColPtr[j+1]
	k, ok := slices.BinarySearch(a.RowIdx[lo:hi], i)
	if !ok {
		panic("multilevel: entry outside the pattern")
	}
	return lo + k
}

// fill sets P's values at the chain's σ, τ and correlations.
func (c *gaussChain) fill() error {
	s := c.logSigma()
	ms := c.beta * math.Exp(-2*s)
	if c.hooks.precSigmaPow != 0 {
		ms = c.beta * math.Exp(-c.hooks.precSigmaPow*s)
	}
	copy(c.pv.Val, c.pBase)
	for k, p := range c.mPos {
		c.pv.Val[p] += ms * c.m.Val[c.mK[k]]
	}
	l, prec := -1, 0.0 // τ⁻² of the log scale θ[l], once for a run of its effects
	for a, p := range c.diagR {
		if p >= 0 {
			if j := c.tauOf[a]; j != l {
				l, prec = j, math.Exp(-2*c.theta[j])
			}
			c.pv.Val[p] += prec
		}
	}
	return c.fillCorr()
}

// logSigma returns log σ: θ's last coordinate, or 0 when σ = 1 is known.
func (c *gaussChain) logSigma() float64 {
	if c.known {
		return 0
	}
	return c.theta[c.dw]
}

// quad returns Q(w) = r₀ − 2bᵀw + wᵀMw at θ's w, in O(nnz(M)).
func (c *gaussChain) quad(theta []float64) float64 {
	w := theta[:c.dw]
	var q float64
	for j, bj := range c.b {
		q -= 2 * bj * w[j]
	}
	return c.r0 + q + c.m.Quad(w, zeros(c.mw))
}

// zeros clears x and returns it.
func zeros(x []float64) []float64 { clear(x); return x }

// gaussR returns the random effects' Gaussian log prior at θ's effects
// (up to a constant) at the chain's scales and correlations: −½Σ u²/τ²
// over the independent terms' effects and −½Σ_g u_gᵀΣ⁻¹u_g over each
// correlated factor's levels (Σ⁻¹ as fill last set it).
func (c *gaussChain) gaussR(theta []float64) float64 {
	var f float64
	for a, j := range c.eff {
		if l := c.tauOf[a]; l >= 0 && !c.corrEff[a] {
			f -= 0.5 * theta[j] * theta[j] * math.Exp(-2*theta[l])
		}
	}
	return f + c.gaussCorrR(theta)
}

// expandF returns the second-order expansion of the log prior on F at the
// centre, up to a constant: −gᵀΔ − ½ΔᵀH_FΔ, Δ = θ_F − θ̂_F.
func (c *gaussChain) expandF(theta []float64) float64 {
	d := c.work
	for a, j := range c.eff {
		d[a] = 0
		if c.tauOf[a] < 0 {
			d[a] = theta[j] - c.centre[j]
		}
	}
	var f float64
	for a, g := range c.gF {
		f -= g * d[a]
	}
	return f - 0.5*c.hF.Quad(d, zeros(c.mean))
}

// Step makes one sweep.
func (c *gaussChain) Step(rng *rand.Rand) (exactmh.Info, error) {
	acc, prob, err := c.drawW(rng)
	if err != nil {
		return exactmh.Info{}, err
	}
	if err := c.drawSigma(rng); err != nil {
		return exactmh.Info{}, err
	}
	for _, tm := range c.terms {
		if err := c.drawTau(rng, tm); err != nil {
			return exactmh.Info{}, err
		}
	}
	c.termNonCentred(rng)
	c.drawCorr(rng)
	if err := c.corrNonCentred(rng); err != nil {
		return exactmh.Info{}, err
	}
	s := c.theta[c.dw]
	u := c.n*s + 0.5*c.quad(c.theta)*math.Exp(-2*s)
	return exactmh.Info{Accepted: acc, AcceptProb: prob, LogDensity: c.lp - c.beta*u}, nil
}

// drawW is update 1: w given σ and τ.
// Where fresh, the factor and mean of the conditional at θ's scales are
// the current ones (the collapsed scale moves left them) and are reused.
func (c *gaussChain) drawW(rng *rand.Rand) (bool, float64, error) {
	if c.schur != nil && !c.fresh {
		copy(c.next, c.theta)
		if err := c.drawSchur(rng); err != nil {
			return false, 0, fmt.Errorf("GroupGibbs: the effects' precision with θ[%d]'s levels eliminated: %w", c.schur.tau, err)
		}
	} else {
		if !c.fresh {
			if err := c.conditional(c.chol, c.mean); err != nil {
				return false, 0, err
			}
		}
		c.fresh = false
		c.chol.NormalInto(rng, c.rhs)
		copy(c.next, c.theta)
		for a, j := range c.eff {
			c.next[j] = c.mean[a] + c.rhs[a]
		}
	}
	lpNew := c.t.LogPrior(c.next)
	la := (lpNew - c.lp) - (c.gaussR(c.next) - c.gaussR(c.theta)) - (c.expandF(c.next) - c.expandF(c.theta))
	if math.IsNaN(la) {
		return false, 0, fmt.Errorf("GroupGibbs: the effects' prior ratio is NaN (log prior %v → %v)", c.lp, lpNew)
	}
	prob := math.Min(1, math.Exp(la))
	if la >= 0 || rng.Float64() < prob {
		copy(c.theta, c.next)
		c.lp = lpNew
		return true, prob, nil
	}
	return false, prob, nil
}

// drawSigma is update 2: log σ given w.
func (c *gaussChain) drawSigma(rng *rand.Rand) error {
	q := c.quad(c.theta)
	if !(q > 0) || math.IsInf(q, 0) {
		return fmt.Errorf("GroupGibbs: the residual sum of squares Q(w) = %v at the effects drawn: want it positive and finite", q)
	}
	v := gammaDraw(rng, c.beta*c.n/2+c.hooks.sigmaShape) / (c.beta * q / 2)
	return c.scaleMH(rng, c.dw, -0.5*math.Log(v), 0)
}

// drawTau is update 3: term tm's log τ given its effects.
func (c *gaussChain) drawTau(rng *rand.Rand, tm gaussTerm) error {
	var ss float64
	for g := range tm.levels {
		u := c.theta[tm.start+g*tm.stride]
		ss += u * u
	}
	if !(ss > 0) || math.IsInf(ss, 0) {
		return fmt.Errorf("GroupGibbs: the sum of squares of θ[%d]'s %d effects is %v: want it positive and finite", tm.logTau, tm.levels, ss)
	}
	v := gammaDraw(rng, float64(tm.levels)/2) / (ss / 2)
	sOld := c.theta[tm.logTau]
	sNew := -0.5 * math.Log(v)
	// The effects' Gaussian factor in s, e^{−Gs − Σu²e^{−2s}/2}, is the
	// proposal's: the prior ratio less it.
	g := float64(tm.levels)
	gauss := func(s float64) float64 { return -g*s - 0.5*ss*math.Exp(-2*s) }
	return c.scaleMH(rng, tm.logTau, sNew, gauss(sNew)-gauss(sOld))
}

// scaleMH accepts θ[j] = sNew with the ratio of the log prior less
// known (the part of it the proposal holds).
func (c *gaussChain) scaleMH(rng *rand.Rand, j int, sNew, known float64) error {
	if math.IsInf(sNew, 0) || math.IsNaN(sNew) {
		return fmt.Errorf("GroupGibbs: a scale's draw θ[%d] = %v", j, sNew)
	}
	old := c.theta[j]
	c.theta[j] = sNew
	lpNew := c.t.LogPrior(c.theta)
	la := lpNew - c.lp - known
	if math.IsNaN(la) {
		c.theta[j] = old
		return fmt.Errorf("GroupGibbs: θ[%d]'s prior ratio is NaN (log prior %v → %v)", j, c.lp, lpNew)
	}
	if la >= 0 || rng.Float64() < math.Exp(la) {
		c.lp = lpNew
		return nil
	}
	c.theta[j] = old
	return nil
}

// Position returns θ.
func (c *gaussChain) Position() []float64 { return c.theta }

// SetWarmup implements exactmh.WarmupAware: the Gaussian sweep adapts
// nothing.
func (c *gaussChain) SetWarmup(bool) {}

// WarmupSettled implements exactmh.WarmupSettler: every update draws from
// an exact conditional (or is an exact MH step with a fixed proposal) and
// nothing is adapted, so warmup is burn-in alone and the runner ends it
// after exactmh.MinBurnIn sweeps; the requested draws are all made
// (TestGaussSweepWarmupSettles).
func (c *gaussChain) WarmupSettled(int) bool { return true }

// gammaDraw draws from Gamma(a, 1), a > 0: Marsaglia and Tsang's method
// (ACM TOMS 26(3), 2000) for a ≥ 1, and Gamma(a + 1)·U^{1/a} below.
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
		v *= v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < x2/2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// gaussCentre returns a centre of a Gaussian multilevel model with σ
// estimated and the standard deviations of a Gaussian approximation there,
// by an EM iteration on the exact conditionals: w the conditional mean
// given σ and τ, then σ² = Q(w)/N and τ_t² = Σ_g (u_g² + v_g)/G_t (v_g the
// conditional variances, the inverse of P's diagonal), until the log
// scales move less than 10⁻³ (at most 100 rounds). It reads no datum: a
// round is one factorisation of P.
func gaussCentre(t *exactmh.Target, lay Layout, gs GaussianStatistics) (centre, sd []float64, err error) {
	_, b, r0, n := gs.GaussianStatistics()
	D := len(b)
	theta := make([]float64, D+1)
	s0 := 0.5 * math.Log(math.Max(r0, 1e-300)/float64(n))
	theta[D] = s0
	for k := range lay.NumTerms() {
		_, _, _, _, _, logTau := lay.Term(k)
		if logTau >= 0 && logTau < D {
			theta[logTau] = s0
		}
	}
	c, err := startGauss("GroupGibbs", t, lay, gs, theta, nil, gaussHooks{})
	if err != nil {
		return nil, nil, err
	}
	inv := make([]float64, len(c.eff))
	for range 100 {
		if err := t.RunContext().Err(); err != nil {
			return nil, nil, err
		}
		if err := c.fill(); err != nil {
			return nil, nil, err
		}
		if err := c.chol.Refactor(c.pv); err != nil {
			return nil, nil, fmt.Errorf("the effects' precision: %w", err)
		}
		// The conditional mean (the draw's mean; rhs as drawW's).
		ms := math.Exp(-2 * c.theta[D])
		for a, j := range c.eff {
			c.rhs[a] = ms * c.b[j]
			if c.tauOf[a] < 0 {
				c.rhs[a] -= c.gF[a]
			}
		}
		c.chol.Solve(c.mean, c.rhs, c.work)
		for a, j := range c.eff {
			c.theta[j] = c.mean[a]
		}
		c.chol.InverseDiag(inv)
		moved := 0.0
		q := c.quad(c.theta)
		sNew := 0.5 * math.Log(math.Max(q, 1e-300)/float64(n))
		moved = math.Max(moved, math.Abs(sNew-c.theta[D]))
		c.theta[D] = sNew
		for _, tm := range c.terms {
			var ss float64
			for g := range tm.levels {
				j := tm.start + g*tm.stride
				ss += c.theta[j] * c.theta[j]
			}
			for a, j := range c.eff {
				_ = j
				if c.tauOf[a] == tm.logTau {
					ss += inv[a]
				}
			}
			l := 0.5 * math.Log(math.Max(ss/float64(tm.levels), 1e-300))
			moved = math.Max(moved, math.Abs(l-c.theta[tm.logTau]))
			c.theta[tm.logTau] = l
		}
		moved = math.Max(moved, c.centreCorr(inv))
		if moved < 1e-3 {
			break
		}
	}
	sd = make([]float64, D+1)
	if err := c.fill(); err != nil {
		return nil, nil, err
	}
	if err := c.chol.Refactor(c.pv); err != nil {
		return nil, nil, fmt.Errorf("the effects' precision: %w", err)
	}
	c.chol.InverseDiag(inv)
	for a, j := range c.eff {
		sd[j] = math.Sqrt(inv[a])
	}
	sd[D] = 1 / math.Sqrt(2*float64(n))
	for _, tm := range c.terms {
		sd[tm.logTau] = 1 / math.Sqrt(2*float64(tm.levels))
	}
	for _, cf := range c.corr {
		for _, j := range cf.free {
			sd[j] = 1 / math.Sqrt(2*float64(cf.levels))
		}
	}
	for _, v := range c.theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, errors.New("the EM centre is not finite")
		}
	}
	return c.theta, sd, nil
}

// sharedGaussCentre is gaussCentre once per run (the run cache), shared
// by the chains' DefaultStart and the automatic default's choice.
func sharedGaussCentre(t *exactmh.Target, lay Layout, gs GaussianStatistics) (centre, sd []float64, err error) {
	c, err := shared(t, "multilevel/gausscentre", func() ([2][]float64, error) {
		c, sd, err := gaussCentre(t, lay, gs)
		if err != nil {
			return [2][]float64{}, fmt.Errorf("GroupGibbs: the EM centre of the Gaussian model: %w", err)
		}
		return [2][]float64{c, sd}, nil
	})
	return c[0], c[1], err
}

// chooseGauss is the automatic default's choice on a Gaussian multilevel
// model with σ estimated: GroupGibbs's exact Gibbs sweep (gaussChain),
// with no pilot — a sweep reads no datum, draws the location vector
// jointly from its conditional and σ and each τ from theirs, so no
// full-batch sampler (whose every gradient costs a pass over the
// statistics as well) can be cheaper per effective draw.
func chooseGauss(c *exactmh.Choice, p *exactmh.Posterior, t *exactmh.Target, lay Layout, gs GaussianStatistics) error {
	centre, sd, err := sharedGaussCentre(t, lay, gs)
	if err != nil {
		return err
	}
	_, _, _, n := gs.GaussianStatistics()
	c.Name, c.Kernel, c.Posterior, c.Center, c.CenterSD = "GroupGibbs", GroupGibbs{Center: centre}, p, centre, sd
	c.Reason = fmt.Sprintf("a Gaussian multilevel model with σ estimated (N = %d in sufficient statistics): GroupGibbs draws the fixed and group effects jointly from their Gaussian conditional (a sparse Cholesky factor), then σ and each τ from theirs, and each τ (and a correlated factor's Σ) again with the effects standardised by it held (a non-centred slice move: it mixes where a scale nears 0), reading no datum per sweep; no pilot needed", n)
	return nil
}

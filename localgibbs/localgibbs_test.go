// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package localgibbs

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/testgen"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// grouped is a Gaussian linear multilevel model written as a plain
// Energy: datum i reads P fixed effects and its group's effect,
// U_i = ½(y_i − x_iᵀβ − u_{g(i)})², with features of mean 0.5 so that the
// fixed effects and the group effects are correlated a posteriori.
type grouped struct {
	n, p, g int
	x, y    []float64
}

func newGrouped(n, p, g int) *grouped {
	rng := rand.New(rand.NewPCG(7, 11))
	e := &grouped{n: n, p: p, g: g, x: make([]float64, n*p), y: make([]float64, n)}
	for i := range n {
		z := 0.3 * float64(i%g-g/2)
		for j := range p {
			e.x[i*p+j] = 0.5 + rng.NormFloat64()
			z += 0.2 * float64(j+1) * e.x[i*p+j]
		}
		e.y[i] = z + rng.NormFloat64()
	}
	return e
}

func (e *grouped) Len() int { return e.n }
func (e *grouped) Dim() int { return e.p + e.g }

func (e *grouped) resid(i int, theta []float64) float64 {
	r := e.y[i] - theta[e.p+i%e.g]
	for j, v := range e.x[i*e.p : (i+1)*e.p] {
		r -= v * theta[j]
	}
	return r
}

func (e *grouped) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		r := e.resid(i, theta)
		dst[k] = 0.5 * r * r
	}
}

func (e *grouped) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		r := w[k] * e.resid(i, theta)
		for j, v := range e.x[i*e.p : (i+1)*e.p] {
			grad[j] -= r * v
		}
		grad[e.p+i%e.g] -= r
	}
}

// posterior returns the model under an isotropic N(0, 2²) prior, its exact
// posterior mean and sds, and its exact precision.
func (e *grouped) posterior(t *testing.T) (*exactmh.Posterior, []float64, []float64, *mat.SymDense) {
	t.Helper()
	prior, err := model.NewIsoGaussian(e.Dim(), 2)
	if err != nil {
		t.Fatal(err)
	}
	return e.posteriorWith(t, prior)
}

// posteriorWith is posterior under the independent Gaussian prior.
func (e *grouped) posteriorWith(t *testing.T, prior *model.Gaussian) (*exactmh.Posterior, []float64, []float64, *mat.SymDense) {
	t.Helper()
	d := e.Dim()
	q := mat.NewSymDense(d, nil)
	b := make([]float64, d)
	a := make([]float64, d)
	for i := range e.n {
		clear(a)
		copy(a, e.x[i*e.p:(i+1)*e.p])
		a[e.p+i%e.g] = 1
		for r := range d {
			b[r] += a[r] * e.y[i]
			for c := r; c < d; c++ {
				q.SetSym(r, c, q.At(r, c)+a[r]*a[c])
			}
		}
	}
	for r := range d {
		w := 1 / (prior.SD[r] * prior.SD[r])
		q.SetSym(r, r, q.At(r, r)+w)
		b[r] += w * prior.Mean[r]
	}
	var cov mat.SymDense
	var ch mat.Cholesky
	if !ch.Factorize(q) {
		t.Fatal("precision not positive definite")
	}
	if err := ch.InverseTo(&cov); err != nil {
		t.Fatal(err)
	}
	mean, sd := make([]float64, d), make([]float64, d)
	for r := range d {
		for c := range d {
			mean[r] += cov.At(r, c) * b[c]
		}
		sd[r] = math.Sqrt(cov.At(r, r))
	}
	return &exactmh.Posterior{Energy: e, Prior: prior}, mean, sd, q
}

// offLaplace returns a deliberately poor Gaussian approximation: the mean
// shifted by half a posterior sd and the precision halved, so that the
// proposals differ from the conditionals and the acceptance ratio's
// proposal terms matter.
func offLaplace(mean, sd []float64, q *mat.SymDense) *exactmh.LaplaceApprox {
	d := len(mean)
	m := make([]float64, d)
	for j := range m {
		m[j] = mean[j] + 0.5*sd[j]
	}
	h := mat.NewSymDense(d, nil)
	h.ScaleSym(0.5, q)
	return &exactmh.LaplaceApprox{Mean: m, Precision: h}
}

// TestLocalGibbsMoments: on the Gaussian multilevel model (N = 600, 2 fixed
// effects, 6 groups of 100) the kernel reads the fixed effects as global and
// the group effects as local, and its draws match the exact posterior's
// means and variances (mcmctest.CheckMoments), at the default antithetic ρ
// and with independence proposals and one global move a transition, from a
// poor approximation. Each mutant
// (a move's acceptance without its proposal's density ratio, local or
// global; stale cached energies) is caught as bias.
func TestLocalGibbsMoments(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	la := offLaplace(mean, sd, q)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Kernel{Laplace: la}.Start(tgt, mean)
	if err != nil {
		t.Fatal(err)
	}
	c := ch.(*chain)
	if len(c.global) != 2 || c.global[0] != 0 || c.global[1] != 1 || len(c.local) != 6 {
		t.Fatalf("global %v, local %v: want the 2 fixed effects global, the 6 group effects local", c.global, c.local)
	}
	for k := range c.local {
		if got := c.dataPtr[k+1] - c.dataPtr[k]; got != 100 {
			t.Fatalf("group %d reads %d data, want 100", k, got)
		}
	}
	run := func(k Kernel) error {
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 3, Init: mean})
		if err != nil {
			t.Fatal(err)
		}
		return mcmctest.CheckMoments(res, mean, sd, 4.5)
	}
	for _, k := range []Kernel{{Laplace: la}, {Laplace: la, Rho: 1e-300, GlobalMoves: 1}} {
		if err := run(k); err != nil {
			t.Errorf("ρ = %g, %d global moves: %v", k.Rho, k.GlobalMoves, err)
		}
	}
	defer func() { mutant = 0 }()
	for m := 1; m <= 3; m++ {
		mutant = m
		if err := run(Kernel{Laplace: la}); !mcmctest.ShowsBias(err) {
			t.Errorf("mutant %d not caught: %v", m, err)
		}
	}
}

// wholePrior hides a CoordinatePrior's LogPriorChange: the kernel then
// takes each local move's prior ratio from the whole log prior.
type wholePrior struct{ g *model.Gaussian }

func (w wholePrior) LogPrior(theta []float64) float64 { return w.g.LogPrior(theta) }
func (w wholePrior) AddLogPriorGradient(grad, theta []float64) {
	w.g.AddLogPriorGradient(grad, theta)
}

// TestLocalGibbsCoordinatePrior: under a prior that pins the group effects
// as firmly as their data do (N(1.5, 0.1²) against 100 data of unit
// noise; the fixed effects N(0, 2²)), the kernel's draws match the exact
// posterior's means and variances (mcmctest.CheckMoments) with the local
// moves' prior ratio taken from the prior's one-coordinate change
// (model.Gaussian, a CoordinatePrior) and from the whole log prior (the
// same prior hidden behind wholePrior), from a poor approximation; mutant
// 8, the change dropped from the local moves' acceptance, is caught as
// bias.
func TestLocalGibbsCoordinatePrior(t *testing.T) {
	e := newGrouped(600, 2, 6)
	mean, sd := make([]float64, e.Dim()), make([]float64, e.Dim())
	for j := range sd {
		sd[j] = 2
		if j >= e.p {
			mean[j], sd[j] = 1.5, 0.1
		}
	}
	prior, err := model.NewGaussian(mean, sd)
	if err != nil {
		t.Fatal(err)
	}
	p, pm, psd, q := e.posteriorWith(t, prior)
	la := offLaplace(pm, psd, q)
	run := func(p *exactmh.Posterior) error {
		res, err := exactmh.Sample(context.Background(), p, Kernel{Laplace: la}, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 3, Init: pm})
		if err != nil {
			t.Fatal(err)
		}
		return mcmctest.CheckMoments(res, pm, psd, 4.5)
	}
	whole := &exactmh.Posterior{Energy: p.Energy, Prior: wholePrior{prior}}
	for _, p := range []*exactmh.Posterior{p, whole} {
		if err := run(p); err != nil {
			t.Errorf("prior %T: %v", p.Prior, err)
		}
	}
	defer func() { mutant = 0 }()
	mutant = 8
	if err := run(p); !mcmctest.ShowsBias(err) {
		t.Errorf("mutant 8 not caught: %v", err)
	} else {
		t.Logf("mutant 8: %v", err)
	}
}

// TestLocalGibbsAllocs: a transition allocates nothing, in sampling and
// in warmup (re-centring).
func TestLocalGibbsAllocs(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	a, err := mcmctest.AllocsPerStep(Kernel{Laplace: offLaplace(mean, sd, q)}, p, mean, 50)
	if err != nil {
		t.Fatal(err)
	}
	if a != 0 {
		t.Errorf("%g allocations a step, want 0", a)
	}
	// In warmup, re-centring (a gradient pass a transition) too.
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Kernel{Laplace: offLaplace(mean, sd, q)}.Start(tgt, mean)
	if err != nil {
		t.Fatal(err)
	}
	ch.(exactmh.WarmupAware).SetWarmup(true)
	rng := rand.New(rand.NewPCG(1, 1))
	for range RecentreFrom {
		if _, err := ch.Step(rng); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(20, func() { ch.Step(rng) }); a != 0 {
		t.Errorf("warmup: %g allocations a step, want 0", a)
	}
}

// TestLocalGibbsRefuses: Start says what is missing.
func TestLocalGibbsRefuses(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kernel{{}, {Laplace: offLaplace(mean, sd, q), Rho: 1}, {Laplace: offLaplace(mean, sd, q), GlobalShare: -1}, {Laplace: offLaplace(mean, sd, q), GlobalMoves: -1}} {
		if _, err := k.Start(tgt, mean); err == nil {
			t.Errorf("%+v: started", k)
		}
	}
}

// TestLocalGibbsLogistic: on a multilevel logistic regression written as a
// plain Energy (testgen.CustomMultilevel: N = 400, 2 fixed effects, 4
// groups of 100; prior N(0, 3²)), a non-Gaussian posterior, the kernel's
// means and variances from a poor approximation (offLaplace of the
// Laplace approximation) match a long run of full-batch MH with the
// Crank–Nicolson proposal (the library's MH, proven on its own), and each
// mutant is caught.
func TestLocalGibbsLogistic(t *testing.T) {
	if testing.Short() {
		t.Skip("a long reference run")
	}
	e := testgen.NewCustomMultilevel(400, 2, 4)
	prior, err := model.NewIsoGaussian(6, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := &exactmh.Posterior{Energy: e, Prior: prior}
	ctx := context.Background()
	la, err := exactmh.FindLaplace(ctx, p, make([]float64, 6), nil)
	if err != nil {
		t.Fatal(err)
	}
	cn, err := la.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := exactmh.Sample(ctx, p, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 40000, Seed: 9, Init: la.Mean})
	if err != nil {
		t.Fatal(err)
	}
	s := ref.Summary()
	mean, sd := make([]float64, 6), make([]float64, 6)
	for j, v := range s.Params {
		mean[j], sd[j] = v.Mean, v.SD
	}
	run := func() error {
		res, err := exactmh.Sample(ctx, p, Kernel{Laplace: offLaplace(mean, sd, la.Precision)}, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 3, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		return mcmctest.CheckMoments(res, mean, sd, 4.5)
	}
	if err := run(); err != nil {
		t.Errorf("reference min bulk ESS %.0f: %v", s.MinESSBulk(), err)
	}
	defer func() { mutant = 0 }()
	for m := 1; m <= 3; m++ {
		mutant = m
		if err := run(); !mcmctest.ShowsBias(err) {
			t.Errorf("mutant %d not caught: %v", m, err)
		}
	}
}

// TestLocalGibbsWarmupSettles: the kernel adapts no step scale or metric,
// so an adapted warmup of 1000 transitions stops after exactmh.MinBurnIn,
// saying so (ChainResult.WarmupStop), and the requested draws are all
// made; with NoAdapt the warmup runs its whole length. The same seed gives
// the same draws.
func TestLocalGibbsWarmupSettles(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	k := Kernel{Laplace: offLaplace(mean, sd, q)}
	run := func(noAdapt bool) *exactmh.Result {
		res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 2, Warmup: 1000, Draws: 300, Seed: 5, Init: mean, NoAdapt: noAdapt})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(false)
	for _, c := range res.Chains {
		if c.Warmup.Steps != exactmh.MinBurnIn || c.WarmupStop == "" || c.Len() != 300 {
			t.Errorf("chain %d: %d warmup transitions (want %d), stop %q, %d draws (want 300)", c.Chain, c.Warmup.Steps, exactmh.MinBurnIn, c.WarmupStop, c.Len())
		}
	}
	again := run(false)
	for i, c := range res.Chains {
		for j, v := range c.Draws {
			if again.Chains[i].Draws[j] != v {
				t.Fatalf("chain %d: draws differ between two runs of the same seed at %d", i, j)
			}
		}
	}
	for _, c := range run(true).Chains {
		if c.Warmup.Steps != 1000 || c.WarmupStop != "" {
			t.Errorf("NoAdapt: chain %d: %d warmup transitions, stop %q: want 1000 and none", c.Chain, c.Warmup.Steps, c.WarmupStop)
		}
	}
}

// TestLocalGibbsRecentred: on the Gaussian multilevel model from the poor
// approximation (its mean half a posterior sd off), warmup's re-centring
// shift s of the global block approaches E[θ_G − μ(θ_L)] (clipped to
// MaxShift conditional sds), exactly known
// here (μ is linear in θ_L: s = mean_G − μ(mean_L)), as each local
// coordinate's does E[θ_j − m_j(θ_{−j})], and the draws of the
// re-centred kernel match the exact moments (TestLocalGibbsMoments runs it
// so too). Mutant 4 (the global move's density ratio taken at the
// unshifted centre) and mutant 5 (the centre moved during sampling, to the
// chain's last θ_G − μ(θ_L), with no ratio for it) and mutant 6 (the
// local moves' ratios at their unshifted centres) are caught as bias.
func TestLocalGibbsRecentred(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	la := offLaplace(mean, sd, q)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Kernel{Laplace: la}.Start(tgt, mean)
	if err != nil {
		t.Fatal(err)
	}
	c := ch.(*chain)
	// The exact s: mean_G − μ(mean_L), μ(θ_L) = m_G − H_GG⁻¹ H_GL (θ_L − m_L).
	ng := len(c.global)
	copy(c.theta, mean)
	c.shift = make([]float64, ng) // zero: mu is then μ(θ_L) at the exact means
	rng := rand.New(rand.NewPCG(1, 2))
	if _, err := c.globalMove(rng); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, ng)
	for a, j := range c.global {
		want[a] = clip(mean[j]-c.raw[a], MaxShift/math.Sqrt(c.diag[j]))
	}
	// A local coordinate's: mean_j − m_j(mean_{−j}), m_j(θ_{−j}) = m_j − Σ_l H_jl(θ_l − m_l)/H_jj.
	lwant := make([]float64, len(c.local))
	for k, j := range c.local {
		s := 0.0
		for q := c.nbPtr[j]; q < c.nbPtr[j+1]; q++ {
			s += c.nbVal[q] * (mean[c.nbIdx[q]] - la.Mean[c.nbIdx[q]])
		}
		lwant[k] = clip(mean[j]-(la.Mean[j]-s/c.diag[j]), MaxShift/math.Sqrt(c.diag[j]))
	}
	if ch, err = (Kernel{Laplace: la}).Start(tgt, mean); err != nil {
		t.Fatal(err)
	}
	c = ch.(*chain)
	c.SetWarmup(true)
	for range 3000 {
		if _, err := c.Step(rng); err != nil {
			t.Fatal(err)
		}
	}
	c.SetWarmup(false)
	for a, j := range c.global {
		if d := math.Abs(c.shift[a] - want[a]); d > 0.1*sd[j] || want[a] == 0 {
			t.Errorf("global coordinate %d: shift %.4g, want %.4g (±%.3g)", j, c.shift[a], want[a], 0.1*sd[j])
		}
	}
	for k, j := range c.local {
		if d := math.Abs(c.lshift[k] - lwant[k]); d > 0.1*sd[j] || lwant[k] == 0 {
			t.Errorf("local coordinate %d: shift %.4g, want %.4g (±%.3g)", j, c.lshift[k], lwant[k], 0.1*sd[j])
		}
	}
	frozen := append([]float64(nil), c.shift...)
	for range 50 {
		if _, err := c.Step(rng); err != nil {
			t.Fatal(err)
		}
	}
	for a := range frozen {
		if c.shift[a] != frozen[a] {
			t.Fatalf("the shift moved after warmup: %v, then %v", frozen, c.shift)
		}
	}
	run := func() error {
		res, err := exactmh.Sample(context.Background(), p, Kernel{Laplace: la}, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 3, Init: mean})
		if err != nil {
			t.Fatal(err)
		}
		return mcmctest.CheckMoments(res, mean, sd, 4.5)
	}
	if err := run(); err != nil {
		t.Errorf("re-centred: %v", err)
	}
	defer func() { mutant = 0 }()
	for m := 4; m <= 6; m++ {
		mutant = m
		if err := run(); !mcmctest.ShowsBias(err) {
			t.Errorf("mutant %d not caught: %v", m, err)
		} else {
			t.Logf("mutant %d: %v", m, err)
		}
	}
}

// customPosterior is testgen.CustomMultilevel (n data, p fixed effects, g
// groups) under an isotropic N(0, 3²) prior, as issue 43's custom row.
func customPosterior(t testing.TB, n, p, g int) *exactmh.Posterior {
	t.Helper()
	prior, err := model.NewIsoGaussian(p+g, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: testgen.NewCustomMultilevel(n, p, g), Prior: prior}
}

// TestLocalGibbsChosen: with the package imported, the automatic default
// (exactmh.Choose) pilots LocalGibbs on a custom multilevel energy (N =
// 4000, 2 fixed effects, 40 groups: 100 of 105 coordinates local, one pass a
// local sweep) and chooses it, saying why, and the same seed chooses the
// same; on the same energy with one group (every coordinate read by every
// datum) it is not piloted, saying why not.
func TestLocalGibbsChosen(t *testing.T) {
	ctx := context.Background()
	c, err := exactmh.Choose(ctx, customPosterior(t, 6000, 5, 100), &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v\n%s", c, c.PhasesText())
	if c.Name != "LocalGibbs" || !strings.Contains(c.Reason, "100 of 105 coordinates") {
		t.Errorf("chose %s: %s; want LocalGibbs, 100 of 105 coordinates local", c.Name, c.Reason)
	}
	again, err := exactmh.Choose(ctx, customPosterior(t, 6000, 5, 100), &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if again.String() != c.String() {
		t.Errorf("the same seed chose\n%v\nthen\n%v", c, again)
	}
	one, err := exactmh.Choose(ctx, customPosterior(t, 6000, 5, 1), &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range one.Candidates {
		if m.Name == "LocalGibbs" {
			found = true
			if !strings.Contains(m.Err, "not piloted") || !strings.Contains(m.Err, "0 of 6 coordinates") {
				t.Errorf("one group: LocalGibbs %+v, want not piloted: 0 of 6 coordinates local", m)
			}
		}
	}
	if !found || one.Name == "LocalGibbs" {
		t.Errorf("one group: chose %s, candidates %+v: want LocalGibbs listed, not piloted", one.Name, one.Candidates)
	}
}

// TestLocalGibbsSeeded: FromPilot carries a pilot chain's frozen
// re-centring shifts into the kernel (exactmh.PilotSeeder), refusing a
// chain still in warmup; the seeded kernel's chains make no gradient pass
// in warmup (burn-in alone) and keep the shifts fixed, and its run has the
// posterior's moments (from the poor approximation of
// TestLocalGibbsRecentred). Mutant 7 (the carried shifts left re-centring,
// unfrozen, through sampling) is caught.
func TestLocalGibbsSeeded(t *testing.T) {
	e := newGrouped(600, 2, 6)
	p, mean, sd, q := e.posterior(t)
	la := offLaplace(mean, sd, q)
	tgt, err := exactmh.NewTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	k := Kernel{Laplace: la}
	ch, err := k.Start(tgt, mean)
	if err != nil {
		t.Fatal(err)
	}
	c := ch.(*chain)
	rng := rand.New(rand.NewPCG(1, 2))
	c.SetWarmup(true)
	for range exactmh.MinBurnIn {
		if _, err := c.Step(rng); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := k.FromPilot(c); ok {
		t.Error("FromPilot took a chain still in warmup")
	}
	c.SetWarmup(false)
	kp, ok := k.FromPilot(c)
	if !ok {
		t.Fatal("FromPilot refused a pilot chain past its warmup")
	}
	seeded := kp.(Kernel)
	for a, j := range c.global {
		if seeded.Shift[j] != c.shift[a] || c.shift[a] == 0 {
			t.Errorf("global coordinate %d: carried shift %g, the pilot's %g (want equal, non-zero)", j, seeded.Shift[j], c.shift[a])
		}
	}
	for q, j := range c.local {
		if seeded.Shift[j] != c.lshift[q] {
			t.Errorf("local coordinate %d: carried shift %g, the pilot's %g", j, seeded.Shift[j], c.lshift[q])
		}
	}
	run := func() (*exactmh.Result, error) {
		res, err := exactmh.Sample(context.Background(), p, seeded, &exactmh.Settings{Chains: 4, Warmup: 200, Draws: 3000, Seed: 3, Init: mean})
		if err != nil {
			t.Fatal(err)
		}
		return res, mcmctest.CheckMoments(res, mean, sd, 4.5)
	}
	res, err := run()
	if err != nil {
		t.Errorf("seeded: %v", err)
	}
	for _, cr := range res.Chains {
		if cr.Warmup.GradEvals != 0 {
			t.Errorf("chain %d: %d gradient evaluations in warmup, want none (no re-centring)", cr.Chain, cr.Warmup.GradEvals)
		}
	}
	defer func() { mutant = 0 }()
	mutant = 7
	if _, err := run(); !mcmctest.ShowsBias(err) {
		t.Errorf("mutant 7 not caught: %v", err)
	} else {
		t.Logf("mutant 7: %v", err)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/internal/newton"
	"github.com/exactmh/exactmh/sparse"
)

// Of returns p's layout and true if p is a multilevel posterior the
// package's kernels sample (see Layout): a prior with random-effect terms
// that describes its blocks and scales (model.NewMultilevel's), sparse
// rows (SparseRowGLM), and sparse Hessians of energy and prior.
func Of(p *exactmh.Posterior) (Layout, bool) {
	lay, ok := p.Prior.(Layout)
	if !ok || lay.NumTerms() == 0 {
		return nil, false
	}
	if _, ok := p.Energy.(SparseRowGLM); !ok {
		return nil, false
	}
	if _, ok := p.Energy.(exactmh.SparseHessianer); !ok {
		return nil, false
	}
	_, ok = p.Prior.(exactmh.SparseHessianer)
	return lay, ok
}

// multilevelCenter returns a centre for GroupGibbs on a multilevel
// posterior and the standard deviations of a Gaussian approximation
// there. The joint posterior of (β, u, log τ) has no mode (its density
// grows without bound as τ → 0 with u = 0), so the centre is that of a
// Laplace-EM iteration, as lme4's fits: the mode of the effects given the
// log scales by damped Newton steps on the sparse Hessian (package
// sparse's Cholesky factorisation with a fill-reducing order: any number
// of nested or crossed factors), then for each term τ² = Σ_g(û_g² +
// v_g)/G, v_g the conditional variance of u_g (the inverse Hessian's
// diagonal), until log τ moves less than 0.01 (at most 50 rounds), then
// Newton to the mode given that τ. The standard deviations are the
// conditional ones of the effects and, for a log scale, 1/√(−∂² log p).
// It costs a few dozen passes over the data and sparse factorisations.
func multilevelCenter(ctx context.Context, t *exactmh.Target, lay Layout) (center, sd []float64, err error) {
	d := t.Dim()
	blocks := lay.Blocks()
	if len(blocks) != d {
		return nil, nil, fmt.Errorf("the prior's Blocks has %d entries, want the dimension %d", len(blocks), d)
	}
	defer t.Watch(ctx)() // its passes stop within a chunk once ctx is cancelled
	if e, ok := t.Energy().(SparseRowGLM); ok {
		// Large crossed factors: backfitting, no factorisation (backfitLevels).
		if pl := planBackfit(ctx, e, t.N(), lay, blocks, backfitLevels); pl != nil && pl.crossed {
			center, sd, _, err = backfitCenter(ctx, t, pl, lay, e)
			return center, sd, err
		}
	}
	eh := t.Energy().(exactmh.SparseHessianer)
	ph, ok := t.Prior().(exactmh.SparseHessianer)
	if !ok {
		return nil, nil, fmt.Errorf("prior %T has no sparse Hessian", t.Prior())
	}
	// The effects E (every coordinate a row holds) and their index in the
	// Newton system.
	idx := make([]int, d)
	var eff []int
	for j, b := range blocks {
		idx[j] = -1
		if b >= 0 {
			idx[j] = len(eff)
			eff = append(eff, j)
		}
	}
	m := len(eff)
	theta := make([]float64, d)
	grad := make([]float64, d)
	work := make([]float64, m)
	// obj returns −log π(θ); the energy, a pass over the data, is that of
	// the last call when the effects are the same (each round's Newton
	// step starts where the last line search ended).
	uAt, uLast := make([]float64, m), math.NaN()
	obj := func(th []float64) (float64, error) {
		same := !math.IsNaN(uLast)
		for a, j := range eff {
			same = same && uAt[a] == th[j]
		}
		if !same {
			u, err := t.TotalEnergy(th)
			if err != nil {
				return u, err
			}
			for a, j := range eff {
				uAt[a] = th[j]
			}
			uLast = u
		}
		return uLast - t.LogPrior(th), nil
	}
	var chol *sparse.Cholesky
	var pattern *sparse.SymCSC // the pattern chol was analysed for
	// hessian factorises the Hessian of −log π in the effects at θ. The
	// energy's part, a pass over the data, depends on the effects alone
	// (no row holds a log scale): each Laplace-EM round asks for it twice
	// at the same effects, once for the variances after its Newton step
	// and once for the next round's step (the scales changed, the effects
	// not), and the second is the first's.
	var he *sparse.SymCSC
	heAt := make([]float64, m)
	hessian := func() error {
		same := he != nil
		for a, j := range eff {
			same = same && heAt[a] == theta[j]
			heAt[a] = theta[j]
		}
		if !same {
			var err error
			if he, err = t.SparseHessianOf(eh, theta); err != nil {
				he = nil
				return err
			}
		}
		hp, err := t.SparseHessianOf(ph, theta)
		if err != nil {
			return err
		}
		tr := sparse.NewTriplet(m)
		for _, h := range []*sparse.SymCSC{he, hp} {
			for j := range h.N {
				if idx[j] < 0 {
					continue
				}
				for q := h.ColPtr[j]; q < h.ColPtr[j+1]; q++ {
					if r := h.RowIdx[q]; idx[r] >= 0 {
						tr.Add(idx[r], idx[j], h.Val[q])
					}
				}
			}
		}
		a, err := tr.SymCSC()
		if err != nil {
			return err
		}
		if chol != nil && chol.L() != nil && pattern != nil && pattern.SamePattern(a) {
			if err := chol.Refactor(a); err == nil {
				return nil
			}
		}
		if chol, err = sparse.Factorize(a); err != nil {
			return fmt.Errorf("the Hessian of the effects given τ: %w", err)
		}
		pattern = a
		return nil
	}
	// The Newton search on the effects given the scales (internal/newton,
	// effectsPolicy): Eval puts the point's effects into θ, where obj and
	// hessian read them; Value tries a step's effects in a copy of θ.
	full, pg := make([]float64, d), make([]float64, d)
	var cur, next newton.Point
	for _, pt := range []*newton.Point{&cur, &next} {
		pt.X, pt.G, pt.Step = make([]float64, m), make([]float64, m), make([]float64, m)
		pt.Hess = newton.FactorFuncs{FactorFunc: hessian, SolveFunc: func(dst, b []float64) { chol.Solve(dst, b, work) }}
	}
	prob := newton.Funcs{
		EvalFunc: func(pt *newton.Point) error {
			for a, j := range eff {
				theta[j] = pt.X[a]
			}
			f, err := obj(theta)
			if err != nil {
				return err
			}
			pt.F = f
			clear(grad)
			if _, err := t.TotalEnergyAndGradient(grad, theta); err != nil {
				return err
			}
			clear(pg)
			if err := t.AddLogPriorGradient(pg, theta); err != nil {
				return err
			}
			for a, j := range eff {
				pt.G[a] = grad[j] - pg[j] // ∇F
			}
			return pt.Direction()
		},
		ValueFunc: func(x []float64) (float64, error) {
			copy(full, theta)
			for a, j := range eff {
				full[j] = x[a]
			}
			return obj(full)
		},
	}
	// newtonSteps makes at most steps damped Newton steps on the effects.
	newtonSteps := func(steps int) error {
		for a, j := range eff {
			cur.X[a] = theta[j]
		}
		cur.Derived = false
		pol := effectsPolicy
		pol.MaxIterations = steps
		s := newton.Search[*newton.Point]{Problem: prob, Policy: pol}
		pt, out, err := s.Minimize(ctx, &cur, &next)
		for a, j := range eff {
			theta[j] = pt.X[a]
		}
		if out == newton.Stopped || out == newton.Failed {
			return err
		}
		return nil // converged, the steps made, or no descent along the Newton step: at the mode to rounding
	}
	variance := make([]float64, m)
	lastSaid := time.Now()
	for round := range 50 {
		if err := newtonSteps(1); err != nil {
			return nil, nil, fmt.Errorf("Laplace-EM round %d: %w", round, err)
		}
		if err := hessian(); err != nil {
			return nil, nil, fmt.Errorf("Laplace-EM round %d: %w", round, err)
		}
		chol.InverseDiag(variance)
		var moved float64
		for tm := range lay.NumTerms() {
			_, _, start, stride, levels, lt := lay.Term(tm)
			if levels == 0 {
				continue
			}
			var s float64
			for g := range levels {
				j := start + g*stride
				s += theta[j]*theta[j] + variance[idx[j]]
			}
			l := math.Max(math.Log(s/float64(levels))/2, -10) // a scale collapsing to 0: keep the centre finite
			moved = math.Max(moved, math.Abs(l-theta[lt]))
			theta[lt] = l
		}
		if moved < 1e-2 {
			break
		}
		if time.Since(lastSaid) >= 2*time.Second { // a long centre says where it is (Progress uses no Choice)
			lastSaid = time.Now()
			(*exactmh.Choice)(nil).Progress(ctx, "Laplace-EM round %d: the log scales moved up to %.3g (it stops below 0.01, at most 50 rounds)", round+1, moved)
		}
	}
	if err := newtonSteps(100); err != nil {
		return nil, nil, err
	}
	if err := hessian(); err != nil {
		return nil, nil, err
	}
	chol.InverseDiag(variance)
	sd = make([]float64, d)
	for a, j := range eff {
		sd[j] = math.Sqrt(variance[a])
	}
	hp, err := t.SparseHessianOf(ph, theta)
	if err != nil {
		return nil, nil, err
	}
	for j, b := range blocks {
		if b < 0 {
			h := hp.At(j, j)
			sd[j] = 1 / math.Sqrt(math.Max(h, 1e-12))
		}
	}
	return theta, sd, nil
}

// effectsPolicy is the Newton rule of the Laplace-EM centre on the
// effects given the scales (multilevelCenter): a trial is evaluated by
// f = −log π alone and accepted on any decrease, a refused one halved
// down to a step of 10⁻¹⁰ (below it no step descends: the mode to
// rounding); it stops where no effect's step exceeds 10⁻⁸. Near the mode
// the decrease the step predicts (half the Newton decrement) is below the
// rounding of f, a sum of N terms: no step can be seen to descend, and
// the line search would halve the step some 34 times, a pass over the
// data each. There Newton's full step is taken untested (it converges
// quadratically).
var effectsPolicy = newton.Policy{
	LineSearch: newton.Halve,
	MinStep:    1e-10,
	Noise:      func(f float64) float64 { return 1e-12 * math.Abs(f) },
	Floor:      newton.FloorFullStep,
	DecTol:     math.NaN(),
	StepTol:    1e-8,
}

// multilevelChoice is the automatic default on a multilevel posterior
// (Of): GroupGibbs around the Laplace-EM centre, piloted against
// full-batch NUTS from the same centre; the faster wins. A centre that
// cannot be found leaves NUTS alone, with the reason.
//
// A GroupGibbs transition is a sweep over every block: a probe of a few
// sweeps checks that it does not grind, then one chain runs 50 warmup
// sweeps and samples within the counted budget every pilot of the
// automatic default has (Choice.Pilot). NUTS is piloted (as Choose pilots
// it) only where its best possible ESS per unit of counted cost, two per
// transition of its passes over the data, beats GroupGibbs's rate.
func multilevelChoice(ctx context.Context, choice *exactmh.Choice, p *exactmh.Posterior, t *exactmh.Target, lay Layout, seed uint64) error {
	t0 := time.Now()
	choice.Progress(ctx, "finding the multilevel centre (Laplace-EM, N = %d, d = %d)", p.Len(), p.Dim())
	center, sd, err := multilevelCenter(ctx, t, lay)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name, k, why := multilevelNUTS(lay, nil, nil)
		choice.Name, choice.Kernel, choice.Posterior = name, k, p
		choice.Reason = "a multilevel model whose Laplace-EM centre failed (" + err.Error() + "): full-batch NUTS, the safe sampler, " + why
		return nil
	}
	if perturbCenter != nil {
		perturbCenter(center, sd)
	}
	centerTime := time.Since(t0)
	choice.Progress(ctx, "multilevel centre in %v", centerTime.Round(10*time.Millisecond))
	choice.Center, choice.CenterSD = center, sd
	var gg exactmh.Kernel = GroupGibbs{Center: center, TailMix: DefaultTailMix, Shear: 1, ShearEvery: DefaultShearEvery, ShearMaxRatio: DefaultShearMaxRatio, CondScale: true, SettleWarmup: true}
	m := exactmh.Candidate{Name: gg.Name()}
	t1 := time.Now()
	choice.Progress(ctx, "pilot: %s", m.Name)
	probe, err := choice.Sample(ctx, p, gg, &exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, Draws: 3, Seed: seed, Init: center})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.Err = err.Error()
		choice.Candidates = append(choice.Candidates, m)
		name, k, why := multilevelNUTS(lay, center, sd)
		choice.Name, choice.Kernel, choice.Posterior = name, k, p
		choice.Reason = fmt.Sprintf("a multilevel model %s cannot sample (%v): full-batch NUTS from the Laplace-EM centre, %s", m.Name, err, why)
		return nil
	}
	if why := grind(p, probe.Chains[0].Sampling, "probe", shearPasses(p, probe.Chains[0])); why != "" {
		m.Err, m.EvalsPerStep, m.Time = why, probe.Chains[0].Sampling.MeanBatch(), time.Since(t1)
		grinds(choice, p, m, lay)
		return nil
	}
	// A fixed block that the probe's sweeps show stuck beyond doubt
	// (stuckEarly) goes to the Newton proposal's pilot at once: a pilot of
	// the plain sweep would run to its budget, thousands of sweeps, to
	// find what fixedStuck then says.
	why, acc0, err := stuckEarly(ctx, choice, p, gg, seed, probe)
	if err != nil {
		return err
	}
	var c0 *exactmh.ChainResult
	if why == "" {
		var res *exactmh.Result
		m, res, err = choice.Pilot(ctx, p, gg, center, seed, 50, 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("exactmh: automatic default: %s: %w", gg.Name(), err)
		}
		c0 = res.Chains[0]
		m.EvalsPerStep = c0.Sampling.EvalsPerStep()
		choice.Progress(ctx, "pilot: %s: %.4g ESS per 10⁶ evaluations (%.3g evaluations)", m.Name, m.ESSPerCost, m.Cost)
		if why := grind(p, c0.Sampling, "pilot", shearPasses(p, c0)); why != "" {
			m.Err = why
			grinds(choice, p, m, lay)
			return nil
		}
		why = fixedStuck(c0)
		acc0 = c0.Params["block0_accept"]
	}
	if why != "" && !noJointRepilot && cnApplies(p.Len(), fixedInBlock0(lay)) {
		// Where the Newton proposal would read every datum in its sweeps
		// (no cache), first the same sweep with the fixed blocks moved by
		// Crank–Nicolson (GroupGibbs.FixedRho), its step set from the
		// independence proposals' acceptance acc0 (fixedRhoFor).
		jc := gg.(GroupGibbs)
		jc.FixedRho, jc.FixedRepeats = fixedRhoFor(acc0), cnRepeats
		choice.Progress(ctx, "pilot: %s %s; again with the fixed effects by Crank–Nicolson (ρ %.3g, %d updates a sweep)", m.Name, why, jc.FixedRho, jc.FixedRepeats)
		mc, rc, err := choice.Pilot(ctx, p, jc, center, seed, 50, 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("exactmh: automatic default: %s with Crank–Nicolson fixed blocks: %w", gg.Name(), err)
		}
		cc := rc.Chains[0]
		mc.EvalsPerStep = cc.Sampling.EvalsPerStep()
		whyC := grind(p, cc.Sampling, "pilot", shearPasses(p, cc))
		if whyC == "" {
			whyC = fixedStuck(cc)
		}
		if whyC == "" {
			m, c0, gg, why = mc, cc, jc, ""
			m.Name = gg.Name()
			choice.Progress(ctx, "pilot: %s with Crank–Nicolson fixed blocks: %.4g ESS per 10⁶ evaluations (%.3g evaluations)", m.Name, m.ESSPerCost, m.Cost)
		} else {
			why += "; with Crank–Nicolson fixed blocks it " + whyC
		}
	}
	if why != "" && noJointRepilot {
		m.Err = why
		grinds(choice, p, m, lay)
		return nil
	} else if why != "" {
		// The expansion's proposal misfits the fixed effects' conditional:
		// pilot again with the Newton proposal at the current group
		// effects (groupgibbs_newton.go).
		jg := newtonDefault(center)
		jg.NewtonEvery = newtonEveryFor(p.Len(), fixedInBlock0(lay))
		jg.TailMix, jg.CondScale = DefaultTailMix, true
		jg.Shear, jg.ShearEvery, jg.ShearMaxRatio = 1, DefaultShearEvery, DefaultShearMaxRatio
		choice.Progress(ctx, "pilot: %s %s; again with the fixed effects by a Newton proposal at the current group effects", m.Name, why)
		mj, rj, err := choice.Pilot(ctx, p, jg, center, seed, 50, 0)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("exactmh: automatic default: %s with the Newton proposal: %w", gg.Name(), err)
		}
		cj := rj.Chains[0]
		mj.EvalsPerStep = cj.Sampling.EvalsPerStep()
		whyJ := grindNewton(p, cj, jg)
		if whyJ == "" {
			whyJ = fixedStuck(cj)
		}
		if whyJ != "" {
			m.Err = why + "; with the Newton proposal it " + whyJ
			grinds(choice, p, m, lay)
			return nil
		}
		m, c0, gg = mj, cj, jg
		m.Name = gg.Name()
	}
	choice.Candidates = append(choice.Candidates, m)
	choice.Name, choice.Kernel, choice.Posterior = m.Name, gg, p
	choice.Reason = fmt.Sprintf("%s (%s, %.3g data per sweep of N = %d%s)", m.Name, m.RateReason(), m.EvalsPerStep, p.Len(), growthNote(p))
	ncName, ncKernel, ncWhy := multilevelNUTS(lay, center, sd)
	won, err := choice.PilotFullBatch(ctx, p, center, seed, m.ESSPerCost, func(ki exactmh.KernelInfo) (string, exactmh.Kernel) {
		if ki.Name == ncKernel.Name() {
			return ncName, ncKernel // centred or not, as multilevelNUTS decides
		}
		return ki.Name, ki.New(nil)
	})
	if err != nil {
		return err
	}
	if won != "" && won == ncName {
		choice.Reason += ", " + ncWhy
	}
	choice.Reason = fmt.Sprintf("%s, the highest ESS per unit of counted cost of the pilots on a multilevel model (%d random-effect terms, d = %d; from the Laplace-EM centre: the joint posterior has no mode)",
		choice.Reason, lay.NumTerms(), p.Dim())
	return nil
}

// growthNote says, for a family whose f‴ is unbounded (Poisson), that
// GroupGibbs's bound is pair-wise (groupgibbs_growth.go); "" otherwise.
func growthNote(p *exactmh.Posterior) string {
	if e, ok := p.Energy.(SparseRowGLM); ok && gibbsGrowth(e) {
		return "; its remainder bound pair-wise, f‴ growing exponentially"
	}
	return ""
}

// gibbsGrind is the data a GroupGibbs sweep may read, as a multiple of N,
// before the automatic default calls it grinding (a test hook lowers it).
var gibbsGrind = 1.0

// grind says why GroupGibbs grinds if its sweeps in tot (of the probe or
// the pilot: stage) read more than gibbsGrind·N data on average — its
// blocks decided exactly, every sweep at least a pass over the data,
// which full-batch NUTS spends on a gradient step — and "" if they do
// not.
//
// extra passes over the data a sweep are allowed on top of gibbsGrind:
// the shear moves' exact reads (shearPasses).
func grind(p *exactmh.Posterior, tot exactmh.Totals, stage string, extra float64) string {
	n := p.Len()
	if tot.Steps == 0 || tot.MeanBatch() <= (gibbsGrind+extra)*float64(n) {
		return ""
	}
	return fmt.Sprintf("grinds: its %s read %.3g data per sweep of N = %d (%.3g passes over the data)",
		stage, tot.MeanBatch(), n, tot.MeanBatch()/float64(n))
}

// gibbsFixedFloor is the acceptance of GroupGibbs's fixed-effect block
// (its Params' block0_accept) below which the automatic default does not
// hand its chains to the user. Block 0 makes fixedRepeats independence
// updates a sweep; accepted with probability α each, it stays put for a
// whole sweep with probability ρ = (1 − α)^fixedRepeats, and a chain of
// such sweeps has lag-k autocorrelation ρ^k and integrated
// autocorrelation time (1 + ρ)/(1 − ρ). The floor is the α at which that
// time is 10: a chain of the default 1,000 draws then holds a bulk ESS of
// about 100 per chain (Vehtari et al. 2021's minimum for a reliable
// R-hat), so α = 1 − (9/11)^(1/fixedRepeats) ≈ 0.065. Above it the
// pilot's ESS per second decides as for any kernel; below it the fixed
// effects (whose bulk ESS the pilot's few draws cannot measure) would
// not mix in a default run.
var gibbsFixedFloor = 1 - math.Pow(9.0/11, 1.0/fixedRepeats)

// noJointRepilot, a test hook false in every real run, makes the
// automatic default fall back from a stuck fixed block without piloting
// GroupGibbs again with the Newton proposal (TestChooseMultilevelFixedStuck).
var noJointRepilot bool

// perturbCenter, a test hook nil in every real run, moves the
// automatic default's multilevel centre before GroupGibbs is piloted
// around it (TestChooseMultilevelFixedStuck).
var perturbCenter func(center, sd []float64)

// fixedStuck says why a GroupGibbs pilot chain's fixed effects do not mix
// — block 0 accepting below gibbsFixedFloor of its proposals — or "" if
// they do (or the chain reports no block0_accept: a model without fixed
// effects).
//
// With joint moves (GroupGibbs.Joint, joint_accept α_J, joint_per_sweep
// J of them) a sweep leaves the fixed effects where they were with
// probability (1 − α)^fixedRepeats·(1 − α_J)^J, and the floor applies to
// the equivalent α of that product.
func fixedStuck(c *exactmh.ChainResult) string {
	acc, ok := c.Params["block0_accept"]
	if !ok || math.IsNaN(acc) {
		return ""
	}
	if rho, ok := c.Params["fixed_rho"]; ok && rho > 0 {
		// Crank–Nicolson updates, fixed_repeats a sweep: an accepted one
		// keeps a correlation ρ, so each leaves the block's lag-one
		// autocorrelation at 1 − α(1 − ρ); the floor applies to the
		// independence acceptance with the same autocorrelation a sweep.
		stay := math.Pow(1-acc*(1-rho), c.Params["fixed_repeats"])
		acc = 1 - math.Pow(stay, 1.0/fixedRepeats)
	} else if na, ok := c.Params["fixed_newton_accept"]; ok && !math.IsNaN(na) {
		// One Newton update in newton_every sweeps (the block's own
		// updates, whose acceptance the pilot does not report apart,
		// counted as never moving).
		stay := 1 - na/math.Max(c.Params["newton_every"], 1)
		acc = 1 - math.Pow(stay, 1.0/fixedRepeats)
	} else if ja, ok := c.Params["joint_accept"]; ok && !math.IsNaN(ja) {
		stay := math.Pow(1-acc, fixedRepeats) * math.Pow(1-ja, c.Params["joint_per_sweep"])
		acc = 1 - math.Pow(stay, 1.0/fixedRepeats)
	}
	if acc >= gibbsFixedFloor {
		return ""
	}
	sweeps := c.Warmup.Steps + c.Sampling.Steps
	return fmt.Sprintf("mixes its fixed effects too slowly: their block accepted %.3g of its %d pilot proposals (%d sweeps × %d), below the floor %.3g at which %d default draws hold a bulk ESS of about 100 (an integrated autocorrelation time of %.3g sweeps at this acceptance)",
		acc, sweeps*fixedRepeats, sweeps, fixedRepeats, gibbsFixedFloor, 1000, fixedIACT(acc))
}

// stuckSweeps is how many sweeps a round of stuckEarly's probe makes, and
// stuckLevel the chance below which it calls the fixed block stuck: the
// chance that a block accepting at gibbsFixedFloor would accept as few of
// the probe's proposals. Where that chance is below stuckMore, neither
// clear nor beyond doubt, it probes another round, at most stuckRounds.
const (
	stuckSweeps = 50
	stuckLevel  = 0.01
	stuckMore   = 0.2
	stuckRounds = 4
)

// stuckEarly says why GroupGibbs's fixed block is stuck, as fixedStuck
// would say of a whole pilot, where a short probe shows it beyond doubt;
// "" where it does not (the pilot then decides, as before). probe is the
// grinding probe, a few sweeps from the centre (where the groups are still
// at the centre, so the fixed block's expansion fits): stuckEarly runs
// stuckSweeps sweeps more from its last draw and counts their accepted
// fixed-block proposals, k of n; the block is stuck where
// P(Binomial(n, gibbsFixedFloor) ≤ k) < stuckLevel, and where that chance
// is below stuckMore it runs another round from the last draw and decides
// on the counts of all its rounds (at most stuckRounds: a sequential test
// whose chance of calling a block at the floor stuck is at most
// stuckRounds·stuckLevel; calling it stuck only pilots the Newton
// proposal). A block accepted well above the floor ends after one round.
// The decision is a function of counts, so a seed fixes it; its sweeps
// cost a few per cent of a pilot's.
func stuckEarly(ctx context.Context, choice *exactmh.Choice, p *exactmh.Posterior, gg exactmh.Kernel, seed uint64, probe *exactmh.Result) (string, float64, error) {
	c := probe.Chains[0]
	if _, _, ok := fixedAccepted(c); !ok || c.Len() == 0 {
		return "", 0, nil
	}
	init := slices.Clone(probe.Draw(0, c.Len()-1))
	var k, n int
	var pr float64
	for round := range stuckRounds {
		res, err := choice.Sample(ctx, p, gg, &exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, Draws: stuckSweeps, Seed: seed + 1 + uint64(round), Init: init})
		if err != nil {
			if ctx.Err() != nil {
				return "", 0, ctx.Err()
			}
			return "", 0, nil // the pilot will meet it and say so
		}
		kr, nr, ok := fixedAccepted(res.Chains[0])
		if !ok {
			return "", 0, nil
		}
		k, n = k+kr, n+nr
		pr = binomialCDF(k, n, gibbsFixedFloor)
		if pr < stuckLevel || pr >= stuckMore {
			break
		}
		init = slices.Clone(res.Draw(0, res.Chains[0].Len()-1))
	}
	acc := (float64(k) + 0.5) / float64(n+1)
	if pr >= stuckLevel {
		return "", acc, nil
	}
	return fmt.Sprintf("mixes its fixed effects too slowly: their block accepted %d of its %d pilot proposals (%d probe sweeps × %d), below the floor %.3g at which %d default draws hold a bulk ESS of about 100 (a block accepting at the floor accepts so few with chance %.2g)",
		k, n, n/fixedRepeats, fixedRepeats, gibbsFixedFloor, 1000, pr), acc, nil
}

// cnRepeats is the automatic default's FixedRepeats with FixedRho: on the
// crossed design at N = 10⁶ (figures/bench/multilevel_crossed.txt §11)
// the fixed effects' bulk ESS rose from 56–85 to 139–193 of 400 draws
// from 10 to 30 updates a sweep, each update reading the few data its
// thinning draws and block 0's rows of H.
const cnRepeats = 20

// cnTarget is the acceptance fixedRhoFor aims the Crank–Nicolson move at,
// and cnRhoMax the largest ρ it sets.
const (
	cnTarget = 0.3
	cnRhoMax = 0.99
)

// cnMinN is the size from which the automatic default pilots the fixed
// blocks' Crank–Nicolson move before the Newton proposal: where the
// Newton update's data do not fit its cache (newtonCacheMax) and each of
// its updates reads two passes over the data (a test hook lowers it).
var cnMinN = 0

// cnApplies reports whether the automatic default pilots the fixed
// blocks' Crank–Nicolson move on n data with q fixed effects in block 0:
// from cnMinN data if set, else where the Newton proposal would not cache
// (newtonEveryFor).
func cnApplies(n, q int) bool {
	if cnMinN > 0 {
		return n >= cnMinN
	}
	return n*(q+1) > newtonCacheMax
}

// fixedRhoFor returns the Crank–Nicolson ρ for a fixed block whose
// independence proposals accept a fraction acc. The thinned test accepts
// with probability e^{−Σ_i r_i⁺}, the remainders' changes r_i about linear
// in the step ‖θ′_m − θ_m‖ ∝ √(1 − ρ) (the independence proposal's ρ =
// 0): −log α(ρ) ≈ √(1 − ρ)·(−log acc), and α(ρ) = cnTarget at 1 − ρ =
// (log cnTarget/log acc)². On the crossed design at N = 10⁶ the rule
// predicts 0.26 at ρ = 0.9 from acc = 4/300; the move accepted 0.39.
func fixedRhoFor(acc float64) float64 {
	if !(acc > 0) {
		return cnRhoMax
	}
	if acc >= cnTarget {
		return 0.5
	}
	r := math.Log(cnTarget) / math.Log(acc)
	return math.Min(math.Max(1-r*r, 0.5), cnRhoMax)
}

// fixedAccepted returns how many of its fixed-block proposals chain c
// accepted, k of n (block0_accept of its sweeps × fixedRepeats), and
// false where it reports none (no fixed effects, or the Newton proposal's
// updates).
func fixedAccepted(c *exactmh.ChainResult) (k, n int, ok bool) {
	acc, has := c.Params["block0_accept"]
	if !has || math.IsNaN(acc) {
		return 0, 0, false
	}
	if _, nw := c.Params["fixed_newton_accept"]; nw {
		return 0, 0, false
	}
	n = (c.Warmup.Steps + c.Sampling.Steps) * fixedRepeats
	if n == 0 {
		return 0, 0, false
	}
	return int(math.Round(acc * float64(n))), n, true
}

// binomialCDF is P(X ≤ k) for X ~ Binomial(n, f), 0 < f < 1.
func binomialCDF(k, n int, f float64) float64 {
	lf, lg := math.Log(f), math.Log1p(-f)
	ln1, _ := math.Lgamma(float64(n + 1))
	var s float64
	for j := 0; j <= k && j <= n; j++ {
		a, _ := math.Lgamma(float64(j + 1))
		b, _ := math.Lgamma(float64(n - j + 1))
		s += math.Exp(ln1 - a - b + float64(j)*lf + float64(n-j)*lg)
	}
	return math.Min(s, 1)
}

// fixedIACT is the integrated autocorrelation time in sweeps of block 0
// accepting a fraction acc of its fixedRepeats updates a sweep (see
// gibbsFixedFloor).
func fixedIACT(acc float64) float64 {
	rho := math.Pow(1-acc, fixedRepeats)
	return (1 + rho) / (1 - rho)
}

// grinds makes c the fallback from a grinding GroupGibbs (its candidate
// m, Err saying why): full-batch NUTS from the centre (c.center),
// centred or not as multilevelNUTS decides, unpiloted. The reason says
// what the fallback will cost: every NUTS gradient is a pass, and a
// transition takes 2^depth − 1 of them (tree depth 3 to 10 under Stan's
// and NUTS's defaults), so a user on tall data learns before the run that
// it is slow.
func grinds(c *exactmh.Choice, p *exactmh.Posterior, m exactmh.Candidate, lay Layout) {
	c.Candidates = append(c.Candidates, m)
	name, k, why := multilevelNUTS(lay, c.Center, c.CenterSD)
	c.Name, c.Kernel, c.Posterior = name, k, p
	c.Reason = fmt.Sprintf("a multilevel model on which %s %s: full-batch NUTS from the Laplace-EM centre, the safe sampler, %s", m.Name, m.Err, why)
	c.Reason += fmt.Sprintf("; each of its gradients reads all N = %d data, so 1,000 transitions of 7 to 1,023 gradients take 7,000 to 1,023,000 passes over the data per chain", p.Len())
}

// multilevelNUTS returns full-batch NUTS for a multilevel posterior, its
// name and why it is centred or not. It is non-centred (NUTS.NonCentred,
// "NUTS-NC") where the data leave the random effects most of their prior
// variance: with the conditional standard deviations sd_j of the effects
// at the Laplace-EM centre and τ_t = e^{log τ_t} there, where the mean of
// (sd_j/τ_t)² over the effects is at least ½. A group with few data has
// u_g close to its prior N(0, τ²), and the centred posterior is a funnel
// in (u_g, log τ) whose neck one step size cannot enter; a group with many
// data pins u_g, and the non-centred z_g = u_g/τ would then be the funnel.
// Without a centre (center nil) it is non-centred: the centre fails most
// often where τ collapses toward 0, the funnel's neck. TestNonCentredFunnel
// measures both forms on a funnel. The non-centred form adapts its step
// toward an acceptance of multilevelTargetAccept.
func multilevelNUTS(lay Layout, center, sd []float64) (name string, k exactmh.NUTS, why string) {
	nc := exactmh.NUTS{NonCentred: true, TargetAccept: multilevelTargetAccept}
	if center == nil || sd == nil {
		return "NUTS-NC", nc, "non-centred (u = τ·z; no centre to tell whether the groups' data pin their effects)"
	}
	var sum float64
	var count int
	for tm := range lay.NumTerms() {
		_, _, start, stride, levels, lt := lay.Term(tm)
		tau := math.Exp(center[lt])
		for g := range levels {
			r := sd[start+g*stride] / tau
			sum += math.Min(r*r, 1e6)
			count++
		}
	}
	if count == 0 {
		return "NUTS", exactmh.NUTS{}, "centred (no random effects)"
	}
	ratio := sum / float64(count)
	if ratio >= 0.5 {
		return "NUTS-NC", nc, fmt.Sprintf("non-centred (u = τ·z): at the centre the data leave the effects %.2g of their prior variance on average, so groups with few data make the centred posterior a funnel", ratio)
	}
	return "NUTS", exactmh.NUTS{}, fmt.Sprintf("centred: at the centre the data leave the effects %.2g of their prior variance on average, so they pin the effects and the non-centred form would be the funnel", ratio)
}

// multilevelTargetAccept is the acceptance rate the default's full-batch
// non-centred NUTS adapts toward: 0.95, rstanarm's adapt_delta for
// stan_glmer, where Stan's 0.8 leaves steps too long for the narrow
// regions of a random-intercept posterior whose groups' data differ
// widely (the centred form, chosen where the data pin every group's
// effect, keeps 0.8). On
// pinnedGroupModel (one group of 2,200 data, nine of 3) NUTS-NC diverged
// in 7 of 2,000 transitions at 0.8 and none at 0.95, for 1.4 times the
// gradients (TestNonCentredPinnedTarget).
const multilevelTargetAccept = 0.95

// smallMultilevelChoice is the automatic default on a multilevel posterior
// with N < autoSmallN, where a full pass is cheap: full-batch NUTS, centred
// or not as multilevelNUTS decides at the Laplace-EM centre, the chains
// started about that centre — except where NUTS would be non-centred and
// the random terms nest (smallGibbs): GroupGibbs reading every datum
// exactly.
func smallMultilevelChoice(ctx context.Context, c *exactmh.Choice, p *exactmh.Posterior, t *exactmh.Target, lay Layout, seed uint64) error {
	center, sd, err := multilevelCenter(ctx, t, lay)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		center, sd = nil, nil
	}
	name, k, why := multilevelNUTS(lay, center, sd)
	c.Name, c.Kernel, c.Posterior, c.Center, c.CenterSD = name, k, p, center, sd
	c.Reason = fmt.Sprintf("N = %d < %d on a multilevel model: a full pass over the data is cheap, and NUTS is the best full-batch sampler, %s", p.Len(), exactmh.AutoSmallN, why)
	if center == nil || !k.NonCentred {
		return nil
	}
	return smallGibbs(ctx, c, p, center, seed)
}

// smallFreeRepeats is FreeRepeats of the small-N GroupGibbs (smallGibbs):
// the data-free moves — the nested shifts and scale moves, the log
// scales' slice updates — ten times a sweep, at O(d) each, against a
// sweep that reads every datum about a dozen times. On grouseticks
// (figures/bench/multilevel_real_small.txt) 5 repeats left log τ_INDEX at
// bulk ESS 453, 10 at 834.
const smallFreeRepeats = 10

// smallGibbsKernel is the small-N GroupGibbs: every block small
// (ExactBelow above N: each update reads its data exactly, and the scale
// moves exist for every family, a Poisson's included, reading the term's
// data exactly), the data-free moves repeated smallFreeRepeats times a
// sweep, the large-N default's tail mixture, shears and conditional
// scale moves, and its warmup ended at exactmh.MinBurnIn sweeps
// (SettleWarmup: the sweep adapts nothing; TestGroupGibbsSettles).
func smallGibbsKernel(center []float64, n int) GroupGibbs {
	return GroupGibbs{Center: center, ExactBelow: n + 1, FreeRepeats: smallFreeRepeats, TailMix: DefaultTailMix,
		Shear: 1, ShearEvery: DefaultShearEvery, ShearMaxRatio: DefaultShearMaxRatio, CondScale: true, SettleWarmup: true}
}

// smallGibbs makes c's choice GroupGibbs (smallGibbsKernel) on a small
// multilevel posterior that non-centred NUTS would sample, where a probe
// of three sweeps from the centre finds a random term nested in another
// (a nested scale move: the data pin the sums u_parent + u_child, which
// non-centred NUTS's diagonal metric cannot scale — tree depth 7–8 on
// grouseticks — and GroupGibbs moves along exactly, reading no datum) and
// stuckEarly does not find the fixed block stuck. Both are counts, so a
// seed fixes the choice. Otherwise c is left as it is (NUTS-NC).
func smallGibbs(ctx context.Context, c *exactmh.Choice, p *exactmh.Posterior, center []float64, seed uint64) error {
	gg := smallGibbsKernel(center, p.Len())
	probe, err := c.Sample(ctx, p, gg, &exactmh.Settings{Chains: 1, Warmup: exactmh.NoWarmup, Draws: 3, Seed: seed, Init: center})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.Reason += fmt.Sprintf("; not GroupGibbs: %v", err)
		return nil
	}
	ch := probe.Chains[0]
	nested := int(ch.Params["nested_scales"])
	if nested == 0 {
		return nil
	}
	why, _, err := stuckEarly(ctx, c, p, gg, seed, probe)
	if err != nil {
		return err
	}
	if why != "" {
		c.Reason += fmt.Sprintf("; not GroupGibbs, whose nested moves would suit it: it %s", why)
		return nil
	}
	per := ch.Sampling.MeanBatch()
	c.Name, c.Kernel = gg.Name(), gg
	c.Reason = fmt.Sprintf("N = %d < %d on a multilevel model whose random terms nest (%d nested scale moves): GroupGibbs reading every datum exactly (%.3g data per sweep, %.3g passes), its data-free nested shifts and scale moves %d times a sweep: the data pin the sums of nested effects, directions the diagonal metric of non-centred NUTS, the full-batch choice here, cannot scale",
		p.Len(), exactmh.AutoSmallN, nested, per, per/float64(p.Len()), smallFreeRepeats)
	return nil
}

// choose is the automatic default's multilevel path, GroupGibbs's
// KernelInfo.Choose: on a multilevel posterior (Of) with N below
// exactmh.AutoSmallN, full-batch NUTS about the Laplace-EM centre
// (smallMultilevelChoice); above it, GroupGibbs piloted against NUTS
// (multilevelChoice); on a Gaussian multilevel model with σ estimated,
// GroupGibbs's exact Gibbs sweep without pilots (chooseGauss); on a
// FullBatchEnergy, NUTS (chooseFullBatch). It returns false for any
// other posterior.
func choose(ctx context.Context, p *exactmh.Posterior, c *exactmh.Choice, seed uint64) (bool, error) {
	if fb, ok := p.Energy.(FullBatchEnergy); ok {
		if r := fb.FullBatchReason(); r != "" {
			chooseFullBatch(c, p, r)
			return true, nil
		}
	}
	if lay, gs, ok := gaussianOf(p.Energy, p.Prior); ok {
		t, err := exactmh.NewTarget(p)
		if err != nil {
			return true, err
		}
		return true, chooseGauss(c, p, t, lay, gs)
	}
	if nb, lay, base, ok := negBinOf(p.Energy, p.Prior); ok {
		t, err := exactmh.NewTarget(p)
		if err != nil {
			return true, err
		}
		return true, chooseNegBin(c, p, t, nb, lay, base)
	}
	lay, ok := Of(p)
	if !ok {
		return false, nil
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return true, err
	}
	if _, pe, logit, ok := augmentOf(p.Energy, p.Prior); ok && t.Beta() == 1 {
		if chosen, err := chooseAugment(ctx, c, p, t, lay, pe, logit); chosen || err != nil {
			return true, err
		}
	}
	if p.Len() < exactmh.AutoSmallN {
		return true, smallMultilevelChoice(ctx, c, p, t, lay, seed)
	}
	return true, multilevelChoice(ctx, c, p, t, lay, seed)
}

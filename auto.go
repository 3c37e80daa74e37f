// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/exactmh/exactmh/internal/pilotrace"
)

// Choice is what the automatic default (Sample with a nil Kernel, or
// Choose) chose and why.
type Choice struct {
	// Name names the choice: a kernel name, with "-CV" when it samples the
	// control-variate rewrite of the posterior and "-CN" when its proposal
	// is the Crank–Nicolson one around the Laplace approximation.
	Name string
	// Kernel is the kernel chosen and Posterior the posterior it samples:
	// the one given, or its ControlVariates rewrite (the same target).
	// LoadCheckpoint of an automatic run takes these two.
	Kernel    Kernel
	Posterior *Posterior
	// Reason says why, in a sentence.
	Reason string
	// Candidates are the kernels the pilots measured, best first.
	Candidates []Candidate
	// Laplace is the approximation the choice was built on (nil when the
	// posterior has no Laplace approximation: no gradient, or N small).
	Laplace *LaplaceApprox
	// Pricing says what the pilots counted and how the counts were priced
	// (pricingNote): the choice depends on the data, the model, the
	// settings and the seed alone, never on a clock.
	Pricing string
	// Time is the wall time of the whole choice: MAP, Laplace
	// approximation, control variates and pilots. It is reported only:
	// nothing is decided by it.
	Time time.Duration
	// Phases are the choice's steps in the order they ran — the MAP and
	// Laplace approximation, second-mode searches, the control variates,
	// each pilot (best first), and "other" (the tables a pilot's Start
	// builds, the choice's arithmetic) — with the passes over the data
	// each read (counted: the search's Passes, one for the control
	// variates, a pilot's Cost over N) and the process's CPU time it took
	// (else wall time). Reported only (PhasesText); String has the passes.
	Phases []struct {
		Name   string
		Passes float64
		CPU    time.Duration
	}

	// Center and CenterSD, when set, are the centre the chosen kernel is
	// built on (a multilevel model's Laplace-EM centre) and the standard
	// deviations of a Gaussian approximation there: Sample starts its
	// chains about it (centerInits).
	Center, CenterSD []float64

	// fromLaplace: the chosen kernel is built on Laplace (a -CN name), so
	// Sample starts its chains from draws of it (LaplaceInits).
	fromLaplace bool
	run         int // the transitions of the run it decides, which caps Pilot
	// caches are the run caches of the pilots, one per posterior they
	// sampled, which Sample's run of the choice continues: the bounds, the
	// alias tables over them and the bound audits (walk.audit) are built
	// once for the pilots and the run.
	caches map[*Posterior]*runCache
}

// cache returns the run cache shared by the pilots and the run on p.
func (c *Choice) cache(p *Posterior) *runCache {
	if c.caches == nil {
		c.caches = map[*Posterior]*runCache{}
	}
	if c.caches[p] == nil {
		c.caches[p] = newRunCache()
	}
	return c.caches[p]
}

// Candidate is one pilot of the automatic default.
type Candidate struct {
	Name string
	// ESSPerCost is the pilot's minimum over the coordinates of bulk and
	// tail ESS per 10⁶ units of counted cost of sampling (one chain;
	// minESS; cut by StayWarn/stay for a long stay); 0 if it failed, was
	// dropped by the race (Err says so) or never moved. A unit is one datum
	// energy evaluation (Choice.Pricing). A tail pilot's name (runPilots)
	// is the kernel's with ", ρ ≥ …": its step scale capped.
	ESSPerCost float64
	// Partial, when positive, says that ESSPerCost is estimated from this
	// many draws of a pilot that did not finish (its warmup ran past its
	// budget, or its sampling made too few draws): the latter half of the
	// draws it made, per unit of their cost. Such an estimate ranks with
	// the measured ones.
	Partial int
	// EvalsPerStep is datum energy and gradient evaluations per transition.
	EvalsPerStep float64
	// Err says why the candidate was not measured, if it was not.
	Err string
	// AtMost is, for a pilot with no ESSPerCost (stopped as unable to win,
	// or too few transitions to estimate one), a bound on it: two
	// effective draws per transition. A bound decides only when no pilot
	// has a measured or estimated ESSPerCost.
	AtMost float64
	// Cost is the pilot's counted cost, warmup included, in datum energy
	// evaluations.
	Cost float64
	// Subsample, when positive, says the pilot ran on the subsample proxy
	// of the posterior (subsampleProxy), N/Subsample data: Cost counts each
	// of its evaluations Subsample times, as the full-batch transitions it
	// stands for, and it read Cost/Subsample.
	Subsample float64
	// Predicted: ESSPerCost and EvalsPerStep are predicted from draws of
	// the Laplace approximation (predictCN), not measured by a pilot; Scale
	// is the step scale the prediction found best.
	Predicted bool
	// Time is the pilot's CPU time (of the process, where the platform
	// reports it; else wall time), warmup included: reported, never used
	// to decide.
	Time time.Duration
	// Scale is the step scale the pilot's warmup adapted (0 if it did not
	// finish it). The chosen kernel starts its own warmup there, not at a
	// default far from it: a minibatch kernel's first transitions at too
	// long a step are full passes over the data.
	Scale float64
}

// String returns the choice and its reason on one line.
func (c *Choice) String() string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.Name, c.Reason)
	for _, k := range c.Candidates {
		if k.Err != "" {
			fmt.Fprintf(&b, "; %s: %s", k.Name, k.Err)
		} else {
			fmt.Fprintf(&b, "; %s %.4g ESS per 10⁶ evaluations", k.Name, k.ESSPerCost)
			if k.Predicted {
				fmt.Fprintf(&b, " (predicted at step scale %.3g, %.3g evaluations a transition; not piloted)", k.Scale, k.EvalsPerStep)
				continue
			}
			if k.Partial > 0 {
				fmt.Fprintf(&b, " (estimated from %d draws of an unfinished pilot)", k.Partial)
			}
			fmt.Fprintf(&b, " (pilot %.3g evaluations", k.Cost)
			if k.Subsample > 0 {
				fmt.Fprintf(&b, " priced, on 1/%.3g of the data", k.Subsample)
			}
			b.WriteString(")")
		}
	}
	if c.Pricing != "" {
		fmt.Fprintf(&b, "; %s", c.Pricing)
	}
	if len(c.Phases) > 0 {
		fmt.Fprintf(&b, "; the choice read %.3g passes over the data (", c.Passes())
		for i, ph := range c.Phases {
			if ph.Name == choiceOther {
				continue
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %.3g", ph.Name, ph.Passes)
		}
		b.WriteString(")")
	}
	return b.String()
}

// choiceOther names the phase of Choice.Phases that holds the CPU time no
// other phase accounts for.
const choiceOther = "other"

// Passes returns the passes over the data the choice read, summed over
// its Phases.
func (c *Choice) Passes() float64 {
	var sum float64
	for _, ph := range c.Phases {
		sum += ph.Passes
	}
	return sum
}

// PhasesText returns the choice's Phases on one line: for each, its
// passes over the data and its CPU seconds, and the totals. Unlike
// String, it depends on the machine's load (the CPU times).
func (c *Choice) PhasesText() string {
	if c == nil || len(c.Phases) == 0 {
		return ""
	}
	var b strings.Builder
	var cpu time.Duration
	for _, ph := range c.Phases {
		cpu += ph.CPU
	}
	fmt.Fprintf(&b, "choice: %.3g passes over the data, %.3g CPU-s:", c.Passes(), cpu.Seconds())
	for i, ph := range c.Phases {
		if i > 0 {
			b.WriteString(";")
		}
		if ph.Name == choiceOther {
			fmt.Fprintf(&b, " %s %.3g CPU-s", ph.Name, ph.CPU.Seconds())
			continue
		}
		fmt.Fprintf(&b, " %s %.3g passes %.3g CPU-s", ph.Name, ph.Passes, ph.CPU.Seconds())
	}
	return b.String()
}

// phaseLog records Choice.Phases as the choice runs.
type phaseLog struct {
	c       *Choice
	last    time.Duration // the process's CPU time at the last mark
	startAt time.Time
	ok      bool // cpuTime works here
}

// newPhaseLog starts the phase log of a choice.
func newPhaseLog() *phaseLog {
	l := &phaseLog{startAt: time.Now()}
	l.last, l.ok = cpuTime()
	return l
}

// now returns the process's CPU time, or the wall time since the log
// started where the platform reports no CPU time.
func (l *phaseLog) now() time.Duration {
	if l.ok {
		if t, ok := cpuTime(); ok {
			return t
		}
	}
	return time.Since(l.startAt)
}

// passes returns the passes over the data of the phases marked so far.
func (l *phaseLog) passes() float64 {
	var sum float64
	for _, ph := range l.c.Phases {
		sum += ph.Passes
	}
	return sum
}

// mark ends a phase that read passes passes over the data.
func (l *phaseLog) mark(name string, passes float64) {
	t := l.now()
	l.add(name, passes, t-l.last)
	l.last = t
}

// add appends a phase.
func (l *phaseLog) add(name string, passes float64, cpu time.Duration) {
	l.c.Phases = append(l.c.Phases, struct {
		Name   string
		Passes float64
		CPU    time.Duration
	}{name, passes, max(cpu, 0)})
}

// finish sets c.Phases to those marked so far and after them the pilots,
// from their Candidates (best first, as Choice.Candidates are), and
// "other", the CPU time since the last mark that the pilots do not
// account for.
func (l *phaseLog) finish(c *Choice, n int, pilots []Candidate) {
	marked := l.c.Phases
	c.Phases = marked
	l.c = c
	t := l.now()
	rest := t - l.last
	for _, k := range pilots {
		if k.Time <= 0 && k.Cost <= 0 {
			continue // not piloted
		}
		l.add("pilot "+k.Name, k.Cost/float64(n)/max(k.Subsample, 1), k.Time)
		rest -= k.Time
	}
	l.add(choiceOther, 0, rest)
	l.last = t
}

// The automatic default's rules.
const (
	// autoSmallN: below this many data a full pass is cheap and NUTS, the
	// best full-batch sampler, is chosen without pilots.
	autoSmallN = 2000
	// autoPilotWarmup and autoPilotDraws size each pilot: warmup
	// transitions (fewer than minMidWarmup, so that TunaMH's comparison
	// with MH, 30 full passes, is left to the run itself), then at most
	// this many draws, within the counted budgets of auto_cost.go.
	autoPilotWarmup = 150
	autoPilotDraws  = 4000 // enough for the ESS, few enough to summarise fast
	autoPilotShare  = 8    // Choice.Pilot's pilot: at most 1/8 of the run's transitions
	// autoNUTSPasses is the fewest passes a NUTS transition takes: a tree
	// of depth 2 (3 gradients, each with its energy, about 1.5 passes).
	autoNUTSPasses = 4.5
)

// Choose is the automatic default: it decides which kernel, on which
// rewrite of p, samples p fastest, and says why. Sample with a nil Kernel
// calls it and records the Choice in the Result. docs/automatic.md gives
// the rules: a registered kernel's own path first (KernelInfo.Choose);
// NUTS for SufficientStatistics or N < 2000, MH without a gradient;
// otherwise the MAP and the Laplace approximation (FindLaplace; sparse:
// sparseChoice), a second-mode search for a non-GLM (multimodalChoice),
// ControlVariates for a GLM, and pilots of the candidates that apply,
// raced in rounds of growing counted budget until their ranking by ESS per
// unit of counted cost is clear (runPilots). Nothing is timed, so the
// choice and the draws depend on the data, the model, the settings and the
// seed alone, on any load (TestAutoDeterministicUnderLoad).
//
// For N ≥ 10⁶ it ends with runtime/debug.FreeOSMemory: the pilots' per-datum
// tables (tens of bytes a datum, gigabytes at N = 10⁸) are garbage by then,
// and a long run should not keep them resident.
func Choose(ctx context.Context, p *Posterior, s *Settings) (c *Choice, err error) {
	err = guard("Choose", func() (err error) {
		c, err = choose(ctx, p, s)
		return err
	})
	if p != nil && p.Energy != nil && p.Len() >= freeMemoryN {
		debug.FreeOSMemory()
	}
	return c, err
}

// freeMemoryN is the N from which Choose returns the pilots' memory.
const freeMemoryN = 1_000_000

// choose is Choose.
func choose(ctx context.Context, p *Posterior, s *Settings) (*Choice, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s != nil {
		ctx = withChoiceProgress(ctx, s.ChoiceProgress)
	}
	start := time.Now()
	phases := newPhaseLog()
	phases.c = &Choice{}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if s == nil {
		s = &Settings{}
	}
	set, err := s.resolve(p.Dim(), MH{})
	if err != nil {
		return nil, err
	}
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	hasGrad := t.HasGradient()
	n := p.Len()
	done := func(c *Choice) (*Choice, error) {
		if len(c.Candidates) > 0 {
			c.Pricing = pricingNote(p)
		}
		if len(phases.c.Phases) > 0 || len(c.Candidates) > 0 {
			phases.finish(c, n, c.Candidates)
		}
		c.Time = time.Since(start)
		return c, nil
	}
	// A registered kernel's own path (package multilevel's, on a
	// multilevel model, the Gaussian one with σ estimated in
	// sufficient statistics included) comes first (KernelInfo.Choose).
	if hasGrad {
		for _, ki := range Kernels() {
			if ki.Choose == nil {
				continue
			}
			c := &Choice{run: set.Chains * set.transitions()}
			if ok, err := ki.Choose(ctx, p, c, set.Seed); err != nil {
				return nil, err
			} else if ok {
				sortCandidates(c.Candidates)
				return done(c)
			}
		}
	}
	if ss, ok := p.Energy.(SufficientStatistics); ok && hasGrad {
		return done(&Choice{Name: "NUTS", Kernel: NUTS{}, Posterior: p,
			Reason: fmt.Sprintf("the energy holds sufficient statistics of N = %d data: a full-batch step costs O(d²) and reads no datum, and NUTS is the best full-batch sampler", ss.Observations())})
	}
	if n < autoSmallN || !hasGrad {
		if hasGrad {
			return done(&Choice{Name: "NUTS", Kernel: NUTS{}, Posterior: p,
				Reason: fmt.Sprintf("N = %d < %d: a full pass over the data is cheap, and NUTS is the best full-batch sampler", n, autoSmallN)})
		}
		return done(&Choice{Name: "MH", Kernel: MH{}, Posterior: p,
			Reason: "the energy has no gradient: no Laplace approximation, no NUTS; full-batch random-walk MH"})
	}
	theta0 := set.init(0, p)
	choiceProgress(ctx, "finding the MAP and the Laplace approximation (N = %d, d = %d)", n, p.Dim())
	la, err := FindLaplace(ctx, p, theta0, &MAPSettings{Tol: AutoMAPTol})
	if err != nil {
		return nil, fmt.Errorf("exactmh: automatic default: %w", err)
	}
	choiceProgress(ctx, "MAP and Laplace approximation after %d passes over the data (%v)", la.Passes, time.Since(start).Round(10*time.Millisecond))
	phases.mark("MAP and Laplace approximation", float64(la.Passes))
	// A GLM's posterior is taken as unimodal (log-concave for log-concave
	// losses and priors; Student-t regression concentrates on one mode as
	// N grows). Other energies are searched from dispersed starts: a second
	// mode makes the Laplace approximation, and everything built on it,
	// the wrong tool.
	if la.SparseFactor != nil {
		c, err := sparseChoice(ctx, p, la, set.Seed)
		if err != nil {
			return nil, err
		}
		return done(c)
	}
	if _, isGLM := p.Energy.(GLM); !isGLM {
		other, passes, err := otherMode(ctx, p, la, set.Seed)
		if err != nil {
			return nil, err
		}
		phases.mark("second-mode searches", float64(passes))
		if other != nil {
			c, err := multimodalChoice(ctx, p, la, other, set.Seed)
			if err != nil {
				return nil, err
			}
			return done(c)
		}
	}
	choice := &Choice{Laplace: la}
	var cands []autoCand
	var cvErr error
	var cv *Posterior
	var floor float64
	var fok bool
	cn, err := la.CrankNicolson()
	if err == nil {
		cv, err = controlVariatesCtx(ctx, p, la)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cvPasses := 1.0 // the rewrite's pass over the data
		if err != nil {
			cvPasses = 0 // refused: its refusals (no GLM, no bound) come before the pass
		}
		phases.mark("control variates", cvPasses)
		if err == nil {
			floor, fok = cvBatchFloor(cv, la, set.Seed)
			if fok {
				choiceProgress(ctx, "control variates: C·M ≈ %.3g at the centre (N = %d)", floor, n)
			}
			for _, ki := range withRole(autoCVCN) {
				c := cnCand(ki, "-CV-CN", cv, cn)
				if fok && minibatchDatumCost*floor >= float64(n) {
					c.skip = fmt.Sprintf("not piloted: the control-variate bound's C·M ≈ %.3g at the centre, even for a random-walk step of Laplace-whitened length %.3g from a draw of the Laplace approximation, and a datum drawn at random costs about %d of a full pass's: %.3g ≥ N = %d, a step would cost more than full-batch MH's", floor, autoFloorStep, minibatchDatumCost, minibatchDatumCost*floor, n)
				}
				cands = append(cands, c)
			}
		} else {
			cv, cvErr = nil, err
		}
	}
	proxy, w := subsampleProxy(cv)
	for _, ki := range withRole(autoCN) {
		if cn != nil {
			c := cnCand(ki, "-CN", p, cn)
			c.proxy, c.w = proxy, w
			cands = append(cands, c)
		}
	}
	if _, isGLM := p.Energy.(GLM); !isGLM {
		for _, ki := range Kernels() {
			if ki.FromLaplace == nil {
				continue
			}
			k, why, passes, err := ki.FromLaplace(ctx, p, la)
			if err != nil {
				return nil, err
			}
			phases.mark(ki.Name+": dependence pattern", passes)
			c := autoCand{name: ki.Name, post: p, k: k, laplace: true, skip: "not piloted: " + why}
			if k == nil {
				c.k = ki.New(nil)
			} else {
				c.skip, c.why = "", why
			}
			cands = append(cands, c)
		}
	}
	if c, ok := poissonCand(ctx, p, cv, cn, choice.cache); ok {
		cands = append(cands, c)
	}
	for _, ki := range withRole(autoBounded) {
		if cvErr == nil && cn != nil && p.beta() == 1 {
			// On an untempered unimodal posterior C·M grows like √N: plain
			// TunaMH cannot approach the control-variate kernels, and its
			// pilot's first transition alone can take a full pass. Whether
			// the energy has a bound is then told by its type: building one
			// (a pass over the data for a GLM's ‖x_i‖) is not worth it.
			if hasDiffBound(p.Energy) {
				cands = append(cands, autoCand{name: ki.Name, post: p, k: ki.New(nil),
					skip: "not piloted: the posterior is untempered and unimodal, where plain " + ki.Name + "'s bound C·M grows like √N and the control-variate kernels above read a few data per step"})
			}
		} else if b, err := p.diffBound(); err == nil {
			c := autoCand{name: ki.Name, post: p, k: ki.New(nil)}
			if f, ok := stepFloor(la, set.Seed, p.beta()*b.Sum(), b.M); ok && minibatchDatumCost*f >= float64(n) && !plainFloorOff {
				c.skip = fmt.Sprintf("not piloted: its bound's C·M ≈ %.3g for a step of Laplace-whitened length %.3g from a draw of the Laplace approximation, and a datum drawn at random costs about %d of a full pass's: %.3g ≥ N = %d, a step would cost more than full-batch MH's", f, autoFloorStep, minibatchDatumCost, minibatchDatumCost*f, n)
			}
			cands = append(cands, c)
		}
	}
	for _, ki := range withRole(autoFull) {
		cands = append(cands, autoCand{name: ki.Name, post: p, k: ki.New(nil), passes: ki.passes, proxy: proxy, w: w})
	}

	if fok && cn != nil && !predictOff {
		read := phases.passes()
		if race, pred := raceFloor(cands, floor, n), predictPasses(n, p.Dim()); read+race > autoChoicePasses && race > pred && read+pred <= autoChoicePasses {
			ok, err := predictChoice(ctx, choice, phases, cands, p, cv, la, cn, set.Seed, read, race)
			if err != nil {
				return nil, err
			}
			if ok {
				if cvErr != nil {
					choice.Reason += "; no control variates: " + cvErr.Error()
				}
				sortCandidates(choice.Candidates)
				return done(choice)
			}
		}
	}
	best, tailNote, err := runPilots(ctx, choice, cands, pilotInit(la, p, set.Seed), set.Seed, true)
	if err != nil {
		return nil, err
	}
	c := cands[best]
	choice.Name, choice.Kernel, choice.Posterior = c.name, c.k, c.post
	choice.fromLaplace = strings.HasSuffix(c.name, "-CN") || c.laplace // every candidate built on la moves by its Crank–Nicolson proposal, or is a FromLaplace one
	choice.Reason = fmt.Sprintf("%s of %d pilots (MAP and Laplace approximation after %d passes over the data)",
		choice.Reason, len(cands), la.Passes)
	if c.why != "" {
		choice.Reason += "; " + c.name + ": " + c.why
	}
	if tailNote != "" {
		choice.Reason += "; " + tailNote
	}
	if cvErr != nil {
		choice.Reason += "; no control variates: " + cvErr.Error()
	}
	sortCandidates(choice.Candidates)
	return done(choice)
}

// Subsample proxies: at least autoProxyMin data, and autoProxyPerDim a
// coordinate, so that the proxy's remainders, whose sum's noise grows like
// d³/(N·n), leave the shape that a full-batch kernel's mixing depends on.
var (
	autoProxyMin    = 2000
	autoProxyPerDim = 4
)

// subsampleProxy returns the posterior on which choose pilots the
// full-batch candidates, and the weight w = N/n of each of its data: the
// control-variate posterior cv with its remainders r_i read on every
// stride-th datum only, weighted N/n. Its prior holds the exact quadratic
// (or cubic) expansion of the whole energy about the MAP, so the proxy's
// Laplace approximation is the full posterior's, and the remainders' sum,
// an unbiased estimate of the full one's, keeps its mean shape to first
// order: a full-batch kernel's mixing per transition (ESS a transition, a
// NUTS tree's leapfrogs) is read from it at n/N of a pass a transition, and
// each transition priced as on the full data (N evaluations of MH, N a
// leapfrog of NUTS: pricing.data). nil where cv is not a GLM's control
// variates or N < 4·n.
func subsampleProxy(cv *Posterior) (*Posterior, float64) {
	if cv == nil {
		return nil, 0
	}
	e, ok := cv.Energy.(*cvEnergy)
	if !ok {
		return nil, 0
	}
	sub := max(autoProxyMin, autoProxyPerDim*e.d)
	if e.n < 4*sub {
		return nil, 0
	}
	s := newStridedGLM(e, e.n/sub)
	var g GLM = s
	if s.conv != nil {
		g = stridedRows{s}
	}
	w := float64(e.n) / float64(s.n)
	return &Posterior{Energy: g, Prior: cv.Prior, Beta: cv.beta() * w, Names: cv.Names}, w
}

// pilotInit returns where the pilots start: the draw of the Laplace
// approximation la from which Sample starts the run's first chain
// (LaplaceInits), not its mode. In d dimensions the mode lies √d
// approximation sds from where the posterior's mass is; a pilot started
// there first travels out, and that transient, in the few draws a pilot
// makes, reads as a slow chain: the ESS of a wide posterior's short pilots
// was underestimated several times over (figures/bench/default_rows.txt).
func pilotInit(la *LaplaceApprox, p *Posterior, seed uint64) []float64 {
	if s := LaplaceInits(&Settings{Chains: 1, Seed: seed}, la, p); s != nil && len(s.Inits) == 1 {
		return s.Inits[0]
	}
	return la.Mean
}

// autoFloorStep is the Laplace-whitened length ‖θ′ − θ‖_H of the step at
// which cvBatchFloor evaluates the control-variate bound: 2.38, the length
// of the optimal random-walk step on a d-dimensional standard Gaussian
// (a scale of 2.38/√d per coordinate; Roberts, Gelman & Gilks 1997). The
// Crank–Nicolson proposals that warmup tunes on a near-Gaussian posterior
// step further (ρ → 0: a length of about √(2d)), where C·M is larger
// still.
const autoFloorStep = 2.38

// autoFloorDraws is how many draws of the Laplace approximation
// cvBatchFloor evaluates the bound at.
const autoFloorDraws = 16

// cvBatchFloor returns the median over autoFloorDraws draws θ of the
// Laplace approximation of C·M(θ, θ′), θ′ = θ + a step of Laplace-whitened
// length autoFloorStep in a random direction, for the control-variate
// posterior cv: a floor on the expected batch of its exact minibatch
// kernels, which read at least C·M data a transition (TFMH's Poisson mean
// is C·M, TunaMH's χC²M² + C·M). Where minibatchDatumCost times it reaches
// N — a nearly separable posterior, where data with large ‖x_i‖ far from
// the decision boundary's curvature make C large (examples/fashion) — a
// minibatch step costs more than a full-batch MH step even at that short
// step, their pilots cannot beat full-batch MH, and choose does not run
// them. ok is false when cv's energy is not the control variates' own.
func cvBatchFloor(cv *Posterior, la *LaplaceApprox, seed uint64) (floor float64, ok bool) {
	if e, isCV := cv.Energy.(*cvEnergy); isCV {
		return stepFloor(la, seed, e.boundSum(), e.distance)
	}
	return 0, false
}

// stepFloor is cvBatchFloor's median of sumC·M(θ, θ′) (pilotrace.StepFloor)
// for any bound's Σ c_i and M: a plain DiffBound's (β·Σ c_i, M) floors
// plain TunaMH's batch as the control variates' floor theirs
// (TestAutoPlainBoundFloor).
func stepFloor(la *LaplaceApprox, seed uint64, sumC float64, dist func(theta, thetaNew []float64) float64) (floor float64, ok bool) {
	if la.SparseFactor != nil || la.CovChol == nil {
		return 0, false
	}
	return pilotrace.StepFloor(len(la.Mean), autoFloorDraws, seed, autoFloorStep, sumC, la.Rand, la.CovChol.At, dist), true
}

// hasDiffBound reports whether a DiffBound may be had for e without
// building it: e provides one, or is a GLM (GLMDiffBound).
func hasDiffBound(e Energy) bool {
	switch e.(type) {
	case DiffBounder, GLM:
		return true
	}
	return false
}

// autoTailCaps are the caps on the Crank–Nicolson step scale
// (CrankNicolson.MaxScale) with which runPilots pilots the chosen -CN
// kernel again: ρ ≥ e^{−1.5} ≈ 0.22 and ρ ≥ e^{−0.3} ≈ 0.74.
var autoTailCaps = [...]float64{1.5, 0.3}

// autoUncappedMargin is how many times the best capped pilot's ESS per
// second the uncapped Crank–Nicolson kernel's pilot must reach to be kept.
const autoUncappedMargin = 1.25

// cnProposal returns kernel k's proposal (Proposer) if it is a
// *CrankNicolson.
func cnProposal(k Kernel) (*CrankNicolson, bool) {
	cn, ok := kernelProposal(k).(*CrankNicolson)
	return cn, ok && cn != nil
}

// minESS is the smallest of the bulk and tail ESS over the coordinates of
// a one-chain pilot (Summary's ESSBulk and ESSTail without the rest of the
// summary: R-hat, MCSE and quantiles would double the work). The tail
// ESS, of the 5 % and 95 % quantiles' indicators, is what a chain that
// sticks in a tail its proposal reaches too rarely loses first (the
// rare-event logistic regression of examples/rare shows it), and a choice
// by bulk ESS alone does not see it.
//
// An ESS the diagnostics do not define (NaN: a coordinate that did not
// vary over a short, slow pilot) is left out, so that such a pilot is
// scored by the ESS it has, not 0 (figures/bench/auto_choice.txt, the
// custom multilevel row); NaN when none is (a chain that never moved).
func minESS(r *Result) float64 {
	m := math.NaN()
	for j := range r.Dim {
		m = pilotrace.MinDefined(m, r.Samples(j))
	}
	return m
}

// autoModeSearches is how many dispersed MAP searches look for a second
// mode of a non-GLM posterior.
const autoModeSearches = 4

// uniformDrawer is a prior whose support can be sampled uniformly
// (model.Box): otherMode starts its searches from such draws.
type uniformDrawer interface {
	Uniform(rng *rand.Rand, dst []float64)
}

// otherMode returns a mode of p other than la's, found by FindMAP from
// dispersed starts (uniform on a Box prior, θ̂ + 3·L·z otherwise), or nil.
// Modes count as distinct when ‖θ₁ − θ₂‖_H > 3 and the other's log
// density is within 20 of the best.
//
// It also returns the passes over the data its searches read.
func otherMode(ctx context.Context, p *Posterior, la *LaplaceApprox, seed uint64) (theta []float64, passes int, err error) {
	d := len(la.Mean)
	rng := rand.New(rand.NewPCG(seed, 0x6d6f646573)) // not a chain's stream
	prior := p.prior()
	start := make([]float64, d)
	z := make([]float64, d)
	for range autoModeSearches {
		if u, ok := supportOf(prior).(uniformDrawer); ok {
			u.Uniform(rng, start)
		} else {
			for j := range z {
				z[j] = 3 * rng.NormFloat64()
			}
			for j := range start {
				start[j] = la.Mean[j]
				for l := 0; l <= j; l++ {
					start[j] += la.CovChol.At(j, l) * z[l]
				}
			}
			if math.IsInf(prior.LogPrior(start), -1) {
				continue
			}
		}
		m, err := FindMAP(ctx, p, start, nil)
		if m != nil {
			passes += m.Passes
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, passes, ctx.Err()
			}
			continue // a search that fails proves nothing
		}
		if m.LogDensity < la.LogDensity-20 {
			continue
		}
		var q float64
		for a := range d {
			for b := range d {
				q += (m.Theta[a] - la.Mean[a]) * la.Precision.At(a, b) * (m.Theta[b] - la.Mean[b])
			}
		}
		if q > 9 {
			return m.Theta, passes, nil
		}
	}
	return nil, passes, nil
}

// multimodalChoice pilots the kernels that do not lean on one Laplace
// approximation — TunaMH (where the energy has a DiffBound), MH, NUTS —
// and picks the fastest.
func multimodalChoice(ctx context.Context, p *Posterior, la *LaplaceApprox, other []float64, seed uint64) (*Choice, error) {
	// The minibatch kernels first, then the full-batch ones, ending with
	// NUTS, the fallback runPilots takes when no pilot measured anything.
	var cands []autoCand
	for _, fullBatch := range []bool{false, true} {
		for _, ki := range withRole(autoMultimodal) {
			if (ki.passes > 0) != fullBatch {
				continue
			}
			if ki.NeedsDiffBound {
				if _, err := p.diffBound(); err != nil { // (no copy: only whether there is one)
					continue
				}
			}
			cands = append(cands, autoCand{name: ki.Name, post: p, k: ki.New(nil), passes: ki.passes})
		}
	}
	choice := &Choice{Laplace: la, Posterior: p}
	best, _, err := runPilots(ctx, choice, cands, la.Mean, seed, false)
	if err != nil {
		return nil, err
	}
	choice.Name, choice.Kernel = cands[best].name, cands[best].k
	choice.Reason = fmt.Sprintf("the posterior has at least two modes (%v and %v): no Laplace approximation, no control variates; %s of %d pilots",
		roundVec(la.Mean), roundVec(other), choice.Reason, len(cands))
	return choice, nil
}

// cnCand is the candidate of registered kernel ki on post with the
// Crank–Nicolson proposal cn and initial step scale 1, named ki.Name +
// suffix, as WithLaplace builds it.
func cnCand(ki KernelInfo, suffix string, post *Posterior, cn *CrankNicolson) autoCand {
	k, _ := withStep(ki.New(nil), cn, func(float64) float64 { return 1 })
	return autoCand{name: ki.Name + suffix, post: post, k: k, passes: ki.passes}
}

// autoCand is a candidate of the automatic default: a kernel on a
// posterior (the one given or its control-variate rewrite).
type autoCand struct {
	name string
	post *Posterior
	k    Kernel
	// passes, for a full-batch kernel, is how many passes over the data a
	// transition takes at least, priced in datum evaluations: its ESS per
	// unit of cost is at most 2/(passes·N) (fullBatchBound), and a pilot
	// that could not beat the best so far is skipped. For a Poisson kernel it is its expected batch
	// over N, (λ + L)/N, which does not depend on θ; 0 for the other
	// minibatch kernels.
	passes float64
	// skip, if not empty, says why the candidate is not piloted.
	skip string
	// laplace: the kernel is a KernelInfo.FromLaplace one, built on the
	// Laplace approximation, its chains started from its draws; why says
	// why it applies.
	laplace bool
	why     string
	// proxy, if not nil, is the posterior its pilots run on, each datum
	// evaluation weighing w (subsampleProxy).
	proxy *Posterior
	w     float64
}

// rateReason says how candidate m won: its ESS per unit of counted cost,
// and whether it was estimated from an unfinished pilot.
func rateReason(m Candidate) string {
	r := fmt.Sprintf("the highest ESS per 10⁶ counted evaluations (%.4g", m.ESSPerCost)
	if m.Partial > 0 {
		r += fmt.Sprintf(", estimated from %d draws of a pilot that did not finish", m.Partial)
	}
	return r + ")"
}

// roundVec returns v with 4 significant digits, for messages.
func roundVec(v []float64) string {
	parts := make([]string, len(v))
	for j, x := range v {
		parts[j] = fmt.Sprintf("%.4g", x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// sortCandidates orders pilots best first (failed ones last).
func sortCandidates(cs []Candidate) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		switch {
		case a.ESSPerCost > b.ESSPerCost:
			return -1
		case a.ESSPerCost < b.ESSPerCost:
			return 1
		}
		return 0
	})
}

// poissonCand returns the automatic default's candidate among the Poisson
// kernels, where an EnergyRange exists: on the control-variate rewrite cv
// when it has one, else on p; false when neither has one (any prior but a
// Box or a Ball). The range is built in the run cache of its posterior
// (cache), where the pilot's and the run's kernel find it. One kernel is
// piloted: PoissonMH with the Crank–Nicolson proposal cn, or, without cn,
// Poisson-MALA (TestAutoPoissonKernelsMeasure: the others lose to it). Its
// passes are its expected read per step, (λ + L)/N; where λ + L ≥ N
// (λ = 0.01·L², newPoissonCounts) — estimated from autoRangeSample data
// first on a large rewrite (estimateRange), "≈" in the reason — it is
// listed with a skip reason giving the numbers (docs/automatic.md).
func poissonCand(ctx context.Context, p, cv *Posterior, cn *CrankNicolson, cache func(*Posterior) *runCache) (autoCand, bool) {
	// The registry's Poisson candidates: with cn, the kernel that takes
	// the proposal (autoPoissonCN, PoissonMH), else the gradient one
	// (autoPoisson, Poisson-MALA).
	role := autoPoisson
	if cn != nil {
		role = autoPoissonCN
	}
	kis := withRole(role)
	if len(kis) == 0 {
		return autoCand{}, false
	}
	ki := kis[0]
	name := func(suffix string) string {
		if cn != nil {
			return ki.Name + suffix + "-CN"
		}
		return ki.Name + suffix
	}
	post, suffix := cv, "-CV"
	var r *EnergyRange
	err := errors.New("no control variates")
	if cv != nil {
		if est, m, ok := estimateRange(cv); ok {
			n := float64(cv.Len())
			if lam := poissonLambdaScale * est * est; lam+est >= autoRangeMargin*n {
				return autoCand{name: name("-CV"), post: cv, skip: fmt.Sprintf("not piloted: λ + L ≈ %.3g ≥ N = %.3g (L ≈ %.3g from the ranges of %d data, λ = 0.01·L²): a step would read more than full-batch MH",
					lam+est, n, est, m)}, true
			}
		}
		r, err = autoRange(ctx, cv, cache(cv))
	}
	if err != nil {
		post, suffix = p, ""
		if r, err = autoRange(ctx, p, cache(p)); err != nil {
			return autoCand{}, false
		}
	}
	var sumM float64
	for _, w := range r.Width {
		sumM += w
	}
	lambda := poissonLambdaScale * sumM * sumM
	n := float64(post.Len())
	c := autoCand{name: name(suffix), post: post, k: ki.New(nil), passes: (lambda + sumM) / n}
	if cn != nil {
		c.k, _ = withStep(c.k, cn, func(float64) float64 { return 1 })
	}
	if lambda+sumM >= n {
		c.skip = fmt.Sprintf("not piloted: λ + L = %.3g ≥ N = %.3g (L = %.3g, λ = 0.01·L²): a step would read more than full-batch MH", lambda+sumM, n, sumM)
	}
	return c, true
}

// poissonLambdaScale is the Poisson kernels' default LambdaScale: λ =
// 0.01·L².
const poissonLambdaScale = 0.01

// autoRangeSample is how many data estimateRange reads, and autoRangeMargin
// how far above N its estimate of λ + L must be for poissonCand to skip the
// Poisson kernels on it alone: λ = 0.01·L² grows like L², so at 10·N the
// estimate of L would have to be about 3 times too large to hide a batch
// below N.
const (
	autoRangeSample = 4096
	autoRangeMargin = 10
)

// estimateRange returns, for a posterior whose energy is the
// control-variate rewrite (cvEnergy), the tempered range total L = βΣM_i
// estimated from the remainders' ranges of m = autoRangeSample evenly
// spaced data, and ok (not ok for any other energy, or N ≤ m). The whole
// range costs tens of passes over the data: where the estimate alone rules
// the Poisson kernels out, the choice does not pay for it.
func estimateRange(p *Posterior) (sumM float64, m int, ok bool) {
	e, isCV := p.Energy.(*cvEnergy)
	if !isCV || e.n <= autoRangeSample {
		return 0, 0, false
	}
	prior, n := p.prior(), e.n
	m = autoRangeSample
	rows := newRowCursor(e)
	for k := range m {
		i := int(int64(k) * int64(n) / int64(m))
		lo, hi, err := linearRange(rows.row(i), prior)
		if err != nil {
			return 0, 0, false
		}
		_, w, err := e.remainderRange(i, lo, hi)
		if err != nil {
			return 0, 0, false
		}
		sumM += w
	}
	return p.beta() * sumM * float64(n) / float64(m), m, true
}

// autoRange returns the tempered EnergyRange of p as the Poisson kernels'
// Start finds it (energyRange with no Range given), built in cache, or
// errInterrupted once ctx is cancelled.
func autoRange(ctx context.Context, p *Posterior, cache *runCache) (*EnergyRange, error) {
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	t.cache = cache
	defer t.watch(ctx)() // its pass stops within a chunk once ctx is cancelled (TestInterruptRange)
	return energyRange("automatic default", t, nil)
}

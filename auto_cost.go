// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/internal/pilotrace"
)

// The automatic default prices its pilots by what they count, never by a
// clock, so that a seed fixes the choice, and with it the draws, on any
// load (TestAutoDeterministicUnderLoad). The unit of cost is one datum
// energy evaluation of the posterior's energy (Target counts them: Info.Evals);
// the other work a transition does is converted to it by fixed ratios.
//
// The ratios are BenchmarkDatum's (logistic regression, N = 10⁵, one core,
// rows out of cache as in real use): a datum's energy costs about
// costLinkMadds + its row length multiply-adds, and its gradient beside
// its energy about costGrad energies more (energies with the gradient at
// 1.5 to 1.6 times energies alone; figures/bench/auto_choice.txt).
const (
	// costGrad is a datum gradient evaluation (Info.GradEvals) in datum
	// energy evaluations: NUTS's "3 gradients, each with its energy, about
	// 1.5 passes" (autoNUTSPasses) prices it so too.
	costGrad = 0.5
	// costLinkMadds is the part of a datum evaluation that does not grow
	// with its row, in multiply-adds: the link (an exp and a log1p) and
	// the gather.
	costLinkMadds = 40
)

// The pilots' counted budgets, in datum energy evaluations (costs as the
// pricing counts them, Choice.Pricing).
const (
	// autoPilotWarmupCost plus autoPilotPasses passes over the data is
	// what a pilot's warmup may cost; a pilot still in warmup then is
	// scored on the draws it made (partialScore), not dropped.
	autoPilotWarmupCost = 5e7
	autoPilotPasses     = 20
	// autoPilotSampleCost, or autoPilotSamplePasses passes over the data
	// if more, is what a pilot's sampling may cost (besides its cap of
	// autoPilotDraws draws): about 0.4 CPU-s at 10–20 ns an evaluation,
	// and 50 full-batch MH transitions at any N.
	autoPilotSampleCost   = 2e7
	autoPilotSamplePasses = 50
	// autoPartialMin is the fewest draws a score is estimated from;
	// autoPartialKeep the most coordinates of a draw the guard keeps for
	// it (the first ones), autoPartialCap the most draws.
	autoPartialMin  = 20
	autoPartialKeep = 1024
	autoPartialCap  = 400
	autoPilotBytes  = 256 << 20 // the most a pilot's kept draws take
	// costPerRate: rates are ESS per this many units (10⁶ evaluations).
	costPerRate = 1e6
)

// pilotBudgetScale multiplies the warmup's and the sampling's budgets:
// tests shrink them to put pilots in the regime of a far larger problem
// (TestAutoUnfinishedPilotScored).
var pilotBudgetScale = [2]float64{1, 1}

// pilotNoPartial, set by tests, is a mutant: a pilot whose sampling made
// too few draws scores 0, not its partial estimate — the scoring under
// which a custom multilevel energy's MH-CN and TunaMH pilots lost to
// NUTS's bound (TestAutoUnfinishedPilotScored).
var pilotNoPartial bool

// plainFloorOff, set by tests, is a mutant: plain TunaMH is piloted
// whatever its bound's floor (TestAutoPlainBoundFloor).
var plainFloorOff bool

// pilotNoShortStop and pilotLateBeatStop, set by TestPilotGuard, are mutants: a warmup short of an estimate's
// transitions runs on to its budget; a pilot that cannot beat waits for pilotGuardSteps transitions to stop.
var pilotNoShortStop, pilotLateBeatStop bool

// pricing converts a pilot's counts into datum energy evaluations.
type pricing struct {
	// step is a transition's work besides its data, in evaluations: its
	// proposal (stepCost).
	step float64
	// data weighs each datum evaluation: N/n on a subsample proxy
	// (subsampleProxy), whose transitions stand for full-batch ones; 0: 1.
	data float64
}

// of returns the cost of one transition with info's counts.
func (pr pricing) of(info *Info) float64 {
	return max(pr.data, 1)*(float64(info.Evals)+costGrad*float64(info.GradEvals)) + pr.step
}

// datumMadds returns the multiply-adds of one datum evaluation of p's
// energy: costLinkMadds plus the mean length of its rows (of the first
// 64: a GLM's dense Row, a sparse row GLM's SparseRow), or plus d where
// the energy shows no rows (a user's Energy).
func datumMadds(p *Posterior) float64 {
	n := min(p.Len(), 64)
	var sum float64
	switch e := p.Energy.(type) {
	case interface {
		SparseRow(int, []int32, []float64) ([]int32, []float64)
	}:
		var cols []int32
		var vals []float64
		for i := range n {
			cols, vals = e.SparseRow(i, cols[:0], vals[:0])
			sum += float64(len(cols))
		}
	case interface{ Row(int) []float64 }:
		for i := range n {
			sum += float64(len(e.Row(i)))
		}
	default:
		return costLinkMadds + float64(p.Dim())
	}
	if n == 0 {
		return costLinkMadds
	}
	return costLinkMadds + sum/float64(n)
}

// stepCost prices kernel k's work per transition besides its data, in
// datum evaluations of p: the dense Crank–Nicolson proposal's d²
// multiply-adds (its whitened step, C⁻¹(θ − μ) and C·u′:
// precision.Dense.CrankNicolsonStep), the
// sparse one's nnz(L) + 2·nnz(H), and 2·d for any other move (a random
// walk, a leapfrog's update; NUTS's are under a thousandth of its passes).
func stepCost(p *Posterior, k Kernel) pricing {
	d := float64(p.Dim())
	madds := 2 * d
	if cn, ok := cnProposal(k); ok {
		madds = cn.fac.StepMadds()
	}
	return pricing{step: madds / datumMadds(p)}
}

// fullBatchBound returns the best ESS per costPerRate units a full-batch
// candidate of at least passes passes over the data a transition can
// reach: two effective draws a transition.
func fullBatchBound(p *Posterior, k Kernel, passes float64) float64 {
	return 2 * costPerRate / (passes*float64(p.Len()) + stepCost(p, k).step)
}

// pricingNote says, for Choice.Pricing, what the pilots counted.
func pricingNote(p *Posterior) string {
	return fmt.Sprintf("costs counted, not timed: datum energy evaluations, a datum gradient %g of one, a transition's proposal its multiply-adds over %.4g a datum evaluation (dense Crank–Nicolson d², sparse nnz(L) + 2·nnz(H), other moves 2·d); rates are ESS per 10⁶ evaluations",
		costGrad, datumMadds(p))
}

// errPilotStop is the pilot guard's signal to end a pilot chain: returned
// by its Record, it ends the chain after a whole transition, so that where
// a pilot stops depends on its counts alone.
var errPilotStop = errors.New("pilot budget reached")

// pilotGuard is the recorder of a pilot chain: it prices each transition
// (pricing), ends the warmup past its budget and the sampling past its
// own, stops a pilot that cannot beat the best pilot so far — once its warmup has cost a third of its
// budget, two effective draws a transition at its cost so far must reach beat, counting pilotGuardSteps
// before it has made them: a bound that its later transitions' costs can only lower, so the stop is the
// one the guard would make at pilotGuardSteps, decided earlier — and keeps the late warmup's and the
// first sampling draws (partialScore).
type pilotGuard struct {
	price                      pricing
	warmupBudget, sampleBudget float64
	beat                       float64 // ESS per costPerRate units to beat (0: none)
	warmup, draws              int     // warmup transitions, the most draws (0: autoPilotDraws)

	cost, warmCost, sampleCost float64
	steps                      int     // transitions made
	stopped                    float64 // the bound that stopped it (0: not stopped)
	overBudget                 bool    // the warmup ran past its budget
	short                      bool    // or would have, short of 2·autoPartialMin transitions
	sampled                    bool    // the sampling ran to its budget

	keep      int       // coordinates kept of each draw
	kept      []float64 // the first autoPartialCap draws, keep coordinates each
	keptCosts []float64 // the costs of their transitions

	// A racer's pilot pauses at its checkpoints (checkpoint; halted: the
	// race stopped it) and keeps its sampling draws (racer.score).
	next   float64
	pause  chan struct{}
	resume chan bool
	halted bool
	samp   []float64

	stall func(*Event) // pilotStallHook's
}

// pilotGuardSteps is how many transitions a pilot makes before its pace is
// trusted.
const pilotGuardSteps = 5

// newPilotGuard returns the guard of a pilot of k on p whose datum
// evaluations count w times each (w = N/n on a subsample proxy), with its
// budgets those of w·n data.
func newPilotGuard(p *Posterior, k Kernel, warmup int, beat, w float64) *pilotGuard {
	n := max(w, 1) * float64(p.Len())
	g := &pilotGuard{price: stepCost(p, k), beat: beat, warmup: warmup,
		warmupBudget: pilotBudgetScale[0] * (autoPilotWarmupCost + autoPilotPasses*n),
		sampleBudget: pilotBudgetScale[1] * max(autoPilotSampleCost, autoPilotSamplePasses*n),
		keep:         min(p.Dim(), autoPartialKeep)}
	g.price.data = w
	if pilotStallHook != nil {
		g.stall = pilotStallHook()
	}
	return g
}

func (g *pilotGuard) Init(RunInfo) error { return nil }

func (g *pilotGuard) Record(e *Event) error {
	if g.stall != nil {
		g.stall(e)
	}
	c := g.price.of(&e.Info)
	g.cost += c
	g.steps++
	if len(g.keptCosts) < autoPartialCap {
		g.kept = append(g.kept, e.Theta[:g.keep]...)
		g.keptCosts = append(g.keptCosts, c)
	}
	if !e.Warmup {
		g.sampleCost += c
		if g.pause != nil && len(g.samp) < autoPilotDraws*g.keep {
			g.samp = append(g.samp, e.Theta[:g.keep]...)
		}
		if g.sampleCost >= g.sampleBudget {
			g.sampled = true
			return errPilotStop
		}
		return g.checkpoint()
	}
	g.warmCost += c
	if e.Iteration+1 < g.warmup && g.warmCost >= g.warmupBudget {
		g.overBudget = true
		return errPilotStop
	}
	// At its cost a transition so far, a warmup whose budget holds fewer
	// than the 2·autoPartialMin transitions partialScore needs would end
	// with a bound, which ranks below any measured rate: it ends now.
	if !pilotNoShortStop && g.steps >= pilotGuardSteps && e.Iteration+1 < g.warmup && g.warmupBudget*float64(g.steps) < 2*autoPartialMin*g.warmCost {
		g.overBudget, g.short = true, true
		return errPilotStop
	}
	if g.beat > 0 && (g.steps >= pilotGuardSteps || !pilotLateBeatStop) && g.warmCost >= g.warmupBudget/3 {
		if bound := 2 * float64(max(g.steps, pilotGuardSteps)) / g.warmCost * costPerRate; bound < g.beat {
			g.stopped = bound
			return errPilotStop
		}
	}
	return g.checkpoint()
}

// checkpoint pauses a racing pilot whose cost has reached its next
// checkpoint until the race resumes or stops it.
func (g *pilotGuard) checkpoint() error {
	if g.pause == nil || g.cost < g.next {
		return nil
	}
	g.pause <- struct{}{}
	if !<-g.resume {
		g.halted = true
		return errPilotStop
	}
	return nil
}

// partialScore returns the minimum bulk or tail ESS (ess) per costPerRate
// units (rate) of the latter half of the draws the guard kept (of its
// first autoPartialCap transitions), and how many there are; 0s when
// fewer than autoPartialMin (rate 0 with m when no coordinate's ESS is
// defined). It scores a pilot that did not finish on the same footing as
// the others, over draws partly still under adaptation.
func (g *pilotGuard) partialScore() (rate, ess float64, draws int) {
	all := len(g.keptCosts)
	from := all / 2
	m := all - from
	var cost float64
	for _, c := range g.keptCosts[from:] {
		cost += c
	}
	if m < autoPartialMin || !(cost > 0) {
		return 0, 0, 0
	}
	ess = pilotrace.KeptESS(g.kept[from*g.keep:], g.keep)
	if math.IsNaN(ess) {
		return 0, 0, m // a chain that never moved: 0, as pilot scores one
	}
	return ess / cost * costPerRate, ess, m
}

// pilotOut is what a pilot measured.
type pilotOut struct {
	res *Result
	// rate is the minimum bulk or tail ESS per costPerRate units of the
	// pilot's sampling, or, when partial > 0, of the partial draws
	// (partialScore); atMost a bound on it for a pilot with no rate.
	rate, atMost float64
	ess          float64 // the ESS rate is from (before a stay's cut)
	partial      int
	evals        float64 // datum energy and gradient evaluations per sampling transition
	scale        float64 // the step scale its warmup adapted (0: none)
	cost         float64 // what the whole pilot cost, in evaluations
	steps        int
	cpu          time.Duration // reported only
}

// pilot runs k on p for one chain from init — warmup transitions, then up
// to autoPilotDraws draws within its sampling budget — and returns its
// minimum bulk or tail ESS per costPerRate counted evaluations of sampling
// (a longest stay over diagnostics.StayWarn transitions cuts the ESS by
// StayWarn/stay), or, for a pilot that did not finish, partialScore's
// (out.partial), or a bound, out.atMost, with an error; a pilot that
// cannot beat beat is stopped as soon as its warmup shows it. Budgets and
// costs are counted (pilotGuard; docs/automatic.md), never timed.
func pilot(ctx context.Context, p *Posterior, k Kernel, init []float64, seed uint64, warmup int, beat float64, cache *runCache) (out pilotOut, err error) {
	return runPilot(ctx, p, k, init, seed, warmup, newPilotGuard(p, k, warmup, beat, 1), cache)
}

// runPilot is pilot with its guard given (a racer's, which pauses at
// checkpoints).
func runPilot(ctx context.Context, p *Posterior, k Kernel, init []float64, seed uint64, warmup int, guard *pilotGuard, cache *runCache) (out pilotOut, err error) {
	beat := guard.beat
	cpu0, cpuOK := cpuTime()
	t0 := time.Now()
	// At most autoPilotDraws transitions, each kept while their draws fit
	// in autoPilotBytes, else every thin-th (a crossed multilevel model at
	// N = 10⁸, d = 110,006, would keep 3.5 GB): O(1) memory in d.
	draws := cmp.Or(guard.draws, autoPilotDraws)
	thin := max(1, (draws*8*p.Dim()+autoPilotBytes-1)/autoPilotBytes)
	res, err := sample(ctx, p, k, &Settings{Chains: 1, Warmup: warmup, Draws: draws / thin, Thin: thin, Seed: seed, Init: init, Recorder: guard}, nil, cache)
	if cpu1, ok := cpuTime(); ok && cpuOK {
		out.cpu = cpu1 - cpu0
	} else {
		out.cpu = time.Since(t0)
	}
	out.res, out.cost, out.steps = res, guard.cost, guard.steps
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if err != nil && !errors.Is(err, errPilotStop) {
		return out, err
	}
	if guard.stopped > 0 {
		out.atMost = guard.stopped
		return out, fmt.Errorf("stopped after %d warmup transitions costing %.3g evaluations: at most ≈ %.4g ESS per 10⁶ evaluations (a bound), below the best pilot's %.4g",
			guard.steps, guard.warmCost, guard.stopped, beat)
	}
	if res == nil || len(res.Chains) == 0 || guard.steps == 0 {
		return out, errors.New("no transition")
	}
	c := res.Chains[0]
	if out.scale = c.Scale; !(out.scale > 0) || math.IsInf(out.scale, 0) {
		out.scale = 0
	}
	if guard.overBudget || (guard.halted && c.Len() == 0) {
		out.scale = 0 // not adapted
	}
	tot := c.Sampling
	if !guard.overBudget && c.Len() >= autoPartialMin && tot.Steps > 0 && guard.sampleCost > 0 {
		out.evals = float64(tot.Evals+tot.GradEvals) / float64(tot.Steps)
		ess := minESS(res)
		if math.IsNaN(ess) {
			return out, nil // a chain that never moved: 0
		}
		out.ess = ess
		if stay, _ := longestStay(res, c.Len()); stay > diagnostics.StayWarn {
			ess *= diagnostics.StayWarn / float64(stay)
		}
		out.rate = ess / guard.sampleCost * costPerRate
		return out, nil
	}
	if pilotNoPartial && !guard.overBudget {
		return out, nil
	}
	if rate, ess, m := guard.partialScore(); m > 0 {
		out.rate, out.ess, out.partial = rate, ess, m
		return out, nil
	}
	out.atMost = 2 * float64(guard.steps) / guard.cost * costPerRate
	if guard.short {
		return out, fmt.Errorf("stopped after %d warmup transitions costing %.3g evaluations: its warmup budget %.3g holds fewer than the %d transitions an estimate needs; at most ≈ %.4g ESS per 10⁶ evaluations (a bound: two per transition)",
			guard.steps, guard.warmCost, guard.warmupBudget, 2*autoPartialMin, out.atMost)
	}
	if guard.overBudget {
		return out, fmt.Errorf("did not finish: %d of %d warmup transitions within %.3g evaluations; at most ≈ %.4g ESS per 10⁶ evaluations (a bound: two per transition)",
			guard.steps, warmup, guard.warmupBudget, out.atMost)
	}
	return out, fmt.Errorf("%d draws, too few to measure; at most ≈ %.4g ESS per 10⁶ evaluations (a bound: two per transition)", c.Len(), out.atMost)
}

// pilotStallHook, when set (by tests), is called at the start of each
// pilot and returns a function its recorder calls after each transition:
// TestPilotsIgnoreWallStalls stalls some pilots so, and the choice must
// not change.
var pilotStallHook func() func(*Event)

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/poisson"

	"github.com/exactmh/exactmh/internal/chainstate"
)

// TunaMH is the exact minibatch Metropolis–Hastings kernel of Zhang, Cooper
// and De Sa (2020), "Asymptotically optimal exact minibatch
// Metropolis-Hastings", Algorithm 2.
//
// It needs a DiffBound, |U_i(θ) − U_i(θ′)| ≤ c_i·M(θ, θ′) (Assumption 1,
// untempered: the kernel uses βc_i; the ready-made energies have one),
// which Start audits over all data. Per step it draws
// B ~ Poisson(χC²M² + CM) data proportional to c_i, ejects each with a
// probability that depends on its energy difference, and accepts from the
// data kept. The chain is exact for every χ > 0; χ trades batch size
// (expected χC²M² + CM) against a spectral gap within GapBound(χ)
// of full-batch MH's: exp(−1/χ − 2√(log 2/χ)) (the TunaMH paper's
// Theorem 2) or e^{−1/e}·exp(−1/(2χ)) (the auxiliary-variable framework
// paper's Prop. 6), whichever is larger.
//
// # Choosing χ
//
// TunaMH's χ trades its batch, expected χC²M² + CM, against the noise of
// its ratio estimate. The paper's rule (χC²M² < 1 in most steps,
// ChiHeuristic) collapses on concentrated posteriors, where C·M grows like
// √N: it picks χ ≈ 10⁻⁷ and a chain 100× slower than full-batch MH. So
// halfway through an adapted warmup of at least 200 transitions a chain
// whose χ is chosen (TunaMH.Chi = 0, NoChiSearch false) searches χ on a
// grid of 10^(k/4) at the adapted step scale for the largest predicted
// α·‖θ′ − θ‖² per unit of cost; the second half of warmup then adapts the
// step with χ fixed (a Crank–Nicolson chain whose scale is saturated
// before then searches there and ends its warmup: TestWarmupEarlyDecision).
// Where the search predicts an acceptance below 0.15
// there (a step past the acceptance cliff, which dual averaging can
// overshoot), it searches steps smaller by 0.7 at a time, up to 8, and
// takes the most efficient, from which the second half restarts; at the
// end of warmup the final step is checked the same way (Params
// "scale_cut": TestTunaMHChiChosen, figures/bench/tunamh_chi_seeds.txt). The prediction reads 128 data per proposal, 24
// proposals, drawn from the search's own generator (the chain's stream is
// untouched), and more data — up to 4096, or N if fewer — for a proposal
// whose 128 cannot resolve its log ratio to ±0.5: each datum's count in
// TunaMH's minibatch is Poisson, so the log-ratio estimate's mean and
// variance follow for every χ from the same sampled energy differences,
// and the acceptance is that of a normal log ratio with those moments.
// When even that cannot resolve most proposals' log ratios the search
// does not judge (TunaMH would there need batches of order (C·M·sd u)²).
// Its choice is then compared with full-batch MH (the chain runs as MH if
// MH is predicted 1.25× faster), so untempered TunaMH and TunaMH-CN
// without control variates run as MH; the README's examples/tall table
// shows what the search does with them. TunaMH-SGLD with Chi = 0 does the
// same on its Langevin proposals, each from a gradient minibatch drawn as
// the chain draws its own (without replacement), after a start from the
// heuristic on the proposal's noise alone. For either kernel, where the
// search predicts an acceptance below 0.15 even at the smallest step
// tried, warmup does not hold the step there but adapts it toward the
// kernel's own target.
type TunaMH struct {
	// Proposal draws θ′ (nil: the isotropic RandomWalk).
	Proposal Proposal
	// Scale is the initial step scale (0: 0.1); warmup adapts it unless
	// Settings.NoAdapt.
	Scale float64
	// Chi is χ > 0. Zero means: choose it by ChiRule.
	Chi float64
	// ChiRule chooses χ when Chi is 0: by default ChiHeuristic. Halfway
	// through an adapted warmup of at least 200 transitions, a search
	// replaces it with the χ that, at the adapted step scale, maximises
	// the predicted expected squared jump per datum read (see the package
	// documentation, "Choosing χ"). Params reports "chi_tuned" = 1 when it
	// did.
	ChiRule ChiRule
	// NoChiSearch keeps ChiRule's χ through warmup, as the paper does,
	// instead of the mid-warmup search.
	NoChiSearch bool
	// Bound is the difference bound, in the untempered energy's units as
	// Posterior.DiffBound returns it; the kernel multiplies it by β (nil:
	// the posterior's).
	Bound *DiffBound
	// TrustBound skips the audit of the bound at Start: every datum at θ0
	// and a few proposals from it (see the package documentation,
	// "Bounds"). Set it only for a bound known to hold; steps still check
	// every datum they draw.
	TrustBound bool
	// MaxBatch is the expected batch χC²M² + CM above which the step is a
	// full-batch MH step instead (footnote 3). Zero means N; +Inf never
	// falls back. The switch depends on M(θ, θ′) only — never on the
	// sampled B — so the chain stays exact.
	MaxBatch float64
	// Accept is the acceptance function (zero value: AcceptMetropolis,
	// min(1, r), the paper's; AcceptBarker: r/(1 + r), exact too by the
	// auxiliary-variable paper's Prop. 10).
	Accept Acceptance

	// Test hooks (export_test.go), nil in every real kernel: the
	// per-datum keep/ratio rule (nil: tunaTerm) and the weights the data
	// are drawn with (nil: c_i). The exactness tests swap in wrong ones.
	term    func(d, mi, a float64) (keep, term float64)
	weights func(c []float64) []float64
}

// ChiRule is how TunaMH chooses χ when TunaMH.Chi is zero.
type ChiRule int

const (
	// ChiHeuristic is the paper's practical rule (§5): the largest χ with
	// χC²M² < 1 in most steps — here in 90% of the proposals from the
	// current point and scale, estimated from 256 pilot proposals that
	// touch no data. It is set at Start and refreshed during warmup as the
	// scale adapts, until the mid-warmup search replaces it (or, with
	// NoChiSearch or a short warmup, until warmup ends, when it is fixed).
	ChiHeuristic ChiRule = iota
	// ChiOptimal is App. G's value χ = √(E[M]/(C·E[M²])), which minimises
	// a bound on the product of relaxation time and cost per step (the
	// paper finds the heuristic usually better), estimated the same way.
	ChiOptimal
)

// GapBound returns the best proven lower bound on the ratio of
// TunaMH's spectral gap to that of full-batch MH with the same proposal,
// for χ > 0: the larger of
//
//   - exp(−1/χ − 2√(log 2/χ)), the TunaMH paper's Theorem 2, and
//   - e^{−1/e}·exp(−1/(2χ)), the auxiliary-variable framework paper's
//     Prop. 6.
//
// Prop. 6 is the larger for χ below about 23.2 (ratios below about 0.678),
// which covers every χ the heuristic picks in practice; Theorem 2's
// constant 1 beats Prop. 6's e^{−1/e} ≈ 0.69 as χ → ∞. It returns NaN for
// χ ≤ 0 or NaN.
func (TunaMH) GapBound(chi float64) float64 {
	if !(chi > 0) {
		return math.NaN()
	}
	thm2 := math.Exp(-1/chi - 2*math.Sqrt(math.Ln2/chi))
	prop6 := math.Exp(-1/math.E - 1/(2*chi))
	return max(thm2, prop6)
}

// ChiForKappa returns the smallest χ for which GapBound guarantees a
// spectral-gap ratio of at least κ ∈ (0, 1) to full-batch MH, the smaller
// of the two χ:
//
//   - from the TunaMH paper's Theorem 2, exp(−1/χ − 2√(log 2/χ)) = κ,
//     solved exactly (its App. F): χ = (2 log 2 − log κ +
//     2√(log 2·(log 2 − log κ)))/log²κ, at most the closed form of its
//     eq. 2, 4/((1 − κ) log(1/κ));
//   - from the framework paper's Prop. 6, e^{−1/e}·exp(−1/(2χ)) = κ:
//     χ = 1/(2(log(1/κ) − 1/e)), for κ < e^{−1/e} ≈ 0.692 only.
//
// Prop. 6 gives the smaller χ for κ below about 0.678 (at κ = 0.5 it is
// 1.54 against Theorem 2's 8.41 and eq. 2's 11.5), and so about that many
// times smaller a batch χC²M² + CM for the same guarantee when C·M ≫ 1.
// It returns NaN for κ outside (0, 1).
func (TunaMH) ChiForKappa(kappa float64) float64 {
	if !(kappa > 0 && kappa < 1) {
		return math.NaN()
	}
	l := math.Log(kappa) // < 0
	chi := (2*math.Ln2 - l + 2*math.Sqrt(math.Ln2*(math.Ln2-l))) / (l * l)
	if d := -l - 1/math.E; d > 0 {
		chi = min(chi, 1/(2*d))
	}
	return chi
}

// Name returns "TunaMH", or "TunaMH (Barker)" with AcceptBarker.
func (k TunaMH) Name() string { return k.Accept.nameWith("TunaMH") }

// Exact returns true.
func (TunaMH) Exact() bool { return true }

// DefaultTargetAccept returns 0.234, random-walk Metropolis's optimal rate
// (Roberts, Gelman and Gilks 1997): TunaMH's efficiency is flat within the
// ESS estimates' noise from 0.234 to 0.45; TestTargetAcceptSweep (go test
// -run TestTargetAcceptSweep -sweep TunaMH -v .) measures bulk ESS per datum
// evaluation across target rates.
func (TunaMH) DefaultTargetAccept() float64 { return 0.234 }

// Start checks the bound and builds the chain's alias table and scratch.
func (k TunaMH) Start(t *Target, theta0 []float64) (Chain, error) {
	w, err := newWalk("TunaMH", t, k.Proposal, true, k.Scale, theta0)
	if err != nil {
		return nil, err
	}
	if err := k.Accept.check("TunaMH"); err != nil {
		return nil, err
	}
	if k.Chi < 0 || math.IsNaN(k.Chi) || math.IsInf(k.Chi, 0) {
		return nil, fmt.Errorf("TunaMH: Chi = %v, want finite > 0 (0: choose by ChiRule)", k.Chi)
	}
	if k.ChiRule != ChiHeuristic && k.ChiRule != ChiOptimal {
		return nil, fmt.Errorf("TunaMH: unknown ChiRule %d", k.ChiRule)
	}
	if k.MaxBatch < 0 || math.IsNaN(k.MaxBatch) {
		return nil, fmt.Errorf("TunaMH: MaxBatch = %v, want ≥ 0 (0: N, +Inf: never fall back)", k.MaxBatch)
	}
	b, err := diffBound("TunaMH", t, k.Bound)
	if err != nil {
		return nil, err
	}
	var batch *tunaBatch
	if err := auditWhileBuilding(t.N(), func() error {
		return w.audit(k.TrustBound, b.auditKey(), diffAudit(b))
	}, func() (err error) {
		batch, err = newTunaBatch("TunaMH", t, b, k.Chi, k.MaxBatch, k.term, k.weights)
		return err
	}); err != nil {
		return nil, err
	}
	d := t.Dim()
	c := &tunaChain{
		k: k, tunaBatch: batch, pilotBuf: make([]float64, d), rival: newMHRival(d),
		pilot: make([]float64, pilotSize), pilotSrc: rand.NewPCG(0x74756e61, 0x6d68),
	}
	c.pilotRNG = rand.New(c.pilotSrc)
	ac := &auxChain[struct{}, *tunaBatch]{walk: w, scheme: c, acc: k.Accept}
	c.walk = &ac.walk // the χ pilot proposes from the chain's position at its scale
	if c.chi == 0 {
		c.chooseChi()
		if !(c.chi > 0) || math.IsInf(c.chi, 0) {
			return nil, fmt.Errorf("TunaMH: could not choose χ from pilot proposals at θ0 (got %v): set TunaMH.Chi", c.chi)
		}
	}
	return ac, nil
}

// pilotSize is the number of pilot proposals behind ChiHeuristic and
// ChiOptimal.
const pilotSize = 256

// tunaChain is TunaMH as a scheme of the auxiliary-variable framework
// (Aux), Case 1: no ω1, the Proposal's move, ω2 the Poisson minibatch
// (tunaBatch) with its ratio estimate.
type tunaChain struct {
	k    TunaMH
	walk *walk // the auxChain's: θ, the Proposal and the scale, for the χ pilot
	*tunaBatch
	warmup      bool // χ follows the adapting scale
	warmupSteps int
	chiBefore   float64 // χ before DrawOmega1's last choice, for abandonStep
	// rival is the mid-warmup comparison with full-batch MH; when it
	// found MH faster every step is a full MH step (maxBatch −1).
	rival *mhRival
	// tuned: the mid-warmup search chose χ, which stays
	// fixed from then on.
	tuned       bool
	tunedAccept float64 // the acceptance the search predicted at its choice
	scaleCut    float64 // finalScale's factor on warmup's final step (0: none)
	unjudged    bool    // the search judged no step tried, and the chain runs as MH
	data        float64 // the last minibatch's log-ratio estimate
	info        Info    // and its cost
	// Since warmup: the steps that drew a minibatch, their batches B and
	// their C²M² + CM (Theorem 3's scale), for Params.
	steps      int
	sumB, sumT float64

	pilotSrc *rand.PCG
	pilotRNG *rand.Rand
	pilotBuf []float64
	pilot    []float64
}

// tunaBatch is TunaMH's auxiliary minibatch and ratio estimate (Algorithm
// 2, steps 2–3, with the full-MH fallback), shared by TunaMH and
// TunaMH-SGLD.
type tunaBatch struct {
	who      string
	t        *Target
	bound    *DiffBound
	draws    *boundDraws // ∝ c_i, and c_i
	sumC     float64     // C = Σc_i
	chi      float64
	maxBatch float64
	cm       float64      // C·M(θ, θ′) of the last minibatch
	full     fullEnergies // fallback steps' memo
	idx      [batchChunk]int
	diff     [batchChunk]float64
	ci       [batchChunk]float64 // c_i of the drawn idx
	seen     distinct
	term     func(d, mi, a float64) (keep, term float64) // tunaTerm but in tests
}

// newTunaBatch builds the alias table ∝ c_i. term and weights are the test
// hooks of TunaMH (nil: tunaTerm and c_i).
func newTunaBatch(who string, t *Target, b *DiffBound, chi, maxBatch float64,
	term func(d, mi, a float64) (keep, term float64), weights func([]float64) []float64) (*tunaBatch, error) {
	draws, err := newBoundDraws(who, "bound constants c_i (DiffBound.C)", b, t, true)
	if err != nil {
		return nil, err
	}
	sumC := draws.total
	if weights != nil {
		plain := b.plain()
		table, err := alias.New(weights(plain.C))
		if err != nil {
			return nil, err
		}
		draws = &boundDraws{table: table, c: plain.C, total: sumC}
	}
	if maxBatch == 0 {
		maxBatch = float64(t.N())
	}
	if term == nil {
		term = tunaTerm
	}
	return &tunaBatch{who: who, t: t, bound: b, draws: draws, sumC: sumC, chi: chi,
		maxBatch: maxBatch, seen: newDistinct(), term: term, full: newFullEnergies(t.Dim())}, nil
}

// SetWarmup implements WarmupAware: during warmup, a chosen χ follows
// the adapting scale; at the end it is fixed at the final scale.
func (c *tunaChain) SetWarmup(on bool) {
	c.warmup = on
	if !on && c.k.Chi == 0 && !c.tuned {
		c.chooseChi()
	}
}

// Params reports χ and C; "chi_tuned" = 1 with "chi_accept", the
// acceptance predicted at the choice, when warmup's search chose χ; "as_mh" = 1 with "mh_speedup", MH's predicted
// advantage, when warmup switched the chain to full-batch MH, with
// "chi_unjudged" = 1 when it did because the search could judge χ at no
// step it tried (such a chain always switches: chiTurn); and, over
// the steps since warmup (every step if warmup was not adapted) that drew
// a minibatch, "mean_B", their mean batch (N in a fallback step), beside
// "mean_C2M2_CM", their mean C²M² + CM: the TunaMH paper's Theorem 3 shows
// that any exact stateless minibatch MH method with spectral-gap ratio κ
// needs E[B] ≥ ζκ(C²M² + CM) for some constant ζ on some target, while
// TunaMH's E[B] is χC²M² + CM, so mean_B/mean_C2M2_CM is TunaMH's batch
// in units of that lower bound's scale (about χ when CM ≫ 1).
func (c *tunaChain) Params() map[string]float64 {
	p := c.rival.params(map[string]float64{"chi": c.chi, "C": c.sumC})
	if c.tuned {
		p["chi_tuned"], p["chi_accept"] = 1, c.tunedAccept
	}
	if c.scaleCut > 0 {
		p["scale_cut"] = c.scaleCut
	}
	if c.unjudged {
		p["chi_unjudged"] = 1
	}
	if c.steps > 0 {
		p["mean_B"], p["mean_C2M2_CM"] = c.sumB/float64(c.steps), c.sumT/float64(c.steps)
	}
	return p
}

// midWarmup chooses χ at the adapted step scale (chiSearch), halfway
// through warmup, to maximise the predicted jump per unit of cost, and
// compares the result with full-batch MH (mhRival): on concentrated
// posteriors C·M grows like √N and no χ makes a minibatch pay, and the
// chain then runs as MH. Only when χ is chosen (Chi = 0): a χ the user set
// is theirs. From here χ stays fixed. With NoChiSearch only the comparison
// runs, on the chain's efficiency so far.
func (c *tunaChain) midWarmup(warmup Totals, ownTarget bool) (warmupTurn, error) {
	if c.k.Chi != 0 || warmup.Steps == 0 {
		return warmupTurn{}, nil
	}
	propose := walkProposer(c.walk)
	if c.k.NoChiSearch {
		own, _, _ := c.rival.ownEfficiency(c.walk, nil, warmup, minibatchStepCost)
		scale, switched, err := c.rival.against(propose, saturation(c.walk.prop), c.t, c.walk.theta, c.walk.scale, own, nil)
		if switched {
			c.maxBatch = -1 // every expected batch exceeds it: full MH steps
		}
		return restartAt(scale, switched), err
	}
	// The first half of warmup can end at a step past the acceptance
	// cliff, where the search predicts acceptance near 0 and χ at the
	// bottom of its grid (TestTunaMHChiChosen's seeds sampled at
	// 0.015–0.09): chiTurn searches smaller steps too.
	theta := c.walk.theta
	turn, ch, err := chiTurn(c.tunaBatch, c.rival, c.k.Accept, theta, c.walk.scale, propose, saturation(c.walk.prop), chiStepCost(len(theta)), ownTarget)
	if err != nil {
		return warmupTurn{}, err
	}
	if ch.eff > 0 {
		c.tuned, c.tunedAccept = true, ch.accept
	} else {
		c.unjudged = true // and the chain runs as MH (chiTurn)
	}
	return turn, nil
}

// finalScale checks the step warmup ends with, when the search chose χ:
// where the acceptance the search predicts there at the chosen χ is below
// chiMinTurnTarget, it lowers the step (cutScale), as TunaMH-SGLD's
// does. Dual averaging across the acceptance cliff ends at the average of
// iterates on both sides of it (TestTunaMHChiChosen). A chain that
// switched to full-batch MH keeps warmup's step: its second half adapted
// it to MH's own acceptance, which TunaMH's prediction does not describe
// (cut, MH's ESS fell from hundreds to 61 in TestTunaMHRunsAsMH).
func (c *tunaChain) finalScale(scale float64) (float64, error) {
	if !c.tuned || c.rival.asMH || c.k.Chi != 0 || c.k.NoChiSearch {
		return scale, nil
	}
	theta := c.walk.theta
	best, cut, err := finalChiScale(c.tunaBatch, c.k.Accept, theta, scale, walkProposer(c.walk), c.chi, chiStepCost(len(theta)))
	if cut > 0 {
		c.scaleCut = cut
	}
	return best, err
}

// chooseChi sets χ by the chain's ChiRule from pilot proposals at the
// current point and scale. The pilot uses its own generator, so it never
// changes the chain's random stream, and it reads no data.
func (c *tunaChain) chooseChi() {
	c.pilotSrc.Seed(0x74756e61, 0x6d68)
	var sumM, sumM2 float64
	for k := range c.pilot {
		c.walk.prop.Propose(c.pilotRNG, c.pilotBuf, c.walk.theta, c.walk.scale)
		m := c.bound.M(c.walk.theta, c.pilotBuf)
		c.pilot[k] = m * m
		sumM += m
		sumM2 += m * m
	}
	n := float64(len(c.pilot))
	var chi float64
	switch c.k.ChiRule {
	case ChiOptimal:
		chi = math.Sqrt((sumM / n) / (c.sumC * sumM2 / n))
	default:
		chi = chiQuantileRule(c.sumC, c.pilot)
	}
	if chi > 0 && !math.IsInf(chi, 0) {
		c.chi = chi
	}
}

// DrawOmega1 draws nothing (Case 1). During warmup it lets a chosen χ
// follow the adapting scale; sampling keeps χ fixed.
func (c *tunaChain) DrawOmega1(*rand.Rand, []float64) (struct{}, error) {
	if c.warmup && c.k.Chi == 0 && !c.tuned {
		if c.warmupSteps++; c.warmupSteps%50 == 0 {
			c.chiBefore = c.chi
			c.chooseChi()
		}
	}
	return struct{}{}, nil
}

// A TunaMH transition is abandoned only in its minibatch or full-batch
// pass, after DrawOmega1: abandonStep takes back DrawOmega1's count of
// warmup steps and the χ it chose, so that the checkpoint holds the state
// before the transition.
func (c *tunaChain) interruptible() bool { return true }

func (c *tunaChain) abandonStep() {
	if c.warmup && c.k.Chi == 0 && !c.tuned {
		if c.warmupSteps%50 == 0 {
			c.chi = c.chiBefore
		}
		c.warmupSteps--
	}
	c.info = Info{}
}

// Propose draws θ′ from the Proposal (Algorithm 2, step 1).
func (c *tunaChain) Propose(rng *rand.Rand, next, theta []float64, _ struct{}, scale float64) (float64, error) {
	return c.walk.prop.Propose(rng, next, theta, scale), nil
}

// DrawOmega2 draws the auxiliary minibatch and keeps its ratio estimate
// (steps 2–3).
func (c *tunaChain) DrawOmega2(rng *rand.Rand, theta, next []float64, _ struct{}) (*tunaBatch, error) {
	var err error
	c.data, c.info, err = c.logRatio(rng, theta, next)
	if err == nil && !c.warmup {
		c.steps++
		c.sumB += float64(c.info.Batch)
		if !math.IsInf(c.cm, 1) { // an unbounded step (a full one) adds nothing to mean_C2M2_CM
			c.sumT += c.cm*c.cm + c.cm
		}
	}
	return c.tunaBatch, err
}

// LogRatio returns the minibatch's estimate of log L(θ′)/L(θ).
func (c *tunaChain) LogRatio(_, _ []float64, _ struct{}, _ *tunaBatch, _ float64) (float64, error) {
	return c.data, nil
}

// Report gives the Poisson count B, the distinct data and the fallback;
// nothing when θ′ left the support.
func (c *tunaChain) Report(info Info) Info {
	info.Batch, info.Distinct, info.Fallback = c.info.Batch, c.info.Distinct, c.info.Fallback

	c.info = Info{}
	return info
}

// logRatio returns TunaMH's estimate of log L(θ′)/L(θ) — exact in a
// fallback step — with Info's Batch, Distinct and Fallback filled in.
func (c *tunaBatch) logRatio(rng *rand.Rand, theta, next []float64) (float64, Info, error) {
	m := c.bound.M(theta, next)
	cm := c.sumC * m
	c.cm = cm
	mean := c.chi*cm*cm + cm // E[B] = χC²M² + CM
	if !(mean >= 0) {
		return 0, Info{}, fmt.Errorf("expected batch χC²M² + CM = %v (χ = %v, C = %v, M = %v) at θ = %v, θ′ = %v", mean, c.chi, c.sumC, m, theta, next)
	}
	// Footnote 3: too large an expected batch is a full MH step, decided
	// from M alone; also where M is +Inf, as a pair-wise bound's can be far
	// from its centre (growthDistance; TestPoissonGrowthFarSteps).
	if mean > c.maxBatch || math.IsInf(mean, 1) {
		sum, err := c.full.fallback(c.t, theta, next, c.maxBatch < 0, &c.idx, &c.diff)
		n := c.t.N()
		return sum, Info{Batch: n, Distinct: n, Fallback: true}, err
	}

	// 2. The auxiliary minibatch: B ~ Poisson(χC²M² + CM) draws i ∝ c_i,
	// each kept with probability (χCc_iM² + φ_old)/(χCc_iM² + c_iM).
	// 3. The ratio estimate from the kept draws, in the stable form of
	// 2·artanh(ΔU_i/(c_iM(1 + 2χCM))).
	if err := poisson.Check(mean); err != nil {
		return 0, Info{}, fmt.Errorf("%w (χ = %v, C = %v, M = %v)", err, c.chi, c.sumC, m)
	}
	batch := poisson.Draw(rng, mean)
	c.seen.Next()
	var logR float64
	for done := 0; done < batch; {
		// A batch can be as large as MaxBatch (N by default): a cancelled
		// run stops within a chunk of it.
		if c.t.interrupted() {
			return 0, Info{}, errInterrupted
		}
		n := min(batch-done, batchChunk)
		idx, ci := c.idx[:n], c.ci[:n]
		c.draws.drawInto(rng, idx, ci) // ci as scratch
		for j, i := range idx {
			ci[j] = c.draws.at(i) // in a loop of their own, the c_i's misses overlap
		}
		for _, i := range idx {
			c.seen.Add(i)
		}
		if err := c.t.EnergyDiffs(c.diff[:n], theta, next, idx); err != nil {
			return 0, Info{}, err
		}
		for j, i := range idx {
			mi := ci[j] * m                     // c_i·M
			d := c.diff[j]                      // U_i(θ) − U_i(θ′)
			a := c.chi * c.sumC * ci[j] * m * m // χCc_iM²
			if math.Abs(d) > mi*(1+boundTol) {
				return 0, Info{}, diffViolation(i, d, mi, theta, next)
			}
			keep, term := c.term(d, mi, a)
			if rng.Float64() < keep {
				logR += term
			}
		}
		done += n
	}
	return logR, Info{Batch: batch, Distinct: c.seen.Count}, nil
}

// tunaTerm returns, for a datum with energy difference d = U_i(θ) − U_i(θ′)
// within its bound c_iM = mi and a = χCc_iM², the probability of keeping the
// draw, (a + φ_old)/(a + c_iM), and its factor of the log ratio,
// log((a + φ_new)/(a + φ_old)) = 2·artanh(d/(c_iM(1 + 2χCM))), with
// φ_old = ½(c_iM − d) and φ_new = ½(c_iM + d) clamped to [0, c_iM] against
// rounding. log1p keeps the factor accurate when φ ≪ a (small moves); when
// a underflows to 0 the plain ratio of logs is exact (and −Inf for φ_new = 0,
// a certain rejection).
func tunaTerm(d, mi, a float64) (keep, term float64) {
	phiOld := min(max((mi-d)/2, 0), mi) // ½(U_i(θ′) − U_i(θ) + c_iM)
	phiNew := min(max((mi+d)/2, 0), mi) // ½(U_i(θ) − U_i(θ′) + c_iM)
	keep = (a + phiOld) / (a + mi)
	if a > 0 {
		return keep, math.Log1p(phiNew/a) - math.Log1p(phiOld/a)
	}
	return keep, math.Log(phiNew) - math.Log(phiOld)
}

// inWarmup reports whether χ follows the adapting scale.
func (c *tunaChain) inWarmup() bool { return c.warmup && c.k.Chi == 0 }

// tunaState is what a TunaMH chain saves: χ, its warmup record and
// whether warmup switched it to MH.
type tunaState struct {
	Chi float64
	// Warm and WarmSteps are the chain's warmup and warmupSteps, under
	// the names saved checkpoints carry (gob matches fields by name).
	Warm      bool
	WarmSteps int
	AsMH      bool
	MHSpeedup float64
	// The Params record since warmup (absent, zero, in older checkpoints).
	Steps      int
	SumB, SumT float64
	// Tuned: the mid-warmup search chose χ (absent in older checkpoints).
	Tuned       bool
	TunedAccept float64
	// ScaleCut: finalScale's factor on warmup's final step (absent, zero,
	// in older checkpoints and when it cut nothing).
	ScaleCut float64
	// Unjudged: the mid-warmup search judged no step, and the chain runs
	// as MH (absent, false, in older checkpoints).
	Unjudged bool
}

// fullMemo is the memo of the fallback steps, saved with checkpoints.
func (b *tunaBatch) fullMemo() *fullEnergies { return &b.full }

// MarshalState saves TunaMH's χ and its warmup state.
func (c *tunaChain) MarshalState() ([]byte, error) {
	return chainstate.Encode(tunaState{c.chi, c.warmup, c.warmupSteps, c.rival.asMH, c.rival.speedup, c.steps, c.sumB, c.sumT, c.tuned, c.tunedAccept, c.scaleCut, c.unjudged})
}

// UnmarshalState restores them.
func (c *tunaChain) UnmarshalState(b []byte) error {
	var s tunaState
	if err := chainstate.Decode(b, &s); err != nil {
		return err
	}
	switch err := checkSwitch(s.AsMH, s.MHSpeedup); {
	case !(s.Chi > 0) || math.IsInf(s.Chi, 0):
		return fmt.Errorf("saved χ = %v, want finite > 0", s.Chi)
	case c.k.Chi != 0 && s.Chi != c.k.Chi:
		return fmt.Errorf("saved χ = %v, the kernel's Chi = %v", s.Chi, c.k.Chi)
	case s.WarmSteps < 0 || c.k.Chi != 0 && s.WarmSteps != 0:
		return fmt.Errorf("saved %d warmup steps of χ adaptation (kernel Chi = %v)", s.WarmSteps, c.k.Chi)
	case s.Tuned && (c.k.Chi != 0 || c.k.NoChiSearch):
		return fmt.Errorf("saved χ = %v chosen by warmup's search, the kernel's Chi = %v, NoChiSearch %v", s.Chi, c.k.Chi, c.k.NoChiSearch)
	case s.AsMH && c.k.Chi != 0:
		return fmt.Errorf("saved switch to MH with predicted speed-up %v, the kernel's Chi = %v (a fixed χ never switches)", s.MHSpeedup, c.k.Chi)
	case err != nil:
		return err
	case s.Steps < 0 || !(s.SumB >= 0) || !(s.SumT >= 0) || math.IsInf(s.SumB, 0) || math.IsInf(s.SumT, 0) ||
		s.Steps == 0 && (s.SumB != 0 || s.SumT != 0):
		return fmt.Errorf("saved batch record: %d steps, ΣB = %v, Σ(C²M² + CM) = %v", s.Steps, s.SumB, s.SumT)
	case s.ScaleCut != 0 && !(s.ScaleCut > 0 && s.ScaleCut < 1):
		return fmt.Errorf("saved final step cut %v, want 0 or in (0, 1)", s.ScaleCut)
	case s.Unjudged && (!s.AsMH || s.Tuned):
		return fmt.Errorf("saved χ judged at no step, with switch to MH %v and χ chosen %v: want switched, not chosen", s.AsMH, s.Tuned)
	}
	c.chi, c.warmup, c.warmupSteps = s.Chi, s.Warm, s.WarmSteps
	c.rival.asMH, c.rival.speedup = s.AsMH, s.MHSpeedup
	c.steps, c.sumB, c.sumT = s.Steps, s.SumB, s.SumT
	c.tuned, c.tunedAccept, c.scaleCut, c.unjudged = s.Tuned, s.TunedAccept, s.ScaleCut, s.Unjudged
	if c.rival.asMH {
		c.maxBatch = -1
	}
	return nil
}

// The contracts (contracts.go) this file's kernel and chain satisfy.
var (
	_ Kernel                         = TunaMH{}
	_ AcceptTarget                   = TunaMH{}
	_ stepInterrupter                = (*tunaChain)(nil)
	_ AuxChain[struct{}, *tunaBatch] = (*tunaChain)(nil)
	_ schemeChain                    = (*tunaChain)(nil)
	_ WarmupAware                    = (*tunaChain)(nil)
	_ midWarmuper                    = (*tunaChain)(nil)
	_ finalScaler                    = (*tunaChain)(nil)
	_ fullMemoer                     = (*tunaChain)(nil)
)

// The capabilities TunaMH declares (the setters WithLaplace, the automatic
// default and the exactmh command use; TestKernelCapabilities checks each
// against the field it sets).

// InitialScale returns Scale, the initial step scale.
func (k TunaMH) InitialScale() float64 { return k.Scale }

// WithScale returns k with Scale s.
func (k TunaMH) WithScale(s float64) Kernel {
	k.Scale = s
	return k
}

// Proposer returns Proposal, what draws θ′ (nil: the kernel's default).
func (k TunaMH) Proposer() Proposal { return k.Proposal }

// WithProposal returns k with Proposal p.
func (k TunaMH) WithProposal(p Proposal) Kernel {
	k.Proposal = p
	return k
}

// WithChi returns k with Chi v (χ).
func (k TunaMH) WithChi(v float64) Kernel {
	k.Chi = v
	return k
}

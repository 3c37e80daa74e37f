// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/exactmh/exactmh/internal/vec"
)

// chiSearch chooses TunaMH's χ halfway through warmup, at the step scale
// warmup has adapted so far, to maximise the predicted expected squared
// jump per unit of cost — ESS per datum evaluation, not the paper's
// χC²M² < 1 rule, which on a concentrated posterior picks a χ so small
// that the chain is slower than full-batch MH.
//
// The prediction needs no run at each candidate. For a proposal θ′ and
// u_i = ΔU_i/(c_iM) ∈ [−1, 1], the number of times TunaMH keeps datum i is
// Poisson with mean μ_i = χCc_iM² + ½c_iM(1 − u_i) (draws ∝ c_i, B ~
// Poisson(χC²M² + CM), each kept with probability (χCc_iM² + φ_old)/(χCc_iM²
// + c_iM): Poisson thinning), independently over i, so the log-ratio
// estimate Σ_i K_i·t_i, t_i = 2·artanh(u_i/(1 + 2χCM)), has
//
//	mean Σ_i μ_i t_i,  variance Σ_i μ_i t_i²,
//
// both sums estimated from chiSample data drawn ∝ c_i (weights C/c_i, as
// TunaMH's own minibatch): (C/c_i)μ_i = χ(CM)² + ½CM(1 − u_i), which
// depends on u_i, CM and χ only. The same chiSample data serve every χ, so
// the candidates are compared on common random numbers. The acceptance at
// χ is then E[a(e^Z)] (a: Metropolis or Barker) for Z normal with the log prior and
// proposal ratio added to that mean (acceptNormal), and the efficiency
//
//	Σ_probes α·‖θ′ − θ‖² / Σ_probes (stepCost + minibatchDatumCost·(χC²M² + CM)),
//
// a full pass (N, at unit cost) where the expected batch exceeds the
// kernel's MaxBatch. chiProbes proposals are drawn at the adapted scale
// from the search's own generator: the chain's stream is untouched and θ
// does not move, so exactness never depends on the search. The best χ is
// then compared with full-batch MH (mhRival.against), and the second half
// of warmup adapts the step with χ fixed (see TunaMH's midWarmup).
//
// The step is not searched with χ: the squared jump per cost that the
// search maximises does not see switches between modes, so on multimodal
// targets a joint search prefers short steps that never switch.
// Warmup's dual averaging sets the step; the search sets χ at it.
type chiSearch struct {
	src  *rand.PCG
	rng  *rand.Rand
	next []float64
	idx  []int
	diff []float64
	u    []float64 // chiSample ratios u_i per probe, the probes' first
	pr   []chiProbe
}

// chiProbe is one proposal of the search.
type chiProbe struct {
	out bool // θ′ left the support: a rejection that reads no datum
	// unresolved: the sample's estimate of Σ_iΔU_i = CM·vec.Mean(u) has a
	// standard error above chiResolve, too coarse to predict acceptance.
	unresolved bool
	cm         float64 // C·M(θ, θ′)
	jump       float64 // ‖θ′ − θ‖²
	rest       float64 // log prior ratio + log proposal ratio
	u          []float64
}

// The size of the search: proposals, data per proposal (chiSample, up to
// chiSampleMax for a probe that needs them: see sample) and the χ grid (10^(k/4), k = −48 … 16, from far below any useful χ to where
// χCM ≫ 1 makes the estimate nearly exact).
const (
	chiProbes            = 24
	chiSample            = 128
	chiSampleMax         = 4096
	chiGridLo, chiGridHi = -48, 16
)

// chiResolve is the largest standard error of the sampled Σ_iΔU_i with
// which the search predicts a proposal's acceptance. A larger one means
// C·M·sd(u) ≫ √chiSample: the estimate's noise would pass for acceptance
// (E[min(1, e^Z)] → ½ as Z spreads), and TunaMH itself would need batches
// of order (C·M·sd(u))² to estimate the ratio to O(1) — the regime where
// full-batch MH usually wins, which the comparison with MH then decides
// from the chain's warmup as when the search cannot run.
const chiResolve = 0.5

// chiChoice is what the search found.
type chiChoice struct {
	chi, accept float64
	eff         float64 // predicted α·jump² per unit of cost
}

// newChiSearch returns a search for a d-dimensional chain.
func newChiSearch(d int) *chiSearch {
	src := rand.NewPCG(chiSeed1, chiSeed2)
	return &chiSearch{src: src, rng: rand.New(src), next: make([]float64, d),
		idx: make([]int, chiSample), diff: make([]float64, chiSample),
		u: make([]float64, chiProbes*chiSample), pr: make([]chiProbe, chiProbes)}
}

// run returns the best χ for a TunaMH batch b at theta, whose proposals
// at scale come from propose; stepCost is a step's cost beyond its data,
// in units of a datum of a full pass. Its eff is −1 when the sample cannot
// judge the proposals (see chiResolve).
func (s *chiSearch) run(b *tunaBatch, acc Acceptance, theta []float64, scale float64, propose proposer, stepCost float64) (chiChoice, error) {
	s.src.Seed(chiSeed1, chiSeed2)
	best := chiChoice{eff: -1}
	if err := s.probe(b, theta, scale, propose); err != nil {
		return chiChoice{}, err
	}
	unresolved := 0
	for _, p := range s.pr {
		if p.unresolved {
			unresolved++
		}
	}
	if unresolved > chiProbes/5 {
		return best, nil
	}
	for g := chiGridLo; g <= chiGridHi; g++ {
		if c := s.at(b, acc, math.Pow(10, float64(g)/4), stepCost); c.eff > best.eff {
			best = c
		}
	}
	return best, nil
}

// chiSeed1 and chiSeed2 seed the search's generator, afresh for every
// search and prediction: the same point and scale give the same probes.
const chiSeed1, chiSeed2 = 0x636869, 0x736561726368

// predict returns the prediction at χ for proposals at scale from theta:
// fresh probes (probe), then at.
func (s *chiSearch) predict(b *tunaBatch, acc Acceptance, theta []float64, scale float64, propose proposer, chi, stepCost float64) (chiChoice, error) {
	s.src.Seed(chiSeed1, chiSeed2)
	if err := s.probe(b, theta, scale, propose); err != nil {
		return chiChoice{}, err
	}
	return s.at(b, acc, chi, stepCost), nil
}

// at returns the prediction at χ from the probes: the mean acceptance and
// the efficiency.
func (s *chiSearch) at(b *tunaBatch, acc Acceptance, chi, stepCost float64) chiChoice {
	n := float64(b.t.N())
	var gain, cost, accSum float64
	for _, p := range s.pr {
		cost += stepCost
		if p.out || p.unresolved {
			continue // a rejection (counted as one when unresolved)
		}
		lambda := chi*p.cm*p.cm + p.cm
		if lambda > b.maxBatch {
			a := acc.Prob(p.rest + p.cm*vec.Mean(p.u))
			gain, accSum, cost = gain+a*p.jump, accSum+a, cost+n
			continue
		}
		m, v := tunaMoments(p.u, p.cm, chi)
		a := acceptNormal(acc, p.rest+m, v)
		gain, accSum, cost = gain+a*p.jump, accSum+a, cost+minibatchDatumCost*lambda
	}
	return chiChoice{chi: chi, accept: accSum / float64(len(s.pr)), eff: gain / cost}
}

// probe draws the search's proposals at scale and, for each, data ∝ c_i
// (sample), keeping their u_i = ΔU_i/(c_iM).
func (s *chiSearch) probe(b *tunaBatch, theta []float64, scale float64, propose proposer) error {
	t := b.t
	for k := range s.pr {
		// Capped, so that a sample that grows reallocates rather than
		// overwrite the next probe's.
		p := chiProbe{u: s.u[k*chiSample : (k+1)*chiSample : (k+1)*chiSample]}
		logQ, err := propose(s.rng, s.next, scale)
		if err != nil {
			return err
		}
		lp := t.LogPrior(s.next) - t.LogPrior(theta)
		if math.IsInf(lp, -1) || math.IsNaN(lp) {
			p.out = true
			s.pr[k] = p
			continue
		}
		p.rest, p.jump = lp+logQ, vec.SqDist(s.next, theta)
		m := b.bound.M(theta, s.next)
		p.cm = b.sumC * m
		if !(p.cm > 0) || math.IsInf(p.cm, 0) {
			clear(p.u) // θ′ = θ as far as the bound sees: no datum moves
			p.cm = 0
			s.pr[k] = p
			continue
		}
		if p.u, err = s.sample(b, theta, m, p.u[:0]); err != nil {
			return err
		}
		p.unresolved = p.cm*vec.MeanSE(p.u) > chiResolve
		s.pr[k] = p
	}
	return nil
}

// sample appends to u the ratios u_i = ΔU_i/(c_iM) of data drawn ∝ c_i
// for the proposal s.next from theta with M(θ, θ′) = m: chiSample of them,
// then, while C·M times their standard error (vec.MeanSE) exceeds
// chiResolve, as many more as that error says are needed (at least as
// many again), up to chiSampleCap(N) in all. A probe cut off before that
// — a long proposal through heterogeneous data — would otherwise count
// as a rejection, which the chain's own test need not make: on the
// tempered logistic regression of TestTunaMHSGLDPredictionAccurate a
// third of TunaMH-SGLD's probes were, and the search predicted an
// acceptance 0.1 below the chain's.
func (s *chiSearch) sample(b *tunaBatch, theta []float64, m float64, u []float64) ([]float64, error) {
	t, cm := b.t, b.sumC*m
	limit := chiSampleCap(t.N())
	for want := chiSample; ; {
		for len(u) < want {
			// A search inside a warmup decision the runner can abandon
			// (warmupdecision.go) stops within a chunk of a cancellation;
			// elsewhere the Target does not poll (suspendInterrupt).
			if t.interrupted() {
				return u, errInterrupted
			}
			idx, diff := s.idx[:min(want-len(u), len(s.idx))], s.diff[:min(want-len(u), len(s.diff))]
			for j := range idx {
				idx[j] = b.draws.draw(s.rng)
			}
			if err := t.EnergyDiffs(diff, theta, s.next, idx); err != nil {
				return u, err
			}
			for j, i := range idx {
				mi := b.draws.at(i) * m
				d := diff[j]
				if math.Abs(d) > mi*(1+boundTol) {
					return u, diffViolation(i, d, mi, theta, s.next)
				}
				u = append(u, min(max(d/mi, -1), 1))
			}
		}
		se := cm * vec.MeanSE(u)
		if se <= chiResolve || len(u) >= limit {
			return u, nil
		}
		r := se / chiResolve
		want = min(limit, max(2*len(u), int(math.Ceil(1.25*r*r*float64(len(u))))))
	}
}

// chiSampleCap is the most data the search draws for one probe from N:
// chiSampleMax, or N when fewer (but at least chiSample), beyond which
// a sample drawn with replacement mostly repeats data.
func chiSampleCap(n int) int { return max(chiSample, min(chiSampleMax, n)) }

// tunaMoments returns the mean and variance of TunaMH's log-ratio estimate
// at χ for a proposal with C·M = cm and sampled ratios u (see chiSearch),
// each datum's factor from tunaTerm, the kernel's own, in units of c_iM:
// a = χCc_iM²/(c_iM) = χCM, and (C/c_i)μ_i = CM·(χCM + φ_old).
func tunaMoments(u []float64, cm, chi float64) (m, v float64) {
	a := chi * cm
	for _, x := range u {
		_, t := tunaTerm(x, 1, a)
		w := cm * (a + min(max((1-x)/2, 0), 1))
		switch {
		case w == 0:
			continue // never kept
		case math.IsInf(t, -1):
			return math.Inf(-1), 0 // kept at a positive rate: a certain rejection
		}
		m += w * t
		v += w * t * t
	}
	n := float64(len(u))
	return m / n, v / n
}

// acceptNormal returns E[a(e^Z)] for Z ~ N(mu, v) and the acceptance
// function a: for Metropolis, E[min(1, e^Z)] = Φ(μ/σ) + exp(μ + σ²/2)·Φ(−μ/σ
// − σ); for Barker, E[e^Z/(1 + e^Z)] ≈ σ(μ/√(1 + πv/8)), the probit
// approximation of the logistic-normal integral.
func acceptNormal(acc Acceptance, mu, v float64) float64 {
	if math.IsInf(mu, -1) {
		return 0
	}
	if !(v > 0) {
		return acc.Prob(mu)
	}
	if acc == AcceptBarker {
		return acc.Prob(mu / math.Sqrt(1+math.Pi*v/8))
	}
	s := math.Sqrt(v)
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	a := phi(mu/s) + math.Exp(mu+v/2+math.Log(phi(-mu/s-s)))
	return min(max(a, 0), 1)
}

// chiStepCost is the cost of a TunaMH step beyond its data in units of a
// datum of a full pass: minibatchStepCost, plus d for the proposal's and
// the prior's O(d²) work against a datum's O(d) (a Crank–Nicolson or
// Gaussian proposal, a control-variate prior).
func chiStepCost(d int) float64 { return minibatchStepCost + float64(d) }

// chiTurn is the mid-warmup turn of a TunaMH batch b whose χ is chosen
// (TunaMH, TunaMH-SGLD), at theta and the walk's scale, with proposals
// from propose (whose moves are the same at any scale from sat up:
// saturation), acceptance acc and a step's cost stepCost beyond its data.
// The search runs at scale and at smaller steps (cutScale) until one's
// predicted acceptance reaches chiMinTurnTarget: the first half of warmup
// can end at a step past the acceptance cliff, where the search predicts
// acceptance near 0 or cannot judge the proposals at all (chiResolve).
// b's χ is set to the best step's choice, then compared with full-batch MH
// (rival), which may switch the chain to MH steps (b.maxBatch −1). When
// the search chose χ and the run's target acceptance is the kernel's own
// (ownTarget), the driver restarts the step adaptation at that step toward
// the acceptance predicted there, so that the second half of warmup keeps
// the step at which χ was judged rather than chasing a target set for the
// χ rule's noise; a prediction below chiMinTurnTarget would lock the chain
// to a step near the cliff, and the second half restarts from that step
// toward the kernel's own target instead (TestTunaMHSGLDPredictionMeasure
// shows the difference). When the search judged no step (the choice
// returned has eff ≤ 0) the chain always switches to MH: TunaMH would need
// batches of order (C·M·sd(u))², and Start's heuristic χ samples at
// acceptance near 0 (TestTunaMHSGLDChiChosen's seeds); MH from its best
// scale, or from the shortest the rival probed if its probes all rejected
// (mhRival.force), where the driver's step adaptation takes it on. The
// chain says so (Params "chi_unjudged" beside "as_mh"; Summary warns):
// TestTunaMHUnjudgedRunsAsMH.
func chiTurn(b *tunaBatch, rival *mhRival, acc Acceptance, theta []float64, scale float64, propose proposer, sat float64,
	stepCost float64, ownTarget bool) (warmupTurn, chiChoice, error) {
	s := newChiSearch(len(theta))
	eps, ch, err := cutScale(scale, 0, func(eps float64) (chiChoice, error) {
		return s.run(b, acc, theta, eps, propose, stepCost)
	})
	if err != nil {
		return warmupTurn{}, chiChoice{}, err
	}
	var turn warmupTurn
	var own float64 // judged at no step: compared as a chain that cannot move
	if ch.eff > 0 {
		b.chi, own = ch.chi, ch.eff
		if ownTarget {
			turn = warmupTurn{Scale: eps}
			if t := clampTarget(ch.accept); t >= chiMinTurnTarget {
				turn.Target = t
			}
		}
	}
	mhScale, switched, err := rival.against(propose, sat, b.t, theta, eps, own, nil)
	if err != nil {
		return warmupTurn{}, chiChoice{}, err
	}
	if !switched && !(ch.eff > 0) && !rival.asMH {
		mhScale, switched = rival.force(eps), true
	}
	if switched {
		b.maxBatch = -1 // every expected batch exceeds it: full MH steps
		turn = warmupTurn{Scale: mhScale}
	}
	if turn.Scale == 0 && eps != scale {
		turn.Scale = eps // restart from the step χ was chosen at
	}
	return turn, ch, nil
}

// finalChiScale is TunaMH's and TunaMH-SGLD's finalScale: the most
// efficient of warmup's final step and smaller ones (cutScale, up to
// chiFinalMore past the first predicted to reach chiMinTurnTarget), as
// the search predicts them at χ, and the factor cut by which it lowered
// the step (0: none).
func finalChiScale(b *tunaBatch, acc Acceptance, theta []float64, scale float64, propose proposer,
	chi, stepCost float64) (best, cut float64, err error) {
	s := newChiSearch(len(theta))
	best, _, err = cutScale(scale, chiFinalMore, func(eps float64) (chiChoice, error) {
		return s.predict(b, acc, theta, eps, propose, chi, stepCost)
	})
	if err != nil {
		return 0, 0, err
	}
	if best != scale {
		cut = best / scale
	}
	return best, cut, nil
}

// clampTarget keeps a predicted acceptance target where dual averaging
// can reach it.
func clampTarget(a float64) float64 { return min(max(a, 0.05), 0.95) }

// chiQuantileRule is the paper's practical χ rule (ChiHeuristic: χC²M² < 1
// for nine proposals in ten): χ = 1/(C²·q₀.₉(M²)) over pilot values m2 of M(θ, θ′)²,
// which it sorts; 0 when that is not a finite positive number.
func chiQuantileRule(sumC float64, m2 []float64) float64 {
	slices.Sort(m2)
	chi := 1 / (sumC * sumC * m2[int(0.9*float64(len(m2)-1))])
	if chi > 0 && !math.IsInf(chi, 0) {
		return chi
	}
	return 0
}

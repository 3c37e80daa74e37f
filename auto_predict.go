// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// The choice's budget and its prediction (docs/automatic.md, "The
// prediction"). Where the race of pilots would read more than
// autoChoicePasses passes over the data in all (raceFloor), the
// Crank–Nicolson candidates — TunaMH-CV-CN, TFMH-CV-CN and full-batch
// MH-CN, which share one proposal around the Laplace approximation — are
// ranked by a prediction from draws of that approximation instead of by
// pilots (predictCN).
const (
	// autoChoicePasses is the most passes over the data the choice means
	// to read.
	autoChoicePasses = 15
	// autoPredictDraws is how many draws θ of the Laplace approximation
	// the prediction proposes from, at each of autoPredictScales.
	autoPredictDraws = 12
	// autoPredictSeed seeds the prediction's generator (with the choice's
	// seed): not a chain's stream.
	autoPredictSeed = 0x7072656469637400
)

// autoPredictScales are the Crank–Nicolson step scales s (ρ = e^{−s}) at
// which predictCN predicts each candidate's rate: from steps short enough
// for a minibatch kernel's C·M to stay small to nearly independent
// proposals.
var autoPredictScales = [...]float64{0.1, 0.3, 0.8, 1.5, 3}

// predictNoBound and predictNoLoss, set by tests, are mutants
// (TestAutoPredictWide): the prediction prices a minibatch step at one
// datum, ignoring the bound's C·M; it gives TFMH full-batch MH's
// acceptance, ignoring the loss of its product of per-datum factors.
var predictNoBound, predictNoLoss bool

// raceFloor returns the passes over the data the race's Crank–Nicolson
// pilots among cands read at least before its leader has a score: it
// makes autoPilotWarmup + autoPartialMin transitions. Where a minibatch
// candidate is piloted, each such one is counted, reading at least C·M ≈
// floor data a transition (cvBatchFloor's step, shorter than any warmup
// settles at on a near-Gaussian posterior): the race ranks them on their
// own draws, while it may drop a full-batch candidate by its bound
// (fullBatchBound) before it reads much. Where none is, the full-batch
// ones are counted, each reading its passes — on its subsample proxy, n
// of them. n is the number of data.
func raceFloor(cands []autoCand, floor float64, n int) float64 {
	var mini, full float64
	for _, c := range cands {
		if c.skip != "" || !strings.HasSuffix(c.name, "-CN") {
			continue
		}
		switch {
		case c.proxy != nil:
			full += float64(c.proxy.Len())
		case c.passes > 0:
			full += c.passes * float64(n)
		default:
			mini += floor
		}
	}
	reads := full
	if mini > 0 {
		reads = mini
	}
	return reads * (autoPilotWarmup + autoPartialMin) / float64(n)
}

// predictPasses returns the passes over N data that predictCN reads in d
// dimensions: a pass over the proxy's data for each draw and scale. The
// choice predicts only where the race would read more and the prediction
// keeps the choice within autoChoicePasses (on small data, whose proxy is
// most of the data, the race is the cheaper judge).
func predictPasses(n, d int) float64 {
	stride := max(n/max(autoProxyMin, autoProxyPerDim*d), 1)
	sub := (n + stride - 1) / stride
	return float64(autoPredictDraws*len(autoPredictScales)*sub) / float64(n)
}

// cnPredicted is predictCN's prediction for one candidate.
type cnPredicted struct {
	cand  int     // index in cands
	scale float64 // the best of autoPredictScales
	chi   float64 // TunaMH's χ there (0 for the others)
	// accept is the mean acceptance, essStep the ESS a transition, cost a
	// transition's counted cost (datum evaluations) and rate ESS per
	// costPerRate units, at that scale.
	accept, essStep, cost, rate float64
}

// predictCN predicts, for each candidate of cands that is TunaMH-CV-CN,
// TFMH-CV-CN or MH-CN (by name, not skipped), its ESS per unit of counted
// cost at its best scale of autoPredictScales, from autoPredictDraws draws
// θ of the Laplace approximation la and a Crank–Nicolson proposal θ′ of cn
// from each at each scale, and returns the predictions and the datum
// evaluations they read.
//
// Each pair (θ, θ′) reads the energy differences ΔU_i of the control
// variates' remainders on the subsample proxy's data (every stride-th
// datum, weighted N/n: subsampleProxy) once, and from them predicts:
//
//   - MH: acceptance min(1, e^{r + βΣΔ}), r the log prior and proposal
//     ratio (CN is reversible for la, so r + βΣΔ is the log ratio of the
//     posterior's importance weights), and a cost of N a transition;
//   - TFMH: acceptance e^{−βΣ max(0, ΔU_i)}·min(1, e^r) (its product of
//     per-datum factors), cost C·M(θ, θ′) from the bound — MH's where C·M
//     exceeds N;
//   - TunaMH: acceptance E[min(1, e^Z)] for Z normal with the mean and
//     variance of its log-ratio estimate at χ (tunaMoments' sums, weighted
//     for data drawn uniformly), cost χC²M² + C·M, best over χ = 10^(k/4);
//
// each plus its proposal's cost (stepCost). A transition's ESS is
// x/(2 − x), x = E[α·‖θ′ − θ‖²_H]/(2d) ∈ [0, 1]: the lag-one
// autocorrelation 1 − x of a Gaussian coordinate under a Crank–Nicolson
// chain with ρ and acceptance α (E‖θ′ − θ‖²_H = 2d(1 − ρ)). The same
// draws serve every candidate and scale (common random numbers).
func predictCN(ctx context.Context, cands []autoCand, cv *Posterior, la *LaplaceApprox, cn *CrankNicolson, seed uint64) ([]cnPredicted, float64, error) {
	e, ok := cv.Energy.(*cvEnergy)
	if !ok || la.Precision == nil {
		return nil, 0, fmt.Errorf("no control variates of a GLM")
	}
	t, err := NewTarget(cv)
	if err != nil {
		return nil, 0, err
	}
	defer t.watch(ctx)()
	n, d := e.n, e.d
	nf := float64(n)
	stride := max(n/max(autoProxyMin, autoProxyPerDim*d), 1)
	var idx []int
	for i := 0; i < n; i += stride {
		idx = append(idx, i)
	}
	w := nf / float64(len(idx))
	bound := e.sharedDiffBound()
	ci := make([]float64, len(idx))
	for j, i := range idx {
		ci[j] = bound.at(i)
	}
	beta := cv.beta()
	sumC := beta * bound.Sum()
	prior := cv.prior()

	type pair struct {
		rest, sumD, sumPos, cm, jump, m float64
		out                             bool
		u                               []float64
	}
	scales := autoPredictScales
	pairs := make([][]pair, len(scales))
	rng := rand.New(rand.NewPCG(seed, autoPredictSeed))
	theta, next := make([]float64, d), make([]float64, d)
	diff, dv := make([]float64, len(idx)), make([]float64, d)
	for range autoPredictDraws {
		la.Rand(rng, theta)
		lp := prior.LogPrior(theta)
		for j, s := range scales {
			logQ := cn.Propose(rng, next, theta, s)
			var q pair
			q.rest = prior.LogPrior(next) - lp + logQ
			if math.IsInf(q.rest, -1) || math.IsNaN(q.rest) {
				q.out = true
				pairs[j] = append(pairs[j], q)
				continue
			}
			for a := range d {
				dv[a] = next[a] - theta[a]
			}
			for a := range d {
				var s float64
				for b := range d {
					s += la.Precision.At(a, b) * dv[b]
				}
				q.jump += dv[a] * s
			}
			q.m = e.distance(theta, next)
			q.cm = sumC * q.m
			if err := t.EnergyDiffs(diff, theta, next, idx); err != nil {
				return nil, float64(t.Evals()), err
			}
			q.u = make([]float64, len(idx))
			for k, dk := range diff {
				q.sumD += dk
				q.sumPos += max(0, -dk)
				if mi := ci[k] * q.m; mi > 0 {
					q.u[k] = min(max(dk/mi, -1), 1)
				}
			}
			q.sumD *= beta * w
			q.sumPos *= beta * w
			pairs[j] = append(pairs[j], q)
		}
	}
	evals := float64(t.Evals())

	// essStep is a transition's ESS from the mean α·‖θ′ − θ‖²_H.
	essStep := func(gain float64) float64 {
		x := min(gain/(2*float64(d)), 1)
		return x / (2 - x)
	}
	mhAccept := func(q pair) float64 {
		if q.out {
			return 0
		}
		return AcceptMetropolis.Prob(q.rest + q.sumD)
	}
	var preds []cnPredicted
	for ci2, c := range cands {
		if c.skip != "" {
			continue
		}
		var kind int
		switch c.name {
		case "MH-CN":
			kind = 0
		case "TFMH-CV-CN":
			kind = 1
		case "TunaMH-CV-CN":
			kind = 2
		default:
			continue
		}
		if kind > 0 && !(sumC > 0) {
			continue // the minibatch kernels refuse a bound of 0 (an exact control variate)
		}
		step := stepCost(c.post, c.k).step
		best := cnPredicted{cand: ci2, rate: -1}
		for j, s := range scales {
			chis := []float64{0}
			if kind == 2 {
				chis = chis[:0]
				for g := -24; g <= 8; g++ {
					chis = append(chis, math.Pow(10, float64(g)/4))
				}
			}
			for _, chi := range chis {
				var gain, cost, acc float64
				for _, q := range pairs[j] {
					var a, batch float64
					switch {
					case q.out:
						a, batch = 0, 0
					case kind == 0:
						a, batch = mhAccept(q), nf
					case kind == 1:
						batch = q.cm
						if predictNoBound {
							batch = 1
						}
						if batch > nf {
							a, batch = mhAccept(q), nf
						} else {
							a = math.Exp(-q.sumPos) * AcceptMetropolis.Prob(q.rest)
							if predictNoLoss {
								a = mhAccept(q)
							}
						}
					default:
						batch = chi*q.cm*q.cm + q.cm
						if predictNoBound {
							batch = 1
						}
						if batch > nf {
							a, batch = mhAccept(q), nf
						} else {
							m, v := tunaMomentsUniform(q.u, ci, q.m, q.cm, chi, beta*w)
							a = acceptNormal(AcceptMetropolis, q.rest+m, v)
						}
					}
					gain += a * q.jump
					acc += a
					cost += batch + step
				}
				k := float64(len(pairs[j]))
				ess := essStep(gain / k)
				rate := ess / (cost / k) * costPerRate
				if rate > best.rate {
					best = cnPredicted{cand: ci2, scale: s, chi: chi, accept: acc / k, essStep: ess, cost: cost / k, rate: rate}
				}
			}
		}
		preds = append(preds, best)
	}
	return preds, evals, nil
}

// tunaMomentsUniform is tunaMoments for data drawn uniformly, each datum
// standing for wt of them: the mean and variance of TunaMH's log-ratio
// estimate at χ, Σ_i μ_i t_i and Σ_i μ_i t_i², with μ_i = c_iM(χCM + φ_i)
// (chiSearch), c_i the data's untempered constants ci (βc_i is in wt, with
// the weight N/n), m = M(θ, θ′) and cm = βC·M.
func tunaMomentsUniform(u, ci []float64, m, cm, chi, wt float64) (mean, v float64) {
	a := chi * cm
	for k, x := range u {
		_, t := tunaTerm(x, 1, a)
		mu := wt * ci[k] * m * (a + min(max((1-x)/2, 0), 1))
		switch {
		case mu == 0:
			continue
		case math.IsInf(t, -1):
			return math.Inf(-1), 0
		}
		mean += mu * t
		v += mu * t * t
	}
	return mean, v
}

// predictOff, set by tests, turns the prediction off: the race runs
// whatever it would read.
var predictOff bool

// predictChoice makes choice from predictCN's ranking of cands: the
// candidate with the highest predicted rate, its initial step scale the
// predicted best one, capped at the mildest of autoTailCaps at or above it
// (none above the mildest). read is the passes read so far and race the
// passes raceFloor says the race would read. It returns false, choosing
// nothing, where no candidate could be predicted.
func predictChoice(ctx context.Context, choice *Choice, phases *phaseLog, cands []autoCand, p, cv *Posterior, la *LaplaceApprox, cn *CrankNicolson, seed uint64, read, race float64) (bool, error) {
	n := float64(p.Len())
	choiceProgress(ctx, "predicting the Crank–Nicolson candidates' rates: the race would read at least %.3g passes after %.3g", race, read)
	preds, evals, err := predictCN(ctx, cands, cv, la, cn, seed)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	phases.mark("prediction", evals/n)
	if err != nil || len(preds) == 0 {
		return false, nil
	}
	best := preds[0]
	for _, q := range preds[1:] {
		if q.rate > best.rate {
			best = q
		}
	}
	if !(best.rate > 0) {
		return false, nil
	}
	c := cands[best.cand]
	limit := 0.0
	for _, l := range autoTailCaps {
		if best.scale <= l {
			limit = l
		}
	}
	scale := func(float64) float64 { return best.scale }
	k := c.k
	if limit > 0 {
		v := *cn
		v.MaxScale = limit
		k, _ = withStep(c.k, &v, scale)
	} else {
		k, _ = withStep(c.k, nil, scale)
	}
	choice.Name, choice.Kernel, choice.Posterior = c.name, k, c.post
	choice.fromLaplace = true
	predicted := map[int]cnPredicted{}
	for _, q := range preds {
		predicted[q.cand] = q
	}
	for i, c := range cands {
		if q, ok := predicted[i]; ok {
			choice.Candidates = append(choice.Candidates, Candidate{Name: c.name, ESSPerCost: q.rate, EvalsPerStep: q.cost, Predicted: true, Scale: q.scale})
			continue
		}
		why := c.skip
		if why == "" {
			why = "not piloted: the choice ranked the Crank–Nicolson candidates by prediction"
		}
		choice.Candidates = append(choice.Candidates, Candidate{Name: c.name, Err: why})
	}
	choice.Reason = fmt.Sprintf("the highest predicted ESS per 10⁶ counted evaluations (%.4g at step scale %.3g, acceptance %.2f, %.3g evaluations a transition) of %d Crank–Nicolson candidates, from %d draws of the Laplace approximation and their proposals on 1/%.3g of the data: their pilots would read at least %.3g passes over the data after the %.3g read, past the choice's budget of %d (MAP and Laplace approximation after %d passes over the data)",
		best.rate, best.scale, best.accept, best.cost, len(preds), autoPredictDraws, n/float64(max(autoProxyMin, autoProxyPerDim*p.Dim())), race, read, autoChoicePasses, la.Passes)
	if limit > 0 {
		choice.Reason += fmt.Sprintf("; its Crank–Nicolson step scale capped at %g (ρ ≥ %.2g)", limit, math.Exp(-limit))
	} else {
		choice.Reason += "; its Crank–Nicolson step scale uncapped"
	}
	return true, nil
}

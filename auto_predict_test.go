// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// predictRow is the wide logistic regression of TestAutoPredictWide: wide
// enough (C·M at the floor step in the hundreds) that the race of pilots
// would read past autoChoicePasses, small enough to run in seconds.
func predictRow(t *testing.T) *Posterior { return wideLogistic(t, 40000, 100) }

// measuredRate returns kernel k's counted ESS per costPerRate datum
// evaluations on post, from one chain of warmup + draws transitions
// started at a draw of la: the minimum bulk or tail ESS over the
// coordinates (minESS) over the evaluations of the whole run, warmup
// included.
func measuredRate(t *testing.T, post *Posterior, k Kernel, la *LaplaceApprox, warmup, draws int) float64 {
	t.Helper()
	set := LaplaceInits(&Settings{Chains: 1, Warmup: warmup, Draws: draws, Seed: 3}, la, post)
	res, err := Sample(context.Background(), post, k, set)
	if err != nil {
		t.Fatal(err)
	}
	var evals float64
	for _, ch := range res.Chains {
		for _, tot := range []Totals{ch.Warmup, ch.Sampling} {
			evals += float64(tot.Evals) + costGrad*float64(tot.GradEvals)
		}
	}
	return minESS(res) / evals * costPerRate
}

// TestAutoPredictWide: on a wide logistic regression (N = 40000, d = 100)
// where the race's pilots would read past the budget (raceFloor), the
// choice ranks the Crank–Nicolson candidates by prediction (predictCN) and
// reads at most autoChoicePasses passes over the data (passes are
// counts); its kernel is the faster of the two best predicted, by counted
// ESS per evaluation of a run of each; the same seed makes the same
// choice. Mutants: predictOff (the race, which reads past the budget and
// picks the same kernel), predictNoLoss (TFMH given MH's acceptance: it
// picks TFMH-CV-CN, which measures slower) and predictNoBound (a minibatch
// step priced at one datum: its predicted cost falls below the bound's C·M).
func TestAutoPredictWide(t *testing.T) {
	p := predictRow(t)
	choose := func() *Choice {
		c, err := Choose(context.Background(), p, &Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := choose()
	t.Logf("%.4g passes: %v", c.Passes(), c)
	t.Log(c.PhasesText())
	if !strings.Contains(c.Reason, "predicted") {
		t.Fatalf("the choice did not predict: %s", c.Reason)
	}
	if c.Passes() > autoChoicePasses {
		t.Errorf("the choice read %.4g passes, more than %d", c.Passes(), autoChoicePasses)
	}
	if again := choose(); again.String() != c.String() {
		t.Errorf("the same seed chose differently:\n%s\n%s", c, again)
	}
	// The predicted candidates, best first (sortCandidates).
	var preds []Candidate
	for _, k := range c.Candidates {
		if k.Predicted {
			preds = append(preds, k)
		}
	}
	if len(preds) < 2 || preds[0].Name != c.Name {
		t.Fatalf("want at least two predicted candidates, the first chosen: %+v", preds)
	}
	// The measured comparison and the mutants that run the race or a
	// second measurement cost tens of CPU-seconds: the full suite only
	// (the short suite keeps the counts, the determinism and the bound's
	// mutant below).
	if !testing.Short() {
		// The two best predicted, each as the choice would build it (the
		// chosen kernel itself; the runner-up from its candidate at its
		// predicted scale), measured by counted ESS per evaluation.
		runnerUp := buildPredicted(t, p, c, preds[1])
		warmup, draws := 300, 1500
		chosen := measuredRate(t, c.Posterior, c.Kernel, c.Laplace, warmup, draws)
		other := measuredRate(t, runnerUp.post, runnerUp.k, c.Laplace, warmup, draws)
		t.Logf("measured ESS per 10⁶ evaluations: %s %.4g (predicted %.4g), %s %.4g (predicted %.4g)",
			c.Name, chosen, preds[0].ESSPerCost, preds[1].Name, other, preds[1].ESSPerCost)
		if !(chosen > other) {
			t.Errorf("the predicted pick %s measured %.4g ESS per 10⁶ evaluations, the runner-up %s %.4g", c.Name, chosen, preds[1].Name, other)
		}

		// The mutant predictOff never predicts: the race reads past the
		// budget (a count), and picks the kernel the prediction picked.
		predictOff = true
		off := choose()
		predictOff = false
		t.Logf("mutant predictOff: %.4g passes: %s", off.Passes(), off.Name)
		if !(off.Passes() > autoChoicePasses) {
			t.Errorf("mutant predictOff not caught: the race read %.4g passes", off.Passes())
		}
		if off.Name != c.Name {
			t.Errorf("the race chose %s, the prediction %s", off.Name, c.Name)
		}
		// The mutant predictNoLoss gives TFMH MH's acceptance: its batch, C·M
		// against TunaMH's χC²M² + C·M, then wins the prediction, and the
		// pick measures slower.
		predictNoLoss = true
		m := choose()
		predictNoLoss = false
		t.Logf("mutant predictNoLoss: %v", m)
		if m.Name == c.Name {
			t.Errorf("mutant predictNoLoss not caught: it chose %s too", m.Name)
		} else if r := measuredRate(t, m.Posterior, m.Kernel, m.Laplace, warmup, draws); !(r < chosen) {
			t.Errorf("mutant predictNoLoss not caught: its pick %s measured %.4g ESS per 10⁶ evaluations, %s %.4g", m.Name, r, c.Name, chosen)
		} else {
			t.Logf("mutant predictNoLoss caught: %s measured %.4g ESS per 10⁶ evaluations, %s %.4g", m.Name, r, c.Name, chosen)
		}
	}
	// The mutant predictNoBound prices a minibatch step at one datum: its
	// predicted evaluations a transition fall below the bound's C·M at
	// the predicted scale (medianCM), which the prediction must follow.
	check := func(c *Choice) (bad []string) {
		for _, k := range c.Candidates {
			if k.Predicted && k.Name != "MH-CN" {
				if cm := medianCM(t, c, k.Scale); !(k.EvalsPerStep >= cm/2) {
					bad = append(bad, fmt.Sprintf("%s %.3g evaluations a transition, C·M ≈ %.3g", k.Name, k.EvalsPerStep, cm))
				}
			}
		}
		return bad
	}
	if bad := check(c); len(bad) > 0 {
		t.Errorf("predicted costs below the bound: %v", bad)
	}
	predictNoBound = true
	defer func() { predictNoBound = false }()
	m := choose()
	t.Logf("mutant predictNoBound: %v", m)
	if bad := check(m); len(bad) == 0 {
		t.Errorf("mutant predictNoBound not caught: %v", m)
	} else {
		t.Logf("mutant predictNoBound caught: %v", bad)
	}
}

// medianCM returns the median over draws θ of c's Laplace approximation of
// the control variates' C·M(θ, θ′) for Crank–Nicolson proposals θ′ at
// scale.
func medianCM(t *testing.T, c *Choice, scale float64) float64 {
	t.Helper()
	e, ok := c.Posterior.Energy.(*cvEnergy)
	if !ok {
		t.Fatalf("%s samples %T, not the control variates", c.Name, c.Posterior.Energy)
	}
	cn, err := c.Laplace.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	d := len(c.Laplace.Mean)
	theta, next := make([]float64, d), make([]float64, d)
	cms := make([]float64, 64)
	for k := range cms {
		c.Laplace.Rand(rng, theta)
		cn.Propose(rng, next, theta, scale)
		cms[k] = e.boundSum() * e.distance(theta, next)
	}
	slices.Sort(cms)
	return cms[len(cms)/2]
}

// buildPredicted returns the candidate of c's candidates named as k, on its
// posterior, built as predictChoice builds the chosen one: its kernel at
// k's predicted scale.
func buildPredicted(t *testing.T, p *Posterior, c *Choice, k Candidate) autoCand {
	t.Helper()
	cn, err := c.Laplace.CrankNicolson()
	if err != nil {
		t.Fatal(err)
	}
	var cand autoCand
	switch k.Name {
	case "MH-CN":
		cand = cnCand(kernelInfo(t, "MH"), "-CN", p, cn)
	case "TFMH-CV-CN", "TunaMH-CV-CN":
		cv := c.Posterior
		if _, ok := cv.Energy.(*cvEnergy); !ok {
			if cv, err = ControlVariates(p, c.Laplace); err != nil {
				t.Fatal(err)
			}
		}
		cand = cnCand(kernelInfo(t, strings.TrimSuffix(k.Name, "-CV-CN")), "-CV-CN", cv, cn)
	default:
		t.Fatalf("no kernel for %s", k.Name)
	}
	limit := 0.0
	for _, l := range autoTailCaps {
		if k.Scale <= l {
			limit = l
		}
	}
	v := *cn
	v.MaxScale = limit
	cand.k, _ = withStep(cand.k, &v, func(float64) float64 { return k.Scale })
	return cand
}

// kernelInfo returns the registered kernel named name.
func kernelInfo(t *testing.T, name string) KernelInfo {
	t.Helper()
	for _, ki := range Kernels() {
		if ki.Name == name {
			return ki
		}
	}
	t.Fatalf("no registered kernel %s", name)
	return KernelInfo{}
}

// TestRaceFloor: raceFloor counts the minibatch Crank–Nicolson candidates
// at the floor's batch when one is piloted, else the full-batch ones at
// their proxy's reads, and leaves out skipped and other candidates.
func TestRaceFloor(t *testing.T) {
	proxy := &Posterior{Energy: lenEnergy(2000)}
	steps := float64(autoPilotWarmup + autoPartialMin)
	cands := []autoCand{
		{name: "TunaMH-CV-CN"}, {name: "TFMH-CV-CN"},
		{name: "MH-CN", passes: 1, proxy: proxy},
		{name: "NUTS", passes: 4.5},
	}
	if got, want := raceFloor(cands, 500, 100000), steps*1000/100000; got != want {
		t.Errorf("minibatch: %g passes, want %g", got, want)
	}
	cands[0].skip, cands[1].skip = "not piloted", "not piloted"
	if got, want := raceFloor(cands, 500, 100000), steps*2000/100000; got != want {
		t.Errorf("full batch on its proxy: %g passes, want %g", got, want)
	}
}

// lenEnergy is an Energy of n data, each 0, in one dimension: raceFloor
// reads only its Len.
type lenEnergy int

func (e lenEnergy) Len() int { return int(e) }
func (lenEnergy) Dim() int   { return 1 }
func (lenEnergy) Energies(dst, _ []float64, _ []int) {
	clear(dst)
}

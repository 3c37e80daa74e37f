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
	"slices"
	"strings"
	"time"
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
	// Time is the wall time of the whole choice: MAP, Laplace
	// approximation, control variates and pilots.
	Time time.Duration
}

// Candidate is one pilot of the automatic default.
type Candidate struct {
	Name string
	// ESSPerSecond is the pilot's minimum bulk ESS per second of sampling
	// (one chain), 0 if it failed or made too few draws to say.
	ESSPerSecond float64
	// EvalsPerStep is datum energy and gradient evaluations per transition.
	EvalsPerStep float64
	// Err says why the candidate was not measured, if it was not.
	Err string
	// Time is the pilot's wall time, warmup included.
	Time time.Duration
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
			fmt.Fprintf(&b, "; %s %.4g ESS/s (pilot %.2fs)", k.Name, k.ESSPerSecond, k.Time.Seconds())
		}
	}
	return b.String()
}

// The automatic default's rules.
const (
	// autoSmallN: below this many data a full pass is cheap and NUTS, the
	// best full-batch sampler, is chosen without pilots.
	autoSmallN = 2000
	// autoPilotWarmup and autoPilotTime size each pilot: warmup
	// transitions, then this much sampling.
	autoPilotWarmup = 300
	autoPilotTime   = 400 * time.Millisecond
	autoPilotDraws  = 4000 // enough for the ESS, few enough to summarise fast
	// autoPilotTimeout ends a pilot that has not finished its warmup: a
	// kernel that slow cannot compete (its ESS per second is at most about
	// two draws' worth per transition, which Candidate.Err reports).
	autoPilotTimeout = 1500 * time.Millisecond
)

// Choose is the automatic default: it decides which kernel, on which
// rewrite of p, samples p fastest, and says why. Sample with a nil Kernel
// calls it and records the Choice in the Result.
//
//   - N < 2000, or no gradient for a Laplace approximation: NUTS if the
//     posterior has gradients (a full pass is cheap there, and NUTS is the
//     best full-batch sampler), else MH.
//   - Otherwise it finds the MAP and the Laplace approximation N(θ̂, H⁻¹)
//     (FindLaplace), rewrites a GLM posterior with ControlVariates, and
//     measures with a short pilot each applicable candidate — TunaMH and
//     TFMH (SMH-2) on the control variates, MH, all with the Crank–Nicolson
//     proposal around the approximation; TunaMH with its default random
//     walk where the energy has a DiffBound (tempered or multimodal
//     targets, where the Laplace approximation is poor); NUTS — and picks
//     the highest ESS per second.
//
// The pilots use s's Seed, Init and Inits (chain 0's start) and run one
// chain for 300 warmup transitions and then 4000 draws or 0.4 s of
// sampling, whichever comes first; the choice
// takes a few seconds, which Choice.Time reports. Candidates that fail
// (no bound, a bound violated) are listed with their error. Pilots are
// timed, so the choice can differ between runs when two candidates are
// close; the Choice says which was taken.
func Choose(ctx context.Context, p *Posterior, s *Settings) (*Choice, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
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
	n, d := p.Len(), p.Dim()
	done := func(c *Choice) (*Choice, error) {
		c.Time = time.Since(start)
		return c, nil
	}
	if n < autoSmallN || !hasGrad {
		if hasGrad {
			return done(&Choice{Name: "NUTS", Kernel: NUTS{}, Posterior: p,
				Reason: fmt.Sprintf("N = %d < %d: a full pass over the data is cheap, and NUTS is the best full-batch sampler", n, autoSmallN)})
		}
		return done(&Choice{Name: "MH", Kernel: MH{}, Posterior: p,
			Reason: "the energy has no gradient: no Laplace approximation, no NUTS; full-batch random-walk MH"})
	}
	theta0 := set.init(0, d)
	la, err := FindLaplace(ctx, p, theta0, nil)
	if err != nil {
		return nil, fmt.Errorf("exactmh: automatic default: %w", err)
	}
	// A GLM's posterior is taken as unimodal (log-concave for log-concave
	// losses and priors; Student-t regression concentrates on one mode as
	// N grows). Other energies are searched from dispersed starts: a second
	// mode makes the Laplace approximation, and everything built on it,
	// the wrong tool.
	if _, isGLM := p.Energy.(GLM); !isGLM {
		other, err := otherMode(ctx, p, la, set.Seed)
		if err != nil {
			return nil, err
		}
		if other != nil {
			return done(multimodalChoice(ctx, p, la, other, set.Seed))
		}
	}
	type cand struct {
		name string
		post *Posterior
		k    Kernel
	}
	var cands []cand
	var cvErr error
	cn, err := la.CrankNicolson()
	if err == nil {
		cv, err := ControlVariates(p, la)
		if err == nil {
			cands = append(cands,
				cand{"TunaMH-CV-CN", cv, TunaMH{Proposal: cn, Scale: 1}},
				cand{"TFMH-CV-CN", cv, TFMH{Proposal: cn, Scale: 1}})
		} else {
			cvErr = err
		}
		cands = append(cands, cand{"MH-CN", p, MH{Proposal: cn, Scale: 1}})
	}
	if _, err := p.DiffBound(); err == nil {
		cands = append(cands, cand{"TunaMH", p, TunaMH{}})
	}
	cands = append(cands, cand{"NUTS", p, NUTS{}})

	choice := &Choice{Laplace: la}
	best := -1
	init := la.Mean
	for i, c := range cands {
		m := Candidate{Name: c.name}
		t0 := time.Now()
		rate, evals, err := pilot(ctx, c.post, c.k, init, set.Seed)
		m.Time = time.Since(t0)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			m.Err = err.Error()
		default:
			m.ESSPerSecond, m.EvalsPerStep = rate, evals
			if best < 0 || rate > choice.Candidates[best].ESSPerSecond {
				best = i
			}
		}
		choice.Candidates = append(choice.Candidates, m)
	}
	if best < 0 || choice.Candidates[best].ESSPerSecond == 0 {
		choice.Name, choice.Kernel, choice.Posterior = "NUTS", NUTS{}, p
		choice.Reason = "no pilot produced enough draws to compare; NUTS, the safe full-batch sampler"
	} else {
		c := cands[best]
		choice.Name, choice.Kernel, choice.Posterior = c.name, c.k, c.post
		choice.Reason = fmt.Sprintf("the highest ESS per second of %d pilots (%.4g; MAP and Laplace approximation after %d passes over the data)",
			len(cands), choice.Candidates[best].ESSPerSecond, la.Passes)
	}
	if cvErr != nil {
		choice.Reason += "; no control variates: " + cvErr.Error()
	}
	sortCandidates(choice.Candidates)
	return done(choice)
}

// pilot runs k on p for one chain — autoPilotWarmup transitions, then
// autoPilotTime of sampling — and returns its minimum bulk ESS per second
// of sampling and datum evaluations per transition.
func pilot(ctx context.Context, p *Posterior, k Kernel, init []float64, seed uint64) (rate, evals float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, autoPilotTimeout)
	defer cancel()
	res, err := Sample(ctx, p, k, &Settings{Chains: 1, Warmup: autoPilotWarmup, Draws: autoPilotDraws, Duration: autoPilotTime, Seed: seed, Init: init})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return 0, 0, err
	}
	if res == nil || res.Status != Completed {
		if res == nil || len(res.Chains) == 0 || res.Chains[0].Warmup.Steps == 0 {
			return 0, 0, fmt.Errorf("no transition in %v", autoPilotTimeout)
		}
		w := res.Chains[0].Warmup
		per := w.Time.Seconds() / float64(w.Steps)
		return 0, 0, fmt.Errorf("too slow: %d of %d warmup transitions in %v, %.3gs each (at most ≈ %.3g ESS/s)",
			w.Steps, autoPilotWarmup, autoPilotTimeout, per, 2/per)
	}
	c := res.Chains[0]
	if c.Len() < 20 {
		return 0, c.Sampling.EvalsPerStep(), nil
	}
	ess := res.Summary().MinESSBulk()
	if math.IsNaN(ess) || c.Sampling.Time <= 0 {
		return 0, c.Sampling.EvalsPerStep(), nil
	}
	tot := c.Sampling
	return ess / c.Sampling.Time.Seconds(), float64(tot.Evals+tot.GradEvals) / float64(tot.Steps), nil
}

// autoModeSearches is how many dispersed MAP searches look for a second
// mode of a non-GLM posterior.
const autoModeSearches = 4

// otherMode returns a mode of p other than la's, found by FindMAP from
// dispersed starts (uniform on a Box prior, θ̂ + 3·L·z otherwise), or nil.
// Modes count as distinct when ‖θ₁ − θ₂‖_H > 3 and the other's log
// density is within 20 of the best.
func otherMode(ctx context.Context, p *Posterior, la *LaplaceApprox, seed uint64) ([]float64, error) {
	d := len(la.Mean)
	rng := rand.New(rand.NewPCG(seed, 0x6d6f646573)) // not a chain's stream
	prior := p.prior()
	start := make([]float64, d)
	z := make([]float64, d)
	for range autoModeSearches {
		if box, ok := prior.(*Box); ok {
			for j := range start {
				start[j] = box.Lo[j] + rng.Float64()*(box.Hi[j]-box.Lo[j])
			}
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
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
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
			return m.Theta, nil
		}
	}
	return nil, nil
}

// multimodalChoice pilots the kernels that do not lean on one Laplace
// approximation — TunaMH (where the energy has a DiffBound), MH, NUTS —
// and picks the fastest.
func multimodalChoice(ctx context.Context, p *Posterior, la *LaplaceApprox, other []float64, seed uint64) *Choice {
	type cand struct {
		name string
		k    Kernel
	}
	var cands []cand
	if _, err := p.DiffBound(); err == nil {
		cands = append(cands, cand{"TunaMH", TunaMH{}})
	}
	cands = append(cands, cand{"MH", MH{}}, cand{"NUTS", NUTS{}})
	choice := &Choice{Laplace: la, Posterior: p}
	best := -1
	for i, c := range cands {
		m := Candidate{Name: c.name}
		t0 := time.Now()
		rate, evals, err := pilot(ctx, p, c.k, la.Mean, seed)
		m.Time = time.Since(t0)
		if err != nil {
			m.Err = err.Error()
		} else {
			m.ESSPerSecond, m.EvalsPerStep = rate, evals
			if best < 0 || rate > choice.Candidates[best].ESSPerSecond {
				best = i
			}
		}
		choice.Candidates = append(choice.Candidates, m)
	}
	if best < 0 {
		best = len(cands) - 1
	}
	choice.Name, choice.Kernel = cands[best].name, cands[best].k
	choice.Reason = fmt.Sprintf("the posterior has at least two modes (%v and %v): no Laplace approximation, no control variates; the highest ESS per second of %d pilots",
		roundVec(la.Mean), roundVec(other), len(cands))
	sortCandidates(choice.Candidates)
	return choice
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
		case a.ESSPerSecond > b.ESSPerSecond:
			return -1
		case a.ESSPerSecond < b.ESSPerSecond:
			return 1
		}
		return 0
	})
}

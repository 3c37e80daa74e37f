// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// customMultilevel is a multilevel logistic regression written as a user
// would write it: an Energy with EnergyDiffs, a gradient, a dense Hessian
// and a DiffBound, no GLM contract and no multilevel prior. θ holds p
// fixed effects, then one effect per group; datum i's linear predictor is
// x_iᵀβ + u_{g(i)}.
type customMultilevel struct {
	n, p, g int
	x       []float64 // n×p, row-major
	grp     []int
	y       []float64
}

func (e *customMultilevel) Len() int { return e.n }
func (e *customMultilevel) Dim() int { return e.p + e.g }

func (e *customMultilevel) lin(i int, theta []float64) float64 {
	z := theta[e.p+e.grp[i]]
	for j, v := range e.x[i*e.p : (i+1)*e.p] {
		z += v * theta[j]
	}
	return z
}

// softplus is log(1 + eᶻ), stably.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

func (e *customMultilevel) loss(i int, z float64) float64 { return softplus(z) - e.y[i]*z }

func (e *customMultilevel) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.loss(i, e.lin(i, theta))
	}
}

func (e *customMultilevel) EnergyDiffs(dst, theta, thetaNew []float64, idx []int) {
	for k, i := range idx {
		dst[k] = e.loss(i, e.lin(i, theta)) - e.loss(i, e.lin(i, thetaNew))
	}
}

func (e *customMultilevel) AddGradient(grad, theta []float64, idx []int, w []float64) {
	for k, i := range idx {
		r := w[k] * (1/(1+math.Exp(-e.lin(i, theta))) - e.y[i])
		for j, v := range e.x[i*e.p : (i+1)*e.p] {
			grad[j] += r * v
		}
		grad[e.p+e.grp[i]] += r
	}
}

func (e *customMultilevel) AddHessian(h, theta []float64, idx []int, w []float64) {
	d := e.Dim()
	for k, i := range idx {
		s := 1 / (1 + math.Exp(-e.lin(i, theta)))
		c := w[k] * s * (1 - s)
		row := e.x[i*e.p : (i+1)*e.p]
		gj := e.p + e.grp[i]
		for a, va := range row {
			for b := a; b < e.p; b++ {
				h[a*d+b] += c * va * row[b]
			}
			h[a*d+gj] += c * va
		}
		h[gj*d+gj] += c
	}
}

// DiffBound: |f(z) − f(z′)| ≤ |z − z′| ≤ ‖(x_i, 1)‖·‖θ − θ′‖ for the
// logistic loss, whose derivative lies in [−1, 1].
func (e *customMultilevel) DiffBound(Prior) (*DiffBound, error) {
	c := make([]float64, e.n)
	for i := range c {
		s := 1.0
		for _, v := range e.x[i*e.p : (i+1)*e.p] {
			s += v * v
		}
		c[i] = math.Sqrt(s)
	}
	return &DiffBound{C: c}, nil
}

// customMultilevelPosterior returns the custom energy on n data, p fixed
// effects and g groups under an isotropic Gaussian prior of sd 3.
func customMultilevelPosterior(t *testing.T, n, p, g int) *Posterior {
	t.Helper()
	rng := rand.New(rand.NewPCG(43, 1))
	e := &customMultilevel{n: n, p: p, g: g, x: make([]float64, n*p), grp: make([]int, n), y: make([]float64, n)}
	beta := make([]float64, p)
	for j := range beta {
		beta[j] = 0.5 * rng.NormFloat64()
	}
	u := make([]float64, g)
	for j := range u {
		u[j] = 0.7 * rng.NormFloat64()
	}
	for i := range n {
		e.grp[i] = i % g
		z := u[e.grp[i]]
		for j := range p {
			e.x[i*p+j] = rng.NormFloat64()
			z += e.x[i*p+j] * beta[j]
		}
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			e.y[i] = 1
		}
	}
	prior, err := NewIsoGaussian(p+g, 3)
	if err != nil {
		t.Fatal(err)
	}
	return &Posterior{Energy: e, Prior: prior}
}

// TestAutoUnfinishedPilotScored is issue 43's regression on a user's own
// multilevel energy (EnergyDiffs, gradient, Hessian, DiffBound; there
// N = 10⁵ and d = 505, here N = 6000 and d = 105, with the pilots' sampling
// budget cut to three MH-CN transitions to put them in that problem's
// regime, where the MH-CN and TunaMH pilots make fewer than 20 draws):
// pilots that make too few draws to measure are scored on the draws they
// made, with the others, so the choice is one of them, not full-batch
// NUTS, several passes a transition. Under the mutant that scores them 0
// (pilotNoPartial: their "0 ESS/s" of before), NUTS wins, as it did. At
// the full budgets MH-CN is chosen.
func TestAutoUnfinishedPilotScored(t *testing.T) {
	if testing.Short() {
		t.Skip("three choices on N = 6000, d = 105")
	}
	p := customMultilevelPosterior(t, 6000, 5, 100)
	ctx := context.Background()
	choose := func(what string) *Choice {
		c, err := Choose(ctx, p, &Settings{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v", what, c)
		return c
	}
	full := choose("full budgets")
	if full.Name != "MH-CN" {
		t.Errorf("full budgets: chose %s, want MH-CN", full.Name)
	}
	// Sampling budget: three transitions of MH-CN (a pass, and its dense
	// proposal).
	step := float64(p.Len()) + 2.5*105*105/datumMadds(p)
	pilotBudgetScale[1] = 3 * step / max(autoPilotSampleCost, autoPilotSamplePasses*float64(p.Len()))
	defer func() { pilotBudgetScale = [2]float64{1, 1} }()
	cut := choose("sampling budget of three MH-CN transitions")
	if strings.HasPrefix(cut.Name, "NUTS") {
		t.Errorf("cut budget: chose %s", cut.Name)
	}
	for _, m := range cut.Candidates {
		if m.Name == cut.Name && !(m.Partial > 0) {
			t.Errorf("cut budget: the winner %+v was not scored on partial draws", m)
		}
	}
	pilotNoPartial = true
	defer func() { pilotNoPartial = false }()
	if mut := choose("mutant: unfinished pilots scored 0"); !strings.HasPrefix(mut.Name, "NUTS") {
		t.Errorf("mutant pilotNoPartial: chose %s, want NUTS (the regression): the test does not reach the regime", mut.Name)
	}
}

// TestAutoDeterministicUnderLoad: Sample's automatic default with the same
// seed gives the same choice and the same draws, bit for bit, alone and
// with two goroutines spinning beside it (on a 2-core machine, as much
// load again as the run itself) and its pilots stalled now and then.
// Nothing in the choice reads a clock, so this holds by construction; the
// test does not depend on how much the load slows the run.
func TestAutoDeterministicUnderLoad(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 3000, 3, 1)
	run := func(load bool) *Result {
		if load {
			stop := make(chan struct{})
			defer close(stop)
			for range 2 {
				go func() {
					x := 0
					for {
						select {
						case <-stop:
							return
						default:
							x++
						}
					}
				}()
			}
			pilotStallHook = func() func(*Event) {
				return func(e *Event) {
					if e.Iteration%700 == 3 {
						time.Sleep(time.Millisecond)
					}
				}
			}
			defer func() { pilotStallHook = nil }()
		}
		res, err := Sample(context.Background(), p, nil, &Settings{Chains: 2, Warmup: 200, Draws: 200, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	calm, loaded := run(false), run(true)
	if a, b := calm.Choice.String(), loaded.Choice.String(); a != b {
		t.Fatalf("the choice changed under load:\n%s\n%s", a, b)
	}
	for c := range calm.Chains {
		if !slices.Equal(calm.Chains[c].Draws, loaded.Chains[c].Draws) {
			t.Fatalf("chain %d's draws differ under load (choice %s)", c, calm.Choice.Name)
		}
	}
	t.Logf("chose %s under load as alone: %v", calm.Choice.Name, calm.Choice)
}

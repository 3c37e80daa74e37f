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
)

// TestAutoSmallN checks that the automatic default picks NUTS without
// pilots for small N and says so, and MH when there is no gradient.
func TestAutoSmallN(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 300, 3, 1)
	res, err := Sample(context.Background(), p, nil, &Settings{Chains: 2, Warmup: 200, Draws: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Choice == nil || res.Choice.Name != "NUTS" || res.Kernel != "NUTS" || !strings.Contains(res.Choice.Reason, "N = 300") {
		t.Fatalf("choice %v, kernel %s", res.Choice, res.Kernel)
	}
	g := &Linear1{x: []float64{1, 2, 3}}
	box, err := NewBox([]float64{-1}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Choose(context.Background(), &Posterior{Energy: g, Prior: box}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "MH" || !strings.Contains(c.Reason, "no gradient") {
		t.Errorf("no gradient: choice %v", c)
	}
}

// Linear1 is a one-dimensional energy without a gradient.
type Linear1 struct{ x []float64 }

func (e *Linear1) Len() int { return len(e.x) }
func (e *Linear1) Dim() int { return 1 }
func (e *Linear1) Energies(dst, theta []float64, idx []int) {
	for k, i := range idx {
		dst[k] = theta[0] * e.x[i]
	}
}

// TestAutoTall checks the automatic default on a tall logistic regression:
// it pilots the control-variate kernels, MH and NUTS, picks one of the
// fastest, records the choice, and the run it starts is right (its mean
// within 5 MCSE... of the Laplace mean, which at N = 2·10⁴ is within a
// fraction of a posterior sd of the posterior mean).
func TestAutoTall(t *testing.T) {
	if testing.Short() {
		t.Skip("pilots of four kernels on N = 2·10⁴")
	}
	p, _, la := cvProblem(t, "logistic", 20000, 5, 1)
	res, err := Sample(context.Background(), p, nil, &Settings{Chains: 2, Warmup: 500, Draws: 2000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Choice
	if c == nil || len(c.Candidates) < 4 {
		t.Fatalf("choice %v", c)
	}
	t.Logf("%v (%.2fs)", c, c.Time.Seconds())
	if c.Candidates[0].Name != c.Name {
		t.Errorf("chose %s, best pilot %s", c.Name, c.Candidates[0].Name)
	}
	if !strings.HasSuffix(c.Name, "-CV-CN") {
		t.Errorf("chose %s on a tall GLM; want a control-variate kernel", c.Name)
	}
	for _, k := range c.Candidates {
		if k.Name == "TunaMH" && !strings.Contains(k.Err, "untempered") {
			t.Errorf("plain TunaMH was piloted on an untempered GLM: %+v", k)
		}
	}
	m := res.Mean()
	for j := range m {
		sd := math.Sqrt(la.Covariance().At(j, j))
		if math.Abs(m[j]-la.Mean[j]) > 0.5*sd {
			t.Errorf("mean[%d] = %v, Laplace mean %v (sd %v)", j, m[j], la.Mean[j], sd)
		}
	}
	// The chosen kernel starts at its pilot's adapted scale, its chains at
	// draws of the Laplace approximation.
	var start float64
	switch k := c.Kernel.(type) {
	case TFMH:
		start = k.Scale
	case TunaMH:
		start = k.Scale
	case MH:
		start = k.Scale
	}
	if s := c.Candidates[0].Scale; !(s > 0) || start != s {
		t.Errorf("chosen kernel %+v starts at scale %v, its pilot adapted %v: want it to start there", c.Kernel, start, s)
	}
	if len(res.Settings.Inits) != 2 || slices.Equal(res.Settings.Inits[0], res.Settings.Inits[1]) {
		t.Errorf("Inits %v: want two distinct draws of the Laplace approximation", res.Settings.Inits)
	}
}

// TestLaplaceInits checks the automatic default's starting points: one
// draw of N(θ̂, H⁻¹) per chain, chain c's from its own stream (a run split
// by FirstChain starts each chain where the whole run would), θ̂ for a draw
// outside the prior's support, and the user's Init or Inits kept.
func TestLaplaceInits(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 3000, 3, 1)
	whole := LaplaceInits(&Settings{Seed: 5}, la, p)
	if len(whole.Inits) != 4 {
		t.Fatalf("%d inits, want 4 (the default chains)", len(whole.Inits))
	}
	sd := la.SD()
	for c, x := range whole.Inits {
		var far float64
		for j := range x {
			far = math.Max(far, math.Abs(x[j]-la.Mean[j])/sd[j])
		}
		if far == 0 || far > 6 {
			t.Errorf("chain %d starts %.3g sd from θ̂: want a draw of the approximation", c, far)
		}
	}
	if part := LaplaceInits(&Settings{Seed: 5, Chains: 1, FirstChain: 2}, la, p); !slices.Equal(part.Inits[0], whole.Inits[2]) {
		t.Errorf("FirstChain 2 starts at %v, the whole run's chain 2 at %v", part.Inits[0], whole.Inits[2])
	}
	if other := LaplaceInits(&Settings{Seed: 6}, la, p); slices.Equal(other.Inits[0], whole.Inits[0]) {
		t.Error("Seed 6 starts where Seed 5 does")
	}
	own := &Settings{Init: []float64{0, 0, 0}}
	if LaplaceInits(own, la, p) != own || LaplaceInits(nil, nil, p) != nil {
		t.Error("a set Init, or no approximation, must leave the Settings as they are")
	}
	// A box that θ̂ is in but that no draw 3 sd out is: θ̂ instead.
	lo, hi := make([]float64, 3), make([]float64, 3)
	for j := range lo {
		lo[j], hi[j] = la.Mean[j]-1e-3*sd[j], la.Mean[j]+1e-3*sd[j]
	}
	box, err := NewBox(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	boxed := &Posterior{Energy: p.Energy, Prior: box}
	for c, x := range LaplaceInits(&Settings{Seed: 5}, la, boxed).Inits {
		if !slices.Equal(x, la.Mean) {
			t.Errorf("chain %d starts at %v, outside the box; want θ̂ = %v", c, x, la.Mean)
		}
	}
}

// TestAutoMultimodal checks that on the TunaMH paper's tempered mixture
// (two modes, N = 10⁴, β = 10⁻²) the automatic default finds the second
// mode, says so, and picks a kernel that does not lean on one Laplace
// approximation.
func TestAutoMultimodal(t *testing.T) {
	if testing.Short() {
		t.Skip("mode searches and pilots on N = 10⁴")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float64, 10000)
	for i := range x {
		x[i] = math.Sqrt(2) * rng.NormFloat64()
		if rng.IntN(2) == 1 {
			x[i]++
		}
	}
	e, err := NewGaussianMixture(x, 2)
	if err != nil {
		t.Fatal(err)
	}
	box, err := NewCube(2, -3, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := &Posterior{Energy: e, Prior: box, Beta: 0.01}
	c, err := Choose(context.Background(), p, &Settings{Init: []float64{0.5, 0.5}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c)
	if !strings.Contains(c.Reason, "two modes") {
		t.Errorf("mixture not recognised as multimodal: %v", c)
	}
	for _, k := range c.Candidates {
		if strings.Contains(k.Name, "CN") || strings.Contains(k.Name, "CV") {
			t.Errorf("candidate %s leans on the Laplace approximation", k.Name)
		}
	}
}

// TestMinESSBulk checks the pilots' shortcut against the full summary.
func TestMinESSBulk(t *testing.T) {
	p, _, _ := cvProblem(t, "logistic", 500, 3, 1)
	res, err := Sample(context.Background(), p, MH{}, &Settings{Chains: 1, Warmup: 200, Draws: 500, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := minESSBulk(res), res.Summary().MinESSBulk(); got != want || !(got > 0) {
		t.Errorf("minESSBulk %v, Summary().MinESSBulk() %v", got, want)
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"math"
	"math/rand/v2"
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

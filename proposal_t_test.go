// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/exactmh/exactmh"
)

// studentCN is crankNicolson's proposal with Student-t moves (ν = 4) and
// no random-walk steps, so that every step exercises the scale mixture.
func studentCN(pb problem) exactmh.Proposal {
	cn := crankNicolson(pb).(*exactmh.CrankNicolson)
	cn.Nu, cn.Walk = 4, 0
	return cn
}

// gaussianRatio makes t's Student-t moves but returns the Gaussian
// reference's log ratio log N(θ; μ, Σ) − log N(θ′; μ, Σ) (from g, the same
// μ and Σ): a mutant whose moves and ratio disagree.
type gaussianRatio struct {
	t exactmh.Proposal
	g *exactmh.CrankNicolson
}

func (m gaussianRatio) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	m.t.Propose(rng, dst, theta, scale)
	return exactmh.CNQuad(m.g, theta)/2 - exactmh.CNQuad(m.g, dst)/2
}

// prodT is the energy of one datum whose density is the product of
// Student-t densities t_ν in the coordinates u = L⁻¹(θ − μ) whitened by
// N(μ, LLᵀ): the reference of CrankNicolson's Student-t moves.
type prodT struct {
	mean []float64
	l    *mat.TriDense
	nu   float64
}

func (e prodT) Len() int { return 1 }
func (e prodT) Dim() int { return len(e.mean) }
func (e prodT) Energies(dst, theta []float64, idx []int) {
	d := len(e.mean)
	v := mat.NewVecDense(d, nil)
	for j := range d {
		v.SetVec(j, theta[j]-e.mean[j])
	}
	var u mat.VecDense
	if err := u.SolveVec(e.l, v); err != nil {
		panic(err)
	}
	var s float64
	for j := range d {
		s += (e.nu + 1) / 2 * math.Log1p(u.AtVec(j)*u.AtVec(j)/e.nu)
	}
	for k := range idx {
		dst[k] = s
	}
}

// On a target equal to its reference, the product of Student-t densities
// in the whitened coordinates, the Student-t move's log proposal ratio is
// exactly log π(θ) − log π(θ′) at random pairs, scales and distances (so
// MH accepts every move), and MH with it keeps every coordinate's tail
// probability: P(|u_j| > t975) = 0.05.
func TestStudentCrankNicolson(t *testing.T) {
	mean := []float64{1, -2, 0.5}
	cov := testCov()
	cn, err := exactmh.NewCrankNicolson(mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	cn.Walk, cn.Nu = 0, 3
	var ch mat.Cholesky
	ch.Factorize(cov)
	var l mat.TriDense
	ch.LTo(&l)
	e := prodT{mean: mean, l: &l, nu: 3}
	rng := rand.New(rand.NewPCG(3, 4))
	theta, next := make([]float64, 3), make([]float64, 3)
	u0, u1 := []float64{0}, []float64{0}
	for range 500 {
		scale := math.Exp(5*rng.Float64() - 3)
		for j := range theta {
			theta[j] = mean[j] + 10*rng.NormFloat64()*math.Sqrt(cov.At(j, j))
		}
		got := cn.Propose(rng, next, theta, scale)
		e.Energies(u0, theta, []int{0})
		e.Energies(u1, next, []int{0})
		if want := u1[0] - u0[0]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Fatalf("scale %v: log proposal ratio %v, want log π(θ) − log π(θ′) = %v", scale, got, want)
		}
	}
	post := &exactmh.Posterior{Energy: e}
	res, err := exactmh.Sample(context.Background(), post, exactmh.MH{Proposal: cn, Scale: 1}, &exactmh.Settings{Chains: 2, Warmup: 200, Draws: 20000, Seed: 7, Init: mean})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Sampling().AcceptRate(); a < 0.999 {
		t.Errorf("MH on the reference accepted %.4f of the moves, want all", a)
	}
	const t975 = 3.182446305284263 // P(|u| > t975) = 0.05 under t₃
	var u mat.VecDense
	for j := range 3 {
		var in, n float64
		for c := range res.Chains {
			for k := range res.Chains[c].Len() {
				v := mat.NewVecDense(3, nil)
				for a, x := range res.Draw(c, k) {
					v.SetVec(a, x-mean[a])
				}
				if err := u.SolveVec(&l, v); err != nil {
					t.Fatal(err)
				}
				if math.Abs(u.AtVec(j)) > t975 {
					in++
				}
				n++
			}
		}
		// The moves accept always and ρ ≈ e^{−1}: the indicator's draws are
		// close to independent, sd √(0.05·0.95/n) ≈ 0.0011.
		if p := in / n; math.Abs(p-0.05) > 0.006 {
			t.Errorf("u_%d: P(|u| > t975) = %.4f, want 0.05", j, p)
		}
	}
}

// Nu below 1, infinite or NaN is an error naming Nu; its String records
// it.
func TestStudentCrankNicolsonErrors(t *testing.T) {
	p := logisticPosterior() // d = 2
	for _, nu := range []float64{0.5, -1, math.Inf(1), math.NaN()} {
		cn, err := exactmh.NewCrankNicolson([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
		if err != nil {
			t.Fatal(err)
		}
		cn.Nu = nu
		_, err = exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 1, Draws: 1})
		if err == nil || !strings.Contains(err.Error(), "Nu") {
			t.Errorf("CrankNicolson.Nu = %v: error %v, want one naming Nu", nu, err)
		}
	}
	cn, _ := exactmh.NewCrankNicolson([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	cn.Nu = 5
	if got, want := cn.String(), "CrankNicolson(d=2, walk=0.1, nu=5)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
}

// Summary warns when a chain sticks: on Student's t₃ with Crank–Nicolson
// moves alone around its lighter-tailed Laplace approximation (chains
// stay hundreds to thousands of transitions in a tail,
// TestCrankNicolsonWalkHeavyTail) it names the longest stay, and not on
// the random-walk chain of the same target.
func TestSummaryWarnsOfStays(t *testing.T) {
	post := &exactmh.Posterior{Energy: tDist3{}}
	cn, err := exactmh.NewCrankNicolson([]float64{0}, mat.NewSymDense(1, []float64{0.75}))
	if err != nil {
		t.Fatal(err)
	}
	cn.Walk = 0
	warned := func(k exactmh.Kernel) []string {
		res, err := exactmh.Sample(context.Background(), post, k, &exactmh.Settings{Chains: 4, Warmup: 500, Draws: 20000, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range res.Summary().Warnings {
			if strings.Contains(w, "stayed") || strings.Contains(w, "stick in a tail") {
				out = append(out, w)
			}
		}
		return out
	}
	if w := warned(exactmh.MH{Proposal: cn, Scale: 1}); len(w) == 0 {
		t.Error("Crank–Nicolson moves alone on t₃: no warning of a stay")
	} else {
		t.Log(w)
	}
	if w := warned(exactmh.MH{Scale: 1}); len(w) != 0 {
		t.Errorf("random walk on t₃: %q", w)
	}
}

// MaxScale caps the Crank–Nicolson moves' step scale: Propose uses
// ρ = e^{−min(scale, MaxScale)} (Rho), warmup adapts the scale no higher
// (on a logistic posterior close to its Laplace approximation, where the
// uncapped scale runs off past 10), for MH and for TunaMH, whose
// mid-warmup turn restarts the adaptation (mutant caught: no clamp in the
// driver, chains at 10¹⁴²). A negative or NaN
// MaxScale is an error naming it; String records it.
func TestCrankNicolsonMaxScale(t *testing.T) {
	p := logisticPosterior()
	la, err := exactmh.FindLaplace(context.Background(), p, []float64{0, 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := exactmh.ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		max  float64
		post *exactmh.Posterior
		k    func(*exactmh.CrankNicolson) exactmh.Kernel
	}{
		{0, p, func(cn *exactmh.CrankNicolson) exactmh.Kernel { return exactmh.MH{Proposal: cn, Scale: 1} }},
		{1.5, p, func(cn *exactmh.CrankNicolson) exactmh.Kernel { return exactmh.MH{Proposal: cn, Scale: 1} }},
		{1.5, cv, func(cn *exactmh.CrankNicolson) exactmh.Kernel { return exactmh.TunaMH{Proposal: cn, Scale: 1} }},
	} {
		cn, err := la.CrankNicolson()
		if err != nil {
			t.Fatal(err)
		}
		cn.MaxScale = tc.max
		k := tc.k(cn)
		res, err := exactmh.Sample(context.Background(), tc.post, k, &exactmh.Settings{Chains: 4, Warmup: 400, Draws: 200, Seed: 11, Init: la.Mean})
		if err != nil {
			t.Fatal(err)
		}
		for c, ch := range res.Chains {
			switch {
			case tc.max == 0 && !(ch.Scale > 10):
				t.Errorf("%s uncapped, chain %d: scale %v, want it run off past 10", k.Name(), c, ch.Scale)
			case tc.max > 0 && !(ch.Scale <= tc.max && ch.Scale > tc.max/10):
				t.Errorf("%s MaxScale %v, chain %d: scale %v, want in (MaxScale/10, MaxScale]", k.Name(), tc.max, c, ch.Scale)
			}
		}
		want := math.Exp(-100)
		if tc.max > 0 {
			want = math.Exp(-tc.max)
		}
		if math.Abs(cn.Rho(100)-want) > 1e-15 {
			t.Errorf("MaxScale %v: Rho(100) = %v, want %v", tc.max, cn.Rho(100), want)
		}
	}
	cn, _ := exactmh.NewCrankNicolson([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	cn.MaxScale = 1.5
	if got, want := cn.String(), "CrankNicolson(d=2, walk=0.1, max_scale=1.5)"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	for _, m := range []float64{-1, math.NaN()} {
		cn.MaxScale = m
		_, err = exactmh.Sample(context.Background(), p, exactmh.MH{Proposal: cn}, &exactmh.Settings{Chains: 1, Draws: 1})
		if err == nil || !strings.Contains(err.Error(), "MaxScale") {
			t.Errorf("CrankNicolson.MaxScale = %v: error %v, want one naming MaxScale", m, err)
		}
	}
}

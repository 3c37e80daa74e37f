//go:build unix

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

var (
	movesMeasure   = flag.Bool("movesmeasure", false, "run TestGroupGibbsMovesMeasure, which compares GroupGibbs with and without its shifts and scale moves (figures/bench/multilevel_moves.txt)")
	movesSynthetic = flag.Bool("movessynthetic", false, "TestGroupGibbsMovesMeasure: only the synthetic design of 1,000 groups (N = 10⁵), without and with the moves")
)

// movesDesigns are TestGroupGibbsMovesMeasure's synthetic designs, like
// issue 41's cases:
//
//   - persons × items: 300 persons × 24 items, every person answering
//     every item (N = 7,200 binary responses), random intercepts for
//     persons (τ = 1) and items (τ = 0.5), and item-level fixed effects
//     constant within each item — its type (0/1) and a situation of three
//     levels (two indicators) — with an intercept: each item-level
//     covariate moves with the items' effects;
//   - nested, strong covariate, a variance at zero: pupils (N = 20,000) in
//     400 schools in 40 areas, a standardised covariate of coefficient 2,
//     schools' τ = 0.5 and areas' τ = 0 (the data hold no area effect):
//     the intercept, the areas and their schools move together, and the
//     areas' scale sits in the funnel's neck.
func movesDesigns(rng *rand.Rand) (names []string, posts []*exactmh.Posterior, err error) {
	{
		np, ni := 300, 24
		n := np * ni
		m := &model.Multilevel{
			Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
			Fixed:   []model.Covariate{{Name: "type", Values: make([]float64, n)}, {Name: "sit2", Values: make([]float64, n)}, {Name: "sit3", Values: make([]float64, n)}},
			FixedSD: []float64{5, 5, 5, 5},
			Factors: []model.Factor{
				{Name: "person", Index: make([]int32, n), Tau: model.HalfNormal(1)},
				{Name: "item", Index: make([]int32, n), Tau: model.HalfNormal(1)},
			},
		}
		up, ui := make([]float64, np), make([]float64, ni)
		for j := range up {
			up[j] = rng.NormFloat64()
		}
		for j := range ui {
			ui[j] = 0.5 * rng.NormFloat64()
		}
		for i := range n {
			p, it := i/ni, i%ni
			typ, sit := float64(it%2), it/2%3
			m.Fixed[0].Values[i] = typ
			if sit == 1 {
				m.Fixed[1].Values[i] = 1
			}
			if sit == 2 {
				m.Fixed[2].Values[i] = 1
			}
			m.Factors[0].Index[i], m.Factors[1].Index[i] = int32(p), int32(it)
			z := -0.3 + 0.8*typ - 0.5*m.Fixed[1].Values[i] + 0.4*m.Fixed[2].Values[i] + up[p] + ui[it]
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				m.Y[i] = 1
			}
		}
		p, err := model.NewMultilevel(m)
		if err != nil {
			return nil, nil, err
		}
		names, posts = append(names, "persons × items, item-level covariates"), append(posts, p)
	}
	{
		n, ns, na := 20000, 400, 40
		m := &model.Multilevel{
			Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
			Fixed:   []model.Covariate{{Name: "prior", Values: make([]float64, n)}},
			FixedSD: []float64{5, 5},
			Factors: []model.Factor{
				{Name: "area", Index: make([]int32, n), Tau: model.HalfNormal(1)},
				{Name: "school", Index: make([]int32, n), Tau: model.HalfNormal(1)},
			},
		}
		us := make([]float64, ns)
		for j := range us {
			us[j] = 0.5 * rng.NormFloat64()
		}
		for i := range n {
			s := rng.IntN(ns)
			if i < ns {
				s = i
			}
			x := rng.NormFloat64()
			m.Fixed[0].Values[i] = x
			m.Factors[0].Index[i], m.Factors[1].Index[i] = int32(s%na), int32(s)
			z := 0.2 + 2*x + us[s]
			if rng.Float64() < 1/(1+math.Exp(-z)) {
				m.Y[i] = 1
			}
		}
		p, err := model.NewMultilevel(m)
		if err != nil {
			return nil, nil, err
		}
		names, posts = append(names, "pupils in schools in areas, strong covariate, areas' τ = 0"), append(posts, p)
	}
	if *movesSynthetic {
		// BenchmarkGroupGibbsAcrossG's model at G = 1,000 (N = 10⁵): the
		// synthetic rows must not get slower.
		groups, per := 1000, 100
		n := groups * per
		m := &model.Multilevel{
			Family: model.LogisticFamily{}, Y: make([]float64, n), Intercept: true,
			Fixed:   []model.Covariate{{Name: "x1", Values: make([]float64, n)}, {Name: "x2", Values: make([]float64, n)}},
			FixedSD: []float64{5, 5, 5},
			Factors: []model.Factor{{Name: "g", Index: make([]int32, n), Tau: model.HalfNormal(1)}},
			Float32: true,
		}
		m.Factors[0].Slopes = []model.Covariate{{Name: "x1", Values: m.Fixed[0].Values}}
		for g := range groups {
			u, v := 0.5*rng.NormFloat64(), 0.25*rng.NormFloat64()
			for k := range per {
				i := g*per + k
				x1, x2 := rng.NormFloat64(), rng.NormFloat64()
				m.Fixed[0].Values[i], m.Fixed[1].Values[i] = x1, x2
				m.Factors[0].Index[i] = int32(g)
				z := -1 + 0.5*x1 - 0.3*x2 + u + v*x1
				if rng.Float64() < 1/(1+math.Exp(-z)) {
					m.Y[i] = 1
				}
			}
		}
		p, err := model.NewMultilevel(m)
		if err != nil {
			return nil, nil, err
		}
		names, posts = append(names, "synthetic: 1,000 groups × 100, random intercept and slope"), append(posts, p)
	}
	return names, posts, nil
}

// TestGroupGibbsMovesMeasure runs GroupGibbs with and without its shifts
// and scale moves (and with each alone) on movesDesigns, 4 chains × (1000
// + 1000) from MultilevelCenter's centre, and logs the largest R-hat,
// the smallest bulk ESS (and which parameter), the process's CPU seconds
// (getrusage, user + system: the centre excluded, computed once) and the
// data read per sweep. Run with -movesmeasure; the figures are in
// figures/bench/multilevel_moves.txt.
//
//	go test -run TestGroupGibbsMovesMeasure -movesmeasure -v -timeout 60m .
//
// With -movessynthetic it runs only BenchmarkGroupGibbsAcrossG's model at
// G = 1,000 (N = 10⁵), without and with the moves.
func TestGroupGibbsMovesMeasure(t *testing.T) {
	if !*movesMeasure {
		t.Skip("a measurement: run with -movesmeasure")
	}
	names, posts, err := movesDesigns(rand.New(rand.NewPCG(41, 1)))
	if *movesSynthetic {
		names, posts = names[2:], posts[2:]
	}
	if err != nil {
		t.Fatal(err)
	}
	for q, p := range posts {
		cpu0 := processCPU()
		center, _, err := model.MultilevelCenter(context.Background(), p, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: N = %d, d = %d; centre %.1f CPU-s", names[q], p.Len(), p.Energy.Dim(), float64(processCPU()-cpu0)/1e9)
		base := multilevel.GroupGibbs{Center: center}
		for _, v := range []struct {
			name string
			k    multilevel.GroupGibbs
		}{
			{"without the moves", multilevel.GroupGibbsNoMoves(base)},
			{"shifts only", multilevel.GroupGibbsNoScaleMoves(base)},
			{"scale moves only", multilevel.GroupGibbsNoShifts(base)},
			{"with the moves", base},
		} {
			if *movesSynthetic && v.name != "without the moves" && v.name != "with the moves" {
				continue
			}
			cpu0 := processCPU()
			res, err := exactmh.Sample(context.Background(), p, v.k,
				&exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 1000, Seed: 5, Init: center})
			if err != nil {
				t.Fatal(err)
			}
			cpu := float64(processCPU()-cpu0) / 1e9
			s := res.Summary()
			rhat, ess := 0.0, math.Inf(1)
			var rn, en string
			for _, ps := range s.Params {
				if ps.RHat > rhat {
					rhat, rn = ps.RHat, ps.Name
				}
				if ps.ESSBulk < ess {
					ess, en = ps.ESSBulk, ps.Name
				}
			}
			t.Logf("%s | %s: max R-hat %.3f (%s), min bulk ESS %.0f (%s), %.1f CPU-s, %.1f min bulk ESS per CPU-s, %.1f data per sweep; %v",
				names[q], v.name, rhat, rn, ess, en, cpu, ess/cpu, res.Sampling().MeanBatch(), res.Chains[0].Params)
		}
	}
}

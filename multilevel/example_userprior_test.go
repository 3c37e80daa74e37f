// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
	"github.com/exactmh/exactmh/sparse"
)

// userPrior is a random-intercept model's prior written from the
// multilevel contract alone (multilevel.Layout, exactmh.PriorGradienter,
// exactmh.SparseHessianer), as a user would write one: θ = (β₀, β₁, u_0,
// …, u_{G−1}, s) with β ~ N(0, 1) each, u_g ~ N(0, e^{2s}) and τ = e^s ~
// half-normal(1), s sampled (the Jacobian e^s included):
//
//	log p(θ) = −(β₀² + β₁²)/2 − Σ_g u_g²e^{−2s}/2 − G·s − e^{2s}/2 + s.
//
// It is the law of mcmctest.MultilevelModel's prior; without jacobian it
// drops the +s, a different law (the mutant the kit must catch).
type userPrior struct {
	groups     int
	noJacobian bool
}

// Blocks implements multilevel.Layout: β is block 0, u_g block 1 + g,
// and no row holds s.
func (p userPrior) Blocks() []int32 {
	b := make([]int32, p.groups+3)
	for g := range p.groups {
		b[2+g] = int32(1 + g)
	}
	b[p.groups+2] = -1
	return b
}

// NumTerms implements multilevel.Layout: one random intercept.
func (p userPrior) NumTerms() int { return 1 }

// Term implements multilevel.Layout: the effects are θ[2 + g], the log
// scale θ[G + 2].
func (p userPrior) Term(int) (factor, term string, start, stride, levels, logTau int) {
	return "g", "(Intercept)", 2, 1, p.groups, p.groups + 2
}

func (p userPrior) LogPrior(theta []float64) float64 {
	s := theta[p.groups+2]
	w := math.Exp(-2 * s)
	lp := -(theta[0]*theta[0]+theta[1]*theta[1])/2 - float64(p.groups)*s - math.Exp(2*s)/2
	if !p.noJacobian {
		lp += s
	}
	for _, u := range theta[2 : 2+p.groups] {
		lp -= u * u * w / 2
	}
	return lp
}

// AddLogPriorGradient implements exactmh.PriorGradienter.
func (p userPrior) AddLogPriorGradient(grad, theta []float64) {
	s := theta[p.groups+2]
	w := math.Exp(-2 * s)
	grad[0] -= theta[0]
	grad[1] -= theta[1]
	gs := -float64(p.groups) - math.Exp(2*s)
	if !p.noJacobian {
		gs++
	}
	for g, u := range theta[2 : 2+p.groups] {
		grad[2+g] -= u * w
		gs += u * u * w
	}
	grad[p.groups+2] += gs
}

// SparseHessian implements exactmh.SparseHessianer: ∇² of −log p, stored
// by its lower triangle — the diagonal, and each effect's coupling to s.
func (p userPrior) SparseHessian(theta []float64) (*sparse.SymCSC, error) {
	d := p.groups + 3
	if len(theta) != d {
		return nil, fmt.Errorf("userPrior: len(θ) = %d, want %d", len(theta), d)
	}
	s := theta[d-1]
	w := math.Exp(-2 * s)
	h := &sparse.SymCSC{N: d, ColPtr: make([]int, d+1)}
	var ss float64
	for j := range d {
		switch {
		case j < 2:
			h.RowIdx, h.Val = append(h.RowIdx, j), append(h.Val, 1)
		case j < d-1:
			u := theta[j]
			ss += u * u
			h.RowIdx, h.Val = append(h.RowIdx, j, d-1), append(h.Val, w, -2*u*w)
		default:
			h.RowIdx, h.Val = append(h.RowIdx, j), append(h.Val, 2*ss*w+2*math.Exp(2*s))
		}
		h.ColPtr[j+1] = len(h.RowIdx)
	}
	return h, nil
}

var (
	_ multilevel.Layout       = userPrior{}
	_ exactmh.PriorGradienter = userPrior{}
	_ exactmh.SparseHessianer = userPrior{}
)

// TestGroupGibbsUserPrior runs GroupGibbs through the conformance kit on
// mcmctest.MultilevelModel's data with the prior replaced by userPrior,
// written from exported names alone: pairwise, SBC against the kit's
// draws from the same law, allocations, checkpoints, workers and Info.
// The prior without its log-τ Jacobian (a different law) must fail a
// statistical check (full run only).
func TestGroupGibbsUserPrior(t *testing.T) {
	const groups = 6
	withPrior := func(pr userPrior) func(pb mcmctest.Problem) (*exactmh.Posterior, error) {
		return func(pb mcmctest.Problem) (*exactmh.Posterior, error) {
			if d := pb.Posterior.Dim(); d != groups+3 {
				return nil, fmt.Errorf("the kit's problem has dimension %d, want %d", d, groups+3)
			}
			p := *pb.Posterior
			p.Prior = pr
			if _, ok := multilevel.Of(&p); !ok {
				return nil, fmt.Errorf("a posterior with userPrior is not multilevel (multilevel.Of)")
			}
			return &p, nil
		}
	}
	c := mcmctest.Case{Name: "GroupGibbs user prior", NeedsMultilevel: true, Exact: true,
		Multilevel: mcmctest.MultilevelModel{N: 300, Groups: groups},
		Kernel:     func(pb mcmctest.Problem) exactmh.Kernel { return multilevel.GroupGibbs{Center: pb.Mode} },
		Target:     withPrior(userPrior{groups: groups}),
		TargetMutants: map[string]func(mcmctest.Problem) (*exactmh.Posterior, error){
			"log-τ Jacobian dropped": withPrior(userPrior{groups: groups, noJacobian: true}),
		}}
	if testing.Short() {
		c.TargetMutants = nil
	}
	mcmctest.Check(t, c)
}

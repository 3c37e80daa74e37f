// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"maps"
	"reflect"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// TestConformance runs the package's kernels through the conformance kit
// (package mcmctest), as the root package's TestConformance runs its own:
// pairwise, SBC on the kit's multilevel model, no allocation per step,
// checkpoints, workers, honest Info, and each mutant (export_test.go
// files) must fail a statistical check. With -short the rows run without
// their mutants and keep one statistical check of their law (pairwise for
// GroupSMH, whose SBC thins by some 10³; SBC for GroupGibbs).
func TestConformance(t *testing.T) {
	for _, c := range conformanceCases() {
		if testing.Short() {
			c = shortCase(c)
		}
		t.Run(c.Name, func(t *testing.T) { mcmctest.Check(t, c) })
	}
}

// shortCase is c as TestConformance runs it with -short.
func shortCase(c mcmctest.Case) mcmctest.Case {
	c.Mutants, c.TargetMutants = nil, nil
	if !c.UsesProposal {
		return c
	}
	c.Skip = maps.Clone(c.Skip)
	if c.Skip == nil {
		c.Skip = map[string]string{}
	}
	c.Skip["sbc"] = "-short: the pairwise check holds this row's law; SBC runs without -short"
	return c
}

// TestConformanceCoversRegistry fails when a kernel the package registers
// (exactmh.Kernels) has no conformance row named as it is.
func TestConformanceCoversRegistry(t *testing.T) {
	rows := map[string]mcmctest.Case{}
	for _, c := range conformanceCases() {
		rows[c.Name] = c
	}
	n := 0
	for _, ki := range exactmh.Kernels() {
		if reflect.TypeOf(ki.New(nil)).PkgPath() != "github.com/exactmh/exactmh/multilevel" {
			continue
		}
		n++
		c, ok := rows[ki.Name]
		switch {
		case !ok:
			t.Errorf("registered kernel %s has no conformance row named %q", ki.Name, ki.Name)
		case c.NeedsMultilevel != ki.NeedsMultilevel:
			t.Errorf("registered kernel %s: NeedsMultilevel %t, its conformance row's %t", ki.Name, ki.NeedsMultilevel, c.NeedsMultilevel)
		}
	}
	if n != 2 {
		t.Errorf("%d kernels of package multilevel registered, want GroupSMH and GroupGibbs", n)
	}
}

type (
	problem = mcmctest.Problem
	mutants = map[string]func(mcmctest.Problem) exactmh.Kernel
)

// mlSlopes is the multilevel kernels' kit target: N = 300 in 6 groups
// (one of 175 data, 5 of 25) with a random intercept and slope each.
var mlSlopes = mcmctest.MultilevelModel{N: 300, Groups: 6, Slope: true}

// multilevelTargetMutants are the multilevel rows' target mutants: the
// posterior without the Jacobian log τ of each scale (a prior term
// dropped).
var multilevelTargetMutants = map[string]func(mcmctest.Problem) (*exactmh.Posterior, error){
	"log-τ Jacobian dropped": func(pb mcmctest.Problem) (*exactmh.Posterior, error) {
		p := *pb.Posterior
		p.Prior = jacobianDropped{pb.Posterior.Prior.(*model.MultilevelPrior)}
		return &p, nil
	},
}

func conformanceCases() []mcmctest.Case {
	return []mcmctest.Case{
		// The multilevel kernels (KernelInfo.NeedsMultilevel) on the kit's
		// funnel (mcmctest.MultilevelModel). Their target mutant drops the
		// Jacobian log τ of the scale prior (a prior term dropped).
		// (Its mutant "bound ignores the group blocks" is caught by the
		// pairwise check on points a marginal posterior sd apart,
		// TestGroupSMHMutantsPairwise; here, a conditional sd apart
		// (MultilevelModel's SD), the moves are too small to show it.)
		{Name: "GroupSMH", UsesProposal: true, NeedsMultilevel: true, Exact: true, Multilevel: mlSlopes,
			Kernel: func(pb problem) exactmh.Kernel { return groupKernel(pb) },
			Mutants: mutants{
				"stale expansion": func(pb problem) exactmh.Kernel { return multilevel.GroupSMHStale(groupKernel(pb), 0.05) },
			},
			TargetMutants: multilevelTargetMutants},
		// (Its mutant "bound ignores a block" shows only where groups of
		// a few data are thinned, in long runs: TestGroupGibbsMoments
		// catches it, SBC's 200 replicates here do not.)
		{Name: "GroupGibbs", NeedsMultilevel: true, Exact: true, Multilevel: mlSlopes,
			Kernel: func(pb problem) exactmh.Kernel { return multilevel.GroupGibbs{Center: pb.Mode} },
			Mutants: mutants{
				"stale expansion": func(pb problem) exactmh.Kernel {
					return multilevel.GroupGibbsStale(multilevel.GroupGibbs{Center: pb.Mode}, 0.3)
				},
				"location move wrong column": func(pb problem) exactmh.Kernel {
					return multilevel.GroupGibbsWrongLocation(multilevel.GroupGibbs{Center: pb.Mode})
				},
			},
			TargetMutants: multilevelTargetMutants},
	}
}

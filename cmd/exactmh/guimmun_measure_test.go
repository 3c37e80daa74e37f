// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	ml "github.com/exactmh/exactmh/multilevel"
)

var (
	gmMeasure = flag.Bool("guimmunmeasure", false, "run TestGuimmunGibbsMeasure: GroupGibbs forced on guimmun (figures/bench/multilevel_real_small.txt)")
	gmExact   = flag.Bool("gmexact", true, "TestGuimmunGibbsMeasure: every block small (ExactBelow above N), else ExactBelow 0")
	gmFree    = flag.Int("gmfree", 10, "TestGuimmunGibbsMeasure: FreeRepeats")
	gmJS      = flag.Int("gmjs", 3, "TestGuimmunGibbsMeasure: JointScale")
	gmPow     = flag.Float64("gmpow", 0.73, "TestGuimmunGibbsMeasure: JointScalePow")
	gmNE      = flag.Int("gmne", 1, "TestGuimmunGibbsMeasure: NewtonEvery (FixedNewton on)")
	gmChains  = flag.Int("gmchains", 4, "TestGuimmunGibbsMeasure: chains")
	gmWarmup  = flag.Int("gmwarmup", 1000, "TestGuimmunGibbsMeasure: warmup sweeps per chain")
	gmDraws   = flag.Int("gmdraws", 1000, "TestGuimmunGibbsMeasure: draws per chain")
	gmProf    = flag.String("gmprof", "", "TestGuimmunGibbsMeasure: write a CPU profile of the sampling here")
	gmAugment = flag.Bool("gmaugment", false, "TestGuimmunGibbsMeasure: GroupGibbs{Augment: true} (the data-augmentation sweep) instead")
	gmInt     = flag.Int("gmint", 0, "TestGuimmunGibbsMeasure: IntegratedScale of the augmentation sweep (-gmaugment)")
)

// TestGuimmunGibbsMeasure runs GroupGibbs (cond, shear, tail, FixedNewton,
// the joint rescaling move, fields as the flags say) on guimmun from the
// Laplace-EM centre and logs the sampling's CPU time, the data read a
// sweep, max R-hat, min bulk ESS and the scales' ESS. A measurement, not
// a check: run with -guimmunmeasure (GOMAXPROCS=1 under taskset for the
// figures).
func TestGuimmunGibbsMeasure(t *testing.T) {
	if !*gmMeasure {
		t.Skip("a measurement: run with -guimmunmeasure")
	}
	var m modelFlags
	fs := flag.NewFlagSet("guimmun", flag.ContinueOnError)
	m.register(fs)
	if err := fs.Parse([]string{"--data", "../../examples/multilevel-real/data/guimmun.csv", "--family", "probit", "--response", "immun",
		"--terms", "cat(kid2p;ref=N),cat(mom25p;ref=N),cat(ord;ref=01),cat(ethn;ref=L),cat(momEd;ref=N),cat(husEd;ref=N),cat(momWork;ref=N),cat(rural;ref=N),pcInd81,(1|mom),(1|comm)"}); err != nil {
		t.Fatal(err)
	}
	f, err := m.build()
	if err != nil {
		t.Fatal(err)
	}
	p := f.post
	c, _, err := ml.Center(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	k := ml.GroupGibbs{Center: c, FreeRepeats: *gmFree, TailMix: ml.DefaultTailMix,
		Shear: 1, ShearEvery: ml.DefaultShearEvery, ShearMaxRatio: ml.DefaultShearMaxRatio, CondScale: true,
		FixedNewton: true, NewtonEvery: *gmNE, JointScale: *gmJS, JointScalePow: *gmPow}
	if *gmExact {
		k.ExactBelow = p.Len() + 1
	}
	if *gmAugment {
		k = ml.GroupGibbs{Center: c, Augment: true, IntegratedScale: *gmInt}
	}
	if *gmProf != "" {
		fh, err := os.Create(*gmProf)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if err := pprof.StartCPUProfile(fh); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := processCPU()
	res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: *gmChains, Warmup: *gmWarmup, Draws: *gmDraws, Seed: 1, Init: c})
	if err != nil {
		t.Fatal(err)
	}
	cpu := processCPU() - cpu0
	worst := worstLine(res.Summary(), func(_ int, name string) bool { return strings.HasPrefix(name, "log_tau") }, false)
	t.Logf("exact=%t free=%d js=%d pow=%v ne=%d: sampling CPU %.1fs, %.0f data a sweep of N = %d; %s; %v",
		*gmExact, *gmFree, *gmJS, *gmPow, *gmNE, cpu.Seconds(), res.Sampling().MeanBatch(), p.Len(), worst, res.Chains[0].Params)
}

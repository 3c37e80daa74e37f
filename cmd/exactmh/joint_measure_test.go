// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	ml "github.com/exactmh/exactmh/multilevel"
)

var (
	jointMeasure = flag.String("jointmeasure", "", "run TestGroupGibbsJointMeasure on this data set of examples/multilevel-real (chem97, insteval, verbagg): GroupGibbs with and without its joint location move (figures/bench/multilevel_joint.txt)")
	jointN       = flag.Int("jointn", 1, "TestGroupGibbsJointMeasure: joint moves a sweep (0: none)")
	jointRho     = flag.Float64("jointrho", ml.DefaultJointRho, "TestGroupGibbsJointMeasure: the joint move's ρ")
	jointFull    = flag.Bool("jointfull", false, "TestGroupGibbsJointMeasure: the full joint proposal rather than the marginal one (JointFixed)")
	jointWarmup  = flag.Int("jointwarmup", 150, "TestGroupGibbsJointMeasure: warmup sweeps per chain")
	jointDraws   = flag.Int("jointdraws", 250, "TestGroupGibbsJointMeasure: draws per chain")
	jointEvery   = flag.Int("jointevery", 1, "TestGroupGibbsJointMeasure: NewtonEvery")
	jointFree    = flag.Int("jointfree", 1, "TestGroupGibbsJointMeasure: FreeRepeats")
	jointNewton  = flag.Bool("jointnewton", false, "TestGroupGibbsJointMeasure: the fixed blocks by the Newton proposal (FixedNewton)")
	jointShear   = flag.Int("jointshear", 0, "TestGroupGibbsJointMeasure: the shear moves (Shear) with ShearEvery this (0: none)")
	jointTail    = flag.Float64("jointtail", 0, "TestGroupGibbsJointMeasure: TailMix")
	jointRatio   = flag.Float64("jointshearratio", 0, "TestGroupGibbsJointMeasure: ShearMaxRatio")
	jointCond    = flag.Bool("jointcond", false, "TestGroupGibbsJointMeasure: the conditional scale moves (CondScale)")
	jointChains  = flag.Int("jointchains", 2, "TestGroupGibbsJointMeasure: chains")
	jointSeed    = flag.Uint64("jointseed", 1, "TestGroupGibbsJointMeasure: seed")
	jointProf    = flag.String("jointprof", "", "TestGroupGibbsJointMeasure: write a CPU profile of the sampling here")
)

// TestGroupGibbsJointMeasure runs GroupGibbs (2 chains, from the
// Laplace-EM centre) on a real data set of examples/multilevel-real with
// the joint move as the flags say, and logs the CPU time, max R-hat, min
// bulk ESS, the scales' and the first fixed effects' ESS and the chain's
// acceptance rates. A measurement, not a check: run with -jointmeasure SET.
func TestGroupGibbsJointMeasure(t *testing.T) {
	if *jointMeasure == "" {
		t.Skip("a measurement: run with -jointmeasure SET")
	}
	m := &modelFlags{family: "logistic", beta: 1, prior: "flat", nu: 4}
	dir := "../../examples/multilevel-real/data/"
	switch *jointMeasure {
	case "chem97":
		m.data, m.response, m.terms = dir+"chem97.csv", "score>5", "gcsecnt,(1|lea),(1|school)"
	case "insteval":
		m.data, m.response, m.terms = dir+"insteval.csv", "y>3", "cat(service;ref=0),(1|s),(1|d),(1|dept)"
	case "verbagg":
		m.data, m.response, m.terms = dir+"verbagg.csv", "r2", "Anger,cat(Gender;ref=F),cat(btype;ref=curse),cat(situ;ref=other),cat(mode;ref=do),(1|id),(1|item)"
	default:
		t.Fatalf("-jointmeasure %q: want chem97, insteval or verbagg", *jointMeasure)
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
	k := ml.GroupGibbs{Center: c, Joint: *jointN, JointRho: *jointRho, JointFixed: !*jointFull, FixedNewton: *jointNewton, NewtonEvery: *jointEvery, FreeRepeats: *jointFree,
		Shear: min(*jointShear, 1), ShearEvery: *jointShear, TailMix: *jointTail, ShearMaxRatio: *jointRatio, CondScale: *jointCond}
	if *jointProf != "" {
		fh, err := os.Create(*jointProf)
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
	res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: *jointChains, Warmup: *jointWarmup, Draws: *jointDraws, Seed: *jointSeed, Init: c})
	if err != nil {
		t.Fatal(err)
	}
	cpu := processCPU() - cpu0
	worst := worstLine(res.Summary(), func(j int, name string) bool { return j < 3 || strings.HasPrefix(name, "log_tau") }, true)
	t.Logf("%s joint=%d rho=%v full=%t newton=%t every=%d free=%d shear=%d ratio=%v tail=%v cond=%t: sampling CPU %.1fs, %.0f data per sweep of N = %d; %s; %v",
		*jointMeasure, *jointN, *jointRho, *jointFull, *jointNewton, *jointEvery, *jointFree, *jointShear, *jointRatio, *jointTail, *jointCond, cpu.Seconds(), res.Sampling().MeanBatch(), p.Len(), worst, res.Chains[0].Params)
}

// worstLine returns a harness's log of a run: the largest R-hat and the
// smallest bulk ESS over every parameter with their names, then the bulk
// ESS (and with rhat the R-hat) of each parameter keep takes.
func worstLine(s *exactmh.Summary, keep func(j int, name string) bool, rhat bool) string {
	rh, es := 0.0, math.Inf(1)
	rn, en := "", ""
	var parts []string
	for j, q := range s.Params {
		if q.RHat > rh {
			rh, rn = q.RHat, q.Name
		}
		if q.ESSBulk < es {
			es, en = q.ESSBulk, q.Name
		}
		if keep(j, q.Name) {
			if rhat {
				parts = append(parts, fmt.Sprintf("%s ess %.0f rhat %.3f", q.Name, q.ESSBulk, q.RHat))
			} else {
				parts = append(parts, fmt.Sprintf("%s ESS %.0f", q.Name, q.ESSBulk))
			}
		}
	}
	return fmt.Sprintf("max R-hat %.3f (%s), min bulk ESS %.0f (%s); %s", rh, rn, es, en, strings.Join(parts, "; "))
}

// processCPU returns the process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"cmp"
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	ml "github.com/exactmh/exactmh/multilevel"
)

var (
	pgMeasure  = flag.Bool("pgmeasure", false, "run TestPGLogitMeasure: the Pólya–Gamma sweep on a real logistic set")
	pgSet      = flag.String("pgset", "contraception", "TestPGLogitMeasure: contraception, verbagg or chem97")
	pgChains   = flag.Int("pgchains", 4, "TestPGLogitMeasure: chains")
	pgWarmup   = flag.Int("pgwarmup", 1000, "TestPGLogitMeasure: warmup sweeps per chain")
	pgDraws    = flag.Int("pgdraws", 1000, "TestPGLogitMeasure: draws per chain")
	pgProf     = flag.String("pgprof", "", "TestPGLogitMeasure: write a CPU profile of the sampling here")
	pgCollapse = flag.Int("pgcollapse", 0, "TestPGLogitMeasure: GroupGibbs.IntegratedScale (0: the default's rule, < 0: none)")
	pgWorst    = flag.Int("pgworst", 0, "TestPGLogitMeasure: also log this many parameters of least bulk ESS")
	pgIndep    = flag.Int("pgindep", 0, "TestPGLogitMeasure: GroupGibbs.Independence (n > 0: n Laplace independence moves after each sweep, < 0: |n| moves and no sweep)")
)

// pgSets are the real suite's logistic sets (examples/multilevel-real):
// response and terms.
var pgSets = map[string][2]string{
	"contraception": {"use", "cat(livch;ref=0),cat(urban;ref=0),age,age2,(1|district)"},
	"verbagg":       {"r2", "Anger,cat(Gender;ref=F),cat(btype;ref=curse),cat(situ;ref=other),cat(mode;ref=do),(1|id),(1|item)"},
	"chem97":        {"score>5", "gcsecnt,(1|lea),(1|school)"},
}

// TestPGLogitMeasure runs GroupGibbs's Pólya–Gamma augmentation sweep on
// one of the real suite's logistic sets from the Laplace-EM centre and
// logs the sampling's CPU time, max R-hat and min bulk ESS. A
// measurement, not a check: run with -pgmeasure (GOMAXPROCS=1 under
// taskset for figures).
func TestPGLogitMeasure(t *testing.T) {
	if !*pgMeasure {
		t.Skip("a measurement: run with -pgmeasure")
	}
	set, ok := pgSets[*pgSet]
	if !ok {
		t.Fatalf("unknown set %q", *pgSet)
	}
	var m modelFlags
	fs := flag.NewFlagSet("pg", flag.ContinueOnError)
	m.register(fs)
	if err := fs.Parse([]string{"--data", "../../examples/multilevel-real/data/" + *pgSet + ".csv", "--family", "logistic", "--response", set[0], "--terms", set[1]}); err != nil {
		t.Fatal(err)
	}
	f, err := m.build()
	if err != nil {
		t.Fatal(err)
	}
	p := f.post
	cpu0 := processCPU()
	c, _, err := ml.Center(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	cpuC := processCPU() - cpu0
	k := ml.GroupGibbs{Center: c, Augment: true, IntegratedScale: *pgCollapse, Independence: *pgIndep}
	if *pgProf != "" {
		fh, err := os.Create(*pgProf)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if err := pprof.StartCPUProfile(fh); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 = processCPU()
	res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: *pgChains, Warmup: *pgWarmup, Draws: *pgDraws, Seed: 1, Init: c})
	if err != nil {
		t.Fatal(err)
	}
	cpu := processCPU() - cpu0
	worst := worstLine(res.Summary(), func(_ int, name string) bool { return strings.HasPrefix(name, "log_tau") }, false)
	if *pgWorst > 0 {
		ps := slices.Clone(res.Summary().Params)
		slices.SortFunc(ps, func(a, b exactmh.ParamSummary) int { return cmp.Compare(a.ESSBulk, b.ESSBulk) })
		for _, q := range ps[:min(*pgWorst, len(ps))] {
			t.Logf("%s: bulk ESS %.0f, mean %.3f, sd %.3f", q.Name, q.ESSBulk, q.Mean, q.SD)
		}
	}
	t.Logf("%s: centre CPU %.2fs, sampling CPU %.2fs; %s; %v", *pgSet, cpuC.Seconds(), cpu.Seconds(), worst, res.Chains[0].Params)
}

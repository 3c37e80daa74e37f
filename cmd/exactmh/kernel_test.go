// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"gonum.org/v1/gonum/mat"
)

// The command's kernel names, spellings, hyperparameter owners and -cn
// forms come from the registry (exactmh.Kernels): every registered kernel
// with a CLI name parses, under that name, the library's and its -cv-cn
// form; and the derived lists are the command's documented ones.
func TestKernelNamesFromRegistry(t *testing.T) {
	for _, ki := range exactmh.Kernels() {
		if ki.CLI == "" {
			if _, err := parseKernel(ki.Name); err == nil {
				t.Errorf("%s (no CLI name) parses", ki.Name)
			}
			continue
		}
		for _, name := range []string{ki.CLI, ki.Name, ki.CLI + "-cv-cn"} {
			ks, err := parseKernel(name)
			if err != nil || ks.base != ki.CLI {
				t.Errorf("parseKernel(%q) = %+v, %v; want base %s", name, ks, err, ki.CLI)
			}
		}
	}
	for _, c := range []struct {
		got, want []string
	}{
		{baseKernels(), []string{"mh", "mala", "hmc", "nuts", "tunamh", "tfmh", "smh1", "smh2", "flymc",
			"poissonmh", "poisson-barker", "poisson-mala", "tunamh-sgld", "groupsmh", "groupgibbs"}},
		{ncKernels(), []string{"hmc", "nuts"}},
		{proposalKernels(), []string{"mh", "tunamh", "tfmh", "smh1", "smh2", "flymc", "poissonmh"}},
		{hyperOwners("chi"), []string{"tunamh", "tunamh-sgld"}},
		{hyperOwners("steps"), []string{"hmc"}},
		{hyperOwners("q"), []string{"flymc"}},
		{hyperOwners("lambda"), []string{"poissonmh", "poisson-barker", "poisson-mala"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	for _, s := range []string{"smh-1", "poissonbarker", "poissonmala", "tunamhsgld"} {
		if _, err := parseKernel(s); err != nil {
			t.Errorf("alias %s: %v", s, err)
		}
	}
}

// The kernel flags set the field they name on the kernels that declare
// their setter, of that type, and leave the others as they are.
func TestKernelFlagSetters(t *testing.T) {
	f := &kernelFlags{scale: 0.3, chi: 0.5, steps: 7, q: 0.2, lambda: 3}
	if k := hyperFlags["chi"].set(exactmh.TunaMH{}, f); k.(exactmh.TunaMH).Chi != 0.5 {
		t.Errorf("TunaMH Chi: %+v", k)
	}
	if k := hyperFlags["steps"].set(exactmh.HMC{}, f); k.(exactmh.HMC).Steps != 7 {
		t.Errorf("HMC Steps: %+v", k)
	}
	if k := hyperFlags["q"].set(exactmh.FlyMC{}, f); k.(exactmh.FlyMC).Q != 0.2 {
		t.Errorf("FlyMC Q: %+v", k)
	}
	if k := hyperFlags["lambda"].set(exactmh.PoissonMALA{}, f); k.(exactmh.PoissonMALA).Lambda != 3 {
		t.Errorf("PoissonMALA Lambda: %+v", k)
	}
	if k := scaleFlag.set(exactmh.NUTS{}, f); k.(exactmh.NUTS).Scale != 0.3 {
		t.Errorf("NUTS Scale: %+v", k)
	}
	if k := hyperFlags["chi"].set(exactmh.MH{}, f); k != (exactmh.MH{}) {
		t.Errorf("MH has no Chi: %+v", k)
	}
	if hyperFlags["steps"].takes(exactmh.NUTS{}) {
		t.Error("NUTS takes --steps")
	}
}

// A choice file records the chosen kernel's own start scale and its
// Crank–Nicolson cap (a capped winner's candidate is named "NAME, ρ ≥ …",
// and the uncapped candidate of NAME has another scale): chosenScale and
// cnProposal, which chooseOnly writes them from.
func TestChoiceCap(t *testing.T) {
	cn, err := exactmh.NewCrankNicolson([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	cn.MaxScale = 1.5
	c := &exactmh.Choice{Name: "TFMH-CV-CN", Kernel: exactmh.TFMH{Proposal: cn, Scale: 1.2},
		Candidates: []exactmh.Candidate{{Name: "TFMH-CV-CN", Scale: 1e150}, {Name: "TFMH-CV-CN, ρ ≥ 0.22", Scale: 1.2}}}
	if s := chosenScale(c); s != 1.2 {
		t.Errorf("chosenScale %v, want the chosen kernel's 1.2", s)
	}
	if got := cnProposal(c.Kernel); got != cn {
		t.Errorf("cnProposal %v, want the chosen kernel's proposal", got)
	}
	if got := cnProposal(exactmh.NUTS{}); got != nil {
		t.Errorf("cnProposal(NUTS) = %v, want nil", got)
	}
}

// TestREADMEKernels checks that cmd/exactmh/README.md names every kernel
// --kernel takes (the registry's CLI names) and the -nc suffix.
func TestREADMEKernels(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range baseKernels() {
		if !strings.Contains(string(b), "`"+name+"`") {
			t.Errorf("README.md does not name --kernel %s", name)
		}
	}
	if len(ncKernels()) > 0 && !strings.Contains(string(b), "`-nc`") {
		t.Errorf("README.md does not name the -nc suffix of %s", strings.Join(ncKernels(), ", "))
	}
}

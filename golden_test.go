// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden from the current kernels")

// goldenCase is one short fixed-seed run whose every draw is recorded bit
// for bit: refactoring must not change a single bit of any kernel's output.
// A change meant to alter draws (a new default) regenerates the files with
// -update-golden in a commit that says why.
type goldenCase struct {
	name   string
	post   *exactmh.Posterior
	kernel exactmh.Kernel
	init   []float64
	accept float64 // Settings.TargetAccept
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	// A logistic regression (N = 200, d = 2, N(0, 10²) prior).
	lx, ly := simulateLogistic(200, []float64{1, -1}, 5)
	le, err := model.NewLogisticRegression(lx, ly, 2)
	if err != nil {
		t.Fatal(err)
	}
	gp, _ := model.NewIsoGaussian(2, 10)
	logistic := &exactmh.Posterior{Energy: le, Prior: gp}

	// A Student-t regression (N = 200, d = 2, ν = 4, flat prior).
	tx, _ := simulateLogistic(200, []float64{1, -1}, 6)
	ty := make([]float64, 200)
	for i := range ty {
		ty[i] = tx[2*i] - tx[2*i+1] + 0.3*math.Sin(float64(7*i))
	}
	te, err := model.NewStudentTRegression(tx, ty, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	studentT := &exactmh.Posterior{Energy: te}

	// The logistic regression on a ball of radius 3, tempered by β = 0.01:
	// the bounded support PoissonMH and its gradient relatives need.
	ball, _ := model.NewBall(2, 3, nil)
	boxed := &exactmh.Posterior{Energy: le, Prior: ball, Beta: 0.01}

	// The MAPs (start and centre of the MAP-based kernels) are pinned to
	// the points FindMAP's L-BFGS returned when the files were recorded,
	// so that the golden draws hold the kernels, not the optimiser, to
	// their bits; FindMAP (now Newton on these GLMs) must still agree.
	lmap := []float64{0x1.92aae68aa3455p-01, -0x1.e347f25993a0cp-01}
	tmap := []float64{0x1.f91165dba1bcdp-01, -0x1.faab3344f7106p-01}
	for _, c := range []struct {
		p    *exactmh.Posterior
		want []float64
	}{{logistic, lmap}, {studentT, tmap}} {
		m, err := exactmh.FindMAP(context.Background(), c.p, make([]float64, 2), nil)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range c.want {
			if math.Abs(m.Theta[j]-v) > 1e-6 {
				t.Fatalf("FindMAP: %v, the pinned MAP %v", m.Theta, c.want)
			}
		}
	}

	var cases []goldenCase
	for _, tg := range []struct {
		name string
		post *exactmh.Posterior
		mode []float64
	}{{"logistic", logistic, lmap}, {"studentt", studentT, tmap}} {
		for _, ki := range exactmh.Kernels() {
			if ki.NeedsRange || ki.NeedsMultilevel {
				continue // on the ball, or the multilevel model, below
			}
			for _, v := range goldenVariants(ki, tg.mode) {
				cases = append(cases, goldenCase{name: tg.name + "_" + v.name, post: tg.post, kernel: v.k, init: tg.mode, accept: v.accept})
			}
		}
	}
	// The kernels that need an EnergyRange, and three others, on the ball.
	for _, ki := range exactmh.Kernels() {
		if ki.NeedsRange || ki.Name == "TunaMH" || ki.Name == "MH" || ki.Name == "NUTS" {
			k := ki.New([]float64{0.5, -0.5})
			cases = append(cases, goldenCase{name: "ball_" + k.Name(), post: boxed, kernel: k, init: []float64{0.5, -0.5}})
		}
	}
	// The multilevel kernels (KernelInfo.NeedsMultilevel) in their default
	// configuration, which finds the Laplace-EM centre itself, and the
	// non-centred NUTS, on the kit's multilevel funnel (mcmctest's
	// MultilevelModel: N = 60 in 12 groups, τ unknown), from its centre.
	_, mpb, err := mcmctest.MultilevelModel{N: 60, Groups: 12}.Draw(rand.New(rand.NewPCG(37, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, ki := range exactmh.Kernels() {
		if ki.NeedsMultilevel {
			cases = append(cases, goldenCase{name: "multilevel_" + ki.Name, post: mpb.Posterior, kernel: ki.New(nil), init: mpb.Mode})
		}
	}
	cases = append(cases, goldenCase{name: "multilevel_NUTS-NC", post: mpb.Posterior, kernel: exactmh.NUTS{NonCentred: true}, init: mpb.Mode})
	return cases
}

// goldenVariant is a configuration of a kernel the golden files pin, named
// as its file is.
type goldenVariant struct {
	name   string
	k      exactmh.Kernel
	accept float64 // Settings.TargetAccept
}

// goldenVariants returns the configurations of registered kernel ki that
// the golden files pin on a target with the given mode: its default
// (ki.New(mode)), named by Kernel.Name, unless listed here with
// settings that keep its 200 transitions short or that exercise an
// option.
func goldenVariants(ki exactmh.KernelInfo, mode []float64) []goldenVariant {
	switch ki.Name {
	case "MALA":
		return []goldenVariant{{"MALA", exactmh.MALA{}, 0.574}}
	case "HMC":
		return []goldenVariant{{"HMC", exactmh.HMC{Steps: 3, Jitter: 0.2}, 0.8}}
	case "TunaMH":
		return []goldenVariant{{"TunaMH", exactmh.TunaMH{}, 0}, {"TunaMH-optimal", exactmh.TunaMH{ChiRule: exactmh.ChiOptimal}, 0}}
	case "TunaMH-SGLD":
		return []goldenVariant{{"TunaMH-SGLD", exactmh.TunaMHSGLD{Chi: 0.01, GradBatch: 20}, 0}}
	case "FlyMC":
		return []goldenVariant{{"FlyMC-MAP", exactmh.FlyMC{TightAt: mode, Q: 0.1}, 0}}
	case "AustereMH":
		return []goldenVariant{{"AustereMH", inexact.AustereMH{Epsilon: 0.05, BatchSize: 20}, 0}}
	case "MHBT":
		return []goldenVariant{{"MHBT", inexact.MHBT{BatchSize: 50}, 0}, {"MHBT-RSGLD", inexact.MHBT{BatchSize: 50, RSGLD: true}, 0}}
	}
	k := ki.New(mode)
	return []goldenVariant{{k.Name(), k, 0}}
}

// goldenText renders a run bit for bit: every draw's coordinates and the
// acceptance, batch and evaluation counts of its transition, and each
// chain's final step scale.
func goldenText(res *exactmh.Result) []byte {
	var b bytes.Buffer
	for _, ch := range res.Chains {
		fmt.Fprintf(&b, "chain %d scale %016x\n", ch.Chain, math.Float64bits(ch.Scale))
		for k := range ch.Len() {
			in := ch.Infos[k]
			fmt.Fprintf(&b, "%t %d %d %d", in.Accepted, in.Batch, in.Evals, in.GradEvals)
			if in.TreeDepth > 0 || in.Divergent {
				fmt.Fprintf(&b, " %d %t", in.TreeDepth, in.Divergent)
			}
			for _, v := range res.Draw(ch.Chain, k) {
				fmt.Fprintf(&b, " %016x", math.Float64bits(v))
			}
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// TestGoldenDraws runs every registered kernel for 200 transitions per
// chain (100 of warmup with adaptation, 100 kept) on small logistic,
// Student-t and bounded targets and compares the draws with
// testdata/golden bit for bit. A kernel added to the registry gets a case
// (its default configuration, goldenVariants) whose file -update-golden
// writes.
//
// The files pin amd64's arithmetic, where every float64 operation rounds
// once. On arm64, ppc64le, s390x and riscv64 the compiler fuses x*y + z
// into one fused multiply-add (as the Go spec allows), in dot (energy.go)
// among others, so the draws differ in their last bits there with no
// change to any kernel: the test runs on amd64 only.
func TestGoldenDraws(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the golden draws pin amd64's arithmetic; %s fuses multiply-adds (see the test's doc)", runtime.GOARCH)
	}
	cases := goldenCases(t)
	// Every file has its case: a kernel of another package (multilevel's,
	// inexact's) whose registration this test binary lost would otherwise
	// drop out of the check silently.
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		if !slices.ContainsFunc(cases, func(gc goldenCase) bool { return gc.name == name }) {
			t.Errorf("%s has no case: is its kernel registered (exactmh.Kernels) in this test binary?", f)
		}
	}
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			set := &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 100, Seed: 7, Init: gc.init, Workers: 1, TargetAccept: gc.accept}
			res, err := exactmh.Sample(context.Background(), gc.post, gc.kernel, set)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenText(res)
			path := filepath.Join("testdata", "golden", gc.name+".txt")
			if *updateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-golden to create it)", err)
			}
			if !bytes.Equal(got, want) {
				gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := range min(len(gl), len(wl)) {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("draws differ from %s at line %d:\n got %s\nwant %s", path, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("draws differ from %s: %d lines, want %d", path, len(gl), len(wl))
			}
		})
	}
}

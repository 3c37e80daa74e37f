// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/multilevel"
)

// TestLogitIndepStructural checks the Laplace independence move's
// structure, alone (two moves a transition) and after each Pólya–Gamma
// sweep, on a Bernoulli kit and a binomial one with trials and offsets,
// of two scales and of one (the grid, indepGrid, which it checks is
// made): no allocation per transition, Info, checkpoint and resume bit
// for bit (the cached q(current) recomputed from θ after a resume), any
// number of workers.
func TestLogitIndepStructural(t *testing.T) {
	for _, kit := range []logitKit{{n: 300, g: 8, h: 3}, {n: 300, g: 8, h: 3, maxTrials: 4, offsets: true},
		{n: 300, g: 8}, {n: 300, g: 8, maxTrials: 4, offsets: true}} {
		_, pb, err := kit.Draw(rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"indep-only", "indep-sweep"} {
			k := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, name)
			checkStructural(t, fmt.Sprintf("%+v %s", kit, name), k, pb.Posterior, pb.Mode, 200)
			r, err := exactmh.Sample(context.Background(), pb.Posterior, k, &exactmh.Settings{Chains: 1, Warmup: 5, Draws: 5, Seed: 3, Init: pb.Mode})
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0 // two scales: no grid
			if kit.h == 0 {
				want = 1
			}
			if g := r.Chains[0].Params["indep_grid"]; g != want {
				t.Errorf("%+v %s: indep_grid %v, want %v", kit, name, g, want)
			}
		}
	}
}

// TestLogitIndepChoice checks the default's choice of the independence
// move (choosePilot): made on a single factor of 10 levels over 4,000
// Bernoulli data (the Laplace approximation close: the counted pilot's
// effective fraction near 1), not on 40 children crossed with 8 parents
// over 400 data (its proposal's factor dear against the Pólya–Gamma
// draws, or the pilot's fraction low); the same reason twice (a counted
// pilot from a fixed stream).
func TestLogitIndepChoice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() (*exactmh.Posterior, error)
		want  bool
	}{
		{"single", func() (*exactmh.Posterior, error) { return singleLogit(4000, 10) }, true},
		{"crossed", func() (*exactmh.Posterior, error) { return nestedLogit(400, 40, false) }, false},
	} {
		p, err := tc.build()
		if err != nil {
			t.Fatal(err)
		}
		var reasons [2]string
		for r := range reasons {
			c, err := exactmh.Choose(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			reasons[r] = c.Reason
			gg, ok := c.Kernel.(multilevel.GroupGibbs)
			if !ok || !gg.Augment {
				t.Fatalf("%s: the default chose %s, want GroupGibbs with Augment: %s", tc.name, c.Name, c.Reason)
			}
			if got := gg.Independence < 0 && strings.Contains(c.Reason, "Laplace independence move"); got != tc.want {
				t.Errorf("%s: the independence move chosen %v (Independence %d), want %v: %s", tc.name, got, gg.Independence, tc.want, c.Reason)
			}
		}
		if reasons[0] != reasons[1] {
			t.Errorf("%s: two choices differ:\n%s\n%s", tc.name, reasons[0], reasons[1])
		}
		t.Logf("%s: %s", tc.name, reasons[0])
	}
}

// TestLogitIndepMoments compares the Laplace independence move — alone
// (two a transition) and after each Pólya–Gamma sweep — with full-batch
// non-centred NUTS (two-sample |z| < 4.5 on every coordinate's mean and
// variance) on the Bernoulli kit of TestLogitMoments (N = 150, 6 groups ×
// 5 crossed levels) and the binomial one with offsets (N = 100, 1–6
// trials). Mutants of the move alone that must be caught (|z| ≥ 4.5): the
// reverse proposal density q(current) dropped, the cached q(current) left
// stale after a kept move, the proposal's density taken at the current
// state's log det P instead of its draw's, and q_ℓ taken as a density in
// τ (the Jacobian of ℓ = log τ dropped); and on the kits of one factor
// (the grid, indepGrid: N = 150 Bernoulli data in 6 groups, N = 100
// binomial with offsets) the move alone and after each sweep, with the
// mutants indep-cell (q_ℓ's tabulated part read on the neighbouring
// segment), indep-node (w's density at the neighbouring node's mean and
// precision, not its draw's), indep-jacobian and indep-reverse.
func TestLogitIndepMoments(t *testing.T) {
	if testing.Short() {
		t.Skip("moments: NUTS reference")
	}
	two := []string{"indep-only,indep-reverse", "indep-only,indep-stale", "indep-only,indep-mismatch", "indep-only,indep-jacobian"}
	one := []string{"indep-only,indep-cell", "indep-only,indep-node", "indep-only,indep-jacobian", "indep-only,indep-reverse"} // the grid's
	for _, c := range []struct {
		kit     logitKit
		mutants []string
	}{
		{logitKit{n: 150, g: 6, h: 5}, two},
		{logitKit{n: 100, g: 6, h: 5, maxTrials: 6, offsets: true}, two},
		{logitKit{n: 150, g: 6}, one},
		{logitKit{n: 100, g: 6, maxTrials: 6, offsets: true}, one},
	} {
		th := c.kit.truth(rand.New(rand.NewPCG(31, 32)))
		th[0], th[1] = 0.3, 0.8
		p, err := c.kit.build(rand.New(rand.NewPCG(33, 34)), th)
		if err != nil {
			t.Fatal(err)
		}
		augmentMoments(t, fmt.Sprintf("%+v", c.kit), p, []string{"indep-only", "indep-sweep"}, c.mutants, nil)
	}
}

// TestLogitIndepSBC is simulation-based calibration of the Laplace
// independence move, alone and after each sweep, with every parameter
// unknown (the kit of TestLogitSBC: 200 replicates of N = 100 binomial
// rows of 1–3 trials, 5 groups × 3 crossed levels): ranks uniform at
// Bonferroni level 10⁻³. Mutants of the move alone: indep-jacobian must
// be rejected at 0.01; indep-mismatch, indep-stale and indep-reverse are
// caught where SBC rejects them at 0.01 or where their chain sticks so
// that SBC's pilot cannot thin it within MaxThin (the exact move's thin
// is 3–4), which SBC reports as an error. And on the kit of one factor
// (N = 100 binomial rows of 1–3 trials in 5 groups: the grid, indepGrid),
// 1,000 replicates, the move alone and after each sweep, the mutant
// indep-cell rejected at 0.01 (indep-node, whose bias in the effects is
// small against their posterior sd on this kit, SBC does not resolve:
// TestLogitIndepMoments catches it).
// indepSBCGrid is TestLogitIndepSBC's replicates on the kit of one
// factor: a mutant of the grid moves ℓ's law by about a node's spacing, a
// quarter of its posterior sd, which 200 replicates do not resolve
// (indep-cell: minimum p 0.0089 of 8 at 200, 6.5·10⁻⁹ at 1,000).
const indepSBCGrid = 1000

func TestLogitIndepSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("SBC: 200 replicates")
	}
	t.Run("grid", func(t *testing.T) {
		kit := logitKit{n: 100, g: 5, maxTrials: 3}
		for _, name := range []string{"indep-only", "indep-sweep", "indep-only,indep-cell"} {
			r, err := mcmctest.SBC(kit, func(pb mcmctest.Problem) exactmh.Kernel {
				return multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, name)
			}, &mcmctest.SBCOptions{Replicates: indepSBCGrid, Seed: 19, MaxThin: 100})
			if err != nil {
				t.Fatal(err)
			}
			exact := !strings.Contains(name, ",")
			t.Logf("%q: SBC p-value %.3g (thin %d)", name, r.P, r.Thin)
			switch {
			case exact && r.Reject(1e-3):
				t.Errorf("%q: SBC rejects uniformity: p = %.3g", name, r.P)
			case !exact && !r.Reject(0.01):
				t.Errorf("SBC misses the mutant %q: p = %.3g", name, r.P)
			}
		}
	})
	kit := logitKit{n: 100, g: 5, h: 3, maxTrials: 3}
	augmentSBC(t, kit, 19, []string{"indep-only", "indep-sweep"}, []string{"indep-only,indep-jacobian"})
	for _, name := range []string{"indep-only,indep-mismatch", "indep-only,indep-stale", "indep-only,indep-reverse"} {
		r, err := mcmctest.SBC(kit, func(pb mcmctest.Problem) exactmh.Kernel {
			return multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, name)
		}, &mcmctest.SBCOptions{Replicates: 200, Seed: 19, MaxThin: 100})
		switch {
		case err != nil && strings.Contains(err.Error(), "MaxThin"):
			t.Logf("mutant %q caught: its chain sticks: %v", name, err)
		case err != nil:
			t.Fatal(err)
		case !r.Reject(0.01):
			t.Errorf("SBC misses the mutant %q: p = %.3g", name, r.P)
		default:
			t.Logf("mutant %q: SBC p-value %.3g", name, r.P)
		}
	}
}

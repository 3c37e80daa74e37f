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

// TestSchurMatchesFull checks update 1's draw with a term's levels
// eliminated (gaussgibbs_schur.go) against the full system on probit kits
// (crossed and nested factors, offsets, single-datum and two-datum levels):
// at the chain's state after each of several sweeps, S equals the dense
// Schur complement of P and the conditional mean equals P⁻¹r, to 1e-11
// relative. Each kit of many small levels must eliminate them, the small
// kit (P of order 13) none, and no-schur none; the automatic default's
// Choice.Reason names the elimination exactly where the kit's sweep makes
// it. That the draw given the mean has the right covariance is the kit's:
// TestAugmentMoments catches schur-cond.
func TestSchurMatchesFull(t *testing.T) {
	for _, tc := range []struct {
		kit  augKit
		elim bool // whether the kit's P is large enough for the elimination to pay
	}{
		{augKit{n: 150, g: 6, h: 5}, false},
		{augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40}, true},
		{augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40, offsets: true}, true},
		{augKit{n: 300, g: 12, h: 4, singles: 60, pairs: 60, nested: true}, true},
		{augKit{n: 300, g: 8, h: 3, singles: 40, pairs: 40}, true}, // TestAugmentChosen's: checkpoint and resume with the elimination
	} {
		kit := tc.kit
		t.Run(fmt.Sprintf("%+v", kit), func(t *testing.T) {
			tg, mode := kitTarget(t, kit.Draw)
			_, pb, err := kit.Draw(rand.New(rand.NewPCG(41, 42))) // kitTarget's data
			if err != nil {
				t.Fatal(err)
			}
			c, err := exactmh.Choose(context.Background(), pb.Posterior, nil)
			if err != nil {
				t.Fatal(err)
			}
			if gg, ok := c.Kernel.(multilevel.GroupGibbs); !ok || !gg.Augment {
				t.Fatalf("the default chose %s (%s), want GroupGibbs with Augment", c.Name, c.Reason)
			}
			if says := strings.Contains(c.Reason, "Schur complement"); says != tc.elim {
				t.Fatalf("Choice.Reason names the elimination: %t, want %t: %s", says, tc.elim, c.Reason)
			}
			for _, names := range []string{"", "no-schur"} {
				ch := augStart(t, tg, mode, names)
				rng := rand.New(rand.NewPCG(5, 6))
				for sweep := range 5 {
					dS, dMean, levels, err := multilevel.SchurAgreement(ch, rng)
					if err != nil {
						t.Fatal(err)
					}
					if names == "no-schur" {
						if levels != 0 {
							t.Fatalf("no-schur eliminated %d levels", levels)
						}
						break
					}
					if (levels > 0) != tc.elim {
						t.Fatalf("%d levels eliminated, want elimination %t", levels, tc.elim)
					}
					if levels == 0 {
						break
					}
					if sweep == 0 {
						t.Logf("%d levels eliminated", levels)
					}
					if dS > 1e-11 || dMean > 1e-11 {
						t.Errorf("sweep %d: S off the dense Schur complement by %.3g, the mean off P⁻¹r by %.3g (relative)", sweep, dS, dMean)
					}
				}
			}
		})
	}
}

// TestInterweaveRows checks the interweaving step's (Mw)_j, read from the
// term's rows of M in both triangles (asisTerm.rowsOfM), against M·w by
// MulVec, bit for bit (the same sums in the same order, so the same
// chain), on a probit kit (M fixed) and a logistic one (M refilled every
// sweep: the rows hold positions).
func TestInterweaveRows(t *testing.T) {
	for name, draw := range map[string]func(*rand.Rand) ([]float64, mcmctest.Problem, error){
		"probit":   augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40}.Draw,
		"logistic": logitKit{n: 150, g: 6, h: 5}.Draw,
	} {
		tg, mode := kitTarget(t, draw)
		ch := augStart(t, tg, mode, "")
		rng := rand.New(rand.NewPCG(7, 8))
		for range 3 {
			d, n, err := multilevel.InterweaveRowsDiff(ch, rng)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 || d != 0 {
				t.Errorf("%s: %d rows, (Mw)_j off M·w by %.3g relative", name, n, d)
			}
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
)

// TestSchurMatchesFull checks update 1's draw with a term's levels
// eliminated (gaussgibbs_schur.go) against the full system on probit kits
// (crossed and nested factors, offsets, single-datum and two-datum levels):
// at the chain's state after each of several sweeps, S equals the dense
// Schur complement of P and the conditional mean equals P⁻¹r, to 1e-11
// relative. Each kit of many small levels must eliminate them, the small
// kit (P of order 13) none, and no-schur none. That the draw given the mean
// has the right covariance is the kit's: TestAugmentMoments catches
// schur-cond.
func TestSchurMatchesFull(t *testing.T) {
	for _, tc := range []struct {
		kit  augKit
		elim bool // whether the kit's P is large enough for the elimination to pay
	}{
		{augKit{n: 150, g: 6, h: 5}, false},
		{augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40}, true},
		{augKit{n: 150, g: 6, h: 5, singles: 40, pairs: 40, offsets: true}, true},
		{augKit{n: 300, g: 12, h: 4, singles: 60, pairs: 60, nested: true}, true},
	} {
		kit := tc.kit
		t.Run(fmt.Sprintf("%+v", kit), func(t *testing.T) {
			_, pb, err := kit.Draw(rand.New(rand.NewPCG(41, 42)))
			if err != nil {
				t.Fatal(err)
			}
			tg, err := exactmh.NewTarget(pb.Posterior)
			if err != nil {
				t.Fatal(err)
			}
			for _, names := range []string{"", "no-schur"} {
				ch, err := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: pb.Mode}, names).Start(tg, pb.Mode)
				if err != nil {
					t.Fatal(err)
				}
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

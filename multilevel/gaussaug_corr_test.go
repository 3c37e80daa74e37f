// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
)

// TestAugmentCorrelated checks the augmentation sweeps on
// correlated random effects, lme4's (1 + x | g), against full-batch
// non-centred NUTS — every mean within 4.5 combined Monte Carlo standard
// errors, every sd ratio in [0.85, 1.18] ([0.7, 1.4] for the log scales
// and correlations) — with the correlated scales' interweaving and
// non-centred move (gaussaug_corr.go) and without either ("no-corr-nc",
// "no-corr-asis,no-corr-nc": the centred slice update alone), on mlCorr's
// logistic kits (q = 2 and 3), its binomial one and a probit one (the
// Albert–Chib sweep); and that the mutant
// corr-nc-jacobian (the move's Jacobian |det L|^G one power short) is
// caught: some |z| > 6 or sd ratio outside [0.7, 1.4], or its run fails
// (the correlations drift to where Σ is singular). A kit whose slope scale is 0.02 (the
// singular fit, where the centred update sticks) logs each
// configuration's least bulk ESS. The q = 3 and binomial kits pass the
// kit's structural checks with the new moves.
func TestAugmentCorrelated(t *testing.T) {
	if testing.Short() {
		t.Skip("NUTS references and 4-chain runs")
	}
	type kitCase struct {
		kit      mlCorr
		smallTau bool
	}
	for _, kc := range []kitCase{
		{kit: mlCorr{n: 600, groups: 12, q: 2, eta: 1}},
		{kit: mlCorr{n: 900, groups: 10, q: 3, eta: 2}},
		{kit: mlCorr{n: 400, groups: 10, q: 2, eta: 1, trials: true}},
		{kit: mlCorr{n: 600, groups: 12, q: 2, eta: 1, probit: true}},
		{kit: mlCorr{n: 600, groups: 12, q: 2, eta: 1}, smallTau: true},
	} {
		kit := kc.kit
		name := "q=" + strconv.Itoa(kit.q)
		if kit.trials {
			name += "_binomial"
		}
		if kit.probit {
			name += "_probit"
		}
		if kc.smallTau {
			name += "_tau0.02"
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(kit.q), 9))
			theta := kit.truth(rng)
			if kc.smallTau {
				// The slope's scale at 0.02, its effects scaled with it.
				j := kit.q + kit.groups*kit.q + 1
				for g := range kit.groups {
					theta[kit.q+g*kit.q+1] *= 0.02 / math.Exp(theta[j])
				}
				theta[j] = math.Log(0.02)
			}
			p, err := kit.build(rng, theta)
			if err != nil {
				t.Fatal(err)
			}
			rs, mode, _ := nutsReferenceNonCentred(t, p, 300, 750)
			const draws = 3000
			for _, cfg := range []string{"", "no-corr-nc", "no-corr-asis,no-corr-nc"} {
				k := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: mode}, cfg)
				z, zn, lr, ln, res := gibbsMoments(t, p, k, rs, mode, draws)
				t.Logf("%s, %q: max |z| %.2f (%s), max |log sd ratio| %.3f (%s); least bulk ESS %.0f of %d draws",
					name, cfg, z, zn, lr, ln, minESS(res.Summary()), 4*draws)
				if kc.smallTau {
					continue // ESS only: the centred update's runs are not converged here
				}
				if math.Abs(z) > 4.5 || lr > math.Log(1.4) {
					t.Errorf("%s, %q: disagrees with NUTS: z = %.2f (%s), sd ratio e^±%.3f (%s)", name, cfg, z, zn, lr, ln)
				}
			}
			if kc.smallTau {
				return
			}
			if kit.q == 3 || kit.trials {
				// No allocation a sweep, Info, checkpoint and resume bit
				// for bit, any number of workers, with the new moves.
				checkStructural(t, name+": the augmentation sweep", multilevel.AugmentMutant(multilevel.GroupGibbs{Center: mode}, ""), p, mode, 200)
			}
			if kit.trials {
				return
			}
			// Without the Jacobian the scales and correlations drift to
			// where Σ is singular and the run fails: caught as surely as a
			// moment off.
			mut := multilevel.AugmentMutant(multilevel.GroupGibbs{Center: mode}, "corr-nc-jacobian")
			if _, err := exactmh.Sample(context.Background(), p, mut,
				&exactmh.Settings{Chains: 4, Warmup: 200, Draws: draws, Seed: 2, Init: mode}); err != nil {
				t.Logf("%s: mutant %q caught: the run fails: %.200s", name, "corr-nc-jacobian", err)
				return
			}
			z, zn, lr, ln, _ := gibbsMoments(t, p, mut, rs, mode, draws)
			reportMutant(t, name, "corr-nc-jacobian", math.Abs(z) > 6 || lr > math.Log(1.4), z, zn, lr, ln)
		})
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// TestGroupGibbsPinnedSeeds measures GroupGibbs's posterior variances on
// pinnedGroupModel(2200, 10, 3) over many seeds, for comparison with
// TestNonCentredPinnedImportance's reference: for each of
// EXACTMH_PINNED_SEEDS seeds (default 20) a run of 4 chains × (500 warmup
// + EXACTMH_PINNED_DRAWS, default 5000) from the Laplace-EM centre, with
// TailMix 0 and DefaultTailMix. It logs, for each coordinate, the mean
// over seeds of the pooled variance with its standard error from the
// seeds' spread (independent runs: no autocorrelation assumption), and
// the mean of the within-run MCSE of the variance (MCSEMean of the
// squared deviations) for comparison. A measurement only: set
// EXACTMH_MEASURE=1 (figures/bench/reliability_round4.txt, "Task B").
func TestGroupGibbsPinnedSeeds(t *testing.T) {
	if os.Getenv("EXACTMH_MEASURE") == "" {
		t.Skip("a measurement: set EXACTMH_MEASURE=1")
	}
	seeds, draws := envInt("EXACTMH_PINNED_SEEDS", 20), envInt("EXACTMH_PINNED_DRAWS", 5000)
	p := pinnedGroupModel(t, 2200, 10, 3, rand.New(rand.NewPCG(41, 0)))
	center, _, err := model.MultilevelCenter(context.Background(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dim()
	for _, mix := range []float64{0, multilevel.DefaultTailMix} {
		vars := make([][]float64, d) // [coordinate][seed]
		means := make([][]float64, d)
		var mcse = make([]float64, d)
		for s := range seeds {
			res, err := exactmh.Sample(context.Background(), p, multilevel.GroupGibbs{Center: center, TailMix: mix},
				&exactmh.Settings{Chains: 4, Warmup: 500, Draws: draws, Seed: uint64(1000 + s), Init: center})
			if err != nil {
				t.Fatal(err)
			}
			for j := range d {
				x := make([][]float64, len(res.Chains))
				var m float64
				var n int
				for c, ch := range res.Chains {
					x[c] = make([]float64, ch.Len())
					for i := range ch.Len() {
						x[c][i] = ch.Draws[i*d+j]
						m += x[c][i]
						n++
					}
				}
				m /= float64(n)
				var v float64
				for c := range x {
					for i, xi := range x[c] {
						x[c][i] = (xi - m) * (xi - m)
						v += x[c][i]
					}
				}
				v /= float64(n)
				vars[j] = append(vars[j], v)
				means[j] = append(means[j], m)
				mcse[j] += diagnostics.MCSEMean(x) / float64(seeds)
			}
		}
		names := p.Names
		for j := range d {
			mv, sv := meanSE(vars[j])
			mm, sm := meanSE(means[j])
			t.Logf("TailMix %.1f, %d seeds × 4 × %d: %-10s mean %.4f ± %.4f, variance %.4f ± %.4f (seeds' spread; a run's MCSE %.4f, /√seeds %.4f)",
				mix, seeds, draws, names[j], mm, sm, mv, sv, mcse[j], mcse[j]/math.Sqrt(float64(seeds)))
		}
	}
}

// meanSE returns the mean of x and its standard error sd/√n.
func meanSE(x []float64) (m, se float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		se += (v - m) * (v - m)
	}
	return m, math.Sqrt(se / float64(len(x)-1) / float64(len(x)))
}

// envInt reads a positive integer from the environment, def if unset.
func envInt(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		panic(fmt.Sprintf("%s = %q: want a positive integer", name, v))
	}
	return n
}

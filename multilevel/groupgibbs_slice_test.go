// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// extraScalePrior is a MultilevelPrior with one more term in the log
// scale θ[lt], −θ[lt]²/2: it inherits ScaleTerm and ScaleLogConditional,
// whose conditional then is not its own.
type extraScalePrior struct {
	*model.MultilevelPrior
	lt int
}

func (p extraScalePrior) LogPrior(th []float64) float64 {
	return p.MultilevelPrior.LogPrior(th) - th[p.lt]*th[p.lt]/2
}

// TestGroupGibbsSliceScale checks the log scales' slice updates on their
// closed-form full conditional (sliceScale): GroupGibbs on the kit's
// problem gives the draws it gives slicing on the whole LogPrior
// (GroupGibbsSliceFull) — the same slice sampler on the same density up
// to a constant — every log scale is sliced so, and a prior that embeds
// the MultilevelPrior and adds a term in a log scale has that scale
// sliced on its LogPrior.
func TestGroupGibbsSliceScale(t *testing.T) {
	pb := kitProblem(t)
	k := multilevel.GroupGibbs{Center: pb.Mode, FreeRepeats: 3}
	set := &exactmh.Settings{Chains: 2, Warmup: 50, Draws: 100, Seed: 4, Init: pb.Mode, Workers: 1}
	fast, err := exactmh.Sample(context.Background(), pb.Posterior, k, set)
	if err != nil {
		t.Fatal(err)
	}
	full, err := exactmh.Sample(context.Background(), pb.Posterior, multilevel.GroupGibbsSliceFull(k), set)
	if err != nil {
		t.Fatal(err)
	}
	for c := range fast.Chains {
		a, b := fast.Chains[c].Draws, full.Chains[c].Draws
		for i := range a {
			if !(math.Abs(a[i]-b[i]) <= 1e-9*math.Max(1, math.Abs(b[i]))) {
				t.Fatalf("chain %d, value %d: %v slicing the conditional, %v slicing LogPrior", c, i, a[i], b[i])
			}
		}
	}
	tg, err := exactmh.NewTarget(pb.Posterior)
	if err != nil {
		t.Fatal(err)
	}
	mp := pb.Posterior.Prior.(*model.MultilevelPrior)
	var scales []int
	for tm := range mp.NumTerms() {
		_, _, _, _, _, lt := mp.Term(tm)
		scales = append(scales, lt)
	}
	got, err := multilevel.ScaleSliced(k, tg, pb.Mode)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Sort(scales); !slices.Equal(got, scales) {
		t.Fatalf("log scales sliced on their conditional: %v, want %v", got, scales)
	}
	wp := *pb.Posterior
	wp.Prior = extraScalePrior{mp, scales[0]}
	wt, err := exactmh.NewTarget(&wp)
	if err != nil {
		t.Fatal(err)
	}
	got, err = multilevel.ScaleSliced(k, wt, pb.Mode)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, scales[0]) || !slices.Equal(got, scales[1:]) {
		t.Fatalf("with a term added in θ[%d]: sliced on the conditional %v, want %v", scales[0], got, scales[1:])
	}
}

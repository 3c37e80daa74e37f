// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

// funnelResult is what TestNonCentredFunnel measures of a run.
type funnelResult struct {
	divergent            int
	minBulk, minTail     float64
	gradEvals            float64 // per draw, in passes over the data
	logTauMean, logTauSD float64
}

func funnelRun(t *testing.T, p *exactmh.Posterior, k exactmh.Kernel, init []float64) funnelResult {
	t.Helper()
	res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 1000, Seed: 3, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	var r funnelResult
	for _, ch := range res.Chains {
		for _, in := range ch.Infos {
			if in.Divergent {
				r.divergent++
			}
		}
	}
	s := res.Summary()
	r.minBulk, r.minTail = math.Inf(1), math.Inf(1)
	for _, ps := range s.Params {
		r.minBulk = math.Min(r.minBulk, ps.ESSBulk)
		r.minTail = math.Min(r.minTail, ps.ESSTail)
	}
	lt := s.Params[len(s.Params)-1]
	r.logTauMean, r.logTauSD = lt.Mean, lt.SD
	tot := res.Sampling()
	r.gradEvals = float64(tot.GradEvals) / float64(tot.Steps) / float64(p.Len())
	return r
}

// TestNonCentredFunnel compares centred and non-centred NUTS on a
// random-intercept logistic regression with few data per group.
func TestNonCentredFunnel(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 60, Groups: 12}.Draw(rand.New(rand.NewPCG(37, 0)))
	if err != nil {
		t.Fatal(err)
	}
	c := funnelRun(t, pb.Posterior, exactmh.NUTS{}, pb.Mode)
	nc := funnelRun(t, pb.Posterior, exactmh.NUTS{NonCentred: true}, pb.Mode)
	t.Logf("centred:     %+v", c)
	t.Logf("non-centred: %+v", nc)
}

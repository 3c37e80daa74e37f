// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
)

// TestGroupStartHonoursCancel starts GroupGibbs and GroupSMH with their
// default centre (Center nil: the Laplace-EM centre, a phase of whole-data
// passes in Start, which at 10⁶ levels takes minutes) under a run whose
// context is cancelled: the centre watches the run's context, so Sample
// returns the cancellation from Start rather than finishing the centre
// on a context of its own and sampling; the centre itself, computed as
// Start does under a cancelled run, stops with the interruption (on a
// context of its own it completed).
func TestGroupStartHonoursCancel(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 300, Groups: 12}.Draw(rand.New(rand.NewPCG(5, 0)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := exactmh.DefaultMultilevelCenterUnder(ctx, pb.Posterior); err == nil {
		t.Errorf("the default centre under a cancelled run: %d coordinates and no error; want it to stop", len(c))
	} else if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("the default centre under a cancelled run: error %v, want the interruption", err)
	}
	if _, err := exactmh.DefaultMultilevelCenterUnder(context.Background(), pb.Posterior); err != nil {
		t.Fatalf("the default centre: %v", err)
	}
	for _, k := range []exactmh.Kernel{exactmh.GroupGibbs{}, exactmh.GroupSMH{}} {
		res, err := exactmh.Sample(ctx, pb.Posterior, k, &exactmh.Settings{Chains: 2, Warmup: 10, Draws: 10, Seed: 1})
		if !errors.Is(err, context.Canceled) {
			status := "none"
			if res != nil {
				status = res.Status.String()
			}
			t.Errorf("%s, cancelled before Start: result %s, error %v; want context.Canceled from Start", k.Name(), status, err)
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"testing"
)

// TestAuditSharedPerRun: the chains of a run (Targets sharing a run
// cache) audit a bound once, under its key, and share the verdict, an
// error included; with no key, or no run cache, each chain audits.
func TestAuditSharedPerRun(t *testing.T) {
	x := make([]float64, 20)
	for i := range x {
		x[i] = float64(i%5) - 2
	}
	e, err := NewGaussianMixture(x, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := &Posterior{Energy: e}
	theta0 := []float64{0.1, 0.2}
	audit := func(cache *runCache, key string, fail error) (calls int, errs []error) {
		for range 3 {
			tg, err := NewTarget(p)
			if err != nil {
				t.Fatal(err)
			}
			tg.cache = cache
			w, err := newWalk("test", tg, nil, true, 0.1, theta0)
			if err != nil {
				t.Fatal(err)
			}
			errs = append(errs, w.audit(false, key, func(*Target, []float64, []float64) error {
				calls++
				return fail
			}))
		}
		return calls, errs
	}
	points := 1 + len(auditScales)
	if calls, _ := audit(newRunCache(), "bound", nil); calls != points {
		t.Errorf("a keyed audit in a run of 3 chains checked %d points, want %d (one chain's)", calls, points)
	}
	if calls, _ := audit(newRunCache(), "", nil); calls != 3*points {
		t.Errorf("an unkeyed audit checked %d points, want %d (every chain's)", calls, 3*points)
	}
	if calls, _ := audit(nil, "bound", nil); calls != 3*points {
		t.Errorf("without a run cache the audit checked %d points, want %d", calls, 3*points)
	}
	bad := errors.New("violated")
	calls, errs := audit(newRunCache(), "bound", bad)
	for c, err := range errs {
		if !errors.Is(err, bad) {
			t.Errorf("chain %d: %v, want the shared audit's error", c, err)
		}
	}
	if calls != 1 {
		t.Errorf("a failing keyed audit ran %d checks, want 1 (it stops at θ0)", calls)
	}
}

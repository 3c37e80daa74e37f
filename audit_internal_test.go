// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"math/rand/v2"
	"strings"
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

// TestDiffAuditBlocks: the DiffBound audit run in concurrent blocks reports
// what one sequential pass reports — the same count of violating data and
// the same worst one, the lowest datum among equal (infinite) ratios — and
// passes where the bound holds.
func TestDiffAuditBlocks(t *testing.T) {
	const n, d = 5000, 3
	x, _, y := binaryRows(rand.New(rand.NewPCG(8, 8)), n, d)
	lr, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	p := &Posterior{Energy: lr}
	theta, next := []float64{0.1, -0.2, 0.3}, []float64{0.4, 0.1, -0.2}
	audit := func(b *DiffBound, minData int) error {
		old := minBlockData
		minBlockData = minData
		defer func() { minBlockData = old }()
		if nb := passBlocks(n, 0); (nb > 1) != (minData < n) {
			t.Fatalf("%d blocks with minBlockData = %d", nb, minData)
		}
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		return diffAudit(b)(tg, theta, next)
	}
	b, err := p.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	for _, minData := range []int{1 << 30, 600} {
		if err := audit(b, minData); err != nil {
			t.Fatalf("minBlockData %d: a valid bound fails: %v", minData, err)
		}
	}
	// Violations in several blocks: c_i shrunk at some data, zero (ratio
	// +Inf) at others, the first of which must be reported.
	for _, i := range []int{7, 1300, 2999, 4999} {
		b.C[i] *= 0.01
	}
	for _, i := range []int{3100, 1250, 4200} {
		b.C[i] = 0
	}
	seq := audit(b, 1<<30)
	par := audit(b, 600)
	var v *BoundViolation
	if seq == nil || !errors.As(seq, &v) || v.Datum != 1250 || !strings.Contains(seq.Error(), "7 of 5000 data") {
		t.Fatalf("sequential audit: %v", seq)
	}
	if par == nil || par.Error() != seq.Error() {
		t.Fatalf("blocked audit:\n%v\nsequential:\n%v", par, seq)
	}
}

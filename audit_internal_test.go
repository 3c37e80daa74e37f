// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/exactmh/exactmh/internal/testgen"
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
			errs = append(errs, w.audit(false, key, perPoint(func(*Target, []float64, []float64) error {
				calls++
				return fail
			})))
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
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(8, 8)), n, d)
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
		return diffAudit(b)(tg, theta, [][]float64{next})
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

// TestEnergyDiffsFromBitForBit: the control-variate energy's differences
// from one point to several at once (the bound audit's pass) are bit for
// bit EnergyDiffs' for each pair, with float64 and float32 rows, d below
// and above shortVec, chunks across its groups of 64; through a Target
// too, with each pair's non-finite error; and an energy without the fused
// form gets EnergyDiffs pair by pair.
func TestEnergyDiffsFromBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, d := range []int{3, 40} {
		const n = 3000
		x, x32, y := testgen.BinaryRows(rng, n, d)
		l64, _ := NewLogisticRegression(x, y, d)
		l32, _ := NewLogisticRegression32(x32, y, d)
		prior, _ := NewIsoGaussian(d, 3)
		for name, e := range map[string]Energy{"float64": l64, "float32": l32, "overridden": overriddenLogistic{l64}} {
			p := &Posterior{Energy: e, Prior: prior, Beta: 0.7}
			la, err := FindLaplace(context.Background(), p, make([]float64, d), nil)
			if err != nil {
				t.Fatalf("d = %d, %s: %v", d, name, err)
			}
			cvp, err := ControlVariates(p, la)
			if err != nil {
				t.Fatal(err)
			}
			theta := make([]float64, d)
			nexts := make([][]float64, 3)
			for j := range theta {
				theta[j] = la.Mean[j] + 0.05*rng.NormFloat64()
			}
			for k := range nexts {
				nexts[k] = make([]float64, d)
				for j := range theta {
					nexts[k][j] = la.Mean[j] + 0.05*float64(k+1)*rng.NormFloat64()
				}
			}
			tg, err := NewTarget(cvp)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tg.energy.(manyDiffer); !ok {
				t.Fatalf("%s: the control-variate energy has no fused differences", name)
			}
			for _, size := range []int{1, 64, 150} {
				idx := make([]int, size)
				for k := range idx {
					idx[k] = rng.IntN(n)
				}
				got := make([][]float64, len(nexts))
				for k := range got {
					got[k] = make([]float64, size)
				}
				errs := make([]error, len(nexts))
				tg.energyDiffsFrom(got, theta, nexts, idx, errs)
				for k, next := range nexts {
					want := make([]float64, size)
					if err := tg.EnergyDiffs(want, theta, next, idx); err != nil || errs[k] != nil {
						t.Fatalf("%s: errors %v, %v", name, err, errs[k])
					}
					for j := range want {
						if math.Float64bits(got[k][j]) != math.Float64bits(want[j]) {
							t.Fatalf("d = %d, %s, pair %d, datum %d: %v, EnergyDiffs %v", d, name, k, idx[j], got[k][j], want[j])
						}
					}
				}
			}
			// A non-finite point: that pair's error, the others' values.
			bad := slices.Clone(nexts[0])
			bad[0] = math.Inf(1)
			errs := make([]error, 2)
			got := [][]float64{make([]float64, 10), make([]float64, 10)}
			tg.energyDiffsFrom(got, theta, [][]float64{nexts[1], bad}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, errs)
			if errs[0] != nil || errs[1] == nil {
				t.Errorf("%s: with an infinite second point: errors %v, %v, want only the second", name, errs[0], errs[1])
			}
		}
	}
	// Without the fused form (a plain logistic regression): pair by pair.
	x, _, y := testgen.BinaryRows(rng, 100, 3)
	lr, _ := NewLogisticRegression(x, y, 3)
	tg, _ := NewTarget(&Posterior{Energy: lr})
	theta, next := []float64{0.1, 0.2, 0.3}, []float64{0.3, -0.1, 0}
	got, want := [][]float64{make([]float64, 5)}, make([]float64, 5)
	errs := make([]error, 1)
	idx := []int{4, 8, 15, 16, 23}
	tg.energyDiffsFrom(got, theta, [][]float64{next}, idx, errs)
	if err := tg.EnergyDiffs(want, theta, next, idx); err != nil || errs[0] != nil || !slices.Equal(got[0], want) {
		t.Errorf("plain energy: %v (%v), EnergyDiffs %v (%v)", got[0], errs[0], want, err)
	}
}

// TestDiffAuditPairsInOrder: the audit of several pairs in one pass
// reports what checking them one after the other reports — nothing where
// every pair holds; the first failing pair's worst violation where a later
// pair fails too — whether in one block or several.
func TestDiffAuditPairsInOrder(t *testing.T) {
	const n, d = 5000, 3
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(9, 9)), n, d)
	lr, _ := NewLogisticRegression(x, y, d)
	p := &Posterior{Energy: lr}
	theta := []float64{0.1, -0.2, 0.3}
	nexts := [][]float64{{0.4, 0.1, -0.2}, {0.12, -0.19, 0.31}, {-1, 1, 2}}
	b, err := p.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := NewTarget(p)
	if err := diffAudit(b)(tg, theta, nexts); err != nil {
		t.Fatalf("a valid bound fails: %v", err)
	}
	// Shrink c_i so that the small move (pair 2) still holds at most data
	// while the larger ones fail: the first failing pair is pair 1.
	for i := range b.C {
		if i%7 == 0 {
			b.C[i] *= 1e-3
		}
	}
	for _, minData := range []int{1 << 30, 600} {
		old := minBlockData
		minBlockData = minData
		tg, _ := NewTarget(p)
		got := diffAudit(b)(tg, theta, nexts)
		var want error
		for _, next := range nexts {
			if want = diffAudit(b)(tg, theta, [][]float64{next}); want != nil {
				break
			}
		}
		minBlockData = old
		if got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("minBlockData %d: all pairs at once: %v\none after the other: %v", minData, got, want)
		}
	}
}

// TestAuditWhileBuilding: the audit and the table build run together
// where the audit runs in blocks and more than one goroutine can run
// (GOMAXPROCS 2 here, whatever the machine): both always run, the audit's
// error wins as it would run first, a panic in the build reaches the
// caller; with GOMAXPROCS 1 they run one after the other and a failed
// audit skips the build; and TunaMH and TFMH start and sample through it
// (with -race: no race between the audit and the build).
func TestAuditWhileBuilding(t *testing.T) {
	old := minBlockData
	minBlockData = 600
	defer func() { minBlockData = old }()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 5000
	errA, errB := errors.New("audit"), errors.New("build")
	for _, procs := range []int{2, 1} {
		runtime.GOMAXPROCS(procs)
		for _, c := range []struct{ audit, build, want error }{{nil, nil, nil}, {errA, nil, errA}, {nil, errB, errB}, {errA, errB, errA}} {
			var ran [2]bool
			got := auditWhileBuilding(n, func() error { ran[0] = true; return c.audit }, func() error { ran[1] = true; return c.build })
			wantBuild := procs > 1 || c.audit == nil
			if got != c.want || !ran[0] || ran[1] != wantBuild {
				t.Errorf("GOMAXPROCS %d, audit %v, build %v: got %v (ran %v), want %v (build run: %v)", procs, c.audit, c.build, got, ran, c.want, wantBuild)
			}
		}
	}
	runtime.GOMAXPROCS(2)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("a panic in the build: recovered %v, want it raised again", r)
			}
		}()
		auditWhileBuilding(n, func() error { return nil }, func() error { panic("boom") })
	}()
	x, _, y := testgen.BinaryRows(rand.New(rand.NewPCG(3, 3)), n, 3)
	lr, _ := NewLogisticRegression(x, y, 3)
	ball, _ := NewBall(3, 2, nil)
	p := &Posterior{Energy: lr, Prior: ball, Beta: 0.01}
	for _, k := range []Kernel{TunaMH{Chi: 1}, TFMH{}} {
		res, err := Sample(context.Background(), p, k, &Settings{Chains: 2, Warmup: 20, Draws: 20, Seed: 1})
		if err != nil || res.Status != Completed {
			t.Fatalf("%s: %v", k.Name(), err)
		}
	}
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/exactmh/exactmh/internal/alias"
	"github.com/exactmh/exactmh/internal/testgen"
)

// embeddedLogistic embeds a logistic regression without overriding
// anything: another concrete type, still a logistic DenseGLM, which the
// kernels inline.
type embeddedLogistic struct{ ReadyGLM }

// glmOnly has only the GLM contract of the GLM it wraps (no DenseRows), so
// the kernels take the interface path, which must give the bits of the
// inlined one.
type glmOnly struct{ GLM }

// TestSMHLossDiffBitForBit checks SMH's per-datum remainder difference on
// the package's logistic regressions, whose loss difference is inlined
// (smhChain.lossDiff), against the same datum through the GLM's Loss, bit
// for bit: float64 and float32 features, a type that embeds one (the
// interface path, which must agree with the inlined one) and a type that
// overrides Loss (whose Loss must be used).
func TestSMHLossDiffBitForBit(t *testing.T) {
	for _, d := range []int{3, 20} { // dot2's scalar loop and gonum's kernel
		const n = 500
		rng := rand.New(rand.NewPCG(uint64(d), 14))
		x, x32, y := testgen.BinaryRows(rng, n, d)
		l64, err := NewLogisticRegression(x, y, d)
		if err != nil {
			t.Fatal(err)
		}
		l32, err := NewLogisticRegression32(x32, y, d)
		if err != nil {
			t.Fatal(err)
		}
		prior, err := NewIsoGaussian(d, 3)
		if err != nil {
			t.Fatal(err)
		}
		center := make([]float64, d)
		theta, next := make([]float64, d), make([]float64, d)
		for j := range theta {
			center[j] = 0.1 * rng.NormFloat64()
			theta[j], next[j] = 2*rng.NormFloat64(), 2*rng.NormFloat64() // z, z′ of both signs
		}
		chain := func(e Energy) *smhChain {
			t.Helper()
			tg, err := NewTarget(&Posterior{Energy: e, Prior: prior, Beta: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := SMH{Order: 2, Center: center, TrustBound: true}.Start(tg, center)
			if err != nil {
				t.Fatal(err)
			}
			c := ch.(*smhChain)
			copy(c.theta, theta)
			copy(c.next, next)
			return c
		}
		c64, c32 := chain(l64), chain(l32)
		cEmb, cOver, cIface := chain(embeddedLogistic{l64}), chain(overriddenLogistic{l64}), chain(glmOnly{l64})
		if c64.lx == nil || c32.lx32 == nil || cEmb.lx == nil {
			t.Fatalf("d = %d: a logistic DenseGLM not inlined", d)
		}
		if cOver.lx != nil || cIface.lx != nil {
			t.Fatalf("d = %d: inlined a GLM that overrides Loss or is no DenseGLM", d)
		}
		for i := range n {
			for name, c := range map[string]*smhChain{"float64": c64, "float32": c32, "overridden": cOver} {
				z, zn, df := c.lossDiff(i, c.rec[i].data.y)
				wz, wzn := c.rowDot2(i)
				want := c.glm.Loss(i, wzn) - c.glm.Loss(i, wz)
				if z != wz || zn != wzn || df != want {
					t.Fatalf("d = %d, %s, datum %d: lossDiff %v, %v, %v; through Loss %v, %v, %v",
						d, name, i, z, zn, df, wz, wzn, want)
				}
			}
			r, du, b, err := c64.remainderDiff(i, 0.5)
			re, due, be, erre := cIface.remainderDiff(i, 0.5)
			if err != nil || erre != nil || r != re || du != due || b != be {
				t.Fatalf("d = %d, datum %d: inlined remainder %v, %v, %v (%v); interface %v, %v, %v (%v)",
					d, i, r, du, b, err, re, due, be, erre)
			}
		}
	}
}

// TestSMHStepPrefetchesNoAllocs checks that SMH's step finds the rows to prefetch
// of every DenseGLM (a type embedding one included; not of a GLM that is
// no DenseGLM) and that, prefetching included, its steps allocate nothing.
func TestSMHStepPrefetchesNoAllocs(t *testing.T) {
	const n, d = 2000, 4
	rng := rand.New(rand.NewPCG(3, 15))
	x, x32, y := testgen.BinaryRows(rng, n, d)
	prior, err := NewIsoGaussian(d, 3)
	if err != nil {
		t.Fatal(err)
	}
	l64, err1 := NewLogisticRegression(x, y, d)
	l32, err2 := NewLogisticRegression32(x32, y, d)
	g64, err3 := NewGLM(x, y, d, ProbitFamily{})
	g32, err4 := NewGLM32(x32, y, d, ProbitFamily{})
	st, err5 := NewStudentTRegression(x, y, d, 4)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		e            Energy
		rows, rows32 bool
	}{
		{"LogisticRegression", l64, true, false},
		{"LogisticRegression32", l32, false, true},
		{"GLMEnergy", g64, true, false},
		{"GLMEnergy32", g32, false, true},
		{"StudentTRegression", st, true, false},
		{"embedded", embeddedLogistic{l64}, true, false},
		{"interface", glmOnly{l64}, false, false},
	} {
		p := &Posterior{Energy: c.e, Prior: prior, Beta: 0.5}
		tg, err := NewTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := FindMAP(context.Background(), p, make([]float64, d), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// A centre off the mode, so that the remainders, and the data
		// drawn, are many.
		center := slices.Clone(m.Theta)
		for j := range center {
			center[j] += 0.3
		}
		ch, err := SMH{Order: 2, Center: center, Scale: 0.05, KeepMinibatch: true}.Start(tg, m.Theta)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sc := ch.(*smhChain)
		if (sc.mem.rows != nil) != c.rows || (sc.mem.rows32 != nil) != c.rows32 {
			t.Errorf("%s: rows to prefetch %t (float64), %t (float32); want %t, %t",
				c.name, sc.mem.rows != nil, sc.mem.rows32 != nil, c.rows, c.rows32)
		}
		var batch int
		step := func() {
			info, err := ch.Step(rng)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			batch += info.Batch
		}
		for range 200 {
			step()
		}
		if a := testing.AllocsPerRun(100, step); a != 0 {
			t.Errorf("%s: a step allocates %v times", c.name, a)
		}
		t.Logf("%s: %d data drawn in 300 steps", c.name, batch)
		if batch < 300 {
			t.Errorf("%s: %d data drawn in 300 steps, want many groups", c.name, batch)
		}
	}
}

// TestSMHDrawsProportionalToBounds: SMH draws datum i with probability
// b_i/Σb_i, its Taylor remainder bound over their sum (the Poisson rate is
// βΣb_i·κ, so any other distribution is a wrong kernel), on a logistic
// regression whose rows' norms, and so bounds ∝ ‖x_i‖³, differ by up to
// 125×. A χ² test of 400,000 draws through the records; the same test
// rejects draws made uniformly (a table over the wrong weights), so it can
// tell.
func TestSMHDrawsProportionalToBounds(t *testing.T) {
	const n, d = 40, 3
	rng := rand.New(rand.NewPCG(21, 22))
	x, _, y := testgen.BinaryRows(rng, n, d)
	for i := range n {
		for j := range d {
			x[i*d+j] *= float64(1 + i%5)
		}
	}
	e, err := NewLogisticRegression(x, y, d)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(&Posterior{Energy: e})
	if err != nil {
		t.Fatal(err)
	}
	b, err := glmTaylorBound(e, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	terms, err := newSMHTerms("SMH-2", tg, 2, make([]float64, d))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := terms.sumB, floats.Sum(b); math.Abs(got-want) > 1e-12*want {
		t.Errorf("sumB = %v, want Σb_i = %v", got, want)
	}
	prob := make([]float64, n)
	for i, v := range b {
		prob[i] = v / floats.Sum(b)
	}
	// chi2 returns the p-value of counts drawn from recs against prob.
	chi2 := func(recs []datumRecord[smhDatum]) float64 {
		const draws, group = 400000, 16
		counts := make([]float64, n)
		idx, u := make([]int, group), make([]float64, group)
		r := rand.New(rand.NewPCG(3, 4))
		for range draws / group {
			drawRecords(r, recs, idx, u)
			for _, i := range idx {
				counts[i]++
			}
		}
		var stat float64
		for i, c := range counts {
			want := draws * prob[i]
			stat += (c - want) * (c - want) / want
		}
		return distuv.ChiSquared{K: n - 1}.Survival(stat)
	}
	if p := chi2(terms.rec); p < 1e-4 {
		t.Errorf("SMH's draws: χ² p = %.3g against b_i/Σb_i", p)
	}
	flat, err := alias.New(slices.Repeat([]float64{1}, n))
	if err != nil {
		t.Fatal(err)
	}
	if p := chi2(newRecords(flat, func(int) smhDatum { return smhDatum{} })); p > 1e-10 {
		t.Errorf("uniform draws pass the χ² test against b_i/Σb_i (p = %.3g): the test cannot tell", p)
	}
}

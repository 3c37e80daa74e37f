// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh/internal/poisson"
	"github.com/exactmh/exactmh/internal/testgen"
)

// energiesOnly hides every method of an energy but Energy's: no fused
// difference, so the Target evaluates each datum twice.
type energiesOnly struct{ Energy }

// tfmhFixture starts a TFMH chain, on a Target of its own, at 0.
type tfmhFixture struct {
	name         string
	start        func(t *testing.T) *tfmhChain
	rows, rows32 bool // the rows the chain must prefetch
}

// tfmhFixtures returns starters of TFMH chains on logistic data of
// dimension d, for every path of tfmhChain.energyDiff and
// prefetch: the logistic DenseGLMs (inlined, rows prefetched) — the package's and a
// type embedding one —, a GLM (through its EnergyDiffs, rows prefetched), a GLM
// that is no DenseGLM (through the interface, not prefetched) and an energy
// without a fused difference (two evaluations per datum).
func tfmhFixtures(t *testing.T, rng *rand.Rand, n, d int, beta, scale float64) []tfmhFixture {
	t.Helper()
	x, x32, y := testgen.BinaryRows(rng, n, d)
	for i := range x { // small features: batches of a few groups
		x32[i] /= 4
		x[i] = float64(x32[i])
	}
	l64, err1 := NewLogisticRegression(x, y, d)
	l32, err2 := NewLogisticRegression32(x32, y, d)
	g64, err3 := NewGLM(x, y, d, ProbitFamily{})
	st, err4 := NewStudentTRegression(x, y, d, 4)
	prior, err5 := NewBall(d, 3, nil) // bounded: a bound for the probit GLM
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	bound, err := (&Posterior{Energy: l64, Prior: prior}).DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	var out []tfmhFixture
	for _, f := range []struct {
		name         string
		e            Energy
		bound        *DiffBound
		rows, rows32 bool
	}{
		{"LogisticRegression", l64, nil, true, false},
		{"LogisticRegression32", l32, nil, false, true},
		{"GLMEnergy", g64, nil, true, false},
		{"StudentTRegression", st, nil, true, false},
		{"embedded", embeddedLogistic{l64}, nil, true, false},
		{"interface", glmOnly{l64}, nil, false, false},
		{"energiesOnly", energiesOnly{l64}, bound, false, false},
	} {
		start := func(t *testing.T) *tfmhChain {
			t.Helper()
			tg, err := NewTarget(&Posterior{Energy: f.e, Prior: prior, Beta: beta})
			if err != nil {
				t.Fatal(err)
			}
			ch, err := TFMH{Scale: scale, Bound: f.bound, TrustBound: true, KeepMinibatch: true, MaxRate: math.Inf(1)}.Start(tg, make([]float64, d))
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			return ch.(*tfmhChain)
		}
		out = append(out, tfmhFixture{f.name, start, f.rows, f.rows32})
	}
	return out
}

// TestTFMHEnergyDiffBitForBit checks TFMH's per-datum difference
// (tfmhChain.energyDiff: inlined for the package's logistic regressions,
// the Target's unchecked path otherwise) against Target.EnergyDiffs on the
// same datum, bit for bit and counted the same, on every path, at points
// whose linear predictors have both signs.
func TestTFMHEnergyDiffBitForBit(t *testing.T) {
	for _, d := range []int{3, 20} { // dot2's scalar loop and gonum's kernel
		const n = 300
		rng := rand.New(rand.NewPCG(uint64(d), 16))
		for _, f := range tfmhFixtures(t, rng, n, d, 0.7, 0.1) {
			c := f.start(t)
			for j := range c.theta {
				c.theta[j], c.next[j] = rng.NormFloat64(), rng.NormFloat64()
			}
			var want [1]float64
			for i := range n {
				e0 := c.t.evals
				if err := c.t.EnergyDiffs(want[:], c.theta, c.next, []int{i}); err != nil {
					t.Fatal(err)
				}
				e1 := c.t.evals
				got, err := c.energyDiff(i)
				if err != nil {
					t.Fatal(err)
				}
				if got != want[0] || math.Signbit(got) != math.Signbit(want[0]) {
					t.Fatalf("d = %d, %s, datum %d: energyDiff %v, EnergyDiffs %v", d, f.name, i, got, want[0])
				}
				if c.t.evals-e1 != e1-e0 {
					t.Fatalf("d = %d, %s: energyDiff counts %d evaluations, EnergyDiffs %d", d, f.name, c.t.evals-e1, e1-e0)
				}
			}
		}
	}
}

// refTFMHStep is TFMH's step written straightforwardly from the same
// random stream (Step's draws in Step's order: a group's indices, then its
// uniforms), evaluating the data through Target.EnergyDiffs with the
// thinning test as it was written before the step became branch-free
// (ΔU_i > 0 and u·m_i < ΔU_i), counting the distinct data evaluated in a
// map. It leaves the acceptance in c.theta as Step does.
func refTFMHStep(t *testing.T, c *tfmhChain, rng *rand.Rand) Info {
	t.Helper()
	logExact, ok := c.propose(rng)
	if !ok {
		return Info{}
	}
	m := c.bound.M(c.theta, c.next)
	if lp := logExact; lp < 0 && rng.Float64() >= math.Exp(lp) {
		return Info{}
	}
	draws := poisson.Draw(rng, c.sumC*m)
	seen := map[int]bool{}
	var idx [tfmhAhead]int
	var u [tfmhAhead]float64
	var diff [1]float64
	for lo := 0; lo < draws; lo += tfmhAhead {
		group := idx[:min(tfmhAhead, draws-lo)]
		c.draws.drawInto(rng, group, u[:])
		for k := range group {
			u[k] = rng.Float64()
		}
		for k, i := range group {
			seen[i] = true
			if err := c.t.EnergyDiffs(diff[:], c.theta, c.next, []int{i}); err != nil {
				t.Fatal(err)
			}
			du, mi := -diff[0], c.bound.C[i]*m
			if math.Abs(du) > mi*(1+boundTol) {
				t.Fatalf("datum %d: |ΔU| = %v > m_i = %v", i, math.Abs(du), mi)
			}
			if du > 0 && u[k]*mi < du {
				return Info{Batch: lo + k + 1, Distinct: len(seen)}
			}
		}
	}
	copy(c.theta, c.next)
	return Info{Batch: draws, Distinct: len(seen), Accepted: true}
}

// TestTFMHStepAgainstReference runs each fixture's chain beside a twin
// stepped by refTFMHStep from a copy of the same random stream: the same
// decisions, states, batches, distinct counts and evaluations counted,
// step by step — early exit evaluates no datum past the decision, and the
// branch-free test decides as the original one. It also checks that the
// step finds the rows to prefetch and allocates nothing, prefetching included.
func TestTFMHStepAgainstReference(t *testing.T) {
	const n, d, steps = 2000, 4, 400
	for _, f := range tfmhFixtures(t, rand.New(rand.NewPCG(5, 17)), n, d, 0.5, 0.02) {
		t.Run(f.name, func(t *testing.T) {
			c, twin := f.start(t), f.start(t)
			tg := twin.t
			if (c.mem.rows != nil) != f.rows || (c.mem.rows32 != nil) != f.rows32 {
				t.Errorf("rows to prefetch %t (float64), %t (float32); want %t, %t",
					c.mem.rows != nil, c.mem.rows32 != nil, f.rows, f.rows32)
			}
			src := rand.NewPCG(9, 18)
			rng := rand.New(src)
			var batch, accepted int
			for s := range steps {
				srcRef := *src
				e0 := c.t.evals
				info, err := c.Step(rng)
				if err != nil {
					t.Fatal(err)
				}
				e1 := tg.evals
				ref := refTFMHStep(t, twin, rand.New(&srcRef))
				if srcRef != *src {
					t.Fatalf("step %d: the reference used the random stream differently", s)
				}
				if info.Accepted != ref.Accepted || info.Batch != ref.Batch || info.Distinct != ref.Distinct {
					t.Fatalf("step %d: accepted %t, batch %d, distinct %d; reference %t, %d, %d",
						s, info.Accepted, info.Batch, info.Distinct, ref.Accepted, ref.Batch, ref.Distinct)
				}
				if c.t.evals-e0 != tg.evals-e1 {
					t.Fatalf("step %d: %d evaluations, reference %d", s, c.t.evals-e0, tg.evals-e1)
				}
				for j := range c.theta {
					if c.theta[j] != twin.theta[j] {
						t.Fatalf("step %d: θ = %v, reference %v", s, c.theta, twin.theta)
					}
				}
				batch += info.Batch
				if info.Accepted {
					accepted++
				}
			}
			t.Logf("%d data drawn, %d accepted in %d steps", batch, accepted, steps)
			if batch < 2*tfmhAhead*steps/10 || accepted == 0 || accepted == steps {
				t.Errorf("%d data drawn, %d accepted in %d steps: want groups past the first, rejections and acceptances",
					batch, accepted, steps)
			}
			step := func() {
				if _, err := c.Step(rng); err != nil {
					t.Fatal(err)
				}
			}
			if a := testing.AllocsPerRun(100, step); a != 0 {
				t.Errorf("a step allocates %v times", a)
			}
		})
	}
}

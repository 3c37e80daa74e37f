// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// summarizeReference is Summarize by a comparison sort and a binary search
// for every draw's tie run (zScaleSorted), each figure from fresh buffers:
// the reference TestSummarizerMatchesReference checks the Summarizer's
// radix argsort, run scan and reused buffers against.
func summarizeReference(x [][]float64) Stats {
	nan := math.NaN()
	st := Stats{nan, nan, nan, nan, nan, nan, nan}
	all := pooled(x)
	if len(all) == 0 {
		return st
	}
	slices.Sort(all)
	st.Q5, st.Q50, st.Q95 = sortedQuantile(all, 0.05), sortedQuantile(all, 0.5), sortedQuantile(all, 0.95)
	if !Usable(x) {
		return st
	}
	return summarizeSorted(x, all, st)
}

// summarizerInput returns chains × n draws of one of several kinds:
// continuous, sticky (long tie runs), rounded with ±0, tiny, a constant
// chain beside varying ones, all constant, a NaN or an ±Inf among them.
func summarizerInput(r *rand.Rand, kind, chains, n int) [][]float64 {
	x := make([][]float64, chains)
	for j := range x {
		x[j] = make([]float64, n)
		v := r.NormFloat64()
		for i := range x[j] {
			switch kind {
			case 0, 5, 6, 7:
				v = 0.7*v + r.NormFloat64()
			case 1:
				if r.Float64() < 0.2 {
					v = r.NormFloat64()
				}
			case 2:
				v = math.Round(2*r.NormFloat64()) / 2
				if v == 0 && r.IntN(2) == 0 {
					v = math.Copysign(0, -1)
				}
			case 3:
				v = 1e-300 * r.NormFloat64()
			case 4:
				v = 3
			}
			x[j][i] = v
		}
	}
	switch kind {
	case 5: // one constant chain
		for i := range x[0] {
			x[0][i] = 0.25
		}
	case 6:
		x[chains-1][n-1] = math.NaN()
	case 7:
		x[0][n/2] = math.Inf(1 - 2*r.IntN(2))
	}
	return x
}

// TestSummarizerMatchesReference checks one Summarizer, reused across
// inputs of changing shapes (so that a stale buffer would show), against
// summarizeReference bit for bit, and against the separate functions
// (Quantile, MCSEMean, ESSBulk, ESSTail, RHat): even and odd lengths,
// chains of one and two draws, ties, ±0, constant chains, NaN and ±Inf,
// ragged chains, draws whose fold about the median is constant.
func TestSummarizerMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s Summarizer
	for trial := range 310 {
		chains := 1 + r.IntN(5)
		n := []int{1, 2, 3, 4, 7, 100, 101, 1000, 1 + r.IntN(400)}[trial%9]
		kind := r.IntN(8)
		x := summarizerInput(r, kind, chains, n)
		switch {
		case trial >= 305: // ±1 only: the folded draws are all 1
			for j := range x {
				for i := range x[j] {
					x[j][i] = float64(2*r.IntN(2) - 1)
				}
			}
		case trial >= 300: // ragged
			x = append(x, make([]float64, n+1))
		}
		got, want := s.Summarize(x), summarizeReference(x)
		all := pooled(x)
		for _, c := range []struct {
			what           string
			got, want, sep float64
		}{
			{"Q5", got.Q5, want.Q5, Quantile(all, 0.05)},
			{"Q50", got.Q50, want.Q50, Quantile(all, 0.5)},
			{"Q95", got.Q95, want.Q95, Quantile(all, 0.95)},
			{"MCSEMean", got.MCSEMean, want.MCSEMean, MCSEMean(x)},
			{"ESSBulk", got.ESSBulk, want.ESSBulk, ESSBulk(x)},
			{"ESSTail", got.ESSTail, want.ESSTail, ESSTail(x)},
			{"RHat", got.RHat, want.RHat, RHat(x)},
		} {
			if math.Float64bits(c.got) != math.Float64bits(c.want) && !(math.IsNaN(c.got) && math.IsNaN(c.want)) {
				t.Fatalf("trial %d (kind %d, %d × %d): Summarizer's %s = %.17g, the reference %.17g", trial, kind, chains, n, c.what, c.got, c.want)
			}
			if c.got != c.sep && !(math.IsNaN(c.got) && math.IsNaN(c.sep)) {
				t.Fatalf("trial %d (kind %d, %d × %d): Summarizer's %s = %.17g, the separate call %.17g", trial, kind, chains, n, c.what, c.got, c.sep)
			}
		}
	}
}

// TestArgsortOrders checks the radix argsort: the values ascending and
// each carrying its own position, on values of every sign and exponent,
// on values of which a few share their high 32 bits (the insertion sort's
// case), and on values that all share them (the low bytes' case). The
// mutant argsortMutant (no insertion sort) must be caught.
func TestArgsortOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	inputs := make([][][]float64, 3)
	for c := range inputs {
		x := [][]float64{make([]float64, 3000), make([]float64, 3000)}
		for j := range x {
			for i := range x[j] {
				switch c {
				case 0:
					x[j][i] = math.Ldexp(r.NormFloat64(), r.IntN(2000)-1000)
					if i%97 == 0 {
						x[j][i] = math.Copysign(0, float64(i%2)-0.5)
					}
				case 1:
					x[j][i] = r.NormFloat64()
					if i%5 == 0 && i > 0 { // beside the one before, within 2⁻⁴⁰
						x[j][i] = x[j][i-1] * (1 + math.Ldexp(r.Float64()-0.5, -40))
					}
				case 2:
					x[j][i] = 1000 + math.Ldexp(r.NormFloat64(), -40)
				}
			}
		}
		inputs[c] = x
	}
	check := func(x [][]float64) string {
		var s Summarizer
		s.argsort(x, 6000)
		for p, v := range s.sorted {
			if p > 0 && v < s.sorted[p-1] {
				return fmt.Sprintf("sorted[%d] = %v below sorted[%d] = %v", p, v, p-1, s.sorted[p-1])
			}
			i := s.idx[p]
			if w := x[i/3000][i%3000]; math.Float64bits(w) != math.Float64bits(v) {
				return fmt.Sprintf("sorted[%d] = %v carries position %d, which holds %v", p, v, i, w)
			}
		}
		return ""
	}
	for c, x := range inputs {
		if msg := check(x); msg != "" {
			t.Fatalf("input %d: %s", c, msg)
		}
	}
	argsortMutant = true
	defer func() { argsortMutant = false }()
	if msg := check(inputs[1]); msg == "" {
		t.Errorf("mutant argsortMutant: input 1 sorted all the same, want it caught")
	} else {
		t.Logf("mutant argsortMutant caught: %s", msg)
	}
}

// TestSummarizerAllocs checks that a Summarizer reused on draws of one
// shape allocates nothing per call.
func TestSummarizerAllocs(t *testing.T) {
	x := summarizerInput(rand.New(rand.NewPCG(9, 10)), 0, 4, 1000)
	var s Summarizer
	s.Summarize(x)
	if a := testing.AllocsPerRun(20, func() { s.Summarize(x) }); a != 0 {
		t.Errorf("%v allocations per call, want 0", a)
	}
}

// BenchmarkSummarize is one summary table row of 4 chains × 1000 draws
// (an AR(1) at φ = 0.7), by Summarize and by the reference it replaces.
func BenchmarkSummarize(b *testing.B) {
	x := summarizerInput(rand.New(rand.NewPCG(9, 10)), 0, 4, 1000)
	b.Run("Summarize", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Summarize(x)
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			summarizeReference(x)
		}
	})
}

// TestSortIsSlicesSort checks Sort against slices.Sort bit for bit:
// continuous values of every sign and exponent, ties, −0 or +0 alone and
// both, ±Inf, NaN, values of which a few or all share their high 32 bits
// (the insertion sort's and the low bytes' cases), short and long inputs.
// The mutant argsortMutant must be caught.
func TestSortIsSlicesSort(t *testing.T) {
	run := func() (bad int, first string) {
		r := rand.New(rand.NewPCG(11, 12))
		for trial := range 80 {
			n := []int{0, 1, 5, 255, 256, 1000, 4000, 1 + r.IntN(9000)}[trial%8]
			x := make([]float64, n)
			kind := trial % 7
			if trial >= 40 {
				kind = 5 + trial%2 // 5 or 6 once more, at every length
			}
			for i := range x {
				x[i] = math.Ldexp(r.NormFloat64(), r.IntN(200)-100)
				switch kind {
				case 1:
					x[i] = math.Round(x[i])
				case 2:
					if i%5 == 0 {
						x[i] = 0
					}
				case 3:
					if i%5 == 0 {
						x[i] = math.Copysign(0, float64(i%2)-0.5)
					}
				case 4:
					if i%50 == 0 {
						x[i] = math.Inf(1 - 2*(i%100/50))
					}
				case 5:
					if i%5 == 0 && i > 0 {
						x[i] = x[i-1] * (1 + math.Ldexp(r.Float64()-0.5, -40))
					}
				case 6:
					x[i] = 1000 + math.Ldexp(r.NormFloat64(), -40)
				}
			}
			if kind == 0 && n > 0 && trial%3 == 0 {
				x[n/2] = math.NaN()
			}
			want := slices.Clone(x)
			slices.Sort(want)
			Sort(x)
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(want[i]) {
					if bad == 0 {
						first = fmt.Sprintf("trial %d (n %d): Sort[%d] = %v, slices.Sort %v", trial, n, i, x[i], want[i])
					}
					bad++
					break
				}
			}
		}
		return bad, first
	}
	if bad, first := run(); bad > 0 {
		t.Fatalf("%d inputs sorted otherwise than by slices.Sort; first %s", bad, first)
	}
	argsortMutant = true
	bad, first := run()
	argsortMutant = false
	if bad == 0 {
		t.Errorf("mutant argsortMutant: every input sorted as slices.Sort does, want some caught")
	} else {
		t.Logf("mutant argsortMutant caught: %d inputs; first %s", bad, first)
	}
}

package exactmh

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The keep probability of every TunaMH draw lies in [0, 1] and its log-ratio
// factor equals 2·artanh(d/(c_iM + 2a)) (reference-implementations.md §8),
// over differences spanning the whole bound (and its rounding tolerance) and
// a = χCc_iM² from underflow to far beyond c_iM.
func TestTunaTermKeepAndRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		mi := math.Exp(rng.Float64()*40 - 20)
		d := (2*rng.Float64() - 1) * mi * (1 + boundTol)
		if rng.IntN(10) == 0 {
			d = math.Copysign(mi, d) // the edge: one φ is exactly 0
		}
		a := mi * math.Exp(rng.Float64()*60-40)
		if rng.IntN(20) == 0 {
			a = 0
		}
		keep, term := tunaTerm(d, mi, a)
		if !(keep >= 0 && keep <= 1) {
			t.Fatalf("d = %v, c_iM = %v, a = %v: keep probability %v", d, mi, a, keep)
		}
		if keep == 0 {
			continue // never kept: the term is not used
		}
		dc := math.Max(-mi, math.Min(mi, d))
		x := dc / (mi + 2*a)
		want := 2 * math.Atanh(x)
		// atanh near ±1 amplifies the rounding of its argument: allow for it.
		tol := 1e-9*math.Max(1, math.Abs(want)) + 1e-15/(1-math.Abs(x))
		switch {
		case dc == -mi: // φ_new = 0: log(a/(a + c_iM)), where atanh's argument rounds to −1
			want = math.Log(a) - math.Log(a+mi)
		case dc == mi:
			want = math.Log(a+mi) - math.Log(a)
		}
		if math.IsInf(want, -1) {
			if !math.IsInf(term, -1) {
				t.Fatalf("d = %v, c_iM = %v, a = %v: term %v, want −Inf", d, mi, a, term)
			}
			continue
		}
		if math.IsNaN(term) || math.Abs(term-want) > tol {
			t.Fatalf("d = %v, c_iM = %v, a = %v: term %v, want 2·artanh = %v", d, mi, a, term, want)
		}
	}
}

// TestFullMemoSwitchedChain checks the memo of a chain whose every step is
// a full MH step (switched by warmup): the first step evaluates every
// datum at θ and θ′ in one read, each later one at θ′ only, as MH does,
// and the draws are those of the fused differences.
func TestFullMemoSwitchedChain(t *testing.T) {
	p, _, la := cvProblem(t, "logistic", 500, 3, 1)
	cv, err := ControlVariates(p, la)
	if err != nil {
		t.Fatal(err)
	}
	run := func(switched bool) ([]float64, []int64) {
		tgt, err := NewTarget(cv)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := TunaMH{Chi: 1e-3, Scale: 0.3}.Start(tgt, la.Mean)
		if err != nil {
			t.Fatal(err)
		}
		// Every step a fallback: switched to MH (−1), or every expected
		// batch above MaxBatch (0), where the differences are fused.
		ch.(*auxChain[struct{}, *tunaBatch]).scheme.(*tunaChain).maxBatch = 0
		if switched {
			ch.(*auxChain[struct{}, *tunaBatch]).scheme.(*tunaChain).maxBatch = -1
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var draws []float64
		var evals []int64
		for range 30 {
			before := tgt.Evals()
			info, err := ch.Step(rng)
			if err != nil || !info.Fallback {
				t.Fatalf("step: %+v, %v; want a fallback", info, err)
			}
			evals = append(evals, tgt.Evals()-before)
			draws = append(draws, ch.Position()...)
		}
		return draws, evals
	}
	fused, fusedEvals := run(false)
	memo, memoEvals := run(true)
	for k, e := range memoEvals {
		want := int64(500)
		if k == 0 {
			want = 1000
		}
		if e != want || fusedEvals[k] != 500 {
			t.Errorf("step %d: %d evaluations with the memo (want %d), %d fused (want 500)", k, e, want, fusedEvals[k])
		}
	}
	for j := range fused {
		if math.Abs(fused[j]-memo[j]) > 1e-9 {
			t.Fatalf("draw coordinate %d: %v with the memo, %v fused", j, memo[j], fused[j])
		}
	}
}

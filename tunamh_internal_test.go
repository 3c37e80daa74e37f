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

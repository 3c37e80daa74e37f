// Package alias draws indices i with probability w_i/Σw in O(1) time per
// draw by Walker's alias method, built in O(n) by Vose's algorithm (M. D.
// Vose, "A linear algorithm for generating random numbers with a given
// distribution", IEEE TSE 17(9), 1991).
//
// Minibatch kernels draw data proportional to their bound constants c_i
// with it; entries of weight zero are never drawn, which those kernels rely
// on (a datum with c_i = 0 contributes nothing and must not be touched).
package alias

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Table is an alias table over indices 0 … Len()−1. It is immutable once
// built and safe for concurrent draws with distinct generators.
type Table struct {
	// Column k keeps itself with probability prob[k], else yields alias[k].
	prob  []float64
	alias []int32
	p     []float64 // w_i/Σw
	total float64
}

// New builds the table for weights w in O(len(w)) time. It returns an error
// for an empty slice, a negative, NaN or infinite weight, or weights summing
// to zero or overflowing float64. Weights of zero are never drawn.
func New(w []float64) (*Table, error) {
	n := len(w)
	if n == 0 {
		return nil, fmt.Errorf("alias: no weights")
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("alias: %d weights, at most %d supported", n, math.MaxInt32)
	}
	total := 0.0
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("alias: weight %d is %v, want finite and ≥ 0", i, v)
		}
		total += v
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return nil, fmt.Errorf("alias: weights sum to %v, want positive and finite", total)
	}
	t := &Table{prob: make([]float64, n), alias: make([]int32, n), p: make([]float64, n), total: total}
	// scaled[i] = n·p_i; columns below 1 are topped up by one above 1.
	scaled := t.prob
	small := make([]int32, 0, n)
	large := make([]int32, 0, n)
	for i, v := range w {
		t.p[i] = v / total
		scaled[i] = t.p[i] * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.alias[s] = l
		// prob[s] keeps scaled[s]; l gives away 1 − scaled[s].
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// Leftovers are 1 up to rounding. A leftover of positive weight keeps
	// its column; one of zero weight (possible only through rounding) gets
	// probability 0 and an alias of positive weight, so it is never drawn.
	anyPositive := int32(-1)
	for i, v := range w {
		if v > 0 {
			anyPositive = int32(i)
			break
		}
	}
	for _, rest := range [][]int32{large, small} {
		for _, i := range rest {
			if w[i] > 0 {
				t.prob[i] = 1
			} else {
				t.prob[i] = 0
				t.alias[i] = anyPositive
			}
		}
	}
	// A zero-weight column must never keep itself (prob 0 exactly), and the
	// alias chosen for it always has positive weight by construction: only
	// columns with scaled ≥ 1 become aliases, and a weight-0 column never
	// reaches 1.
	return t, nil
}

// Draw returns index i with probability w_i/Σw: one uniform column and one
// coin, no allocation.
func (t *Table) Draw(rng *rand.Rand) int {
	k := rng.IntN(len(t.prob))
	if rng.Float64() < t.prob[k] {
		return k
	}
	return int(t.alias[k])
}

// Len returns the number of weights.
func (t *Table) Len() int { return len(t.prob) }

// Total returns Σw, the sum of the weights.
func (t *Table) Total() float64 { return t.total }

// Prob returns w_i/Σw, the probability that Draw returns i (rounded to
// float64: a positive weight so small that w_i/Σw underflows to 0 gives 0,
// and is never drawn).
func (t *Table) Prob(i int) float64 { return t.p[i] }

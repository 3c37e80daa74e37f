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

	"github.com/exactmh/exactmh/internal/prefault"
)

// Table is an alias table over indices 0 … Len()−1. It is immutable once
// built and safe for concurrent draws with distinct generators.
//
// A column's threshold and alias sit side by side, so a draw costs one
// cache miss rather than two; the table keeps a reference to the weights
// (for Prob) instead of a copy of w_i/Σw. Its memory is 16 bytes per
// index, 1.6 GB at N = 10⁸, and the weights must not change afterwards.
type Table struct {
	col   []column
	w     []float64
	total float64
}

// column k keeps itself with probability prob, else yields alias.
type column struct {
	prob  float64
	alias int32
}

// New builds the table for weights w in O(len(w)) time; the table keeps w,
// which the caller must not change afterwards. It returns an error
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
	t := &Table{col: prefault.Make[column](n), w: w, total: total}
	// scaled[i] = n·p_i, p_i = w_i/Σw, held in the columns' prob; columns
	// below 1 are topped up by one above 1. The two work stacks share one
	// array: small grows up from its start and large down from its end
	// (together they never hold more than n indices), which halves the
	// memory a build first touches.
	work := prefault.Make[int32](n)
	ns, lt := 0, n // small is work[:ns]; large is work[lt:], its top at lt
	for i, v := range w {
		p := v / total * float64(n)
		t.col[i].prob = p
		if p < 1 {
			work[ns] = int32(i)
			ns++
		} else {
			lt--
			work[lt] = int32(i)
		}
	}
	for ns > 0 && lt < n {
		s, l := work[ns-1], work[lt]
		ns--
		t.col[s].alias = l
		// s keeps its scaled weight; l gives away 1 − that.
		t.col[l].prob -= 1 - t.col[s].prob
		if t.col[l].prob < 1 {
			lt++
			work[ns] = l
			ns++
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
	for _, rest := range [2][]int32{work[lt:], work[:ns]} {
		for _, i := range rest {
			if w[i] > 0 {
				t.col[i].prob = 1
			} else {
				t.col[i] = column{prob: 0, alias: anyPositive}
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
	k := rng.IntN(len(t.col))
	c := &t.col[k]
	if rng.Float64() < c.prob {
		return k
	}
	return int(c.alias)
}

// DrawInto sets each idx[j] to an index drawn as Draw draws it, from the
// same random numbers in the same order (each draw's column, then its
// coin), so the indices equal len(idx) calls of Draw. It draws every
// column and coin first (DrawColumns) and reads the columns afterwards, in
// a loop of independent loads: on a table far larger than the caches their
// misses overlap, where each Draw waits on its own. u (at least len(idx)
// long) is scratch.
func (t *Table) DrawInto(rng *rand.Rand, idx []int, u []float64) {
	u = u[:len(idx)]
	DrawColumns(rng, len(t.col), idx, u)
	for j, k := range idx {
		if c := &t.col[k]; !(u[j] < c.prob) {
			idx[j] = int(c.alias)
		}
	}
}

// DrawColumns sets each idx[j] to a column drawn uniformly from n and u[j]
// to its coin, in the order Draw draws them: the random half of
// len(idx) draws from a table of n columns. A caller that keeps the
// columns itself (Column) then resolves each draw as Draw does: idx[j]
// when u[j] < its column's prob, else its alias.
func DrawColumns(rng *rand.Rand, n int, idx []int, u []float64) {
	u = u[:len(idx)]
	for j := range idx {
		idx[j] = rng.IntN(n)
		u[j] = rng.Float64()
	}
}

// Column returns column k of the table: a draw of it keeps k with
// probability prob, else yields alias.
func (t *Table) Column(k int) (prob float64, alias int) {
	c := t.col[k]
	return c.prob, int(c.alias)
}

// Len returns the number of weights.
func (t *Table) Len() int { return len(t.col) }

// Total returns Σw, the sum of the weights.
func (t *Table) Total() float64 { return t.total }

// Prob returns w_i/Σw, the probability that Draw returns i (rounded to
// float64: a positive weight so small that w_i/Σw underflows to 0 gives 0,
// and is never drawn).
func (t *Table) Prob(i int) float64 { return t.w[i] / t.total }

// Build turns the weights w into an alias table in place, for tables kept
// as two flat arrays rather than Tables: on return w[k] is column k's keep
// probability and alias[k] its alias (len(alias) = len(w)), exactly the
// columns New(w) makes (Column), and total is Σw (Total). It needs 4
// bytes of scratch per weight and a bit, against New's 16 bytes of
// table, so the largest of many tables built one after another costs no
// copy of its weights. Its errors are New's; on error w is unchanged.
func Build(w []float64, alias []int32) (total float64, err error) {
	n := len(w)
	if n == 0 {
		return 0, fmt.Errorf("alias: no weights")
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("alias: %d weights, at most %d supported", n, math.MaxInt32)
	}
	if len(alias) != n {
		return 0, fmt.Errorf("alias: %d aliases for %d weights", len(alias), n)
	}
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 1) {
			return 0, fmt.Errorf("alias: weight %d is %v, want finite and ≥ 0", i, v)
		}
		total += v
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return 0, fmt.Errorf("alias: weights sum to %v, want positive and finite", total)
	}
	// As New, with the scaled weights in w and which weights were positive
	// in a bitset.
	positive := make([]uint64, (n+63)/64)
	anyPositive := int32(-1)
	work := prefault.Make[int32](n)
	ns, lt := 0, n
	for i, v := range w {
		if v > 0 {
			positive[i/64] |= 1 << (i % 64)
			if anyPositive < 0 {
				anyPositive = int32(i)
			}
		}
		p := v / total * float64(n)
		w[i], alias[i] = p, 0
		if p < 1 {
			work[ns] = int32(i)
			ns++
		} else {
			lt--
			work[lt] = int32(i)
		}
	}
	for ns > 0 && lt < n {
		s, l := work[ns-1], work[lt]
		ns--
		alias[s] = l
		w[l] -= 1 - w[s]
		if w[l] < 1 {
			lt++
			work[ns] = l
			ns++
		}
	}
	for _, rest := range [2][]int32{work[lt:], work[:ns]} {
		for _, i := range rest {
			if positive[i/64]&(1<<(i%64)) != 0 {
				w[i] = 1
			} else {
				w[i], alias[i] = 0, anyPositive
			}
		}
	}
	return total, nil
}

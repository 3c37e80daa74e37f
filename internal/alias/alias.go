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
	"unsafe"

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
	if err := checkLen(len(w)); err != nil {
		return nil, err
	}
	total, err := sum(w)
	if err != nil {
		return nil, err
	}
	t := &Table{col: prefault.Make[column](len(w)), w: w, total: total}
	vose(tableColumns(t.col), w, total)
	return t, nil
}

// checkLen returns New's error for n weights, if any.
func checkLen(n int) error {
	if n == 0 {
		return fmt.Errorf("alias: no weights")
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("alias: %d weights, at most %d supported", n, math.MaxInt32)
	}
	return nil
}

// sum returns Σw, or New's error for a weight or a sum it refuses.
func sum(w []float64) (total float64, err error) {
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 1) {
			return 0, fmt.Errorf("alias: weight %d is %v, want finite and ≥ 0", i, v)
		}
		total += v
	}
	if !(total > 0) || math.IsInf(total, 1) {
		return 0, fmt.Errorf("alias: weights sum to %v, want positive and finite", total)
	}
	return total, nil
}

// columns is where vose writes the columns of a table, a Table's or
// Build's two flat arrays: column k's keep probability (first its scaled
// weight) is the float64 at p + k·ps and its alias the int32 at a + k·as.
// The strides let one build serve both layouts at the speed of either (a
// generic core calling methods through its type parameter is markedly
// slower: BenchmarkNew, BenchmarkBuild); vose writes only columns 0 …
// n−1 of arrays of n, so no access leaves them.
type columns struct {
	p, a   unsafe.Pointer
	ps, as uintptr
}

func (c columns) prob(k int32) *float64 { return (*float64)(unsafe.Add(c.p, uintptr(k)*c.ps)) }
func (c columns) alias(k int32) *int32  { return (*int32)(unsafe.Add(c.a, uintptr(k)*c.as)) }

// tableColumns returns the columns of col.
func tableColumns(col []column) columns {
	return columns{p: unsafe.Pointer(&col[0].prob), a: unsafe.Pointer(&col[0].alias),
		ps: unsafe.Sizeof(column{}), as: unsafe.Sizeof(column{})}
}

// flatColumns returns the columns of the arrays p and a, of equal length;
// p may be the weights themselves (Build): vose reads w_i before it
// writes column i.
func flatColumns(p []float64, a []int32) columns {
	return columns{p: unsafe.Pointer(&p[0]), a: unsafe.Pointer(&a[0]), ps: 8, as: 4}
}

// vose writes the alias table of the weights w, Σw = total, into cols
// (Vose's algorithm). The scaled weights n·p_i, p_i = w_i/Σw, start as the
// columns' probabilities; columns below 1 are topped up by one above 1.
// The two work stacks share one array: small grows up from its start and
// large down from its end (together they never hold more than n indices),
// which halves the memory a build first touches. Which weights are
// positive is kept in a bitset (w may be cols' probabilities).
func vose(cols columns, w []float64, total float64) {
	n := len(w)
	positive := make([]uint64, (n+63)/64)
	anyPositive := int32(-1)
	work := prefault.Make[int32](n)
	ns, lt := 0, n // small is work[:ns]; large is work[lt:], its top at lt
	for i, v := range w {
		if v > 0 {
			positive[i/64] |= 1 << (i % 64)
			if anyPositive < 0 {
				anyPositive = int32(i)
			}
		}
		p := v / total * float64(n)
		*cols.prob(int32(i)), *cols.alias(int32(i)) = p, 0
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
		*cols.alias(s) = l
		// s keeps its scaled weight; l gives away 1 − that.
		pl := cols.prob(l)
		*pl -= 1 - *cols.prob(s)
		if *pl < 1 {
			lt++
			work[ns] = l
			ns++
		}
	}
	// Leftovers are 1 up to rounding. A leftover of positive weight keeps
	// its column; one of zero weight (possible only through rounding) gets
	// probability 0 and an alias of positive weight, so it is never drawn:
	// only columns with scaled weight ≥ 1 become aliases, and a weight-0
	// column never reaches 1.
	for _, rest := range [2][]int32{work[lt:], work[:ns]} {
		for _, i := range rest {
			if positive[i/64]&(1<<(i%64)) != 0 {
				*cols.prob(i) = 1
			} else {
				*cols.prob(i), *cols.alias(i) = 0, anyPositive
			}
		}
	}
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
	if err := checkLen(n); err != nil {
		return 0, err
	}
	if len(alias) != n {
		return 0, fmt.Errorf("alias: %d aliases for %d weights", len(alias), n)
	}
	if total, err = sum(w); err != nil {
		return 0, err
	}
	vose(flatColumns(w, alias), w, total)
	return total, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package diagnostics

import (
	"math"
	"slices"
	"sync"
)

// A Summarizer computes Summarize's figures with buffers it keeps from one
// call to the next: after the first call on draws of a given shape, a call
// allocates nothing. A summary table's rows share one (Summarize itself
// takes one from a pool). The zero value is ready to use; a Summarizer
// must not be used by two goroutines at once.
//
// Its figures are Summarize's bit for bit (TestSummarizerMatchesSeparate,
// TestSummarizerMatchesReference): the draws are sorted once, by a radix
// sort of their order-preserving bit patterns that carries each draw's
// position (argsort), so that every draw's rank, its tie run, and the
// order of the folded draws |x − median| (a merge about the median) are
// read off that one order, with no comparison sort and no search.
type Summarizer struct {
	sc scratch

	keys, keys2 []uint64  // radix sort: order-preserving bits of the pooled draws
	idx, idx2   []int32   // the pooled position each key carries
	sorted      []float64 // the pooled draws, ascending
	fvals       []float64 // a sorted sequence being ranked (folded, or without middle draws)
	fidx        []int32   // the pooled positions of fvals
	z, zf, ind  []float64 // pooled layout: normal scores, folded scores, an indicator
	views       [][]float64
}

// scratch holds ess's and rhat's buffers: the chains' moments and centred
// draws (load), the autocovariance and Geyer's sequence.
type scratch struct {
	cmean, cvar, cen []float64
	acov, fft, rho   []float64
}

// zeros returns (*buf)[:n] cleared, growing *buf as needed.
func (sc *scratch) zeros(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	b := (*buf)[:n]
	clear(b)
	return b
}

var summarizers = sync.Pool{New: func() any { return new(Summarizer) }}

// grow returns buf resized to n, reallocated only when too small; its
// contents are not cleared.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// Summarize returns diagnostics.Summarize(x), reusing s's buffers.
func (s *Summarizer) Summarize(x [][]float64) Stats {
	nan := math.NaN()
	st := Stats{nan, nan, nan, nan, nan, nan, nan}
	size := 0
	for _, c := range x {
		size += len(c)
	}
	if size == 0 {
		return st
	}
	if !Usable(x) || size > math.MaxInt32 {
		// NaN or ±Inf among the draws (the radix order would place NaN
		// apart from where the float sort does), or ragged chains: only
		// the quantiles, as the float sort gives them.
		all := pooled(x)
		slices.Sort(all)
		st.Q5, st.Q50, st.Q95 = sortedQuantile(all, 0.05), sortedQuantile(all, 0.5), sortedQuantile(all, 0.95)
		if !Usable(x) {
			return st
		}
		return summarizeSorted(x, all, st)
	}
	m, n := len(x), len(x[0])
	s.argsort(x, size)
	all := s.sorted
	st.Q5, st.Q50, st.Q95 = sortedQuantile(all, 0.05), sortedQuantile(all, 0.5), sortedQuantile(all, 0.95)
	if _, neg := slices.BinarySearch(s.keys, floatKey(math.Copysign(0, -1))); neg {
		if _, pos := slices.BinarySearch(s.keys, floatKey(0)); pos {
			// −0 and +0 both: the radix order puts −0 first, the float
			// sort either first, and a quantile at a zero takes the sign
			// of the one there. The quantiles are the float sort's.
			ref := pooled(x)
			slices.Sort(ref)
			st.Q5, st.Q50, st.Q95 = sortedQuantile(ref, 0.05), sortedQuantile(ref, 0.5), sortedQuantile(ref, 0.95)
		}
	}

	// The split halves, as split makes them, over a chain layout of
	// pooled length (x itself, or z, zf, ind): first halves, then second
	// halves; an odd length drops each chain's middle draw.
	s.views = grow(s.views, 2*m)
	halves := func(flat []float64, x [][]float64) [][]float64 {
		if n < 2 {
			if x != nil {
				return x
			}
			for j := range m {
				s.views[j] = flat[j*n : (j+1)*n : (j+1)*n]
			}
			return s.views[:m]
		}
		for j := range m {
			var c []float64
			if x != nil {
				c = x[j]
			} else {
				c = flat[j*n : (j+1)*n : (j+1)*n]
			}
			s.views[j], s.views[m+j] = c[:n/2:n/2], c[(n+1)/2:]
		}
		return s.views[:2*m]
	}
	if basic := s.sc.ess(halves(nil, x)); !math.IsNaN(basic) {
		st.MCSEMean = math.Sqrt(pooledVar(x)) / math.Sqrt(basic)
	}
	// An odd length ranks the draws without the middle ones.
	drop := n >= 2 && n%2 == 1
	s.z = grow(s.z, size)
	if drop {
		s.fvals, s.fidx = s.fvals[:0], s.fidx[:0]
		for p, v := range all {
			if i := s.idx[p]; int(i)%n != n/2 {
				s.fvals, s.fidx = append(s.fvals, v), append(s.fidx, i)
			}
		}
		rankScores(s.z, s.fvals, s.fidx)
	} else {
		rankScores(s.z, all, s.idx)
	}
	var bulk float64
	st.ESSBulk, bulk = s.sc.essRHat(halves(s.z, nil))

	// Tail ESS: the indicators I(x ≤ q) at the 5% and 95% quantiles.
	s.ind = grow(s.ind, size)
	tail := math.Inf(1)
	for _, q := range [2]float64{sortedQuantile(all, 0.05), sortedQuantile(all, 0.95)} {
		for j, c := range x {
			ind := s.ind[j*n : (j+1)*n]
			for t, v := range c {
				ind[t] = 0
				if v <= q {
					ind[t] = 1
				}
			}
		}
		tail = math.Min(tail, s.sc.ess(halves(s.ind, nil)))
	}
	if !math.IsNaN(tail) {
		st.ESSTail = tail
	}

	// The folded draws' order: all merged about the median (foldSorted),
	// carrying the positions.
	s.foldOrder(all, st.Q50, drop, n)
	s.zf = grow(s.zf, size)
	rankScores(s.zf, s.fvals, s.fidx)
	folded := s.sc.rhat(halves(s.zf, nil))
	if !math.IsNaN(bulk) && !math.IsNaN(folded) {
		st.RHat = math.Max(bulk, folded)
	}
	return st
}

// summarizeSorted is Summarize past the quantiles on Usable x given all,
// its pooled draws sorted: the path for inputs too large to index with
// int32.
func summarizeSorted(x [][]float64, all []float64, st Stats) Stats {
	halves := split(x)
	if basic := ess(halves); !math.IsNaN(basic) {
		st.MCSEMean = sampleSD(pooled(x)) / math.Sqrt(basic)
	}
	var z, zf [][]float64
	if even := len(x[0])%2 == 0; even {
		z = zScaleSorted(halves, all)
		zf = zScaleSorted(split(fold(x, st.Q50)), foldSorted(all, st.Q50))
	} else {
		z = zScale(halves)
		zf = zScale(split(fold(x, st.Q50)))
	}
	st.ESSBulk = ess(z)
	tail := math.Min(indicatorESS(x, sortedQuantile(all, 0.05)), indicatorESS(x, sortedQuantile(all, 0.95)))
	if !math.IsNaN(tail) {
		st.ESSTail = tail
	}
	bulk, folded := rhat(z), rhat(zf)
	if !math.IsNaN(bulk) && !math.IsNaN(folded) {
		st.RHat = math.Max(bulk, folded)
	}
	return st
}

// pooledVar is sampleVar(pooled(x)) without the copy: the same sums in the
// same order.
func pooledVar(x [][]float64) float64 {
	size, sum := 0, 0.0
	for _, c := range x {
		size += len(c)
		for _, v := range c {
			sum += v
		}
	}
	mu := sum / float64(size)
	s := 0.0
	for _, c := range x {
		for _, v := range c {
			s += (v - mu) * (v - mu)
		}
	}
	return s / float64(size-1)
}

// floatKey maps a float64 to a uint64 whose unsigned order is the float's
// order (−0 just below +0); keyFloat inverts it.
func floatKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func keyFloat(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// argsort sorts the pooled draws of x (finite, size of them) into
// s.sorted, with s.idx[p] the pooled position (chain·n + draw) of
// s.sorted[p]: a least-significant-digit radix sort on floatKey in bytes,
// skipping the bytes all keys share. The four high bytes (sign, exponent
// and 20 bits of the mantissa) go first: draws that share them are rare
// and adjacent, and an insertion sort on the whole key puts them in
// order. Where that takes more than size moves (draws within a relative
// 2⁻²⁰ of one another by the many), the four low bytes are sorted too,
// then the high ones again. Equal keys end in any order, which the ranks
// do not see (ties get the average rank; TestArgsortOrders).
func (s *Summarizer) argsort(x [][]float64, size int) {
	s.keys, s.keys2 = grow(s.keys, size), grow(s.keys2, size)
	s.idx, s.idx2 = grow(s.idx, size), grow(s.idx2, size)
	var count [8][256]int32
	p := 0
	for _, c := range x {
		for _, v := range c {
			k := floatKey(v)
			s.keys[p], s.idx[p] = k, int32(p)
			for b := range 8 {
				count[b][byte(k>>(8*b))]++
			}
			p++
		}
	}
	s.radixPasses(&count, 4, 8)
	if !argsortMutant && !insertionFix(s.keys, s.idx, size) {
		s.radixPasses(&count, 0, 8)
	}
	s.sorted = grow(s.sorted, size)
	for i, k := range s.keys {
		s.sorted[i] = keyFloat(k)
	}
}

// argsortMutant, a mutant of TestArgsortOrders and TestSortIsSlicesSort,
// makes argsort and Sort skip the insertion sort after the high bytes and
// the low bytes: keys that share their high bytes are left unsorted.
var argsortMutant bool

// radixPasses sorts s.keys (with s.idx) stably by their bytes from to
// to−1, least significant first, given each byte's counts.
func (s *Summarizer) radixPasses(count *[8][256]int32, from, to int) {
	keys, keys2, idx, idx2 := s.keys, s.keys2, s.idx, s.idx2
	size := int32(len(keys))
	for b := from; b < to; b++ {
		cnt := &count[b]
		if cnt[byte(keys[0]>>(8*b))] == size {
			continue // every key has this byte
		}
		var offs [256]int32
		sum := int32(0)
		for d, c := range cnt {
			offs[d] = sum
			sum += c
		}
		shift := uint(8 * b)
		for i, k := range keys {
			d := byte(k >> shift)
			o := offs[d]
			keys2[o], idx2[o] = k, idx[i]
			offs[d] = o + 1
		}
		keys, keys2, idx, idx2 = keys2, keys, idx2, idx
	}
	s.keys, s.keys2, s.idx, s.idx2 = keys, keys2, idx, idx2
}

// insertionFix sorts keys (with idx) by insertion, giving up (false) after
// budget moves; keys sorted by their high bytes need a move only for
// each inversion among keys that share them.
func insertionFix(keys []uint64, idx []int32, budget int) bool {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		if k >= keys[i-1] {
			continue
		}
		p, j := idx[i], i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j], idx[j] = keys[j-1], idx[j-1]
		}
		keys[j], idx[j] = k, p
		if budget -= i - j; budget < 0 {
			return false
		}
	}
	return true
}

// rankScores sets out[pos[p]] to the normal score (blomTable) of the
// average rank of vals[p] among vals, ascending: each run of equal values
// [lo, hi) gets rank (lo+1+hi)/2, as zScaleSorted's searches find it.
func rankScores(out, vals []float64, pos []int32) {
	table := blomTable(len(vals))
	for lo := 0; lo < len(vals); {
		hi := lo + 1
		for hi < len(vals) && vals[hi] == vals[lo] {
			hi++
		}
		score := table[lo+1+hi]
		for _, i := range pos[lo:hi] {
			out[i] = score
		}
		lo = hi
	}
}

// foldOrder sets s.fvals to |v − med| for the ascending draws all, in
// ascending order (foldSorted's merge), and s.fidx to their pooled
// positions; with drop, the middle draw of each chain of length n is left
// out.
func (s *Summarizer) foldOrder(all []float64, med float64, drop bool, n int) {
	s.fvals, s.fidx = s.fvals[:0], s.fidx[:0]
	k := lowerBound(all, med)
	i, j := k-1, k
	for range all {
		var v float64
		var p int32
		switch {
		case i < 0:
			v, p = math.Abs(all[j]-med), s.idx[j]
			j++
		case j >= len(all):
			v, p = math.Abs(all[i]-med), s.idx[i]
			i--
		default:
			a, b := math.Abs(all[i]-med), math.Abs(all[j]-med)
			if a <= b {
				v, p = a, s.idx[i]
				i--
			} else {
				v, p = b, s.idx[j]
				j++
			}
		}
		if drop && int(p)%n == n/2 {
			continue
		}
		s.fvals, s.fidx = append(s.fvals, v), append(s.fidx, p)
	}
}

// sortBufs holds Sort's key buffers between calls.
var sortBufs = sync.Pool{New: func() any { return new([2][]uint64) }}

// Sort sorts x ascending, as slices.Sort (and sort.Float64s) does, bit for
// bit: by a radix sort of the floats' order-preserving bit patterns in
// linear time where x is finite and does not hold both −0 and +0 (whose
// order between themselves the radix sort fixes and slices.Sort does
// not), by slices.Sort itself otherwise (NaN first). TestSortIsSlicesSort.
func Sort(x []float64) {
	if len(x) < 256 {
		slices.Sort(x)
		return
	}
	bufs := sortBufs.Get().(*[2][]uint64)
	defer sortBufs.Put(bufs)
	keys, tmp := grow(bufs[0], len(x)), grow(bufs[1], len(x))
	bufs[0], bufs[1] = keys, tmp
	var count [8][256]int32
	negZero, posZero := false, false
	for i, v := range x {
		if v != v || len(x) > math.MaxInt32 {
			slices.Sort(x)
			return
		}
		if v == 0 {
			if math.Signbit(v) {
				negZero = true
			} else {
				posZero = true
			}
		}
		k := floatKey(v)
		keys[i] = k
		for b := range 8 {
			count[b][byte(k>>(8*b))]++
		}
	}
	if negZero && posZero {
		slices.Sort(x)
		return
	}
	// The high bytes, then an insertion sort, as argsort does.
	keys, tmp = keyPasses(&count, keys, tmp, 4, 8)
	if !argsortMutant && !insertionFixKeys(keys, len(x)) {
		keys, _ = keyPasses(&count, keys, tmp, 0, 8)
	}
	for i, k := range keys {
		x[i] = keyFloat(k)
	}
}

// keyPasses sorts keys stably by their bytes from to to−1, least
// significant first, given each byte's counts, through tmp; it returns the
// sorted keys and the other buffer.
func keyPasses(count *[8][256]int32, keys, tmp []uint64, from, to int) ([]uint64, []uint64) {
	for b := from; b < to; b++ {
		cnt := &count[b]
		if cnt[byte(keys[0]>>(8*b))] == int32(len(keys)) {
			continue
		}
		var offs [256]int32
		sum := int32(0)
		for d, c := range cnt {
			offs[d] = sum
			sum += c
		}
		shift := uint(8 * b)
		for _, k := range keys {
			d := byte(k >> shift)
			tmp[offs[d]] = k
			offs[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys, tmp
}

// insertionFixKeys is insertionFix without positions.
func insertionFixKeys(keys []uint64, budget int) bool {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		if k >= keys[i-1] {
			continue
		}
		j := i
		for ; j > 0 && keys[j-1] > k; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = k
		if budget -= i - j; budget < 0 {
			return false
		}
	}
	return true
}

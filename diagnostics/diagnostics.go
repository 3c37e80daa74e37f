// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package diagnostics computes MCMC convergence diagnostics and accuracy
// measures from the draws of one scalar quantity.
//
// The convergence diagnostics are computed exactly as the Stan team's R
// package posterior (1.4.0 and later) computes them: Vehtari, Gelman,
// Simpson, Carpenter and Bürkner (2021), "Rank-normalization, folding, and
// localization: an improved R-hat", Bayesian Analysis 16(2). The tests
// reproduce posterior's own output to 1e-8 relative, including where it
// returns NA (NaN here) and its quirks for short chains. The convergence
// diagnostics are
//
//   - the effective sample sizes [ESSBulk], [ESSTail], [ESSBasic] and
//     [ESSQuantile];
//   - the split R-hats [RHat] (the larger of [RHatBulk] and [RHatTail]) and
//     [RHatBasic];
//   - the Monte Carlo standard errors [MCSEMean] and [MCSEQuantile];
//   - their building blocks [Quantile] (type 7), [Autocovariance] and
//     [Autocorrelation].
//
// [Summarize] computes a summary table's row (quantiles, MCSEMean,
// ESSBulk, ESSTail, RHat) at once, sharing the sorting and ranking: the same
// numbers, several times faster on long chains. A [Summarizer] does the
// same with buffers kept from row to row. [Sort] is slices.Sort's result
// in linear time (a radix sort), for tables that need more quantiles.
//
// [ESSCoda] is R's coda::effectiveSize of one sequence (reproduced to 1e-8
// as well), a second opinion beside [ESSBasic].
// [TotalVariation], [SymmetricKL] and [MSE] measure the accuracy of an
// estimate against a reference.
//
// Every function on [][]float64 takes the draws of one scalar quantity as
// x[chain][iteration] (exactmh's Result.Samples(j) gives them for
// coordinate j). Chains must have equal lengths; ragged input, an empty
// input, any NaN or ±Inf, or a constant input (range below 2.2e-16,
// posterior's absolute tolerance) gives NaN, which means "not available";
// [Usable] reports whether an input avoids these cases.
//
// The package does not depend on exactmh.
package diagnostics

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mathext"
)

// constTol is posterior's constant-input tolerance: R's .Machine$double.eps,
// used as an absolute bound on max − min over all draws.
const constTol = 0x1p-52

// ESSBulk is the bulk effective sample size: the ESS of the rank-normalized
// split chains (posterior::ess_bulk). It measures how well the centre of the
// distribution is explored and is the default ESS to report.
func ESSBulk(x [][]float64) float64 {
	if !Usable(x) {
		return math.NaN()
	}
	return ess(zScale(split(x)))
}

// ESSTail is the tail effective sample size: the smaller of the ESS of the
// 5% and 95% quantile indicators (posterior::ess_tail).
func ESSTail(x [][]float64) float64 {
	lo, hi := ESSQuantile(x, 0.05), ESSQuantile(x, 0.95)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return math.NaN()
	}
	return math.Min(lo, hi)
}

// ESSBasic is the effective sample size of the raw split chains
// (posterior::ess_basic, equal to ess_mean): the one that governs the Monte
// Carlo error of the mean.
func ESSBasic(x [][]float64) float64 {
	if !Usable(x) {
		return math.NaN()
	}
	return ess(split(x))
}

// ESSQuantile is the effective sample size for the p-quantile: the ESS of
// the split indicator chains I(x ≤ q_p), q_p the type-7 sample quantile of all
// draws (posterior::ess_quantile). p = 1 is replaced by (S − ½)/S.
func ESSQuantile(x [][]float64, p float64) float64 {
	if !Usable(x) || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	all := pooled(x)
	if p == 1 {
		s := float64(len(all))
		p = (s - 0.5) / s
	}
	slices.Sort(all)
	return indicatorESS(x, sortedQuantile(all, p))
}

// indicatorESS is the ESS of the split indicator chains I(x ≤ q).
func indicatorESS(x [][]float64, q float64) float64 {
	ind := make([][]float64, len(x))
	for j, c := range x {
		ind[j] = make([]float64, len(c))
		for t, v := range c {
			if v <= q {
				ind[j][t] = 1
			}
		}
	}
	return ess(split(ind))
}

// RHat is the rank-normalized split R-hat: the larger of the bulk R-hat and
// the tail (folded) R-hat (posterior::rhat). Values above 1.01 signal chains
// that have not mixed.
func RHat(x [][]float64) float64 {
	b, t := RHatBulk(x), RHatTail(x)
	if math.IsNaN(b) || math.IsNaN(t) {
		return math.NaN()
	}
	return math.Max(b, t)
}

// RHatBulk is the split R-hat of the rank-normalized draws, the bulk half of
// RHat.
func RHatBulk(x [][]float64) float64 {
	if !Usable(x) {
		return math.NaN()
	}
	return rhat(zScale(split(x)))
}

// RHatTail is the split R-hat of the rank-normalized draws folded around
// their median, |x − median|: the tail half of RHat.
func RHatTail(x [][]float64) float64 {
	if !Usable(x) {
		return math.NaN()
	}
	all := pooled(x)
	slices.Sort(all)
	return rhat(zScale(split(fold(x, sortedQuantile(all, 0.5)))))
}

// fold returns |x − med|, chain by chain.
func fold(x [][]float64, med float64) [][]float64 {
	folded := make([][]float64, len(x))
	for j, c := range x {
		folded[j] = make([]float64, len(c))
		for t, v := range c {
			folded[j][t] = math.Abs(v - med)
		}
	}
	return folded
}

// Stats are the diagnostics of one quantity that a summary table reports.
type Stats struct {
	Q5, Q50, Q95 float64 // Quantile at 0.05, 0.5 and 0.95 of all draws
	MCSEMean     float64 // MCSEMean
	ESSBulk      float64 // ESSBulk
	ESSTail      float64 // ESSTail
	RHat         float64 // RHat
}

// Summarize returns what Quantile (of all draws, at 0.05, 0.5 and 0.95),
// MCSEMean, ESSBulk, ESSTail and RHat return, the same numbers, computed
// together: the draws are sorted once for the quantiles and the tail
// indicators, and rank-normalized once for the bulk ESS and R-hat. On two
// chains of a million draws that is several times faster than the separate
// calls. The quantiles are those of the pooled draws whether or not x is
// Usable (NaN only for no draws); the rest are NaN where the separate
// functions are.
func Summarize(x [][]float64) Stats {
	s := summarizers.Get().(*Summarizer)
	defer summarizers.Put(s)
	return s.Summarize(x)
}

// RHatBasic is the classic split R-hat of the raw draws
// (posterior::rhat_basic; Gelman et al., BDA3 §11.4).
func RHatBasic(x [][]float64) float64 {
	if !Usable(x) {
		return math.NaN()
	}
	return rhat(split(x))
}

// MCSEMean is the Monte Carlo standard error of the mean of all draws:
// sd / √ESSBasic (posterior::mcse_mean).
func MCSEMean(x [][]float64) float64 {
	n := ESSBasic(x)
	if math.IsNaN(n) {
		return math.NaN()
	}
	return sampleSD(pooled(x)) / math.Sqrt(n)
}

// MCSEQuantile is the Monte Carlo standard error of the p-quantile
// (posterior::mcse_quantile): half the distance between the order statistics
// at the ±1σ limits of the Beta(ESS·p+1, ESS·(1−p)+1) law of the quantile's
// rank.
func MCSEQuantile(x [][]float64, p float64) float64 {
	n := ESSQuantile(x, p)
	if math.IsNaN(n) {
		return math.NaN()
	}
	// posterior uses these literal constants for Φ(−1) and Φ(1).
	a1 := mathext.InvRegIncBeta(n*p+1, n*(1-p)+1, 0.1586553)
	a2 := mathext.InvRegIncBeta(n*p+1, n*(1-p)+1, 0.8413447)
	s := pooled(x)
	slices.Sort(s)
	size := float64(len(s))
	i1 := max(int(math.Floor(a1*size)), 1)
	i2 := min(int(math.Ceil(a2*size)), len(s))
	return (s[i2-1] - s[i1-1]) / 2
}

// Quantile returns the type-7 sample quantile of x at probability p (R's
// default, numpy's "linear"), NaN for empty x or p outside [0, 1]. x is not
// modified.
func Quantile(x []float64, p float64) float64 {
	if len(x) == 0 || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return sortedQuantile(s, p)
}

// sortedQuantile is R's quantile type 7 on ascending s, in R's exact
// arithmetic form (1−h)·lo + h·hi, which can differ from lo + h·(hi−lo) by an
// ulp.
func sortedQuantile(s []float64, p float64) float64 {
	index := float64(len(s)-1) * p
	lo := int(math.Floor(index))
	hi := int(math.Ceil(index))
	q := s[lo]
	if h := index - float64(lo); h > 0 && s[hi] != s[lo] {
		q = (1-h)*s[lo] + h*s[hi]
	}
	return q
}

// Autocorrelation returns the autocorrelation of one chain at lags
// 0 … len(x)−1, from the biased autocovariance computed by FFT
// (posterior::autocorrelation). A constant chain gives NaN at every lag.
func Autocorrelation(x []float64) []float64 {
	ac := Autocovariance(x)
	if len(ac) == 0 {
		return ac
	}
	c0 := ac[0]
	for k := range ac {
		ac[k] /= c0
	}
	return ac
}

// Autocovariance returns the biased autocovariance of one chain,
// (1/n) Σ_t (x_t − x̄)(x_{t+k} − x̄) for k = 0 … n−1, computed by FFT on the
// centred chain zero-padded past 2n so that no lag wraps around. A chain of
// zero variance gives zeros.
func Autocovariance(x []float64) []float64 {
	n := len(x)
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	if n == 1 {
		return out
	}
	v := sampleVar(x)
	if v == 0 {
		return out
	}
	mean := meanOf(x)
	size := 2 * nextFast(n)
	fft := fourier.NewFFT(size)
	buf := make([]float64, size)
	for i, xi := range x {
		buf[i] = xi - mean
	}
	coef := fft.Coefficients(nil, buf)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	fft.Sequence(buf, coef)
	// Scale so that lag 0 is exactly the biased variance, as posterior does.
	scale := v * float64(n-1) / float64(n) / buf[0]
	for k := range out {
		out[k] = buf[k] * scale
	}
	return out
}

// nextFast returns the smallest integer ≥ n whose only prime factors are 2,
// 3 and 5 (R's nextn), a size at which the FFT is fast.
func nextFast(n int) int {
	for m := n; ; m++ {
		r := m
		for _, f := range [...]int{2, 3, 5} {
			for r%f == 0 {
				r /= f
			}
		}
		if r == 1 {
			return m
		}
	}
}

// Usable reports whether x, the draws of one quantity as
// x[chain][iteration], meets the package's conditions: at least one chain,
// equal lengths, at least one draw, all finite, not constant (range at least
// 2.2e-16). Where it is false, every function on [][]float64 returns NaN;
// where it is true they may still return NaN for chains too short for the
// estimator (ESSBulk needs 3 draws per split chain).
func Usable(x [][]float64) bool {
	if len(x) == 0 || len(x[0]) == 0 {
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range x {
		if len(c) != len(x[0]) {
			return false
		}
		for _, v := range c {
			if v-v != 0 { // NaN or ±Inf
				return false
			}
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
	}
	return hi-lo >= constTol
}

// split cuts every chain into halves (posterior's .split_chains); for odd
// lengths the middle draw is dropped. Chains of one draw are not split.
func split(x [][]float64) [][]float64 {
	n := len(x[0])
	if n < 2 {
		return x
	}
	out := make([][]float64, 0, 2*len(x))
	for _, c := range x {
		out = append(out, c[:n/2])
	}
	for _, c := range x {
		out = append(out, c[(n+1)/2:])
	}
	return out
}

// pooled returns a fresh slice of all draws of all chains.
func pooled(x [][]float64) []float64 {
	size := 0
	for _, c := range x {
		size += len(c)
	}
	all := make([]float64, 0, size)
	for _, c := range x {
		all = append(all, c...)
	}
	return all
}

// zScale rank-normalizes the pooled draws: average ranks r of ties, then
// Φ⁻¹((r − 3/8)/(S + 1/4)) (Blom's offset), keeping the chain layout.
//
// The pooled draws are sorted once (a plain float sort) and each draw's
// tie run found by binary search; the normal scores depend on S and the
// (half-integer) rank alone, so they come from a table shared by every
// call with the same S (blomTable). The draws are finite (Usable).
func zScale(x [][]float64) [][]float64 {
	sorted := pooled(x)
	slices.Sort(sorted)
	return zScaleSorted(x, sorted)
}

// zScaleSorted is zScale given sorted, the pooled draws of x in ascending
// order.
func zScaleSorted(x [][]float64, sorted []float64) [][]float64 {
	n := len(x[0])
	table := blomTable(len(sorted))
	flat := make([]float64, len(sorted))
	for j, c := range x {
		for t, v := range c {
			lo := lowerBound(sorted, v)
			hi := lo + 1
			if hi < len(sorted) && sorted[hi] == v {
				hi = upperBound(sorted, v)
			}
			flat[j*n+t] = table[lo+1+hi] // rank (lo+1+hi)/2, the average of lo+1 … hi
		}
	}
	out := make([][]float64, len(x))
	for j := range x {
		out[j] = flat[j*n : (j+1)*n : (j+1)*n]
	}
	return out
}

// foldSorted returns |v − med| for every v of ascending s, in ascending
// order: the draws below med, taken downwards, merged with those from
// med upwards, in O(len(s)). The values are fold's, bit for bit.
func foldSorted(s []float64, med float64) []float64 {
	out := make([]float64, len(s))
	k := lowerBound(s, med)
	i, j := k-1, k
	for o := range out {
		switch {
		case i < 0:
			out[o] = math.Abs(s[j] - med)
			j++
		case j >= len(s):
			out[o] = math.Abs(s[i] - med)
			i--
		default:
			a, b := math.Abs(s[i]-med), math.Abs(s[j]-med)
			if a <= b {
				out[o] = a
				i--
			} else {
				out[o] = b
				j++
			}
		}
	}
	return out
}

// lowerBound returns the first index of ascending s whose value is not
// below v.
func lowerBound(s []float64, v float64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// upperBound returns the first index of ascending s whose value is above v.
func upperBound(s []float64, v float64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// blomTables caches blomTable's tables by S (a run's summaries share one
// S, its parameters' summaries run in parallel).
var blomTables struct {
	sync.Mutex
	m map[int][]float64
}

// blomTable returns the normal scores of zScale for S pooled draws,
// indexed by twice the rank: t[r2] = −√2·erfc⁻¹(2(r2/2 − 3/8)/(S + 1/4)),
// r2 = 2 … 2S.
func blomTable(size int) []float64 {
	blomTables.Lock()
	defer blomTables.Unlock()
	if t, ok := blomTables.m[size]; ok {
		return t
	}
	if blomTables.m == nil || len(blomTables.m) >= 8 {
		blomTables.m = map[int][]float64{}
	}
	t := make([]float64, 2*size+1)
	s := float64(size)
	for r2 := 2; r2 <= 2*size; r2++ {
		rank := float64(r2) / 2
		t[r2] = -math.Sqrt2 * math.Erfcinv(2*(rank-0.375)/(s+0.25))
	}
	blomTables.m[size] = t
	return t
}

// ess is posterior's .ess: Geyer's initial positive and monotone sequence
// estimators on the averaged within-chain autocovariance, combined with the
// between-chain variance (Vehtari et al. 2021, eq. 10–11), capped at
// S·log10(S).
//
// Geyer's sequence stops at the first lag pair whose sum is not positive:
// after a few lags for a chain that mixes well. So the autocovariance is
// first computed directly (O(lags·n)), eight lags at a time, up to the
// largest of 8, 32 and 128 lags below n, and by FFT at every lag
// (O(n log n), posterior's way) only when the sequence runs past them. The
// two agree to rounding; which one gives the figure depends on n and on
// how far the sequence runs, not on the steps the direct sums take (each
// lag's sum and geyerESS's figure are the same at any number of lags that
// suffices: TestDirectLagsGrouping, TestESSRHatMatchOld).
func ess(x [][]float64) float64 { return new(scratch).ess(x) }

// ess is the package function ess with sc's buffers (a new scratch: fresh ones).
func (sc *scratch) ess(x [][]float64) float64 {
	if len(x[0]) < 3 || !sc.load(x) {
		return math.NaN()
	}
	return sc.essLoaded(x)
}

// essRHat returns ess(x) and rhat(x), the chains' moments computed once.
func (sc *scratch) essRHat(x [][]float64) (float64, float64) {
	m, n := len(x), len(x[0])
	e, r := math.NaN(), math.NaN()
	if n < 2 || !sc.load(x) {
		return e, r
	}
	if n >= 3 {
		e = sc.essLoaded(x)
	}
	if m >= 2 {
		r = sc.rhatLoaded(x)
	}
	return e, r
}

// essLoaded is ess on the chains x that sc.load(x) has just loaded.
func (sc *scratch) essLoaded(x [][]float64) float64 {
	m, n := len(x), len(x[0])
	top := 0 // the most lags summed directly
	for l := 8; l < n && l <= maxDirectLags; l *= 4 {
		top = l
	}
	if essMutant == 1 && n > 9 {
		top = min(n-1, maxDirectLags) // direct past the grid: an FFT figure changes
	}
	have := 0 // lags already summed directly, kept when more are needed
	for lags := min(9, top); lags > have; lags = min(lags+8, top) {
		acov := sc.directAutocovariance(x, have, lags)
		have = lags
		if v, ok := sc.geyerESS(x, acov); ok {
			return v
		}
	}
	acov := sc.zeros(&sc.fft, n)
	for _, c := range x {
		for k, a := range Autocovariance(c) {
			acov[k] += a / float64(m)
		}
	}
	v, _ := sc.geyerESS(x, acov)
	return v
}

// maxDirectLags is the most lags computed directly before ess turns to the
// FFT, which costs about as much as 400 direct lags.
var maxDirectLags = 128

// essMutant, a mutant of TestESSRHatMatchOld, takes the direct sums
// past the lags where ess turns to the FFT (1) or sums a chain's draws in
// another order (2).
var essMutant int

// load computes, for chains x of equal lengths (at least one draw), each
// chain's meanOf and sampleVar into sc.cmean and sc.cvar and its centred
// draws x − meanOf into sc.cen (chain j at j·n), and reports Usable(x).
// Each figure is the same sum in the same order as those functions; the
// chains are taken four at a time so that their sums, each a chain of
// dependent additions, overlap (TestLoadIsMeanVar).
func (sc *scratch) load(x [][]float64) bool {
	m, n := len(x), len(x[0])
	if n == 0 {
		return false
	}
	for _, c := range x {
		if len(c) != n {
			return false
		}
	}
	sc.cmean, sc.cvar = grow(sc.cmean, m), grow(sc.cvar, m)
	sc.cen = grow(sc.cen, m*n)
	lo, hi := math.Inf(1), math.Inf(-1)
	finite := true
	j := 0
	for ; j+4 <= m; j += 4 {
		a, b, c, d := x[j][:n], x[j+1][:n], x[j+2][:n], x[j+3][:n]
		var sa, sb, sc4, sd float64
		for t := range n {
			sa += a[t]
			sb += b[t]
			sc4 += c[t]
			sd += d[t]
		}
		if essMutant == 2 {
			sa = 0 // the first chain's sum in reverse order
			for t := n - 1; t >= 0; t-- {
				sa += a[t]
			}
		}
		ma, mb, mc, md := sa/float64(n), sb/float64(n), sc4/float64(n), sd/float64(n)
		ca, cb := sc.cen[j*n:(j+1)*n], sc.cen[(j+1)*n:(j+2)*n]
		cc, cd := sc.cen[(j+2)*n:(j+3)*n], sc.cen[(j+3)*n:(j+4)*n]
		var qa, qb, qc, qd float64
		for t := range n {
			va, vb, vc, vd := a[t], b[t], c[t], d[t]
			da, db, dc, dd := va-ma, vb-mb, vc-mc, vd-md
			ca[t], cb[t], cc[t], cd[t] = da, db, dc, dd
			qa += da * da
			qb += db * db
			qc += dc * dc
			qd += dd * dd
			lo, hi = min4(lo, va, vb, vc, vd), max4(hi, va, vb, vc, vd)
		}
		sc.cmean[j], sc.cmean[j+1], sc.cmean[j+2], sc.cmean[j+3] = ma, mb, mc, md
		sc.cvar[j], sc.cvar[j+1] = qa/float64(n-1), qb/float64(n-1)
		sc.cvar[j+2], sc.cvar[j+3] = qc/float64(n-1), qd/float64(n-1)
		finite = finite && sa-sa == 0 && sb-sb == 0 && sc4-sc4 == 0 && sd-sd == 0
	}
	for ; j < m; j++ {
		a := x[j][:n]
		sa := 0.0
		for _, v := range a {
			sa += v
		}
		ma := sa / float64(n)
		ca := sc.cen[j*n : (j+1)*n]
		qa := 0.0
		for t, v := range a {
			da := v - ma
			ca[t] = da
			qa += da * da
			lo, hi = min4(lo, v, v, v, v), max4(hi, v, v, v, v)
		}
		sc.cmean[j], sc.cvar[j] = ma, qa/float64(n-1)
		finite = finite && sa-sa == 0
	}
	if !finite {
		// A sum that is not finite: a NaN or ±Inf among the draws, or
		// finite draws whose sum overflows. Usable tells which.
		return Usable(x)
	}
	// Every draw finite (a NaN or ±Inf would make its chain's sum one).
	return hi-lo >= constTol
}

// min4 and max4 are the smallest and largest of five finite values
// (comparisons, as Usable makes them).
func min4(lo, a, b, c, d float64) float64 {
	if a < lo {
		lo = a
	}
	if b < lo {
		lo = b
	}
	if c < lo {
		lo = c
	}
	if d < lo {
		lo = d
	}
	return lo
}

func max4(hi, a, b, c, d float64) float64 {
	if a > hi {
		hi = a
	}
	if b > hi {
		hi = b
	}
	if c > hi {
		hi = c
	}
	if d > hi {
		hi = d
	}
	return hi
}

// geyerESS is ess given the chain-averaged autocovariance acov at lags
// 0 … len(acov)−1. It reports false when Geyer's sequence needs lags past
// those (never when len(acov) is the chain length). sc holds x's
// moments (load).
func (sc *scratch) geyerESS(x [][]float64, acov []float64) (float64, bool) {
	m, n := len(x), len(x[0])
	lags := len(acov)
	means := sc.cmean[:m]
	w := acov[0] * float64(n) / float64(n-1)
	varPlus := acov[0]
	if m > 1 {
		varPlus += sampleVar(means)
	}
	rhoHat := func(k int) float64 { return 1 - (w-acov[k])/varPlus }

	// Initial positive sequence over pairs (Geyer 1992).
	rho := sc.zeros(&sc.rho, lags)
	rho[0] = 1
	even, odd := 1.0, rhoHat(1)
	rho[1] = odd
	t := 0
	for t < n-5 && !math.IsNaN(even+odd) && even+odd > 0 {
		t += 2
		if t+1 >= lags {
			return 0, false
		}
		even, odd = rhoHat(t), rhoHat(t+1)
		if even+odd >= 0 {
			rho[t], rho[t+1] = even, odd
		}
	}
	maxT := t
	if even > 0 {
		rho[maxT] = even
	}
	// Initial monotone sequence.
	for t := 2; t <= maxT-2; t += 2 {
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			avg := (rho[t-2] + rho[t-1]) / 2
			rho[t], rho[t+1] = avg, avg
		}
	}
	// τ = −1 + 2 Σ_{k<maxT} ρ_k + ρ_maxT. posterior sums rho[1:max_t] in R,
	// which for max_t = 0 is rho[1:0] = (rho[1], rho[0]) → just ρ_0 = 1, so
	// τ = 2 there: reproduce it.
	sum := 0.0
	for k := 0; k < max(maxT, 1); k++ {
		sum += rho[k]
	}
	tau := -1 + 2*sum + rho[maxT]
	size := float64(m * n)
	tau = math.Max(tau, 1/math.Log10(size))
	return size / tau, true
}

// directAutocovariance returns the chain-averaged biased autocovariance at
// lags 0 … lags−1, summed directly: lag 0 is each chain's biased variance
// exactly, as Autocovariance scales it. Lags below from are taken as
// summed already, by the previous call on the same x (sc.acov[:from]), and
// only the others are summed: each lag's figure is the same either way.
// sc holds x's moments and centred draws (load).
func (sc *scratch) directAutocovariance(x [][]float64, from, lags int) []float64 {
	m, n := len(x), len(x[0])
	if cap(sc.acov) < lags {
		sc.acov = append(make([]float64, 0, max(lags, 32)), sc.acov[:from]...)
	}
	acov := sc.acov[:lags]
	clear(acov[from:])
	for j := range x {
		v := sc.cvar[j]
		if v == 0 {
			continue // Autocovariance's zeros
		}
		centred := sc.cen[j*n : (j+1)*n : (j+1)*n]
		if from == 0 {
			acov[0] += v * float64(n-1) / float64(n) / float64(m)
		}
		// Eight lags at a time: eight independent sums share each load
		// and keep the adders busy. Each lag's sum still adds its terms
		// in the order of t, as a lag on its own would, so the figures do
		// not depend on the grouping (TestDirectLagsGrouping).
		for k := max(from, 1); k < lags; k += 8 {
			var s0, s1, s2, s3, s4, s5, s6, s7 float64
			t := 0
			for ; t+k+7 < n; t++ {
				a := centred[t]
				c := centred[t+k : t+k+8 : t+k+8]
				s0 += a * c[0]
				s1 += a * c[1]
				s2 += a * c[2]
				s3 += a * c[3]
				s4 += a * c[4]
				s5 += a * c[5]
				s6 += a * c[6]
				s7 += a * c[7]
			}
			// The last terms, which the shorter lags still have.
			sums := [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
			for i := range min(8, lags-k) {
				si := sums[i]
				for u := t; u+k+i < n; u++ {
					si += centred[u] * centred[u+k+i]
				}
				acov[k+i] += si / float64(n) / float64(m)
			}
		}
	}
	return acov
}

// rhat is posterior's .rhat on already split chains:
// √((B/W + n − 1)/n), B = n·var(chain means), W = mean chain variance.
func rhat(x [][]float64) float64 { return new(scratch).rhat(x) }

// rhat is the package function rhat with sc's buffers (a new scratch: fresh ones).
func (sc *scratch) rhat(x [][]float64) float64 {
	if len(x) < 2 || len(x[0]) < 2 || !sc.load(x) {
		return math.NaN()
	}
	return sc.rhatLoaded(x)
}

// rhatLoaded is rhat on the chains x that sc.load(x) has just loaded.
func (sc *scratch) rhatLoaded(x [][]float64) float64 {
	m, n := len(x), len(x[0])
	w := 0.0
	for _, v := range sc.cvar[:m] {
		w += v / float64(m)
	}
	b := float64(n) * sampleVar(sc.cmean[:m])
	return math.Sqrt((b/w + float64(n) - 1) / float64(n))
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// sampleVar is the variance with denominator n − 1 (R's var).
func sampleVar(x []float64) float64 {
	mu := meanOf(x)
	s := 0.0
	for _, v := range x {
		s += (v - mu) * (v - mu)
	}
	return s / float64(len(x)-1)
}

func sampleSD(x []float64) float64 { return math.Sqrt(sampleVar(x)) }

// ESSCoda is the effective sample size of one sequence as R's
// coda::effectiveSize computes it: n·var(x)/S(0), S(0) the spectral density
// at frequency zero of an AR(p) model fitted by Yule–Walker, the order chosen
// by AIC up to min(n−1, ⌊10·log10 n⌋). A sequence that is a straight line
// (residual sd of a linear fit ≤ 1.5e-8) gives 0. It is a second opinion
// beside ESSBasic: no splitting, no between-chain term and no cap, so it
// cannot see chains that disagree. coda's value for several chains is the
// sum of their ESSCoda.
func ESSCoda(x []float64) float64 {
	n := len(x)
	if n < 2 {
		return math.NaN()
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
	}
	// coda: lm(x ~ 1:n); all.equal(sd(residuals), 0) → spectrum 0.
	tbar := float64(n+1) / 2
	xbar := meanOf(x)
	var sxy, sxx float64
	for i, v := range x {
		dt := float64(i+1) - tbar
		sxy += dt * (v - xbar)
		sxx += dt * dt
	}
	slope := sxy / sxx
	res := make([]float64, n)
	for i, v := range x {
		res[i] = v - xbar - slope*(float64(i+1)-tbar)
	}
	if sampleSD(res) <= 1.4901161193847656e-08 {
		return 0
	}
	// stats::ar.yw with AIC order selection.
	maxOrder := min(n-1, int(math.Floor(10*math.Log10(float64(n)))))
	r := Autocovariance(x)[:maxOrder+1]
	if r[0] == 0 {
		return 0
	}
	// Levinson–Durbin: phi[l] holds the order-l coefficients, vars[l] the
	// order-l innovation variance.
	vars := make([]float64, maxOrder+1)
	vars[0] = r[0]
	phi := make([][]float64, maxOrder+1)
	for l := 1; l <= maxOrder; l++ {
		acc := r[l]
		for j := 1; j < l; j++ {
			acc -= phi[l-1][j-1] * r[l-j]
		}
		k := acc / vars[l-1]
		phi[l] = make([]float64, l)
		for j := 1; j < l; j++ {
			phi[l][j-1] = phi[l-1][j-1] - k*phi[l-1][l-j-1]
		}
		phi[l][l-1] = k
		vars[l] = vars[l-1] * (1 - k*k)
	}
	order, best := 0, math.Inf(1)
	for l, v := range vars {
		if aic := float64(n)*math.Log(v) + 2*float64(l); aic < best {
			order, best = l, aic
		}
	}
	varPred := vars[order] * float64(n) / float64(n-order-1)
	sumPhi := 0.0
	for _, c := range phi[order] {
		sumPhi += c
	}
	spec := varPred / ((1 - sumPhi) * (1 - sumPhi))
	return float64(n) * sampleVar(x) / spec
}

// TotalVariation is the total variation distance ½ Σ |p_i − q_i| between two
// discrete distributions given as non-negative weights (counts or
// probabilities; each is normalized by its sum). It is NaN when the lengths
// differ or a sum is not positive and finite.
func TotalVariation(p, q []float64) float64 {
	sp, sq, ok := sums(p, q)
	if !ok {
		return math.NaN()
	}
	tv := 0.0
	for i := range p {
		tv += math.Abs(p[i]/sp - q[i]/sq)
	}
	return tv / 2
}

// SymmetricKL is ½[KL(p‖q) + KL(q‖p)] between two histograms given as
// non-negative weights (each normalized by its sum), with every probability
// clamped below at eps (e.g. 1e-13) so empty bins stay finite. This is the
// accuracy measure of the TunaMH paper's Gaussian-mixture experiment.
func SymmetricKL(p, q []float64, eps float64) float64 {
	sp, sq, ok := sums(p, q)
	if !ok || !(eps > 0) {
		return math.NaN()
	}
	kl := 0.0
	for i := range p {
		a, b := math.Max(p[i]/sp, eps), math.Max(q[i]/sq, eps)
		kl += (a - b) * (math.Log(a) - math.Log(b))
	}
	return kl / 2
}

func sums(p, q []float64) (sp, sq float64, ok bool) {
	if len(p) != len(q) || len(p) == 0 {
		return 0, 0, false
	}
	for i := range p {
		if !(p[i] >= 0) || !(q[i] >= 0) {
			return 0, 0, false
		}
		sp += p[i]
		sq += q[i]
	}
	good := func(s float64) bool { return s > 0 && !math.IsInf(s, 0) }
	return sp, sq, good(sp) && good(sq)
}

// MSE is the mean squared error (1/d) Σ (est_j − ref_j)² of an estimate
// against reference values, NaN when the lengths differ or are zero.
func MSE(est, ref []float64) float64 {
	if len(est) != len(ref) || len(est) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i := range est {
		d := est[i] - ref[i]
		s += d * d
	}
	return s / float64(len(est))
}

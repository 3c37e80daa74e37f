// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"iter"
	"math"
	"unsafe"

	"github.com/exactmh/exactmh/internal/prefetch"
	"gonum.org/v1/gonum/floats"
)

// Energy is a target factorised over N data: π(θ) ∝ prior(θ)·exp(−Σ_i U_i(θ)),
// where U_i(θ) = −log p(x_i | θ) is the energy of datum i.
//
// Energy is batch-oriented: a kernel asks for the energies of a slice of data
// at one θ and receives them in a slice it owns, so an implementation can keep
// its data in contiguous row-major storage and loop over it without calls per
// datum. Implementations must be safe for concurrent use by several chains
// (read-only after construction) and must not retain dst, theta or idx.
type Energy interface {
	// Len returns N, the number of data.
	Len() int
	// Dim returns d, the dimension of θ.
	Dim() int
	// Energies sets dst[k] = U_{idx[k]}(θ) for every k. len(dst) == len(idx).
	Energies(dst, theta []float64, idx []int)
}

// EnergyDiffer is an optional fast path of an Energy: it computes energy
// differences reading each datum once (a GLM reads x_i once for both dot
// products). Kernels use it when the Energy implements it.
type EnergyDiffer interface {
	// EnergyDiffs sets dst[k] = U_i(θ) − U_i(θ') for i = idx[k]: the
	// log-likelihood ratio of datum i for the move θ → θ'.
	EnergyDiffs(dst, theta, thetaNew []float64, idx []int)
}

// Gradienter is an optional capability of an Energy, needed by gradient-based
// kernels.
type Gradienter interface {
	// AddGradient adds Σ_k w[k]·∇U_{idx[k]}(θ) to grad. len(w) == len(idx).
	AddGradient(grad, theta []float64, idx []int, w []float64)
}

// EnergyGradienter is an optional fast path of a Gradienter: energies and
// gradient in one read of the data, which the full-batch gradient kernels
// (MALA, HMC) need at every proposal.
type EnergyGradienter interface {
	// EnergiesAndGradient sets dst[k] = U_{idx[k]}(θ) and adds
	// Σ_k w[k]·∇U_{idx[k]}(θ) to grad.
	EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64)
}

// dataRows checks a row-major data matrix of n rows and d columns, in
// float64 or float32 storage.
func dataRows[T float32 | float64](name string, x []T, n, d int) error {
	if d <= 0 {
		return fmt.Errorf("exactmh: %s: dimension %d, want > 0", name, d)
	}
	if n <= 0 {
		return fmt.Errorf("exactmh: %s: no data (N = %d)", name, n)
	}
	if d > MaxDim {
		return fmt.Errorf("exactmh: %s: dimension %d, want ≤ MaxDim = %d", name, d, MaxDim)
	}
	if n > math.MaxInt/d {
		return fmt.Errorf("exactmh: %s: N·d = %d·%d overflows int (len(X) = %d)", name, n, d, len(x))
	}
	if len(x) != n*d {
		return fmt.Errorf("exactmh: %s: len(X) = %d, want N·d = %d·%d = %d", name, len(x), n, d, n*d)
	}
	for k, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("exactmh: %s: X[%d] (row %d, column %d) = %v is not finite", name, k, k/d, k%d, v)
		}
	}
	return nil
}

// MaxDim is the largest dimension of θ the package accepts (2²⁶, 512 MiB
// per vector of θ): constructors and Posterior.Validate refuse a larger
// one with an error, rather than let an allocation of that size kill the
// process.
const MaxDim = 1 << 26

// checkDim returns an error unless 0 < d ≤ MaxDim.
func checkDim(who string, d int) error {
	if d <= 0 || d > MaxDim {
		return fmt.Errorf("exactmh: %s: dimension %d, want in [1, MaxDim = %d]", who, d, MaxDim)
	}
	return nil
}

func finiteVec(name string, v []float64) error {
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("exactmh: %s[%d] = %v is not finite", name, k, x)
		}
	}
	return nil
}

// shortVec is the length below which dot and axpy loop in Go: there the
// call into gonum's assembly costs more than it saves (BenchmarkDatum).
const shortVec = 16

// dot returns aᵀb (len(a) = len(b)). The data loops of every energy spend
// their time here and in axpy; for d ≥ shortVec gonum's assembly kernel
// is 2–4× faster than a scalar loop, whose one accumulator waits on the
// latency of each addition (BenchmarkDatum, d = 50 and 100).
func dot(a, b []float64) float64 {
	if len(a) >= shortVec {
		return floats.Dot(a, b)
	}
	b = b[:len(a)]
	var s float64
	for j, v := range a {
		s += v * b[j]
	}
	return s
}

// dot2 returns aᵀb and aᵀc, the energy differences' two inner products,
// reading a from memory once.
func dot2(a, b, c []float64) (ab, ac float64) {
	if len(a) >= shortVec {
		return floats.Dot(a, b), floats.Dot(a, c) // a is in cache the second time
	}
	b, c = b[:len(a)], c[:len(a)]
	for j, v := range a {
		ab += v * b[j]
		ac += v * c[j]
	}
	return ab, ac
}

// axpy adds α·x to y (len(x) = len(y)), through gonum's assembly kernel
// for d ≥ shortVec.
func axpy(y []float64, alpha float64, x []float64) {
	if len(x) >= shortVec {
		floats.AddScaled(y, alpha, x)
		return
	}
	y = y[:len(x)]
	for j, v := range x {
		y[j] += alpha * v
	}
}

// softplus returns log(1 + e^z) without overflow or cancellation.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// logisticGroup is how many data logisticLosses and logisticLossDiffs
// transform at a time.
const logisticGroup = 64

// logisticLosses sets dst[k] = softplus(z) − y_{idx[k]}·z for the linear
// predictors z = dst[k]: the logistic energies, bit for bit softplus's. The
// exponentials of a group of data are computed back to back, then their
// log1p: datum by datum each log1p waits for its exp, and the loss takes
// about 1.8× as long.
func logisticLosses(dst, y []float64, idx []int) {
	var e [logisticGroup]float64
	for lo := 0; lo < len(idx); lo += logisticGroup {
		z := dst[lo:min(lo+logisticGroup, len(idx))]
		for k, zk := range z {
			e[k] = math.Exp(-math.Abs(zk))
		}
		for k, zk := range z {
			// max(z, 0) + log1p(e^−|z|) is softplus's z + log1p(e^−z)
			// for z > 0 and 0 + log1p(e^z) otherwise, without the branch.
			z[k] = max(zk, 0) + math.Log1p(e[k]) - y[idx[lo+k]]*zk
		}
	}
}

// logisticLossDiffs sets dst[k] = U_i(θ) − U_i(θ') for i = idx[k] from the
// linear predictors z = dst[k] at θ and zn[k] at θ', as logisticLosses
// does: bit for bit softplus(z) − softplus(zn) − y_i(z − zn).
func logisticLossDiffs(dst, zn, y []float64, idx []int) {
	var e, en [logisticGroup]float64
	for lo := 0; lo < len(idx); lo += logisticGroup {
		z := dst[lo:min(lo+logisticGroup, len(idx))]
		for k, zk := range z {
			e[k] = math.Exp(-math.Abs(zk))
			en[k] = math.Exp(-math.Abs(zn[lo+k]))
		}
		for k, zk := range z {
			z[k] = logisticEnergyDiff(zk, zn[lo+k], e[k], en[k], y[idx[lo+k]])
		}
	}
}

// logisticEnergyDiff returns U_i(θ) − U_i(θ') of a logistic datum from
// z = x_iᵀθ, zn = x_iᵀθ', e = e^−|z|, en = e^−|zn| and y = y_i: the one
// expression of logisticLossDiffs, which TFMH's step (tfmhChain.energyDiff)
// also calls on one datum, so that the two give the same bits.
func logisticEnergyDiff(z, zn, e, en, y float64) float64 {
	return max(z, 0) + math.Log1p(e) - (max(zn, 0) + math.Log1p(en)) - y*(z-zn)
}

// rowStore is the rows (at most one of rows, rows32 non-nil) and
// responses of a GLM the package keeps in memory, for the steps that warm
// the rows of the data they draw (warm) and only read them.
type rowStore struct {
	rows   []float64
	rows32 []float32
	resp   []float64
}

// memRows returns the rowStore of the package's GLMs that keep their rows
// in memory, matched on the concrete type, and an empty one for any other
// energy: a user's type embedding one is another concrete type and is not
// matched.
func memRows(e Energy) rowStore {
	switch g := e.(type) {
	case *LogisticRegression:
		return rowStore{rows: g.x, resp: g.y}
	case *LogisticRegression32:
		return rowStore{rows32: g.x, resp: g.base.y}
	case *GLMEnergy:
		return rowStore{rows: g.x, resp: g.y}
	case *GLMEnergy32:
		return rowStore{rows32: g.x, resp: g.base.y}
	case *StudentTRegression:
		return rowStore{rows: g.x, resp: g.y}
	case *cvEnergy: // the control-variate rewrite reads its GLM's rows
		return memRows(g.g)
	}
	return rowStore{}
}

// warm is warmRows over the rows idx (d columns) of the store, 0 for an
// empty one.
func (r rowStore) warm(d int, idx []int) float64 {
	switch {
	case r.rows != nil:
		return warmRows(r.rows, d, r.resp, idx)
	case r.rows32 != nil:
		return warmRows(r.rows32, d, r.resp, idx)
	}
	return 0
}

// logisticLossSlopes is logisticLosses that also sets slope[k] =
// w[k]·(σ(z) − y_i), the weight of x_i in the gradient: bit for bit
// softplusSigmoid's. One group of at most logisticGroup data.
func logisticLossSlopes(dst, slope, y []float64, idx []int, w []float64) {
	var e [logisticGroup]float64
	for k, zk := range dst {
		e[k] = math.Exp(-math.Abs(zk))
	}
	for k, zk := range dst {
		num := 1.0 // σ(z) = 1/(1 + e^−|z|) for z ≥ 0, e^−|z|/(1 + e^−|z|) below
		if zk < 0 {
			num = e[k]
		}
		yi := y[idx[k]]
		dst[k] = max(zk, 0) + math.Log1p(e[k]) - yi*zk
		slope[k] = w[k] * (num/(1+e[k]) - yi)
	}
}

// softplusSigmoid returns softplus(z) and σ(z) from one exponential: the
// logistic energy and its derivative at the same z.
func softplusSigmoid(z float64) (sp, s float64) {
	e := math.Exp(-math.Abs(z)) // ∈ (0, 1]: never overflows
	if z >= 0 {
		return z + math.Log1p(e), 1 / (1 + e)
	}
	return math.Log1p(e), e / (1 + e)
}

// sigmoid returns 1/(1 + e^−z) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// logAddExp returns log(e^a + e^b).
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// warmBytes is how many bytes of rows the gather loops warm at once: well
// within L2, so that rows warmed at the start of a block are still there
// when the block's energies are computed.
const warmBytes = 32 << 10

// warmBlock returns the number of rows of d elements of the given size in
// bytes that the gather loops warm at once (at least one), for a gather of
// n rows: n itself when n ≤ 1, which is not warmed, without the division.
func warmBlock(n, d, size int) int {
	if n <= 1 {
		return 1
	}
	return max(1, warmBytes/(d*size))
}

// warmBlocks is the block loop of the gathers of the GLMs that keep their
// rows in x (d columns, row-major; y the responses): it walks idx in blocks
// of warmBlock rows and yields the bounds lo, hi of each block idx[lo:hi],
// having first warmed the block's rows with warmRows, so that the energies
// the loop body then computes over the block, each a chain of dependent
// arithmetic on one row, meet rows already in cache instead of one miss at
// a time. A block is warmBytes of rows, small enough to stay in L2 until
// the body reaches its last row.
//
// The warm sum is stored in dst[lo], a use that keeps warmRows' loads
// from being dropped as dead however warmRows is compiled; the body must
// set all of dst[lo:hi], which overwrites it. A gather of one row
// (len(idx) ≤ 1) is not warmed, nor a block of consecutive rows (a
// full-batch pass), which the hardware prefetcher streams in anyway: there
// warming only read every line twice.
//
// Every call site inlines warmBlocks, its closure and the loop body, so
// ranging over it allocates nothing. It yields bounds, not the slice
// idx[lo:hi]: escape analysis (Go 1.26) takes a slice passed to yield as
// escaping, which would make idx escape from every gather.
func warmBlocks[T float32 | float64](dst []float64, x []T, d int, y []float64, idx []int) iter.Seq2[int, int] {
	return func(yield func(lo, hi int) bool) {
		blk := warmBlock(len(idx), d, int(unsafe.Sizeof(x[0])))
		for lo := 0; lo < len(idx); lo += blk {
			hi := min(lo+blk, len(idx))
			if len(idx) > 1 && !consecutive(idx[lo:hi]) {
				dst[lo] = warmRows(x, d, y, idx[lo:hi])
			}
			if !yield(lo, hi) {
				return
			}
		}
	}
}

// consecutive reports whether idx is i, i+1, i+2, …: a stretch of rows in
// memory order. A random gather is told apart at its second index.
func consecutive(idx []int) bool {
	for k := 1; k < len(idx); k++ {
		if idx[k] != idx[0]+k {
			return false
		}
	}
	return true
}

// warmRows starts loading the rows idx of the row-major matrix x (d
// columns) and their responses y_i (internal/prefetch), so that the CPU
// has the cache and TLB misses of many random rows outstanding at once
// instead of meeting them one row at a time inside the dependent
// arithmetic of the energies. It returns what prefetch.Rows returns (0,
// or where it has to read the lines, their sum), which the caller stores
// where it will be overwritten. No value read plays a part in any result.
// A nil y (a kernel that keeps the responses with its own per-datum terms)
// is not warmed.
func warmRows[T float32 | float64](x []T, d int, y []float64, idx []int) float64 {
	s := prefetch.Rows(x, d, d, idx)
	if y != nil {
		s += prefetch.Rows(y, 1, 1, idx)
	}
	return float64(s)
}

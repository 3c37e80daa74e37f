package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Mechanisms shared by the minibatch kernels: proposal set-up, the chunk
// size in which sampled data are evaluated, and the distinct-data counter.

// batchChunk is the number of sampled data evaluated per call to the
// energy: large enough to amortise the call, small enough to live in fixed
// scratch, so that a batch of any size needs no allocation.
const batchChunk = 256

// proposalSetup applies the defaults shared by every random-walk kernel:
// a nil proposal is the isotropic RandomWalk, a zero scale 0.1.
func proposalSetup(kernel string, prop Proposal, scale float64, d int) (Proposal, float64, error) {
	if prop == nil {
		prop = RandomWalk{}
	}
	if rw, ok := prop.(RandomWalk); ok {
		if err := rw.checkDim(d); err != nil {
			return nil, 0, err
		}
	}
	if scale == 0 {
		scale = 0.1
	}
	if err := checkScale(kernel, scale); err != nil {
		return nil, 0, err
	}
	return prop, scale, nil
}

func checkStart(t *Target, theta0 []float64) error {
	if len(theta0) != t.Dim() {
		return fmt.Errorf("len(θ0) = %d, want %d", len(theta0), t.Dim())
	}
	return nil
}

// distinct counts the distinct data a step touches with one stamp per
// datum (4 bytes each, at most half the size of the data themselves):
// O(1) per draw, no clearing between steps.
type distinct struct {
	stamp []uint32
	step  uint32
	count int
}

func newDistinct(n int) distinct { return distinct{stamp: make([]uint32, n)} }

// next starts a new step.
func (d *distinct) next() {
	d.step++
	if d.step == 0 { // wrapped around: old stamps could collide
		clear(d.stamp)
		d.step = 1
	}
	d.count = 0
}

// add records datum i.
func (d *distinct) add(i int) {
	if d.stamp[i] != d.step {
		d.stamp[i] = d.step
		d.count++
	}
}

// posteriorOf rebuilds the Posterior a Target views, to construct its bounds.
func posteriorOf(t *Target) *Posterior {
	return &Posterior{Energy: t.energy, Prior: t.prior, Beta: t.beta}
}

// shuffleRange finishes positions lo … hi−1 of a partial Fisher–Yates
// shuffle of perm: afterwards perm[lo:hi] holds hi − lo data drawn
// uniformly without replacement from those not in perm[:lo]. With lo = 0
// it draws a fresh subset whatever the permutation's previous order, in
// O(hi − lo) and without allocation — the minibatches of AustereMH, MHBT
// and TunaMH-SGLD.
func shuffleRange(rng *rand.Rand, perm []int, lo, hi int) {
	n := len(perm)
	for k := lo; k < hi; k++ {
		r := k + rng.IntN(n-k)
		perm[k], perm[r] = perm[r], perm[k]
	}
}

// diffBound returns the kernel's DiffBound: b checked against the data, or
// the posterior's own when b is nil.
func diffBound(who string, t *Target, b *DiffBound) (*DiffBound, error) {
	if b == nil {
		b, err := posteriorOf(t).DiffBound()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", who, err)
		}
		return b, nil
	}
	if err := b.check(t.N()); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return b, nil
}

// fullMHStep is the full-batch MH step the truncated kernels (TFMH, SMH)
// fall back to: the exact log ratio, logPrior (the prior and proposal part)
// plus all N energy differences, and the decision. On acceptance it copies
// θ′ into θ.
func fullMHStep(rng *rand.Rand, t *Target, theta, next []float64, logPrior float64, idx *[batchChunk]int, diff *[batchChunk]float64) (Info, error) {
	sum, err := fullEnergyDiff(t, theta, next, idx, diff)
	if err != nil {
		return Info{}, err
	}
	n := t.N()
	info := Info{Batch: n, Distinct: n, Fallback: true, LogDensity: math.NaN()}
	logR := logPrior + sum
	info.AcceptProb = math.Exp(min(logR, 0))
	if logR >= 0 || rng.Float64() < info.AcceptProb {
		copy(theta, next)
		info.Accepted = true
	}
	return info, nil
}

// fullEnergyDiff returns β Σ_i (U_i(θ) − U_i(θ′)) over all N data, in chunks
// through the caller's scratch: the exact log-likelihood ratio of a
// full-batch MH step, which the truncated kernels fall back to.
func fullEnergyDiff(t *Target, theta, next []float64, idx *[batchChunk]int, diff *[batchChunk]float64) (float64, error) {
	n := t.N()
	var sum float64
	for lo := 0; lo < n; lo += batchChunk {
		m := min(batchChunk, n-lo)
		for j := range m {
			idx[j] = lo + j
		}
		if err := t.EnergyDiffs(diff[:m], theta, next, idx[:m]); err != nil {
			return 0, err
		}
		for _, d := range diff[:m] {
			sum += d
		}
	}
	return sum, nil
}

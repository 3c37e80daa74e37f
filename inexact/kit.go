// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"fmt"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

// Small helpers the kernels share, written against package exactmh's
// exported surface as the root package's kernels write them.

// chunk is the number of energy differences a kernel asks the Target for
// at once (the root package's kernels ask as many).
const chunk = 256

// shuffleRange finishes positions lo … hi−1 of a partial Fisher–Yates
// shuffle of perm: afterwards perm[lo:hi] holds hi − lo data drawn
// uniformly without replacement from those not in perm[:lo]. With lo = 0
// it draws a fresh subset whatever the permutation's previous order, in
// O(hi − lo) and without allocation — the minibatches of AustereMH,
// MHminibatch, MHBT and SGLD.
func shuffleRange(rng *rand.Rand, perm []int, lo, hi int) {
	n := len(perm)
	for k := lo; k < hi; k++ {
		r := k + rng.IntN(n-k)
		perm[k], perm[r] = perm[r], perm[k]
	}
}

// identity returns the permutation 0 … n−1.
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// requireGradient reports, wrapping exactmh.ErrNoGradient, a target whose
// energy or prior has no gradient.
func requireGradient(t *exactmh.Target) error {
	if t.HasGradient() {
		return nil
	}
	switch t.Energy().(type) {
	case exactmh.Gradienter, exactmh.GLM:
		return fmt.Errorf("%w: prior %T does not implement PriorGradienter", exactmh.ErrNoGradient, t.Prior())
	}
	return fmt.Errorf("%w: energy %T implements neither Gradienter nor GLM", exactmh.ErrNoGradient, t.Energy())
}

// driverChain is what the driver needs of every chain here but SGLD's: a
// Chain whose step scale it adapts and whose state it can checkpoint.
type driverChain interface {
	exactmh.Chain
	exactmh.Tunable
	exactmh.Checkpointer
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"bytes"
	"encoding/gob"
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

// gobState encodes a chain's state struct for its checkpoint.
func gobState(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ungobState decodes a chain's state struct.
func ungobState(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// restorePerm decodes a saved permutation of the data into perm, refusing
// anything else.
func restorePerm(b []byte, perm []int) error {
	var p []int
	if err := ungobState(b, &p); err != nil {
		return err
	}
	if err := checkPerm("permutation", p, len(perm)); err != nil {
		return err
	}
	copy(perm, p)
	return nil
}

// checkPerm checks that a saved p is a permutation of the data 0 … n−1.
func checkPerm(what string, p []int, n int) error {
	if len(p) != n {
		return fmt.Errorf("saved %s of %d data, the posterior has %d", what, len(p), n)
	}
	return checkDistinct(what, p, n)
}

// checkDistinct checks that the saved indices idx are distinct data in
// [0, n).
func checkDistinct(what string, idx []int, n int) error {
	seen := make([]bool, n)
	for k, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("saved %s[%d] = %d, want in [0, %d)", what, k, i, n)
		}
		if seen[i] {
			return fmt.Errorf("saved %s[%d] = %d repeats an earlier entry", what, k, i)
		}
		seen[i] = true
	}
	return nil
}

// driverChain is what the driver needs of every chain here but SGLD's: a
// Chain whose step scale it adapts and whose state it can checkpoint.
type driverChain interface {
	exactmh.Chain
	exactmh.Tunable
	exactmh.Checkpointer
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Proposal draws a candidate θ' from θ. A Proposal is a configuration shared
// by all chains, so it must be safe for concurrent use; the per-chain step
// scale, which the driver adapts during warmup, is passed to every call.
type Proposal interface {
	// Propose writes θ' into dst (len(dst) == len(theta); dst and theta do
	// not overlap) and returns log q(θ|θ') − log q(θ'|θ), the log proposal
	// ratio of the Metropolis–Hastings acceptance probability. scale > 0 is
	// the chain's current step scale.
	Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64
}

// RandomWalk is the Gaussian random walk θ' = θ + scale·diag(Sigma)·z,
// z ~ N(0, I). It is symmetric, so its log proposal ratio is 0. A nil Sigma
// is the isotropic walk θ' = θ + scale·z, the papers' random walk with
// "step size" scale.
type RandomWalk struct {
	// Sigma optionally preconditions each coordinate (for example with
	// posterior standard deviations). nil means all ones.
	Sigma []float64
}

// Propose draws θ' = θ + scale·Sigma∘z and returns 0.
func (w RandomWalk) Propose(rng *rand.Rand, dst, theta []float64, scale float64) float64 {
	if w.Sigma == nil {
		for j, v := range theta {
			dst[j] = v + scale*rng.NormFloat64()
		}
		return 0
	}
	for j, v := range theta {
		dst[j] = v + scale*w.Sigma[j]*rng.NormFloat64()
	}
	return 0
}

// checkDim reports whether Sigma fits dimension d.
func (w RandomWalk) checkDim(d int) error {
	if w.Sigma == nil {
		return nil
	}
	if len(w.Sigma) != d {
		return fmt.Errorf("RandomWalk.Sigma has length %d, want %d", len(w.Sigma), d)
	}
	for j, s := range w.Sigma {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("RandomWalk.Sigma[%d] = %v, want finite > 0", j, s)
		}
	}
	return nil
}

// checkScale validates a step scale set by a user.
func checkScale(who string, s float64) error {
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("%s: step scale %v, want finite > 0", who, s)
	}
	return nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

// DrawOmegaSweeps runs the logistic sweep's update 1 (drawOmega: the
// Pólya–Gamma draws and the refill of M and b) n times on ch, a chain of
// GroupGibbs{Augment: true} on a logistic model, for
// BenchmarkLogitDrawOmega.
func DrawOmegaSweeps(ch exactmh.Chain, rng *rand.Rand, n int) {
	c := ch.(*augChain)
	b := make([]float64, len(c.theta))
	for range n {
		c.drawOmega(rng, b)
	}
}

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

// DrawOmegaRefill runs drawOmega once on ch (as DrawOmegaSweeps) and
// returns copies of M's values and b, and whether the chain refilled M by
// the grouped rows (groupTab), for TestLogitGroupedRefill.
func DrawOmegaRefill(ch exactmh.Chain, rng *rand.Rand) (m, b []float64, grouped bool) {
	c := ch.(*augChain)
	b = make([]float64, len(c.b))
	c.drawOmega(rng, b)
	return append([]float64(nil), c.m.Val...), b, c.groups != nil
}

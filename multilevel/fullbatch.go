// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "github.com/exactmh/exactmh"

// FullBatchEnergy is the energy of a multilevel model that GroupGibbs has
// no sweep for — model.NewOrdinalMultilevel's cumulative logit, whose
// cutpoints enter every datum outside its linear predictor — and that
// the automatic default samples with full-batch NUTS without pilots: the
// flat path's dense Laplace approximation (a D × D Hessian by central
// differences, 2D passes over the data) would cost more than it saves
// with thousands of group effects. FullBatchReason says why, in a
// sentence; "" declines (the flat path then chooses).
type FullBatchEnergy interface {
	exactmh.Energy
	FullBatchReason() string
}

// chooseFullBatch is the automatic default on a FullBatchEnergy: NUTS.
func chooseFullBatch(c *exactmh.Choice, p *exactmh.Posterior, reason string) {
	c.Name, c.Kernel, c.Posterior, c.Reason = "NUTS", exactmh.NUTS{}, p, reason
}

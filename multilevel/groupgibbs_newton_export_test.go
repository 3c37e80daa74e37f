// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// GroupGibbsNewtonNoQ returns k with its Newton proposal's log q ratio
// dropped (a mutant: the chain then targets π·q in the fixed effects).
func GroupGibbsNewtonNoQ(k GroupGibbs) GroupGibbs {
	k.newtonNoQ = true
	return k
}

// GroupGibbsNewtonFromState returns k with its Newton step started at the
// current fixed effects instead of the centre (a mutant: the proposal then
// depends on them while its ratio treats it as independent).
func GroupGibbsNewtonFromState(k GroupGibbs) GroupGibbs {
	k.newtonFromState = true
	return k
}

// GroupGibbsNewtonNoRem returns k with its Newton proposal's thinned test
// deciding on the quadratic's ratio alone (a mutant: the data's Taylor
// remainders ignored).
func GroupGibbsNewtonNoRem(k GroupGibbs) GroupGibbs {
	k.newtonNoRem = true
	return k
}

// GroupGibbsNewtonThinOff returns k with its Newton proposal decided by a
// full pass over the block's data, never thinned.
func GroupGibbsNewtonThinOff(k GroupGibbs) GroupGibbs {
	k.newtonThinOff = true
	return k
}

// GroupGibbsNewtonThinAll returns k with its Newton proposal decided by
// the thinned test wherever its expected batch is finite.
func GroupGibbsNewtonThinAll(k GroupGibbs) GroupGibbs {
	k.newtonThinAll = true
	return k
}

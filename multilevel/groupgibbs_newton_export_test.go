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

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// GroupGibbsShearWrongMean returns k with every shear's level means off
// by off in the effects' shift, not in the data the ratio reads (a mutant:
// a shear that changes the between-level part of the linear predictors
// and does not charge for it).
func GroupGibbsShearWrongMean(k GroupGibbs, off float64) GroupGibbs {
	k.shearHooks.meanOff = off
	return k
}

// GroupGibbsShearNoEffectPrior returns k with the shear moves' ratio
// without the effects' N(0, τ²) terms (a mutant: a prior term dropped).
func GroupGibbsShearNoEffectPrior(k GroupGibbs) GroupGibbs {
	k.shearHooks.noEffectPrior = true
	return k
}

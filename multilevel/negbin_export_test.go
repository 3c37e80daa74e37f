// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

// NegBinNoQ returns k with the negative binomial sweep's shape update
// without its proposal's q ratio (a Newton proposal is not symmetric):
// the mutant "shape update without its Hastings ratio".
func NegBinNoQ(k GroupGibbs) GroupGibbs {
	k.negBin.noQ = true
	return k
}

// NegBinStale returns k with each datum's expansion following φ while
// the control variate's sums g and H stay at the centre's shape: the
// mutant "the control variate's sums at the wrong shape".
func NegBinStale(k GroupGibbs) GroupGibbs {
	k.negBin.stale = true
	return k
}

// NegBinDropBlock returns k with block 1's part left out of the shape
// test's thinning rate: the mutant "the bound dropping a group".
func NegBinDropBlock(k GroupGibbs) GroupGibbs {
	k.negBin.dropBlock = true
	return k
}

// NegBinNoCross returns k with the cross terms v₁ᵀΔ + ΔᵀQΔ/2 left out of
// the shape test's sums while each datum's remainder keeps them: the
// mutant "a wrong cross term".
func NegBinNoCross(k GroupGibbs) GroupGibbs {
	k.negBin.noCross = true
	return k
}

// NegBinRegion returns k with the shape test's region |η_i − ẑ_i| ≤ rEta,
// |ℓ − ℓ̂| ≤ rL (wide, so that the test decides on the small data sets
// of the kit, where the default region sends most updates to the full
// pass).
func NegBinRegion(k GroupGibbs, rEta, rL float64) GroupGibbs {
	k.negBin.rEta, k.negBin.rL = rEta, rL
	return k
}

// NegBinShapeCond returns V(ℓ), V′(ℓ), V″(ℓ) of the shape's conditional
// given the linear predictors eta (shapeCond.eval).
func NegBinShapeCond(y, eta []float64, l float64) (v, d1, d2 float64, err error) {
	s, err := newShapeCond(y)
	if err != nil {
		return 0, 0, 0, err
	}
	r := s.eval(l, eta, nil)
	return r.v, r.d1, r.d2, nil
}

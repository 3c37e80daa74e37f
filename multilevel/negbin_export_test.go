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

// NegBinStale returns k with the control variate's sums g and H left at
// the centre's shape while each datum's expansion follows φ: the mutant
// "stale sums after a shape move".
func NegBinStale(k GroupGibbs) GroupGibbs {
	k.negBin.stale = true
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

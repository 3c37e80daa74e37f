// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
)

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

// NegBinCheckBound returns k with every datum of each block the effects'
// sweep updates checked against its bound (an error if one exceeds it),
// and with noFloor the mismatch between the data's shape and the control
// variate's left out of the bound: the mutant "the mismatch unbounded".
func NegBinCheckBound(k GroupGibbs, noFloor bool) GroupGibbs {
	k.negBin.checkBound, k.negBin.noFloor = true, noFloor
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

// NegBinShapeCheck starts k's negative binomial sweep on p at θ0, moves w
// to the centre's plus scale·ξ (ξ standard normal) and, for each of pairs
// draws of (ℓ, ℓ′) uniform within rL of ℓ̂, computes every datum's
// remainder difference ΔR_i and bound c_i. It returns the largest
// |ΔR_i|/c_i, the largest relative difference between Σ_ic_i and the
// thinning rate, and the largest difference between the conditional's
// V(ℓ′) − V(ℓ) (shapeCond.eval, every datum) and the test's
// Ṽ(ℓ′) − Ṽ(ℓ) + Σ_iΔR_i, relative to Σ_i|ΔR_i| + 1e-9; and the reach
// of w (the region holds if at most rEta).
func NegBinShapeCheck(k GroupGibbs, p *exactmh.Posterior, theta0 []float64, seed uint64, scale, rL float64, pairs int) (ratio, rateErr, cvErr, reach float64, err error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	nb, lay, base, ok := negBinOf(t.Energy(), t.Prior())
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("not a negative binomial multilevel model")
	}
	c, err := startNegBin("GroupGibbs", t, k, nb, lay, base, theta0)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	D := c.d - 1
	for j := range D {
		c.theta[j] = c.sm.wHat[j] + scale*rng.NormFloat64()
	}
	c1, c2, reach := c.shapePrep()
	n := c.view.Len()
	eta := make([]float64, n)
	zHat := make([]float64, n)
	for i := range n {
		eta[i], zHat[i] = c.view.LinearPredictors(i, c.theta[:D], c.sm.wHat)
	}
	y := c.sc.y
	for range pairs {
		l := c.sm.lHat + rL*(2*rng.Float64()-1)
		ln := c.sm.lHat + rL*(2*rng.Float64()-1)
		rate, _ := c.shapeRate(l, ln)
		var sumC, sumR, absR float64
		for i := range n {
			ci, err := c.datumBound(i, l, ln)
			if err != nil {
				return 0, 0, 0, 0, err
			}
			rd := c.sm.remainder(y[i], c.muHat[i], eta[i], zHat[i], l, ln)
			sumC += ci
			sumR += rd
			absR += math.Abs(rd)
			if ci > 0 {
				ratio = math.Max(ratio, math.Abs(rd)/ci)
			} else if rd != 0 {
				ratio = math.Inf(1)
			}
		}
		rateErr = math.Max(rateErr, math.Abs(sumC-rate)/math.Max(rate, 1e-300))
		v0, v1 := c.sc.eval(l, eta, nil), c.sc.eval(ln, eta, nil)
		cv := c.cvVals(ln, c1, c2).v - c.cvVals(l, c1, c2).v
		cvErr = math.Max(cvErr, math.Abs((v1.v-v0.v)-(cv+sumR))/(absR+1e-9))
	}
	return ratio, rateErr, cvErr, reach, nil
}

// NegBinSumsCheck starts k's negative binomial sweep on p at θ0, sets
// its shape to e^l and returns the largest difference between the
// control variate's sums (g, H's values) and the sums of the data's
// expansions at the centre, Σ_if̃′_i·x_i and Σ_if̃″_i·x_ix_iᵀ
// (negBinExpand at φ), relative to the largest sum.
func NegBinSumsCheck(k GroupGibbs, p *exactmh.Posterior, theta0 []float64, l float64) (float64, error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return 0, err
	}
	nb, lay, base, ok := negBinOf(t.Energy(), t.Prior())
	if !ok {
		return 0, fmt.Errorf("not a negative binomial multilevel model")
	}
	c, err := startNegBin("GroupGibbs", t, k, nb, lay, base, theta0)
	if err != nil {
		return 0, err
	}
	c.setShape(l)
	g := c.inner.gibbsTerms
	gs, hs := make([]float64, len(g.gradSum)), make([]float64, len(g.hVal))
	ex := c.expand
	var cols []int32
	var vals []float64
	for i := range c.view.Len() {
		z, _ := ex.LinearPredictors(i, g.center, g.center)
		f1, f2 := ex.LossDerivs(i, z)
		cols, vals = ex.SparseRow(i, cols[:0], vals[:0])
		for q, j := range cols {
			gs[j] += f1 * vals[q]
			for q2, col := range cols {
				lo, hi := g.hPtr[j], g.hPtr[j+1]
				for p := lo; p < hi; p++ {
					if g.hCol[p] == col {
						hs[p] += f2 * vals[q] * vals[q2]
					}
				}
			}
		}
	}
	var diff, scale float64
	for j := range gs {
		diff = math.Max(diff, math.Abs(gs[j]-g.gradSum[j]))
		scale = math.Max(scale, math.Abs(gs[j]))
	}
	for p := range hs {
		diff = math.Max(diff, math.Abs(hs[p]-g.hVal[p]))
		scale = math.Max(scale, math.Abs(hs[p]))
	}
	return diff / scale, nil
}

// NegBinPhiDerivs is nbPhiDerivs.
func NegBinPhiDerivs(y, z, phi float64) (d1, d2 float64) { return nbPhiDerivs(y, z, phi) }

// NegBinKDerivs is kDerivs.
func NegBinKDerivs(y, muHat, phiHat float64) (kl, kel, kll, keel, kell, klll float64) {
	return kDerivs(y, muHat, phiHat)
}

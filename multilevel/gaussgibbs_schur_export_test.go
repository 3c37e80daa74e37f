// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/exactmh/exactmh"
	"gonum.org/v1/gonum/mat"
)

// SchurAgreement compares, on ch (a chain of GroupGibbs{Augment: true} on
// a probit model) at its state after a sweep drawn from rng, update 1's
// reduced system (gaussgibbs_schur.go) against the full one built from
// P's values as fill sets them: S against the dense Schur complement
// P_RR − P_RE P_EE⁻¹ P_ER, and the conditional mean (w_R's from S, each
// eliminated level's given it) against P⁻¹r. It returns both largest
// differences relative to the largest entry, and the number of levels
// eliminated (0: none, and no comparison).
func SchurAgreement(ch exactmh.Chain, rng *rand.Rand) (dS, dMean float64, levels int, err error) {
	c := ch.(*augChain)
	if _, err := c.Step(rng); err != nil {
		return 0, 0, 0, err
	}
	s := c.schur
	if s == nil {
		return 0, 0, 0, nil
	}
	// The full system.
	if err := c.fill(); err != nil {
		return 0, 0, 0, err
	}
	ne := c.pv.N
	p := mat.NewSymDense(ne, nil)
	for j := range ne {
		for q := c.pv.ColPtr[j]; q < c.pv.ColPtr[j+1]; q++ {
			p.SetSym(c.pv.RowIdx[q], j, c.pv.Val[q])
		}
	}
	c.condRHS()
	r := mat.NewVecDense(ne, append([]float64(nil), c.rhs...))
	var full mat.VecDense
	if err := full.SolveVec(p, r); err != nil {
		return 0, 0, 0, fmt.Errorf("P⁻¹r: %w", err)
	}
	// The dense Schur complement.
	nr := len(s.red)
	want := mat.NewSymDense(nr, nil)
	for x, a := range s.red {
		for y, b := range s.red[:x+1] {
			v := p.At(a, b)
			for _, e := range s.elim {
				v -= p.At(a, e) * p.At(e, b) / p.At(e, e)
			}
			want.SetSym(x, y, v)
		}
	}
	// The reduced system at the same state.
	if err := c.schurFactor(); err != nil {
		return 0, 0, 0, err
	}
	c.schurMean()
	var scale float64
	for x := range nr {
		for y := range x + 1 {
			scale = math.Max(scale, math.Abs(want.At(x, y)))
		}
	}
	for y := range nr {
		for q := s.s.ColPtr[y]; q < s.s.ColPtr[y+1]; q++ {
			x := s.s.RowIdx[q]
			dS = math.Max(dS, math.Abs(s.s.Val[q]-want.At(x, y))/scale)
		}
	}
	// Every entry of the dense complement lies on S's pattern.
	for x := range nr {
		for y := range x + 1 {
			if want.At(x, y) != 0 && !onPattern(s, x, y) {
				dS = math.Max(dS, math.Abs(want.At(x, y))/scale)
			}
		}
	}
	mScale := 0.0
	for a := range ne {
		mScale = math.Max(mScale, math.Abs(full.AtVec(a)))
	}
	got := make([]float64, ne)
	for x, a := range s.red {
		got[a] = s.mean[x]
	}
	ms := c.beta * math.Exp(-2*c.logSigma())
	for k, a := range s.elim {
		v := c.rhs[a]
		for q := s.vPtr[k]; q < s.vPtr[k+1]; q++ {
			v -= ms * s.vVal[q] * s.mean[s.vRow[q]]
		}
		got[a] = v / s.d[s.grp[k]]
	}
	for a := range ne {
		dMean = math.Max(dMean, math.Abs(got[a]-full.AtVec(a))/mScale)
	}
	return dS, dMean, len(s.elim), nil
}

// onPattern reports whether (x, y), x ≥ y, is an entry of S's pattern.
func onPattern(s *schur, x, y int) bool {
	for q := s.s.ColPtr[y]; q < s.s.ColPtr[y+1]; q++ {
		if s.s.RowIdx[q] == x {
			return true
		}
	}
	return false
}

// InterweaveRowsDiff returns, on ch (a chain of GroupGibbs{Augment: true})
// after a sweep drawn from rng, the largest difference between (Mw)_j read
// from each interweaving term's rows of M (asisTerm.rowsOfM) and M·w by
// MulVec, relative to the largest |(Mw)_j|, and the number of rows
// compared.
func InterweaveRowsDiff(ch exactmh.Chain, rng *rand.Rand) (float64, int, error) {
	c := ch.(*augChain)
	if _, err := c.Step(rng); err != nil {
		return 0, 0, err
	}
	th := c.theta
	c.m.MulVec(c.mw, th[:c.dw])
	var scale, diff float64
	n := 0
	for _, a := range c.asis {
		for g := range a.levels {
			j := a.start + g*a.stride
			var mw, col float64
			for q := a.mRow[g]; q < a.mSplit[g]; q++ {
				mw += c.m.Val[a.mPos[q]] * th[a.mCol[q]]
			}
			for q := a.mSplit[g]; q < a.mRow[g+1]; q++ {
				col += c.m.Val[a.mPos[q]] * th[a.mCol[q]]
			}
			mw += col
			scale = math.Max(scale, math.Abs(c.mw[j]))
			diff = math.Max(diff, math.Abs(mw-c.mw[j]))
			n++
		}
	}
	return diff / scale, n, nil
}

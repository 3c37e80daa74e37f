// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import "math"

// The per-datum memo of a GroupGibbs chain on a small data set: the
// datum's loss at the last two linear predictors read (the current one
// and the last proposal's, one of which is the state after the decision)
// and its expansion at the centre. Where every datum is read at many
// updates a sweep (the small-N kernel reads each about a dozen times),
// a read then evaluates the loss once, at the proposal, instead of twice,
// and the expansion's derivatives and sup|f‴| not at all. Each entry is a
// pure function of the datum and the linear predictor it is keyed on (or
// of the datum alone, at the fixed centre), so the chain's draws are the
// same bit for bit with or without it (TestGroupGibbsMemoSameDraws).

// lossMemoMax is the most data for which a chain keeps the memo: 80 bytes
// a datum, 5 MB a chain at the limit. Above it a datum is read a few
// times a sweep at most (the updates thin) and the memo would rarely hit.
const lossMemoMax = 1 << 16

// lossMemo holds a datum's loss l0 at z0 and l1 at z1 (NaN keys: none).
type lossMemo struct{ z0, l0, z1, l1 float64 }

// expMemo holds a datum's expansion at the centre and its sup|f‴| (or
// growth constant), ok once computed.
type expMemo struct {
	x  taylor
	kf float64
	ok bool
}

// initMemo gives the chain its memo where the data are few enough and
// each datum's loss is a function of its linear predictor alone (not on
// a negative binomial's moving shape, whose chain sets expand).
func (c *gibbsChain) initMemo() {
	if c.t.N() > lossMemoMax || c.noMemo {
		return
	}
	if _, ok := c.gibbsTerms.e.(ShapeGLM); ok {
		return
	}
	c.lm = make([]lossMemo, c.t.N())
	c.xm = make([]expMemo, c.t.N())
	for i := range c.lm {
		c.lm[i] = lossMemo{z0: math.NaN(), z1: math.NaN()} // NaN keys: equal to no linear predictor
	}
}

// loss2 returns datum i's losses at z and zn (untempered), from the memo
// where it holds them, and keeps both there.
func (c *gibbsChain) loss2(i int, z, zn float64) (l, ln float64) {
	if c.lm == nil || c.expand != nil {
		return c.rows.Loss(i, z), c.rows.Loss(i, zn)
	}
	m := &c.lm[i]
	if c.memoStale && !math.IsNaN(m.z0) {
		// Test hook: the loss kept for the last datum read, whatever z.
		return m.l0, c.rows.Loss(i, zn)
	}
	switch z {
	case m.z0:
		l = m.l0
	case m.z1:
		l = m.l1
	default:
		l = c.rows.Loss(i, z)
	}
	switch zn {
	case z:
		ln = l
	case m.z0:
		ln = m.l0
	case m.z1:
		ln = m.l1
	default:
		ln = c.rows.Loss(i, zn)
	}
	*m = lossMemo{z0: z, l0: l, z1: zn, l1: ln}
	return l, ln
}

// expansion returns datum i's expansion at the centre under ex and its
// sup|f‴| (datumExpansion), from the memo where the chain keeps one.
func (c *gibbsChain) expansion(ex SparseRowGLM, i int) (taylor, float64, error) {
	if c.xm == nil || c.expand != nil {
		return datumExpansion("GroupGibbs", ex, i, c.center, c.growth)
	}
	m := &c.xm[i]
	if m.ok {
		return m.x, m.kf, nil
	}
	x, kf, err := datumExpansion("GroupGibbs", ex, i, c.center, c.growth)
	if err != nil {
		return x, kf, err
	}
	*m = expMemo{x: x, kf: kf, ok: true}
	return x, kf, nil
}

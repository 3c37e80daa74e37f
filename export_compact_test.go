// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"fmt"

	"github.com/exactmh/exactmh/internal/alias"
)

// ControlVariatesCompact is ControlVariatesOrder with the bound constants
// kept compact (cvCompactLimit) at any N: c_i rounded up to alias's
// 16-bit grid and drawn through alias.Blocked.
func ControlVariatesCompact(p *Posterior, la *LaplaceApprox, order int) (*Posterior, error) {
	return cvBuild{order: cvOrderMode(order), compact: true}.build(p, la)
}

// CompactMutants names the mutants of the compact state
// ControlVariatesCompactMutant builds.
var CompactMutants = []string{"codes rounded down", "no rejection inside a block", "envelope at the block's mean c_i"}

// ControlVariatesCompactMutant is ControlVariatesCompact with a mutant of
// the compact state:
//
//   - "codes rounded down": each c_i coded by the grid's code below
//     alias.Up(c_i/4), a bound four or more times too small; the kernels'
//     own bound checks must catch it (a *BoundViolation), since a bound
//     that holds where it is evaluated leaves them exact;
//   - "no rejection inside a block": blocks drawn ∝ their sums, a datum of
//     the block uniformly among those with c_i > 0 (envelope 0);
//   - "envelope at the block's mean c_i": the rejection's envelope below
//     the block's largest c_i, so that the c_i above the mean are kept
//     with probability 1 rather than c_i/max.
func ControlVariatesCompactMutant(p *Posterior, la *LaplaceApprox, order int, mutant string) (*Posterior, error) {
	b := cvBuild{order: cvOrderMode(order), compact: true}
	switch mutant {
	case "codes rounded down":
		b.code = func(c float64) (uint16, bool) {
			q, ok := alias.Up(c / 4)
			if q > 1 {
				q--
			}
			return q, ok
		}
	case "no rejection inside a block":
		b.envelope = func([]uint16) uint16 { return 0 }
	case "envelope at the block's mean c_i":
		b.envelope = func(blk []uint16) uint16 {
			var s float64
			for _, q := range blk {
				s += alias.Value(q)
			}
			q, _ := alias.Up(s / float64(len(blk)))
			return q
		}
	default:
		return nil, fmt.Errorf("no compact mutant %q", mutant)
	}
	return b.build(p, la)
}

// CVCompact reports whether a ControlVariates rewrite keeps its bound
// constants compact, and the bytes a datum they and the sampler the bound
// kernels draw from them take: 2 for the codes, 16 per block of
// alias.BlockSize for alias.Blocked's records, and the expected trials of
// a draw inside a block. For the float64 state: 8 for c_i, and 16 for the
// alias table's column.
func CVCompact(p *Posterior) (compact bool, bytesPerDatum, trials float64, err error) {
	e := p.Energy.(*cvEnergy)
	n := float64(e.n)
	if e.codes == nil {
		return false, float64(8*len(e.c)+16*len(e.c)) / n, 1, nil
	}
	blk, err := alias.NewBlocked(e.codes, e.envelope)
	if err != nil {
		return true, 0, 0, err
	}
	return true, float64(2*len(e.codes)+blk.Bytes()) / n, blk.ExpectedTrials(), nil
}

// SetCVCompactLimit makes ControlVariates keep its bound constants compact
// from n data until the returned function restores it.
func SetCVCompactLimit(n int) (restore func()) {
	old := cvCompactLimit
	cvCompactLimit = n
	return func() { cvCompactLimit = old }
}

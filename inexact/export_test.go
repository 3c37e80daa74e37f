// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact

import (
	"math"

	"github.com/exactmh/exactmh/internal/logit"
)

// Deliberately wrong variants (mutants) of the package's kernels for the
// tests, set through unexported fields.

// MHBTRefreshOnReject returns an MHBT that, like the paper's reference
// code, moves to the new batch on rejection and re-evaluates θ on it.
func MHBTRefreshOnReject(k MHBT) MHBT {
	k.onReject = func(c *mhbtChain) error {
		c.batch, c.batchNew = c.batchNew, c.batch
		var err error
		if c.mu, err = c.meanLogLik(c.batch, c.theta); err != nil {
			return err
		}
		if c.k.RSGLD {
			return c.gradient(c.grad, c.batch, c.theta)
		}
		return nil
	}
	return k
}

// MHBTNoNormaliser returns an MHBT whose RSGLD density omits the backward
// component's β^{−d} normaliser (the reference code's bug G18).
func MHBTNoNormaliser(k MHBT) MHBT {
	k.logDensity = func(r rsgldProposal, to, from, g []float64) float64 {
		return r.LogDensity(to, from, g) + rsgldNoNormaliserShift(r, to, from, g)
	}
	return k
}

// rsgldNoNormaliserShift is the change in log q when the backward
// component's log density gains d·log β (its normaliser left out).
func rsgldNoNormaliserShift(r rsgldProposal, to, from, g []float64) float64 {
	s := r.s()
	d := float64(len(to))
	var fwd, bwd float64
	for j := range to {
		a := to[j] - from[j] - r.Epsilon*g[j]
		b := to[j] - from[j] + r.Epsilon*g[j]
		fwd += a * a
		bwd += b * b
	}
	lf := -fwd/(2*s*s) - d*math.Log(s)
	lb := -bwd/(2*r.Beta*r.Beta*s*s) - d*math.Log(r.Beta*s)
	return logit.LogAddExp(lf, lb+d*math.Log(r.Beta)) - logit.LogAddExp(lf, lb)
}

// SGLDProposal and RSGLDProposal are MHBT's proposals (mhbt.go), for
// TestSGLDProposal and TestRSGLDProposal.
type (
	SGLDProposal  = sgldProposal
	RSGLDProposal = rsgldProposal
)

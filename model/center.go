// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/multilevel"
)

// MultilevelCenter returns a centre for multilevel.GroupGibbs's and
// multilevel.GroupSMH's control variates on a posterior built by
// NewMultilevel, and the standard deviations of a Gaussian approximation
// there (for a preconditioned proposal). The joint posterior of (β, u,
// log τ) has no mode — its density grows without bound as τ → 0 with
// u = 0 — so the centre is that of a Laplace-EM iteration, as lme4's
// fits: the mode (β̂, û) of the posterior given τ, by Newton's method on
// the sparse Hessian (package sparse's Cholesky factorisation with a
// fill-reducing order: any number of nested or crossed factors, no d×d
// matrix), then τ_kj² = Σ_g(û_gj² + v_gj)/G_k with v_gj the conditional
// variance of u_gj (the inverse Hessian's diagonal), until log τ moves
// less than 0.01, then Newton to the mode given that τ.
//
// It is multilevel.Center, the centre the automatic
// default finds (one implementation); maxIter is ignored (the iteration
// makes at most 50 rounds) and kept for compatibility.
func MultilevelCenter(ctx context.Context, post *exactmh.Posterior, maxIter int) (center, sd []float64, err error) {
	prior, ok := post.Prior.(*MultilevelPrior)
	if !ok {
		return nil, nil, fmt.Errorf("model: MultilevelCenter: prior %T, want the *MultilevelPrior of NewMultilevel", post.Prior)
	}
	if len(prior.terms) == 0 {
		return nil, nil, errors.New("model: MultilevelCenter: no random effects")
	}
	c, sd, err := multilevel.Center(ctx, post)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	return c, sd, nil
}

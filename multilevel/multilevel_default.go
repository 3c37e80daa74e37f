// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"context"
	"fmt"

	"github.com/exactmh/exactmh"
)

// defaultMultilevelCenter returns the centre GroupGibbs and GroupSMH take
// when their Center is nil, and the standard deviations there: the
// Laplace-EM centre the automatic default finds (multilevelCenter),
// computed once per run and shared by its chains
// (the run cache), so that the registry's default configuration
// (KernelInfo.New(nil), the exactmh command's --kernel groupgibbs) needs
// nothing but a multilevel posterior. A posterior that is not one is an
// error saying what is missing.
func defaultMultilevelCenter(name string, t *exactmh.Target) (center, sd []float64, err error) {
	lay, err := targetMultilevel(name, t)
	if err != nil {
		return nil, nil, err
	}
	c, err := shared(t, "multilevel/center", func() ([2][]float64, error) {
		c, sd, err := multilevelCenter(t.RunContext(), t, lay) // the run's context: Ctrl-C stops it (TestGroupStartHonoursCancel)
		if err != nil {
			return [2][]float64{}, fmt.Errorf("%s: the Laplace-EM centre (Center nil): %w", name, err)
		}
		return [2][]float64{c, sd}, nil
	})
	return c[0], c[1], err
}

// targetMultilevel returns t's multilevel layout, or an error naming what
// a multilevel kernel (KernelInfo.NeedsMultilevel) misses: random-effect
// terms in the prior, sparse rows and Hessians.
func targetMultilevel(name string, t *exactmh.Target) (Layout, error) {
	p := &exactmh.Posterior{Energy: t.Energy(), Prior: t.Prior()}
	lay, ok := Of(p)
	if !ok {
		return nil, fmt.Errorf("%s needs a multilevel model: random-effect terms in the prior (model.NewMultilevel's, e.g. (1|group) in the exactmh command) over a SparseRowGLM energy with sparse Hessians; got energy %T, prior %T", name, t.Energy(), t.Prior())
	}
	return lay, nil
}

// Center returns the centre the automatic default, GroupGibbs and
// GroupSMH take on a multilevel posterior (Of: random-effect terms in the
// prior, model.NewMultilevel's, over a SparseRowGLM energy with sparse
// Hessians), and the standard deviations of a Gaussian approximation
// there: the Laplace-EM iteration of multilevelCenter (the mode of the
// effects given the log scales by Newton's method on the sparse Hessian,
// then each scale from its effects' second moments, until the log scales
// move less than 0.01), the effects' standard deviations from the inverse
// Hessian's diagonal given the scales, a log scale's 1/√(−∂² log p). It is
// the one implementation; model.MultilevelCenter calls it. Why any centre
// keeps the kernels exact: docs/multilevel.md, section "Laplace-EM centre".
func Center(ctx context.Context, p *exactmh.Posterior) (center, sd []float64, err error) {
	lay, ok := Of(p)
	if !ok {
		return nil, nil, fmt.Errorf("multilevel: Center needs a multilevel model: random-effect terms in the prior (model.NewMultilevel's) over a SparseRowGLM energy with sparse Hessians; got energy %T, prior %T", p.Energy, p.Prior)
	}
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, nil, err
	}
	return multilevelCenter(ctx, t, lay)
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
)

// defaultMultilevelCenter returns the centre GroupGibbs and GroupSMH take
// when their Center is nil: the Laplace-EM centre the automatic default
// finds (multilevelCenter), computed once per run and shared by its chains
// (the run cache), so that the registry's default configuration
// (KernelInfo.New(nil), the exactmh command's --kernel groupgibbs) needs
// nothing but a multilevel posterior. A posterior that is not one is an
// error saying what is missing.
func defaultMultilevelCenter(name string, t *Target) ([]float64, error) {
	lay, err := targetMultilevel(name, t)
	if err != nil {
		return nil, err
	}
	return shared(t.cache, "multilevel/center", func() ([]float64, error) {
		c, _, err := multilevelCenter(context.Background(), t, lay)
		if err != nil {
			return nil, fmt.Errorf("%s: the Laplace-EM centre (Center nil): %w", name, err)
		}
		return c, nil
	})
}

// targetMultilevel returns t's multilevel layout, or an error naming what
// a multilevel kernel (KernelInfo.NeedsMultilevel) misses: random-effect
// terms in the prior, sparse rows and Hessians.
func targetMultilevel(name string, t *Target) (multilevelLayout, error) {
	p := &Posterior{Energy: t.Energy(), Prior: t.Prior()}
	lay, ok := multilevelOf(p)
	if !ok {
		return nil, fmt.Errorf("%s needs a multilevel model: random-effect terms in the prior (model.NewMultilevel's, e.g. (1|group) in the exactmh command) over a SparseRowGLM energy with sparse Hessians; got energy %T, prior %T", name, t.Energy(), t.Prior())
	}
	return lay, nil
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package multilevel

import (
	"context"

	"github.com/exactmh/exactmh"
)

// DefaultCenterUnder computes the default centre of GroupGibbs and GroupSMH
// (Center nil) as their Start does, on a target watching ctx as a chain's
// Start does.
func DefaultCenterUnder(ctx context.Context, p *exactmh.Posterior) (center []float64, err error) {
	t, err := exactmh.NewTarget(p)
	if err != nil {
		return nil, err
	}
	defer t.Watch(ctx)()
	center, _, err = defaultMultilevelCenter("GroupGibbs", t)
	return center, err
}

// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import "context"

// DefaultMultilevelCenterUnder computes the default centre of GroupGibbs
// and GroupSMH (Center nil) as their Start does, on a target watching ctx
// as a chain's Start does.
func DefaultMultilevelCenterUnder(ctx context.Context, p *Posterior) (center []float64, err error) {
	t, err := NewTarget(p)
	if err != nil {
		return nil, err
	}
	defer t.watch(ctx)()
	center, _, err = defaultMultilevelCenter("GroupGibbs", t)
	return center, err
}

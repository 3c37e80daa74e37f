// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh

import (
	"context"
	"fmt"
	"time"
)

// The methods below serve a registered kernel's own path through the
// automatic default (KernelInfo.Choose): its pilots share the choice's run
// caches, as Choose's own do, and report to Settings.ChoiceProgress.

// Sample runs k on p as Sample does, sharing c's run cache for p (the
// bounds, tables and centre a kernel's Start builds once per run,
// Target.Shared), for a pilot of the automatic default.
func (c *Choice) Sample(ctx context.Context, p *Posterior, k Kernel, s *Settings) (*Result, error) {
	return sample(ctx, p, k, s, nil, c.cache(p))
}

// Progress reports a step of the automatic default to the
// Settings.ChoiceProgress function ctx carries, if any.
func (c *Choice) Progress(ctx context.Context, format string, args ...any) {
	choiceProgress(ctx, format, args...)
}

// PilotFullBatch pilots on p from init, as Choose pilots its candidates,
// the full-batch kernels the automatic default always weighs (NUTS), each
// replaced by variant's form and name where variant is not nil (a
// non-centred NUTS), and adds their Candidates to c. A kernel is piloted
// only where its best possible rate, two effective draws per transition
// of its passes over the data (pass each), could beat beat ESS per second.
// One whose pilot beats beat becomes c's Name and Kernel (with the step
// scale its warmup adapted) and its Reason "name (rate ESS/s)"; the name
// of the last such is returned, "" if none beat beat.
func (c *Choice) PilotFullBatch(ctx context.Context, p *Posterior, init []float64, seed uint64, pass time.Duration, beat float64, variant func(KernelInfo) (string, Kernel)) (string, error) {
	won := ""
	for _, ki := range withRole(autoFull) {
		k, name := ki.New(nil), ki.Name
		if variant != nil {
			name, k = variant(ki)
		}
		n := Candidate{Name: name}
		if bound := 2 / (ki.passes * pass.Seconds()); pass > 0 && bound < beat {
			n.Err = fmt.Sprintf("not piloted: a transition reads the data %.3g times (%v each), so at most ≈ %.3g ESS/s", ki.passes, pass.Round(time.Microsecond), bound)
			c.Candidates = append(c.Candidates, n)
			continue
		}
		t0 := time.Now()
		choiceProgress(ctx, "pilot: %s", name)
		rate, evals, atMost, scale, err := pilot(ctx, p, k, init, seed, autoPilotTimeout+autoPilotPasses*pass, beat, c.cache(p))
		n.Time, n.Scale = time.Since(t0), scale
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			n.Err, n.AtMost = err.Error(), atMost
		default:
			n.ESSPerSecond, n.EvalsPerStep = rate, evals
			if rate > beat && rate > 0 {
				if scale > 0 {
					k, _ = withStep(k, nil, func(float64) float64 { return scale })
				}
				c.Name, c.Kernel = name, k
				c.Reason = fmt.Sprintf("%s (%.4g ESS/s)", name, rate)
				won = name
			}
		}
		c.Candidates = append(c.Candidates, n)
	}
	return won, nil
}

// MinESS is the smallest of the bulk and tail ESS over the coordinates of
// r's draws (NaN where one is undefined): what the automatic default
// scores a one-chain pilot by (minESS).
func (r *Result) MinESS() float64 { return minESS(r) }

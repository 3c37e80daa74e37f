// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// funnelRun is what TestNonCentredFunnel measures of a run.
type funnelRun struct {
	divergent        int
	minBulk, minTail float64
	passes           float64 // gradient passes over the data per draw
	sum              *exactmh.Summary
}

func runFunnel(t *testing.T, p *exactmh.Posterior, k exactmh.Kernel, init []float64, draws int) funnelRun {
	t.Helper()
	res, err := exactmh.Sample(context.Background(), p, k, &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: draws, Seed: 3, Init: init})
	if err != nil {
		t.Fatal(err)
	}
	r := funnelRun{sum: res.Summary(), minBulk: math.Inf(1), minTail: math.Inf(1)}
	for _, ch := range res.Chains {
		for _, in := range ch.Infos {
			if in.Divergent {
				r.divergent++
			}
		}
	}
	for _, ps := range r.sum.Params {
		r.minBulk = math.Min(r.minBulk, ps.ESSBulk)
		r.minTail = math.Min(r.minTail, ps.ESSTail)
	}
	tot := res.Sampling()
	r.passes = float64(tot.GradEvals) / float64(tot.Steps) / float64(p.Len())
	return r
}

// maxZ returns the largest |z| of a posterior mean of a against b's and
// the parameter's name.
func maxZ(a, b *exactmh.Summary) (z float64, name string) {
	for j, pa := range a.Params {
		pb := b.Params[j]
		if zj := (pa.Mean - pb.Mean) / math.Hypot(pa.MCSE, pb.MCSE); !(math.Abs(zj) <= math.Abs(z)) {
			z, name = zj, pa.Name
		}
	}
	return z, name
}

// TestNonCentredFunnel compares NUTS centred and non-centred
// (NUTS.NonCentred) on a multilevel funnel — a random-intercept logistic
// regression with 2 or 3 data in each of 11 groups (and 33 in one), τ
// unknown (mcmctest.MultilevelModel{N: 60, Groups: 12}) — 4 chains of
// 1000 draws after 1000 of warmup each: the non-centred chains diverge
// at most once in a thousand draws and reach at least 3× the centred
// chains' min bulk ESS, and their means agree with GroupGibbs's on the
// centred posterior (every |z| ≤ 4.5), while dropping the Jacobian of u =
// τ·z moves them (some |z| > 6). The figures are logged: divergences, min
// bulk and tail ESS, gradient passes per draw.
func TestNonCentredFunnel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of 4 chains × 2000 transitions")
	}
	_, pb, err := mcmctest.MultilevelModel{N: 60, Groups: 12}.Draw(rand.New(rand.NewPCG(37, 0)))
	if err != nil {
		t.Fatal(err)
	}
	p := pb.Posterior
	c := runFunnel(t, p, exactmh.NUTS{}, pb.Mode, 1000)
	nc := runFunnel(t, p, exactmh.NUTS{NonCentred: true}, pb.Mode, 1000)
	ref := runFunnel(t, p, multilevel.GroupGibbs{Center: pb.Mode}, pb.Mode, 10000)
	noJac := runFunnel(t, p, exactmh.NUTSNonCentredNoJacobian(exactmh.NUTS{}), pb.Mode, 1000)
	for _, r := range []struct {
		name string
		r    funnelRun
	}{{"centred", c}, {"non-centred", nc}, {"GroupGibbs", ref}, {"non-centred, Jacobian dropped", noJac}} {
		lt := r.r.sum.Params[len(r.r.sum.Params)-1]
		t.Logf("%-30s divergent %4d of 4000, min bulk ESS %6.0f, min tail ESS %6.0f, %.1f gradient passes per draw; %s %.3f ± %.3f (sd %.3f)",
			r.name, r.r.divergent, r.r.minBulk, r.r.minTail, r.r.passes, lt.Name, lt.Mean, lt.MCSE, lt.SD)
	}
	if nc.divergent > 4 || nc.minBulk < 3*c.minBulk {
		t.Errorf("non-centred: %d divergences, min bulk ESS %.0f; centred %d, %.0f: want ≤ 4 and ≥ 3× the centred ESS",
			nc.divergent, nc.minBulk, c.divergent, c.minBulk)
	}
	z, name := maxZ(c.sum, ref.sum)
	t.Logf("centred NUTS vs GroupGibbs: max |z| %.2f (%s)", z, name)
	if z, name := maxZ(nc.sum, ref.sum); math.Abs(z) > 4.5 {
		t.Errorf("non-centred NUTS and GroupGibbs disagree: z = %.2f (%s)", z, name)
	} else {
		t.Logf("non-centred NUTS vs GroupGibbs: max |z| %.2f (%s)", z, name)
	}
	if z, name := maxZ(noJac.sum, ref.sum); !(math.Abs(z) > 6) {
		t.Errorf("the Jacobian dropped passes: z = %.2f (%s)", z, name)
	} else {
		t.Logf("Jacobian dropped: caught, z = %.1f (%s)", z, name)
	}
}

// noLogit hides a logistic energy's Logit (multilevel.LogitGLM), so that
// the automatic default takes the full-batch route of N < 2000 a
// multilevel model without the Pólya–Gamma sweep has.
type noLogit struct{ *model.SparseGLM[float64] }

func (noLogit) Logit() bool { return false }

// TestChooseMultilevelNonCentred checks that the automatic default on a
// small multilevel funnel (N < 2000: full-batch NUTS where the model has
// no augmentation sweep) chooses the non-centred NUTS and says why, and
// the centred one where every group's data pin its effect; the logistic
// model itself goes to the Pólya–Gamma sweep.
func TestChooseMultilevelNonCentred(t *testing.T) {
	_, pb, err := mcmctest.MultilevelModel{N: 120, Groups: 12}.Draw(rand.New(rand.NewPCG(37, 0)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := exactmh.Choose(context.Background(), pb.Posterior, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Kernel.(multilevel.GroupGibbs); !ok || !k.Augment || !strings.Contains(c.Reason, "Pólya–Gamma") {
		t.Errorf("logistic: choice %s (%T): %s; want the Pólya–Gamma sweep", c.Name, c.Kernel, c.Reason)
	}
	pb.Posterior.Energy = noLogit{pb.Posterior.Energy.(*model.SparseGLM[float64])}
	c, err = exactmh.Choose(context.Background(), pb.Posterior, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Kernel.(exactmh.NUTS); !ok || !k.NonCentred || c.Name != "NUTS-NC" || !strings.Contains(c.Reason, "non-centred") {
		t.Errorf("funnel: choice %s (%+v): %s; want NUTS-NC, saying why", c.Name, c.Kernel, c.Reason)
	} else {
		t.Logf("funnel: %s: %s", c.Name, c.Reason)
	}
	_, pb, err = mcmctest.MultilevelModel{N: 1800, Groups: 3}.Draw(rand.New(rand.NewPCG(38, 0)))
	if err != nil {
		t.Fatal(err)
	}
	pb.Posterior.Energy = noLogit{pb.Posterior.Energy.(*model.SparseGLM[float64])}
	c, err = exactmh.Choose(context.Background(), pb.Posterior, &exactmh.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Kernel.(exactmh.NUTS); !ok || k.NonCentred || c.Name != "NUTS" || !strings.Contains(c.Reason, "centred") {
		t.Errorf("groups of 300 or more: choice %s (%+v): %s; want the centred NUTS, saying why", c.Name, c.Kernel, c.Reason)
	} else {
		t.Logf("large groups: %s: %s", c.Name, c.Reason)
	}
}

var funnelMeasure = flag.Bool("funnel", false, "run TestNonCentredFunnelMeasure, which compares centred and non-centred NUTS on two multilevel funnels (figures/bench/noncentred_funnel.txt)")

// TestNonCentredFunnelMeasure logs, for NUTS centred and non-centred on
// the funnels mcmctest.MultilevelModel{N: 60, Groups: 12} and {N: 1000,
// Groups: 200} (a group of half the data, the others of 2 or 3), 4 chains
// × 1000 draws after 1000 of warmup: divergences, min bulk and tail ESS,
// gradient passes per draw, log τ's mean and sd, and the time. Run with
// -funnel; figures/bench/noncentred_funnel.txt holds its output.
func TestNonCentredFunnelMeasure(t *testing.T) {
	if !*funnelMeasure {
		t.Skip("a measurement: run with -funnel")
	}
	for _, m := range []mcmctest.MultilevelModel{{N: 60, Groups: 12}, {N: 1000, Groups: 200}} {
		_, pb, err := m.Draw(rand.New(rand.NewPCG(37, 0)))
		if err != nil {
			t.Fatal(err)
		}
		for _, nc := range []bool{false, true} {
			t0 := time.Now()
			r := runFunnel(t, pb.Posterior, exactmh.NUTS{NonCentred: nc}, pb.Mode, 1000)
			lt := r.sum.Params[len(r.sum.Params)-1]
			t.Logf("N = %d, G = %d, non-centred %t: divergent %d of 4000, min bulk ESS %.0f, min tail ESS %.0f, %.1f gradient passes per draw, %s %.3f ± %.3f (sd %.3f), %v",
				m.N, m.Groups, nc, r.divergent, r.minBulk, r.minTail, r.passes, lt.Name, lt.Mean, lt.MCSE, lt.SD, time.Since(t0).Round(time.Millisecond))
		}
	}
}

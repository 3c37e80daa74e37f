// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/model"
)

var sweep = flag.String("sweep", "", "kernels (comma-separated names, or all) whose efficiency TestTargetAcceptSweep measures against the target acceptance rate")

// TestTargetAcceptSweep measures, for each target acceptance rate of a
// grid, the efficiency of kernels adapted to it: the smallest bulk ESS
// over the coordinates per datum evaluation (energies and gradients) and
// per second of sampling. It is the measurement behind the kernels'
// DefaultTargetAccept; run it with
//
//	go test -run TestTargetAcceptSweep -sweep all -v .
//
// (or -sweep TunaMH,PoissonMH for some). The kernels run, from the MAP, on
// a small logistic posterior (N = 1000, d = 3, N(0, 10²) prior), on the
// same logistic regression restricted to a ball of radius 3 and tempered
// by β = 0.01 (where the kernels that need an energy range apply, and the
// Lipschitz-bounded ones mix), and on the examples' tempered Gaussian mean
// on a box.
func TestTargetAcceptSweep(t *testing.T) {
	if *sweep == "" {
		t.Skip("run with -sweep all (or -sweep NAME,NAME)")
	}
	lx, ly := simulateLogistic(1000, []float64{1, -1, 0.5}, 5)
	le, err := model.NewLogisticRegression(lx, ly, 3)
	if err != nil {
		t.Fatal(err)
	}
	gp, _ := model.NewIsoGaussian(3, 10)
	logistic := &exactmh.Posterior{Energy: le, Prior: gp}
	ball, _ := model.NewBall(3, 3, nil)
	boxed := &exactmh.Posterior{Energy: le, Prior: ball, Beta: 0.01}
	mode := func(p *exactmh.Posterior) []float64 {
		m, err := exactmh.FindMAP(context.Background(), p, make([]float64, 3), nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Theta
	}
	lmap, bmap := mode(logistic), mode(boxed)
	gauss := boxedGaussianPosterior() // the examples' tempered Gaussian mean on a box, N = 1000, d = 2
	gmode := []float64{1, -1}
	cases := []struct {
		target string
		post   *exactmh.Posterior
		init   []float64
		k      exactmh.Kernel
	}{
		{"logistic", logistic, lmap, exactmh.MH{}},
		{"logistic", logistic, lmap, exactmh.TunaMH{}},
		{"logistic", logistic, lmap, exactmh.TFMH{KeepMinibatch: true}},
		{"logistic", logistic, lmap, exactmh.SMH{KeepMinibatch: true, Order: 1, Center: lmap}},
		{"logistic", logistic, lmap, exactmh.SMH{KeepMinibatch: true, Order: 2, Center: lmap}},
		{"logistic", logistic, lmap, exactmh.FlyMC{TightAt: lmap, Q: 0.1}},
		{"logistic", logistic, lmap, exactmh.TunaMHSGLD{Chi: 1e-4, GradBatch: 20}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.MH{}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.TunaMH{}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.TFMH{KeepMinibatch: true}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.TunaMHSGLD{Chi: 1e-2, GradBatch: 20}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.PoissonMH{}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.PoissonBarker{}},
		{"tempered logistic on a ball", boxed, bmap, exactmh.PoissonMALA{}},
		{"tempered Gaussian mean on a box", gauss, gmode, exactmh.PoissonBarker{}},
		{"tempered Gaussian mean on a box", gauss, gmode, exactmh.PoissonMALA{}},
	}
	targets := []float64{0.1, 0.15, 0.234, 0.3, 0.35, 0.4, 0.45, 0.5, 0.574, 0.65, 0.75}
	for _, c := range cases {
		name := c.k.Name()
		if *sweep != "all" && !strings.Contains(","+*sweep+",", ","+name+",") {
			continue
		}
		var rows []string
		for _, acc := range targets {
			res, err := exactmh.Sample(context.Background(), c.post, c.k, &exactmh.Settings{
				Chains: 4, Warmup: 1000, Draws: 10000, Seed: 11, Init: c.init, TargetAccept: acc})
			if err != nil {
				t.Fatal(err)
			}
			ess := math.Inf(1)
			for j := range res.Dim {
				ess = math.Min(ess, diagnostics.ESSBulk(res.Samples(j)))
			}
			tot := res.Sampling()
			evals := float64(tot.Evals + tot.GradEvals)
			rows = append(rows, fmt.Sprintf("target %.3f: accept %.3f, scale %.3g, min bulk ESS %6.0f, evals/step %7.1f, ESS per 10⁶ evals %8.1f, ESS/s %8.0f",
				acc, tot.AcceptRate(), res.Chains[0].Scale, ess, evals/float64(tot.Steps), 1e6*ess/evals, ess/(tot.Time.Seconds()/float64(len(res.Chains)))))
		}
		t.Logf("%s on the %s:\n\t%s", name, c.target, strings.Join(rows, "\n\t"))
	}
}

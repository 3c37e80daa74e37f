// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/mcmctest"
)

// cvModel is a Model whose posteriors are rewritten with control variates
// about their own MAP (cvTarget): the rewrite depends on the data alone.
type cvModel struct {
	m     mcmctest.Model
	order int
}

func (m cvModel) Draw(rng *rand.Rand) ([]float64, mcmctest.Problem, error) {
	theta, pb, err := m.m.Draw(rng)
	if err != nil {
		return nil, pb, err
	}
	pb.Posterior, err = cvTarget(m.order)(pb)
	return theta, pb, err
}

// replicateIAT measures the integrated autocorrelation time of the chains
// SBC runs — the kernel newKernel builds at the fixed scale, started at
// the θ of a problem drawn from its own stream (seed, 1<<20 + k), which no
// replicate draws — over chains of n transitions after n/5 of burn-in: the
// number of draws over the smallest bulk ESS.
func replicateIAT(t *testing.T, m mcmctest.Model, newKernel func(mcmctest.Problem) exactmh.Kernel, scale float64, seed uint64, chains, n int) float64 {
	t.Helper()
	var tau float64
	for k := range chains {
		rng := rand.New(rand.NewPCG(seed, 1<<20+uint64(k)))
		theta, pb, err := m.Draw(rng)
		if err != nil {
			t.Fatal(err)
		}
		pb.Scale = scale
		tg, err := exactmh.NewTarget(pb.Posterior)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := newKernel(pb).Start(tg, theta)
		if err != nil {
			t.Fatal(err)
		}
		d := len(theta)
		x := make([][]float64, d)
		var acc int
		for s := range n + n/5 {
			info, err := ch.Step(rng)
			if err != nil {
				t.Fatal(err)
			}
			if s < n/5 {
				continue
			}
			if info.Accepted {
				acc++
			}
			for j, v := range ch.Position() {
				x[j] = append(x[j], v)
			}
		}
		ess := math.Inf(1)
		for j := range d {
			ess = math.Min(ess, diagnostics.ESSBulk([][]float64{x[j]}))
		}
		t.Logf("IAT chain %d: %d draws, acceptance %.3f, min bulk ESS %.1f, τ = %.1f", k, n, float64(acc)/float64(n), ess, float64(n)/ess)
		tau = math.Max(tau, float64(n)/ess)
	}
	return tau
}

// TestTunaMHLogisticSBC calibrates TunaMH with its default random walk
// and χ rule (ChiHeuristic at Start; no warmup) on plain logistic
// regressions, and on control variates about each data set's MAP, by SBC
// set up so that nothing but θ*'s posterior draw ties the chain to θ*: the
// step is fixed from the posterior's scale (N = 100 data under a N(0, 1)
// prior: posterior sds about 0.2-0.3), χ depends on that step and the c_i
// alone (the DiffBound's M is the Euclidean distance, not θ), and the
// thinning is 2.5 times the integrated autocorrelation time of the same
// chains on data sets no replicate draws (replicateIAT). Thinned less,
// an exact kernel fails: full-batch MH thinned by 2 on the first row's
// design rejects at p ≈ 6·10⁻⁴, ranks piled at 0, which a chain started at
// θ* shows until its draws forget θ*. The kernel's ejection mutant must be
// rejected at the same thinning. Not -short: about 20 CPU-s.
func TestTunaMHLogisticSBC(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 20 CPU-s; TestConformance's TunaMH rows hold the kernel's law")
	}
	const scale = 0.3
	lm := mcmctest.LogisticModel{N: 100, Dim: 2, PriorSD: 1}
	tuna := func(pb mcmctest.Problem) exactmh.Kernel { return exactmh.TunaMH{Scale: pb.Scale} }
	for _, row := range []struct {
		name   string
		m      mcmctest.Model
		reps   int
		mutant func(mcmctest.Problem) exactmh.Kernel
	}{
		{"plain, d 2, N 100", lm, 300, func(pb mcmctest.Problem) exactmh.Kernel {
			return exactmh.TunaMHEjectWithNew(exactmh.TunaMH{Scale: pb.Scale})
		}},
		{"plain, d 3, N 50", mcmctest.LogisticModel{N: 50, Dim: 3, PriorSD: 1}, 300, nil},
		{"control variates, d 2, N 100", cvModel{lm, 2}, 600, nil},
	} {
		t.Run(row.name, func(t *testing.T) {
			tau := replicateIAT(t, row.m, tuna, scale, 99, 2, 10000)
			opt := &mcmctest.SBCOptions{Replicates: row.reps, Thin: int(math.Ceil(2.5 * tau)), Scale: scale, Seed: 6}
			r, err := mcmctest.SBC(row.m, tuna, opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Reject(0.01) {
				t.Errorf("TunaMH rejected: %v", r)
			} else {
				t.Log(r)
			}
			if row.mutant == nil {
				return
			}
			opt.Replicates = 100
			r, err = mcmctest.SBC(row.m, row.mutant, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !r.Reject(1e-4) {
				t.Errorf("ejection mutant not rejected: %v", r)
			} else {
				t.Logf("ejection mutant: %v", r)
			}
		})
	}
}

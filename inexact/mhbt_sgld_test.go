// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package inexact_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/inexact"
)

// SGLDProposal's density is RSGLDProposal's when the two coincide (β = 1
// and g = 0: both mixture components are the forward move), and it is the
// Gaussian its draws follow (mean θ + εg, variance (√(2ε)/N)² per
// coordinate).
func TestSGLDProposal(t *testing.T) {
	q := inexact.SGLDProposal{Epsilon: 2e-3, N: 10}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []inexact.SGLDProposal{{Epsilon: 0, N: 1}, {Epsilon: math.Inf(1), N: 1}, {Epsilon: 1, N: 0}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validates", bad)
		}
	}
	from, to, zero := []float64{0.1, -0.2}, []float64{0.12, -0.19}, []float64{0, 0}
	r := inexact.RSGLDProposal{Epsilon: q.Epsilon, Beta: 1, N: q.N}
	if a, b := q.LogDensity(to, from, zero), r.LogDensity(to, from, zero); math.Abs(a-b) > 1e-12 {
		t.Errorf("log density %v, RSGLD's with β = 1, g = 0: %v", a, b)
	}
	g := []float64{3, -1}
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 100000
	s := math.Sqrt(2*q.Epsilon) / float64(q.N)
	dst := make([]float64, 2)
	var m0, v0 float64
	for range n {
		q.Draw(rng, dst, from, g)
		m0 += dst[0] / n
		v0 += (dst[0] - from[0] - q.Epsilon*g[0]) * (dst[0] - from[0] - q.Epsilon*g[0]) / n
	}
	if want := from[0] + q.Epsilon*g[0]; math.Abs(m0-want) > 4*s/math.Sqrt(n) || math.Abs(v0/(s*s)-1) > 0.02 {
		t.Errorf("draws: mean %v (want %v), variance %v (want %v)", m0, want, v0, s*s)
	}
}

// With m = N and c_n = N the batch is all the data and MHBT-SGLD is
// exact MH with the SGLD proposal: its draws have the posterior's moments.
// N = 1, where eq. (5)'s noise √(2ε)/N is Langevin's for the step ε, so
// that the proposal is MALA's and mixes (for larger N it is √N times too
// small for the posterior, and the chain crawls).
func TestMHBTSGLDExactLimit(t *testing.T) {
	t.Parallel()
	const d, n = 2, 1
	p, xbar := mhbtGaussian(t, d, n)
	set := &exactmh.Settings{Chains: 4, Warmup: 1000, Draws: 8000, Seed: 3, TargetAccept: 0.5, Init: xbar}
	if testing.Short() {
		set.Draws = 4000
	}
	res, err := exactmh.Sample(context.Background(), p, inexact.MHBT{BatchSize: n, Cn: n, SGLD: true, Scale: 0.1}, set)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kernel != "MHBT-SGLD" || res.Exact {
		t.Errorf("kernel %q, exact %v", res.Kernel, res.Exact)
	}
	wantVar := 1.0 / (n + 1)
	for j := range d {
		m, mse, v, vse := pooledMoments(res, j)
		want := n * xbar[j] / (n + 1)
		if math.Abs(m-want) > 4*mse || math.Abs(v-wantVar) > 4*vse {
			t.Errorf("θ%d: mean %.4f ± %.4f (want %.4f), variance %.5f ± %.5f (want %.5f)", j, m, mse, want, v, vse, wantVar)
		}
	}
	t.Logf("MHBT-SGLD (m = N, c_n = N): accept %.3f, ε %.3g", res.Sampling().AcceptRate(), res.Chains[0].Scale)
}

// RefreshOnReject is what the test hook MHBTRefreshOnReject does (the
// paper's reference code's rule): the same draws, bit for bit, for the
// random walk and RSGLD; and the name says so.
func TestMHBTRefreshOnRejectOption(t *testing.T) {
	t.Parallel()
	p, xbar := mhbtGaussian(t, 2, 2000)
	set := &exactmh.Settings{Chains: 2, Warmup: 100, Draws: 300, Seed: 4, Init: xbar}
	for _, k := range []inexact.MHBT{{BatchSize: 100, Scale: 0.05}, {BatchSize: 100, RSGLD: true, Beta: 2, Scale: 1e-3}} {
		opt := k
		opt.RefreshOnReject = true
		a, err := exactmh.Sample(context.Background(), p, opt, set)
		if err != nil {
			t.Fatal(err)
		}
		b, err := exactmh.Sample(context.Background(), p, inexact.MHBTRefreshOnReject(k), set)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Chains[1].Draws, b.Chains[1].Draws) {
			t.Errorf("%s: RefreshOnReject differs from the reference code's rule", k.Name())
		}
		if want := k.Name() + "-refresh"; a.Kernel != want {
			t.Errorf("name %q, want %q", a.Kernel, want)
		}
		if a.Sampling().Evals <= b.Sampling().Evals-1 || a.Sampling().AcceptRate() == 1 {
			t.Logf("evals %d vs %d", a.Sampling().Evals, b.Sampling().Evals)
		}
	}
	if _, err := exactmh.Sample(context.Background(), p, inexact.MHBT{RSGLD: true, SGLD: true}, set); err == nil {
		t.Error("RSGLD and SGLD together: no error")
	}
}

func BenchmarkMHBTSGLDStepLogistic(b *testing.B) {
	benchmarkKernel(b, tallLogistic(b), inexact.MHBT{SGLD: true, Scale: 1e-9})
}

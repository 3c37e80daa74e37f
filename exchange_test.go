// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"github.com/exactmh/exactmh/inexact"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
)

// isingData simulates m replicates of an l×l Ising lattice at coupling j
// by coupling from the past and returns the model observing them.
func isingData(t testing.TB, l, m int, j float64, seed uint64) *model.Ising {
	t.Helper()
	placeholder, err := model.NewIsing(l, slices.Repeat([]int8{1}, m*l*l))
	if err != nil {
		t.Fatal(err)
	}
	d := placeholder.NewData()
	if err := placeholder.Simulate(rand.New(rand.NewPCG(seed, 1)), []float64{j}, d); err != nil {
		t.Fatal(err)
	}
	ising, err := model.NewIsing(l, d.Spins)
	if err != nil {
		t.Fatal(err)
	}
	return ising
}

// isingPosterior is the exchange algorithm's posterior: the Ising model
// under a uniform prior on J ∈ [0, hi].
func isingPosterior(t testing.TB, ising *model.Ising, hi float64) *exactmh.Posterior {
	t.Helper()
	box, err := model.NewBox([]float64{0}, []float64{hi})
	if err != nil {
		t.Fatal(err)
	}
	return &exactmh.Posterior{Energy: exactmh.IntractableLikelihood[*model.IsingData]{Model: ising}, Prior: box}
}

// stateStats enumerates the 2^{l²} states of one l×l lattice and returns
// S(x) of each (the state's index is its spins' bits, site k up if bit k
// is set).
func stateStats(t testing.TB, l int) []float64 {
	one, err := model.NewIsing(l, slices.Repeat([]int8{1}, l*l))
	if err != nil {
		t.Fatal(err)
	}
	d := one.NewData()
	s := make([]float64, 1<<(l*l))
	for code := range s {
		for k := range d.Spins {
			d.Spins[k] = int8(2*((code>>k)&1) - 1)
		}
		s[code] = one.UnnormLogLik([]float64{1}, d)
	}
	return s
}

// TestIsingCFTP checks that coupling from the past draws from the Ising
// distribution: the frequencies of all 512 states of a 3×3 lattice against
// p_J(x) ∝ exp(J·S(x)) by a chi-square test (cells with expected count
// below 5 pooled), at a weak and a strong coupling. Also LogPartition
// against the enumeration.
func TestIsingCFTP(t *testing.T) {
	const l = 3
	stats := stateStats(t, l)
	draws := 40000
	if testing.Short() {
		draws = 15000
	}
	for _, j := range []float64{0, 0.4, 0.9} {
		ising := isingData(t, l, 1, j, 7)
		var z float64
		for _, s := range stats {
			z += math.Exp(j * s)
		}
		lz, err := ising.LogPartition(j)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lz-math.Log(z)) > 1e-12*math.Abs(math.Log(z)) {
			t.Errorf("J = %v: LogPartition = %v, enumeration %v", j, lz, math.Log(z))
		}
		counts := make([]float64, len(stats))
		d := ising.NewData()
		rng := rand.New(rand.NewPCG(11, uint64(100*j)))
		for range draws {
			if err := ising.Simulate(rng, []float64{j}, d); err != nil {
				t.Fatal(err)
			}
			var code int
			for k, s := range d.Spins {
				if s == 1 {
					code |= 1 << k
				}
			}
			counts[code]++
		}
		var chi2, poolObs, poolExp float64
		cells := 0
		for code, s := range stats {
			e := float64(draws) * math.Exp(j*s) / z
			if e < 5 {
				poolObs += counts[code]
				poolExp += e
				continue
			}
			chi2 += (counts[code] - e) * (counts[code] - e) / e
			cells++
		}
		if poolExp > 0 {
			chi2 += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
			cells++
		}
		p := distuv.ChiSquared{K: float64(cells - 1)}.Survival(chi2)
		t.Logf("J = %v: chi² = %.1f on %d df, p = %.3f", j, chi2, cells-1, p)
		if p < 1e-4 {
			t.Errorf("J = %v: CFTP frequencies differ from the Ising distribution: chi² = %.1f on %d df (p = %.2g)", j, chi2, cells-1, p)
		}
	}
}

// exactAccept returns the exchange algorithm's exact acceptance
// probability from a to b on an Ising model with m replicates whose
// observed statistic is sObs: E_{ω ~ p_b}[a(r)], r = exp((b − a)(S(x) −
// S(ω))), the law of S(ω) = Σ_r S(ω_r) from the enumerated states
// (stats) by convolution. simAt is the coupling ω is drawn at (b, or a
// for the mutant).
func exactAccept(stats []float64, m int, sObs, a, b, simAt float64, acc exactmh.Acceptance) float64 {
	// The law of one lattice's S at simAt, on integer levels.
	lo, hi := slices.Min(stats), slices.Max(stats)
	one := make([]float64, int(hi-lo)+1)
	var z float64
	for _, s := range stats {
		w := math.Exp(simAt * s)
		one[int(s-lo)] += w
		z += w
	}
	for k := range one {
		one[k] /= z
	}
	law := []float64{1}
	for range m {
		next := make([]float64, len(law)+len(one)-1)
		for i, p := range law {
			for k, q := range one {
				next[i+k] += p * q
			}
		}
		law = next
	}
	var alpha float64
	for k, p := range law {
		s := float64(m)*lo + float64(k)
		alpha += p * acc.Prob((b-a)*(sObs-s))
	}
	return alpha
}

// TestExchangePairwise is the exchange algorithm's exact detailed-balance
// test. On a pair {A, B} (mcmctest.SwapProposal) the kernel's acceptance
// probabilities are computed exactly by enumerating the 2^9 states of a
// 3×3 lattice; they must satisfy π(A)α(A→B) = π(B)α(B→A) with π from the
// enumerated Z(J) (to 1e-12: the algorithm), and the chain's acceptance
// frequencies must match them (z < 4.5 on 10⁵ decisions: the code), for
// Metropolis and Barker acceptance; the mutant that simulates at θ must be
// caught.
func TestExchangePairwise(t *testing.T) {
	const l, m = 3, 2
	stats := stateStats(t, l)
	ising := isingData(t, l, m, 0.35, 3)
	sObs := ising.UnnormLogLik([]float64{1}, ising.Observed())
	post := isingPosterior(t, ising, 1)
	a, b := []float64{0.3}, []float64{0.55}
	logPost := func(j float64) float64 {
		lz, err := ising.LogPartition(j)
		if err != nil {
			t.Fatal(err)
		}
		return j*sObs - m*lz
	}
	steps := 100000
	if testing.Short() {
		steps = 40000
	}
	run := func(k exactmh.Kernel) (fromA, accA, fromB, accB int) {
		tg, err := exactmh.NewTarget(post)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := k.Start(tg, a)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 0))
		for range steps {
			atA := ch.Position()[0] == a[0]
			info, err := ch.Step(rng)
			if err != nil {
				t.Fatal(err)
			}
			if atA {
				fromA++
				if info.Accepted {
					accA++
				}
			} else {
				fromB++
				if info.Accepted {
					accB++
				}
			}
		}
		return
	}
	zOf := func(acc, from int, p float64) float64 {
		return (float64(acc) - float64(from)*p) / math.Sqrt(float64(from)*p*(1-p))
	}
	swap := mcmctest.SwapProposal{A: a, B: b}
	for _, acc := range []exactmh.Acceptance{exactmh.AcceptMetropolis, exactmh.AcceptBarker} {
		alphaAB := exactAccept(stats, m, sObs, a[0], b[0], b[0], acc)
		alphaBA := exactAccept(stats, m, sObs, b[0], a[0], a[0], acc)
		lhs, rhs := logPost(a[0])+math.Log(alphaAB), logPost(b[0])+math.Log(alphaBA)
		if math.Abs(lhs-rhs) > 1e-12*math.Abs(lhs) {
			t.Errorf("%v: log π(A)α(A→B) = %.15g, log π(B)α(B→A) = %.15g", acc, lhs, rhs)
		}
		fromA, accA, fromB, accB := run(exactmh.Exchange[*model.IsingData]{Proposal: swap, Accept: acc})
		za, zb := zOf(accA, fromA, alphaAB), zOf(accB, fromB, alphaBA)
		t.Logf("%v: α(A→B) = %.5f exact, %d/%d (z = %.2f); α(B→A) = %.5f exact, %d/%d (z = %.2f)",
			acc, alphaAB, accA, fromA, za, alphaBA, accB, fromB, zb)
		if math.Abs(za) > 4.5 || math.Abs(zb) > 4.5 {
			t.Errorf("%v: acceptance frequencies differ from the exact probabilities (z = %.2f, %.2f)", acc, za, zb)
		}
		// The mutant draws ω at θ: its acceptance probabilities are
		// E_{ω ~ p_θ}[a(r)], which break detailed balance.
		mutAB := exactAccept(stats, m, sObs, a[0], b[0], a[0], acc)
		mutBA := exactAccept(stats, m, sObs, b[0], a[0], b[0], acc)
		fromA, accA, fromB, accB = run(exactmh.ExchangeSimulateAtCurrent(exactmh.Exchange[*model.IsingData]{Proposal: swap, Accept: acc}))
		za, zb = zOf(accA, fromA, alphaAB), zOf(accB, fromB, alphaBA)
		t.Logf("%v mutant: α(A→B) = %.5f (%d/%d), α(B→A) = %.5f (%d/%d): z = %.1f, %.1f against the exact kernel; log π(A)α(A→B) − log π(B)α(B→A) = %.3f",
			acc, mutAB, accA, fromA, mutBA, accB, fromB, za, zb, logPost(a[0])+math.Log(mutAB)-logPost(b[0])-math.Log(mutBA))
		if math.Abs(za) < 6 && math.Abs(zb) < 6 {
			t.Errorf("%v: the mutant that simulates at θ was not caught (z = %.2f, %.2f)", acc, za, zb)
		}
	}
}

// TestExchangeIsingPosterior runs the exchange algorithm on a 4×4 Ising
// model with three replicates and checks its posterior mean and variance
// of J against the exact ones (enumeration of the 2^16 states and
// quadrature) within 4.5 Monte Carlo standard errors, for both acceptance
// functions; the mutant that simulates at θ is biased by more than 6.
func TestExchangeIsingPosterior(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow statistical check (4×20,000 exchange draws per acceptance function and mutant against the exact posterior): runs without -short")
	}
	const hi = 1.0
	ising := isingData(t, 4, 3, 0.35, 1)
	post := isingPosterior(t, ising, hi)
	mean, variance, err := ising.ExactMoments(0, hi)
	if err != nil {
		t.Fatal(err)
	}
	draws := 20000
	run := func(k exactmh.Kernel) (z []float64) {
		res, err := exactmh.Sample(context.Background(), post, k,
			&exactmh.Settings{Chains: 4, Warmup: 500, Draws: draws, Init: []float64{mean}, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		x := res.Samples(0)
		sq := make([][]float64, len(x))
		for c, xc := range x {
			sq[c] = make([]float64, len(xc))
			for i, v := range xc {
				sq[c][i] = (v - mean) * (v - mean)
			}
		}
		m, mv := res.Mean()[0], diagnostics.MCSEMean(x)
		v, vv := 0.0, diagnostics.MCSEMean(sq)
		for _, s := range sq {
			for _, q := range s {
				v += q
			}
		}
		v /= float64(len(sq) * len(sq[0]))
		t.Logf("%s: mean %.5f ± %.5f (exact %.5f), variance %.6f ± %.6f (exact %.6f), acceptance %.2f",
			k.Name(), m, mv, mean, v, vv, variance, res.Sampling().AcceptRate())
		return []float64{(m - mean) / mv, (v - variance) / vv}
	}
	for _, acc := range []exactmh.Acceptance{exactmh.AcceptMetropolis, exactmh.AcceptBarker} {
		if z := run(exactmh.Exchange[*model.IsingData]{Accept: acc}); math.Abs(z[0]) > 4.5 || math.Abs(z[1]) > 4.5 {
			t.Errorf("%v: posterior moments differ from the exact ones by z = %.2f (mean), %.2f (variance)", acc, z[0], z[1])
		}
	}
	if z := run(exactmh.ExchangeSimulateAtCurrent(exactmh.Exchange[*model.IsingData]{})); math.Abs(z[0]) < 6 && math.Abs(z[1]) < 6 {
		t.Errorf("the mutant that simulates at θ was not caught: z = %.2f (mean), %.2f (variance)", z[0], z[1])
	}
}

// TestIntractableRefused checks that no kernel but Exchange runs on a
// doubly-intractable posterior — each refuses it at Start with an error
// wrapping ErrIntractable — and that Exchange refuses an ordinary one.
func TestIntractableRefused(t *testing.T) {
	ising := isingData(t, 3, 1, 0.3, 1)
	post := isingPosterior(t, ising, 1)
	aux := exactmh.Aux[struct{}, struct{}]{Scheme: refusedScheme{}}
	for _, k := range []exactmh.Kernel{
		exactmh.MH{}, exactmh.MALA{}, exactmh.HMC{}, exactmh.NUTS{}, exactmh.TunaMH{Chi: 1},
		exactmh.PoissonMH{}, exactmh.PoissonBarker{}, exactmh.PoissonMALA{}, exactmh.TunaMHSGLD{Chi: 1},
		exactmh.FlyMC{}, exactmh.TFMH{}, exactmh.SMH{Order: 1, Center: []float64{0.3}}, inexact.AustereMH{},
		inexact.MHBT{}, aux,
	} {
		_, err := exactmh.Sample(context.Background(), post, k, &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: []float64{0.3}})
		if !errors.Is(err, exactmh.ErrIntractable) {
			t.Errorf("%s on a doubly-intractable posterior: err = %v, want ErrIntractable", k.Name(), err)
		}
	}
	// The automatic choice reaches a kernel only through FindMAP, which
	// stops at the first NaN energy.
	if _, err := exactmh.Sample(context.Background(), post, nil, &exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: []float64{0.3}}); err == nil {
		t.Error("the automatic default sampled a doubly-intractable posterior")
	} else {
		t.Logf("automatic default: %v", err)
	}
	// Nor does anything else that evaluates the energy.
	if _, err := post.LogDensity([]float64{0.3}); err == nil {
		t.Error("LogDensity evaluated a doubly-intractable posterior")
	}
	g := boxed(t, 20, 1)
	if _, err := exactmh.Sample(context.Background(), g.Posterior, exactmh.Exchange[*model.IsingData]{},
		&exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: g.Mean}); err == nil {
		t.Error("Exchange sampled a posterior with an ordinary Energy")
	}
	tempered := *post
	tempered.Beta = 0.5
	if _, err := exactmh.Sample(context.Background(), &tempered, exactmh.Exchange[*model.IsingData]{},
		&exactmh.Settings{Chains: 1, Warmup: 10, Draws: 10, Init: []float64{0.3}}); err == nil {
		t.Error("Exchange sampled a tempered doubly-intractable posterior")
	}
}

// refusedScheme is an Aux scheme that must never start on an
// IntractableLikelihood.
type refusedScheme struct{}

func (refusedScheme) Name() string { return "refused" }
func (refusedScheme) Start(*exactmh.Target, []float64) (exactmh.AuxChain[struct{}, struct{}], error) {
	return nil, errors.New("refusedScheme started")
}

// TestExchangeStructural holds the exchange kernel to the kit's structural
// checks: no allocation per step (CFTP's scratch lives in the chain's
// synthetic data set), checkpoints that resume bit for bit, draws
// independent of the workers, honest Info.
func TestExchangeStructural(t *testing.T) {
	ising := isingData(t, 3, 2, 0.35, 1)
	post := isingPosterior(t, ising, 1)
	for _, acc := range []exactmh.Acceptance{exactmh.AcceptMetropolis, exactmh.AcceptBarker} {
		k := exactmh.Exchange[*model.IsingData]{Accept: acc}
		a, err := mcmctest.AllocsPerStep(k, post, []float64{0.3}, 500)
		if err != nil {
			t.Fatal(err)
		}
		if a != 0 {
			t.Errorf("%s: %v allocations per step, want 0", k.Name(), a)
		}
		set := exactmh.Settings{Chains: 2, Warmup: 40, Draws: 40, Init: []float64{0.3}, Seed: 9}
		if err := mcmctest.CheckCheckpoint(post, k, set); err != nil {
			t.Errorf("%s: %v", k.Name(), err)
		}
		if err := mcmctest.CheckWorkers(post, k, set); err != nil {
			t.Errorf("%s: %v", k.Name(), err)
		}
		if err := mcmctest.CheckInfo(post, k, set, false); err != nil {
			t.Errorf("%s: %v", k.Name(), err)
		}
	}
}

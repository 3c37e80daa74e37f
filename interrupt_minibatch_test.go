// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package exactmh_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/mcmctest"
	"github.com/exactmh/exactmh/model"
	"github.com/exactmh/exactmh/multilevel"
)

// multilevelProblem is the conformance kit's multilevel logistic
// regression (mcmctest.MultilevelModel) of n data in groups groups, a
// random intercept and slope each, drawn from seed, with its Laplace-EM
// centre as Mode.
func multilevelProblem(t *testing.T, n, groups int, seed uint64) mcmctest.Problem {
	t.Helper()
	_, pb, err := mcmctest.MultilevelModel{N: n, Groups: groups, Slope: true}.Draw(rand.New(rand.NewPCG(seed, seed+1)))
	if err != nil {
		t.Fatal(err)
	}
	return pb
}

// ticker counts the calls of a pass's chunks (or data) and cancels the
// run at its at'th.
type ticker struct {
	at     int64
	calls  atomic.Int64
	cancel context.CancelFunc
	slow   atomic.Int64 // the ticks after the cancellation slowed down
}

func (c *ticker) tick() {
	n := c.calls.Add(1)
	switch {
	case n == c.at && c.cancel != nil:
		c.cancel()
		// Leave the goroutine that context.AfterFunc starts time to set
		// the flag before the next chunk.
		time.Sleep(100 * time.Millisecond)
	case c.at > 0 && n > c.at && c.slow.Add(1) <= 50:
		// On a loaded machine (load 25 on 2 cores) that goroutine can
		// wait longer: the next 50 ticks give it 4 ms each.
		time.Sleep(4 * time.Millisecond)
	}
}

// tickGLM is a logistic regression, with all its bounds and fast paths,
// whose chunked calls — the energies and differences of a full-batch
// step, the gradients, FlyMC's gaps — tick.
type tickGLM struct {
	*model.LogisticRegression
	*ticker
}

func (e tickGLM) Energies(dst, theta []float64, idx []int) {
	e.tick()
	e.LogisticRegression.Energies(dst, theta, idx)
}
func (e tickGLM) EnergyDiffs(dst, theta, next []float64, idx []int) {
	e.tick()
	e.LogisticRegression.EnergyDiffs(dst, theta, next, idx)
}
func (e tickGLM) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.tick()
	e.LogisticRegression.AddGradient(grad, theta, idx, w)
}
func (e tickGLM) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	e.tick()
	e.LogisticRegression.EnergiesAndGradient(dst, grad, theta, idx, w)
}
func (e tickGLM) FlyBound(at []float64, prior exactmh.Prior) (exactmh.FlyBound, error) {
	b, err := e.LogisticRegression.FlyBound(at, prior)
	return tickBound{b, e.ticker}, err
}

type tickBound struct {
	exactmh.FlyBound
	*ticker
}

func (b tickBound) Gaps(dst, theta []float64, idx []int) {
	b.tick()
	b.FlyBound.Gaps(dst, theta, idx)
}

// tickPosterior is a logistic regression of n data (d = 3) under a
// Gaussian prior, or, with beta > 0, tempered on a ball (the Poisson
// kernels' bounded support).
func tickPosterior(t testing.TB, n int, beta float64) (*ticker, *exactmh.Posterior) {
	x, y := simulateLogistic(n, []float64{1, -1, 0.5}, 5)
	e, err := model.NewLogisticRegression(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	tk := &ticker{}
	p := &exactmh.Posterior{Energy: tickGLM{e, tk}}
	if beta > 0 {
		p.Prior, _ = model.NewBall(3, 3, nil)
		p.Beta = beta
	} else {
		p.Prior, _ = model.NewIsoGaussian(3, 10)
	}
	return tk, p
}

// tickEnergy is a logistic regression seen only through the Energy and
// EnergyDiffer methods, so that every kernel reads it one call (one tick)
// per datum or chunk rather than through the GLM fast paths.
type tickEnergy struct {
	e *model.LogisticRegression
	*ticker
}

func (e tickEnergy) Len() int { return e.e.Len() }
func (e tickEnergy) AddGradient(grad, theta []float64, idx []int, w []float64) {
	e.tick()
	e.e.AddGradient(grad, theta, idx, w)
}
func (e tickEnergy) Dim() int { return e.e.Dim() }
func (e tickEnergy) Energies(dst, theta []float64, idx []int) {
	e.tick()
	e.e.Energies(dst, theta, idx)
}

// TaylorBound returns the logistic regression's bounds 3 times looser
// (still bounds), so that SMH's minibatches run to several chunks.
func (e tickEnergy) TaylorBound(order int, prior exactmh.Prior) ([]float64, error) {
	b, err := e.e.TaylorBound(order, prior)
	for i := range b {
		b[i] *= 3
	}
	return b, err
}
func (e tickEnergy) EnergyDiffs(dst, theta, next []float64, idx []int) {
	e.tick()
	e.e.EnergyDiffs(dst, theta, next, idx)
}

// ticksAt records the ticks counted at the end of each transition.
type ticksAt struct {
	tk   *ticker
	ends []int64
}

func (r *ticksAt) Init(exactmh.RunInfo) error { return nil }
func (r *ticksAt) Record(*exactmh.Event) error {
	r.ends = append(r.ends, r.tk.calls.Load())
	return nil
}

// checkInterruptResume runs k uninterrupted, then cancels it from inside
// each transition of cuts (or the next that reads 8 ticks or more) — 3
// ticks into it, and two thirds of the way through — and checks each
// cut (checkCut).
func checkInterruptResume(t *testing.T, name string, k exactmh.Kernel, post func() (*ticker, *exactmh.Posterior), base exactmh.Settings, cuts []int) {
	t.Helper()
	tk, p := post()
	rec := &ticksAt{tk: tk}
	set := base
	set.Recorder = rec
	whole, err := exactmh.Sample(context.Background(), p, k, &set)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, it := range cuts {
		if it < 1 || it >= len(rec.ends) {
			t.Fatalf("%s: no transition %d of %d", name, it, len(rec.ends))
		}
		for it+1 < len(rec.ends) && rec.ends[it]-rec.ends[it-1] < 8 {
			it++ // a proposal outside the support reads nothing
		}
		lo, hi := rec.ends[it-1], rec.ends[it]
		if hi-lo < 8 {
			t.Fatalf("%s: transition %d reads %d chunks, want ≥ 8 (a full-batch step)", name, it, hi-lo)
		}
		for _, at := range []int64{lo + 3, lo + (hi-lo)*2/3} {
			checkCut(t, name, k, post, base, whole, it, at, hi)
		}
	}
}

// checkCut cancels k's run at tick at, inside transition it (which ends
// at tick hi in the uninterrupted run whole), checks that the transition
// was abandoned (it read less than half of what was left of it after the
// cancellation) and not counted, checkpoints the run, resumes it and
// compares the draws, the counts and the chain's parameters with the
// uninterrupted run's.
func checkCut(t *testing.T, name string, k exactmh.Kernel, post func() (*ticker, *exactmh.Posterior), base exactmh.Settings, whole *exactmh.Result, it int, at, hi int64) {
	t.Helper()
	tk, p := post()
	ctx, cancel := context.WithCancel(context.Background())
	tk.at, tk.cancel = at, cancel
	set := base
	part, err := exactmh.Sample(ctx, p, k, &set)
	cancel()
	if part == nil || part.Status != exactmh.Canceled || err == nil {
		t.Fatalf("%s: cut in transition %d: %v", name, it, err)
	}
	after := tk.calls.Load() - tk.at
	t.Logf("%s: cancelled at tick %d of transition %d (%d ticks left): %d ticks after", name, at, it, hi-at, after)
	if after >= (hi-at)/2 {
		t.Errorf("%s: %d ticks read after the cancellation in transition %d (of %d left): not abandoned", name, after, it, hi-at)
	}
	if got := part.Chains[0].Len() + part.Warmup().Steps; got != it {
		t.Errorf("%s: cut in transition %d kept %d transitions", name, it, got)
	}
	var buf bytes.Buffer
	if err := part.Checkpoint(&buf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_, p2 := post()
	loaded, err := exactmh.LoadCheckpoint(&buf, p2, k, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res, err := exactmh.Resume(context.Background(), loaded, 0)
	if err != nil {
		t.Fatalf("%s: resume: %v", name, err)
	}
	if a, b := whole.Chains[0], res.Chains[0]; !slices.Equal(a.Draws, b.Draws) || a.Scale != b.Scale && !(math.IsNaN(a.Scale) && math.IsNaN(b.Scale)) {
		t.Fatalf("%s: cut in transition %d: %d draws vs %d, or different values, scale %v vs %v", name, it, b.Len(), a.Len(), b.Scale, a.Scale)
	}
	if a, b := whole.Warmup(), res.Warmup(); a.Evals != b.Evals || a.Accepted != b.Accepted || a.Batch != b.Batch {
		t.Errorf("%s: cut in transition %d: warmup totals %+v vs %+v", name, it, b, a)
	}
	if a, b := whole.Sampling(), res.Sampling(); a.Evals != b.Evals || a.GradEvals != b.GradEvals || a.Batch != b.Batch {
		t.Errorf("%s: cut in transition %d: sampling totals %+v vs %+v", name, it, b, a)
	}
	if a, b := whole.Chains[0].Params, res.Chains[0].Params; !maps.Equal(a, b) {
		t.Errorf("%s: cut in transition %d: parameters %v vs %v", name, it, b, a)
	}
}

// TestInterruptFullBatchFallback is issue 31 item 13 for the minibatch
// kernels: a run cancelled inside a transition that reads all N data —
// a full-batch MH step that TunaMH, PoissonMH, Poisson-Barker,
// Poisson-MALA, TunaMH-SGLD, TFMH and SMH fall back to (a MaxBatch or
// MaxRate of 1 makes every step one), or FlyMC's z-step and θ-step over
// its bright data (untuned bounds: most of them) — stops within a chunk
// of data, and resumes through a checkpoint to the uninterrupted run's
// draws, counts and chain parameters. TunaMH's cuts include the
// transition at whose start warmup re-chooses χ (its 50th), which
// abandonStep takes back.
func TestInterruptFullBatchFallback(t *testing.T) {
	const n = 8 * 512
	plain := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0) }
	ball := func() (*ticker, *exactmh.Posterior) { return tickPosterior(t, n, 0.05) }
	base := exactmh.Settings{Chains: 1, Warmup: 120, Draws: 40, Seed: 7}
	perDatum := func() (*ticker, *exactmh.Posterior) {
		tk, p := plain()
		p.Energy = tickEnergy{p.Energy.(tickGLM).LogisticRegression, tk}
		return tk, p
	}
	_, p0 := plain()
	loose, err := p0.DiffBound()
	if err != nil {
		t.Fatal(err)
	}
	for i := range loose.C {
		loose.C[i] *= 300
	}
	cases := []struct {
		k    exactmh.Kernel
		post func() (*ticker, *exactmh.Posterior)
	}{
		{exactmh.TunaMH{MaxBatch: 1}, plain},
		{exactmh.TunaMHSGLD{Chi: 1e-4, MaxBatch: 1}, plain},
		{exactmh.TFMH{MaxRate: 1}, plain},
		{exactmh.SMH{Order: 1, Center: []float64{1, -1, 0.5}, MaxRate: 1}, plain},
		// No fallback, and a bound 300 times looser than the posterior's
		// (still a bound) on an energy without the logistic fast path (a
		// tick per datum): minibatches of several chunks, cut inside them.
		{exactmh.TFMH{MaxRate: math.Inf(1), Bound: loose}, perDatum},
		{exactmh.SMH{Order: 1, Center: []float64{1, -1, 0.5}, MaxRate: math.Inf(1)}, perDatum},
		{exactmh.FlyMC{Q: 0.5}, plain},
		{exactmh.PoissonMH{MaxBatch: 1}, ball},
		{exactmh.PoissonBarker{MaxBatch: 1}, ball},
		{exactmh.PoissonMALA{MaxBatch: 1}, ball},
	}
	cuts := []int{49, 140} // mid-warmup, mid-sampling
	if testing.Short() {
		// One cut, mid-warmup, in a run that ends soon after it.
		cuts = cuts[:1]
		base.Warmup, base.Draws = 60, 5
	}
	for _, c := range cases {
		checkInterruptResume(t, c.k.Name(), c.k, c.post, base, cuts)
	}
}

// tickSparse is a multilevel model's sparse-row GLM whose every datum's
// linear predictors tick (GroupGibbs and GroupSMH read their data so).
type tickSparse struct {
	*model.SparseGLM[float64]
	*ticker
}

func (e tickSparse) LinearPredictors(i int, theta, next []float64) (z, zn float64) {
	e.tick()
	return e.SparseGLM.LinearPredictors(i, theta, next)
}

// TestInterruptGroupExactReads is issue 31 item 13 for the multilevel
// kernels: GroupGibbs, whose sweep reads the data of each block whose
// groups are below ExactBelow exactly, and GroupSMH, which reads such
// data every step (and falls back to a full-batch MH step above
// MaxRate), cancelled inside a transition (a datum read counts as a
// tick here), stop within a chunk of the reads in progress, and resume
// through a checkpoint to the uninterrupted run's draws and counts — for
// GroupGibbs with the blocks its abandoned sweep had already updated
// put back.
func TestInterruptGroupExactReads(t *testing.T) {
	pb := multilevelProblem(t, 1500, 8, 3)
	post := func() (*ticker, *exactmh.Posterior) {
		tk := &ticker{}
		p := *pb.Posterior
		p.Energy = tickSparse{pb.Posterior.Energy.(*model.SparseGLM[float64]), tk}
		return tk, &p
	}
	base := exactmh.Settings{Chains: 1, Warmup: 30, Draws: 20, Seed: 5, Init: pb.Mode}
	// Every group's data read exactly.
	gs := multilevel.GroupSMH{Center: pb.Mode, Proposal: exactmh.RandomWalk{Sigma: pb.SD}, Free: pb.SD, ExactBelow: 1 << 30}
	cases := []exactmh.Kernel{multilevel.GroupGibbs{Center: pb.Mode, ExactBelow: 1 << 30}, gs}
	cuts := []int{20, 40} // mid-warmup, mid-sampling
	if testing.Short() {
		cuts, base.Draws = cuts[:1], 5
	}
	for _, k := range cases {
		checkInterruptResume(t, k.Name(), k, post, base, cuts)
	}
}

// stageTicker ticks only once armed, by a ChoiceProgress step that
// contains its stage's words, and cancels at its at'th tick after that.
type stageTicker struct {
	ticker
	stage string
	armed atomic.Bool
}

func (s *stageTicker) progress(step string) {
	if strings.Contains(step, s.stage) {
		s.armed.Store(true)
	}
}

func (s *stageTicker) tickArmed() {
	if s.armed.Load() {
		s.tick()
	}
}

// cvTickGLM is a logistic regression whose LossDerivs tick: the control
// variates' pass reads each datum's f′ and f″ through it.
type cvTickGLM struct {
	*model.LogisticRegression
	*stageTicker
}

func (e cvTickGLM) LossDerivs(i int, z float64) (f1, f2 float64) {
	e.tickArmed()
	return e.LogisticRegression.LossDerivs(i, z)
}

// mlTickGLM is a multilevel model's sparse-row GLM whose energies tick:
// the Laplace-EM centre's passes read them.
type mlTickGLM struct {
	*model.SparseGLM[float64]
	*stageTicker
}

func (e mlTickGLM) Energies(dst, theta []float64, idx []int) {
	e.tickArmed()
	e.SparseGLM.Energies(dst, theta, idx)
}
func (e mlTickGLM) EnergiesAndGradient(dst, grad, theta []float64, idx []int, w []float64) {
	e.tickArmed()
	e.SparseGLM.EnergiesAndGradient(dst, grad, theta, idx, w)
}

// TestChooseInterrupted is issue 31 item 13 for the automatic default's
// passes over the data before its pilots: Choose cancelled halfway
// through the control variates' pass (counted in data) or within the
// Laplace-EM centre of a multilevel model (counted in chunks) returns
// the context's error having read at most a chunk more of that pass.
func TestChooseInterrupted(t *testing.T) {
	const n = 40_000 // one block (parallel.go): the pass is sequential
	x, y := simulateLogistic(n, []float64{1, -1, 0.5}, 9)
	e, err := model.NewLogisticRegression(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	prior, _ := model.NewIsoGaussian(3, 10)
	st := &stageTicker{stage: "MAP and Laplace approximation after", ticker: ticker{at: n / 2}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.cancel = cancel
	p := &exactmh.Posterior{Energy: cvTickGLM{e, st}, Prior: prior}
	_, err = exactmh.Choose(ctx, p, &exactmh.Settings{ChoiceProgress: st.progress})
	after := st.calls.Load() - st.at
	t.Logf("control variates: cancelled at datum %d of %d: %d read after: %v", st.at, n, after, err)
	if !errors.Is(err, context.Canceled) || after > 512 {
		t.Errorf("control variates: err %v, %d data read after the cancellation, want context.Canceled and at most a chunk", err, after)
	}

	mp := multilevelProblem(t, 4000, 10, 13).Posterior
	st = &stageTicker{stage: "finding the multilevel centre", ticker: ticker{at: 20}}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	st.cancel = cancel
	mp.Energy = mlTickGLM{mp.Energy.(*model.SparseGLM[float64]), st}
	_, err = exactmh.Choose(ctx, mp, &exactmh.Settings{ChoiceProgress: st.progress})
	after = st.calls.Load() - st.at
	t.Logf("multilevel centre: cancelled at chunk %d: %d read after: %v", st.at, after, err)
	if !errors.Is(err, context.Canceled) || after > 1 {
		t.Errorf("multilevel centre: err %v, %d chunks read after the cancellation, want context.Canceled and at most 1", err, after)
	}
}

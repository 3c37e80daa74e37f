// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mcmctest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/exactmh/exactmh"
	"github.com/exactmh/exactmh/diagnostics"
	"gonum.org/v1/gonum/mat"
)

// Problem is a posterior a check runs a kernel on, with what a kernel's
// configuration may depend on. A Case's constructors receive it.
type Problem struct {
	// Posterior is the target.
	Posterior *exactmh.Posterior
	// Mode is a point at or near the posterior mode, inside the support,
	// where chains start: a centre for SMH, a point for FlyMC's bounds to
	// be tight at.
	Mode []float64
	// SD holds the posterior standard deviations (approximate where the
	// posterior is not Gaussian), to place points relative to the mode.
	SD []float64
	// Proposal is the proposal the check needs (SwapProposal for the
	// pairwise checks, LatticeProposal on the App. J.1 walk), or nil for
	// the kernel's default. Kernels without a Proposal ignore it.
	Proposal exactmh.Proposal
	// Scale is the initial step scale the check asks for, or 0 for the
	// kernel's default. Checks that run without adaptation (SBC, the
	// mutants' moments) set the scale the kernel adapted to in a pilot run.
	Scale float64
}

// Case describes a kernel to Check: how to build it, what it needs from its
// target, and deliberately wrong variants that the checks must catch.
// Adding a kernel to a conformance table is one Case.
type Case struct {
	// Name names the case in messages.
	Name string
	// Kernel builds the kernel under test for pb. It must use pb.Proposal
	// if UsesProposal (nil: its default proposal) and pb.Scale as its
	// initial step scale (0: its default); it may build what it needs
	// from pb.Posterior, pb.Mode and pb.SD (a bound, a centre).
	Kernel func(pb Problem) exactmh.Kernel
	// UsesProposal says that the kernel draws θ′ from pb.Proposal, which
	// the pairwise and App. J.1 walk checks need.
	UsesProposal bool
	// NeedsRange says that the kernel needs energies bounded on the
	// support (an EnergyRange, a DiffBound, a bound built from them),
	// which exist only on a bounded support: its checks then run on a
	// Gaussian-mean target with a flat prior on a box (BoxedGaussian; for
	// SBC, BoxModel). Otherwise they run on the conjugate Gaussian-mean
	// target with a Gaussian prior (ConjugateGaussian; GaussianModel),
	// whose prior ratio a kernel must get right.
	NeedsRange bool
	// NeedsGLM says that the kernel needs a generalised linear model's
	// energy (SMH-2's third-derivative bounds, FlyMC's tuned bounds): its
	// checks then run on a logistic regression (LogisticModel), whose
	// posterior moments have no closed form, so that the moment check
	// does not apply and pairwise and SBC carry the proof. With NeedsRange
	// as well — a kernel that needs both, as PoissonMH on the
	// control-variate remainders (exactmh.ControlVariates), whose range
	// exists only on a bounded support — the logistic regression has a
	// uniform prior on a box instead of a Gaussian one (LogisticModel's
	// Box).
	NeedsGLM bool
	// NeedsMultilevel says that the kernel samples only a multilevel
	// model's posterior (exactmh.KernelInfo.NeedsMultilevel; a non-centred
	// NUTS): its checks then run on a random-intercept logistic
	// regression with τ unknown (MultilevelModel, N = 120 in 12 groups:
	// one of 65 data, whose updates the minibatch kernels thin, and 11 of
	// 5, a funnel), whose moments have no closed form:
	// pairwise (for a kernel with a Proposal) and SBC carry the proof, SBC
	// on every coordinate, log τ included. The App. J.1 walk does not
	// apply.
	NeedsMultilevel bool
	// Multilevel is that target (zero: MultilevelModel{N: 120, Groups:
	// 12}); the pairwise checks start from the first problem it draws.
	Multilevel MultilevelModel
	// NeedsGradient says that the kernel evaluates gradients; otherwise
	// the info check requires that it evaluates none.
	NeedsGradient bool
	// Exact is what the kernel's Exact method must report. Inexact
	// kernels (biased comparators) run only the structural checks —
	// allocs, checkpoint, workers, info — since their bias is their point
	// and is tested beside them, against what it is documented to be.
	Exact bool
	// TargetAccept is the acceptance rate warmup adapts the step scale
	// toward (0: the kernel's default: its DefaultTargetAccept method, see exactmh.AcceptTarget).
	TargetAccept float64
	// Metric is Settings.Metric of the runs whose warmup adapts, for
	// kernels with an inverse mass matrix (exactmh.MetricAdapter): "" is
	// exactmh's default, a diagonal metric. SBC's chains get the metric
	// its pilot run estimated.
	Metric exactmh.MetricKind
	// Target, if not nil, rewrites each problem's posterior into the one
	// the kernel samples, which must have the same target distribution
	// (exactmh.ControlVariates): every check, SBC included, then runs on
	// the rewritten posterior and judges it against the original
	// problem's truth.
	Target func(pb Problem) (*exactmh.Posterior, error)
	// TargetMutants are deliberately wrong rewrites of the posterior (a
	// Target that changes the distribution), each run with the case's
	// kernel; each must fail at least one statistical check.
	TargetMutants map[string]func(pb Problem) (*exactmh.Posterior, error)
	// Mutants are deliberately wrong variants of the kernel, built as
	// Kernel is. Each must fail at least one statistical check; only exact
	// kernels have them.
	Mutants map[string]func(pb Problem) exactmh.Kernel
	// Skip names checks that do not apply to the kernel, each with the
	// reason, which becomes the subtest's skip message. The names are
	// those of Check's subtests: "pairwise", "moments", "walk", "sbc",
	// "allocs", "checkpoint", "workers", "info".
	Skip map[string]string
}

// checkNames are the names of Check's subtests that Case.Skip may name.
var checkNames = []string{"pairwise", "moments", "walk", "sbc", "allocs", "checkpoint", "workers", "info"}

func (c *Case) validate() error {
	switch {
	case c.Name == "":
		return errors.New("mcmctest: Case.Name is empty")
	case c.NeedsMultilevel && (c.NeedsGLM || c.NeedsRange):
		return fmt.Errorf("mcmctest: %s: NeedsMultilevel with NeedsGLM or NeedsRange: the multilevel target is neither", c.Name)
	case c.Kernel == nil:
		return fmt.Errorf("mcmctest: %s: Case.Kernel is nil", c.Name)
	case !c.Exact && len(c.Mutants) > 0:
		return fmt.Errorf("mcmctest: %s: mutants of an inexact kernel: its statistical checks do not run", c.Name)
	}
	for name, reason := range c.Skip {
		if !slices.Contains(checkNames, name) {
			return fmt.Errorf("mcmctest: %s: Skip names %q, not one of %v", c.Name, name, checkNames)
		}
		if reason == "" {
			return fmt.Errorf("mcmctest: %s: Skip[%q] gives no reason", c.Name, name)
		}
	}
	for name, m := range c.Mutants {
		if m == nil {
			return fmt.Errorf("mcmctest: %s: mutant %q is nil", c.Name, name)
		}
	}
	for name, m := range c.TargetMutants {
		if m == nil {
			return fmt.Errorf("mcmctest: %s: target mutant %q is nil", c.Name, name)
		}
		if !c.Exact {
			return fmt.Errorf("mcmctest: %s: target mutants of an inexact kernel: its statistical checks do not run", c.Name)
		}
	}
	return nil
}

// budget is how much work each check does: less with -short.
type budget struct {
	pairSteps            int     // decisions per Pairwise run
	walkSteps            int     // decisions per Pairwise run on the walk
	walkDraws            int     // first draws per chain of the lattice walk
	minESS               float64 // bulk ESS the moment check runs until
	firstDraws, maxDraws int     // per chain, for the moment check
	sbcReplicates        int
	sbcBins              int
	allocSteps           int
	structChains         int // chains of the info, checkpoint and workers runs
}

func currentBudget() budget {
	if testing.Short() {
		return shortBudget()
	}
	return fullBudget()
}

func shortBudget() budget {
	return budget{pairSteps: 12000, walkSteps: 4000, walkDraws: 1000, minESS: 150, firstDraws: 1000, maxDraws: 8000,
		sbcReplicates: 100, sbcBins: 10, allocSteps: 300, structChains: 2}
}

func fullBudget() budget {
	return budget{pairSteps: 40000, walkSteps: 20000, walkDraws: 2000, minESS: 400, firstDraws: 2000, maxDraws: 32000,
		sbcReplicates: 200, sbcBins: 10, allocSteps: 2000, structChains: 4}
}

// The statistical thresholds: an exact kernel must stay within goodZ
// standard errors, a mutant is caught beyond mutantZ, and SBC rejects at
// sbcAlpha (Bonferroni over the coordinates). A mutant's moments must be
// off by mutantZ standard errors too; its moment check runs on, if need
// be, to a bulk ESS of mutantESS and then 4·mutantESS, where a bias of a
// tenth of a variance shows.
const (
	goodZ     = 4
	mutantZ   = 6
	momentsK  = 4
	sbcAlpha  = 1e-3
	mutantESS = 1000
)

// maxThin is the most thinning SBC takes: a random walk through the
// multilevel funnel (GroupSMH) needs some 10³ transitions per
// independent draw, the others at most a few dozen.
const maxThin = 4000

// kitSigma is the data covariance of the kit's Gaussian-mean targets.
func kitSigma() *mat.SymDense { return mat.NewSymDense(2, []float64{1, 0.6, 0.6, 2}) }

// target is the problem a case runs on, with its closed-form moments (nil
// for the logistic regression) and the model SBC draws from.
type target struct {
	kind  string
	pb    Problem
	g     *Gaussian
	model Model
	// truth is the posterior before a Case's Target rewrote pb's (nil: pb's
	// own), whose density the pairwise checks compare with.
	truth *exactmh.Posterior
}

// rewrite returns the target with its problem's posterior, and those of
// its model's problems, rewritten by f (nil: tg itself).
func (tg *target) rewrite(name string, f func(Problem) (*exactmh.Posterior, error)) (*target, error) {
	if f == nil {
		return tg, nil
	}
	out := *tg
	var err error
	if out.pb.Posterior, err = f(tg.pb); err != nil {
		return nil, fmt.Errorf("mcmctest: %s: rewriting the target: %w", name, err)
	}
	out.model = rewritten{tg.model, f}
	out.truth = tg.pb.Posterior
	return &out, nil
}

// rewritten is a Model whose problems' posteriors are rewritten by a
// Case's Target.
type rewritten struct {
	Model
	rewrite func(Problem) (*exactmh.Posterior, error)
}

// Draw implements Model.
func (m rewritten) Draw(rng *rand.Rand) ([]float64, Problem, error) {
	theta, pb, err := m.Model.Draw(rng)
	if err != nil {
		return nil, pb, err
	}
	pb.Posterior, err = m.rewrite(pb)
	return theta, pb, err
}

// problemTarget returns the problem a case's needs call for.
func problemTarget(c *Case) (*target, error) {
	sigma := kitSigma()
	switch {
	case c.NeedsMultilevel:
		ml := c.Multilevel
		if ml == (MultilevelModel{}) {
			ml = MultilevelModel{N: 120, Groups: 12}
		}
		_, pb, err := ml.Draw(rand.New(rand.NewPCG(37, 0)))
		if err != nil {
			return nil, err
		}
		return &target{kind: "multilevel logistic regression", pb: pb, model: ml}, nil
	case c.NeedsGLM && c.NeedsRange:
		// The box is wide enough that the mode, [0.17, −0.90] with SDs
		// [0.16, 0.18], and the pairwise points about it are well inside;
		// SBC's replicates draw θ uniformly on a smaller one, where some
		// posteriors are cut by the boundary.
		_, pb, err := LogisticModel{N: 200, Dim: 2, Box: 2}.Draw(rand.New(rand.NewPCG(31, 0)))
		if err != nil {
			return nil, err
		}
		return &target{kind: "logistic regression on a box", pb: pb, model: LogisticModel{N: 100, Dim: 2, Box: 1}}, nil
	case c.NeedsGLM:
		_, pb, err := LogisticModel{N: 200, Dim: 2, PriorSD: 3}.Draw(rand.New(rand.NewPCG(31, 0)))
		if err != nil {
			return nil, err
		}
		return &target{kind: "logistic regression", pb: pb, model: LogisticModel{N: 100, Dim: 2, PriorSD: 1}}, nil
	case c.NeedsRange:
		// ±4.5 sd: the truncation lowers the variances by about 10⁻⁴ of
		// themselves, far below any Monte Carlo error here, and keeps the
		// energy ranges, and with them the Poisson kernels' batches, small.
		g, err := BoxedGaussian(100, []float64{1, -1}, sigma, 0.01, 4.5, 23)
		if err != nil {
			return nil, err
		}
		return &target{kind: "Gaussian mean on a box", pb: Problem{Posterior: g.Posterior, Mode: g.Mean, SD: g.SD()}, g: g,
			model: BoxModel{N: 10, Sigma: sigma, Lo: []float64{-1, -1}, Hi: []float64{1, 1}}}, nil
	}
	// The priors are informative (25–40% of the posterior precision), so
	// that a kernel that gets the prior ratio wrong shows.
	g, err := ConjugateGaussian(100, []float64{1, -1}, sigma, []float64{0, 0}, []float64{0.15, 0.2}, 1, 17)
	if err != nil {
		return nil, err
	}
	return &target{kind: "conjugate Gaussian mean", pb: Problem{Posterior: g.Posterior, Mode: g.Mean, SD: g.SD()}, g: g,
		model: GaussianModel{N: 10, Sigma: sigma, PriorMean: []float64{0, 0}, PriorSD: []float64{0.5, 0.5}}}, nil
}

// pairOf returns the pair of points of the pairwise checks: about one
// posterior standard deviation apart, around the mode. On the multilevel
// target (more than two coordinates) they are ∓½ sd apart in the
// intercept, group 0's effects (θ[2], θ[3]: its intercept and slope) and
// a log scale (θ[d−2]), so that a bound that ignores how far a group's
// block moved is put to the test.
func pairOf(pb Problem) (a, b []float64) {
	a, b = slices.Clone(pb.Mode), slices.Clone(pb.Mode)
	if d := len(b); d > 3 {
		for _, j := range []int{0, 2, 3, d - 2} {
			a[j] -= 0.5 * pb.SD[j]
			b[j] += 0.5 * pb.SD[j]
		}
		return a, b
	}
	a[0] -= 0.4 * pb.SD[0]
	b[0] += 0.5 * pb.SD[0]
	if len(b) > 1 {
		b[1] -= 0.6 * pb.SD[1]
	}
	return a, b
}

// withProposal returns the kernel constructor f at pb with the proposal q.
func withProposal(f func(Problem) exactmh.Kernel, pb Problem) func(exactmh.Proposal) exactmh.Kernel {
	return func(q exactmh.Proposal) exactmh.Kernel {
		pb.Proposal = q
		return f(pb)
	}
}

// walkProblem returns the App. J.1 walk on k states with 6m data as a
// Problem.
func walkProblem(k, m int) (Problem, error) {
	p, _, err := randomWalk(k, m)
	if err != nil {
		return Problem{}, err
	}
	mid := float64(k / 2)
	return Problem{Posterior: p, Mode: []float64{mid}, SD: []float64{math.Sqrt(float64(k*k-1) / 12)}}, nil
}

// sampleUntilESS runs set and extends the run (Resume) until the bulk ESS
// of every coordinate and of its squared deviation (minBulkESS) reaches
// minESS or the chains hold maxDraws draws.
func sampleUntilESS(p *exactmh.Posterior, k exactmh.Kernel, set exactmh.Settings, minESS float64, maxDraws int) (*exactmh.Result, error) {
	res, err := exactmh.Sample(context.Background(), p, k, &set)
	if err != nil {
		return res, err
	}
	return extendUntilESS(res, minESS, maxDraws)
}

// extendUntilESS extends res, doubling its draws, until minBulkESS reaches
// minESS or the chains hold maxDraws draws.
func extendUntilESS(res *exactmh.Result, minESS float64, maxDraws int) (*exactmh.Result, error) {
	var err error
	for err == nil {
		n := res.Chains[0].Len()
		if minBulkESS(res) >= minESS || n >= maxDraws {
			break
		}
		res, err = exactmh.Resume(context.Background(), res, min(n, maxDraws-n))
	}
	return res, err
}

// minBulkESS returns the smallest bulk ESS of a coordinate or of its
// squared deviation from the mean: the ESSs behind the standard errors of
// CheckMoments' means and variances. (They differ: a sampler with
// antithetic draws, as NUTS on a Gaussian, estimates a mean with more
// effective draws than it has draws and a variance with far fewer.)
func minBulkESS(res *exactmh.Result) float64 {
	ess := math.Inf(1)
	for j := range res.Dim {
		x := res.Samples(j)
		var m float64
		var n int
		for _, ch := range x {
			for _, v := range ch {
				m += v
				n++
			}
		}
		m /= float64(n)
		sq := make([][]float64, len(x))
		for c, ch := range x {
			sq[c] = make([]float64, len(ch))
			for i, v := range ch {
				sq[c][i] = (v - m) * (v - m)
			}
		}
		for _, e := range []float64{diagnostics.ESSBulk(x), diagnostics.ESSBulk(sq)} {
			if !(e >= ess) {
				ess = e
			}
		}
	}
	return ess
}

// run is one Check: the case, its kernel and target, the budget and the
// pilot run that several checks share.
type run struct {
	c    *Case
	k    exactmh.Kernel
	tg   *target
	orig *target // the problem before Case.Target's rewrite
	b    budget
	set  exactmh.Settings // the moment check's run

	sbcOnce   sync.Once
	sbcScale  float64
	sbcThin   int
	sbcMetric exactmh.Metric
	sbcErr    error
}

func newRun(c *Case) (*run, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	orig, err := problemTarget(c)
	if err != nil {
		return nil, err
	}
	tg, err := orig.rewrite(c.Name, c.Target)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, tg: tg, orig: orig, b: currentBudget()}
	r.set = exactmh.Settings{Chains: 4, Warmup: 500, Draws: r.b.firstDraws, Seed: 2, Init: tg.pb.Mode, TargetAccept: c.TargetAccept, Metric: c.Metric}
	r.k = c.Kernel(tg.pb)
	switch {
	case r.k == nil:
		return nil, fmt.Errorf("mcmctest: %s: Kernel returned nil", c.Name)
	case r.k.Exact() != c.Exact:
		return nil, fmt.Errorf("mcmctest: %s: the kernel's Exact() is %v, the case says %v", c.Name, r.k.Exact(), c.Exact)
	}
	return r, nil
}

// sbcPilot returns the step scale and thinning SBC uses for the good
// kernel (and its mutants).
func (r *run) sbcPilot() (float64, int, error) {
	r.sbcOnce.Do(func() {
		o := r.sbcOptions()
		if r.sbcErr = o.fill(); r.sbcErr == nil {
			r.sbcScale, r.sbcThin, r.sbcMetric, r.sbcErr = sbcPilot(r.tg.model, r.c.Kernel, o)
		}
	})
	return r.sbcScale, r.sbcThin, r.sbcErr
}

func (r *run) sbcOptions() *SBCOptions {
	return &SBCOptions{Replicates: r.b.sbcReplicates, Draws: 9, Bins: r.b.sbcBins, TargetAccept: r.c.TargetAccept, Metric: r.c.Metric, Seed: 13, MaxThin: maxThin}
}

// reporter is what a check reports through: *testing.T in Check, an
// Outcome in Verify. Fatal and Skip end the check.
type reporter interface {
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Skip(args ...any)
}

// check is one of the kit's checks on a case.
type check struct {
	name string
	run  func(rp reporter)
}

// checks returns the checks that apply to the case, allocs first.
func (r *run) checks() []check {
	c, k, tg := r.c, r.k, r.tg
	skippable := func(name string, f func(rp reporter)) check {
		return check{name: name, run: func(rp reporter) {
			if reason, ok := c.Skip[name]; ok {
				rp.Skip(reason)
				return
			}
			f(rp)
		}}
	}
	structural := exactmh.Settings{Chains: r.b.structChains, Warmup: 100, Draws: 150, Thin: 2, Seed: 7, Init: tg.pb.Mode, TargetAccept: c.TargetAccept, Metric: c.Metric}
	cs := []check{
		skippable("allocs", func(rp reporter) {
			a, err := AllocsPerStep(k, tg.pb.Posterior, tg.pb.Mode, r.b.allocSteps)
			if err != nil {
				rp.Fatal(err)
				return
			}
			if a != 0 {
				rp.Errorf("%s allocates %.3g times per step, want 0", c.Name, a)
			}
		}),
		skippable("info", func(rp reporter) {
			if err := CheckInfo(tg.pb.Posterior, k, structural, c.NeedsGradient); err != nil {
				rp.Errorf("%v", err)
			}
		}),
		skippable("checkpoint", func(rp reporter) {
			if err := CheckCheckpoint(tg.pb.Posterior, k, structural); err != nil {
				rp.Errorf("%v", err)
			}
		}),
		skippable("workers", func(rp reporter) {
			if err := CheckWorkers(tg.pb.Posterior, k, structural); err != nil {
				rp.Errorf("%v", err)
			}
		}),
	}
	if !c.Exact {
		return cs
	}
	cs = append(cs,
		skippable("pairwise", func(rp reporter) {
			if !c.UsesProposal {
				rp.Skip("the kernel takes no Proposal: no pair to restrict it to")
				return
			}
			for _, logQ := range []float64{0, 0.7} {
				res, err := r.pairwise(c.Kernel, logQ, r.b.pairSteps)
				if err != nil {
					rp.Fatal(err)
					return
				}
				if !(math.Abs(res.Z) <= goodZ) {
					rp.Errorf("detailed balance fails, log q ratio %v: %v", logQ, res)
				} else {
					rp.Logf("log q ratio %v: %v", logQ, res)
				}
			}
		}),
		skippable("moments", func(rp reporter) {
			if tg.g == nil {
				rp.Skip(fmt.Sprintf("the %s has no closed-form moments: pairwise and SBC check it", tg.kind))
				return
			}
			res, err := sampleUntilESS(tg.pb.Posterior, k, r.set, r.b.minESS, r.b.maxDraws)
			if err != nil {
				rp.Fatal(err)
				return
			}
			if err := CheckMoments(res, tg.g.Mean, tg.g.SD(), momentsK); err != nil {
				rp.Errorf("%v", err)
			}
			tot := res.Sampling()
			rp.Logf("%d draws per chain, bulk ESS ≥ %.0f, accept %.3f, evals/step %.1f, mean batch %.1f (N = %d)",
				res.Chains[0].Len(), minBulkESS(res), tot.AcceptRate(), tot.EvalsPerStep(), tot.MeanBatch(), res.N)
		}),
		skippable("walk", func(rp reporter) {
			switch {
			case !c.UsesProposal:
				rp.Skip("the kernel takes no Proposal: it cannot walk the lattice")
				return
			case c.NeedsGLM:
				rp.Skip("the walk's energy is not a GLM")
				return
			case c.NeedsMultilevel:
				rp.Skip("the walk's energy is not a multilevel model")
				return
			}
			res, err := r.walkPairwise(c.Kernel, r.b.walkSteps)
			if err != nil {
				rp.Fatal(err)
				return
			}
			if !(math.Abs(res.Z) <= goodZ) {
				rp.Errorf("up and down acceptance differ on the App. J.1 walk: %v", res)
			} else {
				rp.Logf("up/down: %v", res)
			}
			if err := r.walkChain(c.Kernel); err != nil {
				rp.Errorf("%v", err)
			}
		}),
		skippable("sbc", func(rp reporter) {
			res, err := r.sbc(c.Kernel)
			if err != nil {
				rp.Fatal(err)
				return
			}
			if res.Reject(sbcAlpha) {
				rp.Errorf("ranks not uniform (p < %g/%d): %v", sbcAlpha, len(res.P), res)
			} else {
				rp.Logf("%v", res)
			}
		}),
	)
	names := make([]string, 0, len(c.Mutants))
	for name := range c.Mutants {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		mk := c.Mutants[name]
		cs = append(cs, check{name: "mutant/" + name, run: func(rp reporter) {
			by, tried, err := r.catch(mk)
			switch {
			case err != nil:
				rp.Fatal(err)
			case by == "":
				rp.Errorf("mutant %q passes every check: %s", name, strings.Join(tried, "; "))
			default:
				rp.Logf("caught by %s (after: %s)", by, strings.Join(tried, "; "))
			}
		}})
	}
	names = names[:0]
	for name := range c.TargetMutants {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := c.TargetMutants[name]
		cs = append(cs, check{name: "mutant/" + name, run: func(rp reporter) {
			tg, err := r.orig.rewrite(c.Name, f)
			if err != nil {
				rp.Fatal(err)
				return
			}
			mr := &run{c: r.c, k: r.k, tg: tg, orig: r.orig, b: r.b, set: r.set}
			mr.set.Init = tg.pb.Mode
			by, tried, err := mr.catch(c.Kernel)
			switch {
			case err != nil:
				rp.Fatal(err)
			case by == "":
				rp.Errorf("target mutant %q passes every check: %s", name, strings.Join(tried, "; "))
			default:
				rp.Logf("caught by %s (after: %s)", by, strings.Join(tried, "; "))
			}
		}})
	}
	return cs
}

// Check runs every applicable check of the kit on the case's kernel, each
// as a subtest named after it (see the package documentation): first
// "allocs", then, in parallel with each other and — because Check calls
// t.Parallel after the allocation check — with the other parallel tests,
// "info", "checkpoint" and "workers" and, for an exact kernel, "pairwise",
// "moments", "walk", "sbc" and "mutant/NAME" for each mutant.
//
// Call Check from a test that has not called t.Parallel: the allocation
// count (testing.AllocsPerRun) needs the process to itself. With -short
// every check runs fewer transitions.
func Check(t *testing.T, c Case) {
	t.Helper()
	r, err := newRun(&c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (%s) on the %s", c.Name, r.k.Name(), r.tg.kind)
	cs := r.checks()
	t.Run(cs[0].name, func(t *testing.T) { cs[0].run(t) })
	t.Parallel()
	for _, ck := range cs[1:] {
		t.Run(ck.name, func(t *testing.T) {
			t.Parallel()
			ck.run(t)
		})
	}
}

// Outcome is the result of one of Verify's checks.
type Outcome struct {
	// Check is the check's name, as Check names its subtest.
	Check string
	// Failed and Skipped say how it ended (neither: it passed).
	Failed, Skipped bool
	// Errors are the check's failures, Logs what else it reported (a skip
	// reason, the statistics of a pass), in order.
	Errors, Logs []string
}

// String returns "pass", "FAIL" or "skip", the check's name and its first
// error, or else its last log.
func (o Outcome) String() string {
	switch {
	case o.Failed:
		return "FAIL " + o.Check + ": " + strings.Join(o.Errors[:1], "")
	case o.Skipped:
		return "skip " + o.Check + ": " + strings.Join(o.Logs[len(o.Logs)-1:], "")
	case len(o.Logs) > 0:
		return "pass " + o.Check + ": " + o.Logs[len(o.Logs)-1]
	}
	return "pass " + o.Check
}

// Verify runs Check's checks one after another without a testing.T — for
// an example, a command, or a test written with another framework — and
// returns their outcomes in Check's order. The error reports a case that
// cannot be checked at all (a bad Case, a kernel whose Exact disagrees).
// Like Check, it must not run alongside parallel tests.
func Verify(c Case) ([]Outcome, error) {
	r, err := newRun(&c)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	for _, ck := range r.checks() {
		o := &outcome{Outcome: Outcome{Check: ck.name}}
		func() {
			defer func() {
				if v := recover(); v != nil && v != errStop {
					panic(v)
				}
			}()
			ck.run(o)
		}()
		out = append(out, o.Outcome)
	}
	return out, nil
}

// errStop ends a check run by Verify (Fatal, Skip).
var errStop = errors.New("mcmctest: check stopped")

// outcome is Verify's reporter.
type outcome struct{ Outcome }

func (o *outcome) Logf(format string, args ...any) {
	o.Logs = append(o.Logs, fmt.Sprintf(format, args...))
}

func (o *outcome) Errorf(format string, args ...any) {
	o.Failed = true
	o.Errors = append(o.Errors, fmt.Sprintf(format, args...))
}

func (o *outcome) Fatal(args ...any) {
	o.Failed = true
	o.Errors = append(o.Errors, fmt.Sprint(args...))
	panic(errStop)
}

func (o *outcome) Skip(args ...any) {
	o.Skipped = true
	o.Logs = append(o.Logs, fmt.Sprint(args...))
	panic(errStop)
}

// pairwise runs the pairwise check of the kernel f builds on the case's
// target.
func (r *run) pairwise(f func(Problem) exactmh.Kernel, logQ float64, steps int) (PairResult, error) {
	a, b := pairOf(r.tg.pb)
	truth := r.tg.truth
	if truth == nil {
		truth = r.tg.pb.Posterior
	}
	return pairwise(truth, r.tg.pb.Posterior, withProposal(f, r.tg.pb), a, b, logQ, steps, 3)
}

// walkPairwise runs the pairwise check at the middle of the App. J.1 walk
// on 20 states, where the target is uniform. (The number of states only
// sets the box, and with it the range bounds: the fewer, the cheaper.)
func (r *run) walkPairwise(f func(Problem) exactmh.Kernel, steps int) (PairResult, error) {
	pb, err := walkProblem(20, 1000)
	if err != nil {
		return PairResult{}, err
	}
	return Pairwise(pb.Posterior, withProposal(f, pb), []float64{10}, []float64{11}, 0, steps, 11)
}

// walkChain runs the kernel's chains with the lattice proposal on the walk
// on 10 states (with a tenth of the data: 500 at −1, 100 at 5): every draw
// is a state, and their mean and variance are those of the uniform law
// within 4 Monte Carlo standard errors.
func (r *run) walkChain(f func(Problem) exactmh.Kernel) error {
	const k = 10
	pb, err := walkProblem(k, 100)
	if err != nil {
		return err
	}
	pb.Proposal = LatticeProposal{}
	res, err := sampleUntilESS(pb.Posterior, f(pb), exactmh.Settings{
		Chains: 4, Draws: r.b.walkDraws, Warmup: exactmh.NoWarmup, NoAdapt: true, Init: pb.Mode, Seed: 5}, r.b.minESS, 16*r.b.walkDraws)
	if err != nil {
		return err
	}
	for _, ch := range res.Chains {
		for _, v := range ch.Draws {
			if v != math.Round(v) || v < 0 || v > k-1 {
				return fmt.Errorf("lattice walk: draw %v is not a state in 0, …, %d", v, k-1)
			}
		}
	}
	if err := CheckMoments(res, []float64{(k - 1) / 2.0}, pb.SD, momentsK); err != nil {
		return fmt.Errorf("lattice walk on %d states: %w (TV of the histogram to uniform %.3f)", k, err, HistogramTV(res.Samples(0), k))
	}
	return nil
}

// escalate runs a pairwise statistic f with steps decisions and, if it
// falls short of mutantZ while showing an effect (|z| ≥ 3), once more
// with the decisions that would take that effect to 1.2·mutantZ (z grows
// as the square root of the decisions), at most 6 times as many.
func escalate(f func(steps int) (PairResult, error), steps int) (PairResult, error) {
	res, err := f(steps)
	if z := math.Abs(res.Z); err != nil || !(z < mutantZ) || z < 3 {
		return res, err
	}
	need := float64(steps) * math.Pow(1.2*mutantZ/math.Abs(res.Z), 2)
	return f(int(math.Min(need, 6*float64(steps))))
}

// sbc runs SBC of the kernel f builds (the good kernel or a mutant) with
// the good kernel's pilot scale and thinning.
func (r *run) sbc(f func(Problem) exactmh.Kernel) (*SBCResult, error) {
	scale, thin, err := r.sbcPilot()
	if err != nil {
		return nil, err
	}
	opt := r.sbcOptions()
	if err := opt.fill(); err != nil {
		return nil, err
	}
	opt.Scale, opt.Thin, opt.metric = scale, thin, &r.sbcMetric
	return sbcRun(r.tg.model, f, opt)
}

// catch runs the mutant through the statistical checks, cheapest first,
// until one fails it; it returns that check with its statistic ("" if none
// did) and what every check tried found. A pairwise statistic that falls
// short of mutantZ but shows an effect is run again with enough decisions
// for that effect to reach it (escalate), and the moment check runs to a
// bulk ESS of mutantESS even with -short: a check that catches a mutant
// only some of the time proves little.
func (r *run) catch(mk func(Problem) exactmh.Kernel) (by string, tried []string, err error) {
	c := r.c
	b := fullBudget()
	if c.UsesProposal && c.Skip["pairwise"] == "" {
		for _, logQ := range []float64{0, 0.7} {
			res, err := escalate(func(steps int) (PairResult, error) { return r.pairwise(mk, logQ, steps) }, r.b.pairSteps)
			if err != nil {
				return "", tried, err
			}
			s := fmt.Sprintf("pairwise (log q ratio %v): %v", logQ, res)
			if !(math.Abs(res.Z) < mutantZ) {
				return s, tried, nil
			}
			tried = append(tried, s)
		}
	}
	if c.UsesProposal && !c.NeedsGLM && !c.NeedsMultilevel && c.Skip["walk"] == "" {
		res, err := escalate(func(steps int) (PairResult, error) { return r.walkPairwise(mk, steps) }, r.b.walkSteps)
		if err != nil {
			return "", tried, err
		}
		s := fmt.Sprintf("walk up/down: %v", res)
		if !(math.Abs(res.Z) < mutantZ) {
			return s, tried, nil
		}
		tried = append(tried, s)
	}
	if r.tg.g != nil && c.Skip["moments"] == "" {
		// As the good kernel's check, then, unless that shows the bias
		// already, on to larger bulk ESSs.
		var res *exactmh.Result
		for _, ess := range []float64{r.b.minESS, mutantESS, 4 * mutantESS} {
			var err error
			if res == nil {
				res, err = sampleUntilESS(r.tg.pb.Posterior, mk(r.tg.pb), r.set, ess, 4*b.maxDraws)
			} else {
				res, err = extendUntilESS(res, ess, 4*b.maxDraws)
			}
			if err != nil {
				return "", tried, err
			}
			if ShowsBias(CheckMoments(res, r.tg.g.Mean, r.tg.g.SD(), mutantZ)) {
				break
			}
		}
		err := CheckMoments(res, r.tg.g.Mean, r.tg.g.SD(), mutantZ)
		s := fmt.Sprintf("moments (%d draws per chain, scale adapted to %.3g): %v", res.Chains[0].Len(), res.Chains[0].Scale, err)
		if ShowsBias(err) {
			return s, tried, nil
		}
		tried = append(tried, s)
	}
	if c.Skip["sbc"] == "" {
		res, err := r.sbc(mk)
		if err != nil {
			return "", tried, err
		}
		s := res.String()
		if res.Reject(sbcAlpha) {
			return "sbc: " + s, tried, nil
		}
		tried = append(tried, s)
	}
	return "", tried, nil
}

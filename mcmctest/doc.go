// Copyright ©2026 The exactmh Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package mcmctest is a conformance kit for exactmh kernels, in the spirit
// of testing/fstest: the checks that show a Markov kernel leaves its target
// exactly invariant, that it keeps exactmh's contracts (no allocation per
// step, checkpoints that resume bit for bit, draws independent of the number
// of workers, an honest Info), and — run on deliberately wrong variants of
// the kernel — that the checks can see when it does not. Every built-in
// kernel of exactmh passes it, in one table (conformance_test.go in the
// exactmh repository); a kernel of your own, written against exactmh.Kernel
// or as an exactmh.AuxScheme, is checked the same way.
//
// # Proving your kernel exact
//
// No finite test proves a kernel exact. What the kit does is make each way
// of being wrong visible, with a known false-alarm rate, and prove its own
// power on your wrong variants. Describe the kernel in a Case and call Check
// from a test:
//
//	func TestMyKernel(t *testing.T) {
//		mcmctest.Check(t, mcmctest.Case{
//			Name: "mine",
//			Kernel: func(pb mcmctest.Problem) exactmh.Kernel {
//				return MyKernel{Proposal: pb.Proposal, Scale: pb.Scale}
//			},
//			UsesProposal: true,
//			Exact:        true,
//			Mutants: map[string]func(mcmctest.Problem) exactmh.Kernel{
//				"no prior ratio": func(pb mcmctest.Problem) exactmh.Kernel {
//					return MyKernel{Proposal: pb.Proposal, Scale: pb.Scale, bug: noPrior}
//				},
//			},
//		})
//	}
//
// Check builds the kernel on small problems whose answers are known — a
// conjugate Gaussian-mean posterior with an informative Gaussian prior; for
// kernels that need bounded energies (NeedsRange) the Gaussian mean with a
// flat prior on a box; for kernels that need a GLM (NeedsGLM) a logistic
// regression, with a uniform prior on a box if they need both; for kernels
// that sample only multilevel models (NeedsMultilevel) a random-intercept
// logistic regression with τ unknown (MultilevelModel) — and runs, as
// subtests:
//
//   - pairwise: detailed balance on a fixed pair of points about a
//     posterior sd apart (Pairwise). A chain whose proposal swaps A and B
//     (SwapProposal) makes many independent accept/reject decisions from
//     each; the log ratio of the acceptance rates must equal
//     log π(B)q(A|B) − log π(A)q(B|A) within 4 standard errors, with a log
//     proposal ratio of 0 and of 0.7 (a kernel that applies q's ratio with
//     the wrong sign, or not at all, fails). This is the sharpest check —
//     a bias of a few per cent in the acceptance ratio shows in a fraction
//     of a second — but only kernels that take a Proposal can be
//     restricted to a pair.
//   - moments: the chains' means and variances match the closed-form
//     posterior within 4 Monte Carlo standard errors (CheckMoments), after
//     running until every coordinate, and its squared deviation from the
//     mean, has a bulk ESS of at least 400 (150 with -short): standard
//     errors from too few effective draws would pass anything. Not on the logistic regression, which has no closed
//     form.
//   - walk: the random walk of the TunaMH paper, App. J.1 (RandomWalk),
//     whose data of two kinds cancel exactly so that the target is
//     uniform: the up and down acceptance rates must agree (Pairwise), and
//     chains on ten lattice states with LatticeProposal must stay on the
//     lattice and have the uniform law's mean and variance. Minibatch
//     kernels that weight the data wrongly fail here.
//   - sbc: simulation-based calibration (Talts et al. 2018; SBC): θ is
//     drawn from the prior, data from the model, and the kernel's chain
//     starts at θ — an exact posterior draw — so that for an exact kernel
//     the rank of θ among thinned draws is uniform, which a chi-square test
//     checks. It needs no closed-form posterior and covers the whole
//     posterior, its boundary included, but its power is modest (200
//     replicates, 100 with -short: it sees a posterior half as wide as it
//     should be, or shifted by a posterior sd) and it is blind, by design,
//     to a kernel that leans toward the prior: sampling the prior itself
//     passes SBC. The other checks cover that.
//   - allocs: AllocsPerStep is 0.
//   - checkpoint: CheckCheckpoint — cancel, checkpoint, load, resume: bit
//     for bit the uninterrupted run.
//   - workers: CheckWorkers — Workers 1, 2 and 4 and a Recorder give the
//     same draws.
//   - info: CheckInfo — every transition's Info says what exactmh.Info
//     promises.
//   - mutant/NAME: each deliberately wrong variant must fail pairwise or
//     the walk by at least 6 standard errors, the moments by at least 6
//     (ShowsBias, not merely too few effective draws), or SBC. A mutant
//     runs as the kernel does, its step scale adapted in warmup, and gets
//     more transitions than the kernel's own checks when a first look
//     shows an effect too small to be sure of. A check that passes every
//     mutant proves nothing, so a mutant that passes everything fails the
//     test.
//
// Inexact kernels (Exact false: a biased comparator such as
// inexact.AustereMH) run the structural checks only; Case.Skip turns off a
// check that cannot apply, with the reason. Verify runs the same checks
// without a testing.T and returns their outcomes.
//
// # False alarms
//
// The statistical checks are hypothesis tests, so an exact kernel fails them
// with a small probability: a |z| above 4 has probability 6·10⁻⁵ per
// statistic (a case has up to 7), and SBC rejects at p < 0.001/d for d
// coordinates, about 0.1% per case. Check uses fixed seeds, so its verdict
// on a given kernel is reproducible; a kernel that fails should be looked
// at, not re-run with other seeds. With -short every check runs fewer
// transitions, and its tolerances, computed from Monte Carlo standard
// errors, widen accordingly; the checkpoint, workers and info checks run
// two chains instead of four.
//
// # Building blocks
//
// The checks are exported separately, for tests of a kernel's own features:
// Pairwise with SwapProposal; RandomWalk, LatticeProposal, StationaryTV and
// HistogramTV for App. J.1; ConjugateGaussian and BoxedGaussian (Gaussian
// targets with closed-form moments) with CheckMoments and ShowsBias; SBC
// with the models GaussianModel, BoxModel, LogisticModel and
// MultilevelModel, or a Model of
// your own; AllocsPerStep, CheckCheckpoint, CheckWorkers and CheckInfo.
package mcmctest
